/**
 * Chaos harness: one generated 50-task plan (seeded, with refineries) run by the Forge App — a real
 * Probot server receiving signed webhooks — on the local GitHub with the chaos runner, under one
 * scenario of faults. The reconciler runs on a short timer, as in a long-lived server.
 *
 * What is observed comes from GitHub's side where it can: the journal and the integration branch
 * are read from the repository's git directory (no API call, so no injected fault), the dispatches
 * from the runner's log, the transitions from every decision the App persisted.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { Octokit } from "@octokit/rest";
import type { Decision } from "../../src/core/decide/index.js";
import type { Journal } from "../../src/core/journal.js";
import { JOURNAL_FILE, stateBranch } from "../../src/core/layout.js";
import type { TaskStatus } from "../../src/core/schemas/common.js";
import { isValidTransition } from "../../src/core/state-machine.js";
import { AGENT_WORKFLOW } from "../app/helpers.js";
import { generateDag, prng, writePlan } from "../helpers/gen-plan.js";
import type { FaultConfig } from "../../src/local-github/faults.js";
import type { LatencyProfileName } from "../../src/local-github/latency/profile.js";
import { createSimExecutor } from "../../src/local-github/runner/sim-executor.js";
import { createSim, type Sim } from "../../src/local-github/server.js";
import { appKeys } from "../local-github/support/helpers.js";
import type { TestClock } from "../helpers/clock.js";
import { chaosRunner, type ChaosRunner } from "./runner.js";
import { startNetwork, type WebhookNetwork } from "./network.js";
import { ciRuns, duplicateObjects, endState, journalHistory, type Git } from "./observe.js";
import { startReplicas, type ReplicaSet } from "./replicas.js";

const run = promisify(execFile);
const OWNER = "acme";
const REPO = "widgets";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const SCENARIOS = ["clean", "duplicated", "api-faults", "dropped", "app-killed", "runners-killed", "replicas", "ci"] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export const SCENARIO_TITLES: Record<ScenarioName, string> = {
  clean: "(a) clean",
  duplicated: "(b) every webhook twice, 20 % reordered",
  "api-faults": "(c) 10 % API 5xx, 3 % rate-limited",
  dropped: "(d) 5 % of webhooks dropped",
  "app-killed": "(e) App killed 3 times",
  "runners-killed": "(f) 2 runners killed mid-job",
  replicas: "(g) 2 replicas, one killed twice",
  ci: "(h) the repository's CI on every push and PR, passing and failing",
};

/**
 * (h)'s CI, as a repository has one: on every push (but the journal's writes) and pull request, task
 * branches included; it passes or fails by the commit (about half of each), in the sim runner.
 */
const CI_WORKFLOW = `name: CI
on:
  push:
    branches-ignore: ["forge/*/_state"]
  pull_request:
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: |
          case "$GITHUB_SHA" in
            [0-7]*) echo "tests pass" ;;
            *) echo "tests fail"; exit 1 ;;
          esac
`;

export const TASKS = 50;
export const EDGES = 75;

export interface ScenarioOptions {
  /** Reconciler period (ms). */
  reconcileEveryMs?: number;
  /** Give up after this long (ms). */
  timeoutMs?: number;
  log?: (line: string) => void;
  /** Tasks in the plan (default 50; at least two refineries from 20 up). */
  tasks?: number;
  /** The local GitHub's latency profile (default "none"), seeded by the scenario's seed. */
  latency?: LatencyProfileName;
  /**
   * Lose the answer of this App request after GitHub carried it out (the App sees a 502): a fault
   * of the network between the App and GitHub that the local GitHub cannot inject itself.
   */
  loseAnswer?: (method: string, url: string) => boolean;
  /**
   * Answer this App request with an error instead of GitHub (nothing is carried out): for answers
   * GitHub gives in races the local GitHub makes only by chance, such as a merge's 405 "Base branch
   * was modified".
   */
  refuse?: (method: string, url: string) => { status: number; message: string } | undefined;
  /**
   * The clock of the App and the local GitHub (real time by default). With a test clock the run
   * skips ahead whenever the Apps, the local GitHub, the runner and the network are all quiet: the
   * App's timers (a merge tried again, the reconciler) cost no real time.
   */
  clock?: TestClock;
}

