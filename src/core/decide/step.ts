/** The working copy of one decision, and what a decision returns. */
import { computeDerived, DerivedDraft, derivedOf, remember, type Derived } from "../derived.js";
import type { Effect } from "../effects.js";
import type { LeafInput } from "../inputs.js";
import type { AttemptRecord, Journal, PlanNode, RevisionRecord, TaskState } from "../journal.js";
import { planIndex, type PlanIndex } from "../plan-index.js";
import type { TaskStatus } from "../schemas/common.js";
import type { ForgeConfig } from "../schemas/config.js";
import type { EventData, EventType, ForgeEvent } from "../schemas/events.js";
import { checkTransition } from "../state-machine.js";
import { attemptRef } from "../task-rules.js";
import * as effects from "./effects.js";

/** The kind of an input, and the input of one kind. */
export type InputKind = LeafInput["kind"];
export type InputOf<K extends InputKind> = Extract<LeafInput, { kind: K }>;

/** A transition that was applied. */
export interface Transition {
  taskId: string;
  attempt: number;
  from: TaskStatus;
  to: TaskStatus;
}

/** An input (or part of one) that changed nothing, and why. Commands' rejections are shown to the person. */
export interface Rejection {
  input: InputKind;
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

/**
 * The mutable working copy of one decision. Nothing of the input journal is ever written:
 * arrays are copied on first write (`tasks` is an array so the copy is a cheap slice, even for
 * 10,000 nodes).
 */
export class Step {
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
  /** Tasks whose attempt (and whose revision) this decision copied already, so writing them writes its own. */
  private readonly touchedAttempt = new Set<number>();
  private readonly touchedRevision = new Set<number>();
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

  /**
   * Replace task i with a fresh object (no `delete`, so every task object keeps one shape). Its
   * attempt and revision may be shared with the input journal: they are copied again before a write.
   */
  replaceTask(i: number, t: TaskState): void {
    this.edit(i);
    this.j.tasks[i] = t;
    this.touchedAttempt.delete(i);
    this.touchedRevision.delete(i);
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
  iso(ms: number): string {
    return new Date(ms).toISOString();
  }

  /**
   * The task index when the input names the task's current attempt; stale or unknown inputs change
   * nothing. A retried task has no current attempt until its next is dispatched.
   */
  current(input: { kind: InputKind; taskId: string; attempt: number }): number | undefined {
    const i = this.find(input.taskId);
    if (i === undefined) {
      this.reject(input.kind, `unknown task ${input.taskId}`, input.taskId);
      return undefined;
    }
    const t = this.task(i);
    if (t.attempts !== input.attempt || !t.attempt) {
      const now = t.attempt ? `${t.attempts}` : t.attempts ? `none since ${t.attempts} was retried` : "none yet";
      this.reject(input.kind, `attempt ${input.attempt} is not the current attempt (${now})`, input.taskId);
      return undefined;
    }
    return i;
  }

  /** Task i's current attempt (a task with none is a caller's error: `current` or the status says there is one). */
  attempt(i: number): AttemptRecord {
    const a = this.task(i).attempt;
    if (!a) throw new Error(`task ${this.task(i).id} has no current attempt`);
    return a;
  }

  /** The current revision of task i's attempt. */
  revision(i: number): RevisionRecord {
    return this.attempt(i).revision;
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

  /** A writable copy of task i's current attempt (the revision still shared until `editRevision`). */
  editAttempt(i: number): AttemptRecord {
    const t = this.edit(i);
    if (!t.attempt) throw new Error(`task ${t.id} has no current attempt`);
    if (!this.touchedAttempt.has(i)) {
      t.attempt = { ...t.attempt };
      this.touchedAttempt.add(i);
    }
    return t.attempt;
  }

  /** A writable copy of the current revision of task i's attempt. */
  editRevision(i: number): RevisionRecord {
    const a = this.editAttempt(i);
    if (!this.touchedRevision.has(i)) {
      a.revision = { ...a.revision };
      this.touchedRevision.add(i);
    }
    return a.revision;
  }

  emit<T extends EventType>(type: T, taskId: string | undefined, data: EventData<T>): void {
    const seq = this.j.seq + 1;
    this.j.seq = seq;
    const event = { eventId: `${this.j.runId}:${seq}`, seq, timestamp: this.timestamp, type, runId: this.j.runId, data } as ForgeEvent;
    if (taskId !== undefined) event.taskId = taskId;
    this.events.push(event);
    this.trackerDirty = true;
  }

  /** The tracker shows something that changed without an event of its own (a running task's progress). */
  touchTracker(): void {
    this.trackerDirty = true;
  }

  /** Add an effect to the outbox; one with the same key, pending or decided just now, is replaced (latest wins). */
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

  /** Take a pending effect out of the outbox (its reason is gone), whether decided now or before. */
  dropEffect(key: string): void {
    if (this.j.outbox.some((o) => o.key === key)) this.j.outbox = this.j.outbox.filter((o) => o.key !== key);
    const mine = this.effects.findIndex((o) => o.key === key);
    if (mine >= 0) this.effects.splice(mine, 1);
  }

  reject(input: InputKind, reason: string, taskId?: string): void {
    this.rejections.push(taskId === undefined ? { input, reason, leaf: this.leaf } : { input, taskId, reason, leaf: this.leaf });
  }

  /**
   * Apply `to` to task i through the state machine. True when applied; false when it was a no-op
   * (the task already made it) or invalid (the reason is recorded).
   */
  move(i: number, to: TaskStatus, input: InputKind): boolean {
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
    this.transitions.push({ taskId: t.id, attempt: t.attempts, from, to });
    this.onStatusChange(i, from, to);
    return true;
  }

  private onStatusChange(i: number, from: TaskStatus, to: TaskStatus): void {
    const t = this.task(i);
    // A revision (MERGE_READY → RUNNING) takes back what MERGE_READY gave its refineries; it starts
    // only while they are PENDING (src/core/decide/iterations.ts), so none has been dispatched on it.
    if (from === "MERGE_READY" && to === "RUNNING") {
      for (const d of this.idx.dependents[i]!) {
        if (!this.idx.isRefinery[d]) continue;
        this.edit(d).blockers += 1;
        this.reindex(d);
      }
    }
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
    if (t.attempts > 0 && to !== "PENDING") this.effect(effects.checkRun(attemptRef(t), to));
  }

  /** Continue the decision on an amended plan (overlay), with a new index. */
  replacePlan(plan: Journal["plan"], tasks: TaskState[]): void {
    this.j.plan = plan;
    this.j.tasks = tasks;
    this.idx = planIndex(plan);
    // `tasks` is a fresh array, but its task objects may still be shared with the input journal.
    this.tasksCopied = true;
    this.touched.clear();
    this.touchedAttempt.clear();
    this.touchedRevision.clear();
    this.draft = new DerivedDraft(computeDerived(tasks, plan.nodes));
  }

  finish(): Decision {
    if (this.trackerDirty) this.effect(effects.updateTracker(this.j.seq));
    remember(this.j, this.derived);
    return { journal: this.j, events: this.events, effects: this.effects, transitions: this.transitions, rejections: this.rejections };
  }
}
