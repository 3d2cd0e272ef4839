import { z } from "zod";
import { agentTypeSchema, taskBudgetSchema, taskStatusSchema } from "./schemas/common.js";
import { effectSchema } from "./effects.js";
import { feedbackSchema } from "./feedback.js";

export { feedbackSchema, type Feedback } from "./feedback.js";

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
    priority: z.number().int().min(0).default(0).describe("Number of nodes downstream of it; ready tasks with more go first."),
  })
  .strict();
export type PlanNode = z.infer<typeof planNodeSchema>;

/** Why a FAILED task is not retried by itself. */
export const holdSchema = z
  .enum(["exhausted", "fatal", "human", "escalated", "cancelled", "budget"])
  .describe(
    "exhausted: retries used up; fatal: exit 2; human: waiting for an answer (exit 3); escalated: waiting for a CR (exit 11); cancelled: exit 20 or /forge cancel; budget: stopped at its budget, waiting for /forge budget.",
  );
export type Hold = z.infer<typeof holdSchema>;

/** The changing state of one task. `tasks[i]` belongs to `plan.nodes[i]`. */
export const taskStateSchema = z
  .object({
    id: z.string().describe("Task id (same as the plan node)."),
    status: taskStatusSchema,
    attempt: z.number().int().min(0).describe("Current attempt; 0 before the first dispatch."),
    retries: z.number().int().min(0).describe("Automatic retries used (manual retries and usage limits are not counted)."),
    blockers: z
      .number()
      .int()
      .min(0)
      .describe("Dependencies not yet satisfied (MERGED, or MERGE_READY for a refinery). Kept incrementally."),
    notBefore: z.string().optional().describe("Backoff: not dispatched before this time."),
    dispatchedAttempt: z.number().int().min(0).describe("Highest attempt ever dispatched; a (task, attempt) is dispatched at most once."),
    dispatchedAt: z.string().optional().describe("When the current attempt was dispatched."),
    startedAt: z.string().optional().describe("When its job was seen running."),
    lastHeartbeat: z.string().optional().describe("Last sign of life of the current attempt."),
    branch: z.string().optional().describe("Branch of the current attempt."),
    walkthroughSha: z.string().optional().describe("head_sha claimed by the current attempt's walkthrough."),
    pushedSha: z
      .string()
      .optional()
      .describe("Head of the current attempt's work as read back from GitHub (the parent of the runner's record commit)."),
    recordSha: z.string().optional().describe("The runner's record commit: the branch head the PR merges."),
    prNumber: z.number().int().optional().describe("PR of the current attempt."),
    workflowRunId: z.number().int().optional().describe("Workflow run of the current attempt."),
    mergeSha: z.string().optional().describe("Commit that merged it."),
    hold: holdSchema.optional(),
    question: z.string().optional().describe("Exit 3: the agent's question."),
    context: z
      .object({
        refinement: z.string().optional().describe("Refinement document of the previous attempt (exit 10)."),
        answer: z.string().optional().describe("A person's answer or message from /forge retry."),
        conflicts: z
          .array(z.string())
          .optional()
          .describe(
            "A refinery's current attempt: upstream branches the App could not merge into its branch, kept when the branch was prepared and handed to its dispatch.",
          ),
      })
      .optional()
      .describe("Extra context handed to the next attempt."),
    confidence: z.number().optional().describe("Walkthrough confidence of the last completed attempt."),
    walkthroughStatus: z.enum(["completed", "failed", "partial"]).optional().describe("Walkthrough status of the last completed attempt."),
    filesChanged: z.array(z.string()).optional().describe("Files the last completed attempt changed."),
    lastError: z.string().optional().describe("Why the last attempt failed."),
    spentUsd: z
      .number()
      .min(0)
      .optional()
      .describe("Model spend of every finished attempt of the task, in US dollars, as the runner measured it."),
    spentTokens: z.number().int().min(0).optional().describe("Model tokens (input + output) of every finished attempt of the task."),
    agentMs: z.number().int().min(0).optional().describe("Time the task's agents worked, over its finished attempts (milliseconds)."),
    reservedUsd: z.number().min(0).optional().describe("The running attempt's dollar cap, reserved from the run's budget while it runs."),
    budgetExtraUsd: z.number().min(0).optional().describe("Dollars added to the task's budget by /forge budget <task> +<amount>."),
    approved: z.boolean().optional().describe("A person approved this refinery's merge (refinery_approval)."),
    protectedPaths: z
      .array(z.string())
      .optional()
      .describe("Protected paths the current attempt's PR changes, as GitHub listed them: its merge waits for `/forge approve`."),
    approvedHead: z
      .string()
      .optional()
      .describe("The PR head a person approved with protected paths changed: that head merges without asking again."),
    iteration: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(
        "Revision of the current attempt on its PR (absent: 0, the attempt's first run). Each review asking for changes, `/forge fix` or red CI that starts a revision adds 1 (see docs/executor.md#iterations).",
      ),
    reviewIterations: z.number().int().min(0).optional().describe("Revisions of the current attempt started by reviews or `/forge fix`."),
    ciFixes: z.number().int().min(0).optional().describe("Revisions of the current attempt started by failing required checks."),
    feedback: z
      .array(feedbackSchema)
      .optional()
      .describe("Feedback on the current attempt's PR not yet handed to a revision: the next revision takes all of it at once."),
    answered: z
      .array(z.number().int())
      .optional()
      .describe("Reviews of the current attempt a revision already took: a redelivered review starts nothing again."),
    answeredHeads: z.array(z.string()).optional().describe("Heads whose failing checks a fix revision already took."),
    steering: z
      .array(
        z
          .object({
            id: z.number().int().min(1).describe("Numbered from 1 per task: the job delivers each once."),
            actor: z.string().describe("Who steered (write access checked on GitHub)."),
            message: z.string().describe("The message, bounded."),
            at: z.string().describe("When the App took it."),
          })
          .strict(),
      )
      .optional()
      .describe("`/forge steer` messages for the running agent, newest last (at most 10 kept); the job polls them every heartbeat."),
    priorRunId: z
      .number()
      .int()
      .optional()
      .describe("The workflow run of the attempt's previous revision: a job at or before it is never the current revision's."),
    reviewApprovedHead: z
      .string()
      .optional()
      .describe("merge_policy review: the PR head a person with write access approved in a review; only that head merges."),
    waiting: z
      .string()
      .optional()
      .describe("Why a MERGE_READY task waits for a person rather than revising (a bound on revisions was reached)."),
    contained: z
      .array(z.string())
      .optional()
      .describe(
        "A refinery's current attempt: upstream task ids its record commit was seen to contain (GitHub's compare) when its result arrived; its merge marks only these MERGED.",
      ),
  })
  .strict();
export type TaskState = z.infer<typeof taskStateSchema>;

export const changeRequestStateSchema = z
  .object({
    id: z.string().describe("CR id."),
    emittedBy: z.string().describe("Task that raised it."),
    attempt: z.number().int().describe("Attempt of that task."),
    title: z.string().describe("One-line title, the CR issue's title."),
    reason: z.string().describe("Why the plan is insufficient."),
    affectedTasks: z.array(z.string()).default([]).describe("Task ids the CR concerns."),
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
    version: z.literal(1).describe("Journal format version."),
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