export interface ScenarioResult {
  scenario: ScenarioName;
  seed: number;
  planId: string;
  runId: string;
  wallMs: number;
  completed: boolean;
  /** Final status of every task, from the journal on GitHub. */
  statuses: Record<string, TaskStatus>;
  merged: string[];
  /** Files under src/ on the integration branch at the end (one per merged task). */
  integrationFiles: string[];
  dispatches: number;
  duplicateDispatches: string[];
  /** Attempts beyond the first, over all tasks. */
  retries: number;
  decisions: number;
  invalidTransitions: string[];
  /** Consecutive journal versions on the state branch whose task changes no valid path explains. */
  invalidHistory: string[];
  journalWrites: number;
  apiCalls: { app: number; runner: number };
  faults: {
    answersLost: number;
    api5xx: number;
    rateLimited: number;
    webhooksDuplicated: number;
    webhooksDropped: number;
    webhooksReordered: number;
    deliveriesRefused: number;
    appKills: number;
    runnersKilled: number;
  };
  /** Runs of the repository's CI (scenario h): passed, failed, and how many task branches they ran on. */
  ci: { passed: number; failed: number; taskBranches: number };
  violations: number;
  violationDetails: string[];
  /** GitHub objects the App made more than once where one was meant: tracker issues, check runs per attempt, final PRs. */
  duplicateObjects: string[];
  /** Per replica (by name): deliveries it received, journal writes it won, compare-and-swap writes it lost, effects it took over. */
  replicas: Record<string, { deliveries: number; decisions: number; casLost: number; takenOver: number }>;
}

