/**
 * App memory with 20 concurrent runs: 20 plans merged in one commit start 20 runs at once on the
 * local GitHub (scripted runner). The App, the local GitHub and the runner share this process, so
 * the heap growth is an upper bound for the App; the App's own retained state (its cached
 * journals) is measured exactly. Run: `npm run bench:memory`.
 */
import v8 from "node:v8";
import { realClock } from "../src/core/clock.js";
import { FULL, startHarness } from "../test/app/helpers.js";
import { planFiles } from "../test/helpers/plan-files.js";

const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
const heap = () => {
  gc();
  return process.memoryUsage().heapUsed;
};

const h = await startHarness(() => ({ kind: "success" }), { config: "max_parallel_agents: 2\n", clock: realClock });
const before = heap();
let peak = before;
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 20);
const files: Record<string, string> = {};
for (let i = 1; i <= RUNS; i++) Object.assign(files, planFiles(`p${i}`, { a: [], b: ["a"], c: ["a"], d: ["b", "c"] }));
await h.pushFiles(files, `Add ${RUNS} plans`);
const completed = new Set<string>();
await new Promise<void>((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error(`only ${completed.size} runs completed`)), 900_000);
  const check = () => {
    for (const { d } of h.decisions) if (d.journal.status === "completed") completed.add(d.journal.runId);
    if (completed.size >= RUNS) {
      clearTimeout(timer);
      resolve();
    } else setTimeout(check, 200);
  };
  check();
});
clearInterval(sampler);
await h.app.forge.idle();
const rt = h.app.forge.runtimes.get(FULL)!;
let journalBytes = 0;
for (const runId of rt.runs.keys()) {
  const loaded = await rt.engine.state(runId);
  if (loaded) journalBytes += Buffer.byteLength(JSON.stringify(loaded.state));
}
const after = heap();
console.log(`${RUNS} concurrent runs (4 tasks each) on one App:`);
console.log(
  `- heap of the whole process (App + local GitHub + runner): ${(before / 2 ** 20).toFixed(1)} MiB before, peak ${(peak / 2 ** 20).toFixed(1)} MiB, ${(after / 2 ** 20).toFixed(1)} MiB after (growth at peak ${((peak - before) / 2 ** 20).toFixed(1)} MiB)`,
);
console.log(`- the App's cached run state: ${(journalBytes / 2 ** 10).toFixed(1)} KiB of JSON for ${rt.runs.size} runs`);
console.log(`- heap limit ${(v8.getHeapStatistics().heap_size_limit / 2 ** 20).toFixed(0)} MiB`);
await h.close();
process.exit(0);
