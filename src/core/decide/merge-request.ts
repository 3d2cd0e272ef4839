/**
 * Asking for a MERGE_READY task's merge, from the merge gate (merge-gate.ts) and from an approving
 * review (iterations.ts): whether the merge may be requested now.
 */
import { approvalComment } from "../render/run-messages.js";
import { attemptRef, reviewApproved } from "../task-rules.js";
import * as effects from "./effects.js";
import type { Step } from "./step.js";

/**
 * Merge a MERGE_READY task's pull request under `merge_policy: auto` — unless a refinery downstream
 * carries it, or it is a refinery that waits for a person's approval.
 */
export function requestMerge(s: Step, i: number): void {
  const t = s.task(i);
  if (t.status !== "MERGE_READY" || s.idx.mergedByRefinery[i] || s.revision(i).waiting) return;
  if (s.config.merge_policy === "manual") return;
  // merge_policy review: only the head a person with write access approved in a review merges.
  if (s.config.merge_policy === "review" && !reviewApproved(t)) return;
  if (s.idx.isRefinery[i] && s.config.refinery_approval && !t.approved) {
    s.effect(effects.postComment("approval", attemptRef(t), approvalComment(t.id)));
    return;
  }
  s.effect(effects.mergePullRequest(attemptRef(t)));
}
