/**
 * The agent of each attempt (docs/executor.md#agent-fallback): the task's list (its own, its kind's,
 * else the config's adapter), at the position the task has reached. An attempt its provider stopped
 * (a usage limit, or a rate limit its job could not wait out) moves the task to the next agent of
 * the list, whose attempt starts at once; past the last, the run pauses as for any usage limit, and
 * the attempt after the pause goes back to the first agent.
 */
import { agentsOf, AGENT_REASON_MAX, type DispatchAgent } from "../agents.js";
import { AGENT_HISTORY, type NextAttempt } from "../task-record.js";
import type { Adapter } from "../schemas/adapters.js";
import type { Step } from "./step.js";

/** Task i's agents in fallback order. */
export function agentListOf(s: Step, i: number): Adapter[] {
  return agentsOf(s.node(i), s.config.agent).agents;
}

/** The agent task i's next attempt goes to. */
export function nextAgent(s: Step, i: number): Adapter {
  const list = agentListOf(s, i);
  return list[Math.min(s.task(i).fallback ?? 0, list.length - 1)]!;
}

/** The agent of task i's current attempt (an attempt dispatched before agents were recorded: the first of its list). */
export function currentAgent(s: Step, i: number): Adapter {
  return s.task(i).attempt?.agent ?? agentListOf(s, i)[0]!;
}

const cut = (text: string) => (text.length > AGENT_REASON_MAX ? `${text.slice(0, AGENT_REASON_MAX - 1)}…` : text);

/**
 * Task i's attempt was stopped by its agent's provider (`why`): true when its list has another agent
 * for the next attempt — the task moves to it, and `next.switched` says from which and why. False
 * when the list is exhausted: the task goes back to its first agent, for after the pause.
 */
export function fallBack(s: Step, i: number, why: string): boolean {
  const list = agentListOf(s, i);
  const from = currentAgent(s, i);
  const at = Math.max(0, list.indexOf(from));
  const e = s.edit(i);
  if (at + 1 < list.length) {
    e.fallback = at + 1;
    e.next = { ...e.next, switched: { from, reason: cut(`${why}; ${list[at + 1]} takes the next attempt`) } };
    return true;
  }
  delete e.fallback;
  if (list[0] !== from)
    e.next = {
      ...e.next,
      switched: { from, reason: cut(`${why}; every agent of the list was stopped, ${list[0]} goes on after the pause`) },
    };
  return false;
}

/**
 * The agent of the attempt being dispatched, recorded on the attempt and in the task's history; what
 * its job is told (`context.agent`).
 */
export function assignAgent(s: Step, i: number, next: NextAttempt | undefined): DispatchAgent {
  const adapter = nextAgent(s, i);
  const t = s.task(i);
  const switched = next?.switched && next.switched.from !== adapter ? next.switched : undefined;
  s.editAttempt(i).agent = adapter;
  const e = s.edit(i);
  const entry = { attempt: t.attempts, agent: adapter, ...(switched ? { why: `after ${switched.from}: ${switched.reason}` } : {}) };
  e.agents = [...(e.agents ?? []), entry].slice(-AGENT_HISTORY);
  return { adapter, ...(switched ? { switched: { ...switched } } : {}) };
}
