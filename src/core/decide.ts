import type { Effect } from "./effects.js";
import type { Input, LeafInput, PlanNodeInput, WalkthroughFacts } from "./inputs.js";
import type { ChangeRequestState, FollowupState, Hold, Journal, PlanNode, TaskState } from "./journal.js";
import { buildIndex, downstreamCounts, planIndex, topologicalOrder, type PlanIndex } from "./plan-index.js";
import { backoffMs } from "./retry.js";
import { reviewWalkthrough } from "./review.js";
import type { TaskStatus } from "./schemas/common.js";
import type { ForgeConfig } from "./schemas/config.js";
import type { EventData, EventType, ForgeEvent } from "./schemas/events.js";
import { checkTransition } from "./state-machine.js";
import { computeDerived, DerivedDraft, derivedOf, remember, type Derived } from "./derived.js";
import { EXIT_CODES } from "./schemas/agent-result.js";

/** A transition that was applied. */
export interface Transition {
  taskId: string;
  attempt: number;
  from: TaskStatus;
  to: TaskStatus;
}

/** An input (or part of one) that changed nothing, and why. Commands' rejections are shown to the person. */
export interface Rejection {
  input: LeafInput["kind"];
  taskId?: string;
  reason: string;
  /** Position of the rejected input in a batch (0 for a single input). */
  leaf: number;
}

export interface Decision {
  journal: Journal;
  events: ForgeEvent[];
  /** Effects added to the outbox by this decision (the outbox holds every pending one). */
  effects: Effect[];
  transitions: Transition[];
  rejections: Rejection[];
}

/** `agentId` of an attempt, as events name it. */
export const agentId = (runId: string, taskId: string, attempt: number) => `${runId}/${taskId}/${attempt}`;

export function branchName(config: Pick<ForgeConfig, "branch_template">, runId: string, taskId: string, attempt: number): string {
  return config.branch_template.replaceAll("{runId}", runId).replaceAll("{taskId}", taskId).replaceAll("{attempt}", String(attempt));
}

/**
 * The mutable working copy of one decision. Nothing of the input journal is ever written:
 * arrays are copied on first write (`tasks` is an array so the copy is a cheap slice, even for
 * 10,000 nodes).
 */
class Step {
  readonly j: Journal;
  idx: PlanIndex;
  readonly events: ForgeEvent[] = [];
  readonly effects: Effect[] = [];
  readonly transitions: Transition[] = [];
  readonly rejections: Rejection[] = [];
  /** Position of the input being applied in its batch. */
  leaf = 0;
  private tasksCopied = false;
  private readonly touched = new Set<number>();
  private readonly timestamp: string;
  private trackerDirty = false;
  private readonly base: Derived;
  private draft: DerivedDraft | undefined;

  constructor(
    journal: Journal,
    readonly now: number,
    readonly config: ForgeConfig,
  ) {
    this.j = { ...journal };
    this.idx = planIndex(journal.plan);
    this.base = derivedOf(journal);
    this.timestamp = new Date(now).toISOString();
  }

  /** The incremental indexes as of now (read-only view). */
  get derived(): Derived {
    return this.draft ?? this.base;
  }

  /** Re-index task i after a change of its status or blockers. */
  reindex(i: number): void {
    this.draft ??= new DerivedDraft(this.base);
    this.draft.update(i, this.task(i), this.j.plan.nodes);
  }

  /** Replace task i with a fresh object: no `delete`, so every task object keeps one shape. */
  replaceTask(i: number, t: TaskState): void {
    this.edit(i);
    this.j.tasks[i] = t;
  }

  // ---- reading ----
  task(i: number): TaskState {
    return this.j.tasks[i]!;
  }
  node(i: number): PlanNode {
    return this.j.plan.nodes[i]!;
  }
  find(taskId: string): number | undefined {
    return this.idx.indexOf.get(taskId);
  }
  get paused(): boolean {
    const p = this.j.pause;
    return p.manual || p.changeRequests.length > 0 || (p.usageLimitUntil !== undefined && Date.parse(p.usageLimitUntil) > this.now);
  }
  iso(ms: number): string {
    return new Date(ms).toISOString();
  }

  // ---- writing ----
  /** A writable copy of task i. */
  edit(i: number): TaskState {
    if (!this.tasksCopied) {
      this.j.tasks = this.j.tasks.slice();
      this.tasksCopied = true;
    }
    if (!this.touched.has(i)) {
      this.j.tasks[i] = { ...this.j.tasks[i]! };
      this.touched.add(i);
    }
    return this.j.tasks[i]!;
  }

  emit<T extends EventType>(type: T, taskId: string | undefined, data: EventData<T>): void {
    const seq = this.j.seq + 1;
    this.j.seq = seq;
    const event = { eventId: `${this.j.runId}:${seq}`, seq, timestamp: this.timestamp, type, runId: this.j.runId, data } as ForgeEvent;
    if (taskId !== undefined) event.taskId = taskId;
    this.events.push(event);
    this.trackerDirty = true;
  }

  effect(e: Effect): void {
    const outbox = this.j.outbox.slice();
    const at = outbox.findIndex((o) => o.key === e.key);
    if (at >= 0) outbox[at] = e;
    else outbox.push(e);
    this.j.outbox = outbox;
    const mine = this.effects.findIndex((o) => o.key === e.key);
    if (mine >= 0) this.effects[mine] = e;
    else this.effects.push(e);
  }

  reject(input: LeafInput["kind"], reason: string, taskId?: string): void {
    this.rejections.push(taskId === undefined ? { input, reason, leaf: this.leaf } : { input, taskId, reason, leaf: this.leaf });
  }

  /**
   * Apply `to` to task i through the state machine. True when applied; false when it was a no-op
   * (the task already made it) or invalid (the reason is recorded).
   */
  move(i: number, to: TaskStatus, input: LeafInput["kind"]): boolean {
    const t = this.task(i);
    const check = checkTransition(t.status, to);
    if (!check.ok) {
      this.reject(input, check.reason, t.id);
      return false;
    }
    if (check.noop) return false;
    const from = t.status;
    this.edit(i).status = to;
    this.reindex(i);
    this.transitions.push({ taskId: t.id, attempt: t.attempt, from, to });
    this.onStatusChange(i, to);
    return true;
  }

