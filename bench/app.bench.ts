/**
 * The App's figures, measured on the local GitHub with the scripted runner:
 *   1. GitHub API calls per task on the happy path (PENDING → MERGED), reads and writes apart, and
 *      content-creating calls: the marginal cost of a task = (calls of an N-task plan − calls of a
 *      1-task plan) / (N − 1), so the run's own calls (plan read, tracker, final PR) are not counted.
 *   2. From delivery of a `pull_request.closed` (merged by a person) to the dispatch request of the
 *      task it unblocks: wall time, and App-side time (wall time minus the time spent waiting on
 *      GitHub's answers), median and p99.
 *   3. Scheduling quality through the App: the wall-clock makespan of a generated 100-task plan
 *      (300 edges, seed 7 — the plan of `npm run bench`'s simulation) with zero-time agents, merge
 *      policy auto and max_parallel_agents at its default, from the run's start to run.completed,
 *      against the lower bound max(critical path, ⌈tasks / max_parallel⌉) × T, where T, the cycle
 *      time of one task through the App, is the makespan of a chain as long as the critical path
 *      divided by its length (the critical path run alone, hand-offs included).
 * Run: `npm run bench:app` (add `--json` for machine-readable output). `--makespan` runs only the
 * third figure; BENCH_MAKESPAN_RUNS (default 3) sets how many times it is repeated, BENCH_MAKESPAN_CAP
 * another max_parallel_agents. `--latency github` runs everything at GitHub's speed (the local
 * GitHub's latency profile, src/local-github/latency/README.md: response times, webhook delays,
 * runner queue time; seeded per run); `--latency none`, the default, answers at once. `--help`
 * prints this.
 */
import { readFile } from "node:fs/promises";
import { availableParallelism, loadavg } from "node:os";
import { FULL, OWNER, REPO, startHarness, type Harness } from "../test/app/helpers.js";
import { dagFiles, generateDag } from "../test/helpers/gen-plan.js";
import { processTreeCpuMs } from "./support/proc-cpu.js";
import { planFiles, type Spec } from "../test/helpers/plan-files.js";
import type { CallStats } from "../src/app/app.js";
import { realClock } from "../src/core/clock.js";
import { Engine } from "../src/app/engine/index.js";
import type { Journal } from "../src/core/journal.js";
import { TRAILERS } from "../src/core/layout.js";
import type { Dag } from "../src/core/schemas/dag.js";
import { defaultConfig } from "../src/core/schemas/config.js";
import { isLatencyProfileName, LATENCY_PROFILE_NAMES, type LatencyProfileName } from "../src/local-github/latency/profile.js";

if (process.argv.includes("--help")) {
  const header = (await readFile(new URL(import.meta.url), "utf8")).split("*/")[0]!;
  console.log(
    header
      .split("\n")
      .map((l) => l.replace(/^\/?\s*\*+ ?/, ""))
      .join("\n")
      .trim(),
  );
  process.exit(0);
}

/** `--latency <profile>`: the local GitHub's latency profile (default none). */
function latencyArg(): LatencyProfileName {
  const i = process.argv.indexOf("--latency");
  if (i < 0) return "none";
  const value = process.argv[i + 1];
  if (value === undefined || !isLatencyProfileName(value)) {
    console.error(
      `bench:app: --latency ${value === undefined ? "needs a value" : JSON.stringify(value)}: expected ${LATENCY_PROFILE_NAMES.join(" or ")}`,
    );
    process.exit(2);
  }
  return value;
}
const LATENCY = latencyArg();
/** The local GitHub's options for a harness: the latency profile, seeded by `seed` (a run's own). */
const simOptions = (seed = 1) => ({ latency: { profile: LATENCY, seed } });
/**
 * Forge's pace per installation (80 content-creating calls a minute…) is GitHub's limit: kept at
 * GitHub's latencies, off at the local GitHub's speed, which imposes no such limit and where the
 * bench measures the App's own work.
 */
// Real time: the benchmarks measure how long things take (the harness's test clock would skip the latency profile's delays).
const PACE = { clock: realClock, ...(LATENCY === "none" ? { pace: false as const } : {}) };

const json = process.argv.includes("--json");
const N = Number(process.env.BENCH_TASKS ?? 8);
const CHAIN = Number(process.env.BENCH_CHAIN ?? 21);

const chain = (n: number): Spec => Object.fromEntries(Array.from({ length: n }, (_, i) => [`t${i + 1}`, i ? [`t${i}`] : []]));

