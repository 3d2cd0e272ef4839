/**
 * The browsable report of a run (`forge demo`'s, and `forge report`'s of any repository): one self-contained HTML file (no scripts, no network) with
 * the DAG as inline SVG, the summary table, the run tracker issue as Forge wrote it on the local
 * GitHub (its Mermaid block replaced by the SVG), the Change Requests, follow-ups and final PR.
 */
import { renderOutcomeTable, type OutcomeFigures } from "../outcomes.js";
import { dagSvg, esc, type SvgNode } from "./dag-svg.js";
import { unescapeHtml } from "./html.js";

export interface ReportTask {
  id: string;
  kind: "task" | "refinery";
  title: string;
  dependencies: string[];
  status: SvgNode["status"];
  attempts: number;
  pr?: number;
  timeMs?: number;
  addedBy?: string;
  /** What the task's attempts spent (US dollars). */
  spentUsd?: number;
}

export interface ReportInput {
  title: string;
  runId: string;
  planId: string;
  agent: string;
  status: string;
  durationMs: number;
  repo: string;
  /** Where the repository is, after its name (default: Forge's local GitHub). */
  host?: string;
  tasks: ReportTask[];
  /** The run's outcome figures (src/core/outcomes.ts). */
  figures?: OutcomeFigures;
  trackerIssue?: number;
  trackerBody?: string;
  finalPr?: { number: number; title: string; body: string };
  changeRequests: { id: string; status: string; overlayId?: string; issue?: number; title: string }[];
  followups: { id: string; sourceTaskId: string; text: string; status: string; pr?: number }[];
  /** The plan's checks on the integration branch: its test commands and what they gave. */
  testsOnIntegration?: { ok: boolean; summary: string; commands?: string[] };
  notes: string[];
  /** Task and follow-up PRs (their bodies are the rendered walkthroughs), shown in full. */
  pulls: { number: number; title: string; body: string }[];
  /** Other issues of the run (its Change Requests), shown in full. */
  issues?: { number: number; title: string; body: string }[];
  /**
   * Where each link of the bodies leads in this file: an address the reader can still follow, or
   * `local` for one on a GitHub that will not answer (the demo's local GitHub, stopped once it
   * ends), shown as text marked local. Without it every http(s) and relative link is kept.
   */
  links?: LinkMap;
  /** Facts in words (the CI fix, the project's CI runs). */
  facts?: string[];
  log: string[];
}

/** Where a link leads in the report: `{ href }` a link, `{ local }` text marked local (the address in its title), undefined kept as written. */
export type LinkMap = (url: string) => { href: string } | { local: string } | undefined;

/** A link of a body as the report shows it: followed when it resolves, else its text marked local. */
function linkHtml(text: string, url: string, links: LinkMap | undefined): string | undefined {
  const to = links?.(url);
  if (to && "local" in to)
    return `<span class="local" title="${esc(`on the local GitHub, gone once the demo ended: ${to.local}`)}">${text}</span> <small class="local">(local)</small>`;
  const href = to?.href ?? url;
  return safeHref(href) ? `<a href="${esc(href)}">${text}</a>` : undefined;
}

/**
 * Whether a link's address may be followed from the report: http(s), or relative (no scheme before
 * the path, query or fragment). Control characters, which browsers drop from a scheme, refuse it.
 */