  private onStatusChange(i: number, to: TaskStatus): void {
    const t = this.task(i);
    // Readiness is kept incrementally: a refinery's dependency counts once MERGE_READY, a task's once MERGED.
    if (to === "MERGE_READY" || to === "MERGED") {
      for (const d of this.idx.dependents[i]!) {
        if (this.idx.isRefinery[d] === (to === "MERGE_READY")) {
          const dt = this.edit(d);
          dt.blockers = Math.max(0, dt.blockers - 1);
          if (dt.blockers === 0) this.reindex(d);
        }
      }
    }
    if (to === "MERGED") this.j.merged += 1;
    // The check run belongs to the attempt; a retry (→ PENDING) leaves the old attempt's verdict in place.
    if (t.attempt > 0 && to !== "PENDING") {
      this.effect({
        key: `check:${t.id}:${t.attempt}`,
        kind: "UpsertCheckRun",
        taskId: t.id,
        attempt: t.attempt,
        status: to,
        summary: checkSummary(t, to),
      });
    }
  }

  /** Continue the decision on an amended plan (overlay), with a new index. */
  replacePlan(plan: Journal["plan"], tasks: TaskState[]): void {
    this.j.plan = plan;
    this.j.tasks = tasks;
    this.idx = planIndex(plan);
    // `tasks` is a fresh array, but its task objects may still be shared with the input journal.
    this.tasksCopied = true;
    this.touched.clear();
    this.draft = new DerivedDraft(computeDerived(tasks, plan.nodes));
  }

  finish(): Decision {
    if (this.trackerDirty) this.effect({ key: "tracker", kind: "UpdateTracker" });
    remember(this.j, this.derived);
    return { journal: this.j, events: this.events, effects: this.effects, transitions: this.transitions, rejections: this.rejections };
  }
}

function checkSummary(t: TaskState, status: TaskStatus): string {
  switch (status) {
    case "RUNNING":
      return `Attempt ${t.attempt} running`;
    case "DONE":
      return `Attempt ${t.attempt} done; waiting for its pushed head`;
    case "MERGE_READY":
      return `Attempt ${t.attempt} ready to merge`;
    case "MERGED":
      return `Merged`;
    case "FAILED":
      return t.hold === "exhausted"
        ? `Failed; retries exhausted`
        : t.hold === "human"
          ? `Waiting for an answer: /forge retry <answer>`
          : `Attempt ${t.attempt} failed${t.lastError ? `: ${t.lastError}` : ""}`;
    case "STALE":
      return `Attempt ${t.attempt} went silent`;
    case "PENDING":
      return `Waiting to be retried`;
  }
}

/**
 * The executor of seed 003 as a pure reducer: no I/O, no clock, no randomness. The same journal,
 * input, time and config always give the same result.
 */
export function decide(journal: Journal, input: Input, now: number, config: ForgeConfig): Decision {
  const step = new Step(journal, now, config);
  if (input.kind === "batch") {
    input.inputs.forEach((leaf, k) => {
      step.leaf = k;
      apply(step, leaf);
    });
  }
  else apply(step, input);
  settle(step);
  return step.finish();
}

function apply(s: Step, input: LeafInput): void {
  if (s.j.status !== "running" && !["effect.done", "effect.failed", "agent.finished", "agent.lost", "pr.merged"].includes(input.kind)) {
    if (input.kind === "command") s.reject(input.kind, `the run is ${s.j.status}`);
    return;
  }
  switch (input.kind) {
    case "tick":
      return tick(s);
    case "agent.started":
    case "agent.heartbeat": {
      const i = current(s, input);
      if (i === undefined) return;
      const t = s.task(i);
      if (t.status !== "RUNNING") return;
      const e = s.edit(i);
      const at = s.iso(s.now);
      if (input.kind === "agent.started") {
        if (!e.startedAt) e.startedAt = at;
        if (input.workflowRunId !== undefined) e.workflowRunId = input.workflowRunId;
      }
      if (!e.lastHeartbeat || Date.parse(e.lastHeartbeat) < s.now) e.lastHeartbeat = at;
      return;
    }
    case "agent.finished":
      if (isFollowup(s, input.taskId)) return followupFinished(s, input.taskId, input.exitCode === 0 || input.exitCode === 12);
      return agentFinished(s, input);
    case "agent.lost": {
      if (isFollowup(s, input.taskId)) return followupFinished(s, input.taskId, false);
      const i = current(s, input);
      if (i === undefined || s.task(i).status !== "RUNNING") return;
      // A runner that went away mid-step is a loss of liveness (STALE); a job that ran to its end without a result failed.
      if (input.runnerLost) return stale(s, i, input.kind, input.reason);
      return fail(s, i, input.kind, { error: input.reason, retryable: true, counted: true });
    }
    case "branch.pushed": {
      const i = current(s, input);
      if (i === undefined) return;
      s.edit(i).pushedSha = input.headSha;
      s.emit("branch.pushed", input.taskId, { branch: s.task(i).branch ?? "", headSha: input.headSha, attempt: input.attempt });
      return gate(s, i, input.kind);
    }
    case "pr.opened": {
      if (isFollowup(s, input.taskId)) return setFollowup(s, input.taskId, { prNumber: input.number });
      const i = current(s, input);
      if (i !== undefined) s.edit(i).prNumber = input.number;
      return;
    }
    case "pr.merged":
      if (isFollowup(s, input.taskId)) return followupMerged(s, input.taskId);
      return prMerged(s, input.taskId, input.attempt, input.mergeSha, input.kind);
    case "effect.done":
      return effectDone(s, input.key, input.result);
    case "effect.failed":
      return effectFailed(s, input.key, input.error);
    case "command":
      return command(s, input);
    case "overlay.applied":
      return overlayApplied(s, input);
    case "cr.closed": {
      const cr = s.j.changeRequests.find((c) => c.id === input.crId);
      if (!cr || cr.status === "applied" || cr.status === "rejected") return;
      return resolveCr(s, cr.id, "rejected");
    }
    case "plan.changed":
      s.emit("plan.edit_ignored", undefined, { commit: input.commit });
      return;
    case "usage.limited": {
      const until = Date.parse(input.until);
      if (!Number.isNaN(until)) usageLimited(s, until);
      return;
    }
  }
}

