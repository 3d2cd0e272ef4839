/**
 * Effect acknowledgements: an effect carried out (with what it learned) or failed for good leaves
 * the outbox. An acknowledgement for an effect no longer there was handled already.
 */
import { mergeRefusedComment } from "../render/run-messages.js";
import { squashUpstreamSchema } from "../task-record.js";
import { prHead } from "../task-rules.js";
import * as effects from "./effects.js";
import { followupFinished, followupMerged, isFollowup } from "./follow-ups.js";
import { mergeHeld, prMerged } from "./merge-gate.js";
import { fail } from "./retries.js";
import type { InputOf, Step } from "./step.js";

export function effectDone(s: Step, { key, result }: InputOf<"effect.done">): void {
  const effect = s.j.outbox.find((e) => e.key === key);
  if (!effect) return; // acknowledged already
  s.j.outbox = s.j.outbox.filter((e) => e.key !== key);
  switch (effect.kind) {
    case "DispatchAgent": {
      // Only while the attempt (and its revision) is current: a job of another is not this one's.
      const i = s.find(effect.taskId);
      const t = i === undefined ? undefined : s.task(i);
      if (i === undefined || !t?.attempt || t.attempts !== effect.attempt || typeof result.workflowRunId !== "number") return;
      if ((effect.iteration ?? 0) === t.attempt.revision.iteration) s.editRevision(i).workflowRunId = result.workflowRunId;
      return;
    }
    case "PrepareBranch": {
      // The upstream branches left to a refinery's agent: kept with the attempt, so a dispatch that
      // is tried again (after a failure, or by another process) still names them.
      // So are those its job squashes onto a branch that must keep a linear history.
      const conflicts = Array.isArray(result.conflicts) ? result.conflicts.filter((c): c is string => typeof c === "string") : [];
      const squash = Array.isArray(result.squash) ? result.squash.flatMap((u) => squashUpstreamSchema.safeParse(u).data ?? []) : [];
      const i = s.find(effect.taskId);
      if ((conflicts.length === 0 && squash.length === 0) || i === undefined) return;
      const t = s.task(i);
      if (!t.attempt || t.attempts !== effect.attempt || t.status !== "RUNNING") return;
      if (conflicts.length) s.editAttempt(i).conflicts = conflicts;
      if (squash.length) s.editAttempt(i).squash = squash;
      return;
    }
    case "CheckUpstream":
      if (Array.isArray(result.held)) {
        const paths = result.held.filter((p): p is string => typeof p === "string");
        return mergeHeld(s, effect.taskId, effect.attempt, paths);
      }
      if (result.clean === true) {
        const i = s.current({ kind: "effect.done", taskId: effect.taskId, attempt: effect.attempt });
        const t = i === undefined ? undefined : s.task(i);
        if (i !== undefined && t?.status === "MERGE_READY") s.editRevision(i).checkedHead = prHead(t);
      }
      return;
    case "OpenPullRequest":
      // The PR the App opened (or found): its opened webhook is the App's own, not taken in.
      if (typeof result.prNumber === "number") {
        const i = s.current({ kind: "effect.done", taskId: effect.taskId, attempt: effect.attempt });
        if (i !== undefined && s.attempt(i).prNumber === undefined) s.editAttempt(i).prNumber = result.prNumber;
      }
      return;
    case "OpenChangeRequest":
      if (typeof result.issueNumber === "number") {
        const n = result.issueNumber;
        s.j.changeRequests = s.j.changeRequests.map((c) => (c.id === effect.crId ? { ...c, issueNumber: n } : c));
      }
      return;
    case "MergePullRequest":
      if (Array.isArray(result.held)) {
        const paths = result.held.filter((p): p is string => typeof p === "string");
        return mergeHeld(s, effect.taskId, effect.attempt, paths);
      }
      if (typeof result.mergeSha === "string") {
        if (isFollowup(s, effect.taskId)) return followupMerged(s, effect.taskId);
        return prMerged(s, effect.taskId, effect.attempt, result.mergeSha, "effect.done");
      }
      return;
    default:
      return;
  }
}

export function effectFailed(s: Step, { key, error }: InputOf<"effect.failed">): void {
  const effect = s.j.outbox.find((e) => e.key === key);
  if (!effect) return;
  s.j.outbox = s.j.outbox.filter((e) => e.key !== key);
  s.reject("effect.failed", `${effect.kind} failed: ${error}`, "taskId" in effect ? effect.taskId : undefined);
  if (effect.kind === "PrepareBranch" || effect.kind === "DispatchAgent") {
    const i = s.find(effect.taskId);
    if (i === undefined) return;
    const t = s.task(i);
    if (t.attempts !== effect.attempt || t.status !== "RUNNING") return;
    // Without its branch or its job the attempt cannot run: drop the sibling effect and fail it.
    s.j.outbox = s.j.outbox.filter((e) => !(e.kind === "DispatchAgent" && e.taskId === t.id && e.attempt === t.attempts));
    fail(s, i, "effect.failed", {
      error: `${effect.kind === "PrepareBranch" ? "preparing the branch" : "dispatching the agent"} failed: ${error}`,
      retryable: true,
      counted: true,
    });
  } else if (effect.kind === "CheckUpstream") {
    // What it changes could not be read: held for a person, never merged unread.
    mergeHeld(s, effect.taskId, effect.attempt, [`(what this pull request changes could not be read: ${error.slice(0, 200)})`]);
  } else if (effect.kind === "SpawnFollowup") {
    followupFinished(s, effect.followupId, false);
  } else if (effect.kind === "MergePullRequest") {
    // The task stays MERGE_READY (its only way on is MERGED), so a merge refused for good is never
    // dropped in silence: the reason goes on the task and on its pull request for a person to act.
    const i = s.find(effect.taskId);
    if (i === undefined || s.task(i).attempts !== effect.attempt || s.task(i).status !== "MERGE_READY") return;
    const t = s.edit(i);
    t.lastError = `merge refused: ${error}`;
    delete t.lastErrorLog;
    const attempt = { id: effect.taskId, attempt: effect.attempt };
    s.effect(effects.postComment("merge-refused", attempt, mergeRefusedComment(effect.taskId, effect.attempt, error)));
  }
}
