/**
 * The Action's adapter to GitHub Actions: reads and validates inputs, environment and config, wires
 * the real dependencies (git, Octokit, the agent layer, the artifact service), calls `main`, sets
 * the outputs and the job summary, and owns the single `setFailed` (at the end of `run`).
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as core from "@actions/core";
import { Masker } from "../../src/agent/secrets.js";
import { agentAccess, missingKeyWarning } from "./agent-access.js";
import { CONFIG_PATH, parseConfigText } from "../../src/core/config.js";
import { exitMeaning, succeeded } from "../../src/core/exit-codes.js";
import { JOURNAL_FILE, PLAN_RUN_ID, stateBranch } from "../../src/core/layout.js";
import { formatProblem, zodProblems } from "../../src/core/problems.js";
import { defaultConfig, forgeConfigSchema, type ForgeConfig } from "../../src/core/schemas/config.js";
import type { AgentRunner } from "./agent-runner.js";
import { Git } from "./git.js";
import { createOctokitGitHub, type JobGitHub } from "./github.js";
import { actionInputSchema, describeIssues, ENV_NAMES, INPUT_NAMES, jobEnvSchema, type ActionInput, type JobEnv } from "./inputs.js";
import { main, type JobReport } from "./main.js";
import { createStagesRunner } from "./stages-runner.js";
import { modelPlan, onAnthropicApi } from "../../src/core/tiers.js";

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

function parsedConfig(text: string | undefined, where: string): ForgeConfig {
  const read = parseConfigText(text);
  if (!read.ok) throw new ConfigError(`${where} is invalid:\n${read.problems.map((p) => `- ${formatProblem(p)}`).join("\n")}`);
  return read.config;
}

const STRICTNESS = { none: 0, auto: 1, user: 2 } as const;

/**
 * The agent's time limits from the config: a session's idle limit, the whole agent's wall clock
 * (shared by its stages) and one stage session's own limit, past which it is stopped and its stage
 * tried once more (docs/runner.md#stage-rules).
 */
export function agentLimits(config: ForgeConfig): { idleTimeoutMs: number; timeoutMs: number; stageTimeoutMs: number } {
  return {
    idleTimeoutMs: config.timeouts.idle_minutes * 60_000,
    timeoutMs: config.timeouts.agent_minutes * 60_000,
    stageTimeoutMs: config.timeouts.stage_minutes * 60_000,
  };
}

/**
 * What the job takes from a run's pinned config for how the agent runs — `adapter`, `command` and
 * `isolation` — is only what `.github/forge.yml` on the default branch allows: the job cannot check
 * the journal's seal (the key is the App's), and a journal planted on a state branch would otherwise
 * choose the program the runner starts and whether it runs as the runner (docs/runner.md#pinned-config).
 * A different adapter or command is refused; a looser isolation is raised to the default branch's.
 */
export function allowedByDefaultBranch(pinned: ForgeConfig, allowed: ForgeConfig): ForgeConfig {
  const where = `the run's pinned config (${stateBranch("<run>")}:${JOURNAL_FILE})`;
  const rule = "the job takes the agent's adapter, command and isolation only as .github/forge.yml on the default branch allows";
  if (pinned.agent.adapter !== allowed.agent.adapter)
    throw new ConfigError(
      `${where} asks for adapter '${pinned.agent.adapter}', and the default branch's ${CONFIG_PATH} says '${allowed.agent.adapter}': ${rule}. Start the run again after changing the default branch's config.`,
    );
  if ((pinned.agent.command ?? "") !== (allowed.agent.command ?? ""))
    throw new ConfigError(
      `${where} asks for the agent command ${JSON.stringify(pinned.agent.command ?? "")}, and the default branch's ${CONFIG_PATH} says ${JSON.stringify(allowed.agent.command ?? "")}: ${rule}. Start the run again after changing the default branch's config.`,
    );
  const isolation =
    STRICTNESS[pinned.agent.isolation] >= STRICTNESS[allowed.agent.isolation] ? pinned.agent.isolation : allowed.agent.isolation;
  return isolation === pinned.agent.isolation ? pinned : { ...pinned, agent: { ...pinned.agent, isolation } };
}

/**
 * The config the run pinned, never the checkout's: any job's token can push `.github/forge.yml` to a
 * task branch before this job checks it out (docs/runner.md#pinned-config). A run's is the stored
 * run's `config` in its journal file (what the App pinned at the start), else the file at the run's
 * plan commit — either held to what the default branch's allows for the agent
 * (`allowedByDefaultBranch`); a plan Captain, which has no run, reads the default branch's.
 */