/** The task index when the input names the task's current attempt; stale or unknown inputs change nothing. */
function current(s: Step, input: { kind: LeafInput["kind"]; taskId: string; attempt: number }): number | undefined {
  const i = s.find(input.taskId);
  if (i === undefined) {
    s.reject(input.kind, `unknown task ${input.taskId}`, input.taskId);
    return undefined;
  }
  const t = s.task(i);
  if (t.attempt !== input.attempt) {
    s.reject(input.kind, `attempt ${input.attempt} is not the current attempt (${t.attempt})`, input.taskId);
    return undefined;
  }
  return i;
}

// ---------------------------------------------------------------- agent results

function agentFinished(s: Step, input: Extract<LeafInput, { kind: "agent.finished" }>): void {
  const i = current(s, input);
  if (i === undefined) return;
  const t = s.task(i);
  if (t.status !== "RUNNING") {
    // A repeated result, or one that arrived after the attempt was declared STALE: nothing to do.
    if (t.status === "DONE" || t.status === "MERGE_READY" || t.status === "MERGED") return;
    s.reject(input.kind, `the attempt is ${t.status}, not RUNNING`, t.id);
    return;
  }
  if (input.pushedSha) s.edit(i).pushedSha = input.pushedSha;
  if (input.recordSha) s.edit(i).recordSha = input.recordSha;

  if (input.rateLimitedUntil) {
    const until = Date.parse(input.rateLimitedUntil);
    if (!Number.isNaN(until) && until > s.now) {
      usageLimited(s, until);
      return fail(s, i, input.kind, { error: `model usage limit until ${s.iso(until)}`, retryable: true, counted: false, notBefore: until });
    }
  }

  switch (input.exitCode) {
    case EXIT_CODES.SUCCESS:
    case EXIT_CODES.PARTIAL_SUCCESS:
      if (s.idx.isRefinery[i] && !refineryContains(s, i, input.uncontainedUpstreams, input.kind)) return;
      return completed(s, i, input.walkthrough, input.exitCode === EXIT_CODES.PARTIAL_SUCCESS, input.kind);
    case EXIT_CODES.FAILURE:
      return fail(s, i, input.kind, { error: input.error ?? "the agent failed", retryable: true, counted: true, exitCode: 1 });
    case EXIT_CODES.DEPTH_EXCEEDED:
      return fail(s, i, input.kind, { error: input.error ?? "spawn depth exhausted", retryable: false, hold: "fatal", exitCode: 2 });
    case EXIT_CODES.HUMAN_INPUT: {
      const question = input.question ?? input.error ?? "The agent needs a person's input.";
      fail(s, i, input.kind, { error: "waiting for a person", retryable: false, hold: "human", exitCode: 3 });
      s.edit(i).question = question;
      s.emit("task.waiting", t.id, { attempt: t.attempt, question });
      s.effect({
        key: `question:${t.id}:${t.attempt}`,
        kind: "PostComment",
        target: { on: "task", taskId: t.id, attempt: t.attempt },
        body: `The agent working on \`${t.id}\` needs your input:\n\n> ${question.replaceAll("\n", "\n> ")}\n\nAnswer with \`/forge retry ${t.id} <your answer>\`.`,
      });
      return;
    }
    case EXIT_CODES.NEEDS_REFINEMENT:
      fail(s, i, input.kind, { error: input.error ?? "the quality gate failed", retryable: true, counted: true, exitCode: 10, refinement: input.refinement ?? input.error ?? "" });
      return;
    case EXIT_CODES.NEEDS_ESCALATION:
      return escalate(s, i, input);
    case EXIT_CODES.INTERRUPTED:
      return fail(s, i, input.kind, { error: input.error ?? "cancelled", retryable: false, hold: "cancelled", exitCode: 20 });
    case EXIT_CODES.TIMEOUT:
      return stale(s, i, input.kind, input.error ?? "the agent timed out");
    default:
      return fail(s, i, input.kind, { error: input.error ?? `unknown exit code ${input.exitCode}`, retryable: true, counted: true, exitCode: input.exitCode });
  }
}

/**
 * A refinery's result is only as good as what its head holds: an upstream whose head the record
 * commit does not contain (the App compared them) would be marked MERGED by the refinery's merge
 * and its work lost. Such an attempt fails and is retried; otherwise the checked upstreams are
 * remembered as the ones its merge carries.
 */
function refineryContains(s: Step, i: number, uncontained: readonly string[] | undefined, kind: LeafInput["kind"]): boolean {
  if (uncontained === undefined) return true; // not checked: the merge marks every MERGE_READY upstream
  const t = s.task(i);
  const missing = s.idx.deps[i]!.filter((d) => uncontained.includes(s.task(d).id));
  if (missing.length > 0) {
    const what = missing.map((d) => `${s.task(d).id}'s work (branch ${s.task(d).branch ?? "?"})`).join(", ");
    fail(s, i, kind, { error: `${t.id}'s head does not contain ${what}`, retryable: true, counted: true, exitCode: 0 });
    return false;
  }
  s.edit(i).contained = s.idx.deps[i]!.filter((d) => s.task(d).status === "MERGE_READY").map((d) => s.task(d).id);
  return true;
}

/** Model usage exhausted until `until` (seed 004): dispatching pauses; it is nobody's failure. */
function usageLimited(s: Step, until: number): void {
  const prev = s.j.pause.usageLimitUntil ? Date.parse(s.j.pause.usageLimitUntil) : 0;
  if (until <= prev || until <= s.now) return;
  if (!(prev > s.now)) s.emit("run.paused", undefined, { reason: "usage_limit", until: s.iso(until) });
  s.j.pause = { ...s.j.pause, usageLimitUntil: s.iso(until) };
}

function completed(s: Step, i: number, w: WalkthroughFacts | undefined, partial: boolean, kind: LeafInput["kind"]): void {
  if (!w) return fail(s, i, kind, { error: "no valid walkthrough was committed", retryable: true, counted: true, exitCode: 0 });
  if (w.filesChanged.length === 0) return fail(s, i, kind, { error: "the attempt changed no files", retryable: true, counted: true, exitCode: 0 });
  const e = s.edit(i);
  e.walkthroughSha = w.headSha;
  e.confidence = w.confidence;
  e.walkthroughStatus = partial ? "partial" : w.status;
  e.filesChanged = w.filesChanged;
  if (!s.move(i, "DONE", kind)) return;
  const t = s.task(i);
  s.emit("task.completed", t.id, { agentId: agentId(s.j.runId, t.id, t.attempt), status: e.walkthroughStatus, confidence: w.confidence, attempt: t.attempt });
  review(s, i, w);
  gate(s, i, kind);
}