export function safeHref(url: string): boolean {
  // eslint-disable-next-line no-control-regex -- control characters are what is looked for
  if (/[\u0000-\u001F\u007F]/.test(url)) return false;
  const colon = url.indexOf(":");
  if (colon === -1) return true;
  const path = url.search(/[/?#]/);
  if (path !== -1 && path < colon) return true;
  return /^https?$/i.test(url.slice(0, colon));
}

/** Enough Markdown for Forge's own bodies: headings, tables, lists, fences, inline code, bold, links. */
export function markdownToHtml(md: string, replaceFence?: (lang: string, body: string) => string | undefined, links?: LinkMap): string {
  const inline = (s: string) =>
    esc(s)
      .replace(/`([^`]+)`/g, "<code>$1</code>")
      .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
      // Only http(s) and relative links are links: `[x](javascript:…)` stays text.
      .replace(/\[([^[\]]+)\]\(([^()\s]+)\)/g, (m, text: string, url: string) => linkHtml(text, unescapeHtml(url), links) ?? m)
      .replace(/(^|[\s(])_([^_]+)_(?=$|[\s).,])/g, "$1<em>$2</em>")
      // The few tags Forge's bodies use, as GitHub renders them.
      .replace(/&lt;(\/?)(sub|sup|br|b|i|em|strong|details|summary)&gt;/g, "<$1$2>");
  const lines = md.replace(/<!--[\s\S]*?-->/g, "").split("\n");
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = /^(`{3,})(\S*)/.exec(line);
    if (fence) {
      const body: string[] = [];
      for (i++; i < lines.length && !lines[i]!.startsWith(fence[1]!); i++) body.push(lines[i]!);
      out.push(replaceFence?.(fence[2]!, body.join("\n")) ?? `<pre><code>${esc(body.join("\n"))}</code></pre>`);
      continue;
    }
    if (/^\|.*\|\s*$/.test(line)) {
      const rows: string[][] = [];
      for (; i < lines.length && /^\|.*\|\s*$/.test(lines[i]!); i++)
        rows.push(
          lines[i]!.trim()
            .slice(1, -1)
            .split(/(?<!\\)\|/)
            .map((c) => c.trim().replace(/\\\|/g, "|")),
        );
      i--;
      const [head, sep, ...body] = rows;
      const hasSep = sep?.every((c) => /^:?-+:?$/.test(c));
      const data = hasSep ? body : rows.slice(1);
      out.push(
        `<table><thead><tr>${head!.map((c) => `<th>${inline(c)}</th>`).join("")}</tr></thead><tbody>${data.map((r) => `<tr>${r.map((c) => `<td>${inline(c)}</td>`).join("")}</tr>`).join("")}</tbody></table>`,
      );
      continue;
    }
    const h = /^(#{1,6})\s+(.*)$/.exec(line);
    if (h) {
      out.push(`<h${h[1]!.length + 1}>${inline(h[2]!)}</h${h[1]!.length + 1}>`);
      continue;
    }
    if (/^\s*[-*]\s+/.test(line)) {
      const items: string[] = [];
      for (; i < lines.length && /^\s*[-*]\s+/.test(lines[i]!); i++) items.push(`<li>${inline(lines[i]!.replace(/^\s*[-*]\s+/, ""))}</li>`);
      i--;
      out.push(`<ul>${items.join("")}</ul>`);
      continue;
    }
    if (line.trim() === "") continue;
    if (/^\s*(-{3,}|\*{3,})\s*$/.test(line)) {
      out.push("<hr>");
      continue;
    }
    out.push(`<p>${inline(line)}</p>`);
  }
  return out.join("\n");
}

const secs = (ms: number | undefined) => (ms === undefined ? "" : `${(ms / 1000).toFixed(1)} s`);

