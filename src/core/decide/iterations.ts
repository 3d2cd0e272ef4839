/**
 * The PR feedback loop (docs/executor.md#iterations): reviews of a task's PR, `/forge fix` and red
 * CI start revisions of the same attempt on the same branch and PR. A revision is
 * MERGE_READY → RUNNING with a new revision record (its `iteration` one higher); its result passes
 * the same gate as the attempt's first run, so nothing merges unverified. Feedback that arrives
 * while a revision runs waits in the attempt's `feedback` and the next revision takes all of it at once.
 */
import { bounded, FEEDBACK_LIMITS, type Feedback } from "../feedback.js";
import { newRevision, type AttemptRecord } from "../journal.js";
import { commandReplies as replies, revisionLimitComment } from "../render/run-messages.js";
import { inlineData } from "../render/as-data.js";
import { attemptRef, iterationOf, prHead, reviewSeen } from "../task-rules.js";
import * as effects from "./effects.js";
import { requestMerge } from "./merge-request.js";
import type { InputKind, InputOf, Step } from "./step.js";

/** Statuses in which a task's PR is open for feedback: being revised, verified, or waiting to merge. */
const OPEN_FOR_FEEDBACK = new Set(["RUNNING", "DONE", "MERGE_READY"]);

export function reviewSubmitted(s: Step, input: InputOf<"review.submitted">): void {
  const i = s.current(input);
  if (i === undefined) return;
  const t = s.task(i);
  if (!OPEN_FOR_FEEDBACK.has(t.status)) return s.reject(input.kind, `${t.id} is ${t.status}: its PR takes no review`, t.id);
  // A review answered by a revision already (a redelivered webhook) starts nothing again.
  const a = s.attempt(i);
  if (reviewSeen(a, input.reviewId)) return;
  s.emit("review.submitted", t.id, {
    attempt: t.attempts,
    reviewId: input.reviewId,
    actor: input.actor,
    state: input.state,
    headSha: input.headSha,
  });
  if (input.state === "approved") return approved(s, i, input);
  addFeedback(s, i, {
    source: "review",
    actor: input.actor,
    reviewId: input.reviewId,
    headSha: input.headSha,
    ...(input.body ? { message: bounded(input.body, FEEDBACK_LIMITS.message) } : {}),
  });
}

/** An approving review counts for the head it was given on, and only while that is the PR's head. */
function approved(s: Step, i: number, input: InputOf<"review.submitted">): void {
  const t = s.task(i);
  if (t.status === "RUNNING" || input.headSha !== prHead(t))
    return s.reject(input.kind, `the review approved ${input.headSha.slice(0, 7)}, not the PR's current head`, t.id);
  const r = s.editRevision(i);
  r.reviewApprovedHead = input.headSha;
  if (r.waiting) r.waiting = undefined;
  requestMerge(s, i);
}

/**
 * A review of the task's PR was dismissed. When no writer's approval of the approved head stands any
 * more (as the App re-read it from GitHub), the approval no longer counts: under `merge_policy:
 * review` a merge it requested and not yet done leaves the outbox; the task waits for a new approval.
 */
export function reviewDismissed(s: Step, input: InputOf<"review.dismissed">): void {
  const i = s.current(input);
  if (i === undefined) return;
  const t = s.task(i);
  if (t.status !== "MERGE_READY") return s.reject(input.kind, `${t.id} is ${t.status}: a dismissed review changes nothing`, t.id);
  const head = s.revision(i).reviewApprovedHead;
  if (!head || (input.approved && input.headSha === head)) return;
  s.editRevision(i).reviewApprovedHead = undefined;
  s.emit("review.dismissed", t.id, { attempt: t.attempts, reviewId: input.reviewId, headSha: head });
  if (s.config.merge_policy === "review") s.dropEffect(effects.mergePullRequest(attemptRef(t)).key);
}