/** DONE → MERGE_READY only when the head read back from GitHub equals the walkthrough's head_sha. */
function gate(s: Step, i: number, kind: LeafInput["kind"]): void {
  const t = s.task(i);
  if (t.status !== "DONE" || !t.walkthroughSha || t.pushedSha !== t.walkthroughSha) return;
  s.move(i, "MERGE_READY", kind);
  s.emit("task.merge_ready", t.id, { attempt: t.attempt, headSha: t.walkthroughSha });
  if (t.mergeSha) {
    // The PR was merged before the gate was reached (facts arrive out of order).
    return prMerged(s, t.id, t.attempt, t.mergeSha, kind);
  }
  requestMerge(s, i);
}

function requestMerge(s: Step, i: number): void {
  const t = s.task(i);
  if (t.status !== "MERGE_READY" || s.idx.mergedByRefinery[i]) return;
  if (s.config.merge_policy !== "auto") return;
  if (s.idx.isRefinery[i] && s.config.refinery_approval && !t.approved) {
    s.effect({
      key: `approval:${t.id}:${t.attempt}`,
      kind: "PostComment",
      target: { on: "task", taskId: t.id, attempt: t.attempt },
      body: `Refinery \`${t.id}\` is ready to merge and needs approval: comment \`/forge approve\` to merge it.`,
    });
    return;
  }
  s.effect({ key: `merge:${t.id}:${t.attempt}`, kind: "MergePullRequest", taskId: t.id, attempt: t.attempt, branch: t.branch ?? "", ...(t.prNumber !== undefined ? { prNumber: t.prNumber } : {}) });
}

function prMerged(s: Step, taskId: string, attempt: number, mergeSha: string, kind: LeafInput["kind"]): void {
  const i = current(s, { kind, taskId, attempt });
  if (i === undefined) return;
  const t = s.task(i);
  if (t.status === "MERGED") return;
  if (t.status === "RUNNING" || t.status === "DONE") {
    // Facts arrive out of order: remember it; the gate completes the merge once the attempt's result is in.
    s.edit(i).mergeSha = mergeSha;
    return;
  }
  if (t.status !== "MERGE_READY") return s.reject(kind, `merged while ${t.status}`, taskId);
  s.edit(i).mergeSha = mergeSha;
  s.move(i, "MERGED", kind);
  s.emit("task.merged", t.id, { attempt: t.attempt, mergeSha, by: "direct" });
  if (s.config.branch_cleanup === "on_merge" && t.branch) s.effect({ key: `cleanup:${t.id}:${t.attempt}`, kind: "CleanupBranches", branches: [t.branch] });
  if (s.idx.isRefinery[i]) mergeThroughRefinery(s, i, mergeSha, kind);
}

/**
 * A refinery's PR carries its upstream MERGE_READY tasks into the integration branch — and theirs,
 * when an upstream refinery was itself waiting for this one (refinery chains).
 */
function mergeThroughRefinery(s: Step, refinery: number, mergeSha: string, kind: LeafInput["kind"]): void {
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
      s.edit(d).mergeSha = mergeSha;
      s.move(d, "MERGED", kind);
      s.emit("task.merged", dt.id, { attempt: dt.attempt, mergeSha, by: "refinery" });
      merged.push(dt.id);
      if (s.idx.isRefinery[d]) stack.push(d);
    }
    const t = s.task(i);
    s.emit("refinery.merged", t.id, { agentId: agentId(s.j.runId, t.id, t.attempt), mergedBranches: merged, resultRef: mergeSha });
  }
}

interface Failure {
  error: string;
  retryable: boolean;
  counted?: boolean;
  hold?: Hold;
  exitCode?: number;
  refinement?: string;
  notBefore?: number;
}

function fail(s: Step, i: number, kind: LeafInput["kind"], f: Failure): void {
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

function stale(s: Step, i: number, kind: LeafInput["kind"], reason: string): void {
  const t = s.task(i);
  if (!s.move(i, "STALE", kind)) return;
  s.edit(i).lastError = reason;
  const threshold = t.startedAt ? s.config.timeouts.liveness_minutes * 60 : s.config.timeouts.dispatch_start_minutes * 60;
  s.emit("task.stale", t.id, { ...(t.lastHeartbeat ? { lastHeartbeat: t.lastHeartbeat } : {}), threshold, attempt: t.attempt });
  s.effect({ key: `cancel:${t.id}:${t.attempt}`, kind: "CancelAgent", taskId: t.id, attempt: t.attempt, ...(t.workflowRunId !== undefined ? { workflowRunId: t.workflowRunId } : {}) });
  retry(s, i, kind, { counted: true });
}

/** FAILED/STALE → PENDING with the next attempt after a backoff, or exhausted (seed 003 §10). */
function retry(s: Step, i: number, kind: LeafInput["kind"], opts: { counted: boolean; manual?: boolean; notBefore?: number }): void {
  const t = s.task(i);
  if (s.j.status !== "running") return; // a cancelled run retries nothing
  if (opts.counted && !opts.manual && t.retries >= s.config.max_retries) {
    s.edit(i).hold = "exhausted";
    s.emit("task.exhausted", t.id, { attempts: t.attempt, finalStatus: t.status });
    s.effect({ key: `check:${t.id}:${t.attempt}`, kind: "UpsertCheckRun", taskId: t.id, attempt: t.attempt, status: t.status, summary: checkSummary(s.task(i), t.status) });
    return;
  }
  const retries = opts.counted && !opts.manual ? t.retries + 1 : t.retries;
  const notBefore = opts.manual ? undefined : (opts.notBefore ?? s.now + backoffMs(s.config, Math.max(0, retries - 1), `${s.j.runId}:${t.id}:${t.attempt}`));
  if (!s.move(i, "PENDING", kind)) return;
  // A fresh object for the new attempt: the previous attempt's facts go, its error and context stay.
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
  } = s.task(i);
  // The attempt's conflicts were its own; a refinement or an answer is for the next attempt.
  const { conflicts: _conflicts, ...context } = previous ?? {};
  const e: TaskState = { ...kept, ...(Object.keys(context).length ? { context } : {}), retries, ...(notBefore !== undefined && notBefore > s.now ? { notBefore: s.iso(notBefore) } : {}) };
  s.replaceTask(i, e);
  const next = t.attempt + 1;
  s.emit("task.retried", t.id, {
    attemptId: next,
    branch: branchName(s.config, s.j.runId, t.id, next),
    ...(e.notBefore ? { notBefore: e.notBefore } : {}),
    manual: opts.manual ?? false,
  });
}

