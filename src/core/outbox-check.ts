/**
 * What a journal may ask the App to do, checked before anything of it is carried out: every
 * pending effect must be one the App itself would have produced for this run — branch names from
 * the run's templates and never the base branch, dispatches only of the configured workflow,
 * clean-up only of the run's own branches. A journal is sealed by the App (src/app/journal-seal.ts);
 * this check stands behind the seal, so that even a journal that verifies cannot point the App's
 * token at someone else's branch (see docs/architecture.md#trust).
 */
import type { Journal } from "./journal.js";
import type { ForgeConfig } from "./schemas/config.js";
import { branchName, integrationBranch, runBranchPrefix } from "./layout.js";

/** A workflow file name under `.github/workflows/` (no folder, no `..`). */
const WORKFLOW_FILE = /^[A-Za-z0-9][A-Za-z0-9._-]*\.ya?ml$/;

/** The branches a run may create, merge, dispatch on or delete: its attempts' and follow-ups'. */
export function ownBranches(journal: Journal, config: Pick<ForgeConfig, "branch_template">): Set<string> {
  const own = new Set<string>();
  for (const t of journal.tasks) for (let a = 1; a <= t.attempts; a++) own.add(branchName(config, journal.runId, t.id, a));
  for (const f of journal.followups) own.add(branchName(config, journal.runId, f.id, 1));
  return own;
}

/** Why the journal's pending effects are not ones the App would produce: empty when they all are. */
export function outboxProblems(journal: Journal, config: ForgeConfig): string[] {
  const problems: string[] = [];
  const integration = integrationBranch(config, journal.runId);
  if (journal.integrationBranch !== integration)
    problems.push(`the integration branch is ${journal.integrationBranch}, not ${integration} as the run's template names it`);
  if (journal.baseBranch === journal.integrationBranch || journal.baseBranch.startsWith(runBranchPrefix(journal.runId)))
    problems.push(`the base branch ${journal.baseBranch} is one of the run's own branches`);
  if (!WORKFLOW_FILE.test(config.workflow)) problems.push(`the workflow ${JSON.stringify(config.workflow)} is not a workflow file name`);
  const own = ownBranches(journal, config);
  const protectedBranches = new Set([journal.baseBranch, journal.integrationBranch]);
  const attemptBranch = (taskId: string, attempt: number) => branchName(config, journal.runId, taskId, attempt);
  const isTask = (taskId: string) => journal.tasks.some((t) => t.id === taskId) || journal.followups.some((f) => f.id === taskId);
  for (const e of journal.outbox) {
    const bad = (why: string) => problems.push(`${e.kind} ${e.key}: ${why}`);
    const ownBranch = (b: string, what: string) => {
      if (protectedBranches.has(b)) bad(`${what} ${b} is the run's base or integration branch`);
      else if (!own.has(b)) bad(`${what} ${b} is not a branch of this run`);
    };
    switch (e.kind) {
      case "PrepareBranch":
        if (e.branch !== attemptBranch(e.taskId, e.attempt)) bad(`branch ${e.branch} is not ${attemptBranch(e.taskId, e.attempt)}`);
        if (e.from !== journal.integrationBranch) bad(`it cuts from ${e.from}, not the integration branch`);
        for (const m of e.merge) ownBranch(m, "upstream");
        break;
      case "DispatchAgent":
      case "MergePullRequest":
        if (!isTask(e.taskId)) bad(`${e.taskId} is not a task of this run`);
        // A resumed attempt works on the branch of the attempt it continues (docs/executor.md#resuming).
        if (!Array.from({ length: e.attempt }, (_, k) => attemptBranch(e.taskId, k + 1)).includes(e.branch))
          bad(`branch ${e.branch} is not ${attemptBranch(e.taskId, e.attempt)} nor an earlier attempt's`);
        if (e.kind === "DispatchAgent" && e.context?.agent) {
          // The agent a dispatch names is the one the journal gave the attempt (docs/executor.md#agent-fallback).
          const t = journal.tasks.find((x) => x.id === e.taskId);
          const own = t?.attempts === e.attempt ? t.attempt?.agent : undefined;
          if (own !== e.context.agent.adapter) bad(`it names the agent ${e.context.agent.adapter}, not the attempt's (${own ?? "none"})`);
        }
        break;
      case "SpawnFollowup":
        if (e.branch !== attemptBranch(e.followupId, 1)) bad(`branch ${e.branch} is not ${attemptBranch(e.followupId, 1)}`);
        break;
      case "CleanupBranches":
        for (const b of e.branches) ownBranch(b, "branch");
        break;
      default:
        if ("taskId" in e && typeof e.taskId === "string" && !isTask(e.taskId)) bad(`${e.taskId} is not a task of this run`);
    }
  }
  return problems;
}
