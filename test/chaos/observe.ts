/**
 * What a chaos run left on GitHub's side, read without the API (so no injected fault): the journal's
 * history on the state branch, the integration branch, and the objects the App made.
 */
import { renderTracker } from "../../src/app/render.js";
import type { RunFacts } from "../../src/app/run-store.js";
import type { Journal } from "../../src/core/journal.js";
import { JOURNAL_FILE, stateBranch } from "../../src/core/layout.js";
import { planIndex } from "../../src/core/plan-index.js";
import type { TaskStatus } from "../../src/core/schemas/common.js";
import type { ForgeConfig } from "../../src/core/schemas/config.js";
import type { ForgeEvent } from "../../src/core/schemas/events.js";
import { TRANSITIONS } from "../../src/core/state-machine.js";
import type { Sim } from "../../src/local-github/server.js";

/** `git --git-dir <the repository's> <args>`, its stdout. */
export type Git = (...args: string[]) => Promise<string>;

/** Every task's final status, the merged ones, and the files under src/ on the integration branch. */
export async function endState(git: Git, journal: Journal | undefined) {
  const statuses = Object.fromEntries((journal?.tasks ?? []).map((t) => [t.id, t.status])) as Record<string, TaskStatus>;
  const merged = Object.entries(statuses)
    .filter(([, s]) => s === "MERGED")
    .map(([id]) => id)
    .sort();
  const integration = journal
    ? await git("ls-tree", "-r", "--name-only", `refs/heads/${journal.integrationBranch}`, "src/").catch(() => "")
    : "";
  return { statuses, merged, integrationFiles: integration.split("\n").filter(Boolean).sort() };
}