export async function loadPinnedConfig(github: JobGitHub, runId: string): Promise<ForgeConfig> {
  const defaults = async () => parsedConfig(await github.readFile(CONFIG_PATH, ""), `${CONFIG_PATH} of the default branch`);
  if (PLAN_RUN_ID.test(runId)) return defaults();
  return allowedByDefaultBranch(await runConfig(github, runId), await defaults());
}

async function runConfig(github: JobGitHub, runId: string): Promise<ForgeConfig> {
  const text = await github.readFile(JOURNAL_FILE, stateBranch(runId));
  let stored: { config?: unknown; journal?: { planCommit?: unknown }; planCommit?: unknown } = {};
  try {
    stored = text === undefined ? {} : (JSON.parse(text) as typeof stored);
  } catch {
    // The dispatch check names a broken journal; the config falls back to the defaults meanwhile.
  }
  if (stored && typeof stored === "object" && stored.config !== undefined) {
    const pinned = forgeConfigSchema.safeParse(stored.config);
    if (!pinned.success)
      throw new ConfigError(
        `the config pinned in ${stateBranch(runId)}:${JOURNAL_FILE} is invalid: ${formatProblem(zodProblems(pinned.error, "config")[0]!)}`,
      );
    return pinned.data;
  }
  const planCommit = stored?.journal?.planCommit ?? stored?.planCommit;
  if (typeof planCommit === "string" && /^[0-9a-f]{40}$/.test(planCommit))
    return parsedConfig(
      await github.readFile(CONFIG_PATH, planCommit),
      `${CONFIG_PATH} at the run's plan commit ${planCommit.slice(0, 7)}`,
    );
  return defaultConfig();
}

export interface RunOverrides {
  env?: NodeJS.ProcessEnv;
  github?: JobGitHub;
  agent?: AgentRunner;
}

function readInputs(): Record<string, string> {
  return Object.fromEntries(Object.entries(INPUT_NAMES).map(([key, name]) => [key, core.getInput(name)]));
}

/** Where the bundled built-in prompts are (copied beside dist/index.js by the build). */
function bundledPromptDir(): string | undefined {
  const dir = fileURLToPath(new URL("./prompts/", import.meta.url));
  return existsSync(path.join(dir, "1.md")) ? dir : undefined;
}

/** The bundled `forge` command (dist/forge.js) for agents' `forge spawn`, when it is there. */
export function bundledForgeCli(): { command: string; args: string[] } | undefined {
  const file = fileURLToPath(new URL("./forge.js", import.meta.url));
  return existsSync(file) && path.basename(path.dirname(file)) === "dist" ? { command: process.execPath, args: [file] } : undefined;
}

/** The action's inputs and the job's environment, checked: a clear error names what is missing. */
function readJob(env: NodeJS.ProcessEnv): { input: ActionInput; jobEnv: JobEnv } {
  const parsedInput = actionInputSchema.safeParse(readInputs());
  if (!parsedInput.success)
    throw new ConfigError(`The Forge action's inputs are invalid:\n${describeIssues(parsedInput.error, INPUT_NAMES)}`);
  const parsedEnv = jobEnvSchema.safeParse({
    repository: env.GITHUB_REPOSITORY,
    serverUrl: env.GITHUB_SERVER_URL,
    apiUrl: env.GITHUB_API_URL,
    graphqlUrl: env.GITHUB_GRAPHQL_URL || undefined,
    workspace: env.GITHUB_WORKSPACE,
    runnerTemp: env.RUNNER_TEMP,
    workflowRunId: env.GITHUB_RUN_ID || undefined,
    actionsRuntimeToken: env.ACTIONS_RUNTIME_TOKEN || undefined,
  });
  if (!parsedEnv.success)
    throw new ConfigError(`The job environment is incomplete:\n${describeIssues(parsedEnv.error, ENV_NAMES, (name) => name)}`);
  return { input: parsedInput.data, jobEnv: parsedEnv.data };
}