/** The plan of a seed: 50 tasks, at least two refineries (the DAG seed moves on until it has them). */
export async function planFor(seed: number, tasks = TASKS): Promise<{ planId: string; files: Record<string, string>; refineries: number }> {
  for (let s = seed; ; s++) {
    const dag = generateDag(tasks, Math.round((tasks * EDGES) / TASKS), s);
    const refineries = dag.nodes.filter((n) => n.type === "refinery").length;
    if (tasks >= 20 && refineries < 2) continue;
    const dir = await mkdtemp(path.join(tmpdir(), "forge-chaos-plan-"));
    try {
      const planDir = await writePlan(dir, dag);
      const files: Record<string, string> = {};
      const walk = async (d: string): Promise<void> => {
        for (const name of await readdir(d)) {
          const full = path.join(d, name);
          if ((await stat(full)).isDirectory()) await walk(full);
          else files[`.forge/plans/${dag.planId}/${path.relative(planDir, full).split(path.sep).join("/")}`] = await readFile(full, "utf8");
        }
      };
      await walk(planDir);
      return { planId: dag.planId, files, refineries };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}

const CONFIG = ["max_parallel_agents: 8", "retry_backoff: { base_seconds: 0.2, max_seconds: 1 }", ""].join("\n");

export async function runScenario(scenario: ScenarioName, seed: number, options: ScenarioOptions = {}): Promise<ScenarioResult> {
  const log = options.log ?? (() => {});
  const random = prng(seed * 7919 + SCENARIOS.indexOf(scenario));
  const plan = await planFor(seed, options.tasks);
  const clock = options.clock;
  const sim: Sim = await createSim({
    faults: { seed },
    latency: { profile: options.latency ?? "none", seed },
    ...(clock ? { clock } : {}),
  });
  const keys = appKeys();
  const secret = "forge-chaos-secret";
  const decisions: { runId: string; d: Decision }[] = [];
  const network: WebhookNetwork = await startNetwork({ seed, reorderRate: scenario === "duplicated" ? 0.2 : 0, holdMs: [50, 400] });
  const registered = sim.control.registerApp({
    slug: "forge",
    publicKeyPem: keys.publicKeyPem,
    webhookUrl: network.url,
    webhookSecret: secret,
    permissions: {
      contents: "write",
      pull_requests: "write",
      issues: "write",
      checks: "write",
      actions: "write",
      statuses: "read",
      metadata: "read",
    },
    events: ["push", "pull_request", "issues", "issue_comment", "check_run", "check_suite", "workflow_run", "workflow_job"],
  });
  // Runners killed mid-job: two dispatches drawn among the first forty.
  const killAt = new Set<number>();
  if (scenario === "runners-killed") while (killAt.size < 2) killAt.add(3 + Math.floor(random() * 37));
  // (h): the repository's CI runs its steps in the sim runner.
  const ciExecutor = scenario === "ci" ? createSimExecutor({ concurrency: 4 }) : undefined;
  const runner: ChaosRunner = chaosRunner({
    killAt,
    onError: (a, e) => log(`  ${scenario}: job ${a} failed: ${e.message}`),
    ...(ciExecutor ? { others: ciExecutor.handler } : {}),
  });
  sim.onWorkflowDispatch(runner.handler);
  // (g): two Apps behind the one webhook URL; every other scenario has one.
  const apps = await startReplicas({
    scenario,
    sim,
    appId: registered.id,
    keys,
    webhookSecret: secret,
    network,
    repo: `${OWNER}/${REPO}`,
    options,
    log,
    onDecision: (runId, d) => decisions.push({ runId, d }),
  });

  await sim.control.createRepo({
    owner: OWNER,
    name: REPO,
    files: {
      "README.md": "# widgets\n",
      ".github/workflows/forge-agent.yml": AGENT_WORKFLOW,
      ".github/forge.yml": CONFIG,
      ...(scenario === "ci" ? { ".github/workflows/ci.yml": CI_WORKFLOW } : {}),
    },
    collaborators: { octocat: "write" },
  });
  sim.control.install(registered.id, OWNER, [`${OWNER}/${REPO}`]);
  const { id: repoId, gitDir } = sim.core.state.repoByName(OWNER, REPO)!;
  const git: Git = async (...args) => (await run("git", ["--git-dir", gitDir, ...args], { maxBuffer: 64 << 20 })).stdout;

  const { runId, started } = await pushPlan(sim, plan.files, plan.planId, scenario);
  const readJournal = async (): Promise<Journal | undefined> => {
    try {
      return (JSON.parse(await git("show", `refs/heads/${stateBranch(runId)}:${JOURNAL_FILE}`)) as { journal: Journal }).journal;
    } catch {
      return undefined;
    }
  };
  const watching = watchRun({ scenario, seed, sim, runId, started, readJournal, git, random, apps, runner, log, options });
  const quiet = () => !apps.busy() && sim.quiet() && !runner.busy() && !network.busy();
  const watched = await (clock ? clock.whileWaiting(watching, quiet) : watching);
  // Let the last effects (final PR, tracker) and jobs settle before looking.
  await sleep(300);
  await apps.idle();
  await runner.idle();
  // (h): the CI's last runs (on the final PR, the integration branch) end too.
  const ciBusy = () => [...sim.core.state.runs.values()].some((r) => r.path === ".github/workflows/ci.yml" && r.status !== "completed");
  for (let i = 0; ciExecutor && i < 300 && ciBusy(); i++) await sleep(100);
  await network.idle();
  await sim.idle();
  const journal = (await readJournal()) ?? watched.journal;

  const seen = new Set<string>();
  const faultLog = sim.core.faults.log;
  const result: ScenarioResult = {
    scenario,
    seed,
    planId: plan.planId,
    runId,
    wallMs: watched.wallMs,
    completed: watched.completed,
    ...(await endState(git, journal)),
    dispatches: runner.dispatched.length,
    duplicateDispatches: runner.dispatched.filter((d) => (seen.has(d) ? true : (seen.add(d), false))),
    retries: (journal?.tasks ?? []).reduce((n, t) => n + Math.max(0, t.attempts - 1), 0),
    decisions: decisions.length,
    invalidTransitions: decisions.flatMap(({ d }) =>
      d.transitions.filter((t) => !isValidTransition(t.from, t.to)).map((t) => `${t.taskId}#${t.attempt} ${t.from} → ${t.to}`),
    ),
    ...(await journalHistory(git, runId)),
    apiCalls: { app: apps.calls.total, runner: runner.calls.total },
    faults: {
      answersLost: apps.calls.answersLost,
      api5xx: faultLog.filter((l) => /^api \S+ 5\d\d$/.test(l)).length,
      rateLimited: faultLog.filter((l) => /^api \S+ (403|429)$/.test(l)).length,
      webhooksDuplicated: faultLog.filter((l) => /^hook .* x2 /.test(l)).length,
      webhooksDropped: faultLog.filter((l) => /^hook .* x0 /.test(l)).length,
      webhooksReordered: network.stats.reordered,
      deliveriesRefused: network.stats.refused,
      appKills: apps.kills,
      runnersKilled: runner.killed.length,
    },
    ci: ciRuns(sim, repoId, runId, journal),
    violations: sim.violations.length,
    violationDetails: sim.violations.slice(0, 5).map((v) => `${v.kind} ${v.id}: ${v.errors.slice(0, 300)}`),
    duplicateObjects: duplicateObjects(sim, repoId, registered.id, journal),
    replicas: apps.perReplica,
  };
  await apps.close();
  await network.close();
  await sim.close();
  ciExecutor?.dispose();
  return result;
}

/**
 * The plan, pushed by a person as one commit on main; the scenario's faults start with this push
 * (dropped webhooks later, see watchRun). Returns the run's id and when the push was made.
 */
async function pushPlan(sim: Sim, files: Record<string, string>, planId: string, scenario: ScenarioName) {
  const user = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken("octocat") });
  const { data: ref } = await user.rest.git.getRef({ owner: OWNER, repo: REPO, ref: "heads/main" });
  const { data: parent } = await user.rest.git.getCommit({ owner: OWNER, repo: REPO, commit_sha: ref.object.sha });
  const { data: tree } = await user.rest.git.createTree({
    owner: OWNER,
    repo: REPO,
    base_tree: parent.tree.sha,
    tree: Object.entries(files).map(([p, content]) => ({ path: p, mode: "100644" as const, type: "blob" as const, content })),
  });
  const { data: commit } = await user.rest.git.createCommit({
    owner: OWNER,
    repo: REPO,
    message: "Add the plan",
    tree: tree.sha,
    parents: [ref.object.sha],
  });
  const started = Date.now();
  const faults: Partial<FaultConfig> = {};
  if (scenario === "duplicated") faults.webhookDuplicateRate = 1;
  if (scenario === "api-faults") Object.assign(faults, { apiErrorRate: 0.1, rateLimitRate: 0.03, retryAfterSeconds: 1 });
  // Faults start with the push that starts the run — except dropped webhooks, which start once the
  // run exists: a lost push of the plan is a run nobody asked for yet (`/forge run` starts it).
  if (Object.keys(faults).length) sim.control.faults(faults);
  // The person's push meets the faults too: like git, they try again after a 5xx or a rate limit.
  for (let attempt = 1; ; attempt++) {
    try {
      await user.rest.git.updateRef({ owner: OWNER, repo: REPO, ref: "heads/main", sha: commit.sha });
      break;
    } catch (e) {
      const status = (e as { status?: number }).status ?? 0;
      if (attempt >= 5 || !(status >= 500 || status === 403 || status === 429)) throw e;
      await sleep(1_000);
    }
  }
  return { runId: `${planId}-${commit.sha.slice(0, 7)}`, started };
}

