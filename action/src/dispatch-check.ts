/**
 * Is this dispatch still wanted? The App may have moved on (a retry, a cancel, a reconciler that
 * declared the attempt STALE) between dispatching and this job starting, and GitHub may run a
 * workflow twice (re-run). The run's journal — on its state branch, written only by the App with
 * compare-and-swap — is the authority: only a task whose current attempt is this one and RUNNING
 * may do anything. Everything else exits neutral, touching nothing.
 */
import { joinRun, journalSplitSchema, JournalPartsError, partPath } from "../../src/core/journal-parts.js";
import {
  journalSchema,
  newAttempt,
  newTask,
  type FollowupState,
  type Journal,
  type PlanNode,
  type TaskState,
} from "../../src/core/journal.js";
import { migrateJournal } from "../../src/core/journal-migration.js";
import { iterationOf } from "../../src/core/task-rules.js";
import { isFollowupId, JOURNAL_FILE, stateBranch } from "../../src/core/layout.js";
import { formatProblem, zodProblems } from "../../src/core/problems.js";
import type { JobGitHub } from "./github.js";

export type DispatchCheck =
  { current: true; journal: Journal; task: TaskState; node: PlanNode; followup?: FollowupState } | { current: false; reason: string };

export class JournalError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "JournalError";
  }
}

/**
 * A follow-up as the job sees a task: a Type 1 node depending on its source task (whose walkthrough
 * the agent then reads), RUNNING at attempt 1 while the journal says the follow-up is running.
 */
function followupCheck(journal: Journal, taskId: string, attempt: number): DispatchCheck {
  const f = journal.followups.find((x) => x.id === taskId);
  if (!f) return { current: false, reason: `run ${journal.runId} has no follow-up ${taskId}` };
  if (attempt !== 1) return { current: false, reason: `follow-up ${taskId} has one attempt, not ${attempt}` };
  if (f.status !== "running") return { current: false, reason: `follow-up ${taskId} is ${f.status}, not running` };
  const node: PlanNode = {
    id: f.id,
    kind: "task",
    agentType: "1",
    title: `Follow-up of ${f.sourceTaskId}: ${f.text}`.slice(0, 200),
    dependencies: [f.sourceTaskId],
    paths: [],
    priority: 0,
  };
  // The journal keeps no dispatch time for a follow-up; nothing in the job reads one.
  const at = newAttempt(f.branch, journal.createdAt);
  const task: TaskState = {
    ...newTask(f.id),
    status: "RUNNING",
    attempts: 1,
    attempt: { ...at, ...(f.prNumber !== undefined ? { prNumber: f.prNumber } : {}) },
  };
  return { current: true, journal, task, node, followup: f };
}

/** Pure: decides from a journal whether (taskId, attempt) is the attempt the App is waiting for. */
export function checkDispatch(journal: Journal, taskId: string, attempt: number, iteration = 0): DispatchCheck {
  if (journal.status !== "running") return { current: false, reason: `run ${journal.runId} is ${journal.status}` };
  // Follow-up agents the App spawns outside the DAG: `_followup-<n>`, one attempt, on `forge/<runId>/_followup-<n>/1`.
  if (isFollowupId(taskId)) return followupCheck(journal, taskId, attempt);
  const index = journal.tasks.findIndex((t) => t.id === taskId);
  const task = journal.tasks[index];
  const node = journal.plan.nodes[index];
  if (!task || !node) return { current: false, reason: `run ${journal.runId} has no task ${taskId}` };
  if (task.attempts !== attempt) return { current: false, reason: `task ${taskId} is at attempt ${task.attempts}, not ${attempt}` };
  if (task.status !== "RUNNING") return { current: false, reason: `task ${taskId} attempt ${attempt} is ${task.status}, not RUNNING` };
  // A revision runs on the attempt's branch too: only the one the journal is at may work.
  if (iterationOf(task) !== iteration)
    return { current: false, reason: `task ${taskId} attempt ${attempt} is at revision ${iterationOf(task)}, not ${iteration}` };
  return { current: true, journal, task, node };
}

/** Reads `journal.json` from the run's state branch with the job token, then checks it. */
export async function readAndCheckDispatch(
  github: JobGitHub,
  runId: string,
  taskId: string,
  attempt: number,
  iteration = 0,
): Promise<DispatchCheck> {
  const journal = await readJournal(github, runId);
  if (typeof journal === "string") return { current: false, reason: journal };
  return checkDispatch(journal, taskId, attempt, iteration);
}

/** The run's journal, or why there is none (a string); a broken journal is a JournalError. */
export async function readJournal(github: JobGitHub, runId: string): Promise<Journal | string> {
  const text = await github.readFile(JOURNAL_FILE, stateBranch(runId));
  if (text === undefined) return `no journal for run ${runId} (branch ${stateBranch(runId)} or its ${JOURNAL_FILE} does not exist)`;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new JournalError(`${stateBranch(runId)}:${JOURNAL_FILE} is not JSON: ${(err as Error).message}`);
  }
  // The App keeps the journal inside its stored run — { version, journal, config, facts, events }
  // (src/app/run-store.ts) — in the same file; a bare journal is read as well.
  // A journal an earlier App wrote (a run it started before an upgrade) is read as this version's.
  if (raw && typeof raw === "object" && !Array.isArray(raw) && "journal" in raw && !("runId" in raw)) {
    const stored = raw as { journal: unknown; split?: unknown };
    const journal = migrateJournal(stored.journal);
    raw = stored.split === undefined ? journal : await joinedJournal(github, runId, journal, stored.split);
  } else raw = migrateJournal(raw);
  const parsed = journalSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = zodProblems(parsed.error, JOURNAL_FILE)
      .slice(0, 5)
      .map((p) => formatProblem(p))
      .join("; ");
    throw new JournalError(`${stateBranch(runId)}:${JOURNAL_FILE} does not match the journal schema: ${issues}`);
  }
  if (parsed.data.runId !== runId) throw new JournalError(`${stateBranch(runId)}:${JOURNAL_FILE} belongs to run ${parsed.data.runId}`);
  return parsed.data;
}

/**
 * A big run's journal keeps most nodes in parts beside `journal.json` (docs/formats.md#journal-parts):
 * the live nodes it carries are laid over the parts, each checked against the hash the journal names.
 */
async function joinedJournal(github: JobGitHub, runId: string, journal: unknown, split: unknown): Promise<unknown> {
  const where = `${stateBranch(runId)}:${JOURNAL_FILE}`;
  const s = journalSplitSchema.safeParse(split);
  const j = journalSchema.safeParse(journal);
  if (!s.success) throw new JournalError(`${where} has an invalid split: ${s.error.issues[0]?.message ?? "invalid"}`);
  if (!j.success)
    throw new JournalError(`${where} does not match the journal schema: ${formatProblem(zodProblems(j.error, JOURNAL_FILE)[0]!)}`);
  try {
    const { whole } = await joinRun(
      { nodes: j.data.plan.nodes, tasks: j.data.tasks, checkRuns: {} },
      s.data,
      async (hash) => (await github.readFile(partPath(hash), stateBranch(runId))) ?? null,
    );
    return { ...j.data, plan: { ...j.data.plan, nodes: whole.nodes }, tasks: whole.tasks };
  } catch (e) {
    if (e instanceof JournalPartsError) throw new JournalError(`${where}: ${e.message}`);
    throw e;
  }
}
