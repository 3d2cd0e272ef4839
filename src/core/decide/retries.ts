/** Failed and silent attempts, and the retry that follows them (or the hold that stops it). */
import type { Hold, TaskState } from "../journal.js";
import { backoffMs } from "../retry.js";
import { checkTransition } from "../state-machine.js";
import * as effects from "./effects.js";
import { branchName } from "../layout.js";
import { agentId } from "./names.js";
import type { InputKind, Step } from "./step.js";

/** How an attempt failed, and whether it is retried by itself. */
export interface Failure {
  error: string;
  retryable: boolean;
  /** Counts against `max_retries` (a usage limit does not). */
  counted?: boolean;
  /** Why the task is not retried by itself. */
  hold?: Hold;
  exitCode?: number;
  /** The quality gate's refinement document, for the next attempt. */
  refinement?: string;
  /** Not retried before this time (ms). */
  notBefore?: number;
}

/** Task i's attempt failed: → FAILED, then retried when the failure allows it. */
export function fail(s: Step, i: number, kind: InputKind, f: Failure): void {
  const check = checkTransition(s.task(i).status, "FAILED");
  if (!check.ok) return s.reject(kind, check.reason, s.task(i).id);
  if (check.noop) return;
  const e = s.edit(i);
  e.lastError = f.error;
  if (f.hold) e.hold = f.hold;
  s.move(i, "FAILED", kind);
  const t = s.task(i);
  s.emit("task.failed", t.id, {
    agentId: agentId(s.j.runId, t.id, t.attempt),
    error: f.error,
    attemptId: t.attempt,
    ...(f.exitCode !== undefined ? { exitCode: f.exitCode } : {}),
    retryable: f.retryable,
  });
  if (f.refinement !== undefined) s.edit(i).context = { refinement: f.refinement };
  if (f.retryable) retry(s, i, kind, { counted: f.counted ?? true, ...(f.notBefore !== undefined ? { notBefore: f.notBefore } : {}) });
}

/** Task i's attempt went silent: → STALE, its job is cancelled, and it is retried. */
export function stale(s: Step, i: number, kind: InputKind, reason: string): void {
  const t = s.task(i);
  if (!s.move(i, "STALE", kind)) return;
  s.edit(i).lastError = reason;
  const threshold = t.startedAt ? s.config.timeouts.liveness_minutes * 60 : s.config.timeouts.dispatch_start_minutes * 60;
  s.emit("task.stale", t.id, { ...(t.lastHeartbeat ? { lastHeartbeat: t.lastHeartbeat } : {}), threshold, attempt: t.attempt });
  s.effect(effects.cancelAgent(t));
  retry(s, i, kind, { counted: true });
}

/**
 * FAILED/STALE → PENDING with the next attempt after a backoff; once the automatic retries
 * (`max_retries`) are used up the task stays put, held as exhausted. A manual retry (a person's
 * `/forge retry`, or a resolved Change Request) is neither counted nor delayed.
 */
export function retry(s: Step, i: number, kind: InputKind, opts: { counted: boolean; manual?: boolean; notBefore?: number }): void {
  const t = s.task(i);
  if (s.j.status !== "running") return; // a cancelled run retries nothing
  if (opts.counted && !opts.manual && t.retries >= s.config.max_retries) {
    s.edit(i).hold = "exhausted";
    s.emit("task.exhausted", t.id, { attempts: t.attempt, finalStatus: t.status });
    s.effect(effects.checkRun(s.task(i), t.status));
    return;
  }
  const retries = opts.counted && !opts.manual ? t.retries + 1 : t.retries;
  const notBefore = opts.manual
    ? undefined
    : (opts.notBefore ?? s.now + backoffMs(s.config, Math.max(0, retries - 1), `${s.j.runId}:${t.id}:${t.attempt}`));
  if (!s.move(i, "PENDING", kind)) return;
  const e = nextAttempt(s.task(i), retries, notBefore !== undefined && notBefore > s.now ? s.iso(notBefore) : undefined);
  s.replaceTask(i, e);
  const next = t.attempt + 1;
  s.emit("task.retried", t.id, {
    attemptId: next,
    branch: branchName(s.config, s.j.runId, t.id, next),
    ...(e.notBefore ? { notBefore: e.notBefore } : {}),
    manual: opts.manual ?? false,
  });
}

/** A fresh object for the next attempt: the previous attempt's facts go, its error and context stay. */
function nextAttempt(t: TaskState, retries: number, notBefore: string | undefined): TaskState {
  const {
    hold: _hold,
    question: _question,
    walkthroughSha: _w,
    pushedSha: _p,
    recordSha: _r,
    prNumber: _n,
    workflowRunId: _run,
    mergeSha: _m,
    startedAt: _s,
    lastHeartbeat: _h,
    dispatchedAt: _d,
    notBefore: _nb,
    contained: _c,
    context: previous,
    ...kept
  } = t;
  // The attempt's conflicts were its own; a refinement or an answer is for the next attempt.
  const { conflicts: _conflicts, ...context } = previous ?? {};
  return { ...kept, ...(Object.keys(context).length ? { context } : {}), retries, ...(notBefore !== undefined ? { notBefore } : {}) };
}
