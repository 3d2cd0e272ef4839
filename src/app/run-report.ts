/**
 * A run's report read through the API (`forge report`): the stored run from its state branch, the
 * whole event log, the tracker issue, the final PR and every task PR's body (the rendered
 * walkthroughs) — rendered as the HTML report `forge demo` writes, with the outcome figures. The
 * journal's seal is not checked (a reader holds no key): the report is for reading, and says so.
 */
import { JOURNAL_FILE, stateBranch } from "../core/layout.js";
import { joinRun, JournalPartsError, partPath } from "../core/journal-parts.js";
import { outcomeFigures, type OutcomeFigures } from "../core/outcomes.js";
import { renderReport, type ReportTask } from "../core/render/run-report.js";
import { formatProblem, zodProblems } from "../core/problems.js";
import type { GitHubPort } from "../github/port.js";
import { SEAL_FIELD } from "./journal-seal.js";
import { migrateStoredRun } from "../core/journal-migration.js";
import { readRunEvents, storedRunSchema, type StoredRun } from "./run-store.js";

/** Why a run could not be reported: the user's to fix (a wrong id, a wrong repository, a token without access). */
export class RunReportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RunReportError";
  }
}

/** The most task PR bodies the report embeds (one API call each). */
export const REPORT_PR_LIMIT = 200;

export interface RunReport {
  html: string;
  figures: OutcomeFigures;
}

async function loadStored(port: GitHubPort, runId: string): Promise<StoredRun> {
  const file = await port.readFile(JOURNAL_FILE, stateBranch(runId));
  if (!file) throw new RunReportError(`no run ${runId} in ${port.owner}/${port.repo}: branch ${stateBranch(runId)} has no ${JOURNAL_FILE}`);
  let raw: unknown;
  try {
    raw = JSON.parse(file.content);
  } catch (e) {
    throw new RunReportError(`${stateBranch(runId)}:${JOURNAL_FILE} is not JSON: ${(e as Error).message}`);
  }
  // The seal is the App's; without its key a reader only drops it.
  if (raw && typeof raw === "object") delete (raw as Record<string, unknown>)[SEAL_FIELD];
  const parsed = storedRunSchema.safeParse(migrateStoredRun(raw));
  if (!parsed.success)
    throw new RunReportError(
      `${stateBranch(runId)}:${JOURNAL_FILE} is invalid: ${formatProblem(zodProblems(parsed.error, JOURNAL_FILE)[0]!)}`,
    );
  if (parsed.data.journal.runId !== runId) throw new RunReportError(`${stateBranch(runId)} holds run ${parsed.data.journal.runId}`);
  const { split, ...stored } = parsed.data;
  const state = stored as StoredRun;
  if (!split) return state;
  // A big run keeps its nodes and tasks in parts beside journal.json (src/core/journal-parts.ts).
  try {
    const { whole } = await joinRun(
      { nodes: state.journal.plan.nodes, tasks: state.journal.tasks, checkRuns: state.facts.checkRuns },
      split,
      async (hash) => (await port.readFile(partPath(hash), stateBranch(runId)))?.content ?? null,
    );
    return {
      ...state,
      journal: { ...state.journal, plan: { ...state.journal.plan, nodes: whole.nodes }, tasks: whole.tasks },
      facts: { ...state.facts, checkRuns: whole.checkRuns },
    };
  } catch (e) {
    if (e instanceof JournalPartsError)
      throw new RunReportError(`${stateBranch(runId)}: the journal's parts cannot be joined: ${e.message}`);
    throw e;
  }
}

export async function buildRunReport(port: GitHubPort, runId: string, host: string): Promise<RunReport> {
  const stored = await loadStored(port, runId);
  const j = stored.journal;
  const events = await readRunEvents(port, runId, stored.events.tail);
  const figures = outcomeFigures(j, events, stored.config);
  const started = new Map<string, number>();
  const merged = new Map<string, number>();
  for (const e of events) {
    if (e.taskId && e.type === "task.started" && !started.has(e.taskId)) started.set(e.taskId, Date.parse(e.timestamp));
    if (e.taskId && e.type === "task.merged") merged.set(e.taskId, Date.parse(e.timestamp));
  }
  const tasks: ReportTask[] = j.tasks.map((t, i) => {
    const node = j.plan.nodes[i]!;
    const from = started.get(t.id);
    const to = merged.get(t.id);
    return {
      id: t.id,
      kind: node.kind,
      title: node.title,
      dependencies: node.dependencies,
      status: t.status,
      attempts: t.attempts,
      ...(t.attempt?.prNumber !== undefined ? { pr: t.attempt.prNumber } : {}),
      ...(from !== undefined && to !== undefined ? { timeMs: to - from } : {}),
      ...(t.spentUsd !== undefined ? { spentUsd: t.spentUsd } : {}),
    };
  });
  const numbers = [...j.tasks.map((t) => t.attempt?.prNumber), ...j.followups.map((f) => f.prNumber)].filter(
    (n): n is number => n !== undefined,
  );
  const pulls: { number: number; title: string; body: string }[] = [];
  for (const n of numbers.slice(0, REPORT_PR_LIMIT)) {
    // A pull request is an issue too: the issues API gives its title and body.
    const pr = await port.getIssue(n).catch(() => undefined);
    if (pr) pulls.push({ number: n, title: pr.title, body: pr.body });
  }
  const notes = ["The run's journal was read without checking its seal (only the Forge App holds the key)."];
  if (numbers.length > REPORT_PR_LIMIT) notes.push(`${numbers.length - REPORT_PR_LIMIT} pull requests are not shown.`);
  const facts = stored.facts;
  const tracker = facts.trackerIssue !== undefined ? await port.getIssue(facts.trackerIssue).catch(() => undefined) : undefined;
  const final = facts.finalPr !== undefined ? await port.getIssue(facts.finalPr).catch(() => undefined) : undefined;
  const end = j.completedAt ? Date.parse(j.completedAt) : Date.parse(events.at(-1)?.timestamp ?? j.createdAt);
  const html = renderReport({
    title: `Forge run ${runId}: ${j.planId}`,
    runId,
    planId: j.planId,
    agent: stored.config.agent.adapter,
    status: j.status,
    durationMs: Math.max(0, end - Date.parse(j.createdAt)),
    repo: `${port.owner}/${port.repo}`,
    host,
    tasks,
    figures,
    ...(facts.trackerIssue !== undefined ? { trackerIssue: facts.trackerIssue } : {}),
    ...(tracker ? { trackerBody: tracker.body } : {}),
    ...(final ? { finalPr: { number: final.number, title: final.title, body: final.body } } : {}),
    changeRequests: j.changeRequests.map((c) => ({
      id: c.id,
      status: c.status,
      title: c.title,
      ...(c.overlayId ? { overlayId: c.overlayId } : {}),
      ...(c.issueNumber !== undefined ? { issue: c.issueNumber } : {}),
    })),
    followups: j.followups.map((f) => ({
      id: f.id,
      sourceTaskId: f.sourceTaskId,
      text: f.text,
      status: f.status,
      ...(f.prNumber !== undefined ? { pr: f.prNumber } : {}),
    })),
    notes,
    pulls,
    log: events.slice(-200).map((e) => `${e.timestamp} #${e.seq} ${e.type}${e.taskId ? ` ${e.taskId}` : ""}`),
  });
  return { html, figures };
}
