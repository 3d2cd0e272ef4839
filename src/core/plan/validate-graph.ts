/** The graph a plan's files describe, and the structural rules every DAG must satisfy. */
import { findCyclesIndexed, type IndexedGraph } from "./graph.js";
import { fieldLines } from "./parse.js";
import { problem, type Location, type Problem } from "./problem.js";
import type { TaskEntry } from "./validate-files.js";
import { overlayAt, type OverlayDep } from "./validate-overlays.js";

/**
 * The graph the structural rules check, as parallel arrays (ids unique). `locate(v, j)` says where
 * node v's j-th dependency is written, `locate(v)` where its dependency list is; both are called
 * only for problems, so nothing is allocated per node on a valid plan.
 */
export interface StructureInput {
  ids: readonly string[];
  deps: readonly (readonly string[])[];
  refinery: readonly (boolean | undefined)[];
  locate(v: number, j?: number): Location;
}

export function planGraph(tasks: Map<string, TaskEntry>, overlayDeps: Map<string, OverlayDep[]>): StructureInput {
  const entries = [...tasks.values()];
  const ids: string[] = new Array<string>(entries.length);
  const deps: (readonly string[])[] = new Array<readonly string[]>(entries.length);
  const refinery: (boolean | undefined)[] = new Array<boolean | undefined>(entries.length);
  for (let v = 0; v < entries.length; v++) {
    const e = entries[v]!;
    const extra = overlayDeps.get(e.id);
    ids[v] = e.id;
    deps[v] = extra ? [...e.deps, ...extra.map((d) => d.from)] : e.deps;
    refinery[v] = e.agentType === undefined ? undefined : e.agentType === "refinery";
  }
  return {
    ids,
    deps,
    refinery,
    locate(v, j) {
      const e = entries[v]!;
      const lines = fieldLines(e.task);
      if (j === undefined) return { file: e.task.file, line: lines.dependencies ?? lines.type, field: "dependencies" };
      if (j < e.deps.length) {
        const field = `dependencies[${e.depPos?.[j] ?? j}]`;
        return { file: e.task.file, line: lines[field] ?? lines.dependencies, field };
      }
      const d = overlayDeps.get(e.id)![j - e.deps.length]!;
      return overlayAt(d.overlay, `added_edges[${d.pos}]`);
    },
  };
}

/**
 * Unknown, self and repeated dependencies, refineries without dependencies, cycles. Dependencies on
 * `reported` ids (overlay tasks without a file) were reported already. One pass builds the
 * compressed graph that the cycle search then walks.
 */
export function checkStructure(input: StructureInput, out: Problem[], reported: ReadonlySet<string> = new Set()): void {
  const { ids, deps, refinery } = input;
  const n = ids.length;
  const index = new Map<string, number>();
  for (let v = 0; v < n; v++) index.set(ids[v]!, v);
  let edges = 0;
  for (let v = 0; v < n; v++) edges += deps[v]!.length;
  const start = new Int32Array(n + 1);
  const targets = new Int32Array(edges);
  const depIndex = new Int32Array(edges);
  const stamp = new Int32Array(n).fill(-1);
  let e = 0;
  for (let v = 0; v < n; v++) {
    start[v] = e;
    const list = deps[v]!;
    for (let j = 0; j < list.length; j++) {
      const d = list[j]!;
      const w = index.get(d);
      if (w === v) out.push(problem(input.locate(v, j), "self-dependency", `${d} depends on itself`));
      else if (w === undefined) {
        if (!reported.has(d))
          out.push(problem(input.locate(v, j), "unknown-dependency", `unknown dependency ${JSON.stringify(d)}: no task has this id`));
      } else if (stamp[w] === v) out.push(problem(input.locate(v, j), "duplicate-dependency", `${JSON.stringify(d)} is listed twice`));
      else {
        stamp[w] = v;
        targets[e] = w;
        depIndex[e++] = j;
      }
    }
    if (refinery[v] && list.length === 0)
      out.push(
        problem(
          input.locate(v),
          "refinery-without-dependencies",
          `refinery ${ids[v]!} has no dependencies: a refinery integrates upstream work`,
        ),
      );
  }
  start[n] = e;
  const g: IndexedGraph = { ids: ids as string[], index, start, targets: targets.subarray(0, e), depIndex: depIndex.subarray(0, e) };
  for (const cycle of findCyclesIndexed(g)) {
    // Point at an edge an overlay added, when there is one: the plan before it was acyclic.
    const edges = cycle.depIndex.map((j, i) => input.locate(cycle.path[i]!, j));
    let at = edges.findIndex((loc) => loc.file.startsWith("overlays/"));
    if (at === -1) at = 0;
    const nodes = [...cycle.path.slice(at, -1), ...cycle.path.slice(0, at + 1)];
    const path = nodes.map((v) => ids[v]!).join(" → ");
    out.push(problem(edges[at]!, "cycle", `dependency cycle ${path} (→ reads "depends on")`));
  }
}
