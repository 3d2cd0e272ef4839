/**
 * The action's job run in a world (./world.ts), written once: through its `main` (the dispatch's
 * input and the job's dependencies as data), or through its runner as the workflow starts it (the
 * `INPUT_*` and `GITHUB_*` environment, the output and summary files), with the agents tests give it.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, beforeEach, vi } from "vitest";
import { createCommandRunner, type AgentRunner } from "../../action/src/agent-runner.js";
import { main, type JobReport, type MainDeps, type MainInput } from "../../action/src/main.js";
import { createStagesRunner, type StagesRunnerOptions } from "../../action/src/stages-runner.js";
import type { ForgeConfig } from "../../src/core/schemas/config.js";
import { Masker } from "../../src/agent/secrets.js";
import { RUN, scriptAgent, testConfig, type World } from "./world.js";

export const REPOSITORY = "acme/demo";
export const SERVER_URL = "https://github.example";
export const API_URL = "https://github.example/api/v3";
/** The workflow run's page, as the runner links it (GITHUB_SERVER_URL/…/actions/runs/GITHUB_RUN_ID). */
export const JOB_URL = `${SERVER_URL}/${REPOSITORY}/actions/runs/9`;
export const GIT_USER = {
  "git-user-name": "github-actions[bot]",
  "git-user-email": "41898282+github-actions[bot]@users.noreply.github.com",
};

/** The dispatch's input of a job in the world: task t1's attempt 1 of run r1 on acme/demo, without context. */
export function jobInput(w: World, input: Partial<MainInput> = {}): MainInput {
  return {
    runId: RUN,
    taskId: "t1",
    attempt: 1,
    context: {},
    repository: REPOSITORY,
    serverUrl: SERVER_URL,
    workspace: w.workspace,
    tempDir: w.temp,
    ...input,
  };
}

/** One job through the action's real `main`: the world's GitHub and git, `agent`, the test config unless given. */
export function runJob(
  w: World,
  agent: AgentRunner,
  opts: { config?: ForgeConfig; input?: Partial<MainInput>; deps?: Partial<MainDeps> } = {},
): Promise<JobReport> {
  return main({
    config: opts.config ?? testConfig(),
    input: jobInput(w, opts.input),
    deps: { github: w.github, git: w.git, agent, ...opts.deps },
  });
}

/** Only PATH and HOME of this process: what a test's agent needs to run a shell script. */
export const agentEnv = (home = process.env.HOME ?? "/tmp") => ({ PATH: process.env.PATH ?? "", HOME: home });

/** A one-stage agent running the shell `script`, written as `<name>.sh` in the world's folder. */
export function commandAgent(w: World, script: string, opts: { name?: string; env?: Record<string, string> } = {}): AgentRunner {
  return createCommandRunner({ command: scriptAgent(w, opts.name ?? "agent", script), env: opts.env ?? agentEnv(), killGraceMs: 200 });
}

/** The action's own stages runner with the command adapter running `command`, and the limits of tests. */
export function stagesAgent(command: string, overrides: Partial<StagesRunnerOptions> = {}): AgentRunner {
  return createStagesRunner({
    adapter: "command",
    command,
    maxTurns: 10,
    maxDepth: 3,
    idleTimeoutMs: 60_000,
    timeoutMs: 120_000,
    env: agentEnv(),
    extraEnv: {},
    masker: new Masker(),
    builtinPromptDir: path.resolve("src/agent/prompts"),
    ...overrides,
  });
}

/** One task job (`t1`, attempt 1) through the action's real `main`, its agent a shell `script`; the attempt's report. */
export async function runScriptJob(w: World, name: string, script: string) {
  const report = await runJob(w, commandAgent(w, script, { name, env: agentEnv(w.dir) }), { input: { jobUrl: JOB_URL } });
  if (report.kind !== "attempt") throw new Error(report.kind);
  return report;
}

/**
 * A "server" the runner fetches from and pushes to as GITHUB_SERVER_URL/GITHUB_REPOSITORY.git (it
 * never uses `origin`): a folder in the world holding acme/demo.git, the world's bare repository.
 */
export function serveOrigin(w: World): string {
  const server = path.join(w.dir, "server");
  mkdirSync(path.join(server, "acme"), { recursive: true });
  symlinkSync(w.origin, path.join(server, "acme", "demo.git"));
  return pathToFileURL(server).href;
}

/**
 * The process the workflow starts the action's runner in, for the tests of a file (call it at the
 * top level): `process.env` and `process.exitCode` restored after each test, stdout — where
 * `@actions/core` writes its commands (add-mask, outputs) — captured into `out`, and one step summary
 * file for the whole file, emptied before each test (`@actions/core` keeps the first path it is given).
 */
export function runnerProcess(): { out: string[]; summaryFile: string; summary(): string } {
  const saved = { ...process.env };
  const out: string[] = [];
  const summaryDir = mkdtempSync(path.join(tmpdir(), "forge-runner-"));
  const summaryFile = path.join(summaryDir, "summary.md");
  beforeEach(() => {
    out.length = 0;
    writeFileSync(summaryFile, "");
    vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
      out.push(String(chunk));
      return true;
    });
  });
  afterEach(() => {
    vi.restoreAllMocks();
    process.env = { ...saved };
    process.exitCode = undefined;
  });
  afterAll(() => rmSync(summaryDir, { recursive: true, force: true }));
  return { out, summaryFile, summary: () => readFileSync(summaryFile, "utf8") };
}

/** The action's inputs as the runner passes them to it: `INPUT_<NAME>` in the environment. */
export function setInputs(inputs: Record<string, string>): void {
  for (const [k, v] of Object.entries(inputs)) process.env[`INPUT_${k.toUpperCase()}`] = v;
}

/**
 * The environment the workflow gives the runner (`run()` reads `process.env`): each input as
 * `INPUT_<NAME>`, the runner's `GITHUB_*` variables (`env` adds or replaces some), the step summary
 * at `summaryFile`, and an empty output file in the world, whose path it returns.
 */
export function workflowEnv(w: World, inputs: Record<string, string>, summaryFile: string, env: Record<string, string> = {}): string {
  const outputFile = path.join(w.dir, "output.txt");
  writeFileSync(outputFile, "");
  setInputs(inputs);
  Object.assign(process.env, {
    GITHUB_REPOSITORY: REPOSITORY,
    GITHUB_SERVER_URL: SERVER_URL,
    GITHUB_API_URL: API_URL,
    GITHUB_WORKSPACE: w.workspace,
    RUNNER_TEMP: w.temp,
    GITHUB_OUTPUT: outputFile,
    GITHUB_STEP_SUMMARY: summaryFile,
    GITHUB_RUN_ID: "77",
    ...env,
  });
  return outputFile;
}
