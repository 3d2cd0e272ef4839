/**
 * What a chaos run left on GitHub's side, read without the API (so no injected fault): the journal's
 * history on the state branch, the integration branch, and the objects the App made.
 */
import type { Journal } from "../../src/core/journal.js";
import { JOURNAL_FILE, stateBranch } from "../../src/core/layout.js";
import type { TaskStatus } from "../../src/core/schemas/common.js";
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
    (journal?.tasks ?? []).flatMap((t) => Array.from({ length: t.attempt }, (_, k) => `forge/${runId}/${t.id}/${k + 1}`)),
  );
  return {
    passed: runs.filter((r) => r.conclusion === "success").length,
    failed: runs.filter((r) => r.conclusion === "failure").length,
    taskBranches: new Set(runs.map((r) => r.headBranch).filter((b) => taskBranches.has(b))).size,
  };
}

/**
 * Every version of journal.json on the run's state branch, oldest first: each task's change from one
 * version to the next must be explained by valid transitions (a new attempt starts only with
 * PENDING → RUNNING). Catches an invalid transition even when its decision was never reported (an
 * App killed right after the write).
 */
export async function journalHistory(git: Git, runId: string): Promise<{ journalWrites: number; invalidHistory: string[] }> {
  const shas = (await git("log", "--reverse", "--format=%H", `refs/heads/${stateBranch(runId)}`, "--", JOURNAL_FILE).catch(() => ""))
    .split("\n")
    .filter(Boolean);
  const invalid: string[] = [];
  let prev: Map<string, { status: TaskStatus; attempt: number }> | undefined;
  for (const sha of shas) {
    const j = (JSON.parse(await git("show", `${sha}:${JOURNAL_FILE}`)) as { journal: Journal }).journal;
    const now = new Map(j.tasks.map((t) => [t.id, { status: t.status, attempt: t.attempt }]));
    if (prev) {
      for (const [id, b] of now) {
        const a = prev.get(id);
        if (a && !reachable(a, b)) invalid.push(`${id}: ${a.status}#${a.attempt} → ${b.status}#${b.attempt} (commit ${sha.slice(0, 7)})`);
      }
    }
    prev = now;
  }
  return { journalWrites: shas.length, invalidHistory: invalid };
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
