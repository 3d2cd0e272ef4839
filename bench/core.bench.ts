/**
 * Benchmarks of Forge's core on a generated plan of 10,000 nodes and 50,000 edges:
 *   validate (pure rules on a loaded plan, and load + validate from disk), one ready-set
 *   computation from scratch, one `decide()` per input kind on a run in progress, and peak memory.
 * Run: `npm run bench` (node --expose-gc). Prints medians; `--json` prints them as JSON.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { decide, startRun } from "../src/core/decide/index.js";
import type { LeafInput } from "../src/core/inputs.js";
import type { Journal } from "../src/core/journal.js";
import { loadPlan } from "../src/core/plan/load.js";
import { validatePlan } from "../src/core/plan/validate.js";
import { readySet } from "../test/helpers/ready-set.js";
import { defaultConfig } from "../src/core/schemas/config.js";
import { generateDag, writePlan } from "../test/helpers/gen-plan.js";
import { factsFor, midRunInputs, newRun } from "../test/helpers/world.js";
import type { PlanNodeInput } from "../src/core/inputs.js";
import type { ForgeConfig } from "../src/core/schemas/config.js";

/** Longest chain of the DAG, in tasks. */
function criticalPath(nodes: PlanNodeInput[]): number {
  const depth = new Map<string, number>();
  const visit = (id: string): number => {
    const known = depth.get(id);
    if (known !== undefined) return known;
    const n = nodes.find((x) => x.id === id)!;
    const d = 1 + Math.max(0, ...n.dependencies.map(visit));
    depth.set(id, d);
    return d;
  };
  return Math.max(...nodes.map((n) => visit(n.id)));
}

/** Discrete-event run of the executor: each agent finishes one minute after its dispatch. */
function simulateMakespan(nodes: PlanNodeInput[], config: ForgeConfig): number {
  const MIN = 60_000;
  let d = startRun(newRun(nodes), 0, config);
  let journal = d.journal;
  const timeline: { at: number; input: LeafInput }[] = [];
  const plan = (decision: typeof d, now: number) => {
    for (const e of decision.effects) {
      const facts = factsFor(e, () => ({ kind: "success" }), now);
      const at = e.kind === "DispatchAgent" ? now + MIN : now;
      for (const input of facts) timeline.push({ at, input });
    }
    timeline.sort((a, b) => a.at - b.at);
  };
  plan(d, 0);
  let now = 0;
  while (journal.status === "running" && timeline.length) {
    const next = timeline.shift()!;
    now = next.at;
    d = decide(journal, next.input, now, config);
    journal = d.journal;
    plan(d, now);
  }
  if (journal.status !== "completed") throw new Error("the simulated run did not complete");
  return Math.round(now / MIN);
}

const NODES = Number(process.env.BENCH_NODES ?? 10_000);
const EDGES = Number(process.env.BENCH_EDGES ?? 50_000);
const json = process.argv.includes("--json");

let peakRss = 0;
const sample = () => (peakRss = Math.max(peakRss, process.memoryUsage().rss));
const sampler = setInterval(sample, 5);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
function p99(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * 0.99))]!;
}

/** Time `fn` `runs` times after `warmup` untimed runs; milliseconds per run. */
function measure(fn: () => unknown, runs: number, warmup = Math.min(20, runs)): number[] {
  for (let k = 0; k < warmup; k++) fn();
  const times: number[] = [];
  for (let k = 0; k < runs; k++) {
    const t0 = performance.now();
    fn();
    times.push(performance.now() - t0);
  }
  sample();
  return times;
}