// ---------------------------------------------------------------- review

function review(s: Step, i: number, w: WalkthroughFacts): void {
  const t = s.task(i);
  const others: { id: string; files: string[]; paths: string[] }[] = [];
  for (const k of [...s.derived.inFlight].sort((a, b) => a - b)) {
    if (k === i) continue;
    const o = s.task(k);
    others.push({ id: o.id, files: o.status === "RUNNING" ? [] : (o.filesChanged ?? []), paths: s.node(k).paths });
  }
  const result = reviewWalkthrough(
    { risks: w.risks, followups: w.followups, confidence: w.confidence, filesChanged: w.filesChanged },
    others,
    { threshold: s.config.low_confidence_threshold, keywords: s.config.followups.keywords, spawnOpenEnded: s.config.followups.spawn_open_ended },
  );
  for (const risk of w.risks) s.emit("review.risk", t.id, { attempt: t.attempt, risk });
  for (const c of result.conflicts) s.emit("conflict.potential", t.id, c);
  if (result.lowConfidence) s.emit("review.low_confidence", t.id, { confidence: w.confidence, threshold: s.config.low_confidence_threshold });
  for (const f of result.followups) {
    if (!f.spawn) {
      s.emit("followup.logged", t.id, { sourceTaskId: t.id, reason: f.text });
      continue;
    }
    if (s.j.followups.length >= s.config.followups.max_per_run) {
      s.emit("followup.logged", t.id, { sourceTaskId: t.id, reason: `${f.text} (follow-up limit reached)` });
      continue;
    }
    // '_' cannot start a task id, so a follow-up's id and branch never collide with a task's.
    const id = `_followup-${s.j.followups.length + 1}`;
    const followup: FollowupState = { id, sourceTaskId: t.id, sourceAttempt: t.attempt, text: f.text, branch: branchName(s.config, s.j.runId, id, 1), status: "queued" };
    s.j.followups = [...s.j.followups, followup];
  }
}

// ---------------------------------------------------------------- follow-ups

function isFollowup(s: Step, id: string): boolean {
  return s.find(id) === undefined && s.j.followups.some((f) => f.id === id);
}

function setFollowup(s: Step, id: string, patch: Partial<FollowupState>): void {
  s.j.followups = s.j.followups.map((f) => (f.id === id ? { ...f, ...patch } : f));
}

function followupFinished(s: Step, id: string, ok: boolean): void {
  const f = s.j.followups.find((x) => x.id === id)!;
  if (f.status !== "running") return;
  if (ok) {
    setFollowup(s, id, { status: "done" });
    if (s.config.merge_policy === "auto")
      s.effect({ key: `merge:${id}:1`, kind: "MergePullRequest", taskId: id, attempt: 1, branch: f.branch, ...(f.prNumber !== undefined ? { prNumber: f.prNumber } : {}) });
  } else {
    setFollowup(s, id, { status: "failed" });
    s.emit("followup.completed", f.sourceTaskId, { followupId: id, status: "failed" });
  }
}

function followupMerged(s: Step, id: string): void {
  const f = s.j.followups.find((x) => x.id === id)!;
  if (f.status === "merged") return;
  setFollowup(s, id, { status: "merged" });
  s.emit("followup.completed", f.sourceTaskId, { followupId: id, status: "merged" });
}

// ---------------------------------------------------------------- change requests

function escalate(s: Step, i: number, input: Extract<LeafInput, { kind: "agent.finished" }>): void {
  const t = s.task(i);
  const cr = input.changeRequest ?? { title: `${t.id} needs the plan amended`, reason: input.error ?? "escalation", affectedTasks: [t.id] };
  let crId = cr.id ?? `cr-${t.id}-${t.attempt}`;
  if (s.j.changeRequests.some((c) => c.id === crId)) crId = `${crId}-${t.attempt}`;
  fail(s, i, input.kind, { error: `escalated: ${cr.reason}`, retryable: false, hold: "escalated", exitCode: 11 });
  const state: ChangeRequestState = {
    id: crId,
    emittedBy: t.id,
    attempt: t.attempt,
    title: cr.title,
    reason: cr.reason,
    affectedTasks: cr.affectedTasks ?? [],
    status: "pending",
    ...(cr.path ? { path: cr.path } : {}),
  };
  s.j.changeRequests = [...s.j.changeRequests, state];
  s.emit("cr.emitted", t.id, { crId, refineryId: t.id, reason: cr.reason, scope: state.affectedTasks });
  s.j.pause = { ...s.j.pause, changeRequests: [...s.j.pause.changeRequests, crId] };
  s.emit("run.paused", undefined, { reason: "change_request", crId });
  s.effect({ key: `cr:${crId}`, kind: "OpenChangeRequest", crId, emittedBy: t.id, attempt: t.attempt, ...(cr.path ? { path: cr.path } : {}) });
  if (s.config.cr_mode === "replan") s.effect({ key: `captain:${crId}`, kind: "DispatchCaptain", crId });
}

function resolveCr(s: Step, crId: string, resolution: "applied" | "rejected", overlayId?: string): void {
  const cr = s.j.changeRequests.find((c) => c.id === crId)!;
  s.j.changeRequests = s.j.changeRequests.map((c) => (c.id === crId ? { ...c, status: resolution, ...(overlayId ? { overlayId } : {}) } : c));
  s.emit("cr.resolved", cr.emittedBy, { crId, resolution, ...(overlayId ? { overlayId } : {}) });
  // The escalated task gets a fresh attempt, not counted as a retry.
  const i = s.find(cr.emittedBy);
  if (i !== undefined && s.task(i).status === "FAILED" && s.task(i).hold === "escalated") {
    const answer =
      resolution === "applied" ? `Change Request ${crId} was applied as ${overlayId}.` : `Change Request ${crId} was rejected; complete the task within the current plan.`;
    s.edit(i).context = { answer };
    retry(s, i, "cr.closed", { counted: false, manual: true });
  }
  s.j.pause = { ...s.j.pause, changeRequests: s.j.pause.changeRequests.filter((c) => c !== crId) };
  if (s.j.pause.changeRequests.length === 0 && !s.j.pause.manual) {
    s.emit("run.resumed", undefined, { reason: "change_request", crId, ...(overlayId ? { overlayId } : {}) });
  }
}

