/**
 * The commit an attempt's branch started from: what the App cut the task branch at, before any of
 * this attempt's commits (start, progress, work). "Did this attempt change anything" and the
 * walkthrough's `files_changed` are measured against it, never against the last push — a re-run of a
 * job whose runner died after some progress pushes finds its earlier work already on the branch.
 *
 * The attempt's own commits carry `Run:`, `Task:` and `Attempt:` trailers (task/pull.ts,
 * task/branch.ts, task/collect.ts). The walk follows first parents from the tip: commits of this
 * attempt and merge commits (a refinery's upstream merges, a type 3's sub-branches) are passed
 * over; the first other commit ends it. The starting
 * head is the first parent of the oldest commit of this attempt found, or the tip when the tip is
 * not one of them (a fresh attempt: nothing is fetched). A checkout is shallow (actions/checkout
 * fetches depth 1), so the history is deepened until the walk ends inside it.
 */
import { readAgentText } from "../../src/agent/agent-files.js";
import path from "node:path";
import type { Git } from "./git.js";

export interface AttemptId {
  runId: string;
  taskId: string;
  attempt: number;
}

/** The trailers every commit of an attempt carries (the record commit has the Forge-* ones instead). */
export function attemptTrailers(id: AttemptId): Array<[string, string]> {
  return [
    ["Run", id.runId],
    ["Task", id.taskId],
    ["Attempt", String(id.attempt)],
  ];
}

interface LogEntry {
  sha: string;
  parents: string[];
  ours: boolean;
}

const FIELD = "\x1f";
const RECORD = "\x1e";

/**
 * `since`: a resumed attempt (docs/executor.md#resuming) continues the work of the attempts before it
 * on their branch: the commits of every attempt from `since` to this one — their record commits too
 * (`Forge-*` trailers) — are the branch's work, passed over like this attempt's own.
 */
async function firstParentLog(git: Git, tip: string, id: AttemptId, max?: number, since?: number): Promise<LogEntry[]> {
  const format = [
    "%H",
    "%P",
    "%(trailers:key=Run,valueonly,separator=%x2C)",
    "%(trailers:key=Task,valueonly,separator=%x2C)",
    "%(trailers:key=Attempt,valueonly,separator=%x2C)",
    "%(trailers:key=Forge-Run,valueonly,separator=%x2C)",
    "%(trailers:key=Forge-Task,valueonly,separator=%x2C)",
    "%(trailers:key=Forge-Attempt,valueonly,separator=%x2C)",
  ].join("%x1f");
  const inLineage = (run: string | undefined, task: string | undefined, attempt: string | undefined) => {
    if (run !== id.runId || task !== id.taskId || !attempt) return false;
    const n = Number(attempt);
    return since !== undefined ? Number.isInteger(n) && n >= since && n <= id.attempt : attempt === String(id.attempt);
  };
  const raw = (await git.run(["log", "--first-parent", ...(max ? [`--max-count=${max}`] : []), `--format=${format}%x1e`, tip])).stdout;
  return raw
    .split(RECORD)
    .map((r) => r.trim())
    .filter(Boolean)
    .map((r) => {
      const [sha, parents, run, task, attempt, fRun, fTask, fAttempt] = r.split(FIELD).map((s) => s.trim());
      return {
        sha: sha!,
        parents: parents ? parents.split(" ") : [],
        ours: inLineage(run, task, attempt) || (since !== undefined && inLineage(fRun, fTask, fAttempt)),
      };
    });
}

async function shallowBoundary(git: Git): Promise<Set<string>> {
  const file = (await git.out(["rev-parse", "--git-path", "shallow"]).catch(() => "")) || "";
  if (!file) return new Set();
  const shallow = path.resolve(git.dir, file);
  const text = (await readAgentText(path.dirname(shallow), shallow)) ?? "";
  return new Set(
    text
      .split("\n")
      .map((l) => l.trim())
      .filter(Boolean),
  );
}

/** Walks the log; `undefined` when the walk reached the shallow boundary before it could end. */
function walk(log: LogEntry[], boundary: Set<string>, tip: string): string | undefined {
  let start = tip;
  for (const c of log) {
    // A shallow boundary commit shows no parents: what lies beyond it is unknown.
    if (boundary.has(c.sha)) return undefined;
    if (c.ours) {
      if (c.parents.length === 0) return c.sha; // a root commit of this attempt: nothing before it
      start = c.parents[0]!;
      continue;
    }
    if (c.parents.length > 1) continue;
    return start;
  }
  return start;
}

/**
 * The starting head of the attempt whose branch tip is `tip` (fetched as `refs/remotes/origin/<branch>`).
 */
export async function attemptStartHead(git: Git, branch: string, tip: string, id: AttemptId, since?: number): Promise<string> {
  const top = (await firstParentLog(git, tip, id, 1, since).catch(() => [] as LogEntry[]))[0];
  if (!top || !top.ours) return tip;
  for (const deepen of ["--deepen=32", "--deepen=256", "--unshallow"]) {
    const boundary = await shallowBoundary(git);
    const found = walk(await firstParentLog(git, tip, id, undefined, since), boundary, tip);
    if (found !== undefined) return found;
    if ((await git.out(["rev-parse", "--is-shallow-repository"])) !== "true") break;
    await git.run(["fetch", "--no-tags", "--quiet", deepen, "origin", `+refs/heads/${branch}:refs/remotes/origin/${branch}`], {
      allowFail: true,
    });
  }
  const found = walk(await firstParentLog(git, tip, id, undefined, since), await shallowBoundary(git), tip);
  return found ?? tip;
}
