import { z } from "zod";
import { agentTypeSchema, taskStatusSchema } from "./common.js";

const s = z.string();
const n = z.number();

/**
 * Data of every event type: the catalog of docs/formats.md#events plus the events Forge needs beyond
 * the original design (marked "Forge"). Keys are the `type` of the envelope.
 */
export const eventDataSchemas = {
  "run.started": z.object({ planId: s.describe("Plan id."), dagHash: s.describe("sha256 of the DAG the run pinned."), planCommit: s.describe("Commit the plan was read from."), taskCount: n.describe("Number of DAG nodes.") }),
  "run.paused": z.object({ reason: z.enum(["change_request", "manual", "usage_limit", "budget"]).describe("Why dispatching stopped."), crId: s.optional().describe("CR that paused the run."), until: s.optional().describe("For usage limits: when dispatching may resume.") }),
  "run.resumed": z.object({ reason: z.enum(["change_request", "manual", "usage_limit", "budget"]).describe("Which pause ended."), crId: s.optional().describe("CR that was resolved."), overlayId: s.optional().describe("Overlay applied, if any.") }),
  "run.completed": z.object({ duration: n.describe("Milliseconds from run.started."), taskCount: n.describe("Number of DAG nodes, all MERGED.") }),
  "run.cancelled": z.object({ actor: s.optional().describe("Who cancelled (Forge).") }),
  "task.scheduled": z.object({ type: agentTypeSchema.describe("Agent type."), dependencies: z.array(s).describe("Its dependencies, all satisfied.") }),
  "task.started": z.object({ agentId: s.describe("Agent id: <runId>/<taskId>/<attempt>."), type: agentTypeSchema.describe("Agent type."), branch: s.describe("Task branch."), attempt: n.describe("Attempt number."), agent: s.optional().describe("The agent (adapter) the attempt runs on (Forge)."), resumes: z.object({ fromAttempt: n.describe("The attempt whose work it continues."), stage: s.optional().describe("The stage it starts at.") }).optional().describe("A resumed attempt: what it continues (Forge).") }),
  "task.completed": z.object({ agentId: s.describe("Agent id: <runId>/<taskId>/<attempt>."), status: z.enum(["completed", "failed", "partial"]).describe("Walkthrough status."), confidence: n.optional().describe("Walkthrough confidence."), attempt: n.describe("Attempt number.") }),
  "task.failed": z.object({ agentId: s.describe("Agent id: <runId>/<taskId>/<attempt>."), error: s.describe("Why."), attemptId: n.describe("Attempt that failed."), exitCode: n.optional().describe("Exit code, when the agent reported one."), retryable: z.boolean().describe("Whether Forge will retry it by itself.") }),
  "task.stale": z.object({ lastHeartbeat: s.optional().describe("Last sign of life."), threshold: n.describe("Seconds allowed."), attempt: n.describe("Attempt number.") }),
  "task.retried": z.object({ attemptId: n.describe("The new attempt."), branch: s.describe("Its branch."), notBefore: s.optional().describe("Backoff: not dispatched before this time."), manual: z.boolean().describe("Asked for by a person."), agent: z.object({ from: s.describe("The agent of the attempt that ended."), to: s.describe("The agent of the next attempt."), reason: s.describe("Why it changed.") }).optional().describe("The next attempt goes to the next agent of the task's list (Forge)."), resumes: z.object({ fromAttempt: n.describe("The attempt whose work it continues."), stage: s.optional().describe("The stage it starts at.") }).optional().describe("It will continue the attempt's work on its branch and PR (Forge)."), fresh: s.optional().describe("Why it starts fresh although the retry policy would resume it (Forge).") }),
  "task.exhausted": z.object({ attempts: n.describe("Attempts made."), finalStatus: taskStatusSchema.describe("Status it stays in.") }),
  "task.heartbeat": z.object({ agentId: s.describe("Agent id: <runId>/<taskId>/<attempt>."), timestamp: s.describe("When the agent was seen alive.") }),
  "task.waiting": z.object({ attempt: n.describe("Attempt number."), question: s.describe("What the agent asks (Forge: exit 3).") }),
  "task.merge_ready": z.object({ attempt: n.describe("Attempt number."), headSha: s.describe("Pushed head, equal to the walkthrough's (Forge).") }),
  "task.held": z.object({ attempt: n.describe("Attempt number."), paths: z.array(s).describe("Protected paths its PR changes (Forge).") }),
  "task.merged": z.object({ attempt: n.describe("Attempt number."), mergeSha: s.optional().describe("Merge commit (Forge)."), by: z.enum(["direct", "refinery"]).describe("How it was merged.") }),
  "task.progress": z.object({ attempt: n.describe("Attempt number."), message: s.describe("What the agent is doing (Forge).") }),
  "branch.pushed": z.object({ branch: s.describe("Branch concerned."), headSha: s.describe("Head commit of the branch."), attempt: n.describe("Attempt the branch belongs to (Forge).") }),
  "refinery.started": z.object({ agentId: s.describe("Agent id: <runId>/<taskId>/<attempt>."), mergeTargets: z.array(s).describe("Upstream task ids it merges.") }),
  "refinery.merged": z.object({ agentId: s.describe("Agent id: <runId>/<taskId>/<attempt>."), mergedBranches: z.array(s).describe("Upstream task ids merged through it."), resultRef: s.describe("Ref holding the result.") }),
  "cr.emitted": z.object({ crId: s.describe("Change Request id."), refineryId: s.describe("Task that raised it."), reason: s.describe("Why it was raised."), scope: z.array(s).describe("Affected tasks.") }),
  "cr.resolved": z.object({ crId: s.describe("Change Request id."), resolution: z.enum(["applied", "rejected"]).describe("How it ended (Forge)."), overlayId: s.optional().describe("Overlay that applied it, if any.") }),
  "conflict.potential": z.object({ riskDescription: s.describe("What could conflict."), relatedTasks: z.array(s).describe("In-flight tasks that touch the same files."), files: z.array(s).describe("Files concerned (Forge).") }),
  "review.risk": z.object({ attempt: n.describe("Attempt number."), risk: s.describe("A risk from the walkthrough, logged as a warning (Forge).") }),
  "review.dismissed": z.object({ attempt: n.describe("Attempt number."), reviewId: n.describe("The dismissed review."), headSha: s.describe("The head whose approval was withdrawn (Forge).") }),
  "review.submitted": z.object({ attempt: n.describe("Attempt number."), reviewId: n.describe("The review."), actor: s.describe("Who reviewed (write access checked on GitHub)."), state: z.enum(["approved", "changes_requested"]).describe("What the review said."), headSha: s.describe("The PR head it was given on (Forge).") }),
  "task.feedback": z.object({ attempt: n.describe("Attempt number."), source: z.enum(["review", "command", "ci"]).describe("What asked for a revision."), actor: s.optional().describe("Who asked."), queued: z.boolean().describe("Waiting for the revision under way to end (Forge).") }),
  "task.steered": z.object({ attempt: n.describe("Attempt number."), id: n.describe("The message's number for the task."), actor: s.describe("Who steered (Forge).") }),
  "task.revising": z.object({ attempt: n.describe("Attempt number."), iteration: n.describe("The revision started, from 1."), sources: z.array(z.enum(["review", "command", "ci"])).describe("What it answers (Forge).") }),
  "task.revision_limit": z.object({ attempt: n.describe("Attempt number."), kind: z.enum(["review", "ci"]).describe("Which bound was reached."), limit: n.describe("review.max_iterations or ci_fix.max_attempts."), reason: s.describe("Why the task waits for a person (Forge).") }),
  "task.merge_blocked": z.object({ attempt: n.describe("Attempt number."), reason: s.describe("Which rule refused the merge, on which branch, and what a person can do (Forge).") }),
  "task.branch_updated": z.object({ attempt: n.describe("Attempt number."), from: s.describe("The PR head the update was made over."), headSha: s.describe("The new head: the integration branch merged in by the App (Forge).") }),
  "task.merge_unblocked": z.object({ attempt: n.describe("Attempt number."), by: z.enum(["retry", "approval", "merged"]).describe("What let the merge go on (Forge).") }),
  "review.low_confidence": z.object({ confidence: n.describe("Walkthrough confidence, 0–1."), threshold: n.describe("The configured threshold.") }),
  "followup.spawned": z.object({ followupId: s.describe("Follow-up id."), sourceTaskId: s.describe("Task whose walkthrough listed the follow-up."), reason: s.describe("The follow-up text."), branch: s.describe("Branch concerned.") }),
  "followup.logged": z.object({ sourceTaskId: s.describe("Task whose walkthrough listed the follow-up."), reason: s.describe("A follow-up noted but not spawned (Forge).") }),
  "followup.completed": z.object({ followupId: s.describe("Follow-up id."), status: z.enum(["merged", "failed"]).describe("How it ended (Forge).") }),
  "plan.edit_ignored": z.object({ commit: s.describe("A default-branch commit that changed the pinned plan; the run keeps its pin (Forge).") }),
} as const;

