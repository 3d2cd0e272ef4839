/**
 * Routing and dispatch: the ready tasks, most downstream work first, are given to agents while
 * `max_parallel_agents` allows; queued follow-ups take what capacity is left.
 */
import type { Effect } from "../effects.js";
import { newAttempt, type AttemptRecord, type NextAttempt, type ResumePoint } from "../journal.js";
import { attemptRef, backoffOver, clearedForRefinery } from "../task-rules.js";
import * as effects from "./effects.js";
import { runningFollowups, spawnFollowups } from "./follow-ups.js";
import { branchName } from "../layout.js";
import { agentId } from "./names.js";
import type { Step } from "./step.js";
import { assignAgent } from "./agents.js";
import { nextAttemptCap, type AttemptCap } from "../budget.js";

export function schedule(s: Step): void {
  const running = s.derived.running.size + runningFollowups(s);
  let capacity = s.config.max_parallel_agents - running;
  if (capacity <= 0) return;

  // The ready set is kept in dispatch order (most downstream work first, then plan order): take
  // the first ones whose backoff is over. A dispatch takes its task out of the ready set as it goes,
  // so the loop walks a copy: walking the set itself would skip the task after each one dispatched.
  const picked: number[] = [];
  let runBlocked = false;
  for (const i of s.derived.ready.slice()) {
    if (picked.length >= capacity) break;
    const t = s.task(i);
    if (!backoffOver(t, s.now)) continue;
    if (s.idx.isRefinery[i] && !upstreamsCleared(s, i)) continue;
    // Each dispatch reserves its cap before the next is weighed.
    const { cap, blocked } = nextAttemptCap(s.j, s.node(i), t, s.config);
    if (blocked === "run") {
      runBlocked = true;
      break;
    }
    if (blocked === "task") continue;
    dispatch(s, i, cap);
    picked.push(i);
  }
  // A dispatch shows the budget covers what is ready; nothing ready says nothing either way.
  if (runBlocked || picked.length) budgetPause(s, runBlocked);
  capacity -= picked.length;
  spawnFollowups(s, capacity);
}

/**
 * A refinery's branch merges its MERGE_READY upstreams' branches before its agent starts (on their
 * `CLAUDE.md`, their `.claude/settings.json` hooks): each upstream's pull request is read from GitHub
 * first, and one that changes protected paths holds the refinery until a person approves that head
 * (`/forge approve` on the upstream's PR), as a task's own merge is held (merge-gate.ts).
 */
function upstreamsCleared(s: Step, i: number): boolean {
  let cleared = true;
  for (const d of s.idx.deps[i]!) {
    const dt = s.task(d);
    if (dt.status !== "MERGE_READY" || !dt.attempt || clearedForRefinery(dt)) continue;
    cleared = false;
    // Held: it waits for the approval. Unread: read it (deciding it again replaces the pending one).
    if (!dt.attempt.revision.protectedPaths?.length) s.effect(effects.checkUpstream(attemptRef(dt), s.task(i).id));
  }
  return cleared;
}

/**
 * Start task i's next attempt: its branch (a refinery's with its upstream branches merged in) and its
 * job. The attempt is a new record: of the attempts before it, only what the task keeps reaches it —
 * what the previous one left for it (`next`) is handed to its job.
 */
