import { z } from "zod";
import { agentTypeSchema, taskIdSchema } from "./common.js";

export const dagNodeSchema = z
  .object({
    id: taskIdSchema.describe("Node id; equals the task file's id."),
    type: z.enum(["task", "refinery"]).describe("A task, or a refinery (integration checkpoint)."),
    agentType: agentTypeSchema.describe("Agent type that runs the node; 'refinery' exactly when type is refinery."),
    dependencies: z.array(taskIdSchema).describe("Ids this node depends on; the edges of the DAG."),
    metadata: z.record(z.string(), z.unknown()).optional().describe("Free-form data for tools; ignored by the executor."),
  })
  .strict();
export type DagNode = z.infer<typeof dagNodeSchema>;

/** `.forge/plans/<planId>/dag.json`: the DAG with every overlay already applied (see docs/formats.md#dag-json). */
export const dagSchema = z
  .object({
    version: z.literal(1).describe("dag.json format version."),
    planId: taskIdSchema.describe("The plan's id; equals its folder name under .forge/plans/."),
    nodes: z.array(dagNodeSchema).describe("Every task and refinery of the plan."),
    metadata: z
      .object({
        createdAt: z.string().describe("When the plan was written (ISO-8601)."),
        createdBy: z.string().describe("Who or what wrote it (a person, or the Captain agent)."),
        totalTasks: z.number().int().min(0).describe("Number of nodes of type task."),
        totalRefineries: z.number().int().min(0).describe("Number of nodes of type refinery."),
        issue: z
          .number()
          .int()
          .positive()
          .optional()
          .describe(
            "The issue whose sub-issues the plan was built from (`/forge plan` on an issue tree): the run's summary is shown on it (see docs/formats.md#plans-from-an-issue-tree).",
          ),
      })
      .strict()
      .describe("Facts about the plan; the totals must match the nodes."),
  })
  .strict()
  .describe("The plan's DAG.");
export type Dag = z.infer<typeof dagSchema>;
