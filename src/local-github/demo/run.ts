/**
 * `forge demo`, the whole of Forge in one process and a minute or two: the local GitHub (src/local-github), the
 * Forge App as a real Probot server receiving signed webhooks over HTTP, and the sim runner
 * executing the agent workflow from templates/workflows/forge-agent.yml with the real Forge action
 * from action/ (the scripted agent, or the real Claude Code CLI against the scripted model server).
 * A person (`octocat`) commits the plan; the App starts the run; the demo watches the App's
 * decisions, prints a line per state change, merges the Captain's overlay PR as a reviewer would,
 * and when the run is over checks the result, runs the project's tests on the integration branch
 * and writes an HTML report.
 *
 * Every job is the real action: tasks, refineries, follow-ups and the Captain (`_captain-<crId>`,
 * action/src/captain.ts), whose agent writes the plan folder's next overlay (the scripted agent reads
 * it from `--plan <dir>`, the Claude Code path gets it from the scripted model server) and whose job
 * validates it, commits it on the Captain's branch and opens the overlay PR that the person merges.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Octokit } from "@octokit/rest";
import { appManifestGrants } from "../../app/launch.js";
import { startForgeServer, type ForgeServer } from "../../app/server.js";
import { stateBranchRuleset } from "../../app/start-run.js";
import type { Decision } from "../../core/decide.js";
import type { Journal } from "../../core/journal.js";
import { parseCaptainBranch, parseCaptainId } from "../../core/layout.js";
import { startModelServer, type ModelServer } from "../agents/model-server.js";
import { offlineClaudeEnv } from "../agents/claude-code.js";
import { appKeys } from "../app-keys.js";
import type { LatencyProfileName } from "../latency/profile.js";
import { createSimExecutor, type SimExecutor } from "../runner/sim-executor.js";
import { createSim, type Sim } from "../server.js";
import { demoClaudeScript } from "./claude-script.js";
import { LiveView, secs } from "./live-view.js";
import { readOutcome, testIntegration, writeReport, type RunRecord } from "./outcome.js";
import { loadPlanStages, type PlanStages } from "./plan-stages.js";
import { raiseBudgets } from "./budget.js";
import { CI_FIX_TASK, DemoReviewer, readFeedback, REVIEWED_TASK, type DemoFeedback } from "./review.js";
import { DEMO_OWNER, DEMO_REPO, projectFiles } from "./project.js";

/** Forge's root (a checkout, or the installed package): this file is src/local-github/demo/run.ts or dist/local-github/demo/run.js. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
export const DEFAULT_PLAN = path.join(ROOT, "examples", "plans", "textkit");
const FULL = `${DEMO_OWNER}/${DEMO_REPO}`;
const PERSON = "octocat";
/**
 * The machine user whose token the agent workflow pushes with (`github-token:
 * \${{ secrets.FORGE_PUSH_TOKEN }}`): pushes with the job's GITHUB_TOKEN start no workflow, so the
 * project's CI would not run on the agents' pushes (docs/executor.md#iterations). A real install
 * uses a GitHub App installation token or a fine-grained PAT the same way.
 */
const PUSHER = "textkit-bot";

export type DemoAgent = "scripted" | "claude";

export interface DemoOptions {
  agent?: DemoAgent;
  planDir?: string;
  /** Where the HTML report and the JSON result go (default: a new temporary folder). */
  outDir?: string;
  /** Runners available at once (default 4). */
  runners?: number;
  /**
   * The local GitHub's latency profile: "none" (default) answers at once, "github" at GitHub's speed
   * (../latency/README.md); the default timeout is then three times as long.
   */
  latency?: LatencyProfileName;
  timeoutMs?: number;
  /** Receives each line of the live view (with its newline). */
  write?: (text: string) => void;
  /** Colour and a redrawn progress bar (a terminal). */
  tty?: boolean;
}

export interface DemoTask {
  id: string;
  kind: "task" | "refinery";
  title: string;
  status: string;
  attempts: number;
  retries: number;
  pr?: number;
  timeMs?: number;
  /** Overlay that added it. */
  addedBy?: string;
  /** Why each failed attempt failed, as the App recorded it. */
  failures: { attempt: number; to: string; error: string }[];
  /** Revisions of its last attempt on the same PR: by reviews (or /forge fix), by failing required checks. */
  iteration?: number;
  reviewIterations?: number;
  ciFixes?: number;
}

