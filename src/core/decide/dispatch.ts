/**
 * Routing and dispatch: the ready tasks, most downstream work first, are given to agents while
 * `max_parallel_agents` allows; queued follow-ups take what capacity is left.
 */
import type { Effect } from "../effects.js";
import type { TaskState } from "../journal.js";
import * as effects from "./effects.js";
import { runningFollowups, spawnFollowups } from "./follow-ups.js";
import { branchName } from "../layout.js";
import { agentId } from "./names.js";
import type { Step } from "./step.js";

export function schedule(s: Step): void {
  const running = s.derived.running.size + runningFollowups(s);
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
  spawnFollowups(s, capacity);
}

/** Start task i's next attempt: its branch (a refinery's with its upstream branches merged in) and its job. */
function dispatch(s: Step, i: number): void {
  const t = s.task(i);
  const attempt = t.dispatchedAttempt + 1;
  // A new attempt starts with no revision and no feedback: those belong to the previous attempt's PR.
  const {
    notBefore: _nb,
    context,
    iteration: _it,
    reviewIterations: _ri,
    ciFixes: _cf,
    feedback: _fb,
    answered: _an,
    answeredHeads: _ah,
    priorRunId: _pr,
    reviewApprovedHead: _rh,
    waiting: _wa,
    steering: _st,
    ...kept
  } = t;
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
  const next = { id: t.id, attempt, branch };
  s.effect(effects.prepareBranch(next, s.j.integrationBranch, merge));
  s.effect(effects.dispatchAgent(next, node.agentType, handoff(context)));
}

/** What the previous attempt left for this one; a previous attempt's conflicts are not this one's. */
function handoff(context: TaskState["context"]): Extract<Effect, { kind: "DispatchAgent" }>["context"] {
  if (!context || (context.answer === undefined && context.refinement === undefined)) return undefined;
  return {
    ...(context.refinement !== undefined ? { refinement: context.refinement } : {}),
    ...(context.answer !== undefined ? { answer: context.answer } : {}),
  };
}