/** `/forge fix [message]` on the task's PR, by a person with write access. */
export function fixCommand(s: Step, c: InputOf<"command">): void {
  if (!c.taskId) return s.reject(c.kind, replies.fixWhere);
  const i = s.find(c.taskId);
  if (i === undefined) return s.reject(c.kind, replies.unknownTask(c.taskId), c.taskId);
  const t = s.task(i);
  if (!OPEN_FOR_FEEDBACK.has(t.status)) return s.reject(c.kind, replies.notRevisable(c.taskId, t.status), c.taskId);
  const head = prHead(t);
  addFeedback(s, i, {
    source: "command",
    actor: c.actor,
    ...(c.message ? { message: bounded(c.message, FEEDBACK_LIMITS.message) } : {}),
    ...(head ? { headSha: head } : {}),
  });
}

/** Failing required checks of the PR's current head (the repository's own CI, not Forge's). */
export function checksFailed(s: Step, input: InputOf<"checks.failed">): void {
  const i = s.current(input);
  if (i === undefined) return;
  const t = s.task(i);
  // Only the head that passed the gate: checks of an older head, or of a revision's pushes, say nothing of it.
  if (t.status !== "MERGE_READY" || input.headSha !== prHead(t)) return;
  const a = s.attempt(i);
  if (a.feedback?.some((f) => f.source === "ci" && f.headSha === input.headSha) || a.answeredHeads?.includes(input.headSha)) return;
  addFeedback(s, i, {
    source: "ci",
    headSha: input.headSha,
    // A check's name is the reporter's text: bounded like the rest of it.
    checks: input.checks.slice(0, FEEDBACK_LIMITS.checks).map((name) => name.slice(0, FEEDBACK_LIMITS.checkName)),
    ...(input.details ? { details: bounded(input.details, FEEDBACK_LIMITS.details) } : {}),
  });
}

/**
 * `/forge steer <message>` on a running task's PR: kept in the journal for its job, which polls it
 * every heartbeat and hands it to the agent (docs/runner.md#steering). Nothing is dispatched.
 */
export function steerCommand(s: Step, c: InputOf<"command">): void {
  if (!c.taskId) return s.reject(c.kind, replies.steerWhere);
  const i = s.find(c.taskId);
  if (i === undefined) return s.reject(c.kind, replies.unknownTask(c.taskId), c.taskId);
  const t = s.task(i);
  if (t.status !== "RUNNING") return s.reject(c.kind, replies.notRunning(c.taskId, t.status), c.taskId);
  if (!c.message) return s.reject(c.kind, replies.steerWhat, c.taskId);
  const steering = s.attempt(i).steering ?? [];
  const id = (steering.at(-1)?.id ?? 0) + 1;
  const message = bounded(c.message, FEEDBACK_LIMITS.steer);
  s.editAttempt(i).steering = [...steering, { id, actor: c.actor, message, at: s.iso(s.now) }].slice(-FEEDBACK_LIMITS.items);
  s.emit("task.steered", t.id, { attempt: t.attempts, id, actor: c.actor });
}

function addFeedback(s: Step, i: number, f: Feedback): void {
  const t = s.task(i);
  const queued = t.status !== "MERGE_READY";
  s.editAttempt(i).feedback = [...(s.attempt(i).feedback ?? []), f].slice(-FEEDBACK_LIMITS.items);
  s.emit("task.feedback", t.id, { attempt: t.attempts, source: f.source, ...(f.actor ? { actor: f.actor } : {}), queued });
  if (!queued) revise(s, i, "review.submitted");
}

/**
 * Start the next revision of a MERGE_READY task when feedback waits for one, within the bounds;
 * true when the task is revising or waits for a person (so its merge is not requested now).
 */