/** GitHub objects the App made more than once where one was meant: tracker issues, check runs per attempt, final PRs. */
export function duplicateObjects(sim: Sim, repoId: number, appId: number, journal: Journal | undefined): string[] {
  const out: string[] = [];
  const trackers = sim.core.state.issuesOf(repoId).filter((i) => !i.pull && i.labels.includes("forge:run"));
  if (trackers.length > 1) out.push(`${trackers.length} tracker issues`);
  const checks = new Map<string, number>();
  for (const c of sim.core.state.checkRuns.values())
    if (c.appId === appId && c.externalId) checks.set(c.externalId, (checks.get(c.externalId) ?? 0) + 1);
  for (const [id, n] of checks) {
    if (n < 2) continue;
    const made = [...sim.core.state.checkRuns.values()].filter((c) => c.appId === appId && c.externalId === id);
    out.push(`${n} check runs for ${id} (${made.map((c) => `#${c.id} on ${c.headSha.slice(0, 7)} started ${c.startedAt}`).join(", ")})`);
  }
  const finals = sim.core.state.issuesOf(repoId).filter((i) => i.pull && journal && i.pull.headRef === journal.integrationBranch);
  if (finals.length > 1) out.push(`${finals.length} final PRs`);
  return out;
}

/** Runs of the repository's CI (scenario h): passed, failed, and how many task branches they ran on. */
export function ciRuns(
  sim: Sim,
  repoId: number,
  runId: string,
  journal: Journal | undefined,
): { passed: number; failed: number; taskBranches: number } {
  const runs = [...sim.core.state.runs.values()].filter((r) => r.repoId === repoId && r.path === ".github/workflows/ci.yml");
  const taskBranches = new Set(
    (journal?.tasks ?? []).flatMap((t) => Array.from({ length: t.attempts }, (_, k) => `forge/${runId}/${t.id}/${k + 1}`)),
  );
  return {
    passed: runs.filter((r) => r.conclusion === "success").length,
    failed: runs.filter((r) => r.conclusion === "failure").length,
    taskBranches: new Set(runs.map((r) => r.headBranch).filter((b) => taskBranches.has(b))).size,
  };
}

/** How long a task may stay in one state without a reason shown on the tracker (of the run's clock). */
export const SILENT_LIMIT_MS = 5 * 60_000;

/** A task as one version of the tracker shows it: its state, and why it stays there when the tracker says. */
export interface TaskView {
  id: string;
  status: TaskStatus;
  attempt: number;
  /** The reason the tracker shows for the task being where it is; undefined when it shows none. */
  reason: string | undefined;
}

/** One version of journal.json on the state branch: its commit, its time on the run's clock, its tasks as the tracker shows them. */
export interface JournalVersion {
  sha: string;
  /** The commit's date (ms): GitHub dates the App's contents-API writes on its clock, the run's. */
  at: number;
  tasks: TaskView[];
}

/**
 * Every version of journal.json on the run's state branch, oldest first, each with its time and the
 * tracker as the App renders it for that version (`renderTracker`). Each task's change from one
 * version to the next must be explained by valid transitions (a new attempt starts only with
 * PENDING → RUNNING): catches an invalid transition even when its decision was never reported (an
 * App killed right after the write). And no task may stay in one state longer than `SILENT_LIMIT_MS`
 * without a reason on the tracker (`silentWaits`), up to `endAt` (when the run was last looked at).
 */
export async function journalHistory(
  git: Git,
  runId: string,
  repo: { owner: string; repo: string; webUrl: string },
  endAt: number,
): Promise<{ journalWrites: number; invalidHistory: string[]; silentWaits: string[]; lastView: TaskView[] }> {
  const log = (await git("log", "--reverse", "--format=%H %ct", `refs/heads/${stateBranch(runId)}`, "--", JOURNAL_FILE).catch(() => ""))
    .split("\n")
    .filter(Boolean)
    .map((line) => line.split(" ") as [string, string]);
  const invalid: string[] = [];
  const versions: JournalVersion[] = [];
  let prev: Map<string, { status: TaskStatus; attempt: number }> | undefined;
  for (const [sha, seconds] of log) {
    const stored = JSON.parse(await git("show", `${sha}:${JOURNAL_FILE}`)) as StoredVersion;
    const j = stored.journal;
    const now = new Map(j.tasks.map((t) => [t.id, { status: t.status, attempt: t.attempts }]));
    if (prev) {
      for (const [id, b] of now) {
        const a = prev.get(id);
        if (a && !reachable(a, b)) invalid.push(`${id}: ${a.status}#${a.attempt} → ${b.status}#${b.attempt} (commit ${sha.slice(0, 7)})`);
      }
    }
    prev = now;
    const at = Number(seconds) * 1000;
    const tracker = renderTracker(j, stored.events?.tail ?? [], { checkRuns: {}, ...stored.facts }, repo, at, stored.config);
    versions.push({ sha, at, tasks: trackerView(tracker, j) });
  }
  return {
    journalWrites: log.length,
    invalidHistory: invalid,
    silentWaits: silentWaits(versions, endAt),
    lastView: versions.at(-1)?.tasks ?? [],
  };
}

/** What a version of journal.json holds that the tracker is drawn from (the stored run, docs/formats.md). */
interface StoredVersion {
  journal: Journal;
  facts?: Partial<RunFacts>;
  events?: { tail?: ForgeEvent[] };
  config?: Pick<ForgeConfig, "budgets">;
}

/** Notes of a tracker row that say something about a task but not why it waits. */
const NOT_A_REASON = [/^spent \$/, /^low confidence /, /^revision \d+$/];

/**
 * Each task as the rendered tracker shows it: its status and attempt (the journal's), and the reason
 * the tracker gives for its staying there — the Notes of its row (a wait for a person, a hold, the
 * last error, a wait for `/forge approve`), the run's pause on the status line; what the chart
 * shows: for a PENDING task an upstream not merged, for a MERGE_READY task the refinery downstream
 * that merges it; and for a MERGED task its end. A task whose row the tracker does not show has no
 * reason shown.
 */
export function trackerView(tracker: string, journal: Journal): TaskView[] {
  const rows = new Map<string, string[]>();
  for (const line of tracker.split("\n")) {
    const id = /^\| `([^`]+)`/.exec(line)?.[1];
    if (id !== undefined)
      rows.set(
        id,
        line.split(/(?<!\\)\|/).map((c) => c.trim()),
      );
  }
  const paused = /^\*\*Status:\*\* running \(paused([^)]*)\)/m.exec(tracker)?.[1];
  const status = new Map(journal.tasks.map((t) => [t.id, t.status]));
  const index = planIndex(journal.plan);
  return journal.tasks.map((t, i) => {
    const cells = rows.get(t.id);
    // | task | type | status | attempt | PR | check | notes |: the notes are the last cell before the row's end.
    const notes = (cells?.[cells.length - 2] ?? "")
      .split("; ")
      .filter((n) => n && !NOT_A_REASON.some((re) => re.test(n)))
      .join("; ");
    const upstream = journal.plan.nodes[i]!.dependencies.find((d) => status.get(d) !== "MERGED");
    // A task every dependent of which is a refinery is merged by its refinery (docs/executor.md#refineries).
    const refinery = index.mergedByRefinery[i]
      ? index.dependents[i]!.map((j) => journal.tasks[j]!).find((r) => r.status !== "MERGED")
      : undefined;
    const reason =
      t.status === "MERGED"
        ? "merged"
        : !cells
          ? undefined
          : notes
            ? notes
            : paused !== undefined
              ? `the run is paused${paused}`
              : t.status === "PENDING" && upstream !== undefined
                ? `waits for ${upstream} (${status.get(upstream)})`
                : t.status === "MERGE_READY" && refinery !== undefined
                  ? `merges with refinery ${refinery.id} (${refinery.status})`
                  : undefined;
    return { id: t.id, status: t.status, attempt: t.attempts, reason };
  });
}

/**
 * The property "no task stays in one state for more than five minutes of its clock without a reason
 * shown on the tracker", over the versions of a run's journal (oldest first) up to `endAt`: every
 * stretch of a task in one state (status and attempt) during which the tracker shows no reason for
 * it, longer than `limitMs`, as a line naming the task, the state, how long and from which commit.
 * A stretch ends when the state changes or a reason is shown; a stretch still open at the last
 * version lasts until `endAt`.
 */
export function silentWaits(versions: readonly JournalVersion[], endAt: number, limitMs = SILENT_LIMIT_MS): string[] {
  const out: string[] = [];
  const open = new Map<string, { state: string; since: number; sha: string } | undefined>();
  const close = (id: string, until: number) => {
    const s = open.get(id);
    if (s && until - s.since > limitMs)
      out.push(
        `${id} ${s.state} for ${((until - s.since) / 60_000).toFixed(1)} min without a reason on the tracker (from ${s.sha.slice(0, 7)})`,
      );
    open.set(id, undefined);
  };
  for (const v of versions) {
    for (const t of v.tasks) {
      const state = `${t.status}#${t.attempt}`;
      const s = open.get(t.id);
      if (s && (s.state !== state || t.reason !== undefined)) close(t.id, v.at);
      // A stretch without a reason starts with the first version that shows none.
      if (t.reason === undefined && !open.get(t.id)) open.set(t.id, { state, since: v.at, sha: v.sha });
    }
  }
  for (const id of open.keys()) close(id, endAt);
  return out;
}

/** Is `to` reachable from `from` through valid transitions, the attempt growing by one on each PENDING → RUNNING? */
export function reachable(from: { status: TaskStatus; attempt: number }, to: { status: TaskStatus; attempt: number }): boolean {
  if (to.attempt < from.attempt) return false;
  const seen = new Set<string>();
  const queue = [from];
  while (queue.length) {
    const s = queue.shift()!;
    if (s.status === to.status && s.attempt === to.attempt) return true;
    const key = `${s.status}#${s.attempt}`;
    if (seen.has(key)) continue;
    seen.add(key);
    for (const next of TRANSITIONS[s.status]) {
      const attempt = s.status === "PENDING" && next === "RUNNING" ? s.attempt + 1 : s.attempt;
      if (attempt <= to.attempt) queue.push({ status: next, attempt });
    }
  }
  return false;
}
