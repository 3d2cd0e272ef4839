/**
 * The walkthrough as a PR description (and the job summary): frontmatter as tables, tests as a
 * table, risks and follow-ups as lists, then the agent's own sections. GitHub refuses PR bodies over
 * 65,536 characters (GITHUB-FACTS.md), so a long one is cut at a line boundary, an open code fence is
 * closed, and a link to the full file on the branch ends it.
 */
import { exitMeaning } from "../../src/core/exit-codes.js";
import { asData } from "../../src/core/render/as-data.js";
import type { WalkthroughFrontmatter } from "../../src/core/schemas/walkthrough.js";

export const PR_BODY_LIMIT = 65_536;

export interface PrBodyInput {
  title: string;
  frontmatter: WalkthroughFrontmatter;
  body: string;
  /** Link to the full walkthrough file (on the record commit). */
  walkthroughUrl: string;
  baseBranch: string;
  exitCode: number;
  /** Refused protected paths, warnings: shown to reviewers. */
  notes?: string[];
  /** The issue the task does (its front matter's `issue:`): the PR links it. */
  issue?: number;
}

const RESULT_ICON: Record<string, string> = { pass: "✅ pass", fail: "❌ fail", skip: "⏭️ skip", error: "💥 error" };
const STATUS_ICON: Record<string, string> = { completed: "✅ completed", partial: "🟡 partial", failed: "❌ failed" };

/** A table cell: one line, pipes escaped. */
export function cell(text: string): string {
  return (
    text
      .replace(/\r?\n+/g, " ")
      .replace(/\|/g, "\\|")
      .trim() || "—"
  );
}

/** Inline code for a table cell: GFM ends a cell at any unescaped pipe, even inside backticks. */
function code(text: string): string {
  return `\`${text
    .replace(/`/g, "'")
    .replace(/\r?\n+/g, " ")
    .replace(/\|/g, "\\|")}\``;
}

/** `verify: haiku (low)`; a tier without a model is the CLI's default model for it. */
function stageModelText(m: NonNullable<WalkthroughFrontmatter["models"]>[number]): string {
  const what = m.model !== undefined ? (m.tier ? `${m.model} (${m.tier})` : m.model) : `${m.tier ?? "default"} (the CLI's default model)`;
  return `${m.stage}: ${what}`;
}

export function marker(f: Pick<WalkthroughFrontmatter, "run_id" | "task_id" | "attempt">): string {
  return `<!-- forge:walkthrough run=${f.run_id} task=${f.task_id} attempt=${f.attempt} -->`;
}

export function renderPrBody(input: PrBodyInput, limit = PR_BODY_LIMIT): string {
  const f = input.frontmatter;
  const agentBits = [
    f.agent,
    f.model,
    f.cost_usd !== undefined ? `$${f.cost_usd.toFixed(2)}` : undefined,
    f.turns !== undefined ? `${f.turns} turns` : undefined,
  ].filter(Boolean);
  const lines: string[] = [
    marker(f),
    `## ${input.title}`,
    "",
    "| | |",
    "| --- | --- |",
    `| Task | ${code(f.task_id)} |`,
    `| Run | ${code(f.run_id)} |`,
    ...(input.issue !== undefined ? [`| Issue | #${input.issue} |`] : []),
    `| Attempt | ${f.attempt} |`,
    `| Status | ${STATUS_ICON[f.status] ?? f.status} (exit ${input.exitCode}) |`,
    `| Confidence | ${f.confidence.toFixed(2)} |`,
    `| Branch | ${code(f.branch)} → ${code(input.baseBranch)} |`,
    `| Head | ${code(f.head_sha)} |`,
    `| Time spent | ${f.time_spent_minutes} min |`,
    ...(agentBits.length ? [`| Agent | ${cell(agentBits.join(" · "))} |`] : []),
    ...(f.models?.length ? [`| Models | ${cell(f.models.map(stageModelText).join(" · "))} |`] : []),
    "",
  ];
  if (input.notes?.length) {
    lines.push("> [!WARNING]", ...input.notes.map((n) => `> - ${n.replace(/\r?\n/g, " ")}`), "");
  }
  lines.push(`### Files changed (${f.files_changed.length})`, "");
  if (f.files_changed.length) {
    lines.push("| File | Why |", "| --- | --- |", ...f.files_changed.map((x) => `| ${code(x.path)} | ${cell(asData(x.reason))} |`));
  } else lines.push("_None._");
  lines.push("", `### Tests (${f.tests.length})`, "");
  if (f.tests.length)
    lines.push(
      "| Test | Result |",
      "| --- | --- |",
      ...f.tests.map((t) => `| ${cell(asData(t.name))} | ${RESULT_ICON[t.result] ?? t.result} |`),
    );
  else lines.push("_No tests reported._");
  // Everything below comes from the agent: rendered as data (no Forge markers, no live @mentions).
  const item = (r: string) => `- ${asData(r).replace(/\r?\n/g, " ")}`;
  lines.push("", "### Risks", "", ...(f.risks.length ? f.risks.map(item) : ["_None reported._"]));
  lines.push("", "### Follow-ups", "", ...(f.followups.length ? f.followups.map(item) : ["_None._"]));
  lines.push("", "---", "", asData(input.body.trim()), "");
  const footer = `\n---\n<sub>Walkthrough file: [${input.walkthroughUrl.split("/").slice(-5).join("/")}](${input.walkthroughUrl})</sub>\n`;
  return cutToLimit(lines.join("\n"), footer, input.walkthroughUrl, limit);
}

