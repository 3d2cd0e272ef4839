/**
 * A run's outcome figures (docs/formats.md#outcome-figures): what it merged, how much of it needed a
 * person, what it cost, and where its time went — from the journal and the run's event log alone, so
 * the App (the final PR) and `forge report` (any repository, through the API) say the same.
 */
import type { ForgeConfig } from "./schemas/config.js";
import type { Journal } from "./journal.js";
import type { ForgeEvent } from "./schemas/events.js";

export interface Spread {
  /** How many intervals were measured. */
  count: number;
  medianMs: number | null;
  p95Ms: number | null;
}

export interface TaskOutcome {
  id: string;
  status: string;
  attempts: number;
  retries: number;
  spentUsd: number | null;
  agentMs: number | null;
  /** A person acted on it: a `/forge retry`, an answer, an approval, or a manual merge policy. */
  person: boolean;
}

export interface OutcomeFigures {
  version: 1;
  runId: string;
  planId: string;
  status: string;
  tasks: number;
  tasksMerged: number;
  /** Merged with no person's command, answer, approval or merge along the way. */
  mergedWithoutPerson: number;
  /** Attempts beyond each task's first. */
  retries: number;
  /** Revisions that answered a person's review or `/forge fix` (red CI too, perhaps), and revisions that answered red CI alone. */
  reviewIterations: number;
  ciIterations: number;
  /** Spend over every finished attempt (null when no attempt reported any). */
  spendUsd: number | null;
  spendPerMergedTaskUsd: number | null;
  tokens: number | null;
  /** From the run's start to the first pull request ready for review (the first MERGE_READY). */
  timeToFirstPrMs: number | null;
  /** From a task's merge to the dispatch of the first dependent it unblocked. */
  mergeToNextDispatch: Spread;
  /** Time the agents worked, summed over attempts. */
  agentMs: number;
  /** Time the merged tasks spent between their first dispatch and their merge with no agent working (queues, checks, merges, the App). */
  waitingMs: number;
  perTask: TaskOutcome[];
}

