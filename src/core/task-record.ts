/**
 * The record of one task in the journal (version 2): the task, its current attempt and the
 * attempt's current revision, each a record of its own (docs/formats.md#task-record).
 *
 * - The **task** holds what outlives an attempt: its status, blockers, counts, spend, the last
 *   error, the last completed attempt's walkthrough facts, and `next` — what a retry hands the next
 *   attempt (a refinement, a person's answer, a backoff).
 * - The **attempt** (`attempt`) is one branch and one PR: made new when the attempt is dispatched,
 *   and gone when it is retried (the task is PENDING again, with `attempts` saying how many ran).
 *   Nothing of one attempt reaches the next but what the task holds.
 * - The **revision** (`attempt.revision`) is one run of the attempt's agent — its first
 *   (`iteration` 0) or a revision on its PR: made new at each revision, so no verdict on an earlier
 *   head (the gate, protected paths, approvals) carries over.
 *
 * The rules read from these records (the PR's head, a merge held for protected paths, a paused run)
 * are in ./task-rules.ts; journals of version 1 are read through ./journal-migration.ts.
 */
import { z } from "zod";
import { feedbackSchema } from "./feedback.js";
import { liveProgressSchema } from "./live-progress.js";
import { ADAPTERS } from "./schemas/adapters.js";
import { taskStatusSchema } from "./schemas/common.js";
import { RESUME_CLASSES } from "./schemas/retry-policy.js";

/** Why a FAILED task is not retried by itself. */
export const holdSchema = z
  .enum(["exhausted", "fatal", "human", "escalated", "cancelled", "budget", "blocked"])
  .describe(
    "exhausted: retries used up; fatal: exit 2; human: waiting for an answer (exit 3); escalated: waiting for a CR (exit 11); cancelled: exit 20 or /forge cancel; budget: stopped at its budget, waiting for /forge budget; blocked: a rule of the repository refused the job's push, waiting for a person to change it and /forge retry.",
  );
export type Hold = z.infer<typeof holdSchema>;

export const steeringMessageSchema = z
  .object({
    id: z.number().int().min(1).describe("Numbered from 1 per attempt: the job delivers each once."),
    actor: z.string().describe("Who steered (write access checked on GitHub)."),
    message: z.string().describe("The message, bounded."),
    at: z.string().describe("When the App took it."),
  })
  .strict();
export type SteeringMessage = z.infer<typeof steeringMessageSchema>;

/** One run of an attempt's agent: the attempt's first run (iteration 0) or a revision on its PR. */
export const revisionRecordSchema = z
  .object({
    iteration: z
      .number()
      .int()
      .min(0)
      .describe(
        "0 for the attempt's first run; each review asking for changes, `/forge fix` or red CI that starts a revision adds 1 (see docs/executor.md#iterations).",
      ),
    dispatchedAt: z.string().describe("When this run was dispatched."),
    startedAt: z.string().optional().describe("When its job was seen running."),
    lastHeartbeat: z.string().optional().describe("Last sign of life of its job."),
    progress: liveProgressSchema
      .optional()
      .describe(
        "The agent's latest progress as its job's live check run told it (stage, turns, last tool, last heartbeat), read by the reconciler; shown on the tracker while the task runs (see docs/runner.md#live-progress).",
      ),
    workflowRunId: z.number().int().optional().describe("Its job's workflow run."),
    priorRunId: z
      .number()
      .int()
      .optional()
      .describe("The previous revision's workflow run: a job at or before it is never this revision's."),
    walkthroughSha: z.string().optional().describe("head_sha claimed by this run's walkthrough."),
    pushedSha: z
      .string()
      .optional()
      .describe("Head of this run's work as read back from GitHub (the parent of the runner's record commit)."),
    protectedPaths: z
      .array(z.string())
      .optional()
      .describe("Protected paths the PR changes at this run's head, as GitHub listed them: its merge waits for `/forge approve`."),
    approvedHead: z
      .string()
      .optional()
      .describe("The PR head a person approved with protected paths changed: that head merges without asking again."),
    checkedHead: z
      .string()
      .optional()
      .describe("The head whose PR the App read and found no protected path in, before a refinery merges its branch."),
    reviewApprovedHead: z
      .string()
      .optional()
      .describe("merge_policy review: the PR head a person with write access approved in a review; only that head merges."),
    waiting: z
      .string()
      .optional()
      .describe("Why the MERGE_READY task waits for a person rather than revising (a bound on revisions was reached)."),
  })
  .strict();
export type RevisionRecord = z.infer<typeof revisionRecordSchema>;

/**
 * An upstream a refinery's job squashes onto its branch when the branch must keep a linear history
 * (docs/executor.md#merging-under-the-repositorys-rules): the upstream's branch and the head the
 * journal verified (its record commit) — never whatever the branch holds by then.
 */
export const squashUpstreamSchema = z
  .object({
    branch: z.string().min(1).describe("The upstream task's branch."),
    head: z
      .string()
      .regex(/^[0-9a-f]{40}$/)
      .describe("The upstream's verified head (its record commit) that the job squashes."),
  })
  .strict();
