/**
 * Carrying out the executor's effects on GitHub. Every effect is idempotent: running one twice (a
 * crash between persisting the journal and acknowledging the effect re-runs it) has the result of
 * running it once. Each returns `done` with data for the executor, `failed` for good, or `later`
 * when GitHub is not ready yet (the effect stays in the outbox and is tried again).
 *
 * context.ts holds what every runner receives and returns and the helpers the groups share; each
 * group of effects is a file of its own, and the dispatch table below names one runner per kind.
 */
import type { Effect } from "../../core/effects.js";
import { trackerMarker } from "../render.js";
import { dispatchAgent, dispatchCaptain, prepareBranch, spawnFollowup } from "./branches-and-dispatch.js";
import { upsertCheckRun } from "./check-runs.js";
import { cancelAgent, cleanupBranches } from "./cleanup.js";
import type { EffectContext, EffectOf, EffectOutcome } from "./context.js";
import { openChangeRequest, openFinalPullRequest, postComment, trackerDue, updateTracker } from "./issues-and-comments.js";
import type { Journal } from "../../core/journal.js";
import type { RunFacts } from "../run-store.js";
import { checkUpstream, mergePullRequest, openPullRequest } from "./merge.js";

export type { EffectContext, EffectOutcome } from "./context.js";
export { MERGE_RETRY_MS } from "./merge.js";
export { attentionOf, TRACKER_DEBOUNCE_MAX_MS, TRACKER_DEBOUNCE_MS, trackerDebounceMs } from "./issues-and-comments.js";

/** One handler per effect kind: the compiler names a kind without one, and a handler of a kind that is gone. */
type EffectHandlers = { [K in Effect["kind"]]: (effect: EffectOf<K>, ctx: EffectContext) => Promise<EffectOutcome> };

export async function runEffect(effect: Effect, ctx: EffectContext): Promise<EffectOutcome> {
  const handler = HANDLERS[effect.kind] as (effect: Effect, ctx: EffectContext) => Promise<EffectOutcome>;
  return handler(effect, ctx);
}

/**
 * When a pending effect will first do something (ms since the epoch; 0: at once). Only the tracker
 * knows ahead: it waits between two writes. The engine's lease on it lasts until then and a lease
 * period beyond, so a redraw that waits is not claimed again with a journal write before it runs.
 */
export function effectDue(effect: Effect, journal: Journal, facts: RunFacts): number {
  return effect.kind === "UpdateTracker" ? trackerDue(journal, facts) : 0;
}

const HANDLERS: EffectHandlers = {
  PrepareBranch: prepareBranch,
  DispatchAgent: dispatchAgent,
  UpsertCheckRun: upsertCheckRun,
  MergePullRequest: mergePullRequest,
  CheckUpstream: checkUpstream,
  OpenPullRequest: openPullRequest,
  OpenChangeRequest: openChangeRequest,
  DispatchCaptain: dispatchCaptain,
  PostComment: postComment,
  UpdateTracker: updateTracker,
  SpawnFollowup: spawnFollowup,
  OpenFinalPullRequest: openFinalPullRequest,
  CleanupBranches: cleanupBranches,
  CancelAgent: cancelAgent,
};

export { trackerMarker };
