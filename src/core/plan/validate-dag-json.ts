/** dag.json: readable, valid by its schema, and equal to the DAG the task files and overlays describe. */
import { fieldPath } from "../problems.js";
import { ID_PATTERN, agentTypeSchema, type AgentType } from "../schemas/common.js";
import type { DagFile, ParsedPlan } from "./parse.js";
import { problem, type Location, type Problem } from "./problem.js";
import { issueMessage, type TaskEntry } from "./validate-files.js";
import type { OverlayDep } from "./validate-overlays.js";

interface DagEntry {
  id: string;
  pos: number;
  type: "task" | "refinery" | undefined;
  agentType: AgentType | undefined;
  deps: string[];
  depsKnown: boolean;
}

/** dag.json's nodes, read leniently when the schema refused the file. */
function dagEntries(dag: DagFile): DagEntry[] {
  if (dag.data) {
    return dag.data.nodes.map((n, pos) => ({ id: n.id, pos, type: n.type, agentType: n.agentType, deps: n.dependencies, depsKnown: true }));
  }
  const nodes = (dag.raw as { nodes?: unknown } | undefined)?.nodes;
  if (!Array.isArray(nodes)) return [];
  const entries: DagEntry[] = [];
  nodes.forEach((n: unknown, pos) => {
    if (typeof n !== "object" || n === null) return;
    const raw = n as Record<string, unknown>;
    if (typeof raw.id !== "string") return;
    const agentType = agentTypeSchema.safeParse(raw.agentType);
    const deps = Array.isArray(raw.dependencies)
      ? raw.dependencies.filter((d): d is string => typeof d === "string" && ID_PATTERN.test(d))
      : [];
    entries.push({
      id: raw.id,
      pos,
      type: raw.type === "task" || raw.type === "refinery" ? raw.type : undefined,
      agentType: agentType.success ? agentType.data : undefined,
      deps,
      depsKnown:
        Array.isArray(raw.dependencies) &&
        !dag.issues.some((i) => i.path[0] === "nodes" && i.path[1] === pos && i.path[2] === "dependencies"),
    });
  });
  return entries;
}

function dagAt(dag: DagFile, field: string, id?: string): Location {
  const key = field.replace(/^metadata\./, "");
  return { file: "dag.json", line: (id !== undefined ? dag.idLines[id] : undefined) ?? dag.keyLines[key], field };
}

