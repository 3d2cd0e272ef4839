/**
 * Markdown Forge writes on GitHub: the run tracker issue, Change Request issues, the final PR.
 * Pure functions of the journal; bodies are kept below GitHub's 65,536-character limit.
 */
import { stringify } from "yaml";
import type { Journal } from "../core/journal.js";
import {
  fitsMermaid,
  mermaidEdgeCount,
  renderMermaid,
  renderWaveSummary,
  summarizeByWave,
  SUMMARY_MAX_GROUPS,
  waves,
} from "../core/render/mermaid.js";
import type { PlanNode, TaskState } from "../core/journal.js";
import type { TaskStatus } from "../core/schemas/common.js";
import { planDir, stateBranch } from "../core/layout.js";
import { agentNote, mixedAgents, progressNote, resumedNote } from "./render-notes.js";
import type { ForgeConfig } from "../core/schemas/config.js";
import type { ForgeEvent } from "../core/schemas/events.js";
import type { RunFacts } from "./run-store.js";
import { readFrontMatter } from "../core/front-matter.js";
import { asData, fenceFor, inlineData } from "../core/render/as-data.js";
import { CHANGE_REQUEST_LIMITS, changeRequestFrontmatterSchema } from "../core/schemas/change-request.js";
import { renderOutcomeTable, type OutcomeFigures } from "../core/outcomes.js";
import { runSpent } from "../core/budget.js";
import { heldForProtectedPaths, pauseReasons, type PauseReason } from "../core/task-rules.js";
import { repoPage, type RepoOnWeb } from "../github/web-url.js";

/** GitHub rejects issue and PR bodies longer than this. */
export const BODY_LIMIT = 65_536;

/** Hidden markers that tie an issue to its run (and CR), so commands on it find the run. */
export const trackerMarker = (runId: string) => `<!-- forge:run ${runId} -->`;
export const crMarker = (runId: string, crId: string) => `<!-- forge:cr ${runId} ${crId} -->`;

/**
 * The run (and CR) a body's marker names. Only the first line counts — the App writes its marker
 * there, and text it renders below (an agent's follow-up, a CR's reason) cannot put one there — and
 * only in a body the App wrote: the caller checks the author (`isAppAuthor`).
 */
export function parseMarker(body: string): { runId: string; crId?: string } | undefined {
  const eol = body.indexOf("\n");
  const first = (eol === -1 ? body : body.slice(0, eol)).replace(/\r$/, "");
  const cr = /^<!-- forge:cr (\S+) (\S+) -->$/.exec(first);
  if (cr) return { runId: cr[1]!, crId: cr[2]! };
  const run = /^<!-- forge:run (\S+) -->$/.exec(first);
  return run ? { runId: run[1]! } : undefined;
}

/** Whether an issue or comment was written by the App itself: its bot user, `<slug>[bot]`. */
export function isAppAuthor(user: { login?: string; type?: string } | null | undefined, slug: string | undefined): boolean {
  return !!slug && user?.type === "Bot" && user.login === `${slug}[bot]`;
}

const STATUS_ICON: Record<string, string> = {
  PENDING: "⚪",
  RUNNING: "🔵",
  DONE: "🟢",
  MERGE_READY: "🟩",
  MERGED: "✅",
  FAILED: "🔴",
  STALE: "🟡",
};

function cut(body: string, note: string): string {
  if (body.length <= BODY_LIMIT) return body;
  const tail = `\n\n…${note}`;
  return body.slice(0, BODY_LIMIT - tail.length) + tail;
}

/** Agent text on one line of a list: as data, its line breaks folded. */
function oneLine(text: string): string {
  return asData(text)
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean)
    .join(" ");
}

function eventLine(e: ForgeEvent): string {
  const data = Object.entries(e.data as Record<string, unknown>)
    .filter(([, v]) => v !== undefined && (typeof v !== "object" || (Array.isArray(v) && v.length)))
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(",") : String(v)}`)
    .join(" ");
  return `| ${e.seq} | ${e.timestamp.slice(11, 19)} | \`${e.type}\` | ${e.taskId ?? ""} | ${asData(data).replaceAll("|", "\\|").slice(0, 160)} |`;
}

