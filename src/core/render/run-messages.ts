/**
 * What the executor says to people, in one place: the one-line title of a task's check run, the
 * comments it posts on a task's pull request, the title of a Change Request it raises for an
 * agent, the note an escalated task's next attempt receives, and the replies to `/forge` commands
 * it refuses. Pure: facts in, text out.
 */
import type { Hold } from "../journal.js";
import type { TaskStatus } from "../schemas/common.js";

/** The check run's title for an attempt in `status`. */
export function checkRunTitle(t: { attempt: number; hold?: Hold | undefined; lastError?: string | undefined }, status: TaskStatus): string {
  switch (status) {
    case "RUNNING":
      return `Attempt ${t.attempt} running`;
    case "DONE":
      return `Attempt ${t.attempt} done; waiting for its pushed head`;
    case "MERGE_READY":
      return `Attempt ${t.attempt} ready to merge`;
    case "MERGED":
      return `Merged`;
    case "FAILED":
      return t.hold === "exhausted"
        ? `Failed; retries exhausted`
        : t.hold === "human"
          ? `Waiting for an answer: /forge retry <answer>`
          : t.hold === "blocked"
            ? `Blocked by a rule of the repository; /forge retry once it is changed`
            : `Attempt ${t.attempt} failed${t.lastError ? `: ${t.lastError}` : ""}`;
    case "STALE":
      return `Attempt ${t.attempt} went silent`;
    case "PENDING":
      return `Waiting to be retried`;
  }
}

/** The question of an agent that exited asking for a person's input without saying what it needs. */
export const DEFAULT_QUESTION = "The agent needs a person's input.";

/** Comment on the task's PR: the agent's question, quoted, and how to answer it. */
export function questionComment(taskId: string, question: string): string {
  return `The agent working on \`${taskId}\` needs your input:\n\n> ${question.replaceAll("\n", "\n> ")}\n\nAnswer with \`/forge retry ${taskId} <your answer>\`.`;
}

/** Comment on a refinery's PR when `refinery_approval` holds its merge for a person. */
export function approvalComment(taskId: string): string {
  return `Refinery \`${taskId}\` is ready to merge and needs approval: comment \`/forge approve\` to merge it.`;
}

/** Comment on the task's PR when it changes protected paths: its merge waits for a person. */
export function protectedPathsComment(taskId: string, paths: readonly string[]): string {
  const shown = paths.slice(0, 50).map((p) => `- \`${p.replace(/`/g, "'")}\``);
  if (paths.length > 50) shown.push(`- … and ${paths.length - 50} more`);
  return [
    `Forge did not merge \`${taskId}\`: this pull request changes protected paths (the plans, \`.github/\`, or the config's \`protected_paths\`):`,
    "",
    ...shown,
    "",
    "A person with write access reviews them and comments `/forge approve` to merge this head, or pushes a fix and retries.",
  ].join("\n");
}

/** Comment on the task's PR when a bound on its revisions is reached: it waits for a person. */
export function revisionLimitComment(taskId: string, reason: string): string {
  return `Forge will not revise \`${taskId}\` again by itself: ${reason}. A person with write access may approve it, merge it by hand, push a fix, or \`/forge retry\` it once it fails.`;
}

/** Comment on the task's PR while GitHub refuses its merge for a reason Forge cannot resolve (one comment, updated in place). */
export function mergeBlockedComment(taskId: string, reason: string): string {
  return `Forge cannot merge \`${taskId}\` yet: ${reason}\n\nForge tries again after every change it hears of (a review, a check, a reconcile pass) and on \`/forge retry ${taskId}\`.`;
}

/** The merge-blocked comment once the PR merged: what held it back no longer does. */
export function mergeUnblockedComment(taskId: string, mergeSha: string): string {
  return `\`${taskId}\` is merged (${mergeSha.slice(0, 7)}): GitHub no longer refuses it, and Forge carries on with the tasks that wait for it.`;
}

/** Comment on the task's PR (or the tracker, when it has none) when a rule of the repository refused its job's push. */
export function pushBlockedComment(taskId: string, reason: string): string {
  return `Forge stopped \`${taskId}\`: ${reason}\n\nForge does not retry it by itself (the same push would be refused again): once the rule lets it through, comment \`/forge retry ${taskId}\`.`;
}

