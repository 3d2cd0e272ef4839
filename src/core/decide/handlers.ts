/** The input table: exactly one handler per input kind, which the compiler holds to the kinds of `LeafInput`. */
import type { LeafInput } from "../inputs.js";
import { commandReplies } from "../render/run-messages.js";
import { succeeded } from "../exit-codes.js";
import { effectDone, effectFailed } from "./acknowledgements.js";
import { agentAlive, agentFinished, agentLost } from "./agent-results.js";
import { crClosed, overlayApplied, planChanged } from "./change-requests.js";
import { command } from "./commands.js";
import { followupFinished, followupMerged, followupPrOpened, isFollowup } from "./follow-ups.js";
import { branchUpdated, branchUpdateRequested } from "./branch-update.js";
import { checksFailed, reviewDismissed, reviewSubmitted } from "./iterations.js";
import { mergeBlocked } from "./merge-blocked.js";
import { branchPushed, prMerged, prOpened } from "./merge-gate.js";
import type { InputKind, InputOf, Step } from "./step.js";
import { tick, usageLimitedInput } from "./tick.js";

type Handlers = { [K in InputKind]: (s: Step, input: InputOf<K>) => void };

/**
 * Inputs about a follow-up name its id where a task id would be: they go to the follow-up's
 * handler, and everything else to the task's.
 */
const handlers: Handlers = {
  tick,
  "agent.started": agentAlive,
  "agent.heartbeat": agentAlive,
  "agent.finished": (s, input) =>
    isFollowup(s, input.taskId) ? followupFinished(s, input.taskId, succeeded(input.exitCode)) : agentFinished(s, input),
  "agent.lost": (s, input) => (isFollowup(s, input.taskId) ? followupFinished(s, input.taskId, false) : agentLost(s, input)),
  "branch.pushed": branchPushed,
  "pr.opened": (s, input) => (isFollowup(s, input.taskId) ? followupPrOpened(s, input.taskId, input.number) : prOpened(s, input)),
  "pr.merged": (s, input) =>
    isFollowup(s, input.taskId) ? followupMerged(s, input.taskId) : prMerged(s, input.taskId, input.attempt, input.mergeSha, input.kind),
  "effect.done": effectDone,
  "effect.failed": effectFailed,
  command,
  "overlay.applied": overlayApplied,
  "cr.closed": crClosed,
  "plan.changed": planChanged,
  "usage.limited": usageLimitedInput,
  "review.submitted": reviewSubmitted,
  "review.dismissed": reviewDismissed,
  "checks.failed": checksFailed,
  "merge.blocked": mergeBlocked,
  "branch.update_requested": branchUpdateRequested,
  "branch.updated": branchUpdated,
};

/** What a run that is no longer running still takes in: the ends of work already under way. */
const AFTER_THE_RUN: readonly InputKind[] = ["effect.done", "effect.failed", "agent.finished", "agent.lost", "pr.merged"];

export function apply(s: Step, input: LeafInput): void {
  if (s.j.status !== "running" && !AFTER_THE_RUN.includes(input.kind)) {
    if (input.kind === "command") s.reject(input.kind, commandReplies.runNotRunning(s.j.status));
    return;
  }
  // The table's handler for `input.kind` takes exactly this input; the compiler cannot correlate the two by itself.
  (handlers[input.kind] as (s: Step, input: LeafInput) => void)(s, input);
}
