/**
 * What people do to the issues a run shows on, and what Forge does about it (docs/formats.md#what-people-do-to-the-issues):
 * - the run's final PR merges into its base: every issue whose task merged closes (issue-sync.ts);
 * - a person closes a task's issue while the run goes: the task goes on — the plan is fixed once
 *   merged — and Forge says so on the issue, with how to stop the run;
 * - a sub-issue added or removed, or a "blocked by" added or removed, on an issue of a running run:
 *   the plan does not change, and Forge says so on the issue, with how to plan again.
 * Each is one comment of Forge's per issue and run, updated in place: never a stream.
 */
import type { Journal } from "../core/journal.js";
import type { GitHubPort } from "../github/port.js";
import type { AppContext } from "./context.js";
import { closeRunIssues, type IssueFacts } from "./issue-sync.js";
import type { RunFacts } from "./run-store.js";
import type { RepoRuntime } from "./runtime.js";

/** The marker of Forge's note on an issue about what a person did to it. */
export const noteMarker = (runId: string) => `<!-- forge:issue-note ${runId} -->`;

interface RunOfIssue {
  journal: Journal;
  facts: RunFacts;
  issues: IssueFacts;
}

/** The runs (running ones unless `all`) that show on issues, with their journals. */
async function runsWithIssues(ctx: AppContext, rt: RepoRuntime, all = false): Promise<RunOfIssue[]> {
  const out: RunOfIssue[] = [];
  for (const [runId, r] of await ctx.knownRuns(rt)) {
    if (!all && r.status !== "running") continue;
    const loaded = await rt.engine.state(runId);
    const issues = loaded?.state.facts.issues;
    if (loaded && issues) out.push({ journal: loaded.state.journal, facts: loaded.state.facts, issues });
  }
  return out;
}

/** Forge's one note on `issue` for the run, written or rewritten. */
async function note(port: GitHubPort, issue: number, runId: string, text: string): Promise<void> {
  const body = `${noteMarker(runId)}\n${text}`;
  const id = await port.findComment(issue, noteMarker(runId));
  if (id !== null) await port.updateComment(id, body);
  else await port.createComment(issue, body);
}

const trackerOf = (r: RunOfIssue) => (r.facts.trackerIssue !== undefined ? ` on its tracker #${r.facts.trackerIssue}` : "");

/** A PR merged into its base: when it is a run's final PR, that run's issues close. */
export async function onPullMergedIntoBase(
  ctx: AppContext,
  rt: RepoRuntime,
  pr: { number: number; head: string; base: string },
): Promise<void> {
  for (const r of await runsWithIssues(ctx, rt, true)) {
    if (r.journal.integrationBranch !== pr.head || r.journal.baseBranch !== pr.base) continue;
    await closeRunIssues(rt.port, r.journal, r.issues, pr.number);
  }
}

/** A person closed an issue: if it is a running task's, the task goes on, and the issue says so. */
export async function onIssueClosed(ctx: AppContext, rt: RepoRuntime, issue: number): Promise<void> {
  for (const r of await runsWithIssues(ctx, rt)) {
    const taskId = Object.entries(r.issues.tasks).find(([, n]) => n === issue)?.[0];
    const t = taskId !== undefined ? r.journal.tasks.find((x) => x.id === taskId) : undefined;
    if (!t || t.status === "MERGED") continue;
    await note(
      rt.port,
      issue,
      r.journal.runId,
      `**Forge** · this issue was closed while its task \`${t.id}\` of run \`${r.journal.runId}\` is ${t.status}: the task goes on — the plan of a run is fixed once merged — and its work still lands with the run's final PR. To stop the run, comment \`/forge cancel\`${trackerOf(r)}. Forge does not reopen the issue.`,
    );
  }
}

/**
 * A sub-issue or a "blocked by" changed on `issues` (the parent and the child, or the blocked issue):
 * on an issue of a running run, the plan stays as merged, and the issue says how to plan again.
 */
export async function onTreeChanged(ctx: AppContext, rt: RepoRuntime, issues: readonly number[], what: string): Promise<void> {
  for (const r of await runsWithIssues(ctx, rt)) {
    const mine = new Set([...Object.values(r.issues.tasks), ...(r.issues.parent !== undefined ? [r.issues.parent] : [])]);
    const hit = issues.find((n) => mine.has(n));
    if (hit === undefined) continue;
    const again =
      r.issues.parent !== undefined
        ? `, then comment \`/forge plan\` on #${r.issues.parent} to build a plan from the tree as it is now`
        : "";
    await note(
      rt.port,
      hit,
      r.journal.runId,
      `**Forge** · ${what}: run \`${r.journal.runId}\` goes on with its plan \`${r.journal.planId}\` as merged — a run's plan is fixed, and changes to the issue tree do not reach it. To plan again, cancel the run with \`/forge cancel\`${trackerOf(r)}${again}.`,
    );
  }
}
