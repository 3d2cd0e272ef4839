// What every effect runner receives and returns, and the helpers the groups share: the outcome
// `done`, a task of the journal, and Forge's own runs of the agent workflow on a branch.
import type { Effect } from "../../core/effects.js";
import type { Journal, TaskState } from "../../core/journal.js";
import type { SquashUpstream } from "../../core/task-record.js";
import type { ForgeConfig } from "../../core/schemas/config.js";
import type { GitHubPort, WorkflowRunInfo } from "../../github/port.js";
import type { LeafInput } from "../../core/inputs.js";
import type { FactsPatch } from "../rounds.js";
import type { RunFacts } from "../run-store.js";
import type { ForgeEvent } from "../../core/schemas/events.js";

/**
 * What carrying out an effect came to. An effect never writes the run's state: what it learned
 * (ids of the GitHub objects it made or found) travels in `learned`, which the engine applies.
 */
export type EffectOutcome = (
  | { kind: "done"; result: Record<string, unknown> }
  | { kind: "failed"; error: string }
  /** Not now: tried again at the next flush, or after `retryInMs` at the latest. */
  | { kind: "later"; reason: string; retryInMs?: number }
) & {
  learned?: FactsPatch;
  /** Facts the effect found on GitHub, decided with its outcome (a merge that finds the head's required checks red). */
  inputs?: LeafInput[];
};

export interface EffectContext {
  port: GitHubPort;
  journal: Journal;
  config: ForgeConfig;
  /** Read-only: what an effect learns goes in its outcome's `learned`. */
  facts: DeepReadonly<RunFacts>;
  /** The open segment of the event log, for the tracker's tail. */
  events: readonly ForgeEvent[];
  /** The effect was loaded from the stored outbox rather than decided in this process: it may have run already. */
  replay: boolean;
  now: number;
  /** Conflicts found while preparing a refinery's branch, handed to its dispatch. */
  conflicts: Map<string, string[]>;
  /** A refinery's upstreams its job squashes (its branch must keep a linear history), handed to its dispatch. */
  squash?: Map<string, SquashUpstream[]>;
  /** Link to the App's page or the repository, for check run details. */
  htmlUrl?: string;
  /**
   * A branch's head read while the decision that made this effect was being written (reads are
   * safe before the write: they change nothing), so a new task branch is cut without waiting for one
   * more call after it. Read after the facts that made the task ready, it holds every MERGED dependency.
   */
  prefetchedHead?: Promise<string | null>;
  /**
   * Whether the run still wants this very effect, by its journal as last decided (not the snapshot
   * the effect started from): a decision made while the effect waited — a revision that took the
   * task back to RUNNING, say — may have taken it out of the outbox. An effect that cannot be undone
   * asks just before its call to GitHub. Absent: wanted.
   */
  stillWanted?: () => boolean;
}

export type DeepReadonly<T> = { readonly [K in keyof T]: T[K] extends object ? Readonly<T[K]> : T[K] };

export const done = (result: Record<string, unknown> = {}, learned?: FactsPatch): EffectOutcome => ({
  kind: "done",
  result,
  ...(learned ? { learned } : {}),
});

export function task(ctx: EffectContext, taskId: string): TaskState | undefined {
  return ctx.journal.tasks.find((t) => t.id === taskId);
}

export type EffectOf<K extends Effect["kind"]> = Extract<Effect, { kind: K }>;

/**
 * Runs of the agent workflow on `branch` that Forge dispatched: started by `workflow_dispatch`,
 * with their head in this repository — never the repository's own CI, nor a fork's run.
 */
export async function ownRuns(ctx: EffectContext, branch: string): Promise<WorkflowRunInfo[]> {
  const runs = await ctx.port.listWorkflowRuns(ctx.config.workflow, { branch });
  if (runs.length === 0) return runs;
  const repositoryId = await ctx.port.repositoryId();
  return runs.filter((r) => r.event === "workflow_dispatch" && r.headRepositoryId === repositoryId);
}

/** A dispatch on `branch` made before a crash (or behind a lost answer): the newest of Forge's runs there. */
export async function dispatchedBefore(ctx: EffectContext, branch: string): Promise<WorkflowRunInfo | undefined> {
  const runs = await ownRuns(ctx, branch);
  return runs.sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt))[0];
}