function dispatch(s: Step, i: number, cap: AttemptCap): void {
  const { next, ...t } = s.task(i);
  const attempt = t.attempts + 1;
  // A resumed attempt continues the earlier one's work on its branch and PR (docs/executor.md#resuming).
  const resume = next?.resume;
  const branch = resume?.branch ?? branchName(s.config, s.j.runId, t.id, attempt);
  s.replaceTask(i, { ...t, attempts: attempt, attempt: resumedAttempt(newAttempt(branch, s.iso(s.now), cap.usd), resume) });
  const node = s.node(i);
  // Its agent: the task's list at the position the task reached (docs/executor.md#agent-fallback).
  const agent = assignAgent(s, i, next);
  s.emit("task.scheduled", t.id, { type: node.agentType, dependencies: node.dependencies });
  if (!s.move(i, "RUNNING", "tick")) return;
  const resumes = resume ? { resumes: { fromAttempt: resume.fromAttempt, ...(resume.stage ? { stage: resume.stage } : {}) } } : {};
  s.emit("task.started", t.id, {
    agentId: agentId(s.j.runId, t.id, attempt),
    type: node.agentType,
    branch,
    attempt,
    agent: agent.adapter,
    ...resumes,
  });
  const ref = { id: t.id, attempt, branch };
  // The job runs the config's adapter unless told otherwise: the dispatch names another agent only.
  const told = agent.adapter !== s.config.agent.adapter || agent.switched ? { agent } : {};
  if (resume) {
    // The branch is there, with the earlier attempt's work and PR: no PrepareBranch. A session is
    // resumed only on the adapter that holds it (another agent starts its session fresh).
    const r = resumeContext(resume, agent.adapter);
    s.effect(effects.dispatchAgent(ref, node.agentType, { ...handoff(next, cap), ...told, resume: r }, resume.priorRunId));
    return;
  }
  const merge: string[] = [];
  if (s.idx.isRefinery[i]) {
    const targets: string[] = [];
    for (const d of s.idx.deps[i]!) {
      const dt = s.task(d);
      targets.push(dt.id);
      if (dt.status === "MERGE_READY" && dt.attempt) merge.push(dt.attempt.branch);
    }
    s.emit("refinery.started", t.id, { agentId: agentId(s.j.runId, t.id, attempt), mergeTargets: targets });
  }
  s.effect(effects.prepareBranch(ref, s.j.integrationBranch, merge));
  const context = { ...handoff(next, cap), ...told };
  s.effect(effects.dispatchAgent(ref, node.agentType, Object.keys(context).length ? context : undefined));
}

/** The run pauses when its budget cannot cover the next ready attempt, and resumes when it can (raised, or reserved money came back). */
function budgetPause(s: Step, blocked: boolean): void {
  if (blocked === (s.j.pause.budget === true)) return;
  if (blocked) {
    s.j.pause = { ...s.j.pause, budget: true };
    s.emit("run.paused", undefined, { reason: "budget" });
  } else {
    const { budget: _b, ...pause } = s.j.pause;
    s.j.pause = pause;
    s.emit("run.resumed", undefined, { reason: "budget" });
  }
  s.effect(effects.updateTracker(s.j.seq));
}

/** What the previous attempt left for this one, and its budget. */
function handoff(next: NextAttempt | undefined, cap: AttemptCap): Extract<Effect, { kind: "DispatchAgent" }>["context"] {
  const budget = cap.usd !== undefined || cap.tokens !== undefined ? { budget: { ...cap } } : {};
  if (!next || (next.answer === undefined && next.refinement === undefined)) return Object.keys(budget).length ? budget : undefined;
  return {
    ...(next.refinement !== undefined ? { refinement: next.refinement } : {}),
    ...(next.answer !== undefined ? { answer: next.answer } : {}),
    ...budget,
  };
}

/** A resumed attempt's record: the earlier attempt's PR, and only jobs after that attempt's last are its own. */
function resumedAttempt(a: AttemptRecord, resume: ResumePoint | undefined): AttemptRecord {
  if (!resume) return a;
  const { reason, fromAttempt, head, stage, depthUsed } = resume;
  return {
    ...a,
    ...(resume.prNumber !== undefined ? { prNumber: resume.prNumber } : {}),
    resumed: {
      reason,
      fromAttempt,
      ...(head !== undefined ? { head } : {}),
      ...(stage !== undefined ? { stage } : {}),
      ...(depthUsed !== undefined ? { depthUsed } : {}),
    },
    revision: { ...a.revision, priorRunId: resume.priorRunId },
  };
}

/** What the resumed attempt's job is told it continues. */
function resumeContext(
  r: ResumePoint,
  adapter: string,
): NonNullable<NonNullable<Extract<Effect, { kind: "DispatchAgent" }>["context"]>["resume"]> {
  return {
    fromAttempt: r.fromAttempt,
    reason: r.reason,
    ...(r.head !== undefined ? { head: r.head } : {}),
    ...(r.stage !== undefined ? { stage: r.stage } : {}),
    ...(r.session && r.session.adapter === adapter ? { session: { ...r.session } } : {}),
    ...(r.depthUsed !== undefined ? { depthUsed: r.depthUsed } : {}),
  };
}
