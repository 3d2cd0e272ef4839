/**
 * Change Requests and overlays. An agent that finds the plan insufficient escalates: its task is
 * held, a Change Request is raised and scheduling pauses. The request is resolved by an overlay —
 * an append-only amendment that adds tasks and edges — or rejected; either way the escalated task
 * gets a fresh attempt, and the run resumes once no request is open.
 */
import type { PlanNodeInput } from "../inputs.js";
import { newTask, type ChangeRequestState, type PlanNode } from "../journal.js";
import { topologicalOrder } from "../plan-index.js";
import { changeRequestAnswer, changeRequestTitle } from "../render/run-messages.js";
import { EXIT_CODES } from "../exit-codes.js";
import * as effects from "./effects.js";
import { requestMerge } from "./merge-request.js";
import { countBlockers, planNode, prioritise } from "./plan-state.js";
import { fail, retry } from "./retries.js";
import type { InputOf, Step } from "./step.js";

/** Task i's agent exited asking for the plan to be amended. */
export function escalate(s: Step, i: number, input: InputOf<"agent.finished">): void {
  const t = s.task(i);
  const cr: NonNullable<InputOf<"agent.finished">["changeRequest"]> = input.changeRequest ?? {
    title: changeRequestTitle(t.id),
    reason: input.error ?? "escalation",
    affectedTasks: [t.id],
  };
  let crId = cr.id ?? `cr-${t.id}-${t.attempts}`;
  if (s.j.changeRequests.some((c) => c.id === crId)) crId = `${crId}-${t.attempts}`;
  fail(s, i, input.kind, { error: `escalated: ${cr.reason}`, retryable: false, hold: "escalated", exitCode: EXIT_CODES.NEEDS_ESCALATION });
  const state: ChangeRequestState = {
    id: crId,
    emittedBy: t.id,
    attempt: t.attempts,
    title: cr.title,
    reason: cr.reason,
    affectedTasks: cr.affectedTasks ?? [],
    ...(cr.suggestedAction ? { suggestedAction: cr.suggestedAction } : {}),
    ...(cr.priority ? { priority: cr.priority } : {}),
    status: "pending",
    ...(cr.path ? { path: cr.path } : {}),
  };
  s.j.changeRequests = [...s.j.changeRequests, state];
  s.emit("cr.emitted", t.id, { crId, refineryId: t.id, reason: cr.reason, scope: state.affectedTasks });
  s.j.pause = { ...s.j.pause, changeRequests: [...s.j.pause.changeRequests, crId] };
  s.emit("run.paused", undefined, { reason: "change_request", crId });
  s.effect(effects.openChangeRequest(state));
  if (s.config.cr_mode === "replan") s.effect(effects.dispatchCaptain(crId));
}

/** A person approved a pending Change Request: the Captain agent writes its overlay. */
export function approveCr(s: Step, crId: string): void {
  s.j.changeRequests = s.j.changeRequests.map((x) => (x.id === crId ? { ...x, status: "approved" } : x));
  s.effect(effects.dispatchCaptain(crId));
}

export function resolveCr(s: Step, crId: string, resolution: "applied" | "rejected", overlayId?: string): void {
  const cr = s.j.changeRequests.find((c) => c.id === crId)!;
  s.j.changeRequests = s.j.changeRequests.map((c) =>
    c.id === crId ? { ...c, status: resolution, ...(overlayId ? { overlayId } : {}) } : c,
  );
  s.emit("cr.resolved", cr.emittedBy, { crId, resolution, ...(overlayId ? { overlayId } : {}) });
  // The escalated task gets a fresh attempt, not counted as a retry.
  const i = s.find(cr.emittedBy);
  if (i !== undefined && s.task(i).status === "FAILED" && s.task(i).attempt?.hold === "escalated") {
    s.edit(i).next = { answer: changeRequestAnswer(crId, resolution, overlayId) };
    retry(s, i, "cr.closed", { counted: false, manual: true });
  }
  s.j.pause = { ...s.j.pause, changeRequests: s.j.pause.changeRequests.filter((c) => c !== crId) };
  if (s.j.pause.changeRequests.length === 0 && !s.j.pause.manual) {
    s.emit("run.resumed", undefined, { reason: "change_request", crId, ...(overlayId ? { overlayId } : {}) });
  }
}

/** The Change Request's issue was closed without an overlay: it is rejected. */
export function crClosed(s: Step, input: InputOf<"cr.closed">): void {
  const cr = s.j.changeRequests.find((c) => c.id === input.crId);
  if (!cr || cr.status === "applied" || cr.status === "rejected") return;
  resolveCr(s, cr.id, "rejected");
}

