/**
 * Harness of the App's integration tests: the local GitHub, the Forge App as a real Probot server
 * receiving signed webhooks over HTTP, a repository with the agent workflow, a scripted runner for
 * the agent's jobs and the sim runner for every other workflow (the repository's CI).
 *
 * The App and the local GitHub share one test clock (test/helpers/clock.ts): time stands still
 * unless a test moves it (`advance`), and while a test waits (`waitFor`, `whileWaiting`) it skips
 * ahead to the next timer whenever nothing else goes on — the tracker's debounce, the job-end
 * grace, a lease or a webhook's delay cost no real time.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { Octokit } from "@octokit/rest";
import type { Decision } from "../../src/core/decide/index.js";
import type { Journal } from "../../src/core/journal.js";
import { appManifestGrants } from "../../src/app/launch.js";
import { realClock, type Clock } from "../../src/core/clock.js";
import { startForgeServer, type ForgeServer, type ForgeServerOptions } from "../../src/app/server.js";
import { createSimExecutor } from "../../src/local-github/runner/sim-executor.js";
import { createSim, type Sim, type SimOptions } from "../../src/local-github/server.js";
import { appKeys } from "../local-github/support/helpers.js";
import { scriptedRunner, type Script, type ScriptedRunner } from "./scripted-runner.js";
import { settleWhen, TestClock } from "../helpers/clock.js";

export const OWNER = "acme";
export const REPO = "widgets";
export const FULL = `${OWNER}/${REPO}`;

/** The agent workflow as users install it (inputs must be declared for workflow_dispatch). */
export const AGENT_WORKFLOW = `name: Forge agent
run-name: forge \${{ inputs.run_id }}/\${{ inputs.task_id }}/\${{ inputs.attempt }}
on:
  workflow_dispatch:
    inputs:
      run_id: { description: Run, required: true, type: string }
      task_id: { description: Task, required: true, type: string }
      attempt: { description: Attempt, required: true, type: string }
      context: { description: Context for the attempt, required: false, type: string, default: "" }
permissions:
  contents: write
  pull-requests: write
jobs:
  agent:
    runs-on: ubuntu-latest
    timeout-minutes: 90
    steps:
      - run: echo "the scripted runner stands in for the Forge action"
`;

export interface Harness {
  sim: Sim;
  app: ForgeServer;
  runner: ScriptedRunner;
  user: Octokit;
  decisions: { runId: string; d: Decision }[];
  /** The App's id on the local GitHub, and its installation on the repository (changes when reinstalled). */
  appId: number;
  installationId: number;
  /** The App's private key (its journal key derives from it). */
  privateKey: string;
  /** The clock of the App and the local GitHub (a TestClock unless the harness was given another). */
  clock: Clock;
  /** Resolves with the journal once `pred` holds for a decision of `runId` (or any run), skipping ahead while the world is quiet. */
  waitFor(pred: (j: Journal) => boolean, timeoutMs?: number): Promise<Journal>;
  /** Awaits `work`, skipping ahead to the next timer whenever the App, the local GitHub and the runners are quiet. */
  whileWaiting<T>(work: Promise<T>): Promise<T>;
  /** Moves the clock `ms` ahead, the timers due firing in order, the world settling after each. */
  advance(ms: number): Promise<void>;
  /** Whether the App, the local GitHub and the runners are all quiet (nothing goes on until the clock moves). */
  quiet(): boolean;
  /** Push the files of `dir` (e.g. an example plan) under `prefix` as one commit on main, as a person. */
  pushDir(dir: string, prefix: string, message: string): Promise<string>;
  pushFiles(files: Record<string, string>, message: string): Promise<string>;
  close(): Promise<void>;
}

function walk(dir: string, base = dir): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) Object.assign(out, walk(full, base));
    else out[path.relative(base, full).split(path.sep).join("/")] = readFileSync(full, "utf8");
  }
  return out;
}

/** The Forge App registered on the local GitHub with the permissions and events of app.yml. */
function register(sim: Sim, publicKeyPem: string, webhookSecret: string) {
  return sim.control.registerApp({
    slug: "forge",
    publicKeyPem: publicKeyPem,
    webhookUrl: "http://127.0.0.1:9/unused",
    webhookSecret,
    // app.yml's permissions and events.
    ...appManifestGrants(),
  });
}