interface Watch {
  scenario: ScenarioName;
  seed: number;
  sim: Sim;
  runId: string;
  started: number;
  readJournal: () => Promise<Journal | undefined>;
  git: Git;
  random: () => number;
  apps: ReplicaSet;
  runner: ChaosRunner;
  log: (line: string) => void;
  options: ScenarioOptions;
}

/** Follows the run's journal until it completes or the time is up, killing the App as the scenario plans. */
async function watchRun(w: Watch): Promise<{ journal: Journal | undefined; completed: boolean; wallMs: number }> {
  const { scenario, started, log } = w;
  const timeoutMs = w.options.timeoutMs ?? 900_000;
  let journal: Journal | undefined;
  while (!(journal = await w.readJournal())) {
    if (Date.now() - started > 60_000) {
      const refs = (await w.git("for-each-ref", "--format=%(refname)")).split("\n").slice(0, 10).join(" ");
      log(`  ${scenario}: no journal for ${w.runId}; refs: ${refs}`);
      break;
    }
    await sleep(100);
  }
  if (scenario === "dropped") w.sim.control.faults({ webhookDropRate: 0.05 });

  // The App is killed three times at random moments (in (g) one of the two replicas, twice): each
  // time a random share of the tasks has merged, after a random delay. The shares are drawn from the
  // first half of the plan: a kill and its restart take up to two seconds, and on an idle machine the
  // run merges several tasks a second, so a kill planned near the end could find the run completed.
  const kills = scenario === "app-killed" ? 3 : scenario === "replicas" ? 2 : 0;
  const killPlan = Array.from({ length: kills }, () => Math.floor(2 + w.random() * (TASKS / 2 - 2))).sort((a, b) => a - b);
  const victim = scenario === "replicas" ? Math.floor(w.random() * w.apps.names.length) : 0;
  let completed = false;
  let lastLog = Date.now();
  while (journal && Date.now() - started < timeoutMs) {
    if (journal.status === "completed") {
      completed = true;
      break;
    }
    if (killPlan.length && journal.merged >= killPlan[0]!) {
      killPlan.shift();
      await sleep(Math.floor(w.random() * 400));
      await w.apps.kill(victim, 200 + Math.floor(w.random() * 1300));
    }
    await sleep(250);
    journal = (await w.readJournal()) ?? journal;
    if (Date.now() - lastLog > 5_000) {
      lastLog = Date.now();
      const count: Record<string, number> = {};
      for (const t of journal.tasks) count[t.status] = (count[t.status] ?? 0) + 1;
      const secs = ((Date.now() - started) / 1000).toFixed(0);
      log(`  ${scenario} seed ${w.seed}: ${secs} s ${JSON.stringify(count)} dispatches ${w.runner.dispatched.length}`);
    }
  }
  return { journal, completed, wallMs: Date.now() - started };
}

