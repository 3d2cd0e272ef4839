/**
 * Reading journals an earlier Forge wrote (docs/formats.md#journal-versions). Every migration of the
 * stored run lives here, applied to the JSON as read and before the schema checks it:
 *
 * - **Version 1 → 2**: a task's 43 flat fields become the task record, its current attempt and the
 *   attempt's revision (./task-record.ts). A run in progress under version 1 goes on after an
 *   upgrade: the App migrates the journal when it reads it and writes version 2 from then on. A big
 *   run's parts (./journal-parts.ts) written under version 1 are migrated as they are read.
 * - Journals older still kept a Change Request's issue number in `facts.crIssues`: it is folded into
 *   the journal's Change Requests.
 *
 * Version 1's task is kept here as it was, so that what it held stays readable and each of its
 * fields is accounted for (test/core/journal-migration.test.ts).
 */
import { z } from "zod";
import { feedbackSchema } from "./feedback.js";
import { taskStatusSchema } from "./schemas/common.js";
import {
  holdSchema,
  steeringMessageSchema,
  type AttemptRecord,
  type NextAttempt,
  type RevisionRecord,
  type TaskState,
} from "./task-record.js";

/** A task of a version-1 journal, as the App of that version wrote it. */
export const taskStateV1Schema = z
  .object({
    id: z.string(),
    status: taskStatusSchema,
    attempt: z.number().int().min(0),
    retries: z.number().int().min(0),
    blockers: z.number().int().min(0),
    notBefore: z.string().optional(),
    dispatchedAttempt: z.number().int().min(0),
    dispatchedAt: z.string().optional(),
    startedAt: z.string().optional(),
    lastHeartbeat: z.string().optional(),
    branch: z.string().optional(),
    walkthroughSha: z.string().optional(),
    pushedSha: z.string().optional(),
    recordSha: z.string().optional(),
    prNumber: z.number().int().optional(),
    workflowRunId: z.number().int().optional(),
    mergeSha: z.string().optional(),
    hold: holdSchema.optional(),
    question: z.string().optional(),
    context: z
      .object({ refinement: z.string().optional(), answer: z.string().optional(), conflicts: z.array(z.string()).optional() })
      .strict()
      .optional(),
    confidence: z.number().optional(),
    walkthroughStatus: z.enum(["completed", "failed", "partial"]).optional(),
    filesChanged: z.array(z.string()).optional(),
    lastError: z.string().optional(),
    spentUsd: z.number().min(0).optional(),
    spentTokens: z.number().int().min(0).optional(),
    agentMs: z.number().int().min(0).optional(),
    reservedUsd: z.number().min(0).optional(),
    budgetExtraUsd: z.number().min(0).optional(),
    approved: z.boolean().optional(),
    protectedPaths: z.array(z.string()).optional(),
    approvedHead: z.string().optional(),
    checkedHead: z.string().optional(),
    iteration: z.number().int().min(0).optional(),
    reviewIterations: z.number().int().min(0).optional(),
    ciFixes: z.number().int().min(0).optional(),
    feedback: z.array(feedbackSchema).optional(),
    answered: z.array(z.number().int()).optional(),
    answeredHeads: z.array(z.string()).optional(),
    steering: z.array(steeringMessageSchema).optional(),
    priorRunId: z.number().int().optional(),
    reviewApprovedHead: z.string().optional(),
    waiting: z.string().optional(),
    contained: z.array(z.string()).optional(),
  })
  .strict();
export type TaskStateV1 = z.infer<typeof taskStateV1Schema>;

/** `value` as `{ [key]: value }`, or nothing when it is undefined: records keep no undefined fields. */
const some = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };

/**
 * A version-1 task as a version-2 record. What version 1 kept of an attempt beside the task — its
 * branch, PR, job, heads, verdicts, feedback and steering — goes into the attempt and its revision;
 * a PENDING task has none (version 1 still carried some of a retried attempt's, which its next
 * dispatch would have dropped). `createdAt` (the run's) stands in for a dispatch time version 1 did
 * not record.
 */
export function migrateTaskV1(t: TaskStateV1, createdAt: string): TaskState {
  const next: NextAttempt = {
    ...some("notBefore", t.notBefore),
    ...some("refinement", t.context?.refinement),
    ...some("answer", t.context?.answer),
  };
  const attempts = Math.max(t.attempt, t.dispatchedAttempt);
  return {
    id: t.id,
    status: t.status,
    blockers: t.blockers,
    attempts,
    retries: t.retries,
    ...(Object.keys(next).length ? { next } : {}),
    ...some("lastError", t.lastError),
    ...some("confidence", t.confidence),
    ...some("walkthroughStatus", t.walkthroughStatus),
    ...some("filesChanged", t.filesChanged),
    ...some("spentUsd", t.spentUsd),
    ...some("spentTokens", t.spentTokens),
    ...some("agentMs", t.agentMs),
    ...some("budgetExtraUsd", t.budgetExtraUsd),
    ...some("approved", t.approved),
    ...(t.status !== "PENDING" && attempts > 0 ? { attempt: attemptOfV1(t, createdAt) } : {}),
  };
}

