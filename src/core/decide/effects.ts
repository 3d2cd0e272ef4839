/**
 * One constructor per effect kind. An effect's key says what it is about, so that deciding it
 * again replaces the pending one instead of doing the work twice; every key is spelled here and
 * nowhere else.
 */
import type { Effect, EffectKind } from "../effects.js";
import type { ChangeRequestState, FollowupState, Hold } from "../journal.js";
import { checkRunTitle } from "../render/run-messages.js";
import type { AgentType, TaskStatus } from "../schemas/common.js";

type Of<K extends EffectKind> = Extract<Effect, { kind: K }>;

/** An attempt an effect is about: a task's (`id` is the task id) or a follow-up's. */
interface Attempt {
  id: string;
  attempt: number;
}

/** What a comment on a task's pull request is about; one comment per subject and attempt. */
export type CommentSubject =
  | "question"
  | "approval"
  | "merge-refused"
  | "merge-blocked"
  | "merge-unblocked"
  | "push-blocked"
  | "protected"
  | "revision-limit"
  | "checkpoint-refused";

/** Create the attempt's branch from `from`, merging `merge` into it (a refinery's upstream branches). */
export function prepareBranch(t: Attempt & { branch: string }, from: string, merge: string[]): Of<"PrepareBranch"> {
  return { key: `branch:${t.id}:${t.attempt}`, kind: "PrepareBranch", taskId: t.id, attempt: t.attempt, branch: t.branch, from, merge };
}

/**
 * Run the attempt's agent job; `context` is what the previous attempt left for it. A resumed attempt
 * runs on the branch of the attempt it continues: `afterRunId` (that attempt's last job) lets a replay
 * tell the new job from the earlier ones.
 */
export function dispatchAgent(
  t: Attempt & { branch: string },
  agentType: AgentType,
  context: Of<"DispatchAgent">["context"],
  afterRunId?: number,
): Of<"DispatchAgent"> {
  return {
    key: `dispatch:${t.id}:${t.attempt}`,
    kind: "DispatchAgent",
    taskId: t.id,
    attempt: t.attempt,
    branch: t.branch,
    agentType,
    ...(afterRunId !== undefined ? { afterRunId } : {}),
    ...(context ? { context } : {}),
  };
}

/**
 * Run a revision of the attempt on its branch and PR: its own key, so a (task, attempt, iteration)
 * is dispatched once; `afterRunId` (the previous job) lets a replay tell the revision's run from the earlier ones.
 */
export function dispatchRevision(
  t: Attempt & { branch: string; iteration: number },
  agentType: AgentType,
  context: NonNullable<Of<"DispatchAgent">["context"]>,
  afterRunId: number | undefined,
): Of<"DispatchAgent"> {
  return {
    key: `dispatch:${t.id}:${t.attempt}:${t.iteration}`,
    kind: "DispatchAgent",
    taskId: t.id,
    attempt: t.attempt,
    branch: t.branch,
    agentType,
    iteration: t.iteration,
    ...(afterRunId !== undefined ? { afterRunId } : {}),
    context,
  };
}

/** Show the attempt's status on its check run (one check run per attempt). */
export function checkRun(
  t: Attempt & { hold?: Hold | undefined; lastError?: string | undefined },
  status: TaskStatus,
): Of<"UpsertCheckRun"> {
  return {
    key: `check:${t.id}:${t.attempt}`,
    kind: "UpsertCheckRun",
    taskId: t.id,
    attempt: t.attempt,
    status,
    summary: checkRunTitle(t, status),
  };
}

/** Merge the attempt's pull request (a task's, or a follow-up's). */
export function mergePullRequest(t: Attempt & { branch?: string | undefined; prNumber?: number | undefined }): Of<"MergePullRequest"> {
  return {
    key: `merge:${t.id}:${t.attempt}`,
    kind: "MergePullRequest",
    taskId: t.id,
    attempt: t.attempt,
    branch: t.branch ?? "",
    ...(t.prNumber !== undefined ? { prNumber: t.prNumber } : {}),
  };
}

