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
import { FULL, OWNER, REPO, startHarness } from "../test/app/helpers.js";
import { dagFiles, generateDag } from "../test/helpers/gen-plan.js";
import { instrumentChain, median, traceRun, type RunTrace, type TraceSettings } from "./support/run-trace.js";
import { planFiles, type Spec } from "../test/helpers/plan-files.js";
import type { CallStats } from "../src/app/app.js";
import { realClock } from "../src/core/clock.js";
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
      const { data: prs } = await h.user.rest.pulls.list({
        owner: OWNER,
        repo: REPO,
        head: `${OWNER}:${t.attempt?.branch}`,
        state: "open",
      });
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

/** How the makespan's runs are made: the cap in force, a time limit to fit the plan, output on stderr unless --json. */
const TRACE: TraceSettings = {
  config: CAP_CONFIG,
  sim: simOptions,
  pace: PACE,
  cap: CAP,
  // 30 minutes for 100 tasks or fewer; a bigger plan gets 20 s a task.
  timeoutMs: Math.max(1_800_000, 20_000 * MAKESPAN_TASKS),
  verbose: !json,
};

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
    const c = await traceRun(chainFiles, `run ${k + 1}, ${depth}-task chain`, k + 1, TRACE);
    const p = await traceRun(files, `run ${k + 1}, ${MAKESPAN_TASKS}-task plan`, k + 1, TRACE);
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
