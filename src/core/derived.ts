import type { Journal, PlanNode, TaskState } from "./journal.js";
import { IN_FLIGHT_STATUSES, isReady } from "./task-rules.js";

/**
 * Indexes of a journal that `decide` keeps incrementally so one decision never scans every task:
 * the ready set (PENDING, no blockers) in dispatch order, and the tasks in flight. They are derived
 * data — never stored — memoised per journal object: a decision on a journal `decide` produced
 * starts from the previous indexes; a journal read from JSON pays one O(n) pass.
 */
export interface Derived {
  /** Ready task positions, by priority (downstream work) descending, then plan order. */
  readonly ready: readonly number[];
  /** Positions of RUNNING, DONE and MERGE_READY tasks. */
  readonly inFlight: ReadonlySet<number>;
  /** Positions of RUNNING tasks. */
  readonly running: ReadonlySet<number>;
}

const memo = new WeakMap<Journal, Derived>();

export function derivedOf(journal: Journal): Derived {
  let d = memo.get(journal);
  if (!d) {
    d = computeDerived(journal.tasks, journal.plan.nodes);
    memo.set(journal, d);
  }
  return d;
}

export function remember(journal: Journal, d: Derived): void {
  memo.set(journal, d);
}

export function computeDerived(tasks: readonly TaskState[], nodes: readonly PlanNode[]): Derived {
  const ready: number[] = [];
  const inFlight = new Set<number>();
  const running = new Set<number>();
  tasks.forEach((t, i) => {
    if (isReady(t)) ready.push(i);
    if (IN_FLIGHT_STATUSES.has(t.status)) inFlight.add(i);
    if (t.status === "RUNNING") running.add(i);
  });
  ready.sort((a, b) => nodes[b]!.priority - nodes[a]!.priority || a - b);
  return { ready, inFlight, running };
}

/** A writable copy, for one decision. */
export class DerivedDraft {
  ready: number[];
  inFlight: Set<number>;
  running: Set<number>;

  constructor(from: Derived) {
    this.ready = from.ready.slice();
    this.inFlight = new Set(from.inFlight);
    this.running = new Set(from.running);
  }

  /** Bring task i's memberships up to date with its state. */
  update(i: number, t: TaskState, nodes: readonly PlanNode[]): void {
    const pos = this.#position(i, nodes);
    const present = this.ready[pos] === i;
    if (isReady(t) && !present) this.ready.splice(pos, 0, i);
    else if (!isReady(t) && present) this.ready.splice(pos, 1);
    if (IN_FLIGHT_STATUSES.has(t.status)) this.inFlight.add(i);
    else this.inFlight.delete(i);
    if (t.status === "RUNNING") this.running.add(i);
    else this.running.delete(i);
  }

  /** Binary search for i's place in the ready order. */
  #position(i: number, nodes: readonly PlanNode[]): number {
    const p = nodes[i]!.priority;
    let lo = 0;
    let hi = this.ready.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const m = this.ready[mid]!;
      const pm = nodes[m]!.priority;
      if (pm > p || (pm === p && m < i)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