export type EventType = keyof typeof eventDataSchemas;
export const EVENT_TYPES = Object.keys(eventDataSchemas) as EventType[];

/** The common envelope of every event (see docs/formats.md#events). */
export const eventEnvelopeSchema = z
  .object({
    eventId: s.describe("Unique id: <runId>:<seq>."),
    seq: z.number().int().min(1).describe("Position in the run's log, gap-free from 1."),
    timestamp: s.describe("When the executor decided it (ISO-8601)."),
    type: z.enum(EVENT_TYPES as [EventType, ...EventType[]]).describe("Event type from the catalog."),
    runId: s.describe("The run."),
    taskId: s.optional().describe("The task, for task events."),
    data: z.record(z.string(), z.unknown()).describe("Type-specific data."),
  })
  .strict();

/** One event of the catalog: envelope with `data` checked against its type. */
export const forgeEventSchema = z.discriminatedUnion(
  "type",
  EVENT_TYPES.map((t) => eventEnvelopeSchema.extend({ type: z.literal(t).describe("Event type from the catalog."), data: eventDataSchemas[t].describe("Type-specific data.") })) as unknown as [
    z.ZodObject,
    ...z.ZodObject[],
  ],
).describe("An event of the run log, on the state branch forge/<runId>/_state: the open segment in journal.json (events.tail), sealed segments in events/NNNNNN.ndjson, one event per line (see docs/formats.md#event-segments).");

export type EventData<T extends EventType> = z.infer<(typeof eventDataSchemas)[T]>;
export type ForgeEvent = {
  [T in EventType]: { eventId: string; seq: number; timestamp: string; type: T; runId: string; taskId?: string; data: EventData<T> };
}[EventType];
