/**
 * A chaos run from the plan's push to its end: the plan pushed by a person (the scenario's faults
 * start with it), then the run's journal followed until it completes — or, in a scenario where
 * GitHub may stop it for good, until it stands still — with the App killed as the scenario plans.
 */
import { Octokit } from "@octokit/rest";
import type { Journal } from "../../src/core/journal.js";
import type { FaultConfig } from "../../src/local-github/faults.js";
import type { Sim } from "../../src/local-github/server.js";
import type { ChaosRunner } from "./runner.js";
import type { Git } from "./observe.js";
import type { ReplicaSet } from "./replicas.js";
import type { ScenarioName, ScenarioOptions } from "./harness.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The plan, pushed by a person as one commit on main; the scenario's faults start with this push
 * (dropped webhooks later, see watchRun). Returns the run's id and when the push was made.
 */
export async function pushPlan(
  sim: Sim,
  where: { owner: string; repo: string },
  files: Record<string, string>,
  planId: string,
  scenario: ScenarioName,
) {
  const { owner: OWNER, repo: REPO } = where;
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

export interface Watch {
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
  /** Tasks in the plan. */
  tasks: number;
  /**
   * Stop once no task has moved for this long on the run's clock (`now`), nothing running: a run
   * GitHub stopped for good stands still, and what it says about it is looked at then.
   */
  standStillMs?: number;
  /**
   * A person acting on a run that stands still: true when they did something (the run is followed
   * on), false when they leave it as it is (the watch ends there).
   */
  onStandStill?: (journal: Journal) => Promise<boolean>;
  /** The run's clock (ms): the test clock's when it has one. */
  now: () => number;
}

/** Follows the run's journal until it completes, stands still or the time is up, killing the App as the scenario plans. */
export async function watchRun(
  w: Watch,
): Promise<{ journal: Journal | undefined; completed: boolean; stoodStill: boolean; wallMs: number; endAt: number }> {
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
  const killPlan = Array.from({ length: kills }, () => Math.floor(2 + w.random() * (w.tasks / 2 - 2))).sort((a, b) => a - b);
  const victim = scenario === "replicas" ? Math.floor(w.random() * w.apps.names.length) : 0;
  let completed = false;
  let stoodStill = false;
  let lastLog = Date.now();
  // Where the tasks stand: their states, attempts, and what they wait for (other writes of the
  // journal — an effect tried again, a lease — do not move a run that stands still).
  const standing = (j: Journal) =>
    JSON.stringify(j.tasks.map((t) => [t.status, t.attempts, t.attempt?.revision.waiting, t.attempt?.hold, t.lastError]));
  let still = { at: journal ? standing(journal) : "", since: w.now() };
  while (journal && Date.now() - started < timeoutMs) {
    if (journal.status === "completed") {
      completed = true;
      break;
    }
    if (w.standStillMs !== undefined) {
      const at = standing(journal);
      if (at !== still.at || journal.tasks.some((t) => t.status === "RUNNING" || t.status === "DONE")) still = { at, since: w.now() };
      else if (w.now() - still.since >= w.standStillMs) {
        if (w.onStandStill && (await w.onStandStill(journal))) still = { at, since: w.now() };
        else {
          stoodStill = true;
          break;
        }
      }
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
  return { journal, completed, stoodStill, wallMs: Date.now() - started, endAt: w.now() };
}