function overlayApplied(s: Step, input: Extract<LeafInput, { kind: "overlay.applied" }>): void {
  const cr = s.j.changeRequests.find((c) => c.id === input.crId);
  if (!cr) return s.reject(input.kind, `unknown Change Request ${input.crId}`);
  if (cr.status === "applied") return; // repeated
  if (cr.status === "rejected") return s.reject(input.kind, `Change Request ${input.crId} was rejected`);
  const problem = checkOverlay(s, input.nodes, input.edges);
  if (problem) return s.reject(input.kind, `overlay ${input.overlayId} refused: ${problem}`);

  const nodes: PlanNode[] = s.j.plan.nodes.map((n) => ({ ...n, dependencies: n.dependencies.slice() }));
  const byId = new Map(nodes.map((n) => [n.id, n]));
  for (const n of input.nodes) {
    const node: PlanNode = { id: n.id, kind: n.kind, agentType: n.agentType, title: n.title ?? "", dependencies: n.dependencies.slice(), paths: n.paths ?? [], priority: 0 };
    nodes.push(node);
    byId.set(n.id, node);
  }
  for (const e of input.edges) {
    const to = byId.get(e.to)!;
    if (!to.dependencies.includes(e.from)) to.dependencies.push(e.from);
  }
  const index = buildIndex(nodes);
  const priorities = downstreamCounts(index);
  nodes.forEach((n, k) => (n.priority = priorities[k]!));
  const plan = { nodes, overlays: [...s.j.plan.overlays, input.overlayId] };
  const tasks = s.j.tasks.slice();
  for (const n of input.nodes) tasks.push(newTaskState(n.id));
  // Blockers are recounted from scratch: overlays are rare and may add edges to existing tasks.
  nodes.forEach((_, k) => {
    const blockers = countBlockers(index, k, tasks);
    if (tasks[k]!.blockers !== blockers) tasks[k] = { ...tasks[k]!, blockers };
  });
  s.j.planCommit = input.planCommit;
  s.replacePlan(plan, tasks);
  // A MERGE_READY task that waited for its refinery may now have a task downstream: merge it directly.
  tasks.forEach((t, k) => {
    if (t.status === "MERGE_READY" && !s.idx.mergedByRefinery[k]) requestMerge(s, k);
  });
  resolveCr(s, input.crId, "applied", input.overlayId);
}

/** An overlay only adds: new unique ids, edges between known nodes into tasks that have not started, no cycle. */
function checkOverlay(s: Step, nodes: readonly PlanNodeInput[], edges: readonly { from: string; to: string }[]): string | undefined {
  const known = new Set<string>(s.j.plan.nodes.map((n) => n.id));
  const added = new Set<string>();
  for (const n of nodes) {
    if (known.has(n.id) || added.has(n.id)) return `task ${n.id} already exists`;
    added.add(n.id);
  }
  for (const n of nodes) for (const d of n.dependencies) if (!known.has(d) && !added.has(d)) return `task ${n.id} depends on unknown task ${d}`;
  for (const n of nodes) if (n.kind === "refinery" && n.dependencies.length === 0) return `refinery ${n.id} has no dependencies`;
  for (const e of edges) {
    if (!known.has(e.from) && !added.has(e.from)) return `edge ${e.from} → ${e.to} names unknown task ${e.from}`;
    if (added.has(e.to)) continue;
    const k = s.find(e.to);
    if (k === undefined) return `edge ${e.from} → ${e.to} names unknown task ${e.to}`;
    const st = s.task(k).status;
    if (st !== "PENDING" && st !== "FAILED" && st !== "STALE") return `edge ${e.from} → ${e.to}: ${e.to} is already ${st}`;
  }
  const all: { id: string; dependencies: string[] }[] = s.j.plan.nodes.map((n) => ({ id: n.id, dependencies: n.dependencies.slice() }));
  for (const n of nodes) all.push({ id: n.id, dependencies: n.dependencies.slice() });
  const pos = new Map(all.map((n, k) => [n.id, k]));
  for (const e of edges) all[pos.get(e.to)!]!.dependencies.push(e.from);
  const deps = all.map((n) => n.dependencies.map((d) => pos.get(d)!));
  const dependents: number[][] = all.map(() => []);
  deps.forEach((ds, k) => ds.forEach((d) => dependents[d]!.push(k)));
  if (!topologicalOrder({ deps, dependents })) return "it would create a cycle";
  return undefined;
}

// ---------------------------------------------------------------- commands

function command(s: Step, c: Extract<LeafInput, { kind: "command" }>): void {
  switch (c.command) {
    case "pause":
      if (s.j.pause.manual) return s.reject(c.kind, "the run is already paused");
      s.j.pause = { ...s.j.pause, manual: true };
      s.emit("run.paused", undefined, { reason: "manual" });
      return;
    case "resume":
      if (!s.j.pause.manual) return s.reject(c.kind, s.j.pause.changeRequests.length ? `the run waits for ${s.j.pause.changeRequests.join(", ")}` : "the run is not paused");
      s.j.pause = { ...s.j.pause, manual: false };
      s.emit("run.resumed", undefined, { reason: "manual" });
      return;
    case "cancel": {
      s.j.status = "cancelled";
      s.j.completedAt = s.iso(s.now);
      s.emit("run.cancelled", undefined, { actor: c.actor });
      for (const i of [...s.derived.running].sort((a, b) => a - b)) {
        const t = s.task(i);
        s.effect({ key: `cancel:${t.id}:${t.attempt}`, kind: "CancelAgent", taskId: t.id, attempt: t.attempt, ...(t.workflowRunId !== undefined ? { workflowRunId: t.workflowRunId } : {}) });
      }
      return;
    }
    case "retry": {
      if (!c.taskId) return s.reject(c.kind, "say which task: /forge retry <taskId> [message]");
      const i = s.find(c.taskId);
      if (i === undefined) return s.reject(c.kind, `unknown task ${c.taskId}`, c.taskId);
      const t = s.task(i);
      if (t.status !== "FAILED" && t.status !== "STALE") return s.reject(c.kind, `${c.taskId} is ${t.status}; only a FAILED or STALE task can be retried`, c.taskId);
      if (t.hold === "escalated") return s.reject(c.kind, `${c.taskId} waits for its Change Request`, c.taskId);
      if (t.status === "FAILED" && !t.hold) return s.reject(c.kind, `${c.taskId} is already being retried`, c.taskId);
      if (c.message) s.edit(i).context = { ...(t.context ?? {}), answer: c.message };
      return retry(s, i, c.kind, { counted: false, manual: true });
    }
    case "approve":
    case "reject": {
      if (c.crId) {
        const cr = s.j.changeRequests.find((x) => x.id === c.crId);
        if (!cr) return s.reject(c.kind, `unknown Change Request ${c.crId}`);
        if (cr.status !== "pending") return s.reject(c.kind, `Change Request ${c.crId} is already ${cr.status}`);
        if (c.command === "reject") return resolveCr(s, cr.id, "rejected");
        s.j.changeRequests = s.j.changeRequests.map((x) => (x.id === cr.id ? { ...x, status: "approved" } : x));
        s.effect({ key: `captain:${cr.id}`, kind: "DispatchCaptain", crId: cr.id });
        return;
      }
      if (c.taskId && c.command === "approve") {
        const i = s.find(c.taskId);
        if (i === undefined || !s.idx.isRefinery[i]) return s.reject(c.kind, `${c.taskId} is not a refinery of this run`, c.taskId);
        s.edit(i).approved = true;
        return requestMerge(s, i);
      }
      return s.reject(c.kind, `say what to ${c.command}: a Change Request issue or a refinery PR`);
    }
  }
}