export type SquashUpstream = z.infer<typeof squashUpstreamSchema>;

/**
 * Where a resumed attempt picks up (docs/executor.md#resuming): the branch and PR of the attempt it
 * continues, and — from that attempt's checkpoint, checked by the executor — the first stage left
 * pending, the agent CLI's session and the depth its sessions had used.
 */
export const resumePointSchema = z
  .object({
    reason: z.enum(RESUME_CLASSES).describe("How the attempt it continues ended (the retry policy's class)."),
    fromAttempt: z.number().int().min(1).describe("The attempt whose work it continues."),
    branch: z.string().describe("That attempt's branch, which it continues on (its PR stays the PR)."),
    prNumber: z.number().int().optional().describe("That attempt's PR, when known."),
    priorRunId: z.number().int().describe("That attempt's last job: only workflow runs after it are the new attempt's."),
    head: z
      .string()
      .regex(/^[0-9a-f]{40}$/)
      .optional()
      .describe("The head it continues from, when the attempt ended with a record commit."),
    stage: z.string().optional().describe("The first stage its checkpoint left pending."),
    session: z
      .object({
        adapter: z.enum(ADAPTERS).describe("The CLI that holds the session."),
        id: z.string().describe("Its session id."),
        stage: z.string().describe("The stage whose session it is."),
      })
      .strict()
      .optional()
      .describe("The agent CLI's session to resume, and the stage it belongs to."),
    depthUsed: z.number().int().min(0).optional().describe("Spawn depth the attempt's sessions had used."),
  })
  .strict();
export type ResumePoint = z.infer<typeof resumePointSchema>;

/** One attempt of a task: its branch, its PR, its jobs (the current one in `revision`). */
export const attemptRecordSchema = z
  .object({
    branch: z.string().describe("The attempt's branch."),
    prNumber: z.number().int().optional().describe("The attempt's PR."),
    recordSha: z
      .string()
      .optional()
      .describe(
        "The runner's latest record commit on the branch: the PR's head, which the merge names. A revision's replaces its predecessor's.",
      ),
    branchUpdate: z
      .object({
        over: z.string().describe("The attempt's own head (its record commit, else its pushed work) the update was made over."),
        requested: z
          .string()
          .optional()
          .describe(
            "The PR head Forge asked GitHub to bring up to date (update-branch's `expected_head_sha`), until its new head is seen.",
          ),
        requestedAt: z.string().optional().describe("When Forge asked."),
        head: z
          .string()
          .optional()
          .describe(
            "The head GitHub made: the integration branch merged into the PR's previous head, by the App. The PR's head while the attempt's own head is `over`.",
          ),
      })
      .strict()
      .optional()
      .describe(
        "Forge brought the PR's branch up to date with the integration branch (update-branch), as the branch's rules want before a merge (docs/executor.md#merging-under-the-repositorys-rules).",
      ),
    mergeSha: z.string().optional().describe("Commit that merged the attempt's PR."),
    mergeBlockedSaid: z
      .literal(true)
      .optional()
      .describe(
        "Forge said on the attempt's PR why GitHub refused its merge (one comment, updated in place): once the PR merges, that comment says so.",
      ),
    hold: holdSchema.optional(),
    question: z.string().optional().describe("Exit 3: the agent's question."),
    conflicts: z
      .array(z.string())
      .optional()
      .describe(
        "A refinery: upstream branches the App could not merge into its branch, kept when the branch was prepared and handed to its dispatch.",
      ),
    squash: z
      .array(squashUpstreamSchema)
      .optional()
      .describe(
        "A refinery whose branch must keep a linear history: its upstream branches, each at the head the journal verified, that its job squashes onto the branch (one commit each) instead of the App merging them.",
      ),
    contained: z
      .array(z.string())
      .optional()
      .describe(
        "A refinery: upstream task ids its record commit was seen to contain (GitHub's compare) when its result arrived; its merge marks only these MERGED.",
      ),
    reservedUsd: z.number().min(0).optional().describe("The attempt's dollar cap, reserved from the run's budget while it runs."),
    steering: z
      .array(steeringMessageSchema)
      .optional()
      .describe("`/forge steer` messages for the attempt's agent, newest last (at most 10 kept); the job polls them every heartbeat."),
    feedback: z
      .array(feedbackSchema)
      .optional()
      .describe("Feedback on the attempt's PR not yet handed to a revision: the next revision takes all of it at once."),
    answered: z
      .array(z.number().int())
      .optional()
      .describe(
        "Reviews of the attempt's PR a revision already took (or the revision limit met): a redelivered review starts nothing again.",
      ),
    answeredHeads: z.array(z.string()).optional().describe("Heads whose failing checks a fix revision already took."),
    reviewIterations: z.number().int().min(0).optional().describe("Revisions started by reviews or `/forge fix`."),
    ciFixes: z.number().int().min(0).optional().describe("Revisions started by failing required checks."),
    agent: z.enum(ADAPTERS).optional().describe("The agent (adapter) the attempt runs on, as its dispatch told its job."),
    resumed: resumePointSchema
      .omit({ branch: true, prNumber: true, priorRunId: true, session: true })
      .optional()
      .describe("The attempt continues an earlier attempt's work on its branch and PR: which, why, and from which stage."),
    revision: revisionRecordSchema.describe("The current run of the attempt's agent."),
  })
  .strict();