export function renderReport(r: ReportInput): string {
  // The local GitHub is gone once the demo ends: links point inside this file.
  const prUrl = (n: number) => `#pr-${n}`;
  const svg = dagSvg(
    r.tasks.map((t) => ({
      id: t.id,
      kind: t.kind,
      title: t.title,
      dependencies: t.dependencies,
      ...(t.status ? { status: t.status } : {}),
      note: [`attempt ${t.attempts}`, t.pr ? `PR #${t.pr}` : ""].filter(Boolean).join(" · "),
      ...(t.pr ? { href: prUrl(t.pr) } : {}),
    })),
  );
  const rows = r.tasks
    .map(
      (t) =>
        `<tr><td><code>${esc(t.id)}</code>${t.addedBy ? ` <small>(${esc(t.addedBy)})</small>` : ""}</td><td>${t.kind}</td><td>${esc(t.title)}</td><td class="s-${t.status}">${t.status}</td><td class="n">${t.attempts}</td><td>${t.pr ? `<a href="${prUrl(t.pr)}">#${t.pr}</a>` : ""}</td><td class="n">${secs(t.timeMs)}</td><td class="n">${t.spentUsd !== undefined ? `$${t.spentUsd.toFixed(2)}` : ""}</td></tr>`,
    )
    .join("\n");
  const md = (body: string, fence?: (lang: string, body: string) => string | undefined) => markdownToHtml(body, fence, r.links);
  const tracker = r.trackerBody
    ? md(r.trackerBody, (lang) => (lang === "mermaid" ? `<div class="dag">${svg}</div>` : undefined))
    : "<p>(no tracker issue)</p>";
  const issues = r.issues ?? [];
  const issueRef = (n: number) => (issues.some((i) => i.number === n) ? `<a href="#issue-${n}">issue #${n}</a>` : `issue #${n}`);
  const checks = r.testsOnIntegration;
  const crs = r.changeRequests
    .map(
      (c) =>
        `<li><code>${esc(c.id)}</code> — ${esc(c.title)}: <strong>${esc(c.status)}</strong>${c.overlayId ? ` as <code>${esc(c.overlayId)}</code>` : ""}${c.issue ? ` (${issueRef(c.issue)})` : ""}</li>`,
    )
    .join("");
  const fus = r.followups
    .map(
      (f) =>
        `<li><code>${esc(f.id)}</code> from <code>${esc(f.sourceTaskId)}</code>: ${esc(f.text)} — <strong>${esc(f.status)}</strong>${f.pr ? ` (<a href="${prUrl(f.pr)}">PR #${f.pr}</a>)` : ""}</li>`,
    )
    .join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(r.title)}</title>
<style>
body{font:14px/1.5 -apple-system,Segoe UI,Helvetica,Arial,sans-serif;color:#1f2328;max-width:1100px;margin:2em auto;padding:0 1em}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}th{background:#f6f8fa}
td.n{text-align:right}code{background:#f6f8fa;padding:0 3px;border-radius:4px}pre{background:#f6f8fa;padding:8px;overflow:auto}
.dag{overflow:auto;border:1px solid #d0d7de;border-radius:6px;padding:8px;margin:1em 0}.s-MERGED{color:#1a7f37;font-weight:600}.s-FAILED{color:#cf222e}
article{border-top:1px solid #d0d7de;margin-top:1.5em}.pr-no{color:#59636e;margin-bottom:0}.ok{color:#1a7f37}.bad{color:#cf222e}section{margin-top:2em}.note{background:#fff8c5;border:1px solid #d4a72c;padding:6px 10px;border-radius:6px}.local{color:#59636e}span.local{text-decoration:underline dotted}
</style></head><body>
<h1>${esc(r.title)}</h1>
<p>Run <code>${esc(r.runId)}</code> of plan <code>${esc(r.planId)}</code> on <code>${esc(r.repo)}</code> (${esc(r.host ?? "Forge's local GitHub")}) · agent: ${esc(r.agent)} ·
<strong class="${r.status === "completed" ? "ok" : "bad"}">${esc(r.status)}</strong> in ${secs(r.durationMs)}${r.finalPr ? ` · final PR <a href="#final-pr">#${r.finalPr.number}</a>` : ""}${r.trackerIssue ? ` · tracker <a href="#tracker">#${r.trackerIssue}</a>` : ""}</p>
${r.notes.length ? `<p class="note">${r.notes.map(esc).join("<br>")}</p>` : ""}
${r.links ? `<p><small>Every pull request and issue of the run is in this file; a link marked <span class="local">(local)</span> pointed at the demo's local GitHub, which stopped when the demo ended.</small></p>` : ""}
${r.figures ? `<section id="outcomes"><h2>Outcomes</h2>${markdownToHtml(renderOutcomeTable(r.figures).join("\n"))}</section>` : ""}
<section><h2>The DAG</h2><div class="dag">${svg}</div></section>
<section><h2>Tasks</h2><table><thead><tr><th>Task</th><th>Kind</th><th>Title</th><th>Status</th><th>Attempts</th><th>PR</th><th>Time</th><th>Spend</th></tr></thead><tbody>
${rows}
</tbody></table>
${checks ? `<p>The plan's checks on the integration branch${checks.commands?.length ? ` (${checks.commands.map((c) => `<code>${esc(c)}</code>`).join(", ")})` : ""}: <strong class="${checks.ok ? "ok" : "bad"}">${esc(checks.summary)}</strong></p>` : ""}
${r.facts?.length ? r.facts.map((f) => `<p>${md(f).replace(/^<p>|<\/p>$/g, "")}</p>`).join("\n") : ""}</section>
<section><h2>Change Requests</h2>${crs ? `<ul>${crs}</ul>` : "<p>None.</p>"}</section>
<section><h2>Follow-ups</h2>${fus ? `<ul>${fus}</ul>` : "<p>None.</p>"}</section>
<section id="tracker"><h2>The run tracker issue${r.trackerIssue ? ` #${r.trackerIssue}` : ""}</h2>${tracker}</section>
${r.finalPr ? `<section id="final-pr"><h2>The final pull request #${r.finalPr.number}: ${esc(r.finalPr.title)}</h2>${md(r.finalPr.body)}</section>` : ""}
<section><h2>Pull requests</h2>${r.pulls.map((p) => `<article id="pr-${p.number}"><p class="pr-no">Pull request #${p.number}: ${esc(p.title)}</p>${md(p.body)}</article>`).join("\n")}</section>
${issues.length ? `<section><h2>Issues</h2>${issues.map((i) => `<article id="issue-${i.number}"><p class="pr-no">Issue #${i.number}: ${esc(i.title)}</p>${md(i.body)}</article>`).join("\n")}</section>` : ""}
<section><h2>Live log</h2><pre>${esc(r.log.join("\n"))}</pre></section>
</body></html>
`;
}
