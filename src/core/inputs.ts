import { z } from "zod";
import { ADAPTERS } from "./schemas/adapters.js";
import { MAX_AGENTS } from "./agents.js";
import { liveProgressSchema } from "./live-progress.js";
import { checkpointSchema } from "./schemas/checkpoint.js";
import { taskRetryPolicySchema } from "./schemas/retry-policy.js";
import { agentTypeSchema, taskBudgetSchema, type AgentType } from "./schemas/common.js";

/**
 * Inputs of `decide`: normalised facts. The App turns webhooks, commands, reconciler sweeps and
 * effect results into these; the reducer never sees a raw payload. Any input may arrive twice or
 * out of order, so each is checked against the journal before it changes anything.
 */
const attemptRef = { taskId: z.string(), attempt: z.number().int().min(1) };
/** A job's facts name the revision of the attempt they are about (absent: 0, the attempt's first run). */
const iteration = {
  iteration: z.number().int().min(0).optional().describe("Revision of the attempt the job ran (docs/executor.md#iterations)."),
};

export const walkthroughFactsSchema = z
  .object({
    status: z.enum(["completed", "failed", "partial"]),
    confidence: z.number().min(0).max(1),
    headSha: z.string().describe("head_sha the walkthrough claims (filled in by the runner)."),
    filesChanged: z.array(z.string()),
    risks: z.array(z.string()).default([]),
    followups: z.array(z.string()).default([]),
  })
  .strict();
export type WalkthroughFacts = z.infer<typeof walkthroughFactsSchema>;

export const planNodeInputSchema = z
  .object({
    id: z.string(),
    kind: z.enum(["task", "refinery"]),
    agentType: agentTypeSchema,
    title: z.string().optional(),
    dependencies: z.array(z.string()),
    paths: z.array(z.string()).optional(),
    budget: taskBudgetSchema.optional(),
    retryPolicy: taskRetryPolicySchema.optional(),
    agents: z.array(z.enum(ADAPTERS)).min(1).max(MAX_AGENTS).optional(),
  })
  .strict();
export type PlanNodeInput = Omit<z.input<typeof planNodeInputSchema>, "agentType"> & { agentType: AgentType };

/**
 * What the App read at an attempt's branch head when the attempt left no result (src/app/branch-checkpoint.ts):
 * the runner's last checkpoint commit, or why it is none.
 */
const branchCheckpoint = {
  checkpoint: checkpointSchema
    .optional()
    .describe(
      "The runner's last checkpoint, read at the branch head's checkpoint commit (the attempt left no result): the executor checks it before a retry resumes from it.",
    ),
  checkpointProblem: z
    .string()
    .optional()
    .describe("The branch head is the attempt's checkpoint commit but holds no valid checkpoint: refused, the next attempt starts fresh."),
  checkpointSha: z.string().optional().describe("The checkpoint commit (the branch head): the head a resumed attempt continues from."),
  pushedSha: z.string().optional().describe("The checkpoint commit's parent as GitHub reported it: the work the checkpoint must name."),
};