export function revise(s: Step, i: number, kind: InputKind): boolean {
  const t = s.task(i);
  if (t.status !== "MERGE_READY") return false;
  const a = s.attempt(i);
  const feedback = a.feedback ?? [];
  if (feedback.length === 0) return false;
  const ciOnly = feedback.every((f) => f.source === "ci");
  const used = ciOnly ? (a.ciFixes ?? 0) : (a.reviewIterations ?? 0);
  const limit = ciOnly ? s.config.ci_fix.max_attempts : s.config.review.max_iterations;
  const blocked = refineryUnderWay(s, i);
  if (used >= limit || blocked) {
    const reason = blocked
      ? `its refinery ${blocked} already carries this branch`
      : ciOnly
        ? `required checks still fail after ${used} fix revision${used === 1 ? "" : "s"} (ci_fix.max_attempts: ${limit}): ${feedback
            .flatMap((f) => f.checks ?? [])
            .map((name) => inlineData(name))
            .join(", ")}`
        : `${used} revision${used === 1 ? "" : "s"} made (review.max_iterations: ${limit})`;
    // The reviews it brings are seen all the same: a merge a person asks for later does not wait for them.
    const e = s.editAttempt(i);
    e.feedback = [];
    Object.assign(e, answering(a, feedback));
    s.editRevision(i).waiting = reason;
    // A person decides now: a merge requested before the feedback came does not run behind it.
    const ref = attemptRef(t);
    s.dropEffect(effects.mergePullRequest(ref).key);
    s.emit("task.revision_limit", t.id, { attempt: t.attempts, kind: ciOnly ? "ci" : "review", limit, reason });
    s.effect(effects.postComment("revision-limit", ref, revisionLimitComment(t.id, reason)));
    return true;
  }
  startRevision(s, i, kind, feedback, ciOnly);
  return true;
}

/** The reviews a revision answers (or the revision limit meets), kept so that neither their webhook nor a merge's look at the PR brings them again. */
function answering(a: AttemptRecord, feedback: Feedback[]): Pick<AttemptRecord, "answered"> | Record<string, never> {
  const reviewIds = feedback.flatMap((f) => (f.reviewId !== undefined ? [f.reviewId] : []));
  return reviewIds.length ? { answered: [...(a.answered ?? []), ...reviewIds].slice(-50) } : {};
}

/**
 * MERGE_READY → RUNNING on the same branch and PR, with every waiting feedback at once. The revision
 * is a new record: nothing of the previous head's verdicts (the gate, protected paths, approvals)
 * carries over — the revision's head passes the gate afresh.
 */
function startRevision(s: Step, i: number, kind: InputKind, feedback: Feedback[], ciOnly: boolean): void {
  const t = s.task(i);
  const a = s.attempt(i);
  const iteration = iterationOf(t) + 1;
  const priorRunId = a.revision.workflowRunId;
  const heads = feedback.flatMap((f) => (f.source === "ci" && f.headSha ? [f.headSha] : []));
  const e = s.editAttempt(i);
  Object.assign(e, {
    feedback: [],
    revision: newRevision(iteration, s.iso(s.now), priorRunId),
    ...(ciOnly ? { ciFixes: (a.ciFixes ?? 0) + 1 } : { reviewIterations: (a.reviewIterations ?? 0) + 1 }),
    ...answering(a, feedback),
    ...(heads.length ? { answeredHeads: [...(a.answeredHeads ?? []), ...heads].slice(-20) } : {}),
  });
  // The verified head's merge must not run under the revision: its effect leaves the outbox.
  const ref = attemptRef(t);
  s.dropEffect(effects.mergePullRequest(ref).key);
  if (!s.move(i, "RUNNING", kind)) return;
  s.emit("task.revising", t.id, { attempt: t.attempts, iteration, sources: [...new Set(feedback.map((f) => f.source))] });
  s.effect(
    effects.dispatchRevision(
      { id: t.id, attempt: t.attempts, branch: a.branch, iteration },
      s.node(i).agentType,
      {
        feedback,
        ...(a.prNumber !== undefined ? { prNumber: a.prNumber } : {}),
        // A revision runs on its attempt's agent.
        ...(a.agent !== undefined && a.agent !== s.config.agent.adapter ? { agent: { adapter: a.agent } } : {}),
      },
      priorRunId,
    ),
  );
}

/** A refinery downstream that has started carries this task's branch as it was: the task may not move under it. */
function refineryUnderWay(s: Step, i: number): string | undefined {
  for (const d of s.idx.dependents[i]!) {
    if (s.idx.isRefinery[d] && s.task(d).status !== "PENDING") return s.task(d).id;
  }
  return undefined;
}
