/**
 * The rules read from the task records (./task-record.ts) and the run's pause, each defined once:
 * the executor, the App's effects and renderers, and the action ask here rather than spelling a
 * rule again.
 */
import type { Journal } from "./journal.js";
import type { TaskStatus } from "./schemas/common.js";
import type { AttemptRecord, Hold, TaskState } from "./task-record.js";

/** Ready: PENDING with every dependency satisfied (whether its backoff is over is `backoffOver`). */
export const isReady = (t: TaskState) => t.status === "PENDING" && t.blockers === 0;

/** A PENDING task's backoff is over at `now` (one that has none is never held back). */
export const backoffOver = (t: TaskState, now: number) => t.next?.notBefore === undefined || Date.parse(t.next.notBefore) <= now;

/** Statuses in which an attempt is in flight: its job at work, or its PR on the way to a merge. */
export const IN_FLIGHT_STATUSES: ReadonlySet<TaskStatus> = new Set(["RUNNING", "DONE", "MERGE_READY"]);

/** The head the current attempt's own work ended at: the runner's record commit, else (before it is known) the pushed work. */
export function ownHead(t: TaskState): string | undefined {
  return t.attempt?.recordSha ?? t.attempt?.revision.pushedSha;
}

/**
 * The head of the current attempt's PR: the runner's record commit — the PR's head, what a person
 * reviews and what the merge names — else, before the record is known, the pushed work; or the
 * merge commit Forge's update of the branch made over it (`branchUpdate`), until a newer record
 * comes. A revision at work leaves the PR at its predecessor's head until its own record arrives.
 */
export function prHead(t: TaskState): string | undefined {
  const own = ownHead(t);
  const u = t.attempt?.branchUpdate;
  return u?.head !== undefined && u.over === own ? u.head : own;
}

/** The head Forge asked GitHub to bring up to date and whose new head it has not seen yet, if that is the PR's head now. */
export function branchUpdatePending(t: TaskState): string | undefined {
  const u = t.attempt?.branchUpdate;
  const head = prHead(t);
  return u?.requested !== undefined && u.over === ownHead(t) && u.requested === head ? head : undefined;
}

/** Task t's current attempt when it is attempt `n` (undefined: another attempt is current, or none is). */
export function attemptNumbered(t: TaskState | undefined, n: number): AttemptRecord | undefined {
  return t?.attempt && t.attempts === n ? t.attempt : undefined;
}

/** The revision the current attempt is at (0: its first run; 0 too when no attempt is current). */
export const iterationOf = (t: TaskState): number => t.attempt?.revision.iteration ?? 0;

/**
 * A MERGE_READY task's merge is held for protected paths: its PR changes some, and no person with
 * write access approved the PR's current head (`/forge approve`).
 */
export function heldForProtectedPaths(t: TaskState): boolean {
  const r = t.attempt?.revision;
  return !!r?.protectedPaths?.length && r.approvedHead !== prHead(t);
}

/**
 * A MERGE_READY upstream a refinery may merge into its branch: a person approved its head, or the
 * App read its PR at this head and found no protected path.
 */
export function clearedForRefinery(t: TaskState): boolean {
  const head = prHead(t);
  const r = t.attempt?.revision;
  if (head === undefined || !r) return false;
  return r.approvedHead === head || (!r.protectedPaths?.length && r.checkedHead === head);
}

/**
 * Whether the attempt has seen review `reviewId` already: answered by a revision (or met by the
 * revision limit) or waiting in its feedback. A seen review starts nothing again — neither when its
 * webhook is redelivered nor when the merge finds it among the PR's reviews.
 */
export function reviewSeen(a: AttemptRecord, reviewId: number): boolean {
  return (a.answered?.includes(reviewId) ?? false) || (a.feedback?.some((f) => f.reviewId === reviewId) ?? false);
}

/** Under `merge_policy: review`, the PR's current head is the one a person with write access approved in a review. */
export function reviewApproved(t: TaskState): boolean {
  const head = t.attempt?.revision.reviewApprovedHead;
  return head !== undefined && head === prHead(t);
}

/** The current attempt as effects and messages name it: the task, the attempt's number, its branch, PR and job. */
export function attemptRef(t: TaskState): {
  id: string;
  attempt: number;
  branch?: string;
  prNumber?: number;
  workflowRunId?: number;
  hold?: Hold;
  lastError?: string;
} {
  const a = t.attempt;
  return {
    id: t.id,
    attempt: t.attempts,
    ...(a ? { branch: a.branch } : {}),
    ...(a?.prNumber !== undefined ? { prNumber: a.prNumber } : {}),
    ...(a?.revision.workflowRunId !== undefined ? { workflowRunId: a.revision.workflowRunId } : {}),
    ...(a?.hold !== undefined ? { hold: a.hold } : {}),
    ...(t.lastError !== undefined ? { lastError: t.lastError } : {}),
  };
}

/** Why a run may be paused; the order is the one the tracker says them in. */
export type PauseReason = "change_requests" | "manual" | "budget" | "usage_limit";

/**
 * Why the run is paused at `now`, most pressing first (none: it is not). A model usage limit pauses
 * only until its time — the next tick lifts it; a budget pause is lifted by the scheduler itself,
 * once the budget covers the next attempt.
 */
export function pauseReasons(pause: Journal["pause"], now: number): PauseReason[] {
  const reasons: PauseReason[] = [];
  if (pause.changeRequests.length) reasons.push("change_requests");
  if (pause.manual) reasons.push("manual");
  if (pause.budget) reasons.push("budget");
  if (pause.usageLimitUntil !== undefined && Date.parse(pause.usageLimitUntil) > now) reasons.push("usage_limit");
  return reasons;
}

/** The run is paused at `now`: nothing new is dispatched. */
export const isPaused = (pause: Journal["pause"], now: number) => pauseReasons(pause, now).length > 0;

/**
 * The scheduler does not run at `now`: paused for any reason but its budget, which only the
 * scheduler can see covered again (a raise, or running attempts that spent less than they reserved).
 */
export const schedulingHeld = (pause: Journal["pause"], now: number) => pauseReasons(pause, now).some((r) => r !== "budget");

/**
 * The attempt a fact about `branch` is about. A branch is named for the attempt that cut it
 * (`ref.attempt`); a resumed attempt continues on an earlier attempt's branch and PR
 * (docs/executor.md#resuming), so a fact about that branch — its pushes, its PR, its jobs — is about
 * the task's current attempt when that attempt works on it. An earlier attempt's own job is told
 * apart by its workflow run (the attempt's `priorRunId`), its record by its trailers.
 */
export function attemptOnBranch<R extends { taskId: string; attempt: number }>(journal: Journal | undefined, ref: R, branch: string): R {
  const t = journal?.tasks.find((x) => x.id === ref.taskId);
  if (!t?.attempt || t.attempts <= ref.attempt || t.attempt.branch !== branch) return ref;
  return { ...ref, attempt: t.attempts };
}
