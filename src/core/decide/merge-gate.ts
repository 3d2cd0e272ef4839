/**
 * The merge gate: a DONE attempt becomes MERGE_READY only once the head read back from GitHub is
 * the one its walkthrough describes; then its pull request is merged (or, under a refinery, waits
 * to be carried by the refinery's merge).
 */
import { protectedPathsComment } from "../render/run-messages.js";
import { attemptRef, prHead } from "../task-rules.js";
import * as effects from "./effects.js";
import { revise } from "./iterations.js";
import { mergedAfterBlock, mergeUnblocked } from "./merge-blocked.js";
import { requestMerge } from "./merge-request.js";
import { agentId } from "./names.js";
import type { InputKind, InputOf, Step } from "./step.js";

export function branchPushed(s: Step, input: InputOf<"branch.pushed">): void {
  const i = s.current(input);
  if (i === undefined) return;
  s.editRevision(i).pushedSha = input.headSha;
  s.emit("branch.pushed", input.taskId, { branch: s.attempt(i).branch, headSha: input.headSha, attempt: input.attempt });
  gate(s, i, input.kind);
}

export function prOpened(s: Step, input: InputOf<"pr.opened">): void {
  const i = s.current(input);
  if (i !== undefined) s.editAttempt(i).prNumber = input.number;
}

/** DONE → MERGE_READY only when the head read back from GitHub equals the walkthrough's head_sha. */
export function gate(s: Step, i: number, kind: InputKind): void {
  const t = s.task(i);
  const r = t.attempt?.revision;
  if (t.status !== "DONE" || !r?.walkthroughSha || r.pushedSha !== r.walkthroughSha) return;
  s.move(i, "MERGE_READY", kind);
  s.emit("task.merge_ready", t.id, { attempt: t.attempts, headSha: r.walkthroughSha });
  const mergeSha = s.attempt(i).mergeSha;
  if (mergeSha) {
    // The PR was merged before the gate was reached (facts arrive out of order).
    return prMerged(s, t.id, t.attempts, mergeSha, kind);
  }
  // Feedback that came while the attempt (or its revision) ran: the next revision takes it, not a merge.
  if (revise(s, i, kind)) return;
  requestMerge(s, i);
  openMissingPull(s, i);
}

/**
 * A MERGE_READY attempt whose pull request Forge has not heard of — its runner could not open it (a
 * job's token may not open pull requests while the repository's Actions setting "Allow GitHub
 * Actions to create and approve pull requests" is off, GitHub's default), or its webhook is late —
 * and which no merge is about to open (a merge opens a missing PR itself): the App opens it (or
 * finds it), so a person can review it, merge it, or approve it, and a refinery can read it.
 */
function openMissingPull(s: Step, i: number): void {
  const a = s.attempt(i);
  if (a.prNumber !== undefined) return;
  const ref = attemptRef(s.task(i));
  if (s.j.outbox.some((e) => e.key === effects.mergePullRequest(ref).key)) return;
  s.effect(effects.openPullRequest({ ...ref, branch: a.branch }));
}

/**
 * The App found protected paths among what the attempt's PR changes (read from GitHub just before
 * merging): the task stays MERGE_READY, its check run and PR say which files, and it merges once a
 * person with write access comments `/forge approve` (`approvedHead`), or merges the PR by hand.
 */
export function mergeHeld(s: Step, taskId: string, attempt: number, paths: string[]): void {
  const i = s.current({ kind: "effect.done", taskId, attempt });
  if (i === undefined || s.task(i).status !== "MERGE_READY") return;
  const t = s.task(i);
  s.editRevision(i).protectedPaths = paths;
  s.emit("task.held", t.id, { attempt: t.attempts, paths });
  s.effect(effects.checkRun(attemptRef(s.task(i)), "MERGE_READY"));
  s.effect(effects.postComment("protected", attemptRef(t), protectedPathsComment(t.id, paths)));
}

/** A person approved a held merge: the head they saw merges. */
export function approveHeld(s: Step, i: number): void {
  s.editRevision(i).approvedHead = prHead(s.task(i));
  requestMerge(s, i);
}

export function prMerged(s: Step, taskId: string, attempt: number, mergeSha: string, kind: InputKind): void {
  const i = s.current({ kind, taskId, attempt });
  if (i === undefined) return;
  const t = s.task(i);
  if (t.status === "MERGED") return;
  if (t.status === "RUNNING" || t.status === "DONE") {
    // Facts arrive out of order: remember it; the gate completes the merge once the attempt's result is in.
    s.editAttempt(i).mergeSha = mergeSha;
    return;
  }
  if (t.status !== "MERGE_READY") return s.reject(kind, `merged while ${t.status}`, taskId);
  mergeUnblocked(s, i, "merged");
  mergedAfterBlock(s, i, mergeSha);
  s.editAttempt(i).mergeSha = mergeSha;
  s.move(i, "MERGED", kind);
  s.emit("task.merged", t.id, { attempt: t.attempts, mergeSha, by: "direct" });
  if (s.config.branch_cleanup === "on_merge") s.effect(effects.cleanupBranches([s.attempt(i).branch], attemptRef(t)));
  if (s.idx.isRefinery[i]) mergeThroughRefinery(s, i, mergeSha, kind);
}

/**
 * A refinery's PR carries its upstream MERGE_READY tasks into the integration branch — and theirs,
 * when an upstream refinery was itself waiting for this one (refinery chains).
 */
function mergeThroughRefinery(s: Step, refinery: number, mergeSha: string, kind: InputKind): void {
  const stack = [refinery];
  while (stack.length > 0) {
    const i = stack.pop()!;
    const merged: string[] = [];
    // The upstreams' containment was checked when the refinery's result came (refineryContains); an
    // upstream that reached MERGE_READY later is carried by the refinery's merge like the others, never
    // left behind: a task held MERGE_READY with nothing to merge it would stall the run.
    for (const d of s.idx.deps[i]!) {
      const dt = s.task(d);
      if (dt.status !== "MERGE_READY" || !s.idx.mergedByRefinery[d]) continue;
      s.editAttempt(d).mergeSha = mergeSha;
      s.move(d, "MERGED", kind);
      s.emit("task.merged", dt.id, { attempt: dt.attempts, mergeSha, by: "refinery" });
      merged.push(dt.id);
      if (s.idx.isRefinery[d]) stack.push(d);
    }
    const t = s.task(i);
    s.emit("refinery.merged", t.id, { agentId: agentId(s.j.runId, t.id, t.attempts), mergedBranches: merged, resultRef: mergeSha });
  }
}
