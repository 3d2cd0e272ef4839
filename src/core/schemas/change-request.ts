import { z } from "zod";

/** A Change Request (see docs/formats.md#change-request), posted as an issue labelled `forge:change-request`. */
export const changeRequestFrontmatterSchema = z
  .object({
    id: z.string().regex(/^cr-[a-z0-9][a-z0-9._-]*$/, "must look like cr-<slug>").describe("CR id, unique within the run."),
    run_id: z.string().min(1).describe("The run that raised it."),
    title: z.string().min(1).describe("One-line title, used as the issue title."),
    emitted_by: z.string().min(1).describe("Task id of the refinery or agent that raised it."),
    emitted_at: z.string().describe("When it was raised (ISO-8601)."),
    status: z.enum(["pending", "approved", "rejected", "applied"]).default("pending").describe("Lifecycle state."),
    reason: z.string().min(1).describe("Why the plan is insufficient."),
    affected_tasks: z.array(z.string()).default([]).describe("Task ids the CR concerns."),
    suggested_action: z.enum(["RETRY", "AMEND", "MANUAL_REVIEW"]).describe("What the emitter proposes."),
    priority: z.enum(["HIGH", "MEDIUM", "LOW"]).default("MEDIUM").describe("How urgent it is."),
    suggested_changes: z.string().default("").describe("Free text: tasks or edges the emitter suggests adding."),
  })
  .strict()
  .describe("A Change Request: the plan needs amending before the run can go on.");
export type ChangeRequestFrontmatter = z.infer<typeof changeRequestFrontmatterSchema>;

export const CHANGE_REQUEST_BODY_SECTIONS = ["Description", "Impact Assessment", "Proposed Resolution"] as const;
