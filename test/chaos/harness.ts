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
import type { Decision } from "../../src/core/decide/index.js";
import type { Journal } from "../../src/core/journal.js";
import { JOURNAL_FILE, stateBranch } from "../../src/core/layout.js";
import type { TaskStatus } from "../../src/core/schemas/common.js";
import { isValidTransition } from "../../src/core/state-machine.js";
import { AGENT_WORKFLOW } from "../app/helpers.js";
import { generateDag, prng, writePlan } from "../helpers/gen-plan.js";
import type { LatencyProfileName } from "../../src/local-github/latency/profile.js";
import { createSimExecutor } from "../../src/local-github/runner/sim-executor.js";
import { createSim, type Sim } from "../../src/local-github/server.js";
import { appKeys } from "../local-github/support/helpers.js";
import { TestClock } from "../helpers/clock.js";
import { chaosRunner, type ChaosRunner } from "./runner.js";
import { startNetwork, type WebhookNetwork } from "./network.js";
import { ciRuns, duplicateObjects, endState, journalHistory, type Git, type TaskView } from "./observe.js";
import { startReplicas, type ReplicaSet } from "./replicas.js";
import {
  HOSTILE_CONFIG_LINES,
  HOSTILE_RATE_LIMITS,
  hostileFacts,
  hostileLatency,
  hostileRepository,
  REVIEWER,
  reviewFinalPr,
  bypassAndRetry,
  type HostileFacts,
  type HostileRepository,
} from "./hostile.js";
import { pushPlan, watchRun } from "./watch.js";

const run = promisify(execFile);
const OWNER = "acme";
const REPO = "widgets";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const SCENARIOS = [
  "clean",
  "duplicated",
  "api-faults",
  "dropped",
  "app-killed",
  "runners-killed",
  "replicas",
  "ci",
  "hostile",
] as const;
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
  // GAP(org-rulesets), GAP(signatures): say so here until the local GitHub enforces them (hostile.ts).
  hostile:
    "(i) hostile repository: linear history on every branch but refineries' (signatures required, not yet enforced), another App's required check, reviews and strict on main, 20 writes/min, webhook tails to 160 s",
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
  /** How long the run took on its clock (the test clock's, skipped time included; else real time). */
  clockMs: number;
  completed: boolean;
  /** The run stood still before it completed (scenario i: GitHub stopped it for good). */
  stoodStill: boolean;
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
  /** Tasks that stayed in one state longer than five minutes of the run's clock with no reason on the tracker (observe.ts). */
  silentWaits: string[];
  /** Every task as the tracker of the last journal version shows it, with the reason it gives. */
  lastView: TaskView[];
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
  /** (i): what the hostile repository's rules and limits did. */
  hostile?: HostileFacts;
}

/** The plan of a seed: 50 tasks, at least two refineries (the DAG seed moves on until it has them). */
export async function planFor(
  seed: number,
  tasks = TASKS,
): Promise<{ planId: string; files: Record<string, string>; refineries: number; refineryIds: string[] }> {
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
      const refineryIds = dag.nodes.filter((n) => n.type === "refinery").map((n) => n.id);
      return { planId: dag.planId, files, refineries, refineryIds };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}

const CONFIG = ["max_parallel_agents: 8", "retry_backoff: { base_seconds: 0.2, max_seconds: 1 }"];

/** What a scenario runs on: the local GitHub, the webhook network, the Forge App(s), the runner, the repository. */
interface World {
  sim: Sim;
  network: WebhookNetwork;
  appId: number;
  runner: ChaosRunner;
  apps: ReplicaSet;
  ciExecutor: ReturnType<typeof createSimExecutor> | undefined;
  /** (i): the hostile repository's rules and the other App reporting its check. */
  hostile: HostileRepository | undefined;
  repoId: number;
  git: Git;
  decisions: { runId: string; d: Decision }[];
}

