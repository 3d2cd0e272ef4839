/** Failed and silent attempts, and the retry that follows them (or the hold that stops it). */
import type { Hold } from "../journal.js";
import { backoffMs } from "../retry.js";
import { attemptRef } from "../task-rules.js";
import { checkTransition } from "../state-machine.js";
import * as effects from "./effects.js";
import { branchName } from "../layout.js";
import { agentId } from "./names.js";
import { planResume, type ResumeEvidence } from "./resume.js";
import { nextAgent } from "./agents.js";
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
  /** The page of the job that failed, where its log is. */
  logUrl?: string;
  /** How it ended for the retry policy, and what it left to continue from (docs/executor.md#resuming). */
  resume?: ResumeEvidence;
}

/** The task's last error, and the job log that shows it when there is one (an older error's link goes with it). */
function setLastError(s: Step, i: number, error: string, logUrl: string | undefined): void {
  const t = s.edit(i);
  t.lastError = error;
  if (logUrl !== undefined) t.lastErrorLog = logUrl;
  else delete t.lastErrorLog;
}

/** Task i's attempt failed: → FAILED, then retried when the failure allows it. */
export function fail(s: Step, i: number, kind: InputKind, f: Failure): void {
  const check = checkTransition(s.task(i).status, "FAILED");
  if (!check.ok) return s.reject(kind, check.reason, s.task(i).id);
  if (check.noop) return;
  setLastError(s, i, f.error, f.logUrl);
  if (f.hold) s.editAttempt(i).hold = f.hold;
  s.move(i, "FAILED", kind);
  const t = s.task(i);
  s.emit("task.failed", t.id, {
    agentId: agentId(s.j.runId, t.id, t.attempts),
    error: f.error,
    attemptId: t.attempts,
    ...(f.exitCode !== undefined ? { exitCode: f.exitCode } : {}),
    retryable: f.retryable,
  });
  if (f.refinement !== undefined) s.edit(i).next = { refinement: f.refinement };
  if (f.resume) planResume(s, i, f.resume);
  if (f.retryable) retry(s, i, kind, { counted: f.counted ?? true, ...(f.notBefore !== undefined ? { notBefore: f.notBefore } : {}) });
}

/**
 * Task i's attempt went silent: → STALE, its job is cancelled, and it is retried — resumed when the
 * retry policy says so (`ev`: how it ended and what it left; by default a stall).
 */
export function stale(s: Step, i: number, kind: InputKind, reason: string, logUrl?: string, ev?: ResumeEvidence): void {
  const t = s.task(i);
  if (!s.move(i, "STALE", kind)) return;
  setLastError(s, i, reason, logUrl);
  const r = s.revision(i);
  const threshold = r.startedAt ? s.config.timeouts.liveness_minutes * 60 : s.config.timeouts.dispatch_start_minutes * 60;
  s.emit("task.stale", t.id, { ...(r.lastHeartbeat ? { lastHeartbeat: r.lastHeartbeat } : {}), threshold, attempt: t.attempts });
  s.effect(effects.cancelAgent(attemptRef(t)));
  planResume(s, i, ev ?? { cls: "stale" });
  retry(s, i, kind, { counted: true });
}

/**
 * FAILED/STALE → PENDING, for the next attempt after a backoff; once the automatic retries
 * (`max_retries`) are used up the task stays put, held as exhausted. A manual retry (a person's
 * `/forge retry`, or a resolved Change Request) is neither counted nor delayed. The attempt ends
 * here: the task keeps no current attempt until the next is dispatched, only its error, its counts
 * and `next` — the refinement or answer, and the backoff, for the next one.
 */
export function retry(s: Step, i: number, kind: InputKind, opts: { counted: boolean; manual?: boolean; notBefore?: number }): void {
  const t = s.task(i);
  if (s.j.status !== "running") return; // a cancelled run retries nothing
  if (opts.counted && !opts.manual && t.retries >= s.config.max_retries) {
    s.editAttempt(i).hold = "exhausted";
    s.emit("task.exhausted", t.id, { attempts: t.attempts, finalStatus: t.status });
    s.effect(effects.checkRun(attemptRef(s.task(i)), t.status));
    return;
  }
  const retries = opts.counted && !opts.manual ? t.retries + 1 : t.retries;
  const notBefore = opts.manual
    ? undefined
    : (opts.notBefore ?? s.now + backoffMs(s.config, Math.max(0, retries - 1), `${s.j.runId}:${t.id}:${t.attempts}`));
  if (!s.move(i, "PENDING", kind)) return;
  const { attempt: _ended, next: given, ...task } = s.task(i);
  const { notBefore: _old, ...handed } = given ?? {};
  const backoff = notBefore !== undefined && notBefore > s.now ? s.iso(notBefore) : undefined;
  const next = { ...handed, ...(backoff !== undefined ? { notBefore: backoff } : {}) };
  s.replaceTask(i, { ...task, retries, ...(Object.keys(next).length ? { next } : {}) });
  const attempt = t.attempts + 1;
  const { resume, fresh, switched } = next;
  const to = switched ? nextAgent(s, i) : undefined;
  s.emit("task.retried", t.id, {
    attemptId: attempt,
    branch: resume?.branch ?? branchName(s.config, s.j.runId, t.id, attempt),
    ...(backoff ? { notBefore: backoff } : {}),
    manual: opts.manual ?? false,
    ...(resume ? { resumes: { fromAttempt: resume.fromAttempt, ...(resume.stage ? { stage: resume.stage } : {}) } } : {}),
    ...(fresh ? { fresh } : {}),
    ...(switched && to !== switched.from ? { agent: { from: switched.from, to: to!, reason: switched.reason } } : {}),
  });
}
