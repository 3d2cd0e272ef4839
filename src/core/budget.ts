/**
 * Budgets (docs/runner.md#budgets): what one attempt may spend, given the config's `budgets`, the
 * task's own (front matter) and what the task and the run spent already. Running attempts reserve
 * their cap from the run's budget until their result says what they spent. Pure.
 */
import type { Journal, PlanNode, TaskState } from "./journal.js";
import type { ForgeConfig } from "./schemas/config.js";

export interface AttemptCap {
  usd?: number;
  tokens?: number;
}

const round = (usd: number) => Math.round(usd * 1e6) / 1e6;

/** What the run may still commit: its budget, raised, less what finished attempts spent and running ones reserved. Undefined: no run budget. */
export function runLeft(j: Journal, config: Pick<ForgeConfig, "budgets">): number | undefined {
  const cap = config.budgets.run_usd;
  if (cap === undefined) return undefined;
  let used = 0;
  for (const t of j.tasks) used += (t.spentUsd ?? 0) + (t.status === "RUNNING" ? (t.reservedUsd ?? 0) : 0);
  return round(cap + (j.budgetExtraUsd ?? 0) - used);
}

/** What task t may still spend over all its attempts. Undefined: no task budget. */
export function taskLeft(node: PlanNode, t: TaskState, config: Pick<ForgeConfig, "budgets">): number | undefined {
  const cap = node.budget?.task_usd ?? config.budgets.task_usd;
  return cap === undefined ? undefined : round(cap + (t.budgetExtraUsd ?? 0) - (t.spentUsd ?? 0));
}

/**
 * The cap of task t's next attempt: the attempt cap, no more than what the task and the run have
 * left. `blocked` names what cannot cover it (an attempt that could spend nothing is not started).
 */
export function nextAttemptCap(
  j: Journal,
  node: PlanNode,
  t: TaskState,
  config: Pick<ForgeConfig, "budgets">,
): { cap: AttemptCap; blocked?: "task" | "run" } {
  const tokens = node.budget?.attempt_tokens ?? config.budgets.attempt_tokens;
  const base = node.budget?.attempt_usd ?? config.budgets.attempt_usd;
  // What a person added to the task raises its attempts' cap as much as its own.
  const attempt = base === undefined ? undefined : round(base + (t.budgetExtraUsd ?? 0));
  const task = taskLeft(node, t, config);
  const run = runLeft(j, config);
  if (task !== undefined && task <= 0) return { cap: {}, blocked: "task" };
  if (run !== undefined && (run <= 0 || (attempt !== undefined && run < Math.min(attempt, task ?? attempt))))
    return { cap: {}, blocked: "run" };
  const usd = [attempt, task, run].filter((x): x is number => x !== undefined);
  return { cap: { ...(usd.length ? { usd: Math.min(...usd) } : {}), ...(tokens !== undefined ? { tokens } : {}) } };
}

/** The run's spend so far: what finished attempts spent. */
export function runSpent(j: Journal): number {
  return round(j.tasks.reduce((n, t) => n + (t.spentUsd ?? 0), 0));
}
