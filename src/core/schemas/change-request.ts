import { z } from "zod";

/**
 * How much of a Change Request Forge takes from an agent: every byte of it is untrusted, and it ends
 * up in an issue's title and body, the tracker, the journal and the HTML report. A document over
 * `bytes` is refused before it is parsed.
 */
export const CHANGE_REQUEST_LIMITS = {
  bytes: 65_536,
  title: 200,
  reason: 4_000,
  suggestedChanges: 8_000,
  affectedTasks: 50,
} as const;

/** A task id, a follow-up's included (`_followup-<n>`): what `affected_tasks` and `emitted_by` name. */
const CR_TASK_ID = /^_?[a-z0-9][a-z0-9._-]{0,99}$/;

/** One line: the title is an issue's title and a line of the tracker. */
const ONE_LINE = /^[^\r\n]*$/;

/** The fields the agent writes (docs/formats.md#change-request); the runner fills in the rest. */
const agentFields = {
  title: z
    .string()
    .trim()
    .min(1)
    .max(CHANGE_REQUEST_LIMITS.title)
    .regex(ONE_LINE, "must be one line")
    .describe("One-line title, in the emitter's words: the issue's title."),
  reason: z.string().trim().min(1).max(CHANGE_REQUEST_LIMITS.reason).describe("Why the plan is insufficient."),
  affected_tasks: z
    .array(z.string().regex(CR_TASK_ID, "must be a task id"))
    .max(CHANGE_REQUEST_LIMITS.affectedTasks)
    .default([])
    .describe("Task ids the CR concerns (the runner puts the emitter here when the agent names none)."),
  suggested_action: z.enum(["RETRY", "AMEND", "MANUAL_REVIEW"]).describe("What the emitter proposes."),
  priority: z.enum(["HIGH", "MEDIUM", "LOW"]).default("MEDIUM").describe("How urgent it is."),
  suggested_changes: z
    .string()
    .max(CHANGE_REQUEST_LIMITS.suggestedChanges)
    .default("")
    .describe("Free text: tasks or edges the emitter suggests adding."),
};

/** A Change Request (see docs/formats.md#change-request), posted as an issue labelled `forge:change-request`. */
export const changeRequestFrontmatterSchema = z
  .object({
    id: z.string().regex(/^cr-_?[a-z0-9][a-z0-9._-]*$/, "must look like cr-<slug>").describe("CR id, unique within the run."),
    run_id: z.string().min(1).describe("The run that raised it."),
    title: agentFields.title,
    emitted_by: z.string().regex(CR_TASK_ID, "must be a task id").describe("Task id of the refinery or agent that raised it."),
    emitted_at: z.string().describe("When it was raised (ISO-8601)."),
    status: z.enum(["pending", "approved", "rejected", "applied"]).default("pending").describe("Lifecycle state."),
    reason: agentFields.reason,
    affected_tasks: agentFields.affected_tasks,
    suggested_action: agentFields.suggested_action,
    priority: agentFields.priority,
    suggested_changes: agentFields.suggested_changes,
  })
  .strict()
  .describe("A Change Request: the plan needs amending before the run can go on.");
export type ChangeRequestFrontmatter = z.infer<typeof changeRequestFrontmatterSchema>;

/** Fields of the front matter the runner fills in (the agent's values, if any, are replaced). */
export const CHANGE_REQUEST_RUNNER_FIELDS = ["id", "run_id", "emitted_by", "emitted_at", "status"] as const;

/**
 * The front matter as the agent writes it: its own fields, checked as the full schema checks them;
 * the runner's fields may be present (they are replaced), anything else is an error.
 */
export const agentChangeRequestSchema = z
  .object({
    ...agentFields,
    ...Object.fromEntries(CHANGE_REQUEST_RUNNER_FIELDS.map((k) => [k, z.unknown().optional()])),
  })
  .strict();
export type AgentChangeRequest = Pick<ChangeRequestFrontmatter, keyof typeof agentFields>;

export const CHANGE_REQUEST_BODY_SECTIONS = ["Description", "Impact Assessment", "Proposed Resolution"] as const;
