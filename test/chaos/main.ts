/**
 * `npm run chaos`: every chaos scenario over several seeds, one table.
 *   npm run chaos -- --seeds 1,2,3 --scenarios clean,app-killed
 *   npm run chaos -- --latency github     # at GitHub's speed (src/local-github/latency/README.md), on a test clock
 *   npm run chaos -- --help
 * Exit 1 when any run falls short (every task MERGED, no (task, attempt) dispatched twice, no
 * invalid transition, the clean run's merged set).
 */
import { isLatencyProfileName, LATENCY_PROFILE_NAMES } from "../../src/local-github/latency/profile.js";
import { TestClock } from "../helpers/clock.js";
import { problems, runScenario, SCENARIO_TITLES, SCENARIOS, type ScenarioName, type ScenarioResult } from "./harness.js";

const HELP = `npm run chaos -- [options]

  --seeds 1,2,3          the seeds (default 1,2,3)
  --scenarios a,b        the scenarios (default all): ${SCENARIOS.join(", ")}
  --latency none|github  the local GitHub's latency (default none); github: REST, GraphQL, git,
                         webhooks and job starts as GitHub's (src/local-github/latency/README.md)
  --clock test|real      what the App and the local GitHub wait on (default: test with --latency
                         github, else real; (i) hostile is always on a test clock). A test clock
                         skips ahead whenever only timers and requests asleep at GitHub are left
  --timeout 900          seconds a run may take (real time)
  --verbose              the runs' progress on stderr
`;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

if (process.argv.includes("--help") || process.argv.includes("-h")) {
  process.stdout.write(HELP);
  process.exit(0);
}
const seeds = (arg("seeds") ?? "1,2,3").split(",").map(Number);
const scenarios = (arg("scenarios")?.split(",") ?? [...SCENARIOS]) as ScenarioName[];
for (const s of scenarios) if (!SCENARIOS.includes(s)) throw new Error(`unknown scenario ${s}; one of ${SCENARIOS.join(", ")}`);
const latency = process.argv.includes("--latency") ? arg("latency") : "none";
if (latency === undefined || !isLatencyProfileName(latency)) {
  console.error(
    `chaos: --latency ${latency === undefined ? "needs a value" : JSON.stringify(latency)}: expected ${LATENCY_PROFILE_NAMES.join(" or ")}`,
  );
  process.exit(2);
}
const clockName = process.argv.includes("--clock") ? arg("clock") : latency === "none" ? "real" : "test";
if (clockName !== "test" && clockName !== "real") {
  console.error(`chaos: --clock ${clockName === undefined ? "needs a value" : JSON.stringify(clockName)}: expected test or real`);
  process.exit(2);
}
const verbose = process.argv.includes("--verbose");
const timeoutMs = Number(arg("timeout") ?? 900) * 1000;

const rows: string[] = [];
let failed = 0;
console.log(
  `Forge chaos: a ${50}-task generated plan per seed; seeds ${seeds.join(", ")}; local GitHub latency ${latency}, ${clockName === "test" ? "on a test clock" : "in real time"}\n`,
);
const header =
  "| scenario | seed | result | wall | run's clock | dispatches | retries | App API calls | runner API calls | journal writes | faults injected |";
console.log(header);
console.log("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|");
for (const seed of seeds) {
  let clean: ScenarioResult | undefined;
  const order = scenarios.includes("clean") ? ["clean" as const, ...scenarios.filter((s) => s !== "clean")] : scenarios;
  for (const scenario of order) {
    const r = await runScenario(scenario, seed, {
      timeoutMs,
      latency,
      ...(clockName === "test" ? { clock: new TestClock() } : {}),
      log: verbose ? (l) => console.error(l) : undefined,
    });
    if (scenario === "clean") clean = r;
    const p = problems(r, clean);
    if (p.length) failed++;
    const f = r.faults;
    const injected = [
      f.api5xx && `${f.api5xx} × 5xx`,
      f.rateLimited && `${f.rateLimited} rate-limited`,
      f.webhooksDuplicated && `${f.webhooksDuplicated} hooks ×2`,
      f.webhooksReordered && `${f.webhooksReordered} reordered`,
      f.webhooksDropped && `${f.webhooksDropped} dropped`,
      f.appKills && `${f.appKills} App kills (${f.deliveriesRefused} deliveries failed)`,
      f.runnersKilled && `${f.runnersKilled} runners killed`,
      r.ci.passed + r.ci.failed && `CI ran ${r.ci.passed} passing and ${r.ci.failed} failing runs, on ${r.ci.taskBranches} task branches`,
      r.hostile &&
        `${r.hostile.rateLimited} requests refused for the rate limit, ${r.hostile.otherChecks} checks of another App, ` +
          `${r.hostile.linearMerges} single-parent merges, ${(r.clockMs / 60_000).toFixed(0)} min of the run's clock`,
    ].filter(Boolean);
    const row = `| ${SCENARIO_TITLES[scenario]} | ${seed} | ${p.length ? "FAIL" : "ok"} | ${(r.wallMs / 1000).toFixed(1)} s | ${(r.clockMs / 60_000).toFixed(1)} min | ${r.dispatches} | ${r.retries} | ${r.apiCalls.app} | ${r.apiCalls.runner} | ${r.journalWrites} | ${injected.join(", ") || "—"} |`;
    rows.push(row);
    console.log(row);
    if (scenario === "replicas")
      for (const [name, x] of Object.entries(r.replicas))
        console.log(
          `|   ↳ ${name}: ${x.deliveries} deliveries, ${x.decisions} journal writes won, ${x.casLost} compare-and-swap writes lost and decided again, ${x.takenOver} effects taken over |`,
        );
    for (const line of p) console.log(`|   ↳ ${line} |`);
  }
}
console.log(
  failed
    ? `\n${failed} run(s) fell short.`
    : "\nEvery run held: every task MERGED, no (task, attempt) dispatched twice, no invalid transition, the clean run's merged set.",
);
process.exit(failed ? 1 : 0);