async function measureAsync(fn: () => Promise<unknown>, runs: number): Promise<number[]> {
  await fn();
  const times: number[] = [];
  for (let k = 0; k < runs; k++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  sample();
  return times;
}

const results: { name: string; median: number; p99: number; runs: number; target?: number }[] = [];
const record = (name: string, times: number[], target?: number) =>
  results.push({ name, median: median(times), p99: p99(times), runs: times.length, ...(target !== undefined ? { target } : {}) });

const dir = await mkdtemp(path.join(tmpdir(), "forge-bench-"));
try {
  const dag = generateDag(NODES, EDGES, 1);
  const edges = dag.nodes.reduce((n, x) => n + x.dependencies.length, 0);
  const planDir = await writePlan(dir, dag);

  // ---- validate
  const parsed = await loadPlan(planDir);
  const problems = validatePlan(parsed);
  if (problems.length > 0) throw new Error(`the generated plan should be valid: ${problems[0]!.message}`);
  record(
    "validate (rules on a loaded plan)",
    measure(() => validatePlan(parsed), 50),
    50,
  );
  record("load + validate from disk", await measureAsync(async () => validatePlan(await loadPlan(planDir)), 5));

  // ---- a run in progress: start it, then finish a third of the tasks through the executor.
  const config = defaultConfig();
  const nodes = dag.nodes.map((n) => ({ id: n.id, kind: n.type, agentType: n.agentType, dependencies: n.dependencies }));
  record(
    "startRun (index, priorities, first dispatch)",
    measure(() => startRun(newRun(nodes), 0, config), 5, 1),
  );
  let d = startRun(newRun(nodes), 0, config);
  let journal: Journal = d.journal;
  const queue: LeafInput[] = [];
  const enqueue = () => d.effects.forEach((e) => queue.push(...factsFor(e, () => ({ kind: "success" }), 0)));
  enqueue();
  let steps = 0;
  const driveTimes: number[] = [];
  while (journal.merged < NODES / 3 && queue.length > 0) {
    const input = queue.shift()!;
    const t0 = performance.now();
    d = decide(journal, input, 1000, config);
    driveTimes.push(performance.now() - t0);
    journal = d.journal;
    enqueue();
    steps++;
  }
  record(`decide() over a run in progress (all inputs, ${steps} decisions)`, driveTimes, 1);

  // ---- ready set from scratch
  record(
    "ready-set computation from scratch",
    measure(() => readySet(journal, 1000), 200),
    5,
  );

  // ---- one decide() per input kind on this journal (pure, so the same journal serves every run)
  const { merge, finished } = midRunInputs(journal, ["may touch src/t00001.ts"]);
  const mergeDecision = decide(journal, merge, 1000, config);
  if (!mergeDecision.transitions.some((t) => t.to === "MERGED")) throw new Error("the merge input should merge the task");
  record(
    "decide() on a merge input",
    measure(() => decide(journal, merge, 1000, config), 2000),
    1,
  );
  record(
    "decide() on an agent result (with review)",
    measure(() => decide(journal, finished, 1000, config), 2000),
    1,
  );
  record(
    "decide() on a tick (stale scan)",
    measure(() => decide(journal, { kind: "tick" }, 2000, config), 2000),
    1,
  );

  // ---- scheduling quality: a 100-task plan, every agent taking exactly one minute (virtual time),
  // merges instant. Lower bound = max(critical path, work / parallelism) in minutes.
  const small = generateDag(100, 300, 7);
  const smallNodes = small.nodes.map((n) => ({ id: n.id, kind: n.type, agentType: n.agentType, dependencies: n.dependencies }));
  const makespan = simulateMakespan(smallNodes, config);
  const depth = criticalPath(smallNodes);
  const lowerBound = Math.max(depth, Math.ceil(smallNodes.length / config.max_parallel_agents));

  const bytes = Buffer.byteLength(JSON.stringify(journal));
  clearInterval(sampler);
  sample();
  if (json) {
    console.log(
      JSON.stringify(
        {
          nodes: NODES,
          edges,
          results,
          peakRssMiB: peakRss / 2 ** 20,
          journalBytes: bytes,
          makespan: { minutes: makespan, criticalPath: depth, lowerBound, ratio: makespan / lowerBound },
        },
        null,
        2,
      ),
    );
  } else {
    console.log(`Forge core benchmarks — ${NODES} nodes, ${edges} edges, Node ${process.version}`);
    console.log("");
    console.log("| measurement | median | p99 | runs | target |");
    console.log("|---|---:|---:|---:|---:|");
    for (const r of results) {
      const verdict = r.target === undefined ? "" : `≤ ${r.target} ms ${r.median <= r.target ? "✓" : "✗"}`;
      console.log(`| ${r.name} | ${r.median.toFixed(3)} ms | ${r.p99.toFixed(3)} ms | ${r.runs} | ${verdict} |`);
    }
    console.log("");
    console.log(`peak RSS: ${(peakRss / 2 ** 20).toFixed(0)} MiB · journal as JSON: ${(bytes / 2 ** 20).toFixed(2)} MiB`);
    console.log(
      `makespan of a 100-task plan (1-minute agents, ${config.max_parallel_agents} in parallel): ${makespan} min; lower bound max(critical path ${depth}, work/parallel ${Math.ceil(smallNodes.length / config.max_parallel_agents)}) = ${lowerBound} min; ratio ${(makespan / lowerBound).toFixed(2)}`,
    );
  }
} finally {
  clearInterval(sampler);
  await rm(dir, { recursive: true, force: true });
}
