import { z } from "zod";
import { agentTypeSchema, taskBudgetSchema } from "./schemas/common.js";
import { taskRetryPolicySchema } from "./schemas/retry-policy.js";
import { ADAPTERS } from "./schemas/adapters.js";
import { effectSchema } from "./effects.js";
import { taskStateSchema } from "./task-record.js";

export { feedbackSchema, type Feedback } from "./feedback.js";
export {
  attemptRecordSchema,
  holdSchema,
  newAttempt,
  newRevision,
  newTask,
  nextAttemptSchema,
  resumePointSchema,
  revisionRecordSchema,
  taskStateSchema,
  type AttemptRecord,
  type Hold,
  type NextAttempt,
  type ResumePoint,
  type RevisionRecord,
  type SteeringMessage,
  type TaskState,
} from "./task-record.js";

/** The journal's format version: 2 since a task's attempt and revision are records of their own (./journal-migration.ts reads version 1). */
export const JOURNAL_VERSION = 2;

/** A node of the plan as the run pinned it. Static for the run, except that overlays append nodes and edges. */
export const planNodeSchema = z
  .object({
    id: z.string().describe("Task id."),
    kind: z.enum(["task", "refinery"]).describe("A task or a refinery."),
    agentType: agentTypeSchema.describe("Agent type that runs it."),
    title: z.string().default("").describe("Task title, for checks and the tracker."),
    dependencies: z.array(z.string()).describe("Ids it depends on."),
    paths: z.array(z.string()).default([]).describe("Declared file scope (globs), for conflict prediction."),
    budget: taskBudgetSchema.optional().describe("The task's own budget caps, from its front matter."),
    retryPolicy: taskRetryPolicySchema.optional().describe("The task's own retry policy, from its front matter `retry_policy`."),
    agents: z
      .array(z.enum(ADAPTERS))
      .min(1)
      .optional()
      .describe("The task's own agents in fallback order, from its front matter `agent` (absent: its kind's, else the config's)."),
    priority: z.number().int().min(0).default(0).describe("Number of nodes downstream of it; ready tasks with more go first."),
  })
  .strict();
export type PlanNode = z.infer<typeof planNodeSchema>;

export const changeRequestStateSchema = z
  .object({
    id: z.string().describe("CR id."),
    emittedBy: z.string().describe("Task that raised it."),
    attempt: z.number().int().describe("Attempt of that task."),
    title: z.string().describe("One-line title, the CR issue's title."),
    reason: z.string().describe("Why the plan is insufficient."),
    affectedTasks: z.array(z.string()).default([]).describe("Task ids the CR concerns."),
    suggestedAction: z.enum(["RETRY", "AMEND", "MANUAL_REVIEW"]).optional().describe("What the emitter proposes."),
    priority: z.enum(["HIGH", "MEDIUM", "LOW"]).optional().describe("How urgent the emitter says it is."),
    status: z.enum(["pending", "approved", "rejected", "applied"]).describe("Lifecycle state of the CR."),
    path: z.string().optional().describe("Repository path of the CR document on the emitter's branch."),
    issueNumber: z.number().int().optional().describe("The CR issue."),
    overlayId: z.string().optional().describe("Overlay that resolved it."),
  })
  .strict();
export type ChangeRequestState = z.infer<typeof changeRequestStateSchema>;

export const followupStateSchema = z
  .object({
    id: z.string().describe("_followup-<n>: the leading '_' keeps it apart from task ids."),
    sourceTaskId: z.string().describe("Task whose walkthrough listed the follow-up."),
    sourceAttempt: z.number().int().describe("Attempt of that task."),
    text: z.string().describe("The follow-up from the walkthrough."),
    branch: z.string().describe("Branch the follow-up agent works on."),
    status: z.enum(["queued", "running", "done", "merged", "failed"]).describe("queued: waiting for capacity or for the run to resume."),
    prNumber: z.number().int().optional().describe("The follow-up's PR, once opened."),
  })
  .strict();
export type FollowupState = z.infer<typeof followupStateSchema>;

/** How many comment ids of commands a run remembers (older ones are judged by `commands.below`). */
export const COMMAND_MEMORY = 200;

/**
 * A run's journal: everything the executor needs to decide, stored as JSON on the run's state ref.
 * GitHub objects remain the ground truth; the reconciler rebuilds this from them when it drifts.
 */
export const journalSchema = z
  .object({
    version: z.literal(JOURNAL_VERSION).describe("Journal format version."),
    runId: z.string().describe("The run."),
    planId: z.string().describe("The plan the run executes."),
    planCommit: z.string().describe("Commit the plan was pinned at; only a merged overlay moves it."),
    dagHash: z.string().describe("sha256 of the pinned dag.json."),
    integrationBranch: z.string().describe("The run's integration branch, which task PRs target."),
    baseBranch: z.string().describe("Branch the integration branch was cut from and the final PR targets."),
    createdAt: z.string().describe("When the run started (ISO-8601)."),
    status: z
      .enum(["running", "completed", "cancelled"])
      .describe("running until every node is MERGED (completed) or the run is cancelled."),
    completedAt: z.string().optional().describe("When the run completed or was cancelled."),
    seq: z.number().int().min(0).describe("seq of the last event emitted; the next is seq + 1."),
    plan: z
      .object({
        nodes: z.array(planNodeSchema).describe("The DAG's nodes, overlays applied."),
        overlays: z.array(z.string()).default([]).describe("Ids of the applied overlays, in order."),
      })
      .strict()
      .describe("The plan as the run pinned it."),
    tasks: z.array(taskStateSchema).describe("State of each node; tasks[i] belongs to plan.nodes[i]."),
    merged: z.number().int().min(0).describe("Number of MERGED nodes; the run completes when it equals the node count."),
    pause: z
      .object({
        manual: z.boolean().describe("Paused by /forge pause."),
        changeRequests: z.array(z.string()).describe("Open CRs holding the run."),
        usageLimitUntil: z.string().optional().describe("Model usage limit: no dispatch before this time."),
        budget: z
          .boolean()
          .optional()
          .describe(
            "The run's remaining budget cannot cover the next attempt: nothing is dispatched until /forge budget +<amount> (or running attempts spend less than they reserved).",
          ),
      })
      .strict()
      .describe("Why dispatching is paused, if it is."),
    changeRequests: z.array(changeRequestStateSchema).describe("Change Requests raised during the run."),
    followups: z.array(followupStateSchema).describe("Follow-up agents spawned from walkthrough review."),
    outbox: z.array(effectSchema).describe("Effects decided but not yet acknowledged as done."),
    budgetExtraUsd: z.number().min(0).optional().describe("Dollars added to the run's budget by /forge budget +<amount>."),
    commands: z
      .object({
        comments: z
          .array(z.number().int().positive())
          .max(COMMAND_MEMORY)
          .describe("Ids of the latest comments whose commands the run took, ascending."),
        below: z
          .number()
          .int()
          .min(0)
          .describe("Every comment id up to this one is taken as seen: the oldest ids forgotten to keep the list short."),
      })
      .strict()
      .optional()
      .describe("The comments whose /forge commands the run acted on: each is acted on once, however often it is delivered."),
  })
  .strict();
export type Journal = z.infer<typeof journalSchema>;
