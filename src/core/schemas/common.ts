import { z } from "zod";

/** A task's own budget caps, in its front matter (each overrides the config's `budgets` field of the same name). */
export const taskBudgetSchema = z
  .object({
    attempt_usd: z.number().positive().optional().describe("Dollars one attempt of the task may spend."),
    attempt_tokens: z.number().int().positive().optional().describe("Model tokens one attempt of the task may use."),
    task_usd: z.number().positive().optional().describe("Dollars all attempts of the task together may spend."),
  })
  .strict();
export type TaskBudget = z.infer<typeof taskBudgetSchema>;

/** Task, refinery and follow-up ids: lower-case, start with a letter or digit (see docs/formats.md#ids). */
export const ID_PATTERN = /^[a-z0-9][a-z0-9._-]*$/;

/**
 * What git refuses in a branch name (`git check-ref-format`, git-scm.com/docs/git-check-ref-format)
 * that ID_PATTERN lets through: `..` anywhere, a component ending in `.lock`, a name ending in `.`.
 * An id is a component of its task's branch (`forge/{runId}/{taskId}/{attempt}`), and the plan's id of
 * every branch of its runs: GitHub answers 422 "refs/heads/… is not a valid ref name." to such a branch.
 */
export const REF_SAFE_PATTERN = /^(?!.*\.\.)(?!.*\.lock$)(?!.*\.$)/;

/** An id Forge can run: it matches ID_PATTERN and can be part of a git branch name. */
export const isId = (id: string): boolean => ID_PATTERN.test(id) && REF_SAFE_PATTERN.test(id);

export const taskIdSchema = z
  .string()
  .regex(ID_PATTERN, "must match [a-z0-9][a-z0-9._-]* (lower-case letters, digits, '.', '_', '-')")
  .regex(REF_SAFE_PATTERN, "cannot be part of a git branch name: no '..', and no '.lock' or '.' at its end (git check-ref-format)")
  .describe(
    "A task id: lower-case letters, digits, '.', '_' and '-', starting with a letter or digit; part of a git branch name, so no '..' and no '.lock' or '.' at its end.",
  );

export const isoTimestampSchema = z.iso
  .datetime({ offset: true })
  .describe("An ISO-8601 timestamp, e.g. 2026-02-09T14:32:01.442Z.");

export const gitShaSchema = z
  .string()
  .regex(/^[0-9a-f]{40}$/, "must be a 40-character hexadecimal git commit sha")
  .describe("A full 40-character git commit sha.");

/** Agent types (see docs/runner.md#agent-kinds). YAML reads `type: 1` as a number, so numbers are accepted and turned into strings. */
export const agentTypeSchema = z
  .preprocess((v) => (typeof v === "number" ? String(v) : v), z.enum(["1", "2", "3", "refinery"]))
  .describe("Agent type: '1' throwaway, '2' default worker, '3' sub-executor, 'refinery' integration checkpoint.");
export type AgentType = z.infer<typeof agentTypeSchema>;

/** Task statuses (see docs/executor.md#task-states). */
export const taskStatusSchema = z
  .enum(["PENDING", "RUNNING", "DONE", "MERGE_READY", "MERGED", "FAILED", "STALE"])
  .describe("Task status of the executor state machine (see docs/executor.md#task-states).");
export type TaskStatus = z.infer<typeof taskStatusSchema>;
