/**
 * Graph algorithms over plan nodes: cycles (Tarjan's strongly connected components) and
 * topological order (Kahn). Iterative, linear in nodes + edges, so a 10,000-long chain is fine.
 * An edge `a → b` means "a depends on b".
 */

/** Anything with an id and the ids it depends on: dag.json nodes, task frontmatter, journal plan nodes. */
export interface GraphInput {
  readonly id: string;
  readonly dependencies: readonly string[];
}

/** The graph in compressed form: `deps(v) = targets[start[v] .. start[v+1])`, `depIndex` = position in the node's `dependencies`. */
export interface IndexedGraph {
  ids: string[];
  index: Map<string, number>;
  start: Int32Array;
  targets: Int32Array;
  depIndex: Int32Array;
}

/**
 * Indexes nodes (the first node of an id wins) keeping only edges to known nodes, without
 * self edges and without repeats; those are reported elsewhere.
 */
export function indexGraph(nodes: readonly GraphInput[]): IndexedGraph {
  const index = new Map<string, number>();
  const ids: string[] = [];
  const kept: GraphInput[] = [];
  for (const node of nodes) {
    if (index.has(node.id)) continue;
    index.set(node.id, ids.length);
    ids.push(node.id);
    kept.push(node);
  }
  let edges = 0;
  for (const node of kept) edges += node.dependencies.length;
  const start = new Int32Array(ids.length + 1);
  const targets = new Int32Array(edges);
  const depIndex = new Int32Array(edges);
  const lastSeen = new Int32Array(ids.length).fill(-1);
  let e = 0;
  for (let v = 0; v < kept.length; v++) {
    start[v] = e;
    const deps = kept[v]!.dependencies;
    for (let j = 0; j < deps.length; j++) {
      const w = index.get(deps[j]!);
      if (w === undefined || w === v || lastSeen[w] === v) continue;
      lastSeen[w] = v;
      targets[e] = w;
      depIndex[e] = j;
      e++;
    }
  }
  start[kept.length] = e;
  return { ids, index, start, targets: targets.subarray(0, e), depIndex: depIndex.subarray(0, e) };
}

/** A cycle as node indices `[a, b, c, a]`; `depIndex[i]` is the position of `path[i + 1]` in `path[i]`'s dependencies. */
export interface IndexedCycle {
  path: number[];
  depIndex: number[];
}

/**
 * One cycle per strongly connected component of more than one node: the shortest cycle through
 * the component's first node (in input order). Self edges are not cycles here.
 */
export function findCyclesIndexed(g: IndexedGraph): IndexedCycle[] {
  const n = g.ids.length;
  const { start, targets } = g;
  const order = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const stack = new Int32Array(n);
  const callNode = new Int32Array(n);
  const callEdge = new Int32Array(n);
  const component = new Int32Array(n).fill(-1);
  const components: number[][] = [];
  let sp = 0;
  let counter = 0;
  for (let root = 0; root < n; root++) {
    if (order[root] !== -1) continue;
    let csp = 0;
    order[root] = low[root] = counter++;
    stack[sp++] = root;
    onStack[root] = 1;
    callNode[csp] = root;
    callEdge[csp++] = start[root]!;
    while (csp > 0) {
      const v = callNode[csp - 1]!;
      const e = callEdge[csp - 1]!;
      if (e < start[v + 1]!) {
        callEdge[csp - 1] = e + 1;
        const w = targets[e]!;
        if (order[w] === -1) {
          order[w] = low[w] = counter++;
          stack[sp++] = w;
          onStack[w] = 1;
          callNode[csp] = w;
          callEdge[csp++] = start[w]!;
        } else if (onStack[w]) {
          if (order[w]! < low[v]!) low[v] = order[w]!;
        }
        continue;
      }
      csp--;
      if (csp > 0) {
        const u = callNode[csp - 1]!;
        if (low[v]! < low[u]!) low[u] = low[v]!;
      }
      if (low[v] === order[v]) {
        const members: number[] = [];
        let w: number;
        do {
          w = stack[--sp]!;
          onStack[w] = 0;
          members.push(w);
        } while (w !== v);
        if (members.length > 1) {
          for (const m of members) component[m] = components.length;
          components.push(members);
        }
      }
    }
  }

  const cycles: IndexedCycle[] = [];
  const parent = new Int32Array(n).fill(-1);
  for (let c = 0; c < components.length; c++) {
    const members = components[c]!;
    let first = members[0]!;
    for (const m of members) if (m < first) first = m;
    cycles.push(shortestCycleThrough(g, first, component, c, parent));
    for (const m of members) parent[m] = -1;
  }
  return cycles.sort((a, b) => a.path[0]! - b.path[0]!);
}

