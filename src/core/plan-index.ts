import type { Journal, PlanNode } from "./journal.js";

/**
 * Indexes derived from the pinned plan: id → position, dependencies and dependents by position, and
 * which tasks a refinery merges. The plan object only changes when an overlay is applied, so the
 * index is cached per plan object and every journal derived from it shares the cache.
 */
export interface PlanIndex {
  readonly indexOf: ReadonlyMap<string, number>;
  readonly deps: readonly (readonly number[])[];
  readonly dependents: readonly (readonly number[])[];
  readonly isRefinery: readonly boolean[];
  /** True when every dependent is a refinery (and there is at least one): its refinery merges it (see docs/executor.md#refineries). */
  readonly mergedByRefinery: readonly boolean[];
}

const cache = new WeakMap<Journal["plan"], PlanIndex>();

export function planIndex(plan: Journal["plan"]): PlanIndex {
  let index = cache.get(plan);
  if (!index) {
    index = buildIndex(plan.nodes);
    cache.set(plan, index);
  }
  return index;
}

export function buildIndex(nodes: readonly PlanNode[]): PlanIndex {
  const indexOf = new Map<string, number>();
  nodes.forEach((n, i) => indexOf.set(n.id, i));
  const deps: number[][] = [];
  const dependents: number[][] = nodes.map(() => []);
  nodes.forEach((n, i) => {
    const d: number[] = [];
    for (const id of n.dependencies) {
      const j = indexOf.get(id);
      if (j === undefined) throw new Error(`plan node ${n.id} depends on unknown node ${id}`);
      d.push(j);
      dependents[j]!.push(i);
    }
    deps.push(d);
  });
  const isRefinery = nodes.map((n) => n.kind === "refinery");
  const mergedByRefinery = dependents.map((ds) => ds.length > 0 && ds.every((j) => isRefinery[j]));
  return { indexOf, deps, dependents, isRefinery, mergedByRefinery };
}

/** Kahn's algorithm; returns positions in topological order, or null when the graph has a cycle. */
export function topologicalOrder(index: Pick<PlanIndex, "deps" | "dependents">): number[] | null {
  const n = index.deps.length;
  const indegree = index.deps.map((d) => d.length);
  const order: number[] = [];
  for (let i = 0; i < n; i++) if (indegree[i] === 0) order.push(i);
  for (let k = 0; k < order.length; k++) {
    for (const j of index.dependents[order[k]!]!) {
      if (--indegree[j]! === 0) order.push(j);
    }
  }
  return order.length === n ? order : null;
}

function popcount32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/**
 * Priority of each node: how many nodes lie downstream of it (transitively). Ready tasks that
 * unblock the most work go first. Bitsets keep this O(n · e / 32).
 */
export function downstreamCounts(index: Pick<PlanIndex, "deps" | "dependents">): number[] {
  const n = index.deps.length;
  const order = topologicalOrder(index);
  if (!order) throw new Error("the plan has a cycle");
  const words = (n + 31) >>> 5;
  const sets = new Uint32Array(n * words);
  const counts = new Array<number>(n).fill(0);
  for (let k = n - 1; k >= 0; k--) {
    const v = order[k]!;
    const off = v * words;
    for (const d of index.dependents[v]!) {
      const doff = d * words;
      for (let w = 0; w < words; w++) sets[off + w]! |= sets[doff + w]!;
      sets[off + (d >>> 5)]! |= 1 << (d & 31);
    }
    let c = 0;
    for (let w = 0; w < words; w++) c += popcount32(sets[off + w]!);
    counts[v] = c;
  }
  return counts;
}
