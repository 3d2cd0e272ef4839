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
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Octokit } from "@octokit/rest";
import { startForgeServer, type ForgeServer } from "../../app/server.js";
import type { Decision } from "../../core/decide.js";
import type { Journal } from "../../core/journal.js";
import { LABELS } from "../../core/layout.js";
import { startModelServer, type ModelServer } from "../agents/model-server.js";
import { offlineClaudeEnv } from "../agents/claude-code.js";
import { createSim, type Sim } from "../server.js";
import { createSimExecutor, type SimExecutor } from "../runner/sim-executor.js";
import { appKeys } from "../app-keys.js";
import { demoClaudeScript } from "./claude-script.js";
import { loadPlanStages, type PlanStages } from "./plan-stages.js";
import { DEMO_OWNER, DEMO_REPO, projectFiles } from "./project.js";
import { renderReport, type ReportTask } from "./report.js";

const run = promisify(execFile);
/** Forge's root (a checkout, or the installed package): this file is src/local-github/demo/run.ts or dist/local-github/demo/run.js. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
export const DEFAULT_PLAN = path.join(ROOT, "examples", "plans", "textkit");
const FULL = `${DEMO_OWNER}/${DEMO_REPO}`;
const PERSON = "octocat";

export type DemoAgent = "scripted" | "claude";

export interface DemoOptions {
  agent?: DemoAgent;
  planDir?: string;
  /** Where the HTML report and the JSON result go (default: a new temporary folder). */
  outDir?: string;
  /** Runners available at once (default 4). */
  runners?: number;
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
  /** Jobs of the real Forge action, and how many of them were Captains. */
  jobs: { action: number; captain: number };
  reportPath?: string;
  jsonPath?: string;
  /** Responses or webhooks of the local GitHub that broke GitHub's schema (should be 0). */
  schemaViolations: number;
}

function bar(done: number, total: number, width = 16): string {
  const full = total ? Math.round((done / total) * width) : 0;
  return `▕${"█".repeat(full)}${"░".repeat(width - full)}▏ ${String(done).padStart(2)}/${total}`;
}

const secs = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

/** One word for `sh -c` (the command agent's command line), whatever the path holds. */
const shellQuote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** A task whose dependents are all refineries waits MERGE_READY for them to merge it (DESIGN.md §5). */
function refineryMerged(j: Journal, taskId: string): boolean {
  const dependents = j.plan.nodes.filter((n) => n.dependencies.includes(taskId));
  return dependents.length > 0 && dependents.every((n) => n.kind === "refinery");
}

