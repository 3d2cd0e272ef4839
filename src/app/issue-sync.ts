/**
 * A run shown on the issues its tasks came from (docs/formats.md#plans-from-an-issue-tree): each task's
 * issue carries ONE comment of Forge's, updated in place as the task moves (never a stream); the plan's
 * issue carries the run's summary the same way; when the run's final PR merges into the base branch,
 * every issue whose task merged is closed. Which runs do is config `issue_sync`.
 *
 * The comments are redrawn with the tracker (its pace keeps writes well inside GitHub's limits on
 * creating content), and only those whose text changed are written.
 */
import { createHash } from "node:crypto";
import type { Journal, TaskState } from "../core/journal.js";
import type { ParsedPlan } from "../core/plan/parse.js";
import type { ForgeConfig } from "../core/schemas/config.js";
import type { GitHubPort } from "../github/port.js";
import type { EffectContext } from "./effects/context.js";
import type { RunFacts } from "./run-store.js";

export type IssueFacts = NonNullable<RunFacts["issues"]>;

/** The marker of Forge's comment on a task's issue or the plan's: the first line, naming the run. */
export const issueMarker = (runId: string) => `<!-- forge:issue ${runId} -->`;

/** The issues a new run shows on, from its plan and config; none when it shows on none. */
export function issueLinks(parsed: ParsedPlan, config: Pick<ForgeConfig, "issue_sync">): IssueFacts | undefined {
  const parent = parsed.dag.data?.metadata.issue;
  if (config.issue_sync === "off" || (config.issue_sync === "tree" && parent === undefined)) return undefined;
  const tasks: Record<string, number> = {};
  for (const t of parsed.tasks) if (t.data?.issue !== undefined) tasks[t.data.id] = t.data.issue;
  if (parent === undefined && Object.keys(tasks).length === 0) return undefined;
  return { ...(parent !== undefined ? { parent } : {}), tasks, comments: {}, shown: {} };
}

const WORDS: Record<string, string> = {
  PENDING: "⚪ waiting",
  RUNNING: "🔵 an agent is at work",
  DONE: "🟢 done, being checked",
  MERGE_READY: "🟣 ready to merge",
  MERGED: "✅ merged into the run's integration branch",
  FAILED: "🔴 failed",
  STALE: "🟠 stalled",
};

function stateLine(t: TaskState): string {
  const hold = t.attempt?.hold ? ` (${t.attempt.hold})` : "";
  const pr = t.attempt?.prNumber !== undefined ? ` · PR #${t.attempt.prNumber}` : "";
  const attempt = t.attempts > 0 ? ` · attempt ${t.attempts}` : "";
  return `${WORDS[t.status] ?? t.status}${hold}${attempt}${pr}`;
}

