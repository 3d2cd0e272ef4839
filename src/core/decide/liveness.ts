/**
 * Liveness at the App (docs/executor.md#liveness-at-the-app): which RUNNING attempts a `tick` at a
 * given time finds silent, and for which of them the App reads the branch checkpoint before the tick
 * is decided. One predicate serves both: the tick that makes the attempt STALE, and the App that
 * reads beforehand what the tick will need (a read is I/O, so it is no part of the decision; its
 * result comes in the tick's input, and the decision stays a function of its input).
 */
import type { Journal, PlanNode, TaskState } from "../journal.js";
import type { ForgeConfig } from "../schemas/config.js";
import { retryWay, whyFresh } from "./resume.js";

/** How a tick finds an attempt: its job never started, or it started and has been silent too long. */
export type Silence = "never started" | "silent";

/** Whether a tick at `now` finds task `t`'s attempt silent, and how; undefined when it is alive (or not RUNNING). */
export function silenceOf(t: TaskState, config: Pick<ForgeConfig, "timeouts">, now: number): Silence | undefined {
  const r = t.attempt?.revision;
  if (t.status !== "RUNNING" || !r) return undefined;
  if (!r.startedAt) return now - Date.parse(r.dispatchedAt) > config.timeouts.dispatch_start_minutes * 60_000 ? "never started" : undefined;
  const last = Date.parse(r.lastHeartbeat ?? r.startedAt);
  return now - last > config.timeouts.liveness_minutes * 60_000 ? "silent" : undefined;
}

/** An attempt a tick will find silent, on the branch whose checkpoint its retry may continue from. */
export interface SilentAttempt {
  taskId: string;
  attempt: number;
  branch: string;
}

/**
 * The attempts a tick at `now` on `journal` makes STALE for silence whose retry could continue from
 * a checkpoint: started (a job that never started left nothing to read), and of a task whose retry
 * policy resumes a stall and whose attempt may be resumed at all (not a refinery's, not a revision,
 * its job known). Only their branches are worth a read: for any other attempt the tick decides the
 * same without one.
 */
export function checkpointReadsAt(journal: Journal, config: ForgeConfig, now: number): SilentAttempt[] {
  if (journal.status !== "running") return [];
  const out: SilentAttempt[] = [];
  journal.tasks.forEach((t, i) => {
    const node: PlanNode | undefined = journal.plan.nodes[i];
    const a = t.attempt;
    if (!node || !a || silenceOf(t, config, now) !== "silent") return;
    if (retryWay(config, node, "stale") !== "resume" || whyFresh(node, a) !== undefined) return;
    out.push({ taskId: t.id, attempt: t.attempts, branch: a.branch });
  });
  return out;
}