/** Open a MERGE_READY attempt's pull request, which its runner did not open (found instead if it did meanwhile). */
export function openPullRequest(t: Attempt & { branch: string }): Of<"OpenPullRequest"> {
  return { key: `pr:${t.id}:${t.attempt}`, kind: "OpenPullRequest", taskId: t.id, attempt: t.attempt, branch: t.branch };
}

/**
 * Read what an upstream's pull request changes before `refinery` merges its branch: protected paths
 * hold the refinery's dispatch for a person's approval, as a task's own merge is held.
 */
export function checkUpstream(
  t: Attempt & { branch?: string | undefined; prNumber?: number | undefined },
  refinery: string,
): Of<"CheckUpstream"> {
  return {
    key: `upstream:${t.id}:${t.attempt}`,
    kind: "CheckUpstream",
    taskId: t.id,
    attempt: t.attempt,
    branch: t.branch ?? "",
    ...(t.prNumber !== undefined ? { prNumber: t.prNumber } : {}),
    refinery,
  };
}

/** Open the Change Request's issue. */
export function openChangeRequest(cr: ChangeRequestState): Of<"OpenChangeRequest"> {
  return {
    key: `cr:${cr.id}`,
    kind: "OpenChangeRequest",
    crId: cr.id,
    emittedBy: cr.emittedBy,
    attempt: cr.attempt,
    ...(cr.path ? { path: cr.path } : {}),
  };
}

/** Run the Captain agent that amends the plan for a Change Request. */
export function dispatchCaptain(crId: string): Of<"DispatchCaptain"> {
  return { key: `captain:${crId}`, kind: "DispatchCaptain", crId };
}

/** Comment on the attempt's pull request; `updates`: replace the comment of that subject (if it was posted) rather than post one. */
export function postComment(subject: CommentSubject, t: Attempt, body: string, updates?: CommentSubject): Of<"PostComment"> {
  return {
    key: `${subject}:${t.id}:${t.attempt}`,
    kind: "PostComment",
    target: { on: "task", taskId: t.id, attempt: t.attempt },
    body,
    ...(updates ? { updates: `${updates}:${t.id}:${t.attempt}` } : {}),
  };
}

/**
 * Redraw the run tracker issue as of event `seq`. The seq makes a redraw decided while an older one
 * is at GitHub a different effect: the older one's acknowledgement does not take it out of the outbox.
 */
export function updateTracker(seq: number): Of<"UpdateTracker"> {
  return { key: "tracker", kind: "UpdateTracker", seq };
}

/** Run a follow-up agent. */
export function spawnFollowup(f: FollowupState): Of<"SpawnFollowup"> {
  return { key: `followup:${f.id}`, kind: "SpawnFollowup", followupId: f.id, sourceTaskId: f.sourceTaskId, text: f.text, branch: f.branch };
}

/** Open the run's final pull request (integration branch into the base branch). */
export function openFinalPullRequest(): Of<"OpenFinalPullRequest"> {
  return { key: "final-pr", kind: "OpenFinalPullRequest" };
}

/** Delete branches: one attempt's once it merged, or (without `of`) the whole run's once it completed. */
export function cleanupBranches(branches: string[], of?: Attempt): Of<"CleanupBranches"> {
  return { key: of ? `cleanup:${of.id}:${of.attempt}` : "cleanup:run", kind: "CleanupBranches", branches };
}

/** Cancel the attempt's job. */
export function cancelAgent(t: Attempt & { workflowRunId?: number | undefined }): Of<"CancelAgent"> {
  return {
    key: `cancel:${t.id}:${t.attempt}`,
    kind: "CancelAgent",
    taskId: t.id,
    attempt: t.attempt,
    ...(t.workflowRunId !== undefined ? { workflowRunId: t.workflowRunId } : {}),
  };
}