export interface DemoResult {
  ok: boolean;
  problems: string[];
  agent: DemoAgent;
  runId?: string;
  planId: string;
  status: string;
  durationMs: number;
  tasks: DemoTask[];
  followups: { id: string; sourceTaskId: string; text: string; status: string; pr?: number }[];
  changeRequests: { id: string; emittedBy: string; title: string; status: string; overlayId?: string; issue?: number }[];
  /** The Captain's overlay PRs (opened by the Forge action), which the person merged. */
  overlayPrs: { number: number; title: string; head: string; merged: boolean }[];
  overlays: string[];
  finalPr?: { number: number; title: string; head: string; base: string };
  trackerIssue?: number;
  testsOnIntegration?: { ok: boolean; pass: number; fail: number; summary: string };
  notes: string[];
  /** Forge action jobs (Captains among them) and the project's CI runs, all in the sim runners. */
  jobs: { action: number; captain: number; ci: number };
  /** The review answered and the CI fix (scripted agent only). */
  feedback: DemoFeedback;
  reportPath?: string;
  jsonPath?: string;
  /** Responses or webhooks of the local GitHub that broke GitHub's schema (should be 0). */
  schemaViolations: number;
}

/** One word for `sh -c` (the command agent's command line), whatever the path holds. */
const shellQuote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

export async function runDemo(options: DemoOptions = {}): Promise<DemoResult> {
  const stages = await loadPlanStages(path.resolve(options.planDir ?? DEFAULT_PLAN));
  return new DemoRun(options, stages).run();
}

/** The services of one demo, started in order and closed at the end whatever happened. */
interface Services {
  sim?: Sim;
  app?: ForgeServer;
  executor?: SimExecutor;
  ciExecutor?: SimExecutor;
  model?: ModelServer;
}

/** One `forge demo`: the services it starts, what it saw of the App's decisions, the person's part, the outcome. */
class DemoRun {
  private readonly agent: DemoAgent;
  private readonly view: LiveView;
  private readonly problems: string[] = [];
  private readonly notes: string[] = [];
  /** Jobs of the real Forge action, and how many of them were Captains. */
  private readonly jobs = { action: 0, captain: 0, ci: 0 };
  private readonly outDir: string;
  private readonly scratch: string;
  private readonly services: Services = {};
  private readonly reviews: Promise<void>[] = [];
  // What the App decided, as it persists it.
  /** Why the run cannot go on without a person, when the demo sees it first. */
  private stuck: string | undefined;
  private runId: string | undefined;
  private journal: Journal | undefined;
  private readonly record: RunRecord = { firstRunning: new Map(), mergedAt: new Map(), failures: new Map() };
  /** Called (once) at the next decision or change: wakes the wait for the end. */
  private readonly changed: (() => void)[] = [];
  /** Captain branches whose job ended without a PR: the demo stops waiting for their overlay. */
  private readonly captainFailed = new Map<string, string>();
  private watching = true;
  private readonly overlayPrs: DemoResult["overlayPrs"] = [];
  /** Attempts stopped at their budget that the demo's person already raised. */
  private readonly raised = new Set<string>();
  /** The person reviewing one task's PR (scripted agent only). */
  private reviewer: DemoReviewer | undefined;

  constructor(
    private readonly options: DemoOptions,
    private readonly stages: PlanStages,
  ) {
    this.agent = options.agent ?? "scripted";
    this.view = new LiveView(options.write ?? ((t: string) => void process.stdout.write(t)), options.tty ?? false);
    this.outDir = options.outDir ? path.resolve(options.outDir) : mkdtempSync(path.join(tmpdir(), "forge-demo-"));
    mkdirSync(this.outDir, { recursive: true });
    this.scratch = mkdtempSync(path.join(tmpdir(), "forge-demo-work-"));
  }