/** The run tracker: the DAG coloured by status, a task table, and the tail of the event log. */
export function renderTracker(
  journal: Journal,
  events: readonly ForgeEvent[],
  facts: RunFacts,
  /** The repository on the GitHub the App talks to: the check links go there. */
  repo: RepoOnWeb,
  /** The time the tracker is drawn at: a usage limit that has ended pauses nothing. */
  now: number,
  config?: Pick<ForgeConfig, "budgets">,
): string {
  const statuses = new Map(journal.tasks.map((t) => [t.id, t.status]));
  const counts = new Map<string, number>();
  for (const t of journal.tasks) counts.set(t.status, (counts.get(t.status) ?? 0) + 1);
  const paused = pauseReasons(journal.pause, now)[0];
  const lines = [
    trackerMarker(journal.runId),
    `## Forge run \`${journal.runId}\` — plan \`${journal.planId}\``,
    "",
    `**Status:** ${journal.status}${paused && journal.status === "running" ? ` (paused${pauseText(journal, paused)})` : ""} · ` +
      `${journal.merged}/${journal.tasks.length} merged · ` +
      [...counts].map(([s, n]) => `${STATUS_ICON[s] ?? ""} ${s} ${n}`).join(" · "),
    `**Plan:** \`${journal.planCommit.slice(0, 7)}\`${journal.plan.overlays.length ? ` + ${journal.plan.overlays.join(", ")}` : ""} · **Integration branch:** \`${journal.integrationBranch}\`` +
      // Forge never merges the final PR: it waits for a person, whatever the base branch's rules ask of them.
      (facts.finalPr !== undefined ? ` · **Final PR:** #${facts.finalPr}, waiting for a person to review and merge it` : ""),
    ...spendLine(journal, config),
    "",
  ];
  if (facts.stateBranchWarning)
    lines.push(
      "> [!WARNING]",
      `> **The run's state branch is not protected:** ${facts.stateBranchWarning}. Anyone who can push to this repository can rewrite the run's journal; Forge refuses a journal it did not write, and the run then stands still.`,
      '> Add the ruleset README.md describes ("Protect the state branches") so that only the Forge App can create or update `forge/*/_state`.',
      "",
    );
  lines.push(...trackerChart(journal, statuses), "");
  const head = lines.join("\n");
  const tail: string[] = [];
  if (journal.followups.length) {
    tail.push("", "**Follow-ups**", "");
    const shown = journal.followups.map(
      (f) => `- \`${f.id}\` from \`${f.sourceTaskId}\` — ${f.status}${f.prNumber ? ` (#${f.prNumber})` : ""}: ${oneLine(f.text)}`,
    );
    tail.push(...fitLines(shown, LIST_BUDGET, (n) => `- …and ${n} more follow-up${n === 1 ? "" : "s"}`));
  }
  if (journal.changeRequests.length) {
    tail.push("", "**Change Requests**", "");
    const shown = journal.changeRequests.map(
      (c) => `- \`${c.id}\` from \`${c.emittedBy}\` — ${c.status}${c.issueNumber ? ` (#${c.issueNumber})` : ""}: ${inlineData(c.title)}`,
    );
    tail.push(...fitLines(shown, LIST_BUDGET, (n) => `- …and ${n} more Change Request${n === 1 ? "" : "s"}`));
  }
  const latest = events.slice(-20);
  if (latest.length) {
    tail.push(
      "",
      "<details><summary>Latest events</summary>",
      "",
      "| # | time | event | task | data |",
      "|---:|---|---|---|---|",
      ...latest.map(eventLine),
      "",
      "</details>",
    );
  }
  tail.push(
    "",
    "Commands: `/forge status` · `/forge pause` · `/forge resume` · `/forge cancel` · `/forge retry <task> [message]` · `/forge retry failed` · `/forge help`",
  );
  const tailText = tail.join("\n");
  const table = taskTable(journal, facts, repo, BODY_LIMIT - BODY_MARGIN - head.length - tailText.length - 2);
  return cut([head, table, tailText].join("\n"), " (cut: the tracker is too long for one issue)");
}

/** Why dispatching is paused, as the tracker's status says it. */
function pauseText(journal: Journal, reason: PauseReason): string {
  const p = journal.pause;
  switch (reason) {
    case "change_requests":
      return `: waiting for ${p.changeRequests.join(", ")}`;
    case "manual":
      return ": /forge resume to continue";
    case "budget":
      return ": the run's budget is spent — `/forge budget +<dollars>` raises it";
    case "usage_limit":
      return `: model usage limit until ${p.usageLimitUntil}`;
  }
}

/** The run's spend against its budget, when it has either. */
function spendLine(journal: Journal, config: Pick<ForgeConfig, "budgets"> | undefined): string[] {
  const spent = runSpent(journal);
  const cap = config?.budgets.run_usd;
  if (cap === undefined && !journal.tasks.some((t) => t.spentUsd !== undefined)) return [];
  const total = cap !== undefined ? cap + (journal.budgetExtraUsd ?? 0) : undefined;
  return [`**Spend:** $${spent.toFixed(2)}${total !== undefined ? ` of $${total.toFixed(2)} (run budget)` : ""}`];
}

/** Room kept free below GitHub's limit, against miscounting (GitHub counts characters, JavaScript UTF-16 units). */
const BODY_MARGIN = 1_024;
/** The most characters the follow-up list, and the Change Request list, take of the tracker. */
const LIST_BUDGET = 8_000;

/** `lines` while they fit in `budget` characters (joined by line breaks), then a line saying how many more there are. */
function fitLines(lines: readonly string[], budget: number, more: (n: number) => string): string[] {
  let used = 0;
  for (let i = 0; i < lines.length; i++) {
    used += lines[i]!.length + 1;
    if (used > budget) return [...lines.slice(0, i), more(lines.length - i)];
  }
  return [...lines];
}

/**
 * What the chart needs of the plan alone — its edge count and each node's wave — kept per nodes
 * array: a decision shares the plan's nodes with the journal before it (an amended plan is a new
 * array), so a tracker update costs the statuses, not the DAG's walk. A journal read anew is a new
 * array, computed again once.
 */
const shapes = new WeakMap<readonly PlanNode[], { edges: number; wave?: number[] }>();
function planShape(nodes: readonly PlanNode[]): { edges: number; wave?: number[] } {
  let shape = shapes.get(nodes);
  if (!shape) shapes.set(nodes, (shape = { edges: mermaidEdgeCount(nodes) }));
  return shape;
}

/**
 * The tracker's chart: the DAG node by node while Mermaid can draw it (GitHub uses Mermaid's
 * default limits, past which it shows an error instead of the chart), else summarised by wave.
 */
function trackerChart(journal: Journal, statuses: ReadonlyMap<string, TaskStatus>): string[] {
  const nodes = journal.plan.nodes;
  const shape = planShape(nodes);
  const edges = shape.edges;
  if (fitsMermaid("", edges)) {
    const full = renderMermaid(nodes, statuses, { titles: false });
    if (fitsMermaid(full, edges)) return ["```mermaid", full, "```"];
  }
  shape.wave ??= waves(nodes);
  const groups = summarizeByWave(nodes, statuses, SUMMARY_MAX_GROUPS, shape.wave);
  return [
    "```mermaid",
    renderWaveSummary(groups),
    "```",
    "",
    `_The DAG has ${nodes.length.toLocaleString("en-US")} tasks and ${edges.toLocaleString("en-US")} dependencies, more than GitHub can draw: ` +
      `it is summarised by wave (a task's wave is 1 + the longest chain of dependencies before it; each box is coloured by its worst status). ` +
      `The full graph: \`npx forge graph ${planDir(journal.planId)}\` at the plan's commit, Forge's package installed._`,
  ];
}

/** Which tasks a table too long for the tracker shows first: those that need a look, merged ones last. */
const TABLE_FIRST: readonly TaskStatus[] = ["FAILED", "STALE", "RUNNING", "MERGE_READY", "DONE", "PENDING", "MERGED"];

/**
 * The task table, in at most `budget` characters: every task in plan order when it fits, else the
 * tasks by `TABLE_FIRST` (plan order within a status) as far as they fit, and a count of the rest.
 */
function taskTable(journal: Journal, facts: RunFacts, repo: RepoOnWeb, budget: number): string {
  const header = ["| Task | Type | Status | Attempt | PR | Check | Notes |", "|---|---|---|---:|---|---|---|"];
  // Rows are rendered as far as they are needed: a big plan's table never shows them all.
  const rows: string[] = [];
  const mixed = mixedAgents(journal.tasks);
  const row = (i: number) => (rows[i] ??= taskRow(journal, facts, repo, i, mixed));
  let length = header.join("\n").length;
  for (let i = 0; i < journal.tasks.length && length <= budget; i++) length += row(i).length + 1;
  if (length <= budget) return [...header, ...rows].join("\n");
  // By `TABLE_FIRST`, plan order within a status.
  const byStatus = new Map<TaskStatus, number[]>(TABLE_FIRST.map((s) => [s, []]));
  journal.tasks.forEach((t, i) => byStatus.get(t.status)!.push(i));
  const order = [...byStatus.values()].flat();
  // Room for the note below the table (a few hundred characters at most).
  let used = header.join("\n").length + 400;
  const shown: number[] = [];
  for (const i of order) {
    used += row(i).length + 1;
    if (used > budget) break;
    shown.push(i);
  }
  const left = new Map<TaskStatus, number>();
  for (const i of order.slice(shown.length)) left.set(journal.tasks[i]!.status, (left.get(journal.tasks[i]!.status) ?? 0) + 1);
  const rest = TABLE_FIRST.filter((s) => left.get(s))
    .map((s) => `${left.get(s)!.toLocaleString("en-US")} ${s}`)
    .join(", ");
  const total = journal.tasks.length.toLocaleString("en-US");
  return [
    `_${shown.length.toLocaleString("en-US")} of ${total} tasks shown — failed, stale and running first, merged last; not shown: ${rest}._`,
    "",
    ...header,
    ...shown.map(row),
  ].join("\n");
}

/**
 * Rows already rendered, per task state object: a decision replaces the task states it changes and
 * shares the others, so an update renders only the rows of tasks that changed (a row is a function
 * of the task, its node, its check run and the repository, all checked before a row is reused).
 */
const rowCache = new WeakMap<TaskState, { node: PlanNode; check: number | undefined; repo: string; mixed: boolean; row: string }>();

function taskRow(journal: Journal, facts: RunFacts, repo: RepoOnWeb, i: number, mixed: boolean): string {
  const t = journal.tasks[i]!;
  const node = journal.plan.nodes[i]!;
  const check = facts.checkRuns[`${t.id}:${t.attempts}`];
  const where = repoPage(repo, "");
  const hit = rowCache.get(t);
  if (hit && hit.node === node && hit.check === check && hit.repo === where && hit.mixed === mixed) return hit.row;
  const row = renderRow(t, node, check, repo, mixed);
  rowCache.set(t, { node, check, repo: where, mixed, row });
  return row;
}

/** A job's page as a link may hold it: http(s), nothing that ends the link or the table cell. */
const JOB_PAGE = /^https?:\/\/[^\s()<>|[\]]{1,300}$/;

function renderRow(t: TaskState, node: PlanNode, check: number | undefined, repo: RepoOnWeb, mixed: boolean): string {
  const a = t.attempt;
  const paths = a?.revision.protectedPaths ?? [];
  const notes = [
    mixed ? agentNote(t) : "",
    t.status === "RUNNING" ? progressNote(a?.revision.progress) : "",
    a?.resumed ? resumedNote(a.resumed) : "",
    a?.revision.waiting && t.status === "MERGE_READY" ? `waiting for a person: ${a.revision.waiting}` : "",
    a?.revision.iteration && t.status === "RUNNING" ? `revision ${a.revision.iteration}` : "",
    a?.hold ? `held: ${a.hold}` : "",
    t.status === "MERGE_READY" && heldForProtectedPaths(t)
      ? `waiting for /forge approve: changes ${paths.slice(0, 3).join(", ")}${paths.length > 3 ? ", …" : ""}`
      : "",
    t.lastError && t.status !== "MERGED" ? t.lastError : "",
    t.spentUsd !== undefined ? `spent $${t.spentUsd.toFixed(2)}` : "",
    t.confidence !== undefined && t.confidence < 0.6 ? `low confidence ${t.confidence}` : "",
  ]
    .filter(Boolean)
    .join("; ");
  const shown = asData(notes).replaceAll("|", "\\|").slice(0, 120);
  // The job that failed: the page of the job that ended without a result (the URL GitHub gave the App),
  // else the workflow run of the attempt held FAILED or STALE — where its log is, on the GitHub the App talks to.
  const run = a?.revision.workflowRunId;
  const page =
    t.lastErrorLog && JOB_PAGE.test(t.lastErrorLog)
      ? t.lastErrorLog
      : (t.status === "FAILED" || t.status === "STALE") && run !== undefined
        ? repoPage(repo, `actions/runs/${run}`)
        : undefined;
  const log = page && t.status !== "MERGED" ? ` [job log](${page})` : "";
  return `| \`${t.id}\`${node.title ? ` ${asData(node.title).replaceAll("|", "\\|").slice(0, 60)}` : ""} | ${node.agentType} | ${STATUS_ICON[t.status]} ${t.status} | ${t.attempts} | ${a?.prNumber !== undefined ? `#${a.prNumber}` : ""} | ${check !== undefined ? `[check](${repoPage(repo, `runs/${check}`)})` : ""} | ${shown}${log} |`;
}

/** GitHub refuses an issue title longer than this. */
const TITLE_LIMIT = 256;

/**
 * A Change Request issue's title: the emitter's own title, as data — one line, no Forge marker, no
 * live @mention, within GitHub's limit. (GitHub renders only code spans in a title, so nothing else
 * needs escaping there.)
 */
export function changeRequestIssueTitle(title: string): string {
  const line = asData(title).replace(/\s+/g, " ").trim() || "Change Request";
  return line.length > TITLE_LIMIT ? `${line.slice(0, TITLE_LIMIT - 1)}…` : line;
}

/**
 * The document's `suggested_changes`, when the document read from the emitter's branch is the
 * Change Request the runner completed (the journal keeps only the short fields of a CR).
 */
function suggestedChanges(document: string | undefined): string | undefined {
  if (document === undefined) return undefined;
  const fm = readFrontMatter("change-request.md", document.slice(0, CHANGE_REQUEST_LIMITS.bytes * 2));
  const parsed = changeRequestFrontmatterSchema.safeParse(fm.data);
  return parsed.success && parsed.data.suggested_changes.trim() ? parsed.data.suggested_changes : undefined;
}

/**
 * The Change Request issue (docs/formats.md#change-request). Forge's own lines first — who raised
 * it, its priority and suggested action, the affected tasks, what happens next — then the request
 * as the emitter wrote it, as data: its fields in a YAML block whose fence no backtick run in them
 * can close, and its document's body (front matter split off) without Forge markers or live
 * @mentions. Cut below GitHub's body limit from the end, so Forge's lines always stay.
 */
export function renderChangeRequestIssue(journal: Journal, crId: string, document: string | undefined, config: ForgeConfig): string {
  const cr = journal.changeRequests.find((c) => c.id === crId);
  const emitter = cr ? journal.plan.nodes.find((n) => n.id === cr.emittedBy) : undefined;
  const changes = suggestedChanges(document);
  const front = cr
    ? stringify({
        id: cr.id,
        run_id: journal.runId,
        title: asData(cr.title),
        emitted_by: cr.emittedBy,
        status: cr.status,
        reason: asData(cr.reason),
        affected_tasks: cr.affectedTasks,
        ...(cr.suggestedAction ? { suggested_action: cr.suggestedAction } : {}),
        ...(cr.priority ? { priority: cr.priority } : {}),
        ...(changes !== undefined ? { suggested_changes: asData(changes) } : {}),
      })
    : `id: ${crId}\n`;
  const fence = fenceFor(front);
  const next =
    config.cr_mode === "replan"
      ? "A Captain agent is writing an overlay for this request; its PR will link here. The run is paused until the overlay is merged."
      : "The run is paused. Comment `/forge approve` to have a Captain agent write an overlay, or `/forge reject` to continue without changing the plan.";
  const code = (id: string) => `\`${inlineData(id, 100)}\``;
  const who = cr
    ? [
        `**Raised by** ${code(cr.emittedBy)}${emitter ? ` (${emitter.kind === "refinery" ? "refinery" : `type ${emitter.agentType}`})` : ""}, attempt ${cr.attempt}`,
        ...(cr.priority ? [`**Priority** ${cr.priority}`] : []),
        ...(cr.suggestedAction ? [`**Suggested action** ${cr.suggestedAction}`] : []),
      ].join(" · ")
    : `Change Request ${code(crId)}`;
  const affected = cr?.affectedTasks.length ? [`**Affected tasks:** ${cr.affectedTasks.slice(0, 50).map(code).join(", ")}`] : [];
  const body =
    document !== undefined ? readFrontMatter("change-request.md", document.slice(0, CHANGE_REQUEST_LIMITS.bytes * 2)).body.trim() : "";
  return cut(
    [
      crMarker(journal.runId, crId),
      who,
      ...affected,
      "",
      next,
      "",
      `${fence}yaml`,
      front.trimEnd(),
      fence,
      ...(body ? ["", "---", "", asData(body)] : []),
    ].join("\n"),
    " (cut)",
  );
}

/** Rows of the final PR's task table past which it lists only the tasks that took more than one attempt. */
export const FINAL_TABLE_ROWS = 500;

function finalTaskTable(journal: Journal): string[] {
  const row = (t: Journal["tasks"][number]) =>
    `| \`${t.id}\` | ${t.attempts} | ${t.spentUsd !== undefined ? `$${t.spentUsd.toFixed(2)}` : ""} | ${t.attempt?.prNumber !== undefined ? `#${t.attempt.prNumber}` : ""} |`;
  const header = ["| Task | Attempts | Spend | PR |", "|---|---:|---:|---|"];
  if (journal.tasks.length <= FINAL_TABLE_ROWS) return [...header, ...journal.tasks.map(row)];
  // A big plan: every task's PR is on the tracker and in the journal; here, the ones worth a look.
  const retried = journal.tasks.filter((t) => t.attempts > 1).sort((a, b) => b.attempts - a.attempts);
  const shown = retried.slice(0, FINAL_TABLE_ROWS);
  return [
    `${journal.tasks.length - retried.length} of ${journal.tasks.length} tasks merged at their first attempt; ${retried.length} took more${retried.length > shown.length ? ` (the ${shown.length} with the most attempts below)` : ""}.`,
    ...(shown.length ? ["", ...header, ...shown.map(row)] : []),
  ];
}

/**
 * The run's final PR. `baseMethod`: how the base branch's rules want a pull request merged when
 * not by a merge commit (src/github/merge-rules.ts) — the body says so, and which way keeps one
 * commit per task.
 */
export function renderFinalPr(journal: Journal, facts: RunFacts, figures?: OutcomeFigures, baseMethod?: "squash" | "rebase"): string {
  const lines = [
    trackerMarker(journal.runId),
    `Forge run \`${journal.runId}\` of plan \`${journal.planId}\` is complete: ${journal.tasks.length} tasks merged into \`${journal.integrationBranch}\`.`,
    "",
    facts.trackerIssue !== undefined ? `Run tracker: #${facts.trackerIssue}` : "",
    "",
    ...(baseMethod ? [finalMergeNote(journal.baseBranch, baseMethod), ""] : []),
    ...(figures ? [...renderOutcomeTable(figures), ""] : []),
    ...finalTaskTable(journal),
  ];
  if (journal.followups.length)
    lines.push("", "Follow-ups:", ...journal.followups.map((f) => `- \`${f.id}\` (${f.status}): ${oneLine(f.text)}`));
  return cut(lines.join("\n"), " (cut)");
}

/** How the final PR must be merged when its base refuses a merge commit. */
function finalMergeNote(base: string, method: "squash" | "rebase"): string {
  const how =
    method === "rebase"
      ? "**Rebase and merge** (each task's commit lands, as on the integration branch) or **Squash and merge** (the run lands as one commit)"
      : "**Squash and merge** (the run lands as one commit)";
  return `\`${base}\` must keep a linear history: GitHub refuses this pull request as a merge commit. Merge it with ${how}.`;
}

/** What the tracker says when the run's journal was refused (src/app/journal-seal.ts, src/core/outbox-check.ts). */
export function journalRefusedComment(runId: string, reason: string, lastGood: string | null): string {
  const branch = stateBranch(runId);
  return [
    `**Forge froze this run.** The journal on \`${branch}\` was refused: ${reason}.`,
    "",
    "Only the Forge App writes that branch; nothing of a journal it did not write for this repository and run, or of one older than the last it recorded, is carried out, so the run stands still until the branch holds Forge's newest journal again.",
    "",
    lastGood
      ? `To go on, a person with write access puts the branch back at the last journal Forge wrote, \`${lastGood.slice(0, 12)}\`:\n\n\`\`\`sh\ngit push --force origin ${lastGood}:refs/heads/${branch}\n\`\`\`\n\nForge picks the run up at its next pass.`
      : "Forge found no journal of its own in the branch's recent history: start the plan again with `/forge run <planId>` once the branch is deleted.",
    "",
    'To keep this from happening, add the ruleset README.md describes ("Protect the state branches"), so that only the Forge App can create or update `forge/*/_state`.',
  ].join("\n");
}