async function callsFor(n: number): Promise<CallStats> {
  const h = await startHarness(() => ({ kind: "success" }), { config: "branch_cleanup: never\n", sim: simOptions(), ...PACE });
  try {
    await h.pushFiles(planFiles("bench", chain(n)), "Add the plan");
    await h.waitFor((j) => j.status === "completed", 600_000);
    await h.app.forge.idle();
    return structuredClone(h.app.forge.runtimes.get(FULL)!.stats);
  } finally {
    await h.close();
  }
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * (s.length - 1) + 0.5))]!;
}

async function latency(n: number): Promise<{ wall: number[]; appSide: number[]; calls: number[]; path: string[] }> {
  const webhooks: { name: string; action?: string; at: number }[] = [];
  const requests: { route: string; start: number; end: number }[] = [];
  const h = await startHarness(() => ({ kind: "success" }), {
    config: "merge_policy: manual\n",
    sim: simOptions(),
    ...PACE,
    onWebhook: (w) => webhooks.push(w),
    onRequest: (r) => requests.push(r),
  });
  const wall: number[] = [];
  const appSide: number[] = [];
  /** Per sample, the App's calls between the webhook and the dispatch; the routes of the last one. */
  const calls: number[] = [];
  let path: string[] = [];
  try {
    await h.pushFiles(planFiles("bench", chain(n)), "Add the plan");
    for (let i = 1; i < n; i++) {
      const id = `t${i}`;
      const j = await h.waitFor((x) => x.tasks.find((t) => t.id === id)!.status === "MERGE_READY", 120_000);
      await h.app.forge.idle();
      const t = j.tasks.find((x) => x.id === id)!;
      const { data: prs } = await h.user.rest.pulls.list({ owner: OWNER, repo: REPO, head: `${OWNER}:${t.branch}`, state: "open" });
      const mark = webhooks.length;
      const reqMark = requests.length;
      await h.user.rest.pulls.merge({ owner: OWNER, repo: REPO, pull_number: prs[0]!.number });
      await h.waitFor((x) => x.tasks.find((y) => y.id === `t${i + 1}`)!.status === "RUNNING", 120_000);
      await h.app.forge.idle();
      const closed = webhooks.slice(mark).find((w) => w.name === "pull_request" && w.action === "closed");
      const dispatch = requests.slice(reqMark).find((r) => r.route.endsWith("/dispatches"));
      if (!closed || !dispatch) throw new Error(`step ${i}: no webhook or no dispatch seen`);
      // Time with at least one call to GitHub open (calls made at once count once).
      const open = requests
        .slice(reqMark)
        .filter((r) => r.start >= closed.at && r.start < dispatch.start)
        .map((r) => [r.start, Math.min(r.end, dispatch.start)] as const)
        .sort((a, b) => a[0] - b[0]);
      let waited = 0;
      let until = -Infinity;
      for (const [start, end] of open) {
        if (end > until) waited += end - Math.max(start, until);
        until = Math.max(until, end);
      }
      wall.push(dispatch.start - closed.at);
      appSide.push(dispatch.start - closed.at - waited);
      const between = requests.slice(reqMark).filter((r) => r.start >= closed.at && r.start < dispatch.start);
      calls.push(between.length);
      path = between.map((r) => r.route.replace(/[0-9a-f]{40}/g, "{sha}").replace(/\/\d+(?=\/|$)/g, "/{n}"));
    }
  } finally {
    await h.close();
  }
  return { wall, appSide, calls, path };
}

// ---- 3. scheduling quality: makespan of a 100-task plan with zero-time agents, against its lower bound

/** The plan's size: 100 tasks and 300 edges unless BENCH_MAKESPAN_TASKS is set (edges three per task). */
const MAKESPAN_TASKS = Number(process.env.BENCH_MAKESPAN_TASKS ?? 100);
const MAKESPAN_EDGES = 3 * MAKESPAN_TASKS;
const MAKESPAN_SEED = 7;
const MAKESPAN_RUNS = Number(process.env.BENCH_MAKESPAN_RUNS ?? 3);
/** max_parallel_agents: its default unless BENCH_MAKESPAN_CAP is set (to see whether the cap is what binds). */
const CAP = Number(process.env.BENCH_MAKESPAN_CAP ?? defaultConfig().max_parallel_agents);
/** The cores the bench's processes can use (the machine's bound divides their CPU by it). */
const CORES = availableParallelism();
const CAP_CONFIG = process.env.BENCH_MAKESPAN_CAP ? `max_parallel_agents: ${CAP}\n` : "";

/** Longest chain of the DAG, in tasks. */
function criticalPath(dag: Dag): number {
  const depth = new Map<string, number>();
  for (const n of dag.nodes) depth.set(n.id, 1 + Math.max(0, ...n.dependencies.map((d) => depth.get(d)!))); // a node only depends on earlier ones
  return Math.max(...depth.values());
}

/** The plan folder of `dag` as repository files under `.forge/plans/<planId>/`. */

