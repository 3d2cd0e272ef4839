/**
 * What every job kind takes and gives back: the job's input (the dispatch and where it runs), its
 * dependencies (GitHub, git, the agent, the clock, the log), and its report for the runner.
 */
import type { ModelUsage } from "../../src/agent/model-usage.js";
import type { Masker } from "../../src/agent/secrets.js";
import type { AgentResult } from "../../src/core/schemas/agent-result.js";
import type { ForgeConfig } from "../../src/core/schemas/config.js";
import type { AgentRunner } from "./agent-runner.js";
import type { CaptainReport } from "./captain/index.js";
import type { Git } from "./git.js";
import type { JobGitHub } from "./github.js";
import type { DispatchContext } from "./inputs.js";
import type { Refusal } from "./protected-paths.js";

export interface MainInput {
  runId: string;
  taskId: string;
  attempt: number;
  context: DispatchContext;
  /** owner/name */
  repository: string;
  serverUrl: string;
  /** The checkout (GITHUB_WORKSPACE). */
  workspace: string;
  /** Where the session folder goes (RUNNER_TEMP): outside the work tree. */
  tempDir: string;
  /** Link to this workflow run, for the PR and summary. */
  jobUrl?: string;
  /** When the job started (epoch ms): a cancel near the job's time limit is a timeout. */
  jobStartedAt?: number;
  /**
   * Who dispatched this workflow run (GITHUB_ACTOR): the App's bot (`<slug>[bot]`) for the jobs it
   * starts. Steering counts only in comments this account wrote (docs/runner.md#steering).
   */
  dispatchedBy?: string;
}

/** Where a job logs: the workflow log's lines and warnings (the App's `Logger` is another, structured one). */
export interface JobLogger {
  info(message: string): void;
  warning(message: string): void;
}

export interface MainDeps {
  github: JobGitHub;
  /** Git over the workspace, authenticated with the job token. */
  git: Git;
  agent: AgentRunner;
  now?: () => number;
  log?: JobLogger;
  /** Uploads the session folder as a workflow artifact; absent when the artifact service is not available. */
  uploadArtifact?: (name: string, rootDir: string, files: string[]) => Promise<void>;
  /** Aborted when the job is cancelled (SIGINT/SIGTERM from the runner). */
  cancel?: AbortSignal;
  /**
   * The job's secrets (its token, the model keys): everything the job publishes is masked with it
   * (publish.ts). Without one, token shapes are still masked.
   */
  masker?: Masker;
  /** The shortest time between two updates of the live check run (default 30 s; tests shorten it). */
  liveCheckIntervalMs?: number;
  /** What the runner's model proxy has read of the model's answers so far (its token usage). */
  modelUsage?: () => ModelUsage;
}

/** A job's arguments: the effective config, the input, the dependencies. */
export interface JobArgs {
  config: ForgeConfig;
  input: MainInput;
  deps: MainDeps;
}

export interface Timings {
  /** Checkout of the task branch, context, draft PR: before the agent starts. */
  beforeAgentMs: number;
  agentMs: number;
  /** Commits, push, PR update: after the agent ends. */
  afterAgentMs: number;
  /** From the agent's last progress to its kill (stall) and to the push of its partial work. */
  stallDetectedAfterMs?: number;
  partialPushedAfterMs?: number;
  /** Milliseconds from the job's start at the end of each step. */
  steps?: Record<string, number>;
}

export interface NeutralReport {
  kind: "neutral";
  reason: string;
  summary: string;
}

export interface AttemptReport {
  kind: "attempt";
  exitCode: number;
  result: AgentResult;
  branch: string;
  /** The record commit: the branch head after the push. */
  headSha: string;
  workSha?: string;
  resultPath: string;
  prNumber?: number;
  prUrl?: string;
  refusals: Refusal[];
  warnings: string[];
  summary: string;
  timings: Timings;
  /** Progress pushes made at stage ends (before the final push). */
  progressPushes: number;
  /** Every push of the task branch this job made (start commit, progress, record). */
  pushes: number;
}

export type JobReport = NeutralReport | CaptainReport | AttemptReport;

export class JobError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "JobError";
  }
}

export const NO_LOG: JobLogger = { info: () => {}, warning: () => {} };

/** This dispatch is no longer current (or its attempt already ended): the job changes nothing. */
export function neutralReport(
  log: JobLogger,
  heading: string,
  reason: string,
  tail = " This dispatch is no longer current, so the job changed nothing.",
): NeutralReport {
  log.info(`Nothing to do: ${reason}.`);
  return { kind: "neutral", reason, summary: `### ${heading}\n\nNothing to do: ${reason}.${tail}\n` };
}
