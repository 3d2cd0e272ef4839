import { z } from "zod";
import { agentTypeSchema, taskBudgetSchema, taskIdSchema } from "./common.js";
import { taskRetryPolicySchema } from "./retry-policy.js";
import { modelSpecSchema } from "../tiers.js";
import { agentChoiceSchema, checkModelFits } from "../agents.js";

/** Frontmatter of `.forge/plans/<planId>/tasks/<taskId>.md` (see docs/formats.md#task-front-matter). */
export const taskFrontmatterSchema = z
  .object({
    id: taskIdSchema.describe("The task id; must equal the file name without `.md`."),
    title: z.string().min(1).describe("One-line title shown in PRs, checks and the tracker."),
    type: agentTypeSchema.describe("Agent type that runs the task: 1, 2, 3 or refinery."),
    dependencies: z
      .array(taskIdSchema)
      .default([])
      .describe("Ids of tasks that must be MERGED first (MERGE_READY suffices for a refinery). All are blocking."),
    acceptance_criteria: z
      .array(z.string().min(1))
      .min(1, "at least one acceptance criterion is required")
      .describe("What must hold for the task to be done; the agent checks each one."),
    estimated_complexity: z.enum(["small", "medium", "large"]).describe("Rough size, used to pick timeouts and models."),
    spec: z.string().optional().describe("Path of the spec (relative to the plan folder) the task implements."),
    artifacts: z.array(z.string()).optional().describe("Files the task is expected to produce."),
    paths: z
      .array(z.string().min(1))
      .optional()
      .describe("Declared file scope (glob patterns); used to predict conflicts between tasks in flight."),
    model: modelSpecSchema
      .optional()
      .describe("A tier (low, medium, high) or a model id for this task's implementing sessions, over the config's (see docs/runner.md#model-tiers)."),
    issue: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        "The issue of this repository the task does: its PR links it, and the issue shows the task's state and closes when the run's final PR merges (see docs/formats.md#plans-from-an-issue-tree).",
      ),
    agent: agentChoiceSchema
      .optional()
      .describe(
        "The agent that runs this task, over its kind's (`agent.kinds`) and the config's `agent.adapter`: one adapter name, or an ordered list whose next agent takes the next attempt when one is stopped by its provider (a usage limit, a rate limit) — see docs/runner.md#agents-per-task.",
      ),
    test_command: z.string().optional().describe("Command that verifies this task, overriding the config's test_command."),
    budget: taskBudgetSchema.optional().describe("The task's own caps, overriding the config's `budgets` (see docs/runner.md#budgets)."),
    retry_policy: taskRetryPolicySchema.optional(),
    sentinel: z
      .boolean()
      .optional()
      .describe(
        "false: no sentinel checks this task after its own stages, whatever the config's `sentinel.enabled` says; true: one does even when the config turns it off. A refinery verifies in its own stages and may not set it.",
      ),
  })
  .strict()
  .superRefine((t, ctx) => checkModelFits(t.agent, t.model, ctx))
  .describe("A Forge task: YAML frontmatter of a task file.");

export type TaskFrontmatter = z.infer<typeof taskFrontmatterSchema>;

/**
 * Fields a task once had and Forge no longer reads, with why: a plan that sets one is refused with
 * the rule `removed-field` (docs/formats.md#validation-rules), not a bare "unknown field".
 * `base_ref`: every task branch is cut from the run's integration branch, which holds the work of
 * the task's dependencies and which its pull request merges into; a branch cut from another ref
 * would lack that work and bring that ref's history into the run.
 */
export const REMOVED_TASK_FIELDS: Readonly<Record<string, string>> = {
  base_ref:
    "is no longer supported: every task branch is cut from the run's integration branch, which holds the work of its dependencies; remove the field",
};

/** Body sections every task file must have, in this order of appearance is not required. */
export const TASK_BODY_SECTIONS = ["Description", "Context", "Instructions"] as const;