export async function run(overrides: RunOverrides = {}): Promise<void> {
  const env = overrides.env ?? process.env;
  const jobStartedAt = Date.now();
  let failure: string | undefined;
  let jobGit: Git | undefined; // its private folder in the runner's temp folder goes however the job ends
  try {
    const { input, jobEnv } = readJob(env);

    const masker = new Masker()
      .add(input.githubToken)
      .add(input.anthropicApiKey)
      .add(input.openaiApiKey)
      .add(input.geminiApiKey)
      .add(jobEnv.actionsRuntimeToken);
    for (const v of masker.values()) core.setSecret(v);

    const [owner, repo] = jobEnv.repository.split("/") as [string, string];
    const github = overrides.github ?? createOctokitGitHub({ token: input.githubToken, baseUrl: jobEnv.apiUrl, owner, repo });
    const config = await loadPinnedConfig(github, input.runId);
    // The attempt's agent when its dispatch names one (a task's or its kind's, or the next of its
    // fallback list: docs/runner.md#agents-per-task) — only ever an adapter's name, checked by the
    // input's schema, and held to the journal by the checkout; else the action's input, else the config's.
    const adapter = input.context.agent?.adapter ?? input.adapter ?? config.agent.adapter;
    const model = input.model ?? config.agent.model;
    const command = input.command ?? config.agent.command;
    if (adapter === "command" && !command)
      throw new ConfigError("adapter 'command' needs a command: set the action input 'command' or agent.command in .github/forge.yml");
    const effective: ForgeConfig = {
      ...config,
      agent: { ...config.agent, adapter, ...(model ? { model } : {}), ...(command ? { command } : {}) },
    };

    // Fetches and pushes go to the repository GitHub says this job runs for, never to `origin`
    // (the agent can re-point it), from a repository of the runner's own outside the work tree.
    const remote = `${jobEnv.serverUrl.replace(/\/$/, "")}/${jobEnv.repository}.git`;
    const git = new Git({
      dir: jobEnv.workspace,
      remote,
      token: input.githubToken,
      identity: { name: input.gitUserName, email: input.gitUserEmail },
      netDir: path.join(jobEnv.runnerTemp, `forge-git-${process.pid}`, "net.git"),
      tempDir: jobEnv.runnerTemp,
      // A network blip is waited out (2 s, 60 s cap, 5 tries, jitter); a refusal fails at once.
      onRetry: (r) =>
        core.warning(
          `git ${r.command} failed (try ${r.attempt} of ${r.attempts}), trying again in ${(r.delayMs / 1000).toFixed(1)} s: ${r.error.split("\n").slice(-3).join(" ")}`,
        ),
    });
    jobGit = git;
    await ensureRepository(git, remote);

    warnMissingKeys(adapter, input, env, config.agent.long_context);
    // The agent gets nothing of the job's credentials: the model through the runner's proxy, and
    // its own OS user when it can have one (removed with every process of it by `access.close()`).
    const access = await agentAccess({
      adapter,
      isolation: config.agent.isolation,
      env,
      ...(input.anthropicApiKey ? { anthropicApiKey: input.anthropicApiKey } : {}),
      ...(input.openaiApiKey ? { openaiApiKey: input.openaiApiKey } : {}),
      ...(input.geminiApiKey ? { geminiApiKey: input.geminiApiKey } : {}),
      warn: (m) => core.warning(m),
    });
    if (access.runAs) core.info(`The agent runs as the OS user ${access.runAs.user} (uid ${access.runAs.uid}).`);
    const promptDir = bundledPromptDir();
    const forgeCli = bundledForgeCli();
    const agent =
      overrides.agent ??
      createStagesRunner({
        adapter,
        ...(model ? { model } : {}),
        // Each session's model by its role and tier; the action's `model` input stands for agent.model.
        models: modelPlan(adapter, { ...config.agent, ...(model ? { model } : {}) }, { anthropicApi: onAnthropicApi(env) }),
        ...(command ? { command } : {}),
        maxTurns: config.agent.max_turns,
        maxDepth: config.agent.max_depth,
        maxSubAgents: config.agent.max_sub_agents,
        ...agentLimits(config),
        env: access.env,
        extraEnv: access.extraEnv,
        ...(access.modelSession ? { modelSession: access.modelSession } : {}),
        ...(access.runAs ? { runAs: access.runAs } : {}),
        masker,
        ...(promptDir ? { builtinPromptDir: promptDir } : {}),
        ...(forgeCli ? { forgeCli } : {}),
        git: git.forStages(),
      });

    // GitHub cancels a step with SIGINT, then SIGTERM 7.5 s later, then kills the tree 2.5 s after
    // that (docs.github.com/actions/reference/workflow-cancellation-reference): ten seconds to
    // commit and push what the agent left.
    const cancel = new AbortController();
    const onSignal = () => cancel.abort();
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);

    // The artifact service is there only inside a real Actions job (ACTIONS_RUNTIME_TOKEN and
    // ACTIONS_RESULTS_URL are set for actions, not for `run:` steps).
    const uploadArtifact =
      env.ACTIONS_RUNTIME_TOKEN && env.ACTIONS_RESULTS_URL
        ? async (name: string, rootDir: string, files: string[]) => {
            const { DefaultArtifactClient } = await import("@actions/artifact");
            await new DefaultArtifactClient().uploadArtifact(name, files, rootDir, { retentionDays: 30 });
          }
        : undefined;

    const jobUrl = jobEnv.workflowRunId
      ? `${jobEnv.serverUrl.replace(/\/$/, "")}/${jobEnv.repository}/actions/runs/${jobEnv.workflowRunId}`
      : undefined;
    let report: JobReport;
    try {
      report = await main({
        config: effective,
        input: {
          runId: input.runId,
          taskId: input.taskId,
          attempt: input.attempt,
          context: input.context,
          repository: jobEnv.repository,
          serverUrl: jobEnv.serverUrl,
          workspace: jobEnv.workspace,
          tempDir: jobEnv.runnerTemp,
          ...(jobUrl ? { jobUrl } : {}),
          jobStartedAt,
          ...(env.GITHUB_ACTOR ? { dispatchedBy: env.GITHUB_ACTOR } : {}),
        },
        deps: {
          github,
          git,
          agent,
          log: { info: (m) => core.info(m), warning: (m) => core.warning(m) },
          ...(uploadArtifact ? { uploadArtifact } : {}),
          cancel: cancel.signal,
          masker,
          ...(access.proxy ? { modelUsage: access.proxy.usage, modelGate: access.proxy.gate } : {}),
        },
      });
    } finally {
      process.removeListener("SIGINT", onSignal);
      process.removeListener("SIGTERM", onSignal);
      await access.close();
    }

    failure = await reportOutcome(report, input);
  } catch (err) {
    failure = err instanceof Error ? err.message : String(err);
  }
  jobGit?.close();
  if (failure !== undefined) core.setFailed(failure);
}

