/**
 * What an attempt's job reports: that it is alive, that it ended without a result, or its result —
 * an exit code with the facts the runner read back, turned into DONE, FAILED, STALE or a Change
 * Request.
 */
import type { WalkthroughFacts } from "../inputs.js";
import { DEFAULT_QUESTION, pushBlockedComment, questionComment } from "../render/run-messages.js";
import { EXIT_CODES } from "../exit-codes.js";
import { attemptRef, iterationOf } from "../task-rules.js";
import { escalate } from "./change-requests.js";
import * as effects from "./effects.js";
import { gate } from "./merge-gate.js";
import { agentId } from "./names.js";
import { fail, stale } from "./retries.js";
import type { ResumeEvidence } from "./resume.js";
import type { ResumeClass } from "../schemas/retry-policy.js";
import { review } from "./review.js";
import type { InputKind, InputOf, Step } from "./step.js";
import { usageLimited } from "./tick.js";
import { currentAgent, fallBack, nextAgent } from "./agents.js";

/**
 * The task index when a job's fact is about the attempt's current revision: a result naming another
 * iteration, or a job at or before the previous revision's workflow run, is an earlier job's.
 */
function currentRevision(
  s: Step,
  input: InputOf<"agent.started" | "agent.heartbeat" | "agent.finished" | "agent.lost">,
): number | undefined {
  const i = s.current(input);
  if (i === undefined) return undefined;
  const t = s.task(i);
  const iteration = iterationOf(t);
  if ("iteration" in input && input.iteration !== undefined && input.iteration !== iteration) {
    s.reject(input.kind, `iteration ${input.iteration} is not the current revision (${iteration})`, t.id);
    return undefined;
  }
  const runId = "workflowRunId" in input ? input.workflowRunId : undefined;
  const prior = s.revision(i).priorRunId;
  if (runId !== undefined && prior !== undefined && runId <= prior) {
    s.reject(input.kind, `workflow run ${runId} is an earlier revision's job`, t.id);
    return undefined;
  }
  return i;
}

/** A sign of life of the attempt; `agent.started` also records when its job started, and which workflow run it is. */
export function agentAlive(s: Step, input: InputOf<"agent.started" | "agent.heartbeat">): void {
  const i = currentRevision(s, input);
  if (i === undefined) return;
  const t = s.task(i);
  if (t.status !== "RUNNING") return;
  // An attempt's job, once known, is never re-pointed: another run's start is no sign of this one's life.
  const known = s.revision(i).workflowRunId;
  if (input.kind === "agent.started" && input.workflowRunId !== undefined && known !== undefined && input.workflowRunId !== known)
    return s.reject(input.kind, `workflow run ${input.workflowRunId} is not the job of ${t.id} (run ${known})`, t.id);
  const e = s.editRevision(i);
  const at = s.iso(s.now);
  if (input.kind === "agent.started") {
    if (!e.startedAt) e.startedAt = at;
    if (input.workflowRunId !== undefined) e.workflowRunId = input.workflowRunId;
  }
  if (!e.lastHeartbeat || Date.parse(e.lastHeartbeat) < s.now) e.lastHeartbeat = at;
  // The agent's progress as its job reported it: kept when it is news (a newer beat, another stage).
  const p = input.kind === "agent.heartbeat" ? input.progress : undefined;
  if (!p || (e.progress && Date.parse(p.beat) < Date.parse(e.progress.beat)) || JSON.stringify(p) === JSON.stringify(e.progress)) return;
  const before = e.progress;
  e.progress = { ...p };
  // A stage reached is an event of the run log; a newer beat within the stage only redraws the tracker.
  if (p.stage && p.stage !== before?.stage) s.emit("task.progress", t.id, { attempt: t.attempts, message: `stage ${p.stage} reached` });
  else s.touchTracker();
}

export function agentLost(s: Step, input: InputOf<"agent.lost">): void {
  const i = currentRevision(s, input);
  if (i === undefined || s.task(i).status !== "RUNNING") return;
  // A runner that went away mid-step is a loss of liveness (STALE); a job that ran to its end without a result failed.
  const logUrl = input.logUrl ? { logUrl: input.logUrl } : {};
  // What the job's last progress push left (its checkpoint commit at the branch head), checked before a retry resumes from it.
  const ev: ResumeEvidence = {
    cls: "lost",
    checkpoint: input.checkpoint,
    checkpointProblem: input.checkpointProblem,
    recordSha: input.checkpointSha,
    pushedSha: input.pushedSha,
  };
  if (input.runnerLost) return stale(s, i, input.kind, input.reason, input.logUrl, ev);
  // A rule of the repository refused the job's push: another attempt would meet it again. The task
  // waits for a person, saying why on its PR (or the tracker) and the tracker; `/forge retry` tries again.
  if (input.blockedBy) {
    fail(s, i, input.kind, { error: input.blockedBy, retryable: false, hold: "blocked", ...logUrl });
    const t = s.task(i);
    s.effect(effects.postComment("push-blocked", attemptRef(t), pushBlockedComment(t.id, input.blockedBy)));
    return;
  }
  return fail(s, i, input.kind, { error: input.reason, retryable: true, counted: true, ...logUrl, resume: ev });
}

