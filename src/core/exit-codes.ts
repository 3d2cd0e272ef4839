/**
 * Forge's exit codes: one vocabulary from the agent session to the App (docs/runner.md#exit-codes).
 * The codes, their names and meanings, and every way Forge classifies them are here; other parts
 * name a code through `EXIT_CODES` and ask these predicates, never compare numbers of their own.
 */

export const EXIT_CODES = {
  SUCCESS: 0,
  FAILURE: 1,
  DEPTH_EXCEEDED: 2,
  HUMAN_INPUT: 3,
  NEEDS_REFINEMENT: 10,
  NEEDS_ESCALATION: 11,
  PARTIAL_SUCCESS: 12,
  INTERRUPTED: 20,
  TIMEOUT: 21,
} as const;

/** One of Forge's exit codes. */
export type ExitCode = (typeof EXIT_CODES)[keyof typeof EXIT_CODES];

/** Every exit code, in ascending order. */
export const ALL_EXIT_CODES: readonly ExitCode[] = Object.values(EXIT_CODES);

export function isExitCode(n: unknown): n is ExitCode {
  return typeof n === "number" && (ALL_EXIT_CODES as readonly number[]).includes(n);
}

/** The status name of each code (a session's `status`, and its error code when it is not a plain failure). */
export const EXIT_STATUS = {
  0: "success",
  1: "failure",
  2: "depth_exceeded",
  3: "human_input",
  10: "needs_refinement",
  11: "needs_escalation",
  12: "partial",
  20: "interrupted",
  21: "timeout",
} as const satisfies Record<ExitCode, string>;
export type ExitStatus = (typeof EXIT_STATUS)[ExitCode];

const MEANING: Record<ExitCode, string> = {
  0: "success",
  1: "failed",
  2: "failed (depth budget spent; not retried)",
  3: "waiting for a person",
  10: "needs refinement",
  11: "escalated (Change Request)",
  12: "partial success",
  20: "cancelled",
  21: "timed out / stalled",
};

/** What a code means to people (the job summary, the PR body, the record commit); `exit <n>` for a code Forge does not know. */
export function exitMeaning(code: number): string {
  return isExitCode(code) ? MEANING[code] : `exit ${code}`;
}

/** The work is kept: success (0) or partial success (12). */
export function succeeded(code: number): boolean {
  return code === EXIT_CODES.SUCCESS || code === EXIT_CODES.PARTIAL_SUCCESS;
}

/** Stopped from outside the agent: the job was cancelled (20) or ran out of time (21). */
export function interruptedOrTimedOut(code: number): boolean {
  return code === EXIT_CODES.INTERRUPTED || code === EXIT_CODES.TIMEOUT;
}

/**
 * Ends a stage whatever it was doing, never retried or worked around inside the agent layer: the
 * depth budget is spent (2), or the session was stopped from outside (20, 21).
 */
export function abortsTheStage(code: number): boolean {
  return code === EXIT_CODES.DEPTH_EXCEEDED || interruptedOrTimedOut(code);
}

/** Someone else must act before the work can go on: a person answers (3), a next attempt refines (10), the plan changes (11). */
export function needsOthers(code: number): boolean {
  return code === EXIT_CODES.HUMAN_INPUT || code === EXIT_CODES.NEEDS_REFINEMENT || code === EXIT_CODES.NEEDS_ESCALATION;
}

/**
 * A failed attempt the App tries again by itself (docs/executor.md#results): not after a spent
 * depth budget (2), a question (3, it waits for an answer), an escalation (11, a Change Request) or
 * a cancel (20). Asked of failures only: success and partial success are no failure to retry.
 */
export function retryable(code: number): boolean {
  return !(
    code === EXIT_CODES.DEPTH_EXCEEDED ||
    code === EXIT_CODES.HUMAN_INPUT ||
    code === EXIT_CODES.NEEDS_ESCALATION ||
    code === EXIT_CODES.INTERRUPTED
  );
}

/** The status of a signal file (docs/formats.md#signal-files): done (0, 12), refine (10), or fail. */
export function signalStatusOf(code: number): "done" | "refine" | "fail" {
  return succeeded(code) ? "done" : code === EXIT_CODES.NEEDS_REFINEMENT ? "refine" : "fail";
}

/** The status of a stage in the stage manifest: success (0), partial (12), or failure. */
export function stageStatusOf(code: number): "success" | "partial" | "failure" {
  return code === EXIT_CODES.SUCCESS ? "success" : code === EXIT_CODES.PARTIAL_SUCCESS ? "partial" : "failure";
}