/** Breadth-first search inside one component from `s` back to `s`. */
function shortestCycleThrough(g: IndexedGraph, s: number, component: Int32Array, c: number, parent: Int32Array): IndexedCycle {
  const { start, targets } = g;
  const queue = [s];
  parent[s] = s;
  for (let head = 0; head < queue.length; head++) {
    const v = queue[head]!;
    for (let e = start[v]!; e < start[v + 1]!; e++) {
      const w = targets[e]!;
      if (component[w] !== c) continue;
      if (w === s) {
        const back: number[] = [];
        for (let x = v; x !== s; x = parent[x]!) back.push(x);
        const path = [s, ...back.reverse(), s];
        return { path, depIndex: path.slice(0, -1).map((x, i) => depIndexOf(g, x, path[i + 1]!)) };
      }
      if (parent[w] === -1) {
        parent[w] = v;
        queue.push(w);
      }
    }
  }
  // Unreachable: every node of a strongly connected component lies on a cycle through `s`.
  return { path: [s, s], depIndex: [0] };
}

function depIndexOf(g: IndexedGraph, v: number, w: number): number {
  for (let e = g.start[v]!; e < g.start[v + 1]!; e++) if (g.targets[e] === w) return g.depIndex[e]!;
  return 0;
}

/** Every cycle (one per strongly connected component), as ids: `["a", "b", "c", "a"]`. */
export function findCycles(nodes: readonly GraphInput[]): string[][] {
  const g = indexGraph(nodes);
  return findCyclesIndexed(g).map((c) => c.path.map((v) => g.ids[v]!));
}

/**
 * Ids in an order where every node comes after its dependencies (Kahn's algorithm, ties broken by
 * input order), or a cycle when there is none. Unknown dependencies and self edges are ignored.
 */
export function topoOrder(nodes: readonly GraphInput[]): { ok: true; order: string[] } | { ok: false; cycle: string[] } {
  const g = indexGraph(nodes);
  const n = g.ids.length;
  const remaining = new Int32Array(n);
  const dependents = new Int32Array(g.targets.length);
  const dependentStart = new Int32Array(n + 1);
  for (let e = 0; e < g.targets.length; e++) {
    const at = g.targets[e]! + 1;
    dependentStart[at] = dependentStart[at]! + 1;
  }
  for (let v = 0; v < n; v++) {
    dependentStart[v + 1] = dependentStart[v + 1]! + dependentStart[v]!;
    remaining[v] = g.start[v + 1]! - g.start[v]!;
  }
  const fill = dependentStart.slice(0, n);
  for (let v = 0; v < n; v++)
    for (let e = g.start[v]!; e < g.start[v + 1]!; e++) {
      const w = g.targets[e]!;
      dependents[fill[w]!] = v;
      fill[w] = fill[w]! + 1;
    }
  const queue: number[] = [];
  for (let v = 0; v < n; v++) if (remaining[v] === 0) queue.push(v);
  for (let head = 0; head < queue.length; head++) {
    const w = queue[head]!;
    for (let i = dependentStart[w]!; i < dependentStart[w + 1]!; i++) {
      const v = dependents[i]!;
      remaining[v] = remaining[v]! - 1;
      if (remaining[v] === 0) queue.push(v);
    }
  }
  if (queue.length === n) return { ok: true, order: queue.map((v) => g.ids[v]!) };
  const cycle = findCyclesIndexed(g)[0];
  return { ok: false, cycle: cycle ? cycle.path.map((v) => g.ids[v]!) : [] };
}