/**
 * `text + footer` if it fits in `limit` characters; otherwise the longest prefix of `text` ending at
 * a line break, an open code fence closed, a note with the link, then the footer.
 */
export function cutToLimit(text: string, footer: string, url: string, limit = PR_BODY_LIMIT): string {
  // GitHub counts characters; UTF-16 length is never smaller than the code point count, so it is safe.
  if (text.length + footer.length <= limit) return text + footer;
  const note = `\n\n> [!NOTE]\n> This description was cut to stay under GitHub's ${limit.toLocaleString("en-US")}-character limit. [Read the full walkthrough](${url}).\n`;
  const fenceClose = "\n```\n";
  const room = limit - footer.length - note.length - fenceClose.length;
  let cut = text.slice(0, Math.max(0, room));
  const nl = cut.lastIndexOf("\n");
  if (nl > 0) cut = cut.slice(0, nl);
  // Do not end inside a surrogate pair.
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  const fences = cut.match(/^\s*(```|~~~)/gm)?.length ?? 0;
  if (fences % 2 === 1) cut += fenceClose;
  return cut + note + footer;
}

export interface FailureBodyInput {
  title: string;
  runId: string;
  taskId: string;
  attempt: number;
  exitCode: number;
  error: string;
  branch: string;
  baseBranch: string;
  headSha?: string;
  jobUrl?: string;
  notes?: string[];
}

/** The PR body while the agent works, and when an attempt ends without a valid walkthrough. */
export function renderStatusBody(input: FailureBodyInput & { state: "running" | "ended" }): string {
  const lines = [
    marker({ run_id: input.runId, task_id: input.taskId, attempt: input.attempt }),
    `## ${input.title}`,
    "",
    "| | |",
    "| --- | --- |",
    `| Task | ${code(input.taskId)} |`,
    `| Run | ${code(input.runId)} |`,
    `| Attempt | ${input.attempt} |`,
    `| Branch | ${code(input.branch)} → ${code(input.baseBranch)} |`,
    ...(input.state === "ended"
      ? [`| Outcome | exit ${input.exitCode}: ${exitMeaning(input.exitCode)} |`]
      : ["| Outcome | 🛠️ the agent is working |"]),
    ...(input.headSha ? [`| Head | ${code(input.headSha)} |`] : []),
    ...(input.jobUrl ? [`| Job | [workflow run](${input.jobUrl}) |`] : []),
    "",
  ];
  if (input.state === "ended" && input.error) lines.push("### Why", "", asData(input.error).replace(/\r?\n/g, " "), "");
  if (input.notes?.length) lines.push("> [!WARNING]", ...input.notes.map((n) => `> - ${n.replace(/\r?\n/g, " ")}`), "");
  if (input.state === "running")
    lines.push("_This pull request is a draft until the agent's walkthrough is in; its description will be replaced by it._", "");
  return cutToLimit(lines.join("\n"), "", input.jobUrl ?? "", PR_BODY_LIMIT);
}
