/** Creating a run: its journal, pinned to the plan, and the first scheduling decision. */
import type { PlanNodeInput } from "../inputs.js";
import { JOURNAL_VERSION, newTask, type Journal } from "../journal.js";
import type { ForgeConfig } from "../schemas/config.js";
import { countBlockers, planNode, prioritise } from "./plan-state.js";
import { Step, type Decision } from "./step.js";
import { settle } from "./tick.js";

export interface NewRun {
  runId: string;
  planId: string;
  planCommit: string;
  dagHash: string;
  nodes: readonly PlanNodeInput[];
  integrationBranch: string;
  baseBranch: string;
}

/** A new run's journal (it starts with `run.started`), followed by the first scheduling decision. */
export function startRun(run: NewRun, now: number, config: ForgeConfig): Decision {
  const nodes = run.nodes.map(planNode);
  const index = prioritise(nodes);
  const tasks = nodes.map((n) => newTask(n.id));
  tasks.forEach((t, k) => (t.blockers = countBlockers(index, k, tasks)));
  const journal: Journal = {
    version: JOURNAL_VERSION,
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