/** The repository with the agent workflow, the App installed on it, and runners for its workflows. */
async function prepare(
  sim: Sim,
  appId: number,
  webhookUrl: string,
  script: (taskId: string, attempt: number, iteration: number) => Script,
  opts: { config?: string; files?: Record<string, string>; runnerAs?: string; actionsMayCreatePullRequests?: boolean },
  clock: Clock,
) {
  sim.control.setAppWebhookUrl(appId, webhookUrl);
  await sim.control.createRepo({
    owner: OWNER,
    name: REPO,
    files: {
      "README.md": "# widgets\n",
      ".github/workflows/forge-agent.yml": AGENT_WORKFLOW,
      ...(opts.config ? { ".github/forge.yml": opts.config } : {}),
      ...(opts.files ?? {}),
    },
    collaborators: { octocat: "write", reader: "read", hubot: "write" },
    // As README.md's setup asks: the runner opens the task PRs with the job's token (GitHub's default is off).
    actionsMayCreatePullRequests: opts.actionsMayCreatePullRequests ?? true,
  });
  const installation = sim.control.install(appId, OWNER, [FULL]);
  // Agent jobs are scripted; every other run — the repository's CI — runs its steps in the sim runner.
  const others = createSimExecutor({ concurrency: 2, clock });
  const runner = scriptedRunner(script, others.handler, opts.runnerAs ? () => sim.control.userToken(opts.runnerAs!) : undefined, () =>
    clock.now(),
  );
  sim.onWorkflowDispatch(runner.handler);
  const user = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken("octocat") });

  async function pushFiles(files: Record<string, string>, message: string): Promise<string> {
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
      message,
      tree: tree.sha,
      parents: [ref.object.sha],
    });
    await user.rest.git.updateRef({ owner: OWNER, repo: REPO, ref: "heads/main", sha: commit.sha });
    return commit.sha;
  }

  return { installation, others, runner, user, pushFiles };
}

/**
 * The same world with the Forge App in a process of its own, started by `start` (given what
 * `npm start` reads from its environment): for figures of the App's own CPU, which a shared process
 * would mix with the local GitHub's and the runner's.
 */
export async function startRemoteHarness(
  script: (taskId: string, attempt: number, iteration: number) => Script,
  opts: { config?: string; sim?: SimOptions; files?: Record<string, string> },
  start: (credentials: {
    appId: number;
    privateKey: string;
    webhookSecret: string;
    apiUrl: string;
  }) => Promise<{ webhookUrl: string; close(): Promise<void> }>,
): Promise<
  Omit<Harness, "app" | "decisions" | "waitFor" | "pushDir" | "clock" | "quiet" | "whileWaiting" | "advance"> & { webhookUrl: string }
> {
  const sim = await createSim(opts.sim ?? {});
  const keys = appKeys();
  const secret = "forge-webhook-secret";
  const registered = register(sim, keys.publicKeyPem, secret);
  const app = await start({ appId: registered.id, privateKey: keys.privateKeyPem, webhookSecret: secret, apiUrl: sim.apiUrl });
  const { installation, others, runner, user, pushFiles } = await prepare(sim, registered.id, app.webhookUrl, script, opts, realClock);
  return {
    sim,
    runner,
    user,
    appId: registered.id,
    installationId: installation.id,
    privateKey: keys.privateKeyPem,
    webhookUrl: app.webhookUrl,
    pushFiles,
    async close() {
      await runner.idle();
      await app.close();
      await sim.close();
      others.dispose();
    },
  };
}