export async function runDemo(options: DemoOptions = {}): Promise<DemoResult> {
  const agent = options.agent ?? "scripted";
  const write = options.write ?? ((t: string) => void process.stdout.write(t));
  const tty = options.tty ?? false;
  const color = (code: string, s: string) => (tty ? `\x1b[${code}m${s}\x1b[0m` : s);
  const t0 = performance.now();
  const elapsed = () => performance.now() - t0;
  const log: string[] = [];
  let barShown = "";
  const line = (text: string) => {
    log.push(text);
    if (tty && barShown) write("\r\x1b[2K");
    write(`${text}\n`);
    if (tty && barShown) write(barShown);
  };
  const problems: string[] = [];
  const notes: string[] = [];
  const jobs = { action: 0, captain: 0 };

  const stages: PlanStages = await loadPlanStages(path.resolve(options.planDir ?? DEFAULT_PLAN));
  const outDir = options.outDir ? path.resolve(options.outDir) : mkdtempSync(path.join(tmpdir(), "forge-demo-"));
  mkdirSync(outDir, { recursive: true });
  const scratch = mkdtempSync(path.join(tmpdir(), "forge-demo-work-"));

  let sim: Sim | undefined;
  let app: ForgeServer | undefined;
  let executor: SimExecutor | undefined;
  let model: ModelServer | undefined;
  const reviews: Promise<void>[] = [];

  // What the App decided, as it persists it.
  /** Why the run cannot go on without a person, when the demo sees it first. */
  let stuck: string | undefined;
  let runId: string | undefined;
  let journal: Journal | undefined;
  const firstRunning = new Map<string, number>();
  const mergedAt = new Map<string, number>();
  const failures = new Map<string, DemoTask["failures"]>();
  const changed: (() => void)[] = [];
  const onDecision = (_repo: string, id: string, d: Decision) => {
    runId ??= id;
    if (id !== runId) return;
    journal = d.journal;
    const total = d.journal.tasks.length;
    barShown = tty ? `${color("2", secs(elapsed()).padStart(7))} ${bar(d.journal.merged, total)} merged` : "";
    const prefix = () => `${secs(elapsed()).padStart(7)} ${bar(d.journal.merged, total)}`;
    for (const e of d.events) {
      if (e.type === "run.started") line(`${prefix()}  run ${color("1", id)} started: ${total} nodes, integration branch ${d.journal.integrationBranch}`);
      else if (e.type === "followup.spawned") line(`${prefix()}  ${color("35", "follow-up")} ${String((e.data as { followupId?: string }).followupId)} spawned from ${e.taskId}: ${String((e.data as { reason?: string }).reason)}`);
      else if (e.type === "followup.completed") line(`${prefix()}  ${color("35", "follow-up")} ${String((e.data as { followupId?: string }).followupId)} ${String((e.data as { status?: string }).status)}`);
      else if (e.type === "cr.emitted") line(`${prefix()}  ${color("33", "Change Request")} ${String((e.data as { crId?: string }).crId)} from ${e.taskId}: ${String((e.data as { reason?: string }).reason)}`);
      else if (e.type === "run.paused") line(`${prefix()}  run paused (${String((e.data as { reason?: string }).reason)}): in-flight work finishes, nothing new starts`);
      else if (e.type === "cr.resolved") {
        const data = e.data as { crId?: string; resolution?: string; overlayId?: string };
        line(`${prefix()}  ${color("33", "Change Request")} ${String(data.crId)} ${String(data.resolution)}${data.overlayId ? ` as ${data.overlayId}: the plan now has ${total} nodes` : ""}`);
      } else if (e.type === "run.resumed") line(`${prefix()}  run resumed`);
      else if (e.type === "run.completed") line(`${prefix()}  run ${color("32", "completed")}: every task merged; opening the final PR`);
    }
    for (const tr of d.transitions) {
      const t = d.journal.tasks.find((x) => x.id === tr.taskId);
      if (tr.to === "RUNNING" && !firstRunning.has(tr.taskId)) firstRunning.set(tr.taskId, elapsed());
      if (tr.to === "MERGED") mergedAt.set(tr.taskId, elapsed());
      if (tr.to === "FAILED" || tr.to === "STALE") failures.set(tr.taskId, [...(failures.get(tr.taskId) ?? []), { attempt: tr.attempt, to: tr.to, error: t?.lastError ?? "" }]);
      const byRefinery = tr.to === "MERGE_READY" && refineryMerged(d.journal, tr.taskId);
      const why = tr.to === "FAILED" || tr.to === "STALE" ? `  ${color("31", (t?.lastError ?? "").slice(0, 90))}` : byRefinery ? "  (its refinery merges it)" : "";
      const tint = tr.to === "MERGED" ? "32" : tr.to === "FAILED" || tr.to === "STALE" ? "31" : tr.to === "RUNNING" ? "36" : "0";
      line(`${prefix()}  ${tr.taskId.padEnd(12)} ${tr.from.padEnd(11)} → ${color(tint, tr.to.padEnd(11))} attempt ${tr.attempt}${why}`);
    }
    for (const fn of changed.splice(0)) fn();
  };

  /** The demo answers the run's n-th Change Request with the plan folder's overlay n; past the last, a person must. */
  function captainHasAnswer(crId: string): boolean {
    const n = (journal?.changeRequests.findIndex((c) => c.id === crId) ?? -1) + 1 || 1;
    if (n <= stages.overlays.length) return true;
    stuck = `Change Request ${crId} needs a person: the plan folder has no overlay-${String(n).padStart(3, "0")} for the Captain to answer it with`;
    for (const fn of changed.splice(0)) fn();
    return false;
  }

  /** Captain branches whose job ended without a PR: the demo stops waiting for their overlay. */
  const captainFailed = new Map<string, string>();
  let watching = true;
  const overlayPrs: DemoResult["overlayPrs"] = [];

  /** The Captain's overlay PR, reviewed and merged by the person, as DESIGN.md §5 has it. */
  async function reviewOverlay(gh: Octokit, branch: string): Promise<void> {
    while (watching) {
      const { data } = await gh.rest.pulls.list({ owner: DEMO_OWNER, repo: DEMO_REPO, head: `${DEMO_OWNER}:${branch}`, base: "main", state: "open" });
      const pr = data[0];
      if (pr) {
        line(`${secs(elapsed()).padStart(7)} ${" ".repeat(22)}  ${PERSON} reviews the Captain's overlay PR #${pr.number} (${pr.title}) and merges it`);
        const res = await sim!.control.merge(PERSON, FULL, pr.number);
        if (res.status >= 300) problems.push(`merging the overlay PR #${pr.number} failed: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
        overlayPrs.push({ number: pr.number, title: pr.title, head: branch, merged: res.status < 300 });
        return;
      }
      const failed = captainFailed.get(branch);
      if (failed !== undefined) {
        stuck = `the Captain's job on ${branch} ended ${failed} without an overlay PR (FORGE_DEMO_DEBUG=1 prints its log)`;
        for (const fn of changed.splice(0)) fn();
        return;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  try {
    line(`Forge demo — plan ${color("1", stages.planId)} (${stages.dag.nodes.length - stages.overlays.flatMap((o) => o.addedTasks).length} nodes, ${stages.overlays.length} overlay(s) to come), agent: ${agent === "claude" ? "the real Claude Code CLI against the scripted model server" : "the scripted agent"}`);
    sim = await createSim({ strict: false });
    if (process.env.FORGE_DEMO_DEBUG) {
      // Every job's log on stderr (FORGE_DEMO_DEBUG=1).
      const core = sim.core;
      sim.onEvent((e) => {
        if (e.event !== "workflow_run" || e.action !== "completed") return;
        const id = (e.payload.workflow_run as { id: number }).id;
        setTimeout(() => process.stderr.write(`--- job log of workflow run ${id}\n${core.state.runs.get(id)?.jobs.map((j) => j.log).join("") ?? ""}\n`), 50);
      });
    }
    // A Captain job that ends without a PR (its overlay invalid, nothing to answer with) stops the wait.
    sim.onEvent((e) => {
      if (e.event !== "workflow_run" || e.action !== "completed") return;
      const wr = e.payload.workflow_run as { head_branch?: string; conclusion?: string };
      if (wr.head_branch && /\/_captain-[^/]+$/.test(wr.head_branch)) setTimeout(() => captainFailed.set(wr.head_branch!, wr.conclusion ?? "unknown"), 2_000);
    });
    const keys = appKeys();
    const secret = `forge-demo-${Math.random().toString(36).slice(2)}`;
    const registered = sim.control.registerApp({
      slug: "forge",
      publicKeyPem: keys.publicKeyPem,
      webhookUrl: "http://127.0.0.1:9/unused",
      webhookSecret: secret,
      // app.yml's permissions and events.
      permissions: { contents: "write", pull_requests: "write", issues: "write", checks: "write", actions: "write", statuses: "read", metadata: "read" },
      events: ["push", "pull_request", "issues", "issue_comment", "check_run", "check_suite", "status", "workflow_run", "workflow_job"],
    });
    app = await startForgeServer({
      appId: registered.id,
      privateKey: keys.privateKeyPem,
      webhookSecret: secret,
      baseUrl: sim.apiUrl,
      port: 0,
      onDecision,
      // The reconciler repairs anything a webhook missed, as in production (60 s there).
      reconcileEveryMs: 5_000,
      logLevel: "fatal",
      octokitDefaults: { retry: { retries: 3, retryAfterBaseValue: 50 }, throttle: { enabled: false } },
    });
    sim.control.setAppWebhookUrl(registered.id, app.webhookUrl);
    line(`        local GitHub ${sim.url} (REST ${sim.apiUrl}) · Forge App ${app.webhookUrl} (signed webhooks)`);

    const workflow = readFileSync(path.join(ROOT, "templates", "workflows", "forge-agent.yml"), "utf8");
    const scriptedAgent = fileURLToPath(new URL("bin/forge-demo-agent.mjs", import.meta.url));
    const agentConfig =
      agent === "claude"
        ? "agent:\n  adapter: claude\n  max_turns: 12\nheartbeat_interval_seconds: 10\nstale_threshold_seconds: 60\n"
        : `agent:\n  adapter: command\n  command: ${JSON.stringify(`node ${shellQuote(scriptedAgent)} --plan ${shellQuote(stages.dir)}`)}\nheartbeat_interval_seconds: 5\nstale_threshold_seconds: 30\n`;
    const config = `# Forge configuration of the demo repository (see Forge's README for every field).\nmax_parallel_agents: 4\n# Retry a failed attempt at once (the default backs off 2 s, 4 s, …).\nretry_backoff: { base_seconds: 0, max_seconds: 0 }\n${agentConfig}`;
    // One session per task does everything (implement, verify, walkthrough): src/agent's "single" stage.
    const stagesYml = `"1": [single]\n"2": [single]\n"3": [single]\nrefinery: [single]\n`;
    await sim.control.createRepo({
      owner: DEMO_OWNER,
      name: DEMO_REPO,
      files: { ...projectFiles(), ".github/workflows/forge-agent.yml": workflow, ".github/forge.yml": config, ".forge/stages.yml": stagesYml },
      collaborators: { [PERSON]: "write" },
    });
    sim.control.install(registered.id, DEMO_OWNER, [FULL]);

    let env: Record<string, string> = {};
    if (agent === "claude") {
      model = await startModelServer({ script: demoClaudeScript(12, (n, crId) => (n <= stages.overlays.length ? stages.captainFiles(n, crId) : `the plan folder has no overlay-${String(n).padStart(3, "0")} to answer ${crId} with`)) });
      const home = path.join(scratch, "home");
      mkdirSync(home, { recursive: true });
      env = offlineClaudeEnv(model.url, home, { PATH: `${path.join(ROOT, "node_modules", ".bin")}${path.delimiter}${process.env.PATH ?? ""}` });
      line(`        scripted model server ${model.url} (Claude Code's ANTHROPIC_BASE_URL)`);
    }
    mkdirSync(path.join(scratch, "runners"), { recursive: true });
    executor = createSimExecutor({
      concurrency: options.runners ?? 4,
      workspaceRoot: path.join(scratch, "runners"),
      // FORGE_DEMO_DEBUG keeps every job's workspace (the path is printed at the end).
      keepWorkspaces: !!process.env.FORGE_DEMO_DEBUG,
      // The template says `uses: forge-dev/forge/action@v1`: served from this checkout's action/.
      localActions: { "forge-dev/forge/action": path.join(ROOT, "action") },
      secrets: { [FULL]: { ANTHROPIC_API_KEY: "sk-ant-forge-demo-dummy" } },
      env,
    });
    const user = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken(PERSON) });
    sim.onWorkflowDispatch((d) => {
      const taskId = d.inputs.task_id ?? "";
      jobs.action++;
      const crId = /^_captain-(.+)$/.exec(taskId)?.[1];
      if (crId) {
        // The Captain is the real action too; the person then reviews and merges its overlay PR.
        jobs.captain++;
        line(`${secs(elapsed()).padStart(7)} ${" ".repeat(22)}  Captain ${taskId} dispatched: the Forge action writes an overlay for ${crId}`);
        if (captainHasAnswer(crId)) reviews.push(reviewOverlay(user, d.ref.replace(/^refs\/heads\//, "")).catch((e: unknown) => void problems.push(`overlay review: ${(e as Error).message}`)));
      }
      return executor!.handler(d);
    });

    // The person commits the plan: merging a plan with its dag.json to the default branch starts a run.
    const { data: ref } = await user.rest.git.getRef({ owner: DEMO_OWNER, repo: DEMO_REPO, ref: "heads/main" });
    const { data: parent } = await user.rest.git.getCommit({ owner: DEMO_OWNER, repo: DEMO_REPO, commit_sha: ref.object.sha });
    const { data: tree } = await user.rest.git.createTree({
      owner: DEMO_OWNER,
      repo: DEMO_REPO,
      base_tree: parent.tree.sha,
      tree: Object.entries(stages.baseFiles).map(([p, content]) => ({ path: p, mode: "100644" as const, type: "blob" as const, content })),
    });
    const { data: commit } = await user.rest.git.createCommit({ owner: DEMO_OWNER, repo: DEMO_REPO, message: `Add the plan ${stages.planId}`, tree: tree.sha, parents: [ref.object.sha] });
    await user.rest.git.updateRef({ owner: DEMO_OWNER, repo: DEMO_REPO, ref: "heads/main", sha: commit.sha });
    line(`${secs(elapsed()).padStart(7)} ${" ".repeat(22)}  ${PERSON} pushed the plan to main (${commit.sha.slice(0, 7)})`);

    // Until the run is over, its follow-ups settled and (for a completed run) its final PR open.
    const deadline = Date.now() + (options.timeoutMs ?? (agent === "claude" ? 20 : 6) * 60_000);
    let finalPrNumber: number | undefined;
    for (;;) {
      const j = journal;
      const settled = j && j.status !== "running" && j.followups.every((f) => f.status === "merged" || f.status === "failed");
      const held = j?.tasks.filter((t) => t.hold === "exhausted" || t.hold === "fatal" || t.hold === "human");
      if (stuck || held?.length) {
        problems.push(stuck ?? `the run needs a person: ${held!.map((t) => `${t.id} (${t.hold}: ${t.lastError ?? t.question ?? ""})`).join(", ")}`);
        break;
      }
      if (settled && j.status === "completed") {
        const { data } = await user.rest.pulls.list({ owner: DEMO_OWNER, repo: DEMO_REPO, head: `${DEMO_OWNER}:${j.integrationBranch}`, base: j.baseBranch, state: "all" });
        finalPrNumber = data[0]?.number;
        if (finalPrNumber !== undefined) break;
      } else if (settled) break;
      if (Date.now() > deadline) {
        problems.push(`timed out after ${secs(options.timeoutMs ?? 0)}: ${j ? j.tasks.map((t) => `${t.id}=${t.status}${t.hold ? `(${t.hold})` : ""}`).join(" ") : "no run started"}`);
        break;
      }
      await new Promise<void>((r) => {
        const timer = setTimeout(r, 200);
        changed.push(() => (clearTimeout(timer), r()));
      });
    }
    watching = false;
    await Promise.all(reviews);
    await app.forge.idle();
    barShown = "";
    if (tty) write("\r\x1b[2K");

    // Collect the outcome from GitHub and the App's stored run.
    const loaded = runId ? await app.forge.runtimes.get(FULL)?.engine.state(runId) : null;
    const j = loaded?.state.journal ?? journal;
    const facts = loaded?.state.facts;
    const durationMs = elapsed();
    const addedBy = new Map(stages.overlays.flatMap((o) => o.addedTasks.map((t) => [t, o.id] as const)));
    const prOf = async (branch: string | undefined): Promise<number | undefined> => {
      if (!branch) return undefined;
      const { data } = await user.rest.pulls.list({ owner: DEMO_OWNER, repo: DEMO_REPO, head: `${DEMO_OWNER}:${branch}`, state: "all" });
      return data[0]?.number;
    };
    const tasks: DemoTask[] = [];
    for (const [i, t] of (j?.tasks ?? []).entries()) {
      const node = j!.plan.nodes[i]!;
      const pr = t.prNumber ?? (await prOf(t.branch));
      const start = firstRunning.get(t.id);
      const end = mergedAt.get(t.id);
      tasks.push({
        id: t.id,
        kind: node.kind,
        title: node.title,
        status: t.status,
        attempts: t.attempt,
        retries: t.retries,
        ...(pr !== undefined ? { pr } : {}),
        ...(start !== undefined && end !== undefined ? { timeMs: end - start } : {}),
        ...(addedBy.has(t.id) ? { addedBy: addedBy.get(t.id)! } : {}),
        failures: failures.get(t.id) ?? [],
      });
    }
    const followups: DemoResult["followups"] = [];
    for (const f of j?.followups ?? []) {
      const pr = f.prNumber ?? (await prOf(f.branch));
      followups.push({ id: f.id, sourceTaskId: f.sourceTaskId, text: f.text, status: f.status, ...(pr !== undefined ? { pr } : {}) });
    }
    const changeRequests: DemoResult["changeRequests"] = (j?.changeRequests ?? []).map((c) => {
      const issue = facts?.crIssues[c.id] ?? c.issueNumber;
      return { id: c.id, emittedBy: c.emittedBy, title: c.title, status: c.status, ...(c.overlayId ? { overlayId: c.overlayId } : {}), ...(issue !== undefined ? { issue } : {}) };
    });
    let finalPr: DemoResult["finalPr"];
    let finalBody = "";
    if (finalPrNumber !== undefined) {
      const { data } = await user.rest.pulls.get({ owner: DEMO_OWNER, repo: DEMO_REPO, pull_number: finalPrNumber });
      finalPr = { number: data.number, title: data.title, head: data.head.ref, base: data.base.ref };
      finalBody = data.body ?? "";
    }
    let trackerIssue = facts?.trackerIssue;
    if (trackerIssue === undefined) {
      const { data } = await user.rest.issues.listForRepo({ owner: DEMO_OWNER, repo: DEMO_REPO, state: "all", labels: LABELS.tracker });
      trackerIssue = data[0]?.number;
    }
    const trackerBody = trackerIssue !== undefined ? ((await user.rest.issues.get({ owner: DEMO_OWNER, repo: DEMO_REPO, issue_number: trackerIssue })).data.body ?? "") : undefined;
    const testsOnIntegration = j ? await testIntegration(sim, sim.control.userToken(PERSON), j.integrationBranch, scratch) : undefined;

    if (!j) problems.push("no run started");
    else {
      if (j.status !== "completed") problems.push(`the run is ${j.status}, not completed`);
      const notMerged = j.tasks.filter((t) => t.status !== "MERGED").map((t) => `${t.id} (${t.status})`);
      if (notMerged.length) problems.push(`not merged: ${notMerged.join(", ")}`);
      if (finalPr === undefined) problems.push("no final PR");
    }
    if (testsOnIntegration && !testsOnIntegration.ok) notes.push(testsOnIntegration.pass + testsOnIntegration.fail === 0 ? `node --test found no tests on the integration branch (${testsOnIntegration.summary})` : `the project's tests fail on the integration branch: ${testsOnIntegration.summary}`);

    const result: DemoResult = {
      ok: problems.length === 0,
      problems,
      agent,
      ...(runId ? { runId } : {}),
      planId: stages.planId,
      status: j?.status ?? "not started",
      durationMs,
      tasks,
      followups,
      changeRequests,
      overlayPrs,
      overlays: j?.plan.overlays ?? [],
      ...(finalPr ? { finalPr } : {}),
      ...(trackerIssue !== undefined ? { trackerIssue } : {}),
      ...(testsOnIntegration ? { testsOnIntegration } : {}),
      notes,
      jobs,
      schemaViolations: sim.violations.length,
    };

    // The report, with every task PR's body (the rendered walkthroughs) so it stands alone.
    const prBodies: { number: number; title: string; body: string }[] = [];
    for (const n of [...tasks.map((t) => t.pr), ...followups.map((f) => f.pr)].filter((x): x is number => x !== undefined)) {
      const { data } = await user.rest.pulls.get({ owner: DEMO_OWNER, repo: DEMO_REPO, pull_number: n });
      prBodies.push({ number: n, title: data.title, body: data.body ?? "" });
    }
    const reportTasks: ReportTask[] = tasks.map((t, i) => ({
      id: t.id,
      kind: t.kind,
      title: t.title,
      dependencies: j!.plan.nodes[i]!.dependencies,
      status: j!.tasks[i]!.status,
      attempts: t.attempts,
      ...(t.pr !== undefined ? { pr: t.pr } : {}),
      ...(t.timeMs !== undefined ? { timeMs: t.timeMs } : {}),
      ...(t.addedBy ? { addedBy: `added by ${t.addedBy}` } : {}),
    }));
    const html = renderReport({
      title: `Forge demo: ${stages.planId}`,
      runId: runId ?? "(none)",
      planId: stages.planId,
      agent: agent === "claude" ? "Claude Code CLI (scripted model server)" : "scripted agent",
      status: result.ok ? "completed" : `${result.status} — ${problems.join("; ")}`,
      durationMs,
      repo: FULL,
      tasks: reportTasks,
      ...(trackerIssue !== undefined ? { trackerIssue } : {}),
      ...(trackerBody !== undefined ? { trackerBody } : {}),
      ...(finalPr ? { finalPr: { number: finalPr.number, title: finalPr.title, body: finalBody } } : {}),
      changeRequests,
      followups,
      ...(testsOnIntegration ? { testsOnIntegration } : {}),
      notes,
      pulls: prBodies,
      log,
    });
    const base = `forge-demo-${runId ?? "no-run"}`;
    result.reportPath = path.join(outDir, `${base}.html`);
    result.jsonPath = path.join(outDir, `${base}.json`);
    writeFileSync(result.reportPath, html);
    writeFileSync(result.jsonPath, `${JSON.stringify(result, null, 2)}\n`);
    return result;
  } finally {
    await app?.close().catch(() => undefined);
    await sim?.close().catch(() => undefined);
    executor?.dispose();
    await model?.close().catch(() => undefined);
    if (process.env.FORGE_DEMO_DEBUG) process.stderr.write(`forge demo: job workspaces kept in ${scratch}\n`);
    else rmSync(scratch, { recursive: true, force: true });
  }
}

/** Clones the integration branch and runs `node --test` there: the work of every task, together. */
async function testIntegration(sim: Sim, token: string, branch: string, scratch: string): Promise<DemoResult["testsOnIntegration"]> {
  const dir = path.join(scratch, "integration");
  const auth = `AUTHORIZATION: basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`;
  const env = { ...process.env, GIT_CONFIG_COUNT: "1", GIT_CONFIG_KEY_0: "http.extraheader", GIT_CONFIG_VALUE_0: auth, GIT_TERMINAL_PROMPT: "0" };
  try {
    await run("git", ["clone", "--quiet", "--depth", "1", "--branch", branch, `${sim.gitUrl}/${FULL}.git`, dir], { env });
  } catch (e) {
    return { ok: false, pass: 0, fail: 0, summary: `could not clone ${branch}: ${(e as Error).message.split("\n")[0]}` };
  }
  const out = await run(process.execPath, ["--test"], { cwd: dir, env: { PATH: process.env.PATH ?? "" }, timeout: 60_000 }).then(
    (r) => ({ code: 0, text: r.stdout }),
    (e: { code?: number; stdout?: string }) => ({ code: e.code ?? 1, text: e.stdout ?? "" }),
  );
  const count = (k: string) => Number(new RegExp(`^# ${k} (\\d+)`, "m").exec(out.text)?.[1] ?? 0);
  const pass = count("pass");
  const fail = count("fail");
  return { ok: out.code === 0 && pass > 0, pass, fail, summary: `${pass} passed, ${fail} failed` };
}