/** The local GitHub with the App registered and installed, the runner, and the repository as the scenario wants it. */
async function startWorld(
  scenario: ScenarioName,
  seed: number,
  options: ScenarioOptions,
  random: () => number,
  refineries: readonly string[],
): Promise<World> {
  const log = options.log ?? (() => {});
  const clock = options.clock;
  const hostile = scenario === "hostile";
  const sim: Sim = await createSim({
    faults: { seed },
    latency: hostile ? hostileLatency(seed) : { profile: options.latency ?? "none", seed },
    ...(hostile ? { rateLimits: HOSTILE_RATE_LIMITS } : {}),
    ...(clock ? { clock } : {}),
  });
  const keys = appKeys();
  const secret = "forge-chaos-secret";
  const decisions: World["decisions"] = [];
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
    // (i): the runner's commits are unsigned, as the Action's pushes are.
    unsigned: () => hostile,
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
  // (i): the repository belongs to an organisation; octocat administers it, a reviewer may write.
  if (hostile) sim.control.createUser(OWNER, "Organization");
  await sim.control.createRepo({
    owner: OWNER,
    name: REPO,
    files: {
      "README.md": "# widgets\n",
      ".github/workflows/forge-agent.yml": AGENT_WORKFLOW,
      ".github/forge.yml": [...CONFIG, ...(hostile ? HOSTILE_CONFIG_LINES : []), ""].join("\n"),
      ...(scenario === "ci" ? { ".github/workflows/ci.yml": CI_WORKFLOW } : {}),
    },
    collaborators: hostile ? { octocat: "admin", [REVIEWER]: "write" } : { octocat: "write" },
  });
  sim.control.install(registered.id, OWNER, [`${OWNER}/${REPO}`]);
  const { id: repoId, gitDir } = sim.core.state.repoByName(OWNER, REPO)!;
  const git: Git = async (...args) => (await run("git", ["--git-dir", gitDir, ...args], { maxBuffer: 64 << 20 })).stdout;
  const rules = hostile && clock ? await hostileRepository(sim, OWNER, REPO, clock, seed, refineries) : undefined;
  return { sim, network, appId: registered.id, runner, apps, ciExecutor, hostile: rules, repoId, git, decisions };
}

/** Let the last effects (final PR, tracker), jobs and deliveries settle before looking. */
async function settle(w: World): Promise<void> {
  await sleep(300);
  await w.apps.idle();
  await w.runner.idle();
  // (h): the CI's last runs (on the final PR, the integration branch) end too.
  const ciBusy = () => [...w.sim.core.state.runs.values()].some((r) => r.path === ".github/workflows/ci.yml" && r.status !== "completed");
  for (let i = 0; w.ciExecutor && i < 300 && ciBusy(); i++) await sleep(100);
  await w.network.idle();
  await w.sim.idle();
}

export async function runScenario(scenario: ScenarioName, seed: number, options: ScenarioOptions = {}): Promise<ScenarioResult> {
  const log = options.log ?? (() => {});
  const random = prng(seed * 7919 + SCENARIOS.indexOf(scenario));
  const plan = await planFor(seed, options.tasks);
  // (i) runs on a test clock of its own: minutes of webhook tails and rate-limit windows cost no real time.
  const clock = options.clock ?? (scenario === "hostile" ? new TestClock() : undefined);
  const w = await startWorld(scenario, seed, { ...options, ...(clock ? { clock } : {}) }, random, plan.refineryIds);
  const { sim, git, runner, apps } = w;
  const { runId, started } = await pushPlan(sim, { owner: OWNER, repo: REPO }, plan.files, plan.planId, scenario);
  const readJournal = async (): Promise<Journal | undefined> => {
    try {
      return (JSON.parse(await git("show", `refs/heads/${stateBranch(runId)}:${JOURNAL_FILE}`)) as { journal: Journal }).journal;
    } catch {
      return undefined;
    }
  };
  const now = () => clock?.now() ?? Date.now();
  const clockStart = now();
  const quiet = () => !apps.busy() && sim.quiet() && !runner.busy() && !w.network.busy() && !w.hostile?.busy();
  // With a test clock, whatever waits for the App, GitHub or the runner skips ahead while they are quiet.
  const onClock = <T>(work: Promise<T>): Promise<T> => (clock ? clock.whileWaiting(work, quiet) : work);
  const watched = await onClock(
    watchRun({
      ...{ scenario, seed, sim, runId, started, readJournal, git, random, apps, runner, log, options, now },
      tasks: options.tasks ?? TASKS,
      // (i): a run that stood still for 20 minutes is looked at by the administrator: a task GitHub
      // stopped for its unsigned commits is tried again once they lift the rule for the jobs; else the watch ends.
      ...(w.hostile
        ? { standStillMs: 20 * 60_000, onStandStill: (j: Journal) => bypassAndRetry(sim, OWNER, REPO, j, w.hostile!.unblocking) }
        : {}),
    }),
  );
  await onClock(settle(w));
  // (i): a person reviews the final PR and merges it, as the default branch's rules allow.
  const finalPr =
    w.hostile && watched.journal && watched.completed ? await onClock(reviewFinalPr(sim, OWNER, REPO, watched.journal)) : undefined;
  if (finalPr) await onClock(settle(w));
  const journal = (await readJournal()) ?? watched.journal;
  const result = await collect(scenario, seed, w, { planId: plan.planId, runId, watched, journal, endAt: now() });
  result.clockMs = now() - clockStart;
  if (w.hostile)
    result.hostile = { ...(await hostileFacts(sim, git, w.repoId, journal, w.appId, w.hostile)), ...(finalPr ? { finalPr } : {}) };
  w.hostile?.stop();
  await apps.close();
  await w.network.close();
  await sim.close();
  w.ciExecutor?.dispose();
  return result;
}

