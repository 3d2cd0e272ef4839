/** The plan's nodes and their tasks' first state, as a run pins them and as an overlay extends them. */
import type { PlanNodeInput } from "../inputs.js";
import type { PlanNode, TaskState } from "../journal.js";
import { buildIndex, downstreamCounts, type PlanIndex } from "../plan-index.js";

export function planNode(n: PlanNodeInput): PlanNode {
  return {
    id: n.id,
    kind: n.kind,
    agentType: n.agentType,
    title: n.title ?? "",
    dependencies: n.dependencies.slice(),
    paths: n.paths ?? [],
    ...(n.budget ? { budget: { ...n.budget } } : {}),
    ...(n.retryPolicy ? { retryPolicy: { ...n.retryPolicy } } : {}),
    ...(n.agents?.length ? { agents: [...n.agents] } : {}),
    priority: 0,
  };
}

/** Index the nodes and give each its priority: how many nodes are downstream of it (ready tasks with more go first). */
export function prioritise(nodes: PlanNode[]): PlanIndex {
  const index = buildIndex(nodes);
  const priorities = downstreamCounts(index);
  nodes.forEach((n, k) => (n.priority = priorities[k]!));
  return index;
}

/** Dependencies of node k not yet satisfied: MERGED, or for a refinery MERGE_READY already. */
export function countBlockers(index: PlanIndex, k: number, tasks: readonly TaskState[]): number {
  let blockers = 0;
  for (const d of index.deps[k]!) {
    const st = tasks[d]!.status;
    const satisfied = st === "MERGED" || (index.isRefinery[k] && st === "MERGE_READY");
    if (!satisfied) blockers++;
  }
  return blockers;
}