export type AttemptRecord = z.infer<typeof attemptRecordSchema>;

/** What a retry hands the next attempt; the dispatch takes it. */
export const nextAttemptSchema = z
  .object({
    notBefore: z.string().optional().describe("Backoff: not dispatched before this time."),
    refinement: z.string().optional().describe("Refinement document of the previous attempt (exit 10)."),
    answer: z.string().optional().describe("A person's answer or message from /forge retry."),
    resume: resumePointSchema
      .optional()
      .describe("The retry policy resumes the work: the next attempt continues on this branch and PR (absent: it starts fresh)."),
    fresh: z
      .string()
      .optional()
      .describe("Why the next attempt starts fresh although the retry policy would resume it (a refused checkpoint, say)."),
    switched: z
      .object({
        from: z.enum(ADAPTERS).describe("The agent of the attempt that ended."),
        reason: z.string().describe("Why the next attempt goes to the next agent of the list."),
      })
      .strict()
      .optional()
      .describe("The next attempt goes to another agent than the last one's (docs/executor.md#agent-fallback)."),
  })
  .strict();
export type NextAttempt = z.infer<typeof nextAttemptSchema>;

/** Attempts whose agent a task record remembers. */
export const AGENT_HISTORY = 20;

/** The state of one task. `tasks[i]` belongs to `plan.nodes[i]`. */
export const taskStateSchema = z
  .object({
    id: z.string().describe("Task id (same as the plan node)."),
    status: taskStatusSchema,
    blockers: z
      .number()
      .int()
      .min(0)
      .describe("Dependencies not yet satisfied (MERGED, or MERGE_READY for a refinery). Kept incrementally."),
    attempts: z
      .number()
      .int()
      .min(0)
      .describe("Attempts dispatched so far: the current attempt's number; a (task, attempt) is dispatched at most once."),
    retries: z.number().int().min(0).describe("Automatic retries used (manual retries and usage limits are not counted)."),
    next: nextAttemptSchema
      .optional()
      .describe("What the next attempt is given: set when the task fails or is retried, taken by its dispatch."),
    lastError: z.string().optional().describe("Why the last attempt failed."),
    lastErrorLog: z
      .string()
      .optional()
      .describe("The page of the job whose end without a result is the last error, where its log is (the tracker links it)."),
    confidence: z.number().optional().describe("Walkthrough confidence of the last completed attempt."),
    walkthroughStatus: z.enum(["completed", "failed", "partial"]).optional().describe("Walkthrough status of the last completed attempt."),
    filesChanged: z.array(z.string()).optional().describe("Files the last completed attempt changed."),
    spentUsd: z
      .number()
      .min(0)
      .optional()
      .describe("Model spend of every finished attempt of the task, in US dollars, as the runner measured it."),
    spentTokens: z.number().int().min(0).optional().describe("Model tokens (input + output) of every finished attempt of the task."),
    agentMs: z.number().int().min(0).optional().describe("Time the task's agents worked, over its finished attempts (milliseconds)."),
    budgetExtraUsd: z.number().min(0).optional().describe("Dollars added to the task's budget by /forge budget <task> +<amount>."),
    approved: z.boolean().optional().describe("A person approved this refinery's merge (refinery_approval)."),
    fallback: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        "The position in the task's agent list of the agent its next attempts go to (absent: the first): moved on by a usage limit or a provider failure.",
      ),
    agents: z
      .array(
        z
          .object({
            attempt: z.number().int().min(1).describe("The attempt."),
            agent: z.enum(ADAPTERS).describe("The agent (adapter) it ran on."),
            why: z.string().optional().describe("Why it ran on another agent than the attempt before it."),
          })
          .strict(),
      )
      .optional()
      .describe(`Which agent each attempt ran on, oldest first (the latest ${AGENT_HISTORY} kept).`),
    attempt: attemptRecordSchema
      .optional()
      .describe("The current attempt: from its dispatch until the task is retried (absent while the task is PENDING)."),
  })
  .strict();
export type TaskState = z.infer<typeof taskStateSchema>;

/** A task of a new run, or one an overlay adds: nothing dispatched yet. */
export function newTask(id: string): TaskState {
  return { id, status: "PENDING", blockers: 0, attempts: 0, retries: 0 };
}

/** A new attempt, dispatched at `at` on `branch`: nothing of an earlier attempt is in it. */
export function newAttempt(branch: string, at: string, reservedUsd?: number): AttemptRecord {
  return { branch, ...(reservedUsd !== undefined ? { reservedUsd } : {}), revision: { iteration: 0, dispatchedAt: at } };
}

/** The next run of an attempt's agent, after the job `priorRunId` of the one before. */
export function newRevision(iteration: number, at: string, priorRunId: number | undefined): RevisionRecord {
  return { iteration, dispatchedAt: at, ...(priorRunId !== undefined ? { priorRunId } : {}) };
}
