/**
 * What the job pipeline needs from the agent layer: run an agent type's stage sequence in a work
 * tree and report how it ended. `src/agent`'s `runStages` is the production implementation
 * (`createStagesRunner` in stages-runner.ts); `createCommandRunner` runs any executable as a single
 * stage, for tests and for the simplest installs. `main` depends on this interface only.
 */
import { spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { Masker } from "../../src/agent/secrets.js";
import type { SubAgentSummary } from "../../src/agent/sub-agents.js";
import type { RunStagesOptions, SentinelVerdict, StageModel, StageProgress, TaskContext } from "../../src/agent/stages/index.js";
import { EXIT_CODES, isExitCode } from "../../src/core/exit-codes.js";
import type { AgentType } from "../../src/core/schemas/common.js";

/** The task context of a job: the agent layer's, with the title, the branch and its base always known. */
export type JobTaskContext = TaskContext & Required<Pick<TaskContext, "title" | "branch" | "baseRef">>;

/** One line of progress: any sign that the agent is working. */
export interface Progress {
  summary: string;
  kind?: string;
  /** The stage (session name) it comes from, a tool's name and the session's assistant turns so far, when known. */
  stage?: string;
  tool?: string;
  turn?: number;
  /** The session's cost so far (Claude Code), or one turn's tokens (Codex), as the adapter reported them. */
  costUsd?: number;
  tokens?: { input: number; output: number };
}

export interface AgentRunRequest {
  /** A plan node's type, or the Captain (a `_captain-<crId>` dispatch). */
  agentType: AgentType | "captain";
  taskContext: JobTaskContext;
  /** The checkout the agent works in. */
  workdir: string;
  /** Outside the work tree: transcript, events, signals, manifest, reports. Committed in the record folder. */
  sessionDir: string;
  /** Where the agent must write its walkthrough (inside sessionDir). */
  walkthroughPath: string;
  /** The task's own `model` (front matter): its implementer sessions' tier or model id (docs/runner.md#model-tiers). */
  taskModel?: string;
  /** Aborted by the pipeline on a stall, a timeout or a cancel: the agent must be stopped promptly. */
  signal: AbortSignal;
  onProgress(p: Progress): void;
  /**
   * Awaited when a stage of the sequence ends (no agent running): the pipeline pushes the work so far
   * and writes a checkpoint of where the sequence stands (`progress`).
   */
  onStageEnd?(stage: string, progress?: StageProgress): Promise<void>;
  /** A resumed attempt (docs/executor.md#resuming): the stage to start at and the agent session to continue. */
  resume?: RunStagesOptions["resume"];
  /** The attempt's span (W3C traceparent), for the agent's environment when telemetry is on. */
  traceparent?: string;
  /** Where the agent may report its spend (`FORGE_SPEND_FILE`, docs/runner.md#budgets). */
  spendFile?: string;
  /** The task sentinel after the task's own stages (docs/runner.md#the-task-sentinel): the config's, or the task's own. */
  sentinel?: RunStagesOptions["sentinel"];
}

export interface AgentRunOutcome {
  /** Exit code (see docs/runner.md#exit-codes). */
  exitCode: number;
  /** Stage manifest (see docs/formats.md#stage-manifest), if the runner wrote one. */
  manifestPath?: string;
  walkthroughPath?: string;
  changeRequestPath?: string;
  question?: string;
  refinement?: string;
  rateLimitedUntil?: string;
  error?: string;
  agent?: string;
  model?: string;
  /** The model of each stage, as the agent layer chose it (docs/runner.md#model-tiers). */
  models?: StageModel[];
  costUsd?: number;
  turns?: number;
  /** Where the stage sequence stopped, for the attempt's last checkpoint (a runner without stages has none). */
  progress?: StageProgress;
  /** The task sentinel's verdict, when it ran to one (result.json's `sentinel`). */
  sentinel?: SentinelVerdict;
  /** Sub-agents against the job's cap (src/agent/sub-agents.ts), when the runner keeps one. */
  subAgents?: SubAgentSummary;
}

export interface AgentRunner {
  /** Adapter name, recorded in trailers and results (claude, codex, gemini, opencode, qwen, copilot, command). */
  readonly name: string;
  run(request: AgentRunRequest): Promise<AgentRunOutcome>;
}

export interface CommandRunnerOptions {
  /** A shell command line; run with `sh -c` in the work tree. */
  command: string;
  /** Environment of the agent (no tokens!). FORGE_* variables are added. */
  env: Record<string, string>;
  masker?: Masker;
  /** SIGTERM → SIGKILL delay when stopped (default 2 s). */
  killGraceMs?: number;
}

/**
 * Any executable as a one-stage agent: environment in, exit code and files out. Its output lines are
 * its progress; they go, masked, to `<sessionDir>/transcript.log`. It runs as this process's user,
 * with no isolation: the action never uses it (its `command` adapter goes through `createStagesRunner`,
 * which runs it as the job's agent user); tests do.
 */
export function createCommandRunner(options: CommandRunnerOptions): AgentRunner {
  return {
    name: "command",
    async run(req) {
      await mkdir(req.sessionDir, { recursive: true });
      const reports = {
        FORGE_WALKTHROUGH_PATH: req.walkthroughPath,
        FORGE_QUESTION_FILE: path.join(req.sessionDir, "question.md"),
        FORGE_CHANGE_REQUEST_FILE: path.join(req.sessionDir, "change-request.md"),
        FORGE_REFINEMENT_FILE: path.join(req.sessionDir, "refinement.md"),
        FORGE_SIGNAL_DIR: path.join(req.sessionDir, ".signals"),
      };
      const taskFile = path.join(req.sessionDir, "task.md");
      const env: Record<string, string> = {
        ...options.env,
        ...reports,
        FORGE_SESSION_DIR: req.sessionDir,
        FORGE_RUN_ID: req.taskContext.runId,
        FORGE_TASK_ID: req.taskContext.taskId,
        FORGE_ATTEMPT: String(req.taskContext.attempt),
        FORGE_AGENT_TYPE: req.agentType,
        FORGE_TASK_FILE: taskFile,
        FORGE_PROMPT_FILE: path.join(req.sessionDir, "context.md"),
        FORGE_BRANCH: req.taskContext.branch,
        FORGE_BASE_REF: req.taskContext.baseRef,
        ...(req.spendFile ? { FORGE_SPEND_FILE: req.spendFile } : {}),
      };
      const transcriptPath = path.join(req.sessionDir, "transcript.log");
      const transcript = createWriteStream(transcriptPath, { flags: "a" });
      const mask = (s: string) => (options.masker ? options.masker.mask(s) : s);
      const startedAt = Date.now();

      const exitCode = await new Promise<number>((resolve) => {
        // detached: its own process group, so a stop reaches everything it started.
        const child = spawn("sh", ["-c", options.command], { cwd: req.workdir, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
        let stopped = false;
        const stop = () => {
          if (stopped || child.exitCode !== null) return;
          stopped = true;
          killGroup(child.pid, "SIGTERM");
          setTimeout(() => killGroup(child.pid, "SIGKILL"), options.killGraceMs ?? 2000).unref();
        };
        if (req.signal.aborted) stop();
        req.signal.addEventListener("abort", stop, { once: true });
        const lines = (stream: NodeJS.ReadableStream, kind: string) => {
          let buf = "";
          stream.setEncoding("utf8");
          stream.on("data", (chunk: string) => {
            buf += chunk;
            let i: number;
            while ((i = buf.indexOf("\n")) >= 0) {
              const line = mask(buf.slice(0, i));
              buf = buf.slice(i + 1);
              transcript.write(`${JSON.stringify({ t: Date.now() - startedAt, stream: kind, line })}\n`);
              req.onProgress({ summary: line.slice(0, 200), kind });
            }
          });
          stream.on("end", () => {
            if (buf) {
              const line = mask(buf);
              transcript.write(`${JSON.stringify({ t: Date.now() - startedAt, stream: kind, line })}\n`);
              req.onProgress({ summary: line.slice(0, 200), kind });
            }
          });
        };
        lines(child.stdout, "stdout");
        lines(child.stderr, "stderr");
        child.on("error", (err) => {
          transcript.write(`${JSON.stringify({ t: Date.now() - startedAt, stream: "runner", line: `failed to start: ${err.message}` })}\n`);
          resolve(EXIT_CODES.FAILURE);
        });
        child.on("close", (code, sig) => {
          req.signal.removeEventListener("abort", stop);
          // The group may hold children that outlived the leader.
          killGroup(child.pid, "SIGKILL");
          resolve(code ?? (sig ? EXIT_CODES.INTERRUPTED : EXIT_CODES.FAILURE));
        });
      });
      await new Promise<void>((r) => transcript.end(r));
      const known = isExitCode(exitCode);
      return {
        exitCode: known ? exitCode : EXIT_CODES.FAILURE,
        agent: "command",
        ...(known ? {} : { error: `the agent command exited with ${exitCode}` }),
      };
    },
  };
}

function killGroup(pid: number | undefined, sig: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(-pid, sig);
  } catch {
    // Already gone.
  }
}
