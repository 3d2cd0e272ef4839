/**
 * The App's figures, measured on the local GitHub with the scripted runner:
 *   1. GitHub API calls per task on the happy path (PENDING → MERGED), reads and writes apart, and
 *      content-creating calls: the marginal cost of a task = (calls of an N-task plan − calls of a
 *      1-task plan) / (N − 1), so the run's own calls (plan read, tracker, final PR) are not counted.
 *   2. From delivery of a `pull_request.closed` (merged by a person) to the dispatch request of the
 *      task it unblocks: wall time, and App-side time (wall time minus the time spent waiting on
 *      GitHub's answers), median and p99.
 * Run: `npm run bench:app` (add `--json` for machine-readable output).
 */
import { FULL, OWNER, REPO, startHarness } from "../test/app/helpers.js";
import { planFiles, type Spec } from "../test/helpers/plan-files.js";
import type { CallStats } from "../src/app/app.js";

const json = process.argv.includes("--json");
const N = Number(process.env.BENCH_TASKS ?? 8);
const CHAIN = Number(process.env.BENCH_CHAIN ?? 21);

const chain = (n: number): Spec => Object.fromEntries(Array.from({ length: n }, (_, i) => [`t${i + 1}`, i ? [`t${i}`] : []]));

async function callsFor(n: number): Promise<CallStats> {
  const h = await startHarness(() => ({ kind: "success" }), { config: "branch_cleanup: never\n" });
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

async function latency(n: number): Promise<{ wall: number[]; appSide: number[] }> {
  const webhooks: { name: string; action?: string; at: number }[] = [];
  const requests: { route: string; start: number; end: number }[] = [];
  const h = await startHarness(() => ({ kind: "success" }), {
    config: "merge_policy: manual\n",
    onWebhook: (w) => webhooks.push(w),
    onRequest: (r) => requests.push(r),
  });
  const wall: number[] = [];
  const appSide: number[] = [];
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
      const waited = requests
        .slice(reqMark)
        .filter((r) => r.start >= closed.at && r.start < dispatch.start)
        .reduce((sum, r) => sum + (r.end - r.start), 0);
      wall.push(dispatch.start - closed.at);
      appSide.push(dispatch.start - closed.at - waited);
    }
  } finally {
    await h.close();
  }
  return { wall, appSide };
}

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
const result = {
  perTask: { reads: per("reads"), writes: per("writes"), total: per("reads") + per("writes"), contentCreating: per("contentCreating"), byRoute: routes },
  run: { reads: one.reads, writes: one.writes, contentCreating: one.contentCreating, note: "a whole 1-task run, including the plan read, tracker and final PR" },
  mergeToDispatch: {
    samples: lat.wall.length,
    wallMedianMs: quantile(lat.wall, 0.5),
    wallP99Ms: quantile(lat.wall, 0.99),
    appSideMedianMs: quantile(lat.appSide, 0.5),
    appSideP99Ms: quantile(lat.appSide, 0.99),
  },
};
if (json) console.log(JSON.stringify(result, null, 2));
else {
  console.log(`Forge App on the local GitHub — ${N}-task and 1-task chains; ${CHAIN}-task chain merged by a person`);
  console.log("");
  console.log("| per task (happy path) | calls |");
  console.log("|---|---:|");
  console.log(`| reads | ${result.perTask.reads.toFixed(2)} |`);
  console.log(`| writes | ${result.perTask.writes.toFixed(2)} |`);
  console.log(`| total (target ≤ 10) | ${result.perTask.total.toFixed(2)} |`);
  console.log(`| content-creating (target ≤ 4) | ${result.perTask.contentCreating.toFixed(2)} |`);
  console.log("");
  for (const [r, v] of Object.entries(routes)) console.log(`- ${r}: ${v.toFixed(2)}`);
  console.log("");
  console.log(`| pull_request.closed → next dispatch (${lat.wall.length} samples) | median | p99 |`);
  console.log("|---|---:|---:|");
  console.log(`| wall time | ${result.mergeToDispatch.wallMedianMs.toFixed(1)} ms | ${result.mergeToDispatch.wallP99Ms.toFixed(1)} ms |`);
  console.log(`| App-side time (target ≤ 50 / ≤ 250 ms) | ${result.mergeToDispatch.appSideMedianMs.toFixed(1)} ms | ${result.mergeToDispatch.appSideP99Ms.toFixed(1)} ms |`);
}
process.exit(0);