// ---------------------------------------------------------------- effects

function effectDone(s: Step, key: string, result: Record<string, unknown>): void {
  const effect = s.j.outbox.find((e) => e.key === key);
  if (!effect) return; // acknowledged already
  s.j.outbox = s.j.outbox.filter((e) => e.key !== key);
  switch (effect.kind) {
    case "DispatchAgent": {
      const i = s.find(effect.taskId);
      if (i !== undefined && s.task(i).attempt === effect.attempt && typeof result.workflowRunId === "number") s.edit(i).workflowRunId = result.workflowRunId;
      return;
    }
    case "PrepareBranch": {
      // The upstream branches left to a refinery's agent: kept with the attempt, so a dispatch that
      // is tried again (after a failure, or by another process) still names them.
      const conflicts = Array.isArray(result.conflicts) ? result.conflicts.filter((c): c is string => typeof c === "string") : [];
      const i = s.find(effect.taskId);
      if (conflicts.length === 0 || i === undefined) return;
      const t = s.task(i);
      if (t.attempt === effect.attempt && t.status === "RUNNING") s.edit(i).context = { ...(t.context ?? {}), conflicts };
      return;
    }
    case "OpenChangeRequest":
      if (typeof result.issueNumber === "number") {
        const n = result.issueNumber;
        s.j.changeRequests = s.j.changeRequests.map((c) => (c.id === effect.crId ? { ...c, issueNumber: n } : c));
      }
      return;
    case "MergePullRequest":
      if (typeof result.mergeSha === "string") {
        if (isFollowup(s, effect.taskId)) return followupMerged(s, effect.taskId);
        return prMerged(s, effect.taskId, effect.attempt, result.mergeSha, "effect.done");
      }
      return;
    case "SpawnFollowup":
      return;
    default:
      return;
  }
}

function effectFailed(s: Step, key: string, error: string): void {
  const effect = s.j.outbox.find((e) => e.key === key);
  if (!effect) return;
  s.j.outbox = s.j.outbox.filter((e) => e.key !== key);
  s.reject("effect.failed", `${effect.kind} failed: ${error}`, "taskId" in effect ? effect.taskId : undefined);
  if (effect.kind === "PrepareBranch" || effect.kind === "DispatchAgent") {
    const i = s.find(effect.taskId);
    if (i === undefined) return;
    const t = s.task(i);
    if (t.attempt !== effect.attempt || t.status !== "RUNNING") return;
    // Without its branch or its job the attempt cannot run: drop the sibling effect and fail it.
    s.j.outbox = s.j.outbox.filter((e) => !(e.kind === "DispatchAgent" && e.taskId === t.id && e.attempt === t.attempt));
    fail(s, i, "effect.failed", { error: `${effect.kind === "PrepareBranch" ? "preparing the branch" : "dispatching the agent"} failed: ${error}`, retryable: true, counted: true });
  } else if (effect.kind === "SpawnFollowup") {
    followupFinished(s, effect.followupId, false);
  } else if (effect.kind === "MergePullRequest") {
    // The task stays MERGE_READY (its only way on is MERGED), so a merge refused for good is never
    // dropped in silence: the reason goes on the task and on its pull request for a person to act.
    const i = s.find(effect.taskId);
    if (i === undefined || s.task(i).attempt !== effect.attempt || s.task(i).status !== "MERGE_READY") return;
    s.edit(i).lastError = `merge refused: ${error}`;
    s.effect({
      key: `merge-refused:${effect.taskId}:${effect.attempt}`,
      kind: "PostComment",
      target: { on: "task", taskId: effect.taskId, attempt: effect.attempt },
      body: `Forge did not merge \`${effect.taskId}\` (attempt ${effect.attempt}): ${error}. Check the new head and merge the pull request yourself (Forge then carries on), or comment \`/forge cancel\` on the run's tracker to stop the run.`,
    });
  }
}

// ---------------------------------------------------------------- time, scheduling, completion

function tick(s: Step): void {
  const p = s.j.pause;
  if (p.usageLimitUntil !== undefined && Date.parse(p.usageLimitUntil) <= s.now) {
    const { usageLimitUntil: _gone, ...rest } = p;
    s.j.pause = rest;
    s.emit("run.resumed", undefined, { reason: "usage_limit" });
  }
  const startLimit = s.config.timeouts.dispatch_start_minutes * 60_000;
  const liveLimit = s.config.timeouts.liveness_minutes * 60_000;
  for (const i of [...s.derived.running].sort((a, b) => a - b)) {
    const t = s.task(i);
    if (!t.startedAt) {
      if (t.dispatchedAt && s.now - Date.parse(t.dispatchedAt) > startLimit) stale(s, i, "tick", "the dispatched job never started");
    } else {
      const last = Date.parse(t.lastHeartbeat ?? t.startedAt);
      if (s.now - last > liveLimit) stale(s, i, "tick", "no sign of life from the job");
    }
  }
}