export function checkDagJson(
  plan: ParsedPlan,
  tasks: Map<string, TaskEntry>,
  addedBy: Map<string, number>,
  overlayDeps: Map<string, OverlayDep[]>,
  missingFiles: Set<string>,
  out: Problem[],
): void {
  const dag = plan.dag;
  if (!dag.present) return;
  if (dag.jsonError) {
    out.push(
      problem({ file: "dag.json", line: dag.jsonError.line }, "unreadable-json", `dag.json is not valid JSON: ${dag.jsonError.message}`),
    );
    return;
  }
  const nodeIds = (dag.raw as { nodes?: { id?: unknown }[] } | undefined)?.nodes;
  for (const issue of dag.issues) {
    const field = fieldPath(issue.path);
    const node =
      issue.path[0] === "nodes" && typeof issue.path[1] === "number" && Array.isArray(nodeIds) ? nodeIds[issue.path[1]] : undefined;
    const id = typeof node?.id === "string" ? node.id : undefined;
    const isId = issue.path.length === 3 && issue.path[2] === "id" && issue.code === "invalid_format";
    const lastKey = [...issue.path].reverse().find((k) => typeof k === "string");
    const at = dagAt(dag, field, id);
    if (at.line === undefined && typeof lastKey === "string") at.line = dag.keyLines[lastKey];
    out.push(problem({ ...at, field: field || undefined }, isId ? "bad-id" : "invalid-dag", issueMessage(issue, dag.raw)));
  }
  const planId = (dag.raw as { planId?: unknown } | undefined)?.planId;
  if (typeof planId === "string" && planId !== plan.planId)
    out.push(
      problem(
        dagAt(dag, "planId"),
        "plan-id-mismatch",
        `planId ${JSON.stringify(planId)} must equal the plan folder's name ${JSON.stringify(plan.planId)}`,
      ),
    );

  const entries = dagEntries(dag);
  const byId = new Map<string, DagEntry>();
  for (const e of entries) {
    const first = byId.get(e.id);
    if (first)
      out.push(problem(dagAt(dag, `nodes[${e.pos}].id`, e.id), "duplicate-id", `node ${JSON.stringify(e.id)} is also nodes[${first.pos}]`));
    else byId.set(e.id, e);
    if (e.type !== undefined && e.agentType !== undefined && (e.type === "refinery") !== (e.agentType === "refinery"))
      out.push(
        problem(
          dagAt(dag, `nodes[${e.pos}].type`, e.id),
          "type-mismatch",
          `type ${JSON.stringify(e.type)} does not go with agentType ${JSON.stringify(e.agentType)}: type is "refinery" exactly when agentType is`,
        ),
      );
  }
  if (dag.data) {
    let refineries = 0;
    for (const n of dag.data.nodes) if (n.type === "refinery") refineries++;
    const { totalTasks, totalRefineries } = dag.data.metadata;
    const taskCount = dag.data.nodes.length - refineries;
    if (totalTasks !== taskCount)
      out.push(
        problem(
          dagAt(dag, "metadata.totalTasks"),
          "metadata-totals",
          `totalTasks is ${totalTasks} but dag.json has ${taskCount} task nodes`,
        ),
      );
    if (totalRefineries !== refineries)
      out.push(
        problem(
          dagAt(dag, "metadata.totalRefineries"),
          "metadata-totals",
          `totalRefineries is ${totalRefineries} but dag.json has ${refineries} refinery nodes`,
        ),
      );
  }
  if (!dag.raw || !Array.isArray((dag.raw as { nodes?: unknown }).nodes)) return;

  // dag.json against the DAG the task files and overlays describe.
  const byOverlay = (id: string) => addedBy.get(id) !== undefined || overlayDeps.has(id);
  for (const t of tasks.values()) {
    const d = byId.get(t.id);
    if (!d) {
      const k = addedBy.get(t.id);
      out.push(
        k !== undefined
          ? problem(
              dagAt(dag, "nodes"),
              "dag-not-base-plus-overlays",
              `task ${JSON.stringify(t.id)}, added by an overlay (${t.task.file}), is missing from dag.json`,
            )
          : problem(dagAt(dag, "nodes"), "dag-disagrees", `task ${JSON.stringify(t.id)} (${t.task.file}) is missing from dag.json`),
      );
      continue;
    }
    if (t.agentType !== undefined && d.agentType !== undefined && t.agentType !== d.agentType)
      out.push(
        problem(
          dagAt(dag, `nodes[${d.pos}].agentType`, d.id),
          "dag-disagrees",
          `agentType ${JSON.stringify(d.agentType)} differs from type ${JSON.stringify(t.agentType)} in ${t.task.file}`,
        ),
      );
    if (!t.depsKnown || !d.depsKnown) continue;
    const extra = overlayDeps.get(t.id);
    if (!extra && sameList(t.deps, d.deps)) continue; // the usual case: same ids in the same order
    const expected = new Set(t.deps);
    if (extra) for (const e of extra) expected.add(e.from);
    const actual = new Set(d.deps);
    const lacking: string[] = [];
    const surplus: string[] = [];
    for (const x of expected) if (!actual.has(x)) lacking.push(x);
    for (const x of actual) if (!expected.has(x)) surplus.push(x);
    if (lacking.length === 0 && surplus.length === 0) continue;
    const parts: string[] = [];
    if (lacking.length) parts.push(`lacks ${lacking.join(", ")}`);
    if (surplus.length) parts.push(`has ${surplus.join(", ")} in excess`);
    const from = byOverlay(t.id) ? `${t.task.file} plus overlays` : t.task.file;
    out.push(
      problem(
        dagAt(dag, `nodes[${d.pos}].dependencies`, d.id),
        byOverlay(t.id) ? "dag-not-base-plus-overlays" : "dag-disagrees",
        `dependencies differ from ${from}: dag.json ${parts.join(" and ")}`,
      ),
    );
  }
  for (const d of byId.values()) {
    if (tasks.has(d.id) || missingFiles.has(d.id)) continue;
    out.push(
      problem(dagAt(dag, `nodes[${d.pos}]`, d.id), "dag-disagrees", `node ${JSON.stringify(d.id)} has no task file tasks/${d.id}.md`),
    );
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