/** The scenario's result, read from GitHub's side where it can be. */
async function collect(
  scenario: ScenarioName,
  seed: number,
  w: World,
  run: {
    planId: string;
    runId: string;
    watched: { completed: boolean; stoodStill: boolean; wallMs: number };
    journal: Journal | undefined;
    endAt: number;
  },
): Promise<ScenarioResult> {
  const { sim, runner, apps, git, journal } = { ...w, journal: run.journal };
  const seen = new Set<string>();
  const faultLog = sim.core.faults.log;
  return {
    scenario,
    seed,
    planId: run.planId,
    runId: run.runId,
    wallMs: run.watched.wallMs,
    clockMs: 0,
    completed: run.watched.completed,
    stoodStill: run.watched.stoodStill,
    ...(await endState(git, journal)),
    dispatches: runner.dispatched.length,
    duplicateDispatches: runner.dispatched.filter((d) => (seen.has(d) ? true : (seen.add(d), false))),
    retries: (journal?.tasks ?? []).reduce((n, t) => n + Math.max(0, t.attempts - 1), 0),
    decisions: w.decisions.length,
    invalidTransitions: w.decisions.flatMap(({ d }) =>
      d.transitions.filter((t) => !isValidTransition(t.from, t.to)).map((t) => `${t.taskId}#${t.attempt} ${t.from} → ${t.to}`),
    ),
    ...(await journalHistory(git, run.runId, { owner: OWNER, repo: REPO, webUrl: "https://github.com" }, run.endAt)),
    apiCalls: { app: apps.calls.total, runner: runner.calls.total },
    faults: {
      answersLost: apps.calls.answersLost,
      api5xx: faultLog.filter((l) => /^api \S+ 5\d\d$/.test(l)).length,
      rateLimited: faultLog.filter((l) => /^api \S+ (403|429)$/.test(l)).length,
      webhooksDuplicated: faultLog.filter((l) => /^hook .* x2 /.test(l)).length,
      webhooksDropped: faultLog.filter((l) => /^hook .* x0 /.test(l)).length,
      webhooksReordered: w.network.stats.reordered,
      deliveriesRefused: w.network.stats.refused,
      appKills: apps.kills,
      runnersKilled: runner.killed.length,
    },
    ci: ciRuns(sim, w.repoId, run.runId, journal),
    violations: sim.violations.length,
    violationDetails: sim.violations.slice(0, 5).map((v) => `${v.kind} ${v.id}: ${v.errors.slice(0, 300)}`),
    duplicateObjects: duplicateObjects(sim, w.repoId, w.appId, journal),
    replicas: apps.perReplica,
  };
}

/** Why a scenario's result falls short of the chaos properties, compared with the clean run (none = it holds). */
export function problems(r: ScenarioResult, clean?: ScenarioResult): string[] {
  const out: string[] = [];
  const merged = Object.values(r.statuses).filter((s) => s === "MERGED").length;
  // (i) may be stopped for good by GitHub: the plan completes, or every task not merged says why on
  // the tracker, and the run stands still (nothing is left running or about to be tried).
  const mayStop = r.scenario === "hostile" && r.stoodStill;
  if (!r.completed && !mayStop) out.push(`the run did not complete in time (${merged}/${TASKS} merged)`);
  const notMerged = Object.entries(r.statuses).filter(([, s]) => s !== "MERGED");
  if (notMerged.length && !mayStop) out.push(`not merged: ${notMerged.map(([id, s]) => `${id} ${s}`).join(", ")}`);
  const unexplained = r.lastView.filter((t) => t.reason === undefined);
  if (mayStop && unexplained.length)
    out.push(`stopped with no reason on the tracker for ${unexplained.map((t) => `${t.id} ${t.status}`).join(", ")}`);
  if (r.silentWaits.length) out.push(`waited without a reason on the tracker: ${r.silentWaits.slice(0, 5).join("; ")}`);
  if (r.duplicateDispatches.length) out.push(`dispatched twice: ${r.duplicateDispatches.join(", ")}`);
  if (r.invalidTransitions.length) out.push(`invalid transitions: ${r.invalidTransitions.join(", ")}`);
  if (r.invalidHistory.length) out.push(`invalid journal history: ${r.invalidHistory.slice(0, 5).join(", ")}`);
  if (clean && r.completed) {
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
