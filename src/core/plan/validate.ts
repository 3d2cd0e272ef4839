/**
 * The rules a plan folder must satisfy, as pure functions over parsed data (see parse.ts): no I/O,
 * no clock. Linear in the size of the plan; the graph rules use the iterative algorithms of graph.ts.
 *
 * The DAG a plan *means* is built from its files: the base plan is every task file no overlay adds,
 * with its frontmatter dependencies; each overlay, in number order, adds its tasks (from their
 * files) and its edges. dag.json must equal that DAG.
 */
import { ID_PATTERN, isId } from "../schemas/common.js";
import type { Dag } from "../schemas/dag.js";
import type { ParsedPlan } from "./parse.js";
import { problem, sortProblems, type Problem } from "./problem.js";
import { checkDagJson } from "./validate-dag-json.js";
import { checkFiles, collectTasks } from "./validate-files.js";
import { checkStructure, planGraph } from "./validate-graph.js";
import { collectOverlays, replayOverlays } from "./validate-overlays.js";

export function validatePlan(plan: ParsedPlan): Problem[] {
  const out: Problem[] = [];
  checkFiles(plan, out);
  const tasks = collectTasks(plan, out);
  const overlays = collectOverlays(plan, out);
  const { addedBy, overlayDeps, missingFiles } = replayOverlays(tasks, overlays, out);
  checkStructure(planGraph(tasks, overlayDeps), out, missingFiles);
  checkDagJson(plan, tasks, addedBy, overlayDeps, missingFiles, out);
  return sortProblems(out);
}

/** The rules a DAG must satisfy on its own: ids, type/agentType, totals, dependencies, refineries, cycles. */
export function validateDag(dag: Dag, file = "dag.json"): Problem[] {
  const out: Problem[] = [];
  const seen = new Map<string, number>();
  const positions: number[] = [];
  const ids: string[] = [];
  const deps: (readonly string[])[] = [];
  const refinery: boolean[] = [];
  let refineries = 0;
  for (let pos = 0; pos < dag.nodes.length; pos++) {
    const n = dag.nodes[pos]!;
    if (n.type === "refinery") refineries++;
    if (!isId(n.id))
      out.push(
        problem(
          { file, field: `nodes[${pos}].id` },
          "bad-id",
          ID_PATTERN.test(n.id)
            ? `${JSON.stringify(n.id)} cannot be part of a git branch name: no '..', and no '.lock' or '.' at its end`
            : `${JSON.stringify(n.id)} is not a valid id`,
        ),
      );
    const first = seen.get(n.id);
    if (first !== undefined) {
      out.push(problem({ file, field: `nodes[${pos}].id` }, "duplicate-id", `node ${JSON.stringify(n.id)} is also nodes[${first}]`));
      continue;
    }
    seen.set(n.id, pos);
    if ((n.type === "refinery") !== (n.agentType === "refinery"))
      out.push(problem({ file, field: `nodes[${pos}].type` }, "type-mismatch", `type ${n.type} does not go with agentType ${n.agentType}`));
    positions.push(pos);
    ids.push(n.id);
    deps.push(n.dependencies);
    refinery.push(n.type === "refinery");
  }
  const taskCount = dag.nodes.length - refineries;
  if (dag.metadata.totalTasks !== taskCount)
    out.push(
      problem(
        { file, field: "metadata.totalTasks" },
        "metadata-totals",
        `totalTasks is ${dag.metadata.totalTasks} but there are ${taskCount} task nodes`,
      ),
    );
  if (dag.metadata.totalRefineries !== refineries)
    out.push(
      problem(
        { file, field: "metadata.totalRefineries" },
        "metadata-totals",
        `totalRefineries is ${dag.metadata.totalRefineries} but there are ${refineries} refinery nodes`,
      ),
    );
  checkStructure(
    {
      ids,
      deps,
      refinery,
      locate: (v, j) => ({
        file,
        field: j === undefined ? `nodes[${positions[v]!}].dependencies` : `nodes[${positions[v]!}].dependencies[${j}]`,
      }),
    },
    out,
  );
  return sortProblems(out);
}

/**
 * Proves that `after` only adds nodes and edges to `before` (an overlay PR), and is itself a valid
 * DAG. Problems are located in `after`'s dag.json.
 */
export function validateDagChange(before: Dag, after: Dag, file = "dag.json"): Problem[] {
  const out = validateDag(after, file);
  if (before.planId !== after.planId)
    out.push(
      problem(
        { file, field: "planId" },
        "overlay-not-append-only",
        `planId changed from ${JSON.stringify(before.planId)} to ${JSON.stringify(after.planId)}`,
      ),
    );
  const afterById = new Map<string, { node: Dag["nodes"][number]; pos: number }>();
  after.nodes.forEach((node, pos) => {
    if (!afterById.has(node.id)) afterById.set(node.id, { node, pos });
  });
  for (const old of before.nodes) {
    const now = afterById.get(old.id);
    if (!now) {
      out.push(problem({ file, field: "nodes" }, "overlay-not-append-only", `node ${JSON.stringify(old.id)} was removed`));
      continue;
    }
    const { node, pos } = now;
    if (node.type !== old.type || node.agentType !== old.agentType)
      out.push(
        problem(
          { file, field: `nodes[${pos}].agentType` },
          "overlay-not-append-only",
          `node ${JSON.stringify(old.id)} changed from ${old.type}/${old.agentType} to ${node.type}/${node.agentType}`,
        ),
      );
    const deps = new Set(node.dependencies);
    const removed = old.dependencies.filter((d) => !deps.has(d));
    if (removed.length)
      out.push(
        problem(
          { file, field: `nodes[${pos}].dependencies` },
          "overlay-not-append-only",
          `node ${JSON.stringify(old.id)} lost dependencies ${removed.join(", ")}`,
        ),
      );
  }
  return sortProblems(out);
}