export function agentFinished(s: Step, input: InputOf<"agent.finished">): void {
  const i = currentRevision(s, input);
  if (i === undefined) return;
  const t = s.task(i);
  if (t.status !== "RUNNING") {
    // A repeated result, or one that arrived after the attempt was declared STALE: nothing to do.
    if (t.status === "DONE" || t.status === "MERGE_READY" || t.status === "MERGED") return;
    s.reject(input.kind, `the attempt is ${t.status}, not RUNNING`, t.id);
    return;
  }
  if (input.pushedSha) s.editRevision(i).pushedSha = input.pushedSha;
  if (input.recordSha) s.editAttempt(i).recordSha = input.recordSha;
  addSpend(s, i, input.spend);
  // What the attempt left for a resumed retry (docs/executor.md#resuming), by how it ended.
  const ev = (cls: ResumeClass): ResumeEvidence => ({
    cls,
    checkpoint: input.checkpoint,
    checkpointProblem: input.checkpointProblem,
    recordSha: input.recordSha,
    pushedSha: input.pushedSha,
  });
  if (input.budgetExceeded) {
    // Stopped at its cap, its work pushed: not retried until a person raises the budget.
    const b = input.budgetExceeded;
    const spent = b.spentUsd !== undefined ? `$${b.spentUsd.toFixed(2)}` : `${b.spentTokens ?? 0} tokens`;
    const limit = b.limitUsd !== undefined ? `$${b.limitUsd.toFixed(2)}` : `${b.limitTokens ?? 0} tokens`;
    return fail(s, i, input.kind, {
      error: `stopped at its budget: ${spent} of ${limit}; /forge budget ${s.task(i).id} +<amount> to go on`,
      retryable: false,
      hold: "budget",
      exitCode: input.exitCode,
      resume: ev("budget"),
    });
  }

  if (input.rateLimitedUntil) {
    const until = Date.parse(input.rateLimitedUntil);
    if (!Number.isNaN(until) && until > s.now) {
      // Its provider stopped it: the next agent of the task's list takes the next attempt at once,
      // and only when the list is exhausted does the run pause (docs/executor.md#agent-fallback).
      const from = currentAgent(s, i);
      if (fallBack(s, i, `${from} stopped by its usage limit until ${s.iso(until)}`))
        return fail(s, i, input.kind, {
          error: `${from}: model usage limit until ${s.iso(until)}; the next attempt goes to ${nextAgent(s, i)}`,
          retryable: true,
          counted: false,
          notBefore: s.now,
          resume: ev("usage_limit"),
        });
      usageLimited(s, until);
      return fail(s, i, input.kind, {
        error: `model usage limit until ${s.iso(until)}`,
        retryable: true,
        counted: false,
        notBefore: until,
        resume: ev("usage_limit"),
      });
    }
  }

  switch (input.exitCode) {
    case EXIT_CODES.SUCCESS:
    case EXIT_CODES.PARTIAL_SUCCESS:
      if (s.idx.isRefinery[i] && !refineryContains(s, i, input.uncontainedUpstreams, input.kind)) return;
      return completed(s, i, input.walkthrough, input.exitCode === EXIT_CODES.PARTIAL_SUCCESS, input.kind, ev("failure"));
    case EXIT_CODES.FAILURE:
      return fail(s, i, input.kind, {
        error: input.error ?? "the agent failed",
        retryable: true,
        counted: true,
        exitCode: EXIT_CODES.FAILURE,
        resume: ev("failure"),
      });
    case EXIT_CODES.DEPTH_EXCEEDED:
      return fail(s, i, input.kind, {
        error: input.error ?? "spawn depth exhausted",
        retryable: false,
        hold: "fatal",
        exitCode: EXIT_CODES.DEPTH_EXCEEDED,
      });
    case EXIT_CODES.HUMAN_INPUT:
      return askPerson(s, i, input.question ?? input.error ?? DEFAULT_QUESTION, input.kind);
    case EXIT_CODES.NEEDS_REFINEMENT:
      fail(s, i, input.kind, {
        error: input.error ?? "the quality gate failed",
        retryable: true,
        counted: true,
        exitCode: EXIT_CODES.NEEDS_REFINEMENT,
        refinement: input.refinement ?? input.error ?? "",
        resume: ev("refinement"),
      });
      return;
    case EXIT_CODES.NEEDS_ESCALATION:
      return escalate(s, i, input);
    case EXIT_CODES.INTERRUPTED:
      return fail(s, i, input.kind, {
        error: input.error ?? "cancelled",
        retryable: false,
        hold: "cancelled",
        exitCode: EXIT_CODES.INTERRUPTED,
      });
    case EXIT_CODES.TIMEOUT:
      return stale(s, i, input.kind, input.error ?? "the agent timed out", undefined, ev("stale"));
    default:
      return fail(s, i, input.kind, {
        error: input.error ?? `unknown exit code ${input.exitCode}`,
        retryable: true,
        counted: true,
        exitCode: input.exitCode,
        resume: ev("failure"),
      });
  }
}

