// The committed bundle must be what the sources build to: GitHub runs action/dist, not action/src.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";

const dist = path.resolve("action/dist");

function files(dir: string, prefix = ""): string[] {
  return readdirSync(path.join(dir, prefix), { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(dir, path.join(prefix, e.name)) : [path.join(prefix, e.name)]))
    .sort();
}

describe("action/dist", () => {
  it("is up to date with action/src and src/ (run `npm run build:action` and commit action/dist)", () => {
    const out = mkdtempSync(path.join(tmpdir(), "forge-dist-"));
    try {
      execFileSync(process.execPath, ["action/build.mjs", "--outdir", out], { stdio: "pipe" });
      const want = files(out);
      expect(files(dist), "file list of action/dist").toEqual(want);
      const stale = want.filter((f) => !readFileSync(path.join(out, f)).equals(readFileSync(path.join(dist, f))));
      expect(stale, "stale files in action/dist").toEqual([]);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 60_000);

  it("declares node24 and dist/index.js, the inputs the workflow template passes, and the outputs the App reads", () => {
    const yml = readFileSync("action/action.yml", "utf8");
    expect(yml).toMatch(/runs:\n {2}using: node24\n {2}main: dist\/index\.js/);
    for (const output of ["exit-code", "head-sha", "result-path", "pr-number"]) expect(yml).toContain(`\n  ${output}:\n`);
    const template = readFileSync("templates/workflows/forge-agent.yml", "utf8");
    for (const input of ["run-id", "task-id", "attempt", "context", "anthropic-api-key"]) {
      expect(template).toContain(`${input}: `);
      expect(yml).toContain(`\n  ${input}:\n`);
    }
  });
});