/** Calls `fn` after every persisted decision, with the time it was made known (performance.now()). */
function observe(h: Harness, fn: (j: Journal, d: Harness["decisions"][number]["d"], at: number) => void): void {
  h.waitFor(
    (j) => {
      fn(j, h.decisions[h.decisions.length - 1]!.d, performance.now());
      return false;
    },
    2 ** 31 - 1,
  ).catch(() => undefined);
}

/**
 * The engine serialises the work of one run (a promise chain per run): every entry into it is timed
 * here, by wrapping the four public methods that enter the chain, so that the bench can tell how
 * much of the run the chain was busy and how long work waited to enter it. Measurement only.
 */
const chainCalls: { method: string; enqueued: number; done: number }[] = [];
function instrumentChain(): void {
  for (const method of ["start", "apply", "flush", "state"] as const) {
    const original = Engine.prototype[method] as (...args: unknown[]) => Promise<unknown>;
    (Engine.prototype as unknown as Record<string, unknown>)[method] = function (this: Engine, ...args: unknown[]) {
      const enqueued = performance.now();
      const result = original.apply(this, args);
      const record = () => void chainCalls.push({ method, enqueued, done: performance.now() });
      result.then(record, record);
      return result;
    };
  }
}

/** Busy time of the run's chain within [from, to], and the waits to enter it (FIFO: an entry is served once the previous one is done). */
function chainBusy(
  calls: typeof chainCalls,
  from: number,
  to: number,
): { busy: number; waits: number[]; services: number[]; depths: number[]; entries: Record<string, number> } {
  const sorted = [...calls].sort((a, b) => a.done - b.done);
  let previous = -Infinity;
  let busy = 0;
  const waits: number[] = [];
  const services: number[] = [];
  const depths: number[] = [];
  const entries: Record<string, number> = {};
  for (const [i, c] of sorted.entries()) {
    const begin = Math.max(c.enqueued, previous);
    previous = c.done;
    // Entries already waiting when this one is served: what one batch decision could have taken with it.
    let waiting = 0;
    for (let k = i + 1; k < sorted.length && sorted[k]!.enqueued <= begin; k++) waiting++;
    if (c.enqueued >= from && c.done <= to) depths.push(waiting);
    busy += Math.max(0, Math.min(c.done, to) - Math.max(begin, from));
    if (c.enqueued >= from && c.done <= to) {
      waits.push(begin - c.enqueued);
      services.push(c.done - begin);
      entries[c.method] = (entries[c.method] ?? 0) + 1;
    }
  }
  return { busy, waits, services, depths, entries };
}

interface RunTrace {
  /** From the run's first decision (run started, first dispatches) to the decision that completes it. */
  makespanMs: number;
  /** From the plan's push to main to run.completed (adds reading the plan and creating the run). */
  fromPushMs: number;
  tasks: number;
  decisions: number;
  journalWrites: number;
  casConflicts: number;
  appCalls: number;
  /** Per task: dispatch decided → its job starts on a runner (GitHub's runner queue included) → the runner pushes the record commit → agent done in the journal → merge-ready → merged. */
  phases: {
    decidedToDispatched: number[];
    dispatchedToRecordPushed: number[];
    recordPushedToDone: number[];
    doneToMergeReady: number[];
    mergeReadyToMerged: number[];
    decidedToMerged: number[];
  };
  /** Event-loop utilisation of the one process that runs the local GitHub, the App and the runner. */
  eventLoopUtilization: number;
  /** CPU used meanwhile by the bench's processes (the local GitHub and its git, the App, the runner), null without /proc. */
  treeCpuMs: number | null;
  /** Median duration of the App's GitHub calls. */
  appCallMs: number;
  /** Share of the makespan the run's chain (one writer per run) was busy; entries into it, median wait to enter and time inside. */
  chainBusy: number;
  chainEntries: Record<string, number>;
  chainWaitMs: number;
  chainServiceMs: number;
  /** Mean number of entries already waiting when one entry into the chain is served. */
  chainQueueDepth: number;
  /** Share of the makespan spent waiting on the journal's compare-and-swap writes (made inside the chain, one at a time). */
  journalWriteShare: number;
  /** Longest time from a dispatch decided to its job starting on a runner. */
  decidedToDispatchedMaxMs: number;
  /** Time-weighted mean of RUNNING tasks (the cap counts these), and of RUNNING + DONE + MERGE_READY. */
  meanRunning: number;
  meanInFlight: number;
  /** Share of the makespan with `CAP` tasks RUNNING, and with a free slot while a task was ready (journal view). */
  atCap: number;
  readyWithFreeSlot: number;
}