const inputs = [
  z
    .object({
      kind: z.literal("tick"),
      checkpoints: z
        .array(z.object({ ...attemptRef, ...branchCheckpoint }).strict())
        .optional()
        .describe(
          "The branch checkpoint of each attempt this tick finds silent (src/core/decide/liveness.ts), read by the App before deciding; an entry with none: nothing to resume from but the branch head. Absent: nothing was read.",
        ),
    })
    .describe("Time passed: backoff expiry, stale detection, usage-limit expiry, scheduling."),
  z
    .object({ kind: z.literal("agent.started"), ...attemptRef, ...iteration, workflowRunId: z.number().int().optional() })
    .describe("The attempt's job is running (workflow_job in_progress)."),
  z
    .object({
      kind: z.literal("agent.heartbeat"),
      ...attemptRef,
      progress: liveProgressSchema
        .optional()
        .describe("What the job's live check run said of the agent's progress (src/core/live-progress.ts)."),
    })
    .describe("A sign of life of the attempt (a job event or a reconciler sweep)."),
  z
    .object({
      kind: z.literal("agent.finished"),
      ...attemptRef,
      ...iteration,
      exitCode: z.number().int(),
      walkthrough: walkthroughFactsSchema.optional().describe("Present when a valid walkthrough was committed."),
      pushedSha: z.string().optional().describe("Head of the work read back from GitHub by the adapter."),
      recordSha: z.string().optional().describe("The runner's record commit (the PR's head)."),
      error: z.string().optional(),
      refinement: z.string().optional(),
      question: z.string().optional(),
      changeRequest: z
        .object({
          id: z.string().optional(),
          title: z.string(),
          reason: z.string(),
          affectedTasks: z.array(z.string()).default([]),
          suggestedAction: z.enum(["RETRY", "AMEND", "MANUAL_REVIEW"]).optional(),
          priority: z.enum(["HIGH", "MEDIUM", "LOW"]).optional(),
          path: z.string().optional(),
        })
        .optional()
        .describe("An escalation (exit 11): the Change Request in the emitter's words (result.json change_request)."),
      rateLimitedUntil: z.string().optional(),
      budgetExceeded: z
        .object({
          limitUsd: z.number().optional(),
          limitTokens: z.number().optional(),
          spentUsd: z.number().optional(),
          spentTokens: z.number().optional(),
        })
        .optional()
        .describe("The runner stopped the agent at the attempt's budget (result.json budget_exceeded)."),
      spend: z
        .object({
          usd: z.number().min(0).optional(),
          tokens: z.number().int().min(0).optional(),
          agentMs: z.number().int().min(0).optional(),
        })
        .optional()
        .describe("What the attempt spent (result.json's cost_usd, tokens, started_at → finished_at)."),
      squashed: z
        .array(z.object({ branch: z.string(), head: z.string(), commit: z.string() }))
        .optional()
        .describe(
          "A refinery's attempt on a branch that must keep a linear history: the upstream heads its runner squashed, and the commit on the branch that holds each (result.json `squashed`).",
        ),
      uncontainedUpstreams: z
        .array(z.string())
        .optional()
        .describe(
          "A refinery's attempt: ids of its MERGE_READY upstream tasks whose head (recordSha, else pushedSha) the record commit does not contain, by GitHub's compare (read by the App). Absent when not checked.",
        ),
      checkpoint: checkpointSchema
        .optional()
        .describe(
          "The runner's last checkpoint (result.json `checkpoint`), as it parsed: the executor checks it before a retry resumes from it.",
        ),
      checkpointProblem: z
        .string()
        .optional()
        .describe("result.json carried a checkpoint that is not one (its schema): refused, the next attempt starts fresh."),
    })
    .describe("The runner's result of an attempt, read from the task branch."),
  z
    .object({
      kind: z.literal("agent.lost"),
      ...attemptRef,
      ...iteration,
      workflowRunId: z.number().int().optional().describe("The job that ended, when known."),
      reason: z.string(),
      logUrl: z.string().optional().describe("The page of the job that ended, where its log is, as GitHub gave it."),
      runnerLost: z
        .boolean()
        .optional()
        .describe(
          "The job ended with a step still running: its runner went away (a killed machine), so the attempt is STALE rather than FAILED.",
        ),
      ...branchCheckpoint,
      blockedBy: z
        .string()
        .max(2000)
        .optional()
        .describe(
          "A rule of the repository refused the job's push (GitHub's GH013/GH006 answer, read from the job's failure): which rule, which branch, what a person can do. The task waits for a person (hold `blocked`) instead of being retried.",
        ),
    })
    .describe("The attempt's job ended without a result."),
  z
    .object({ kind: z.literal("branch.pushed"), ...attemptRef, headSha: z.string() })
    .describe("The attempt's branch head moved (push webhook or read-back)."),
  z.object({ kind: z.literal("pr.opened"), ...attemptRef, number: z.number().int() }).describe("The attempt's PR exists."),
  z
    .object({ kind: z.literal("pr.merged"), ...attemptRef, number: z.number().int().optional(), mergeSha: z.string() })
    .describe("The attempt's PR was merged."),
  z
    .object({ kind: z.literal("effect.done"), key: z.string(), result: z.record(z.string(), z.unknown()).default({}) })
    .describe("An effect was carried out."),
  z
    .object({ kind: z.literal("effect.failed"), key: z.string(), error: z.string() })
    .describe("An effect failed for good (the adapter already retried transient errors)."),
  z
    .object({
      kind: z.literal("command"),
      command: z.enum(["retry", "pause", "resume", "cancel", "approve", "reject", "fix", "steer", "budget"]),
      actor: z.string(),
      amountUsd: z.number().positive().optional().describe("/forge budget: dollars to add."),
      taskId: z.string().optional(),
      which: z
        .literal("failed")
        .optional()
        .describe("/forge retry failed: every failed or exhausted task of the run, retried in this one decision."),
      crId: z.string().optional(),
      message: z.string().optional(),
      commentId: z
        .number()
        .int()
        .positive()
        .optional()
        .describe("The comment that gave the command: a command is acted on once per comment, whatever delivers it again."),
    })
    .describe("A /forge command from a person with write permission (checked by the App)."),
  z
    .object({
      kind: z.literal("overlay.applied"),
      crId: z.string(),
      overlayId: z.string(),
      planCommit: z.string(),
      nodes: z.array(planNodeInputSchema),
      edges: z.array(z.object({ from: z.string(), to: z.string() })),
    })
    .describe("A valid overlay PR was merged: new nodes and edges."),
  z
    .object({
      kind: z.literal("review.submitted"),
      ...attemptRef,
      reviewId: z.number().int(),
      actor: z.string(),
      state: z.enum(["approved", "changes_requested"]),
      headSha: z.string().describe("The commit the review was given on (`review.commit_id`)."),
      body: z.string().optional().describe("The review's body, bounded by the App."),
    })
    .describe("A review of the attempt's PR by a person whose write access the App checked on GitHub."),
  z
    .object({
      kind: z.literal("review.dismissed"),
      ...attemptRef,
      reviewId: z.number().int(),
      headSha: z.string().describe("The PR's head when the App re-read its reviews."),
      approved: z.boolean().describe("Whether a writer's approval of that head still stands on GitHub (re-read, not the payload)."),
    })
    .describe("A review of the attempt's PR was dismissed; the App re-read the PR's approvals from GitHub."),
  z
    .object({
      kind: z.literal("checks.failed"),
      ...attemptRef,
      headSha: z.string().describe("The PR head the checks ran on."),
      checks: z.array(z.string()).describe("Names of the failing required checks (the repository's own, not Forge's)."),
      details: z.string().optional().describe("Their summaries, annotations and log excerpts, bounded by the App."),
    })
    .describe("Required checks of the attempt's PR head failed."),
  z
    .object({
      kind: z.literal("merge.blocked"),
      ...attemptRef,
      reason: z.string().describe("The rule that refused the merge, the branch, and what a person can do (the App's words)."),
    })
    .describe(
      "GitHub refused the merge of the attempt's PR for a reason Forge cannot resolve by itself (docs/executor.md#merging-under-the-repositorys-rules).",
    ),
  z
    .object({
      kind: z.literal("branch.update_requested"),
      ...attemptRef,
      from: z.string().describe("The PR head GitHub was asked to bring up to date (update-branch's expected_head_sha)."),
    })
    .describe("GitHub accepted Forge's update of the attempt's PR branch (202): its new head comes later."),
  z
    .object({
      kind: z.literal("branch.updated"),
      ...attemptRef,
      from: z.string().describe("The PR head the update was made over."),
      head: z.string().describe("The new head: the integration branch merged into `from` by the App."),
    })
    .describe(
      "Forge's update of the attempt's PR branch landed, as the merge read it back from GitHub (the App's own push webhook is not taken in: src/app/guard.ts).",
    ),
  z.object({ kind: z.literal("cr.closed"), crId: z.string() }).describe("A CR issue was closed without an overlay."),
  z
    .object({ kind: z.literal("plan.changed"), commit: z.string() })
    .describe("The pinned plan changed on the default branch during the run."),
  z
    .object({ kind: z.literal("usage.limited"), until: z.string() })
    .describe("Another run of the installation hit the model's usage limit: no dispatch before `until`."),
] as const;

const leafInputSchema = z.discriminatedUnion("kind", inputs);
export type LeafInput = z.infer<typeof leafInputSchema>;

export const inputSchema = z.union([
  leafInputSchema,
  z.object({ kind: z.literal("batch"), inputs: z.array(leafInputSchema) }).describe("Several facts at once, e.g. a reconciler sweep."),
]);
export type Input = z.infer<typeof inputSchema>;