function where(journal: Journal, tracker: number | undefined): string {
  return `run \`${journal.runId}\` of plan \`${journal.planId}\`${tracker !== undefined ? ` (tracker #${tracker})` : ""}`;
}

/** What a task's issue shows: its task's state, its PR, the run. */
export function taskIssueComment(journal: Journal, t: TaskState, tracker: number | undefined, finalPr: number | undefined): string {
  const end =
    journal.status === "cancelled"
      ? ["", "The run was cancelled."]
      : t.status === "MERGED"
        ? ["", `It closes when the run's final PR${finalPr !== undefined ? ` #${finalPr}` : ""} merges into \`${journal.baseBranch}\`.`]
        : [];
  return [
    issueMarker(journal.runId),
    `**Forge** · this issue is task \`${t.id}\` of ${where(journal, tracker)}: **${stateLine(t)}**.`,
    ...end,
  ].join("\n");
}

/** What the plan's issue shows: the run's summary, a row per task's issue. */
export function summaryComment(journal: Journal, issues: IssueFacts, tracker: number | undefined, finalPr: number | undefined): string {
  const rows = journal.tasks.map((t) => {
    const n = issues.tasks[t.id];
    return `| ${n !== undefined ? `#${n}` : "—"} | \`${t.id}\` | ${stateLine(t)} |`;
  });
  const status = journal.status === "running" ? "running" : journal.status;
  return [
    issueMarker(journal.runId),
    `**Forge** · ${where(journal, tracker)}: **${status}**, ${journal.merged}/${journal.tasks.length} merged${finalPr !== undefined ? ` · final PR #${finalPr}` : ""}.`,
    "",
    "| Issue | Task | State |",
    "|---|---|---|",
    ...rows,
  ].join("\n");
}

const digest = (text: string) => createHash("sha256").update(text).digest("base64url").slice(0, 16);

/**
 * Forge's one comment on `issue`, written when its text changed: updated in place where it was
 * posted (found by its marker once, after a crash), posted otherwise.
 */
async function upsert(port: GitHubPort, issues: IssueFacts, issue: number, body: string, replay: boolean, runId: string): Promise<void> {
  const key = String(issue);
  const d = digest(body);
  if (issues.shown[key] === d) return;
  let id = issues.comments[key] ?? (replay ? ((await port.findComment(issue, issueMarker(runId))) ?? undefined) : undefined);
  if (id !== undefined) await port.updateComment(id, body);
  else id = await port.createComment(issue, body);
  issues.comments[key] = id;
  issues.shown[key] = d;
}

/**
 * The run's issues brought up to date (with the tracker): the facts they leave, or undefined when
 * the run shows on none. A write that fails is tried again with the next redraw.
 */
export async function syncIssues(ctx: EffectContext, tracker: number | undefined): Promise<IssueFacts | undefined> {
  const known = ctx.facts.issues;
  if (!known) return undefined;
  const issues: IssueFacts = {
    ...(known.parent !== undefined ? { parent: known.parent } : {}),
    tasks: { ...known.tasks },
    comments: { ...known.comments },
    shown: { ...known.shown },
  };
  const finalPr = ctx.facts.finalPr;
  const id = ctx.journal.runId;
  for (const t of ctx.journal.tasks) {
    const n = issues.tasks[t.id];
    if (n === undefined) continue;
    await upsert(ctx.port, issues, n, taskIssueComment(ctx.journal, t, tracker, finalPr), ctx.replay, id).catch(() => undefined);
  }
  const parent = issues.parent;
  if (parent !== undefined)
    await upsert(ctx.port, issues, parent, summaryComment(ctx.journal, issues, tracker, finalPr), ctx.replay, id).catch(() => undefined);
  return issues;
}

/**
 * The run's final PR merged into its base: every issue whose task merged is closed (the plan's too,
 * once all of them are), each with its comment saying so. Closing a closed issue changes nothing.
 */
export async function closeRunIssues(port: GitHubPort, journal: Journal, issues: IssueFacts, finalPr: number): Promise<number[]> {
  const closed: number[] = [];
  for (const t of journal.tasks) {
    const n = issues.tasks[t.id];
    if (n === undefined || t.status !== "MERGED") continue;
    const body = `${issueMarker(journal.runId)}\n**Forge** · this issue was task \`${t.id}\` of ${where(journal, undefined)}: ✅ merged into \`${journal.baseBranch}\` with #${finalPr}.`;
    const id = issues.comments[String(n)];
    if (id !== undefined) await port.updateComment(id, body);
    else await port.createComment(n, body);
    await port.updateIssue(n, { state: "closed" });
    closed.push(n);
  }
  const all = journal.tasks.every((t) => t.status === "MERGED");
  const summary = issues.parent !== undefined ? issues.comments[String(issues.parent)] : undefined;
  if (summary !== undefined) await port.updateComment(summary, summaryComment(journal, issues, undefined, finalPr));
  if (issues.parent !== undefined && all && journal.status === "completed") {
    await port.updateIssue(issues.parent, { state: "closed" });
    closed.push(issues.parent);
  }
  return closed;
}
