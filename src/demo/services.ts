// The services of one `forge demo`, started in order: the local GitHub and the Forge App on it, the
// demo repository (the project, the agent workflow, the configuration), the runners with the real
// Forge action; and the person's push of the plan that starts the run.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Octokit } from "@octokit/rest";
import { appManifestGrants } from "../app/launch.js";
import { startForgeServer, type ForgeServer } from "../app/server.js";
import { stateBranchRuleset } from "../app/start-run.js";
import { parseCaptainBranch, parseCaptainId } from "../core/layout.js";
import { startModelServer, type ModelServer } from "../fake-agents/model-server.js";
import { offlineClaudeEnv } from "../fake-agents/claude-code.js";
import { copilotBinary } from "../fake-agents/copilot.js";
import { appKeys } from "./app-keys.js";
import { createSimExecutor, type SimExecutor } from "../local-github/runner/sim-executor.js";
import { createSim, type Sim } from "../local-github/server.js";
import { QUEUED_TEST_WORKFLOW } from "./issue-tree.js";
import { demoClaudeScript, type CaptainAnswer } from "./claude-script.js";
import { demoCopilotScript } from "./copilot-script.js";
import { demoGeminiScript } from "./gemini-script.js";
import { demoChatScript } from "./chat-script.js";
import { AGENT_CLIS_BIN, offlineChatEnv, startChatServer, type ChatServer } from "../fake-agents/chat/index.js";
import { offlineGeminiEnv, startGeminiServer, type GeminiServer } from "../fake-agents/gemini/index.js";
import type { ResponsesServer } from "../fake-agents/responses/index.js";
import { mixedAgentConfig, startMixedServers } from "./mixed.js";
import { ANTHROPIC_SECRET, DEMO_OWNER, DEMO_REPO, FULL, ISOLATION, PERSON, projectFiles } from "./project.js";
import type { DemoRun } from "./run.js";
import { captainHasAnswer, reviewOverlay } from "./watch.js";

/** Forge's root (a checkout, or the installed package): this file is src/demo/services.ts or dist/demo/services.js. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
/**
 * The machine user whose token the agent workflow pushes with (`github-token:
 * \${{ secrets.FORGE_PUSH_TOKEN }}`): pushes with the job's GITHUB_TOKEN start no workflow, so the
 * project's CI would not run on the agents' pushes (docs/executor.md#iterations). A real install
 * uses a GitHub App installation token or a fine-grained PAT the same way.
 */
const PUSHER = "textkit-bot";

/** One word for `sh -c` (the command agent's command line), whatever the path holds. */
const shellQuote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** The services of one demo, started in order and closed at the end whatever happened. */
export interface Services {
  sim?: Sim;
  app?: ForgeServer;
  executor?: SimExecutor;
  ciExecutor?: SimExecutor;
  model?: ModelServer;
  gemini?: GeminiServer;
  chat?: ChatServer;
  responses?: ResponsesServer;
  /** `--agent copilot`: the folder whose `copilot` is the CLI the person installed (FORGE_COPILOT_BIN, else on PATH). */
  copilotBin?: { dir: string; close(): void };
}

/** The local GitHub, and the Forge App registered on it as a real server receiving signed webhooks. */
export async function startGitHubAndApp(run: DemoRun): Promise<{ sim: Sim; appId: number }> {
  const latency = run.options.latency ?? "none";
  const sim = (run.services.sim = await createSim({ strict: false, latency: { profile: latency, seed: 1 } }));
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
      setTimeout(() => run.captainFailed.set(wr.head_branch!, wr.conclusion ?? "unknown"), 2_000);
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
  const app = (run.services.app = await startForgeServer({
    appId: registered.id,
    privateKey: keys.privateKeyPem,
    webhookSecret: secret,
    baseUrl: sim.apiUrl,
    port: 0,
    onDecision: (_repo, id, d) => run.onDecision(id, d),
    // The reconciler repairs anything a webhook missed, as in production (60 s there).
    reconcileEveryMs: 5_000,
    logLevel: "fatal",
    octokitDefaults: { retry: { retries: 3, retryAfterBaseValue: 50 }, throttle: { enabled: false } },
  }));
  sim.control.setAppWebhookUrl(registered.id, app.webhookUrl);
  run.view.line(
    `        local GitHub ${sim.url} (REST ${sim.apiUrl}${latency === "none" ? "" : `, latency ${latency}`}) · Forge App ${app.webhookUrl} (signed webhooks)`,
  );
  return { sim, appId: registered.id };
}

