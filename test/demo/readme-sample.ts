/**
 * README.md's sample output of `npx forge demo`, kept true to the demo: the block between
 * `<!-- demo-sample:start -->` and `<!-- demo-sample:end -->` is lines of a real run (the live view,
 * then the whole summary), some left out. test/demo/demo.test.ts runs the demo and checks that
 * each line of the sample is a line the demo printed, in the same order, and that every line of the
 * summary is in it. What differs from run to run is read as one shape: times, counts, shas, ports,
 * the progress bar, the report's folder, a retry a loaded machine adds. In a sample line, `…` stands
 * for any text; a line that is only `…` for lines left out.
 */
export const SAMPLE_START = "<!-- demo-sample:start";
export const SAMPLE_END = "<!-- demo-sample:end -->";

/** The sample's lines: the fenced block after the start marker. */
export function readmeSample(readme: string): string[] {
  const start = readme.indexOf(SAMPLE_START);
  const end = readme.indexOf(SAMPLE_END);
  if (start < 0 || end < start) throw new Error("README.md has no demo sample (<!-- demo-sample:start … --> … <!-- demo-sample:end -->)");
  const block = /```[^\n]*\n([\s\S]*?)\n```/.exec(readme.slice(start, end));
  if (!block) throw new Error("README.md's demo sample has no fenced block");
  return block[1]!.split("\n");
}

/** A line of the demo's output as its shape: what changes between runs made one token. */
export function shape(line: string): string {
  return (
    line
      // eslint-disable-next-line no-control-regex -- a terminal's colours
      .replace(/\x1b\[[0-9;]*m/g, "")
      .replace(/▕[█░]*▏\s*\d+\/\d+/g, "▕▏")
      .replace(/https?:\/\/127\.0\.0\.1:\d+/g, "http://127.0.0.1")
      .replace(/\S*\/forge-demo-(?!textkit)[^\s/]*\//g, "…/")
      .replace(/\b[0-9a-f]{40}\b|\b[0-9a-f]{7}\b/g, "SHA")
      .replace(/\$\d+\.\d+/g, "$N")
      .replace(/\b\d+(\.\d+)?\s?s\b/g, "Ns")
      .replace(/\d+/g, "N")
      .replace(/(, )?\bN retry\b/g, "")
      .replace(/─+/g, "─")
      .replace(/\s+/g, " ")
      .trim()
  );
}

function matcher(sampleLine: string): (line: string) => boolean {
  const s = shape(sampleLine);
  if (!s.includes("…")) return (line) => line === s;
  const re = new RegExp(
    `^${s
      .split("…")
      .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*")}$`,
  );
  return (line) => re.test(line);
}

/** What keeps the sample from being the demo's output: each a sentence; none when it is. */
export function sampleDrift(sample: string[], live: string, summary: string): string[] {
  const liveLines = live.split("\n").map(shape);
  const summaryLines = summary.split("\n").map(shape);
  const output = [...liveLines, ...summaryLines];
  const matched = new Set<number>();
  const drift: string[] = [];
  let at = 0;
  for (const line of sample) {
    if (line.trim() === "" || line.trim() === "…") continue;
    const fits = matcher(line);
    const i = output.findIndex((o, k) => k >= at && fits(o));
    if (i < 0) {
      drift.push(`not in the demo's output (in this order): ${line}`);
      continue;
    }
    matched.add(i);
    at = i + 1;
  }
  summaryLines.forEach((l, k) => {
    if (l !== "" && !matched.has(liveLines.length + k))
      drift.push(`the summary's line is missing from the sample: ${summary.split("\n")[k]}`);
  });
  return drift;
}
