/**
 * A merge GitHub refuses for a reason Forge cannot resolve by itself — required approvals, a
 * required check it does not run, a branch that must be up to date, a rule it cannot satisfy
 * (docs/executor.md#merging-under-the-repositorys-rules). The task stays MERGE_READY with its merge
 * in the outbox (tried again on every outside fact: a review, a check, a reconcile pass), and says
 * why on its PR (one comment, updated in place) and on the tracker (`waiting`). `/forge retry`, an
 * approval of its head, or the merge going through clears it; once the PR merges — a check GitHub
 * expected reported late, a person's approval — the comment says so, rather than that Forge still
 * cannot merge it.
 */
import type { TaskState } from "../journal.js";
import { mergeBlockedComment, mergeUnblockedComment } from "../render/run-messages.js";
import { attemptRef } from "../task-rules.js";
import * as effects from "./effects.js";
import { requestMerge } from "./merge-request.js";
import type { InputOf, Step } from "./step.js";

/** How a `waiting` reason set by a refused merge begins (a revision limit's does not). */
export const MERGE_BLOCKED = "GitHub refuses the merge: ";

export const isMergeBlocked = (t: TaskState): boolean => t.attempt?.revision.waiting?.startsWith(MERGE_BLOCKED) ?? false;

export function mergeBlocked(s: Step, input: InputOf<"merge.blocked">): void {
  const i = s.current(input);
  if (i === undefined) return;
  const t = s.task(i);
  if (t.status !== "MERGE_READY") return s.reject(input.kind, `${t.id} is ${t.status}: no merge of it waits`, t.id);
  // A revision limit's wait stays: the person it waits for sees that reason first.
  const now = s.revision(i).waiting;
  if (now && !isMergeBlocked(t)) return;
  const waiting = `${MERGE_BLOCKED}${input.reason}`;
  if (now === waiting) return; // said already
  s.editRevision(i).waiting = waiting;
  s.editAttempt(i).mergeBlockedSaid = true;
  s.emit("task.merge_blocked", t.id, { attempt: t.attempts, reason: input.reason });
  s.effect(effects.postComment("merge-blocked", attemptRef(t), mergeBlockedComment(t.id, input.reason)));
}

/**
 * The PR merged after Forge said on it why GitHub refused the merge: that comment, updated in place
 * (none if it was never posted), says it merged. A key of its own: an acknowledgement of the
 * refusal's comment, still on its way, cannot take this one out of the outbox — and that comment,
 * if it has not started, is not posted at all.
 */
export function mergedAfterBlock(s: Step, i: number, mergeSha: string): void {
  if (!s.attempt(i).mergeBlockedSaid) return;
  const t = s.task(i);
  const ref = attemptRef(t);
  s.dropEffect(effects.postComment("merge-blocked", ref, "").key);
  s.effect(effects.postComment("merge-unblocked", ref, mergeUnblockedComment(t.id, mergeSha), "merge-blocked"));
}

/** The refused merge may go on: its reason is cleared (the merge in the outbox runs on this input). */
export function mergeUnblocked(s: Step, i: number, by: "retry" | "approval" | "merged"): void {
  const t = s.task(i);
  if (!isMergeBlocked(t)) return;
  s.editRevision(i).waiting = undefined;
  s.emit("task.merge_unblocked", t.id, { attempt: t.attempts, by });
}

/** `/forge retry` of a task whose merge GitHub refused: the merge is tried again at once (as its policy allows). */
export function retryBlockedMerge(s: Step, i: number): void {
  mergeUnblocked(s, i, "retry");
  requestMerge(s, i);
}