function attemptOfV1(t: TaskStateV1, createdAt: string): AttemptRecord {
  const revision: RevisionRecord = {
    iteration: t.iteration ?? 0,
    dispatchedAt: t.dispatchedAt ?? createdAt,
    ...some("startedAt", t.startedAt),
    ...some("lastHeartbeat", t.lastHeartbeat),
    ...some("workflowRunId", t.workflowRunId),
    ...some("priorRunId", t.priorRunId),
    ...some("walkthroughSha", t.walkthroughSha),
    ...some("pushedSha", t.pushedSha),
    ...some("protectedPaths", t.protectedPaths),
    ...some("approvedHead", t.approvedHead),
    ...some("checkedHead", t.checkedHead),
    ...some("reviewApprovedHead", t.reviewApprovedHead),
    ...some("waiting", t.waiting),
  };
  return {
    // A dispatched attempt always had its branch in version 1; without one the record fails the schema.
    branch: t.branch!,
    ...some("prNumber", t.prNumber),
    ...some("recordSha", t.recordSha),
    ...some("mergeSha", t.mergeSha),
    ...some("hold", t.hold),
    ...some("question", t.question),
    ...some("conflicts", t.context?.conflicts),
    ...some("contained", t.contained),
    ...some("reservedUsd", t.reservedUsd),
    ...some("steering", t.steering),
    ...some("feedback", t.feedback),
    ...some("answered", t.answered),
    ...some("answeredHeads", t.answeredHeads),
    ...some("reviewIterations", t.reviewIterations),
    ...some("ciFixes", t.ciFixes),
    revision,
  };
}

/** A task as read: version 1's migrated (it is told by its `dispatchedAttempt`), anything else as it is. */
function migrateTask(raw: unknown, createdAt: string): unknown {
  if (!raw || typeof raw !== "object" || !("dispatchedAttempt" in raw)) return raw;
  const v1 = taskStateV1Schema.safeParse(raw);
  // Not a version-1 task after all: the version-2 schema says what is wrong with it.
  return v1.success ? migrateTaskV1(v1.data, createdAt) : raw;
}

const isObject = (raw: unknown): raw is Record<string, unknown> => !!raw && typeof raw === "object" && !Array.isArray(raw);

/** A journal as read (a bare one, as the action reads it, or a stored run's), at version 2. */
export function migrateJournal(raw: unknown): unknown {
  if (!isObject(raw) || raw.version !== 1) return raw;
  const createdAt = typeof raw.createdAt === "string" ? raw.createdAt : new Date(0).toISOString();
  const tasks = Array.isArray(raw.tasks) ? raw.tasks.map((t) => migrateTask(t, createdAt)) : raw.tasks;
  return { ...raw, version: 2, tasks };
}

/**
 * A journal part or layer as read (./journal-parts.ts): one written under version 1 carries no
 * `version` and its tasks are migrated. `createdAt` is the run's.
 */
export function migratePart(raw: unknown, createdAt: string): unknown {
  if (!isObject(raw) || raw.version !== undefined) return raw;
  const tasks = Array.isArray(raw.tasks) ? raw.tasks.map((t) => migrateTask(t, createdAt)) : raw.tasks;
  return { version: 2, ...raw, tasks };
}

/**
 * A stored run (`journal.json` without its seal) as read, at version 2: its journal migrated, and a
 * Change Request issue number kept in `facts.crIssues` by journals older still folded into the
 * journal's Change Requests (where one is missing) and dropped.
 */
export function migrateStoredRun(raw: unknown): unknown {
  if (!isObject(raw)) return raw;
  let stored = raw;
  const facts = isObject(stored.facts) ? stored.facts : undefined;
  const old = facts?.crIssues;
  if (facts && isObject(old)) {
    const { crIssues: _dropped, ...kept } = facts;
    const journal = isObject(stored.journal) ? stored.journal : undefined;
    const changeRequests = Array.isArray(journal?.changeRequests)
      ? (journal.changeRequests as { id: string; issueNumber?: number }[]).map((c) =>
          c.issueNumber === undefined && typeof old[c.id] === "number" ? { ...c, issueNumber: old[c.id] } : c,
        )
      : undefined;
    stored = { ...stored, facts: kept, ...(changeRequests ? { journal: { ...journal, changeRequests } } : {}) };
  }
  if (stored.version !== 1) return stored;
  return { ...stored, version: 2, journal: migrateJournal(stored.journal) };
}