export async function startHarness(
  script: (taskId: string, attempt: number, iteration: number) => Script,
  opts: {
    config?: string;
    sim?: SimOptions;
    files?: Record<string, string>;
    /** Default: a TestClock at the real time now. Benchmarks of real speed give `realClock`. */
    clock?: Clock;
    reconcileEveryMs?: number;
    onWebhook?: ForgeServerOptions["onWebhook"];
    onRequest?: ForgeServerOptions["onRequest"];
    journalParts?: ForgeServerOptions["journalParts"];
    pace?: ForgeServerOptions["pace"];
    /** The scripted runner writes as this person (whose pushes start the repository's CI), not with the job's token. */
    runnerAs?: string;
    /** "Allow GitHub Actions to create and approve pull requests" (default on, as README.md's setup asks). */
    actionsMayCreatePullRequests?: boolean;
    /** The API base URL the App is given, from the local GitHub's (default: that one): a proxy between the two. */
    appApiUrl?: (sim: Sim) => Promise<string>;
  } = {},
): Promise<Harness> {
  const clock = opts.clock ?? new TestClock();
  const sim = await createSim({ ...opts.sim, clock });
  const keys = appKeys();
  const secret = "forge-webhook-secret";
  const decisions: Harness["decisions"] = [];
  const waiters: { pred: (j: Journal) => boolean; resolve: (j: Journal) => void }[] = [];
  const onDecision = (_repo: string, runId: string, d: Decision) => {
    decisions.push({ runId, d });
    for (const w of [...waiters])
      if (w.pred(d.journal)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(d.journal);
      }
  };
  // Register first to learn the App id, then point its webhook at the App's server.
  const registered = register(sim, keys.publicKeyPem, secret);
  const app = await startForgeServer({
    appId: registered.id,
    privateKey: keys.privateKeyPem,
    webhookSecret: secret,
    baseUrl: opts.appApiUrl ? await opts.appApiUrl(sim) : sim.apiUrl,
    port: 0,
    onDecision,
    clock,
    reconcileEveryMs: opts.reconcileEveryMs ?? 0,
    ...(opts.onWebhook ? { onWebhook: opts.onWebhook } : {}),
    ...(opts.onRequest ? { onRequest: opts.onRequest } : {}),
    ...(opts.journalParts ? { journalParts: opts.journalParts } : {}),
    ...(opts.pace !== undefined ? { pace: opts.pace } : {}),
    // Fail fast in tests: Octokit's retry waits are long for a local server.
    octokitDefaults: { retry: { retries: 3, retryAfterBaseValue: 10 }, throttle: { enabled: false } },
  });
  const { installation, others, runner, user, pushFiles } = await prepare(sim, registered.id, app.webhookUrl, script, opts, clock);
  const quiet = () => !app.forge.busy() && sim.quiet() && !runner.busy() && others.active().length === 0;
  const whileWaiting = <T>(work: Promise<T>): Promise<T> => (clock instanceof TestClock ? clock.whileWaiting(work, quiet) : work);

  return {
    sim,
    app,
    runner,
    user,
    decisions,
    appId: registered.id,
    installationId: installation.id,
    privateKey: keys.privateKeyPem,
    clock,
    quiet,
    whileWaiting,
    async advance(ms) {
      if (!(clock instanceof TestClock)) throw new Error("advance needs the harness's TestClock");
      await clock.advance(ms, settleWhen(quiet));
    },
    waitFor(pred, timeoutMs = 60_000) {
      const last = decisions[decisions.length - 1];
      if (last && pred(last.d.journal)) return Promise.resolve(last.d.journal);
      return whileWaiting(
        new Promise((resolve, reject) => {
          const timer = setTimeout(
            () =>
              reject(
                new Error(
                  `timed out; last journal: ${JSON.stringify(decisions[decisions.length - 1]?.d.journal.tasks.map((t) => [t.id, t.status, t.attempts, t.attempt?.hold]))}`,
                ),
              ),
            timeoutMs,
          );
          waiters.push({ pred, resolve: (j) => (clearTimeout(timer), resolve(j)) });
        }),
      );
    },
    pushDir(dir, prefix, message) {
      const files = Object.fromEntries(Object.entries(walk(dir)).map(([p, c]) => [`${prefix}/${p}`, c]));
      return pushFiles(files, message);
    },
    pushFiles,
    async close() {
      // The App first (it finishes its background work against a live GitHub), then the GitHub.
      await runner.idle();
      await app.close();
      await sim.close();
      others.dispose();
    },
  };
}
