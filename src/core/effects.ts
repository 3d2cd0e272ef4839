import { z } from "zod";
import { dispatchAgentSchema } from "./agents.js";
import { agentTypeSchema, taskStatusSchema } from "./schemas/common.js";
import { feedbackSchema } from "./feedback.js";
import { resumeContextSchema } from "./schemas/checkpoint.js";

/**
 * Effects: idempotent commands the adapter carries out after persisting the journal. `key` is
 * deterministic; an effect with the key of one still in the outbox replaces it (latest wins), and
 * carrying out an effect twice has the same result as once.
 */
const base = { key: z.string().describe("Deterministic idempotency key.") };

export const effectSchema = z.discriminatedUnion("kind", [
  z.object({
    ...base,
    kind: z.literal("PrepareBranch").describe("Effect kind."),
    taskId: z.string().describe("Task id."),
    attempt: z.number().int().describe("Attempt number."),
    branch: z.string().describe("Branch to create."),
    from: z.string().describe("Branch to cut it from: the run's integration branch."),
    merge: z.array(z.string()).describe("For a refinery: upstream task branches to merge server-side; conflicts are listed for the agent."),
  }),
  z.object({
    ...base,
    kind: z.literal("DispatchAgent").describe("Effect kind."),
    taskId: z.string().describe("Task id."),
    attempt: z.number().int().describe("Attempt number."),
    branch: z.string().describe("Branch concerned."),
    agentType: agentTypeSchema.describe("Agent type that runs the attempt."),
    iteration: z.number().int().min(1).optional().describe("A revision of the attempt on its PR (absent: the attempt's first run)."),
    afterRunId: z
      .number()
      .int()
      .optional()
      .describe("A revision or a resumed attempt: the previous job's workflow run on the branch; a replay looks only for newer runs."),
    context: z
      .object({
        refinement: z.string().optional().describe("Refinement document of the previous attempt (exit 10)."),
        answer: z.string().optional().describe("A person's answer or message from /forge retry."),
        agent: dispatchAgentSchema.optional(),
        feedback: z.array(feedbackSchema).optional().describe("A revision: the feedback it must answer."),
        prNumber: z.number().int().optional().describe("A revision: the PR it revises."),
        resume: resumeContextSchema.optional(),
        budget: z
          .object({
            usd: z.number().min(0).optional().describe("Dollars the attempt may spend."),
            tokens: z.number().int().min(0).optional().describe("Tokens the attempt may use."),
          })
          .optional()
          .describe("The attempt's caps: the runner stops the agent past them."),
      })
      .optional()
      .describe("Extra context handed to the attempt."),
  }),
  z.object({
    ...base,
    kind: z.literal("UpsertCheckRun").describe("Effect kind."),
    taskId: z.string().describe("Task id."),
    attempt: z.number().int().describe("Attempt number."),
    status: taskStatusSchema,
    summary: z.string().describe("One line for the check run's title."),
  }),
  z.object({
    ...base,
    kind: z.literal("MergePullRequest").describe("Effect kind."),
    taskId: z.string().describe("Task id."),
    attempt: z.number().int().describe("Attempt number."),
    branch: z.string().describe("Branch concerned."),
    prNumber: z.number().int().optional().describe("Pull request number, when known."),
  }),
  z.object({
    ...base,
    kind: z
      .literal("OpenPullRequest")
      .describe(
        "Effect kind: open a MERGE_READY task's pull request its runner did not open (a job's token may not open pull requests where Actions may not), when no merge will open it.",
      ),
    taskId: z.string().describe("Task id."),
    attempt: z.number().int().describe("Attempt number."),
    branch: z.string().describe("The attempt's branch: the pull request's head."),
  }),
  z.object({
    ...base,
    kind: z
      .literal("CheckUpstream")
      .describe("Effect kind: read what a MERGE_READY task's pull request changes before a refinery merges its branch."),
    taskId: z.string().describe("The upstream task."),
    attempt: z.number().int().describe("Its attempt."),
    branch: z.string().describe("Its branch, which the refinery's branch would merge."),
    prNumber: z.number().int().optional().describe("Its pull request number, when known."),
    refinery: z.string().describe("The refinery waiting to merge it."),
  }),
  z.object({
    ...base,
    kind: z.literal("OpenChangeRequest").describe("Effect kind."),
    crId: z.string().describe("Change Request id."),
    emittedBy: z.string().describe("Task that raised it."),
    attempt: z.number().int().describe("Attempt number."),
    path: z.string().optional().describe("Repository path of the CR document, when known."),
  }),
  z.object({ ...base, kind: z.literal("DispatchCaptain").describe("Effect kind."), crId: z.string().describe("Change Request id.") }),
  z.object({
    ...base,
    kind: z.literal("PostComment").describe("Effect kind."),
    target: z
      .discriminatedUnion("on", [
        z.object({
          on: z.literal("task").describe("What the comment is on."),
          taskId: z.string().describe("Task id."),
          attempt: z.number().int().describe("Attempt number."),
        }),
        z.object({ on: z.literal("tracker").describe("What the comment is on.") }),
        z.object({ on: z.literal("cr").describe("What the comment is on."), crId: z.string().describe("Change Request id.") }),
      ])
      .describe("Where the comment goes: a task's PR, the run tracker or a CR issue."),
    body: z.string().describe("Comment body (Markdown)."),
    updates: z
      .string()
      .optional()
      .describe(
        "The key of the PostComment whose comment this one replaces in place (its marker kept), if that comment was posted; none is posted otherwise.",
      ),
  }),
  z.object({
    ...base,
    kind: z.literal("UpdateTracker").describe("Effect kind."),
    seq: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe("The journal's seq when decided: the tracker is redrawn as of this event (absent in older journals)."),
  }),
  z.object({
    ...base,
    kind: z.literal("SpawnFollowup").describe("Effect kind."),
    followupId: z.string().describe("Follow-up id."),
    sourceTaskId: z.string().describe("Task whose walkthrough listed the follow-up."),
    text: z.string().describe("The follow-up text."),
    branch: z.string().describe("Branch concerned."),
  }),
  z.object({ ...base, kind: z.literal("OpenFinalPullRequest").describe("Effect kind.") }),
  z.object({
    ...base,
    kind: z.literal("CleanupBranches").describe("Effect kind."),
    branches: z.array(z.string()).describe("Branches to delete."),
  }),
  z.object({
    ...base,
    kind: z.literal("CancelAgent").describe("Effect kind."),
    taskId: z.string().describe("Task id."),
    attempt: z.number().int().describe("Attempt number."),
    workflowRunId: z.number().int().optional().describe("Workflow run to cancel, when known."),
  }),
]);
export type Effect = z.infer<typeof effectSchema>;
export type EffectKind = Effect["kind"];