/** The pinned plan changed on the default branch: a run's plan changes only by overlays, so the edit is noted and ignored. */
export function planChanged(s: Step, input: InputOf<"plan.changed">): void {
  s.emit("plan.edit_ignored", undefined, { commit: input.commit });
}

export function overlayApplied(s: Step, input: InputOf<"overlay.applied">): void {
  const cr = s.j.changeRequests.find((c) => c.id === input.crId);
  if (!cr) return s.reject(input.kind, `unknown Change Request ${input.crId}`);
  if (cr.status === "applied") return; // repeated
  if (cr.status === "rejected") return s.reject(input.kind, `Change Request ${input.crId} was rejected`);
  const problem = checkOverlay(s, input.nodes, input.edges);
  if (problem) return s.reject(input.kind, `overlay ${input.overlayId} refused: ${problem}`);

  const nodes: PlanNode[] = s.j.plan.nodes.map((n) => ({ ...n, dependencies: n.dependencies.slice() }));
  const byId = new Map(nodes.map((n) => [n.id, n]));
  for (const n of input.nodes) {
    const node = planNode(n);
    nodes.push(node);
    byId.set(n.id, node);
  }
  for (const e of input.edges) {
    const to = byId.get(e.to)!;
    if (!to.dependencies.includes(e.from)) to.dependencies.push(e.from);
  }
  const index = prioritise(nodes);
  const plan = { nodes, overlays: [...s.j.plan.overlays, input.overlayId] };
  const tasks = s.j.tasks.slice();
  for (const n of input.nodes) tasks.push(newTask(n.id));
  // Blockers are recounted from scratch: overlays are rare and may add edges to existing tasks.
  nodes.forEach((_, k) => {
    const blockers = countBlockers(index, k, tasks);
    if (tasks[k]!.blockers !== blockers) tasks[k] = { ...tasks[k]!, blockers };
  });
  s.j.planCommit = input.planCommit;
  s.replacePlan(plan, tasks);
  // A MERGE_READY task that waited for its refinery may now have a task downstream: merge it directly.
  tasks.forEach((t, k) => {
    if (t.status === "MERGE_READY" && !s.idx.mergedByRefinery[k]) requestMerge(s, k);
  });
  resolveCr(s, input.crId, "applied", input.overlayId);
}

/** An overlay only adds: new unique ids, edges between known nodes into tasks that have not started, no cycle. */
function checkOverlay(s: Step, nodes: readonly PlanNodeInput[], edges: readonly { from: string; to: string }[]): string | undefined {
  const known = new Set<string>(s.j.plan.nodes.map((n) => n.id));
  const added = new Set<string>();
  for (const n of nodes) {
    if (known.has(n.id) || added.has(n.id)) return `task ${n.id} already exists`;
    added.add(n.id);
  }
  for (const n of nodes)
    for (const d of n.dependencies) if (!known.has(d) && !added.has(d)) return `task ${n.id} depends on unknown task ${d}`;
  for (const n of nodes) if (n.kind === "refinery" && n.dependencies.length === 0) return `refinery ${n.id} has no dependencies`;
  for (const e of edges) {
    if (!known.has(e.from) && !added.has(e.from)) return `edge ${e.from} → ${e.to} names unknown task ${e.from}`;
    if (added.has(e.to)) continue;
    const k = s.find(e.to);
    if (k === undefined) return `edge ${e.from} → ${e.to} names unknown task ${e.to}`;
    const st = s.task(k).status;
    if (st !== "PENDING" && st !== "FAILED" && st !== "STALE") return `edge ${e.from} → ${e.to}: ${e.to} is already ${st}`;
  }
  const all: { id: string; dependencies: string[] }[] = s.j.plan.nodes.map((n) => ({ id: n.id, dependencies: n.dependencies.slice() }));
  for (const n of nodes) all.push({ id: n.id, dependencies: n.dependencies.slice() });
  const pos = new Map(all.map((n, k) => [n.id, k]));
  for (const e of edges) all[pos.get(e.to)!]!.dependencies.push(e.from);
  const deps = all.map((n) => n.dependencies.map((d) => pos.get(d)!));
  const dependents: number[][] = all.map(() => []);
  deps.forEach((ds, k) => ds.forEach((d) => dependents[d]!.push(k)));
  if (!topologicalOrder({ deps, dependents })) return "it would create a cycle";
  return undefined;
}
