import type { TaskStatus } from "./schemas/common.js";

/** The valid transitions of docs/executor.md#transitions, and nothing else. */
export const TRANSITIONS: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  PENDING: ["RUNNING"],
  RUNNING: ["DONE", "FAILED", "STALE"],
  DONE: ["MERGE_READY"],
  MERGE_READY: ["MERGED", "RUNNING"],
  MERGED: [],
  FAILED: ["PENDING"],
  STALE: ["PENDING"],
};

export type TransitionCheck = { ok: true; noop: boolean } | { ok: false; reason: string };

/**
 * Whether `from → to` may be applied. Re-applying the transition a task already made (to === from)
 * is a no-op, because webhooks repeat.
 */
export function checkTransition(from: TaskStatus, to: TaskStatus): TransitionCheck {
  if (from === to) return { ok: true, noop: true };
  if (isValidTransition(from, to)) return { ok: true, noop: false };
  const allowed = TRANSITIONS[from];
  return {
    ok: false,
    reason: `${from} → ${to} is not a valid transition (from ${from} only ${allowed.length ? allowed.join(" or ") : "nothing"} is allowed)`,
  };
}

/** Whether `to` is a transition out of `from` (a no-op is not). */
export function isValidTransition(from: TaskStatus, to: TaskStatus): boolean {
  return TRANSITIONS[from].includes(to);
}
