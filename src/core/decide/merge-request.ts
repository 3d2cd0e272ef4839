/**
 * Asking for a MERGE_READY task's merge, from the merge gate (merge-gate.ts) and from an approving
 * review (iterations.ts): which head a person reviews, and whether the merge may be requested now.
 */
import type { TaskState } from "../journal.js";
import { approvalComment } from "../render/run-messages.js";
import * as effects from "./effects.js";
import type { Step } from "./step.js";

/** The head a person reviews: the runner's record commit (the PR's head), else the pushed work. */
export const prHead = (t: TaskState): string | undefined => t.recordSha ?? t.pushedSha;

/**
 * Merge a MERGE_READY task's pull request under `merge_policy: auto` — unless a refinery downstream
 * carries it, or it is a refinery that waits for a person's approval.
 */
export function requestMerge(s: Step, i: number): void {
  const t = s.task(i);
  if (t.status !== "MERGE_READY" || s.idx.mergedByRefinery[i] || t.waiting) return;
  if (s.config.merge_policy === "manual") return;
  // merge_policy review: only the head a person with write access approved in a review merges.
  if (s.config.merge_policy === "review" && (!t.reviewApprovedHead || t.reviewApprovedHead !== prHead(t))) return;
  if (s.idx.isRefinery[i] && s.config.refinery_approval && !t.approved) {
    s.effect(effects.postComment("approval", t, approvalComment(t.id)));
    return;
  }
  s.effect(effects.mergePullRequest(t));
}