/** The model each real CLI is configured with (opencode gives gpt-* models apply_patch in place of write and edit). */
const DEMO_MODEL: Partial<Record<string, string>> = { gemini: "gemini-2.5-flash", opencode: "forge-coder" };

/** The demo repository: the project, Forge's agent workflow and configuration; the App installed on it. */
export async function createRepository(run: DemoRun, sim: Sim, appId: number): Promise<void> {
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
  const realAgent =
    run.agent === "mixed"
      ? mixedAgentConfig(ISOLATION)
      : `agent:\n  adapter: ${run.agent}\n${DEMO_MODEL[run.agent] ? `  model: ${DEMO_MODEL[run.agent]}\n` : ""}  max_turns: 12\n  isolation: ${ISOLATION}\n`;
  const agentConfig =
    run.agent !== "scripted"
      ? `${realAgent}heartbeat_interval_seconds: 10\nstale_threshold_seconds: 60\n${requiredChecks}`
      : `agent:\n  adapter: command\n  isolation: ${ISOLATION}\n  command: ${JSON.stringify(`node ${shellQuote(scriptedAgent)} --plan ${shellQuote(run.stages.dir)}`)}\n# A silent agent is stopped as stalled after 15 s (3 missed beats): the demo's stalled attempt is not a long wait.\nheartbeat_interval_seconds: 5\nstale_threshold_seconds: 15\n${requiredChecks}# Each attempt may spend $1; a person raises a task's budget with /forge budget <task> +<dollars>.\nbudgets: { attempt_usd: 1 }\n`;
  // With --issues the final PR merges itself once the person approves it, through main's merge queue.
  const autoMerge = run.options.issues
    ? "# Once a person approves the final PR, Forge sets it to auto-merge.\nfinal_pr: { auto_merge: true }\n"
    : "";
  const config = `# Forge configuration of the demo repository (see Forge's README for every field).\nmax_parallel_agents: 4\n# Retry a failed attempt at once (the default backs off 2 s, 4 s, …).\nretry_backoff: { base_seconds: 0, max_seconds: 0 }\n${autoMerge}${agentConfig}`;
  // Types 1 and 3 and the refineries: one session does everything (src/agent's "single" stage); with
  // the scripted agent type 2 runs its stages one session each, so a stalled attempt resumes from the
  // stage it stopped in.
  const type2 = run.agent === "scripted" ? "[implement, verify, walkthrough]" : "[single]";
  const stagesYml = `"1": [single]\n"2": ${type2}\n"3": [single]\nrefinery: [single]\n`;
  await sim.control.createRepo({
    owner: DEMO_OWNER,
    name: DEMO_REPO,
    files: {
      ...projectFiles(),
      ...(run.options.issues ? { ".github/workflows/test.yml": QUEUED_TEST_WORKFLOW } : {}),
      ".github/workflows/forge-agent.yml": workflow,
      ".github/forge.yml": config,
      ".forge/stages.yml": stagesYml,
    },
    collaborators: { [PERSON]: "write", [PUSHER]: "write" },
    // As README.md's setup asks: the runner opens each task's draft PR with the job's token.
    actionsMayCreatePullRequests: true,
  });
  sim.control.install(appId, DEMO_OWNER, [FULL]);
  // The installer's ruleset (README, "Protect the state branches"): only the App writes forge/*/_state.
  const ruleset = await sim.control.api(DEMO_OWNER, "POST", `/repos/${FULL}/rulesets`, stateBranchRuleset(appId));
  if (ruleset.status !== 201) throw new Error(`the demo repository's ruleset was refused: ${JSON.stringify(ruleset.body)}`);
}