  async run(): Promise<DemoResult> {
    const { stages, view } = this;
    try {
      view.line(
        `Forge demo — plan ${view.color("1", stages.planId)} (${stages.dag.nodes.length - stages.overlays.flatMap((o) => o.addedTasks).length} nodes, ${stages.overlays.length} overlay(s) to come), agent: ${this.agent === "claude" ? "the real Claude Code CLI against the scripted model server" : "the scripted agent"}`,
      );
      const { sim, appId } = await this.startGitHubAndApp();
      await this.createRepository(sim, appId);
      const user = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken(PERSON) });
      await this.startRunners(sim, user);
      await this.pushPlan(user);
      const finalPrNumber = await this.waitForTheEnd(user);
      this.watching = false;
      await Promise.all(this.reviews);
      await this.agentJobsDone();
      await this.services.app!.forge.idle();
      view.endBar();
      return await this.result(sim, user, finalPrNumber);
    } finally {
      await this.close();
    }
  }

  private wake(): void {
    for (const fn of this.changed.splice(0)) fn();
  }

  private onDecision(id: string, d: Decision): void {
    this.runId ??= id;
    if (id !== this.runId) return;
    this.journal = d.journal;
    const { firstRunning, mergedAt, failures } = this.record;
    for (const tr of d.transitions) {
      const t = d.journal.tasks.find((x) => x.id === tr.taskId);
      if (tr.to === "RUNNING" && !firstRunning.has(tr.taskId)) firstRunning.set(tr.taskId, this.view.elapsed());
      if (tr.to === "MERGED") mergedAt.set(tr.taskId, this.view.elapsed());
      if (tr.to === "FAILED" || tr.to === "STALE")
        failures.set(tr.taskId, [...(failures.get(tr.taskId) ?? []), { attempt: tr.attempt, to: tr.to, error: t?.lastError ?? "" }]);
    }
    this.view.decision(id, d);
    this.wake();
  }

  /** The demo answers the run's n-th Change Request with the plan folder's overlay n; past the last, a person must. */
  private captainHasAnswer(crId: string): boolean {
    const n = (this.journal?.changeRequests.findIndex((c) => c.id === crId) ?? -1) + 1 || 1;
    if (n <= this.stages.overlays.length) return true;
    this.stuck = `Change Request ${crId} needs a person: the plan folder has no overlay-${String(n).padStart(3, "0")} for the Captain to answer it with`;
    this.wake();
    return false;
  }

  /** The Captain's overlay PR, reviewed and merged by the person (see docs/executor.md#change-requests). */
  private async reviewOverlay(gh: Octokit, branch: string): Promise<void> {
    while (this.watching) {
      const { data } = await gh.rest.pulls.list({
        owner: DEMO_OWNER,
        repo: DEMO_REPO,
        head: `${DEMO_OWNER}:${branch}`,
        base: "main",
        state: "open",
      });
      const pr = data[0];
      if (pr) {
        this.view.aside(`${PERSON} reviews the Captain's overlay PR #${pr.number} (${pr.title}) and merges it`);
        const res = await this.services.sim!.control.merge(PERSON, FULL, pr.number);
        if (res.status >= 300)
          this.problems.push(`merging the overlay PR #${pr.number} failed: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
        this.overlayPrs.push({ number: pr.number, title: pr.title, head: branch, merged: res.status < 300 });
        return;
      }
      const failed = this.captainFailed.get(branch);
      if (failed !== undefined) {
        this.stuck = `the Captain's job on ${branch} ended ${failed} without an overlay PR (FORGE_DEMO_DEBUG=1 prints its log)`;
        this.wake();
        return;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** The local GitHub, and the Forge App registered on it as a real server receiving signed webhooks. */
  private async startGitHubAndApp(): Promise<{ sim: Sim; appId: number }> {
    const latency = this.options.latency ?? "none";
    const sim = (this.services.sim = await createSim({ strict: false, latency: { profile: latency, seed: 1 } }));
    if (process.env.FORGE_DEMO_DEBUG) {
      // Every job's log on stderr (FORGE_DEMO_DEBUG=1).
      const core = sim.core;
      sim.onEvent((e) => {
        if (e.event !== "workflow_run" || e.action !== "completed") return;
        const id = (e.payload.workflow_run as { id: number }).id;
        setTimeout(
          () =>
            process.stderr.write(
              `--- job log of workflow run ${id}\n${
                core.state.runs
                  .get(id)
                  ?.jobs.map((j) => j.log)
                  .join("") ?? ""
              }\n`,
            ),
          50,
        );
      });
    }
    // A Captain job that ends without a PR (its overlay invalid, nothing to answer with) stops the wait.
    sim.onEvent((e) => {
      if (e.event !== "workflow_run" || e.action !== "completed") return;
      const wr = e.payload.workflow_run as { head_branch?: string; conclusion?: string; event?: string; path?: string };
      // Only the Captain's own job: the repository's CI runs on the Captain's branch too.
      if (wr.event !== "workflow_dispatch" || !wr.path?.endsWith("/forge-agent.yml")) return;
      if (wr.head_branch && parseCaptainBranch(wr.head_branch))
        setTimeout(() => this.captainFailed.set(wr.head_branch!, wr.conclusion ?? "unknown"), 2_000);
    });
    const keys = appKeys();
    const secret = `forge-demo-${Math.random().toString(36).slice(2)}`;
    const registered = sim.control.registerApp({
      slug: "forge",
      publicKeyPem: keys.publicKeyPem,
      webhookUrl: "http://127.0.0.1:9/unused",
      webhookSecret: secret,
      // app.yml's permissions and events.
      ...appManifestGrants(),
    });
    const app = (this.services.app = await startForgeServer({
      appId: registered.id,
      privateKey: keys.privateKeyPem,
      webhookSecret: secret,
      baseUrl: sim.apiUrl,
      port: 0,
      onDecision: (_repo, id, d) => this.onDecision(id, d),
      // The reconciler repairs anything a webhook missed, as in production (60 s there).
      reconcileEveryMs: 5_000,
      logLevel: "fatal",
      octokitDefaults: { retry: { retries: 3, retryAfterBaseValue: 50 }, throttle: { enabled: false } },
    }));
    sim.control.setAppWebhookUrl(registered.id, app.webhookUrl);
    this.view.line(
      `        local GitHub ${sim.url} (REST ${sim.apiUrl}${latency === "none" ? "" : `, latency ${latency}`}) · Forge App ${app.webhookUrl} (signed webhooks)`,
    );
    return { sim, appId: registered.id };
  }

  /** The demo repository: the project, Forge's agent workflow and configuration; the App installed on it. */
  private async createRepository(sim: Sim, appId: number): Promise<void> {
    // The template's agent workflow, pushing with the machine user's token so the project's CI runs
    // on the agents' pushes (README, "The repository's CI on Forge's pushes").
    const template = readFileSync(path.join(ROOT, "templates", "workflows", "forge-agent.yml"), "utf8");
    const contextLine = "          context: ${{ inputs.context }}\n";
    if (!template.includes(contextLine))
      throw new Error("templates/workflows/forge-agent.yml has no `context:` input line to add github-token after");
    const workflow = template.replace(
      contextLine,
      `${contextLine}          # A machine user's token: pushes with the job's GITHUB_TOKEN start no workflow, so CI would not run.\n          github-token: \${{ secrets.FORGE_PUSH_TOKEN }}\n`,
    );
    const scriptedAgent = fileURLToPath(new URL("bin/forge-demo-agent.mjs", import.meta.url));
    const requiredChecks =
      "# A task PR merges once the project's CI job `check` passes on its head; its failure starts a fix revision.\nrequired_checks: [check]\n";
    const agentConfig =
      this.agent === "claude"
        ? `agent:\n  adapter: claude\n  max_turns: 12\n  isolation: none\nheartbeat_interval_seconds: 10\nstale_threshold_seconds: 60\n${requiredChecks}`
        : `agent:\n  adapter: command\n  isolation: none\n  command: ${JSON.stringify(`node ${shellQuote(scriptedAgent)} --plan ${shellQuote(this.stages.dir)}`)}\nheartbeat_interval_seconds: 5\nstale_threshold_seconds: 30\n${requiredChecks}# Each attempt may spend $1; a person raises a task's budget with /forge budget <task> +<dollars>.\nbudgets: { attempt_usd: 1 }\n`;
    // isolation: none — the demo runs on your machine; it does not add an OS user to it (docs/runner.md#isolation).
    const config = `# Forge configuration of the demo repository (see Forge's README for every field).\nmax_parallel_agents: 4\n# Retry a failed attempt at once (the default backs off 2 s, 4 s, …).\nretry_backoff: { base_seconds: 0, max_seconds: 0 }\n${agentConfig}`;
    // One session per task does everything (implement, verify, walkthrough): src/agent's "single" stage.
    const stagesYml = `"1": [single]\n"2": [single]\n"3": [single]\nrefinery: [single]\n`;
    await sim.control.createRepo({
      owner: DEMO_OWNER,
      name: DEMO_REPO,
      files: {
        ...projectFiles(),
        ".github/workflows/forge-agent.yml": workflow,
        ".github/forge.yml": config,
        ".forge/stages.yml": stagesYml,
      },
      collaborators: { [PERSON]: "write", [PUSHER]: "write" },
    });
    sim.control.install(appId, DEMO_OWNER, [FULL]);
    // The installer's ruleset (README, "Protect the state branches"): only the App writes forge/*/_state.
    const ruleset = await sim.control.api(DEMO_OWNER, "POST", `/repos/${FULL}/rulesets`, stateBranchRuleset(appId));
    if (ruleset.status !== 201) throw new Error(`the demo repository's ruleset was refused: ${JSON.stringify(ruleset.body)}`);
  }

  /** The runners executing every dispatched job with the real Forge action (and the scripted model server for Claude Code). */
  private async startRunners(sim: Sim, user: Octokit): Promise<void> {
    const { options, stages, scratch } = this;
    let env: Record<string, string> = {};
    if (this.agent === "claude") {
      const model = (this.services.model = await startModelServer({
        script: demoClaudeScript(12, (n, crId) =>
          n <= stages.overlays.length
            ? stages.captainFiles(n, crId)
            : `the plan folder has no overlay-${String(n).padStart(3, "0")} to answer ${crId} with`,
        ),
      }));
      const home = path.join(scratch, "home");
      mkdirSync(home, { recursive: true });
      env = offlineClaudeEnv(model.url, home, {
        PATH: `${path.join(ROOT, "node_modules", ".bin")}${path.delimiter}${process.env.PATH ?? ""}`,
      });
      this.view.line(`        scripted model server ${model.url} (Claude Code's ANTHROPIC_BASE_URL)`);
    }
    mkdirSync(path.join(scratch, "runners"), { recursive: true });
    const executor = (this.services.executor = createSimExecutor({
      concurrency: options.runners ?? 4,
      workspaceRoot: path.join(scratch, "runners"),
      // FORGE_DEMO_DEBUG keeps every job's workspace (the path is printed at the end).
      keepWorkspaces: !!process.env.FORGE_DEMO_DEBUG,
      // The template says `uses: forge-dev/forge/action@v1`: served from this checkout's action/.
      localActions: { "forge-dev/forge/action": path.join(ROOT, "action") },
      secrets: { [FULL]: { ANTHROPIC_API_KEY: "sk-ant-forge-demo-dummy", FORGE_PUSH_TOKEN: sim.control.userToken(PUSHER) } },
      env,
    }));
    // The project's CI (push, pull_request) has runners of its own, as on GitHub: its runs on every
    // push of the agents do not hold up the agents' jobs.
    const ciExecutor = (this.services.ciExecutor = createSimExecutor({
      concurrency: 2,
      workspaceRoot: path.join(scratch, "runners"),
      keepWorkspaces: !!process.env.FORGE_DEMO_DEBUG,
    }));
    sim.onWorkflowDispatch((d) => {
      // Only dispatches are Forge's jobs.
      if (d.event !== "workflow_dispatch") {
        this.jobs.ci++;
        return ciExecutor.handler(d);
      }
      const taskId = d.inputs.task_id ?? "";
      this.jobs.action++;
      const crId = parseCaptainId(taskId);
      if (crId) {
        // The Captain is the real action too; the person then reviews and merges its overlay PR.
        this.jobs.captain++;
        this.view.aside(`Captain ${taskId} dispatched: the Forge action writes an overlay for ${crId}`);
        if (this.captainHasAnswer(crId))
          this.reviews.push(
            this.reviewOverlay(user, d.ref.replace(/^refs\/heads\//, "")).catch(
              (e: unknown) => void this.problems.push(`overlay review: ${(e as Error).message}`),
            ),
          );
      }
      return executor.handler(d);
    });
  }

  /** The person commits the plan: merging a plan with its dag.json to the default branch starts a run. */
  private async pushPlan(user: Octokit): Promise<void> {
    const { data: ref } = await user.rest.git.getRef({ owner: DEMO_OWNER, repo: DEMO_REPO, ref: "heads/main" });
    const { data: parent } = await user.rest.git.getCommit({ owner: DEMO_OWNER, repo: DEMO_REPO, commit_sha: ref.object.sha });
    const { data: tree } = await user.rest.git.createTree({
      owner: DEMO_OWNER,
      repo: DEMO_REPO,
      base_tree: parent.tree.sha,
      tree: Object.entries(this.stages.baseFiles).map(([p, content]) => ({
        path: p,
        mode: "100644" as const,
        type: "blob" as const,
        content,
      })),
    });
    const { data: commit } = await user.rest.git.createCommit({
      owner: DEMO_OWNER,
      repo: DEMO_REPO,
      message: `Add the plan ${this.stages.planId}`,
      tree: tree.sha,
      parents: [ref.object.sha],
    });
    await user.rest.git.updateRef({ owner: DEMO_OWNER, repo: DEMO_REPO, ref: "heads/main", sha: commit.sha });
    this.view.aside(`${PERSON} pushed the plan to main (${commit.sha.slice(0, 7)})`);
  }

  /** Until the run is over, its follow-ups settled and (for a completed run) its final PR open; the final PR's number. */
  private async waitForTheEnd(user: Octokit): Promise<number | undefined> {
    const { options } = this;
    const slower = options.latency === "github" ? 3 : 1;
    const deadline = Date.now() + (options.timeoutMs ?? (this.agent === "claude" ? 20 : 6) * 60_000 * slower);
    for (;;) {
      const j = this.journal;
      const settled = j && j.status !== "running" && j.followups.every((f) => f.status === "merged" || f.status === "failed");
      if (j) await raiseBudgets(user, j, this.raised, (line) => this.view.aside(`${PERSON} ${line}`));
      if (j) {
        this.reviewer ??= new DemoReviewer(
          user,
          (line) => this.view.aside(`${PERSON} ${line}`),
          (line) => void this.problems.push(line),
        );
        await this.reviewer.onJournal(j).catch((e: unknown) => void this.problems.push(`the demo's review: ${(e as Error).message}`));
      }
      const held = j?.tasks.filter((t) => t.hold === "exhausted" || t.hold === "fatal" || t.hold === "human");
      if (this.stuck || held?.length) {
        this.problems.push(
          this.stuck ?? `the run needs a person: ${held!.map((t) => `${t.id} (${t.hold}: ${t.lastError ?? t.question ?? ""})`).join(", ")}`,
        );
        return undefined;
      }
      if (settled && j.status === "completed") {
        const { data } = await user.rest.pulls.list({
          owner: DEMO_OWNER,
          repo: DEMO_REPO,
          head: `${DEMO_OWNER}:${j.integrationBranch}`,
          base: j.baseBranch,
          state: "all",
        });
        const finalPrNumber = data[0]?.number;
        if (finalPrNumber !== undefined) return finalPrNumber;
      } else if (settled) return undefined;
      if (Date.now() > deadline) {
        this.problems.push(
          `timed out after ${secs(options.timeoutMs ?? 0)}: ${j ? j.tasks.map((t) => `${t.id}=${t.status}${t.hold ? `(${t.hold})` : ""}`).join(" ") : "no run started"}`,
        );
        return undefined;
      }
      await new Promise<void>((r) => {
        const timer = setTimeout(r, 200);
        this.changed.push(() => (clearTimeout(timer), r()));
      });
    }
  }

  /**
   * The agents' jobs end after the run may have: a revision's job replies in the review threads
   * after its push, and its task can merge meanwhile. The outcome is read once they have ended (at
   * most a minute).
   */
  private async agentJobsDone(): Promise<void> {
    const executor = this.services.executor;
    for (const until = Date.now() + 60_000; executor && executor.active().length > 0 && Date.now() < until;)
      await new Promise((r) => setTimeout(r, 200));
  }

  /** The outcome from GitHub and the App's stored run, checked, with the project's tests and the report. */
  private async result(sim: Sim, user: Octokit, finalPrNumber: number | undefined): Promise<DemoResult> {
    const { problems, notes, runId } = this;
    const loaded = runId ? await this.services.app!.forge.runtimes.get(FULL)?.engine.state(runId) : null;
    const j = loaded?.state.journal ?? this.journal;
    const durationMs = this.view.elapsed();
    const outcome = await readOutcome(user, j, loaded?.state.facts, this.stages, this.record, finalPrNumber);
    const testsOnIntegration = j ? await testIntegration(sim, sim.control.userToken(PERSON), j.integrationBranch, this.scratch) : undefined;

    if (!j) problems.push("no run started");
    else {
      if (j.status !== "completed") problems.push(`the run is ${j.status}, not completed`);
      const notMerged = j.tasks.filter((t) => t.status !== "MERGED").map((t) => `${t.id} (${t.status})`);
      if (notMerged.length) problems.push(`not merged: ${notMerged.join(", ")}`);
      if (outcome.finalPr === undefined) problems.push("no final PR");
    }
    const feedback = await readFeedback(user, j, this.reviewer?.review);
    if (j) {
      // The feedback loop the demo shows: a review answered on the same PR, then approved; a red CI fixed.
      const { review, ciFix } = feedback;
      if (!review) problems.push(`${REVIEWED_TASK}'s PR was never reviewed by the demo's person`);
      else {
        if (review.iteration < 1) problems.push(`the review of ${REVIEWED_TASK} started no revision`);
        if (!review.reply)
          problems.push(
            `no reply in the review comment's thread on #${review.pr} (comment ${review.commentId}; the PR's review comments: ${review.thread || "none"})`,
          );
        if (review.approvalId === undefined) problems.push(`the demo's person did not approve ${REVIEWED_TASK}'s revision`);
      }
      if (!ciFix) problems.push(`${CI_FIX_TASK}'s failing CI started no fix revision`);
    }
    if (testsOnIntegration && !testsOnIntegration.ok)
      notes.push(
        testsOnIntegration.pass + testsOnIntegration.fail === 0
          ? `node --test found no tests on the integration branch (${testsOnIntegration.summary})`
          : `the project's tests fail on the integration branch: ${testsOnIntegration.summary}`,
      );

    const result: DemoResult = {
      ok: problems.length === 0,
      problems,
      agent: this.agent,
      ...(runId ? { runId } : {}),
      planId: this.stages.planId,
      status: j?.status ?? "not started",
      durationMs,
      tasks: outcome.tasks,
      followups: outcome.followups,
      changeRequests: outcome.changeRequests,
      overlayPrs: this.overlayPrs,
      overlays: j?.plan.overlays ?? [],
      ...(outcome.finalPr ? { finalPr: outcome.finalPr } : {}),
      ...(outcome.trackerIssue !== undefined ? { trackerIssue: outcome.trackerIssue } : {}),
      ...(testsOnIntegration ? { testsOnIntegration } : {}),
      notes,
      jobs: this.jobs,
      feedback,
      schemaViolations: sim.violations.length,
    };
    await writeReport(
      user,
      { outDir: this.outDir, agent: this.agent, stages: this.stages, journal: j, outcome, log: this.view.log },
      result,
    );
    return result;
  }

  private async close(): Promise<void> {
    const { app, sim, executor, ciExecutor, model } = this.services;
    await app?.close().catch(() => undefined);
    await sim?.close().catch(() => undefined);
    executor?.dispose();
    ciExecutor?.dispose();
    await model?.close().catch(() => undefined);
    if (process.env.FORGE_DEMO_DEBUG) process.stderr.write(`forge demo: job workspaces kept in ${this.scratch}\n`);
    else rmSync(this.scratch, { recursive: true, force: true });
  }
}