/** Why a scenario's result falls short of the chaos properties, compared with the clean run (none = it holds). */
export function problems(r: ScenarioResult, clean?: ScenarioResult): string[] {
  const out: string[] = [];
  if (!r.completed)
    out.push(`the run did not complete in time (${Object.values(r.statuses).filter((s) => s === "MERGED").length}/${TASKS} merged)`);
  const notMerged = Object.entries(r.statuses).filter(([, s]) => s !== "MERGED");
  if (notMerged.length) out.push(`not merged: ${notMerged.map(([id, s]) => `${id} ${s}`).join(", ")}`);
  if (r.duplicateDispatches.length) out.push(`dispatched twice: ${r.duplicateDispatches.join(", ")}`);
  if (r.invalidTransitions.length) out.push(`invalid transitions: ${r.invalidTransitions.join(", ")}`);
  if (r.invalidHistory.length) out.push(`invalid journal history: ${r.invalidHistory.slice(0, 5).join(", ")}`);
  if (clean) {
    if (r.merged.join() !== clean.merged.join()) out.push(`merged set differs from the clean run's`);
    if (r.integrationFiles.join() !== clean.integrationFiles.join()) out.push(`integration branch files differ from the clean run's`);
  }
  if (r.duplicateObjects.length) out.push(`made twice: ${r.duplicateObjects.join(", ")}`);
  if (r.violations) out.push(`${r.violations} schema violations on the local GitHub: ${r.violationDetails.join(" | ")}`);
  // (h) injects no fault: a retried attempt there is one the CI's runs were taken for.
  if (r.scenario === "ci" && r.retries)
    out.push(`${r.retries} attempts retried although no job failed: CI runs were taken for agents' jobs`);
  return out;
}
