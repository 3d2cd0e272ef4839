/** The notes of a task's row in the tracker that say where its attempt stands. */
import type { TaskState } from "../core/journal.js";
import type { LiveProgress } from "../core/live-progress.js";

/** A running task's latest progress, as its job's live check run told the reconciler: stage, turns, last heartbeat. */
export function progressNote(p: LiveProgress | undefined): string {
  if (!p) return "";
  const beat = new Date(Date.parse(p.beat)).toISOString().slice(11, 19);
  return `${p.stage ? `stage ${p.stage}` : "between stages"}${p.turns ? `, ${p.turns} turn${p.turns === 1 ? "" : "s"}` : ""}, last heartbeat ${beat} UTC`;
}

/** A resumed attempt's note: whose work it continues, why that attempt ended, and the stage it started at. */
export function resumedNote(r: NonNullable<NonNullable<TaskState["attempt"]>["resumed"]>): string {
  return `resumed: continues attempt ${r.fromAttempt} (${r.reason.replace("_", " ")})${r.stage ? `, from stage ${r.stage}` : ""}`;
}

/**
 * Whether the tracker names each task's agents: when the run has more than one (tasks on different
 * agents, or a task that moved to the next agent of its list). A run on one agent says nothing new.
 */
export function mixedAgents(tasks: readonly TaskState[]): boolean {
  const seen = new Set<string>();
  for (const t of tasks) for (const a of t.agents ?? []) if (seen.add(a.agent).size > 1) return true;
  return false;
}

/** The agents of a task's attempts in order, a repeat folded: `agent claude → codex`. */
export function agentNote(t: TaskState): string {
  const order: string[] = [];
  for (const a of t.agents ?? []) if (order.at(-1) !== a.agent) order.push(a.agent);
  return order.length ? `agent ${order.join(" → ")}` : "";
}
