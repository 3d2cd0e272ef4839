/**
 * Where Forge keeps things in the user's repository, shared by the App and the runner so both
 * sides agree. Forge's own names start with '_', which no task id can, so they never collide with
 * task branches (`forge/<runId>/<taskId>/<attempt>`).
 */

/** The branch holding a run's journal (`journal.json`) and event log segments (`events/NNNNNN.ndjson`). */
export const stateBranch = (runId: string) => `forge/${runId}/_state`;
export const JOURNAL_FILE = "journal.json";
export const eventSegmentFile = (segment: number) => `events/${String(segment).padStart(6, "0")}.ndjson`;

/** Folder of one attempt's record on its task branch: walkthrough, result, events, signals, manifests. */
export const attemptDir = (runId: string, taskId: string, attempt: number) => `.forge/runs/${runId}/${taskId}/${attempt}`;
export const walkthroughPath = (runId: string, taskId: string, attempt: number) => `${attemptDir(runId, taskId, attempt)}/walkthrough.md`;
export const resultPath = (runId: string, taskId: string, attempt: number) => `${attemptDir(runId, taskId, attempt)}/result.json`;

/** Plans live here on the default branch. */
export const planDir = (planId: string) => `.forge/plans/${planId}`;

/** Paths an agent may never change: the plan is immutable, workflows are the user's (see docs/runner.md#protected-paths). */
export const PROTECTED_PATHS = [".forge/plans/**", ".github/workflows/**"] as const;

/**
 * Trailers of the runner's record commit — the last commit of an attempt, a child of the agent's
 * work commit that adds only the attempt's record folder. The App recognises the record commit in
 * a push webhook by them, without an API call.
 */
export const TRAILERS = {
  run: "Forge-Run",
  task: "Forge-Task",
  attempt: "Forge-Attempt",
  agent: "Forge-Agent",
  exit: "Forge-Exit",
} as const;

/** Inputs of the agent workflow (`workflow_dispatch`), as the App sends them. */
export const DISPATCH_INPUTS = {
  runId: "run_id",
  taskId: "task_id",
  attempt: "attempt",
  /** JSON `{ refinement?, answer? }` for the attempt: the previous attempt's refinement document or a person's answer. */
  context: "context",
} as const;

/** Check run name of a task (one check run per attempt, owned by the App). */
export const checkRunName = (taskId: string) => `forge · ${taskId}`;

/** Labels Forge puts on issues and PRs. */
export const LABELS = { tracker: "forge:run", changeRequest: "forge:change-request", task: "forge:task" } as const;
