import { z } from "zod";
import { agentTypeSchema, taskStatusSchema } from "./schemas/common.js";

/**
 * Effects: idempotent commands the adapter carries out after persisting the journal. `key` is
 * deterministic; an effect with the key of one still in the outbox replaces it (latest wins), and
 * carrying out an effect twice has the same result as once.
 */
const base = { key: z.string().describe("Deterministic idempotency key.") };

export const effectSchema = z.discriminatedUnion("kind", [
  z.object({
    ...base,
    kind: z.literal("PrepareBranch"),
    taskId: z.string(),
    attempt: z.number().int(),
    branch: z.string().describe("Branch to create."),
    from: z.string().describe("Branch to cut it from (the integration branch, or the task's base_ref)."),
    merge: z.array(z.string()).describe("For a refinery: upstream task branches to merge server-side; conflicts are listed for the agent."),
  }),
  z.object({
    ...base,
    kind: z.literal("DispatchAgent"),
    taskId: z.string(),
    attempt: z.number().int(),
    branch: z.string(),
    agentType: agentTypeSchema,
    context: z.object({ refinement: z.string().optional(), answer: z.string().optional() }).optional(),
  }),
  z.object({
    ...base,
    kind: z.literal("UpsertCheckRun"),
    taskId: z.string(),
    attempt: z.number().int(),
    status: taskStatusSchema,
    summary: z.string().describe("One line for the check run's title."),
  }),
  z.object({ ...base, kind: z.literal("MergePullRequest"), taskId: z.string(), attempt: z.number().int(), branch: z.string(), prNumber: z.number().int().optional() }),
  z.object({ ...base, kind: z.literal("OpenChangeRequest"), crId: z.string(), emittedBy: z.string(), attempt: z.number().int(), path: z.string().optional() }),
  z.object({ ...base, kind: z.literal("DispatchCaptain"), crId: z.string() }),
  z.object({
    ...base,
    kind: z.literal("PostComment"),
    target: z.discriminatedUnion("on", [
      z.object({ on: z.literal("task"), taskId: z.string(), attempt: z.number().int() }),
      z.object({ on: z.literal("tracker") }),
      z.object({ on: z.literal("cr"), crId: z.string() }),
    ]),
    body: z.string(),
  }),
  z.object({ ...base, kind: z.literal("UpdateTracker") }),
  z.object({ ...base, kind: z.literal("SpawnFollowup"), followupId: z.string(), sourceTaskId: z.string(), text: z.string(), branch: z.string() }),
  z.object({ ...base, kind: z.literal("OpenFinalPullRequest") }),
  z.object({ ...base, kind: z.literal("CleanupBranches"), branches: z.array(z.string()) }),
  z.object({ ...base, kind: z.literal("CancelAgent"), taskId: z.string(), attempt: z.number().int(), workflowRunId: z.number().int().optional() }),
]);
export type Effect = z.infer<typeof effectSchema>;
export type EffectKind = Effect["kind"];