async function traceRun(files: Record<string, string>, label: string, seed: number): Promise<RunTrace> {
  const requests: { route: string; start: number; end: number; status?: number }[] = [];
  chainCalls.length = 0;
  const h = await startHarness(() => ({ kind: "success" }), {
    config: `merge_policy: auto\n${CAP_CONFIG}`,
    sim: simOptions(seed),
    ...PACE,
    onRequest: (r) => requests.push(r),
  });
  const dispatchedAt = new Map<string, number>();
  h.sim.onWorkflowDispatch((d) => {
    dispatchedAt.set(`${d.inputs.task_id}/${d.inputs.attempt}`, performance.now());
    h.runner.handler(d);
  });
  const recordPushedAt = new Map<string, number>();
  h.sim.onEvent((e) => {
    if (e.event !== "push") return;
    const p = e.payload as { ref?: string; head_commit?: { message?: string } | null };
    const m = /^refs\/heads\/forge\/[^/]+\/([^/_][^/]*)\/(\d+)$/.exec(p.ref ?? "");
    if (m && p.head_commit?.message?.includes(`${TRAILERS.task}:`)) recordPushedAt.set(`${m[1]}/${m[2]}`, performance.now());
  });
  const at = new Map<string, Partial<Record<"RUNNING" | "DONE" | "MERGE_READY" | "MERGED", number>>>();
  const samples: { at: number; running: number; inFlight: number; ready: number }[] = [];
  let started: number | undefined;
  let completed: number | undefined;
  observe(h, (j, d, now) => {
    started ??= now;
    for (const t of d.transitions) {
      if (t.to !== "RUNNING" && t.to !== "DONE" && t.to !== "MERGE_READY" && t.to !== "MERGED") continue;
      const k = `${t.taskId}/${t.attempt}`;
      const rec = at.get(k) ?? {};
      rec[t.to] ??= now;
      at.set(k, rec);
    }
    let running = 0;
    let inFlight = 0;
    let ready = 0;
    for (const t of j.tasks) {
      if (t.status === "RUNNING") running++;
      if (t.status === "RUNNING" || t.status === "DONE" || t.status === "MERGE_READY") inFlight++;
      if (t.status === "PENDING" && t.blockers === 0) ready++;
    }
    samples.push({ at: now, running, inFlight, ready });
    if (j.status === "completed") completed ??= now;
  });
  try {
    const pushed = performance.now();
    const elu0 = performance.eventLoopUtilization();
    const cpu0 = processTreeCpuMs();
    await h.pushFiles(files, "Add the plan");
    // 30 minutes for 100 tasks or fewer; a bigger plan gets 20 s a task.
    const j = await h.waitFor((x) => x.status === "completed", Math.max(1_800_000, 20_000 * MAKESPAN_TASKS));
    const end = completed ?? performance.now();
    const elu = performance.eventLoopUtilization(elu0).utilization;
    const cpu1 = processTreeCpuMs();
    const begin = started!;
    await h.app.forge.idle();
    const stats = h.app.forge.runtimes.get(FULL)!.stats;
    // Time-weighted occupancy between the run's start and its completion.
    let wRunning = 0;
    let wInFlight = 0;
    let wCap = 0;
    let wIdle = 0;
    for (let i = 0; i < samples.length; i++) {
      const s = samples[i]!;
      const until = Math.min(samples[i + 1]?.at ?? end, end);
      const dt = Math.max(0, until - Math.max(s.at, begin));
      wRunning += s.running * dt;
      wInFlight += s.inFlight * dt;
      if (s.running >= CAP) wCap += dt;
      if (s.running < CAP && s.ready > 0) wIdle += dt;
    }
    const span = end - begin;
    const chainUse = chainBusy(chainCalls, begin, end);
    const phases: RunTrace["phases"] = {
      decidedToDispatched: [],
      dispatchedToRecordPushed: [],
      recordPushedToDone: [],
      doneToMergeReady: [],
      mergeReadyToMerged: [],
      decidedToMerged: [],
    };
    for (const [k, r] of at) {
      const sent = dispatchedAt.get(k);
      if (r.RUNNING !== undefined && sent !== undefined) phases.decidedToDispatched.push(sent - r.RUNNING);
      const recorded = recordPushedAt.get(k);
      if (sent !== undefined && recorded !== undefined) phases.dispatchedToRecordPushed.push(recorded - sent);
      if (recorded !== undefined && r.DONE !== undefined) phases.recordPushedToDone.push(r.DONE - recorded);
      if (r.DONE !== undefined && r.MERGE_READY !== undefined) phases.doneToMergeReady.push(r.MERGE_READY - r.DONE);
      if (r.MERGE_READY !== undefined && r.MERGED !== undefined) phases.mergeReadyToMerged.push(r.MERGED - r.MERGE_READY);
      if (r.RUNNING !== undefined && r.MERGED !== undefined) phases.decidedToMerged.push(r.MERGED - r.RUNNING);
    }
    const writes = requests.filter((r) => r.route.startsWith("PUT ") && r.route.includes("/contents/"));
    const trace: RunTrace = {
      makespanMs: span,
      fromPushMs: end - pushed,
      tasks: j.tasks.length,
      decisions: h.decisions.length,
      journalWrites: writes.length,
      casConflicts: writes.filter((r) => r.status === 409 || r.status === 422).length,
      appCalls: stats.reads + stats.writes,
      phases,
      eventLoopUtilization: elu,
      treeCpuMs: cpu0 === null || cpu1 === null ? null : cpu1 - cpu0,
      chainBusy: chainUse.busy / span,
      journalWriteShare: writes.filter((r) => r.start >= begin && r.end <= end).reduce((sum, r) => sum + r.end - r.start, 0) / span,
      decidedToDispatchedMaxMs: Math.max(...phases.decidedToDispatched),
      chainEntries: chainUse.entries,
      chainWaitMs: median(chainUse.waits),
      chainServiceMs: median(chainUse.services),
      chainQueueDepth: chainUse.depths.reduce((a, b) => a + b, 0) / Math.max(1, chainUse.depths.length),
      appCallMs: median(requests.filter((r) => r.start >= begin && r.end <= end).map((r) => r.end - r.start)),
      meanRunning: wRunning / span,
      meanInFlight: wInFlight / span,
      atCap: wCap / span,
      readyWithFreeSlot: wIdle / span,
    };
    if (!json) {
      // The App's calls per task by route (ids, shas, part hashes and task branches folded), and content-creating ones.
      const routes = new Map<string, number>();
      for (const { route } of requests) {
        const n = 1;
        const r = route
          .replace(/(gen-\d+-\d+-\d+|chain)-[0-9a-f]{7}/g, "{run}")
          .replace(/\/contents\/[^?]*\/(t\d{5})\/\d+\//, "/contents/{result of a task}/")
          .replace(/tasks%2F[^/?]+\.md/, "tasks%2F{task}.md")
          .replace(/[0-9a-f]{40,64}/g, "{sha}")
          .replace(/\/\d+(?=\/|$)/g, "/{n}")
          .replace(/forge(%2F|\/)[^/]+?(%2F|\/)t\d+(%2F|\/)\d+/g, "{task branch}")
          .replace(/t\d{5}/g, "{task}");
        routes.set(r, (routes.get(r) ?? 0) + n);
      }
      const per = (n: number) => (n / j.tasks.length).toFixed(2);
      console.error(
        `  ${label}: App calls per task ${per(stats.reads + stats.writes)} (reads ${per(stats.reads)}, writes ${per(stats.writes)}, content-creating ${per(stats.contentCreating)})`,
      );
      for (const [r, n] of [...routes].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.error(`    ${per(n)}  ${r}`);
    }
    if (!json)
      console.error(
        `  ${label}: makespan ${(span / 1000).toFixed(2)} s (${j.tasks.length} tasks, ${trace.decisions} decisions, ${trace.journalWrites} journal writes, ${trace.casConflicts} lost CAS; load ${loadavg()
          .map((x) => x.toFixed(2))
          .join(" ")})`,
      );
    return trace;
  } finally {
    await h.close();
  }
}

function median(xs: number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

async function makespan() {
  instrumentChain();
  const dag = generateDag(MAKESPAN_TASKS, MAKESPAN_EDGES, MAKESPAN_SEED);
  const edges = dag.nodes.reduce((n, x) => n + x.dependencies.length, 0);
  const depth = criticalPath(dag);
  const files = await dagFiles(dag);
  const chainFiles = planFiles("chain", chain(depth));
  const loadBefore = loadavg();
  const runs: {
    plan: RunTrace;
    chain: RunTrace;
    T: number;
    lowerBound: number;
    ratio: number;
    cpuBound: number;
    cpuAwareRatio: number;
    cpuPerTaskMs: number;
    chainCpuPerTaskMs: number;
  }[] = [];
  for (let k = 0; k < MAKESPAN_RUNS; k++) {
    // The chain and the plan in turn, so that a change of load touches both.
    const c = await traceRun(chainFiles, `run ${k + 1}, ${depth}-task chain`, k + 1);
    const p = await traceRun(files, `run ${k + 1}, ${MAKESPAN_TASKS}-task plan`, k + 1);
    const T = c.makespanMs / depth;
    const lowerBound = Math.max(depth, Math.ceil(MAKESPAN_TASKS / CAP)) * T;
    // The machine's bound: the plan's CPU (every process of the bench) spread over every core.
    const cpuBound = p.treeCpuMs === null ? NaN : p.treeCpuMs / CORES;
    const cpuAware = Math.max(lowerBound, Number.isNaN(cpuBound) ? 0 : cpuBound);
    runs.push({
      plan: p,
      chain: c,
      T,
      lowerBound,
      ratio: p.makespanMs / lowerBound,
      cpuBound,
      cpuAwareRatio: p.makespanMs / cpuAware,
      cpuPerTaskMs: p.treeCpuMs === null ? NaN : p.treeCpuMs / MAKESPAN_TASKS,
      chainCpuPerTaskMs: c.treeCpuMs === null ? NaN : c.treeCpuMs / depth,
    });
  }
  const T = median(runs.map((r) => r.T));
  const mk = median(runs.map((r) => r.plan.makespanMs));
  const lowerBound = Math.max(depth, Math.ceil(MAKESPAN_TASKS / CAP)) * T;
  const phase = (which: "plan" | "chain", k: keyof RunTrace["phases"]) => median(runs.flatMap((r) => r[which].phases[k]));
  const phases = (which: "plan" | "chain") => ({
    decidedToDispatchedMs: phase(which, "decidedToDispatched"),
    dispatchedToRecordPushedMs: phase(which, "dispatchedToRecordPushed"),
    recordPushedToDoneMs: phase(which, "recordPushedToDone"),
    doneToMergeReadyMs: phase(which, "doneToMergeReady"),
    mergeReadyToMergedMs: phase(which, "mergeReadyToMerged"),
    decidedToMergedMs: phase(which, "decidedToMerged"),
  });
  return {
    plan: {
      tasks: MAKESPAN_TASKS,
      edges,
      seed: MAKESPAN_SEED,
      criticalPath: depth,
      maxParallel: CAP,
      workBound: Math.ceil(MAKESPAN_TASKS / CAP),
    },
    runs: runs.length,
    makespanMs: mk,
    makespanRunsMs: runs.map((r) => r.plan.makespanMs),
    fromPushMs: median(runs.map((r) => r.plan.fromPushMs)),
    cycleTimeMs: T,
    cycleTimeRunsMs: runs.map((r) => r.T),
    oneTaskDispatchToMergedMs: phase("chain", "decidedToMerged"),
    lowerBoundMs: lowerBound,
    ratio: mk / lowerBound,
    ratioRuns: runs.map((r) => r.ratio),
    cores: CORES,
    cpuPerTaskMs: median(runs.map((r) => r.cpuPerTaskMs)),
    chainCpuPerTaskMs: median(runs.map((r) => r.chainCpuPerTaskMs)),
    cpuBoundMs: median(runs.map((r) => r.cpuBound)),
    cpuAwareRatio: median(runs.map((r) => r.cpuAwareRatio)),
    cpuAwareRatioRuns: runs.map((r) => r.cpuAwareRatio),
    planPhases: phases("plan"),
    chainPhases: phases("chain"),
    meanRunning: median(runs.map((r) => r.plan.meanRunning)),
    meanInFlight: median(runs.map((r) => r.plan.meanInFlight)),
    atCap: median(runs.map((r) => r.plan.atCap)),
    readyWithFreeSlot: median(runs.map((r) => r.plan.readyWithFreeSlot)),
    journalWrites: median(runs.map((r) => r.plan.journalWrites)),
    casConflicts: median(runs.map((r) => r.plan.casConflicts)),
    decisions: median(runs.map((r) => r.plan.decisions)),
    appCalls: median(runs.map((r) => r.plan.appCalls)),
    chainJournalWrites: median(runs.map((r) => r.chain.journalWrites)),
    eventLoopUtilization: {
      plan: median(runs.map((r) => r.plan.eventLoopUtilization)),
      chain: median(runs.map((r) => r.chain.eventLoopUtilization)),
    },
    appCallMs: { plan: median(runs.map((r) => r.plan.appCallMs)), chain: median(runs.map((r) => r.chain.appCallMs)) },
    runChain: {
      busy: { plan: median(runs.map((r) => r.plan.chainBusy)), chain: median(runs.map((r) => r.chain.chainBusy)) },
      waitMs: { plan: median(runs.map((r) => r.plan.chainWaitMs)), chain: median(runs.map((r) => r.chain.chainWaitMs)) },
      serviceMs: { plan: median(runs.map((r) => r.plan.chainServiceMs)), chain: median(runs.map((r) => r.chain.chainServiceMs)) },
      queueDepth: { plan: median(runs.map((r) => r.plan.chainQueueDepth)), chain: median(runs.map((r) => r.chain.chainQueueDepth)) },
      entries: runs[0]!.plan.chainEntries,
      journalWriteShare: {
        plan: median(runs.map((r) => r.plan.journalWriteShare)),
        chain: median(runs.map((r) => r.chain.journalWriteShare)),
      },
    },
    decidedToDispatchedMaxMs: {
      plan: Math.max(...runs.map((r) => r.plan.decidedToDispatchedMaxMs)),
      chain: Math.max(...runs.map((r) => r.chain.decidedToDispatchedMaxMs)),
    },
    loadAverage: { before: loadBefore, after: loadavg() },
  };
}

const onlyMakespan = process.argv.includes("--makespan");
const fmt = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`);
const out: Record<string, unknown> = { latency: LATENCY, loadAverageAtStart: loadavg() };

if (!onlyMakespan) {
  const one = await callsFor(1);
  const many = await callsFor(N);
  const per = (k: "reads" | "writes" | "contentCreating") => (many[k] - one[k]) / (N - 1);
  const routes = Object.fromEntries(
    Object.keys(many.byRoute)
      .map((r) => [r, ((many.byRoute[r] ?? 0) - (one.byRoute[r] ?? 0)) / (N - 1)] as const)
      .filter(([, v]) => v > 0)
      .sort((a, b) => b[1] - a[1]),
  );
  const lat = await latency(CHAIN);
  const calls = {
    perTask: {
      reads: per("reads"),
      writes: per("writes"),
      total: per("reads") + per("writes"),
      contentCreating: per("contentCreating"),
      byRoute: routes,
    },
    run: {
      reads: one.reads,
      writes: one.writes,
      contentCreating: one.contentCreating,
      note: "a whole 1-task run, including the plan read, tracker and final PR",
    },
    mergeToDispatch: {
      samples: lat.wall.length,
      wallMedianMs: quantile(lat.wall, 0.5),
      wallP95Ms: quantile(lat.wall, 0.95),
      wallP99Ms: quantile(lat.wall, 0.99),
      callsMedian: quantile(lat.calls, 0.5),
      callsOfTheLastSample: lat.path,
      appSideMedianMs: quantile(lat.appSide, 0.5),
      appSideP99Ms: quantile(lat.appSide, 0.99),
    },
  };
  Object.assign(out, calls);
  if (!json) {
    console.log(`Forge App on the local GitHub (latency ${LATENCY}) — ${N}-task and 1-task chains; ${CHAIN}-task chain merged by a person`);
    console.log("");
    console.log("| per task (happy path) | calls |");
    console.log("|---|---:|");
    console.log(`| reads | ${calls.perTask.reads.toFixed(2)} |`);
    console.log(`| writes | ${calls.perTask.writes.toFixed(2)} |`);
    console.log(`| total (target ≤ 10) | ${calls.perTask.total.toFixed(2)} |`);
    console.log(`| content-creating (target ≤ 4) | ${calls.perTask.contentCreating.toFixed(2)} |`);
    console.log("");
    for (const [r, v] of Object.entries(routes)) console.log(`- ${r}: ${v.toFixed(2)}`);
    console.log("");
    const m = calls.mergeToDispatch;
    console.log(`Merge webhook (pull_request.closed) → the next task's dispatch request, ${m.samples} samples:`);
    console.log("");
    console.log("| | median | p95 | p99 |");
    console.log("|---|---:|---:|---:|");
    console.log(`| wall time | ${fmt(m.wallMedianMs)} | ${fmt(m.wallP95Ms)} | ${fmt(m.wallP99Ms)} |`);
    console.log(
      `| App-side (wall minus time with a call to GitHub open; target ≤ 50 / ≤ 250 ms) | ${fmt(m.appSideMedianMs)} | | ${fmt(m.appSideP99Ms)} |`,
    );
    console.log("");
    console.log(`the App's calls in between (median ${m.callsMedian}; the last sample's, in order): ${m.callsOfTheLastSample.join(" → ")}`);
    console.log(`- a whole 1-task run: ${one.reads} reads, ${one.writes} writes, ${one.contentCreating} content-creating`);
    console.log("");
    console.log("");
  }
}

if (MAKESPAN_RUNS > 0) {
  const m = await makespan();
  out.makespan = m;
  if (!json) {
    const p = m.plan;
    console.log(
      `Makespan of a ${p.tasks}-task plan (${p.edges} edges, seed ${p.seed}), zero-time agents, merge_policy auto, max_parallel_agents ${p.maxParallel}; ${m.runs} runs; local GitHub latency ${LATENCY}`,
    );
    console.log("");
    console.log("| | median | runs |");
    console.log("|---|---:|---:|");
    console.log(`| makespan (run started → run.completed) | ${fmt(m.makespanMs)} | ${m.makespanRunsMs.map(fmt).join(", ")} |`);
    console.log(`| plan pushed → run.completed | ${fmt(m.fromPushMs)} | |`);
    console.log(
      `| T = makespan of a ${p.criticalPath}-task chain / ${p.criticalPath} | ${fmt(m.cycleTimeMs)} | ${m.cycleTimeRunsMs.map(fmt).join(", ")} |`,
    );
    console.log(
      `| lower bound max(critical path ${p.criticalPath}, ⌈${p.tasks}/${p.maxParallel}⌉ = ${p.workBound}) × T | ${fmt(m.lowerBoundMs)} | |`,
    );
    console.log(`| **ratio** | **${m.ratio.toFixed(2)}** | ${m.ratioRuns.map((r) => r.toFixed(2)).join(", ")} |`);
    console.log(
      `| CPU of the bench's processes per task (local GitHub and its git, App, runner): plan / chain | ${fmt(m.cpuPerTaskMs)} / ${fmt(m.chainCpuPerTaskMs)} | |`,
    );
    console.log(`| the machine's bound: the plan's CPU / ${m.cores} cores | ${fmt(m.cpuBoundMs)} | |`);
    console.log(
      `| ratio against max(lower bound, the machine's bound) | ${m.cpuAwareRatio.toFixed(2)} | ${m.cpuAwareRatioRuns.map((r) => r.toFixed(2)).join(", ")} |`,
    );
    console.log("");
    console.log(`| per task, median | ${MAKESPAN_TASKS}-task plan | chain |`);
    console.log("|---|---:|---:|");
    const rows: [string, keyof typeof m.planPhases][] = [
      ["dispatch decided → the job starts (runner queue included)", "decidedToDispatchedMs"],
      ["the job starts → runner pushes the record commit", "dispatchedToRecordPushedMs"],
      ["record pushed → agent done in the journal", "recordPushedToDoneMs"],
      ["done → merge-ready", "doneToMergeReadyMs"],
      ["merge-ready → merged", "mergeReadyToMergedMs"],
      ["dispatch decided → merged", "decidedToMergedMs"],
    ];
    for (const [name, k] of rows) console.log(`| ${name} | ${fmt(m.planPhases[k])} | ${fmt(m.chainPhases[k])} |`);
    console.log("");
    console.log(
      `tasks RUNNING on average ${m.meanRunning.toFixed(2)} of ${p.maxParallel} (in flight incl. DONE/MERGE_READY ${m.meanInFlight.toFixed(2)}); at the cap ${(m.atCap * 100).toFixed(0)} % of the time; a free slot with a ready task ${(m.readyWithFreeSlot * 100).toFixed(1)} %`,
    );
    console.log(
      `event-loop utilisation of the process (local GitHub + App + runner): plan ${(m.eventLoopUtilization.plan * 100).toFixed(0)} %, chain ${(m.eventLoopUtilization.chain * 100).toFixed(0)} %; median App call ${m.appCallMs.plan.toFixed(1)} ms (plan), ${m.appCallMs.chain.toFixed(1)} ms (chain)`,
    );
    const rc = m.runChain;
    console.log(
      `the run's chain (one writer per run) busy ${(rc.busy.plan * 100).toFixed(0)} % of the makespan (chain: ${(rc.busy.chain * 100).toFixed(0)} %); median wait to enter it ${fmt(rc.waitMs.plan)} (chain: ${fmt(rc.waitMs.chain)}), median time inside ${fmt(rc.serviceMs.plan)} (chain: ${fmt(rc.serviceMs.chain)}); on average ${rc.queueDepth.plan.toFixed(1)} entries already waiting when one is served (chain: ${rc.queueDepth.chain.toFixed(1)}); entries ${JSON.stringify(rc.entries)}; journal writes ${(rc.journalWriteShare.plan * 100).toFixed(0)} % of the makespan (chain: ${(rc.journalWriteShare.chain * 100).toFixed(0)} %)`,
    );
    console.log(
      `longest dispatch decided → the job starting: ${fmt(m.decidedToDispatchedMaxMs.plan)} (plan), ${fmt(m.decidedToDispatchedMaxMs.chain)} (chain)`,
    );
    console.log(
      `per run: ${m.decisions} decisions, ${m.journalWrites} journal writes (${m.casConflicts} lost compare-and-swap), ${m.appCalls} App calls; chain: ${m.chainJournalWrites} journal writes`,
    );
    console.log(
      `load average before ${m.loadAverage.before.map((x) => x.toFixed(2)).join(" ")}, after ${m.loadAverage.after.map((x) => x.toFixed(2)).join(" ")}`,
    );
  }
}
if (json) console.log(JSON.stringify(out, null, 2));
process.exit(0);