/** The runners executing every dispatched job with the real Forge action (and the scripted model server for Claude Code). */
export async function startRunners(run: DemoRun, sim: Sim, user: Octokit): Promise<void> {
  const { options, stages, scratch } = run;
  let env: Record<string, string> = {};
  const captain: CaptainAnswer = (n, crId) =>
    n > stages.committed && n <= stages.overlays.length
      ? stages.captainFiles(n, crId)
      : `the plan folder has no overlay-${String(n).padStart(3, "0")} to answer ${crId} with`;
  if (run.agent === "claude") {
    const model = (run.services.model = await startModelServer({
      script: demoClaudeScript(12, captain),
    }));
    const home = path.join(scratch, "home");
    mkdirSync(home, { recursive: true });
    env = offlineClaudeEnv(model.url, home, {
      PATH: `${path.join(ROOT, "node_modules", ".bin")}${path.delimiter}${process.env.PATH ?? ""}`,
    });
    run.view.line(`        scripted model server ${model.url} (Claude Code's ANTHROPIC_BASE_URL)`);
  } else if (run.agent === "gemini") {
    const gemini = (run.services.gemini = await startGeminiServer({ script: demoGeminiScript(12, captain) }));
    const home = path.join(scratch, "home");
    mkdirSync(home, { recursive: true });
    // The runner's own Gemini settings (the session's home copies them): its own retries are the CLI's default.
    env = offlineGeminiEnv(
      gemini.url,
      home,
      { PATH: `${path.join(ROOT, "node_modules", ".bin")}${path.delimiter}${process.env.PATH ?? ""}` },
      { maxAttempts: 3 },
    );
    run.view.line(`        scripted Gemini API server ${gemini.url} (Gemini CLI's GOOGLE_GEMINI_BASE_URL)`);
  } else if (run.agent === "copilot") {
    env = await copilotEnv(run, captain);
  } else if (run.agent === "mixed") {
    env = await startMixedServers(run, captain, `${path.join(ROOT, "node_modules", ".bin")}${path.delimiter}${process.env.PATH ?? ""}`);
  } else if (run.agent === "opencode" || run.agent === "qwen") {
    const chat = (run.services.chat = await startChatServer({ script: demoChatScript(run.agent, 12, captain) }));
    const home = path.join(scratch, "home");
    mkdirSync(home, { recursive: true });
    const bins = [AGENT_CLIS_BIN, path.join(ROOT, "node_modules", ".bin"), process.env.PATH ?? ""];
    env = offlineChatEnv(chat.url, home, { PATH: bins.join(path.delimiter) });
    run.view.line(`        scripted Chat Completions server ${chat.url} (the job's OPENAI_BASE_URL)`);
  }
  mkdirSync(path.join(scratch, "runners"), { recursive: true });
  const executor = (run.services.executor = createSimExecutor({
    concurrency: options.runners ?? 4,
    workspaceRoot: path.join(scratch, "runners"),
    // FORGE_DEMO_DEBUG keeps every job's workspace (the path is printed at the end).
    keepWorkspaces: !!process.env.FORGE_DEMO_DEBUG,
    // The template says `uses: forge-dev/forge/action@v1`: served from this checkout's action/.
    localActions: { "forge-dev/forge/action": path.join(ROOT, "action") },
    secrets: { [FULL]: { ANTHROPIC_API_KEY: ANTHROPIC_SECRET, FORGE_PUSH_TOKEN: sim.control.userToken(PUSHER) } },
    env,
  }));
  // The project's CI (push, pull_request) has runners of its own, as on GitHub: its runs on every
  // push of the agents do not hold up the agents' jobs.
  const ciExecutor = (run.services.ciExecutor = createSimExecutor({
    concurrency: 2,
    workspaceRoot: path.join(scratch, "runners"),
    keepWorkspaces: !!process.env.FORGE_DEMO_DEBUG,
  }));
  sim.onWorkflowDispatch((d) => {
    // Only dispatches are Forge's jobs.
    if (d.event !== "workflow_dispatch") {
      run.jobs.ci++;
      return ciExecutor.handler(d);
    }
    const taskId = d.inputs.task_id ?? "";
    run.jobs.action++;
    const crId = parseCaptainId(taskId);
    if (crId) {
      // The Captain is the real action too; the person then reviews and merges its overlay PR.
      run.jobs.captain++;
      run.view.aside(`Captain ${taskId} dispatched: the Forge action writes an overlay for ${crId}`);
      if (captainHasAnswer(run, crId))
        run.reviews.push(
          reviewOverlay(run, user, d.ref.replace(/^refs\/heads\//, "")).catch(
            (e: unknown) => void run.problems.push(`overlay review: ${(e as Error).message}`),
          ),
        );
    }
    return executor.handler(d);
  });
}

/**
 * `--agent copilot`: the scripted Anthropic Messages server, which each job's model proxy forwards
 * Copilot CLI's requests to (its provider of its own, action/src/agent-access.ts), and the CLI the
 * person installed as `copilot` on the runners' PATH (the adapter starts `copilot`): a folder of its
 * own that an isolated agent's user can pass through, holding a link to it.
 */
async function copilotEnv(run: DemoRun, captain: CaptainAnswer): Promise<Record<string, string>> {
  const bin = copilotBinary();
  if (!bin) throw new Error("GitHub Copilot CLI is not installed: set FORGE_COPILOT_BIN to its binary (npm i -g @github/copilot@1.0.102)");
  const dir = mkdtempSync(path.join(tmpdir(), "forge-demo-copilot-"));
  chmodSync(dir, 0o755);
  symlinkSync(realpathSync(bin), path.join(dir, "copilot"));
  run.services.copilotBin = { dir, close: () => rmSync(dir, { recursive: true, force: true }) };
  const model = (run.services.model = await startModelServer({ script: demoCopilotScript(12, captain) }));
  const home = path.join(run.scratch, "home");
  mkdirSync(home, { recursive: true });
  // Where the CLI unpacks itself (~235 MB, once): shared by every job that is not isolated.
  const cache = path.join(tmpdir(), "forge-copilot-cache");
  mkdirSync(cache, { recursive: true });
  const PATH = [dir, path.join(ROOT, "node_modules", ".bin"), process.env.PATH ?? ""].join(path.delimiter);
  run.view.line(`        scripted model server ${model.url} (Anthropic Messages: each job's model proxy is Copilot CLI's provider)`);
  return offlineClaudeEnv(model.url, home, { PATH, XDG_CACHE_HOME: cache });
}

/** The person commits the plan: merging a plan with its dag.json to the default branch starts a run. */
export async function pushPlan(run: DemoRun, user: Octokit): Promise<void> {
  const { data: ref } = await user.rest.git.getRef({ owner: DEMO_OWNER, repo: DEMO_REPO, ref: "heads/main" });
  const { data: parent } = await user.rest.git.getCommit({ owner: DEMO_OWNER, repo: DEMO_REPO, commit_sha: ref.object.sha });
  const { data: tree } = await user.rest.git.createTree({
    owner: DEMO_OWNER,
    repo: DEMO_REPO,
    base_tree: parent.tree.sha,
    tree: Object.entries(run.stages.baseFiles).map(([p, content]) => ({
      path: p,
      mode: "100644" as const,
      type: "blob" as const,
      content,
    })),
  });
  const { data: commit } = await user.rest.git.createCommit({
    owner: DEMO_OWNER,
    repo: DEMO_REPO,
    message: `Add the plan ${run.stages.planId}`,
    tree: tree.sha,
    parents: [ref.object.sha],
  });
  await user.rest.git.updateRef({ owner: DEMO_OWNER, repo: DEMO_REPO, ref: "heads/main", sha: commit.sha });
  run.view.aside(`${PERSON} pushed the plan to main (${commit.sha.slice(0, 7)})`);
}
