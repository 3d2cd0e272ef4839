/**
 * The Forge App's own CPU per task and its event-loop utilisation, with the App in a process of its
 * own — `npm start`'s entry (src/app/main.ts), configured from the environment as in production —
 * so that the local GitHub's and the runner's work (this process) is not counted as the App's.
 *
 * A generated plan (100 tasks, 300 edges, seed 7, as `npm run bench:app -- --makespan`) runs through
 * it on the local GitHub with zero-time scripted agents, `merge_policy: auto`. The App's CPU time
 * (user + system) and event-loop utilisation are read inside its process (bench/support/elu-probe.mjs)
 * when the plan is pushed and when the run has completed.
 *
 * Run: `npm run bench:app-cpu` (`BENCH_TASKS=1000` for another size; `--latency github` for GitHub's
 * latencies, with Forge's pace on as in production; without it no pacing, `FORGE_PACE=none`).
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { OWNER, REPO, startRemoteHarness } from "../test/app/helpers.js";
import { dagFiles, generateDag } from "../test/helpers/gen-plan.js";
import { isLatencyProfileName, type LatencyProfileName } from "../src/local-github/latency/profile.js";

const TASKS = Number(process.env.BENCH_TASKS ?? 100);
const i = process.argv.indexOf("--latency");
const LATENCY: LatencyProfileName =
  i >= 0 && isLatencyProfileName(process.argv[i + 1] ?? "") ? (process.argv[i + 1] as LatencyProfileName) : "none";

interface Probe {
  elu: { idle: number; active: number; utilization: number };
  cpu: { user: number; system: number };
  at: number;
}

const dir = await mkdtemp(path.join(tmpdir(), "forge-bench-cpu-"));
const probeFile = path.join(dir, "probe.json");
let child: ReturnType<typeof spawn> | undefined;

async function probe(): Promise<Probe> {
  await rm(probeFile, { force: true });
  child!.kill("SIGUSR2");
  for (let k = 0; k < 200; k++) {
    const text = await readFile(probeFile, "utf8").catch(() => "");
    if (text) return JSON.parse(text) as Probe;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("the App's process did not answer the probe");
}

const h = await startRemoteHarness(
  () => ({ kind: "success" }),
  { config: "merge_policy: auto\n", sim: { latency: { profile: LATENCY, seed: 1 } } },
  async ({ appId, privateKey, webhookSecret, apiUrl }) => {
    const main = new URL("../src/app/main.ts", import.meta.url).pathname;
    const probePath = new URL("./support/elu-probe.mjs", import.meta.url).pathname;
    child = spawn(process.execPath, ["--import", "tsx", "--import", probePath, main], {
      env: {
        ...process.env,
        APP_ID: String(appId),
        PRIVATE_KEY: privateKey,
        WEBHOOK_SECRET: webhookSecret,
        GITHUB_API_URL: apiUrl,
        PORT: "0",
        LOG_LEVEL: "warn",
        FORGE_RECONCILE_SECONDS: "60",
        FORGE_BENCH_PROBE: probeFile,
        FORGE_PACE: LATENCY === "none" ? "none" : "github",
      },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const webhookUrl = await new Promise<string>((resolve, reject) => {
      let out = "";
      child!.stdout!.on("data", (d: Buffer) => {
        out += d.toString();
        const m = /webhooks at (\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      child!.on("exit", (code) => reject(new Error(`the App exited (${code}) before listening: ${out}`)));
    });
    return {
      webhookUrl,
      close: async () => {
        child!.kill("SIGTERM");
        await new Promise((r) => child!.once("exit", r));
      },
    };
  },
);

/** The run's status from its journal on the state branch (null before it exists). */
async function runStatus(): Promise<string | null> {
  const { data: branches } = await h.user.rest.repos.listBranches({ owner: OWNER, repo: REPO, per_page: 100 });
  const state = branches.find((b) => /^forge\/[^/]+\/_state$/.test(b.name));
  if (!state) return null;
  // The branch exists a moment before its first journal.
  const { data } = await h.user.rest.repos
    .getContent({ owner: OWNER, repo: REPO, path: "journal.json", ref: state.name })
    .catch(() => ({ data: null }));
  if (!data) return null;
  return (JSON.parse(Buffer.from((data as { content: string }).content, "base64").toString("utf8")) as { journal: { status: string } })
    .journal.status;
}

try {
  const dag = generateDag(TASKS, 3 * TASKS, 7);
  const files = await dagFiles(dag);
  const load = loadavg();
  const before = await probe();
  const t0 = performance.now();
  await h.pushFiles(files, "Add the plan");
  let status: string | null = null;
  while (status !== "completed") {
    await new Promise((r) => setTimeout(r, LATENCY === "none" ? 500 : 5_000));
    status = await runStatus();
    if (performance.now() - t0 > 4 * 3_600_000) throw new Error("the run did not complete in 4 hours");
  }
  const after = await probe();
  const wallMs = performance.now() - t0;
  const cpuMs = (after.cpu.user + after.cpu.system - before.cpu.user - before.cpu.system) / 1000;
  const active = after.elu.active - before.elu.active;
  const idle = after.elu.idle - before.elu.idle;
  console.log(
    `Forge App in its own process (src/app/main.ts), ${TASKS}-task plan, zero-time agents, latency ${LATENCY}, pace ${LATENCY === "none" ? "off" : "on"}; load average ${load.map((l) => l.toFixed(2)).join(" ")} → ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
  console.log("");
  console.log("| | value |");
  console.log("|---|---:|");
  console.log(
    `| plan pushed → run completed (seen from outside, ±${LATENCY === "none" ? "0.5" : "5"} s) | ${(wallMs / 1000).toFixed(1)} s |`,
  );
  console.log(`| the App's CPU time (user + system) | ${(cpuMs / 1000).toFixed(2)} s |`);
  console.log(`| **the App's CPU per task** | **${(cpuMs / TASKS).toFixed(1)} ms** |`);
  console.log(`| **the App's event-loop utilisation** over the run | **${((100 * active) / (active + idle)).toFixed(1)} %** |`);
  console.log(`| the App's CPU share of one core over the run | ${((100 * cpuMs) / wallMs).toFixed(1)} % |`);
} finally {
  await h.close();
  await rm(dir, { recursive: true, force: true });
}