/** The value at quantile `q` of sorted `xs` (nearest rank). */
export function quantile(sorted: readonly number[], q: number): number | null {
  if (!sorted.length) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

function spread(xs: number[]): Spread {
  const sorted = [...xs].sort((a, b) => a - b);
  return { count: sorted.length, medianMs: quantile(sorted, 0.5), p95Ms: quantile(sorted, 0.95) };
}

/** When each task was first dispatched and when it merged, and who acted on it, from the events. */
function timeline(events: readonly ForgeEvent[]) {
  const firstStart = new Map<string, number>();
  const starts: { taskId: string; at: number }[] = [];
  const merged = new Map<string, number>();
  const manual = new Set<string>();
  const iterations = { review: 0, ci: 0 };
  let runStart: number | undefined;
  let firstReady: number | undefined;
  for (const e of events) {
    const at = Date.parse(e.timestamp);
    if (!Number.isFinite(at)) continue;
    const id = e.taskId;
    if (e.type === "run.started") runStart ??= at;
    else if (e.type === "task.merge_ready") firstReady = Math.min(firstReady ?? at, at);
    else if (id && e.type === "task.started") {
      if (!firstStart.has(id)) firstStart.set(id, at);
      starts.push({ taskId: id, at });
    } else if (id && e.type === "task.merged") merged.set(id, at);
    else if (id && e.type === "task.retried" && (e.data as { manual?: boolean }).manual) manual.add(id);
    else if (id && e.type === "task.feedback" && (e.data as { source?: string }).source !== "ci") manual.add(id);
    else if (e.type === "task.revising") {
      // As the bounds count them (src/core/decide/iterations.ts): one that answers red CI alone is a
      // CI fix; one that answers a person too is a review iteration.
      const sources = (e.data as { sources?: string[] }).sources ?? [];
      if (sources.length && sources.every((s) => s === "ci")) iterations.ci++;
      else iterations.review++;
    }
  }
  return { firstStart, starts, merged, manual, iterations, runStart, firstReady };
}

export function outcomeFigures(journal: Journal, events: readonly ForgeEvent[], config: Pick<ForgeConfig, "merge_policy">): OutcomeFigures {
  const tl = timeline(events);
  const manualMerge = config.merge_policy === "manual";
  const perTask: TaskOutcome[] = journal.tasks.map((t) => ({
    id: t.id,
    status: t.status,
    attempts: t.attempts,
    retries: Math.max(0, t.attempts - 1),
    spentUsd: t.spentUsd ?? null,
    agentMs: t.agentMs ?? null,
    person: manualMerge || tl.manual.has(t.id) || t.approved === true || t.attempt?.revision.approvedHead !== undefined,
  }));
  const merged = perTask.filter((t) => t.status === "MERGED");
  const spent = journal.tasks.filter((t) => t.spentUsd !== undefined);
  const spendUsd = spent.length ? round(spent.reduce((n, t) => n + t.spentUsd!, 0)) : null;
  const tokenTasks = journal.tasks.filter((t) => t.spentTokens !== undefined);

  // Merge → the first dispatch of a dependent it unblocked (the scheduler's reaction).
  const gaps: number[] = [];
  for (const [id, at] of tl.merged) {
    const dependents = new Set(journal.plan.nodes.filter((n) => n.dependencies.includes(id)).map((n) => n.id));
    const next = tl.starts.find((s) => dependents.has(s.taskId) && s.at >= at);
    if (next) gaps.push(next.at - at);
  }
  const agentMs = journal.tasks.reduce((n, t) => n + (t.agentMs ?? 0), 0);
  let waitingMs = 0;
  for (const t of journal.tasks) {
    const from = tl.firstStart.get(t.id);
    const to = tl.merged.get(t.id);
    if (from !== undefined && to !== undefined) waitingMs += Math.max(0, to - from - (t.agentMs ?? 0));
  }
  return {
    version: 1,
    runId: journal.runId,
    planId: journal.planId,
    status: journal.status,
    tasks: journal.tasks.length,
    tasksMerged: merged.length,
    mergedWithoutPerson: merged.filter((t) => !t.person).length,
    retries: perTask.reduce((n, t) => n + t.retries, 0),
    reviewIterations: tl.iterations.review,
    ciIterations: tl.iterations.ci,
    spendUsd,
    spendPerMergedTaskUsd: spendUsd !== null && merged.length ? round(spendUsd / merged.length) : null,
    tokens: tokenTasks.length ? tokenTasks.reduce((n, t) => n + t.spentTokens!, 0) : null,
    timeToFirstPrMs: tl.runStart !== undefined && tl.firstReady !== undefined ? Math.max(0, tl.firstReady - tl.runStart) : null,
    mergeToNextDispatch: spread(gaps),
    agentMs,
    waitingMs,
    perTask,
  };
}

const round = (usd: number) => Math.round(usd * 1e6) / 1e6;

const secs = (ms: number | null) => (ms === null ? "—" : ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : `${(ms / 60_000).toFixed(1)} min`);
const usd = (n: number | null) => (n === null ? "not reported" : `$${n.toFixed(2)}`);

/** The figures as Markdown rows (the final PR, the report). */
export function renderOutcomeTable(f: OutcomeFigures): string[] {
  const share = f.agentMs + f.waitingMs > 0 ? ` (${Math.round((100 * f.agentMs) / (f.agentMs + f.waitingMs))} % agent)` : "";
  return [
    "| Outcome | |",
    "|---|---:|",
    `| Tasks merged | ${f.tasksMerged} of ${f.tasks} |`,
    `| Merged with no person involved | ${f.mergedWithoutPerson} |`,
    `| Retries | ${f.retries} |`,
    `| Review iterations · CI iterations | ${f.reviewIterations} · ${f.ciIterations} |`,
    `| Spend | ${usd(f.spendUsd)} |`,
    `| Spend per merged task | ${usd(f.spendPerMergedTaskUsd)} |`,
    `| Time to first PR ready | ${secs(f.timeToFirstPrMs)} |`,
    `| Merge → next dispatch, median · p95 (${f.mergeToNextDispatch.count}) | ${secs(f.mergeToNextDispatch.medianMs)} · ${secs(f.mergeToNextDispatch.p95Ms)} |`,
    `| Agent time · waiting time | ${secs(f.agentMs)} · ${secs(f.waitingMs)}${share} |`,
  ];
}