/** Comment on the task's PR (or the tracker) when an ended attempt's checkpoint was refused: its retry starts fresh. */
export function checkpointRefusedComment(taskId: string, attempt: number, reason: string): string {
  return `Forge did not resume \`${taskId}\` from the checkpoint attempt ${attempt} left, which it refused: ${reason}.\n\nThe next attempt starts fresh, on a new branch and pull request; nothing the refused checkpoint says is used.`;
}

/** Comment on the task's PR when GitHub refused its merge for good. */
export function mergeRefusedComment(taskId: string, attempt: number, error: string): string {
  return `Forge did not merge \`${taskId}\` (attempt ${attempt}): ${error}. Check the new head and merge the pull request yourself (Forge then carries on), or comment \`/forge cancel\` on the run's tracker to stop the run.`;
}

/** Title of a Change Request an agent escalated without writing one. */
export const changeRequestTitle = (taskId: string) => `${taskId} needs the plan amended`;

/** What the escalated task's next attempt is told of its Change Request's fate. */
export function changeRequestAnswer(crId: string, resolution: "applied" | "rejected", overlayId: string | undefined): string {
  return resolution === "applied"
    ? `Change Request ${crId} was applied as ${overlayId}.`
    : `Change Request ${crId} was rejected; complete the task within the current plan.`;
}

/** A task id in a reply, as code: ids have no backtick (plan ids are `[a-z0-9._-]`), and none is let through. */
const code = (id: string) => `\`${id.replace(/`/g, "'")}\``;

/** What a task held FAILED waits for, as the command that gives it. */
const WAITING: Partial<Record<Hold, (id: string) => string>> = {
  human: (id) => `waits for an answer: \`/forge retry ${id.replace(/`/g, "'")} <answer>\``,
  escalated: () => "waits for its Change Request",
  budget: (id) => `waits for \`/forge budget ${id.replace(/`/g, "'")} +<dollars>\``,
};

/**
 * The tracker's reply to `/forge retry failed`: every task the round retried, and those left waiting
 * for a command of their own (an answer, a Change Request, budget), each id as code.
 */
export function roundRetryReply(retried: readonly string[], left: readonly { id: string; hold: Hold }[]): string {
  const lines = [`Retried ${retried.length} failed task${retried.length === 1 ? "" : "s"}: ${retried.map(code).join(", ")}.`];
  const waiting = left.flatMap((t) => (WAITING[t.hold] ? [`- ${code(t.id)} ${WAITING[t.hold]!(t.id)}`] : []));
  if (waiting.length) lines.push("", "Not retried, each waiting for a command of its own:", ...waiting);
  return lines.join("\n");
}

/** Why a `/forge` command changed nothing, as the person who typed it reads it. */
export const commandReplies = {
  runNotRunning: (status: string) => `the run is ${status}`,
  budgetHow: "say how much to add: `/forge budget +5` (dollars) for the run, `/forge budget <task> +5` for one task",
  alreadyPaused: "the run is already paused",
  waitsForChangeRequests: (crIds: readonly string[]) => `the run waits for ${crIds.join(", ")}`,
  notPaused: "the run is not paused",
  retryWhich: "say which task: /forge retry <taskId> [message], or /forge retry failed for every failed task",
  nothingFailed: "no task of the run is failed or exhausted: nothing to retry",
  unknownTask: (taskId: string) => `unknown task ${taskId}`,
  notRetryable: (taskId: string, status: TaskStatus) => `${taskId} is ${status}; only a FAILED or STALE task can be retried`,
  waitsForItsChangeRequest: (taskId: string) => `${taskId} waits for its Change Request`,
  alreadyRetrying: (taskId: string) => `${taskId} is already being retried`,
  unknownChangeRequest: (crId: string) => `unknown Change Request ${crId}`,
  changeRequestResolved: (crId: string, status: string) => `Change Request ${crId} is already ${status}`,
  notARefinery: (taskId: string) => `${taskId} is not a refinery of this run, and its merge is not waiting for approval`,
  fixWhere: "comment /forge fix [message] on the task's pull request",
  steerWhere: "comment /forge steer <message> on the running task's pull request, or /forge steer <task> <message> on the tracker",
  steerWhat: "say what to tell the agent: /forge steer <message>",
  notRunning: (taskId: string, status: TaskStatus) => `${taskId} is ${status}; only a running agent can be steered`,
  notRevisable: (taskId: string, status: TaskStatus) =>
    `${taskId} is ${status}; only a task whose PR waits for review or is being revised takes /forge fix`,
  approveWhat: (command: string) => `say what to ${command}: a Change Request issue or a refinery PR`,
} as const;