/** The agent asked for a person's input: the task is held until someone answers with `/forge retry`. */
function askPerson(s: Step, i: number, question: string, kind: InputKind): void {
  const t = s.task(i);
  fail(s, i, kind, { error: "waiting for a person", retryable: false, hold: "human", exitCode: EXIT_CODES.HUMAN_INPUT });
  s.editAttempt(i).question = question;
  s.emit("task.waiting", t.id, { attempt: t.attempts, question });
  s.effect(effects.postComment("question", attemptRef(t), questionComment(t.id, question)));
}

/**
 * A refinery's result is only as good as what its head holds: an upstream whose head the record
 * commit does not contain (the App compared them) would be marked MERGED by the refinery's merge
 * and its work lost. Such an attempt fails and is retried; otherwise the checked upstreams are
 * remembered as the ones its merge carries.
 */
function refineryContains(s: Step, i: number, uncontained: readonly string[] | undefined, kind: InputKind): boolean {
  if (uncontained === undefined) return true; // not checked: the merge marks every MERGE_READY upstream
  const t = s.task(i);
  const missing = s.idx.deps[i]!.filter((d) => uncontained.includes(s.task(d).id));
  if (missing.length > 0) {
    const what = missing.map((d) => `${s.task(d).id}'s work (branch ${s.task(d).attempt?.branch ?? "?"})`).join(", ");
    fail(s, i, kind, { error: `${t.id}'s head does not contain ${what}`, retryable: true, counted: true, exitCode: EXIT_CODES.SUCCESS });
    return false;
  }
  s.editAttempt(i).contained = s.idx.deps[i]!.filter((d) => s.task(d).status === "MERGE_READY").map((d) => s.task(d).id);
  return true;
}

/** A successful attempt with a walkthrough that changed files → DONE, reviewed, and through the merge gate if its head is in. */
function completed(s: Step, i: number, w: WalkthroughFacts | undefined, partial: boolean, kind: InputKind, ev: ResumeEvidence): void {
  const failed = (error: string) => fail(s, i, kind, { error, retryable: true, counted: true, exitCode: EXIT_CODES.SUCCESS, resume: ev });
  if (!w) return failed("no valid walkthrough was committed");
  if (w.filesChanged.length === 0) return failed("the attempt changed no files");
  s.editRevision(i).walkthroughSha = w.headSha;
  const e = s.edit(i);
  e.confidence = w.confidence;
  e.walkthroughStatus = partial ? "partial" : w.status;
  e.filesChanged = w.filesChanged;
  if (!s.move(i, "DONE", kind)) return;
  const t = s.task(i);
  s.emit("task.completed", t.id, {
    agentId: agentId(s.j.runId, t.id, t.attempts),
    status: e.walkthroughStatus,
    confidence: w.confidence,
    attempt: t.attempts,
  });
  review(s, i, w);
  gate(s, i, kind);
}

/** An attempt's spend, added once: a result is applied only while its attempt is RUNNING. */
function addSpend(s: Step, i: number, spend: InputOf<"agent.finished">["spend"]): void {
  if (!spend) return;
  const e = s.edit(i);
  if (spend.usd !== undefined) e.spentUsd = Math.round(((e.spentUsd ?? 0) + spend.usd) * 1e6) / 1e6;
  if (spend.tokens !== undefined) e.spentTokens = (e.spentTokens ?? 0) + spend.tokens;
  if (spend.agentMs !== undefined) e.agentMs = (e.agentMs ?? 0) + spend.agentMs;
}