/** The warnings a job gets when its agent cannot reach a model: no key for its adapter, or a long context it cannot have. */
function warnMissingKeys(adapter: ForgeConfig["agent"]["adapter"], input: ActionInput, env: NodeJS.ProcessEnv, longContext: boolean): void {
  const missing = missingKeyWarning(adapter, input, env);
  if (missing) core.warning(missing);
  if (longContext && adapter === "claude" && !onAnthropicApi(env))
    core.warning(
      "agent.long_context is on, but Claude Code does not talk to Anthropic's API here (ANTHROPIC_BASE_URL, Vertex or Bedrock): the 1M-token context stays off.",
    );
}

/** Sets the outputs and the job summary of a report; returns why the job failed, if it did. */
async function reportOutcome(report: JobReport, input: ActionInput): Promise<string | undefined> {
  if (report.kind === "neutral") {
    core.notice(`Forge: nothing to do — ${report.reason}.`);
    setOutputs({ "exit-code": "", "head-sha": "", "result-path": "", "pr-number": "", neutral: "true" });
    await writeSummary(report.summary);
    return undefined;
  }
  if (report.kind === "captain") {
    setOutputs({
      "exit-code": String(report.exitCode),
      "head-sha": report.headSha ?? "",
      "result-path": "",
      "pr-number": report.prNumber !== undefined ? String(report.prNumber) : "",
      neutral: "false",
    });
    for (const w of report.warnings) core.warning(w);
    await writeSummary(report.summary);
    if (!succeeded(report.exitCode))
      return `The Captain of ${input.taskId} ended with exit ${report.exitCode} (${exitMeaning(report.exitCode)})${report.error ? `: ${report.error}` : ""}`;
    return undefined;
  }
  setOutputs({
    "exit-code": String(report.exitCode),
    "head-sha": report.headSha,
    "result-path": report.resultPath,
    "pr-number": report.prNumber !== undefined ? String(report.prNumber) : "",
    neutral: "false",
  });
  for (const w of report.warnings) core.warning(w);
  core.info(`Forge timings (ms): ${JSON.stringify(report.timings)}`);
  await writeSummary(report.summary);
  if (!succeeded(report.exitCode)) {
    return `Attempt ${input.attempt} of ${input.taskId} ended with exit ${report.exitCode} (${exitMeaning(report.exitCode)})${report.result.error ? `: ${report.result.error}` : ""}`;
  }
  return undefined;
}

function setOutputs(outputs: Record<string, string>): void {
  for (const [k, v] of Object.entries(outputs)) core.setOutput(k, v);
}

async function writeSummary(markdown: string): Promise<void> {
  if (!process.env.GITHUB_STEP_SUMMARY) return;
  // The job summary holds at most 1 MiB per step; the attempt's summary is a few kilobytes.
  await core.summary.addRaw(markdown, true).write();
}

/** The workspace is normally actions/checkout's; without one, an empty repository with the origin is enough. */
async function ensureRepository(git: Git, remoteUrl: string): Promise<void> {
  const inside = await git.run(["rev-parse", "--is-inside-work-tree"], { allowFail: true });
  if (inside.code !== 0) await git.run(["init", "--quiet"]);
  const origin = await git.run(["remote", "get-url", "origin"], { allowFail: true });
  if (origin.code !== 0) await git.run(["remote", "add", "origin", remoteUrl]);
}