/** After every input: dispatch what is ready (unless paused), then check for completion. */
function settle(s: Step): void {
  if (s.j.status === "running" && s.j.merged === s.j.tasks.length) {
    s.j.status = "completed";
    s.j.completedAt = s.iso(s.now);
    s.emit("run.completed", undefined, { duration: s.now - Date.parse(s.j.createdAt), taskCount: s.j.tasks.length });
    s.effect({ key: "final-pr", kind: "OpenFinalPullRequest" });
    if (s.config.branch_cleanup === "on_complete") {
      const branches: string[] = [];
      for (const t of s.j.tasks) for (let a = 1; a <= t.attempt; a++) branches.push(branchName(s.config, s.j.runId, t.id, a));
      for (const f of s.j.followups) branches.push(f.branch);
      s.effect({ key: "cleanup:run", kind: "CleanupBranches", branches });
    }
    return;
  }
  if (s.j.status !== "running" || s.paused) return;
  schedule(s);
}

function schedule(s: Step): void {
  let running = s.derived.running.size;
  for (const f of s.j.followups) if (f.status === "running") running++;
  let capacity = s.config.max_parallel_agents - running;
  if (capacity <= 0) return;

  // The ready set is kept in dispatch order (most downstream work first, then plan order): take
  // the first ones whose backoff is over.
  const picked: number[] = [];
  for (const i of s.derived.ready) {
    if (picked.length >= capacity) break;
    const t = s.task(i);
    if (t.notBefore !== undefined && Date.parse(t.notBefore) > s.now) continue;
    picked.push(i);
  }
  for (const i of picked) dispatch(s, i);
  capacity -= picked.length;

  for (const f of s.j.followups) {
    if (capacity <= 0) break;
    if (f.status !== "queued") continue;
    setFollowup(s, f.id, { status: "running" });
    s.emit("followup.spawned", f.sourceTaskId, { followupId: f.id, sourceTaskId: f.sourceTaskId, reason: f.text, branch: f.branch });
    s.effect({ key: `followup:${f.id}`, kind: "SpawnFollowup", followupId: f.id, sourceTaskId: f.sourceTaskId, text: f.text, branch: f.branch });
    capacity--;
  }
}

function dispatch(s: Step, i: number): void {
  const t = s.task(i);
  const attempt = t.dispatchedAttempt + 1;
  const { notBefore: _nb, context, ...kept } = t;
  const branch = branchName(s.config, s.j.runId, t.id, attempt);
  s.replaceTask(i, { ...kept, attempt, dispatchedAttempt: attempt, branch, dispatchedAt: s.iso(s.now) });
  const node = s.node(i);
  s.emit("task.scheduled", t.id, { type: node.agentType, dependencies: node.dependencies });
  if (!s.move(i, "RUNNING", "tick")) return;
  s.emit("task.started", t.id, { agentId: agentId(s.j.runId, t.id, attempt), type: node.agentType, branch, attempt });
  const merge: string[] = [];
  if (s.idx.isRefinery[i]) {
    const targets: string[] = [];
    for (const d of s.idx.deps[i]!) {
      const dt = s.task(d);
      targets.push(dt.id);
      if (dt.status === "MERGE_READY" && dt.branch) merge.push(dt.branch);
    }
    s.emit("refinery.started", t.id, { agentId: agentId(s.j.runId, t.id, attempt), mergeTargets: targets });
  }
  s.effect({ key: `branch:${t.id}:${attempt}`, kind: "PrepareBranch", taskId: t.id, attempt, branch, from: s.j.integrationBranch, merge });
  s.effect({
    key: `dispatch:${t.id}:${attempt}`,
    kind: "DispatchAgent",
    taskId: t.id,
    attempt,
    branch,
    agentType: node.agentType,
    // What the previous attempt left for this one; a previous attempt's conflicts are not this one's.
    ...(context && (context.answer !== undefined || context.refinement !== undefined)
      ? { context: { ...(context.refinement !== undefined ? { refinement: context.refinement } : {}), ...(context.answer !== undefined ? { answer: context.answer } : {}) } }
      : {}),
  });
}

// ---------------------------------------------------------------- creating a run

export interface NewRun {
  runId: string;
  planId: string;
  planCommit: string;
  dagHash: string;
  nodes: readonly PlanNodeInput[];
  integrationBranch: string;
  baseBranch: string;
}

function newTaskState(id: string): TaskState {
  return { id, status: "PENDING", attempt: 0, retries: 0, blockers: 0, dispatchedAttempt: 0 };
}

function countBlockers(index: PlanIndex, k: number, tasks: readonly TaskState[]): number {
  let blockers = 0;
  for (const d of index.deps[k]!) {
    const st = tasks[d]!.status;
    const satisfied = st === "MERGED" || (index.isRefinery[k] && st === "MERGE_READY");
    if (!satisfied) blockers++;
  }
  return blockers;
}

/** A new run's journal (seed 003: run.started), followed by the first scheduling decision. */
export function startRun(run: NewRun, now: number, config: ForgeConfig): Decision {
  const nodes: PlanNode[] = run.nodes.map((n) => ({
    id: n.id,
    kind: n.kind,
    agentType: n.agentType,
    title: n.title ?? "",
    dependencies: n.dependencies.slice(),
    paths: n.paths ?? [],
    priority: 0,
  }));
  const index = buildIndex(nodes);
  const priorities = downstreamCounts(index);
  nodes.forEach((n, k) => (n.priority = priorities[k]!));
  const tasks = nodes.map((n) => newTaskState(n.id));
  tasks.forEach((t, k) => (t.blockers = countBlockers(index, k, tasks)));
  const journal: Journal = {
    version: 1,
    runId: run.runId,
    planId: run.planId,
    planCommit: run.planCommit,
    dagHash: run.dagHash,
    integrationBranch: run.integrationBranch,
    baseBranch: run.baseBranch,
    createdAt: new Date(now).toISOString(),
    status: "running",
    seq: 0,
    plan: { nodes, overlays: [] },
    tasks,
    merged: 0,
    pause: { manual: false, changeRequests: [] },
    changeRequests: [],
    followups: [],
    outbox: [],
  };
  const s = new Step(journal, now, config);
  s.emit("run.started", undefined, { planId: run.planId, dagHash: run.dagHash, planCommit: run.planCommit, taskCount: nodes.length });
  settle(s);
  return s.finish();
}
