/**
 * The production AgentRunner: the agent layer of `src/agent` (seed 001 layers 0–2) behind the
 * pipeline's interface. Each attempt runs one `work` session through the configured adapter
 * (Claude Code, Codex or any command) with the agent type's system prompt; the agent layer handles
 * depth, trace ids, rate-limit backoff, report files, masking and the environment the agent sees.
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { loadSystemPrompt } from "../../src/agent/prompts.js";
import type { Masker } from "../../src/agent/secrets.js";
import { spawnAgent } from "../../src/agent/spawn.js";
import type { AdapterName } from "../../src/agent/types.js";
import type { AgentRunner, TaskContext } from "./agent-runner.js";
import { renderContext } from "./context.js";

export interface StagesRunnerOptions {
  adapter: AdapterName;
  model?: string;
  /** Adapter "command": a shell command line. */
  command?: string;
  maxTurns: number;
  maxDepth: number;
  /** Idle limit handed to the spawn as well (no output for this long → exit 21). */
  idleTimeoutMs: number;
  timeoutMs: number;
  /** Environment the agent layer picks from (model keys, PATH); never the job token. */
  env: NodeJS.ProcessEnv;
  /** Variables passed to the agent as given (e.g. ANTHROPIC_API_KEY from the action input). */
  extraEnv: Record<string, string>;
  masker: Masker;
  /** Built-in prompts (a bundle ships them beside itself). */
  builtinPromptDir?: string;
  log?: (message: string) => void;
}

/** The WHAT of the session: the task and how to report back. */
export function workPrompt(c: TaskContext): string {
  return [
    renderContext(c),
    "## What to do",
    "",
    `Carry out task ${c.taskId} in the current directory (branch \`${c.branch}\`). Do not commit or push: the runner commits your work.`,
    "Do not change `.forge/plans/**` or `.github/workflows/**`: such changes are reverted and fail the attempt.",
    ...(c.testCommand ? [`Verify with \`${c.testCommand}\`.`] : []),
    "When done, write your walkthrough (YAML frontmatter: status, confidence, files_changed with reasons, tests, risks, followups; sections Summary, Approach, Issues Encountered, Testing) to the file named by FORGE_WALKTHROUGH_PATH.",
    "",
  ].join("\n");
}

export function createStagesRunner(options: StagesRunnerOptions): AgentRunner {
  return {
    name: options.adapter,
    async run(req) {
      await mkdir(req.sessionDir, { recursive: true });
      let systemPrompt: string | undefined;
      try {
        systemPrompt = (await loadSystemPrompt(req.agentType, { repoDir: req.workdir, ...(options.builtinPromptDir ? { builtinDir: options.builtinPromptDir } : {}) })).text;
      } catch (err) {
        options.log?.(`no system prompt for agent type ${req.agentType}: ${(err as Error).message}`);
      }
      const r = await spawnAgent({
        adapter: options.adapter,
        agentType: req.agentType,
        prompt: workPrompt(req.taskContext),
        ...(systemPrompt ? { systemPrompt } : {}),
        ...(options.model ? { model: options.model } : {}),
        cwd: req.workdir,
        // Its own folder: the spawn writes events.ndjson and transcript.log, and the attempt's
        // events.ndjson (the runner's) sits at the top of the session.
        sessionDir: path.join(req.sessionDir, "work"),
        name: "work",
        maxTurns: options.maxTurns,
        maxDepth: options.maxDepth,
        timeoutMs: options.timeoutMs,
        idleTimeoutMs: options.idleTimeoutMs,
        signal: req.signal,
        onProgress: (e) => req.onProgress({ summary: e.summary, kind: e.kind }),
        env: options.env,
        extraEnv: {
          ...options.extraEnv,
          FORGE_RUN_ID: req.taskContext.runId,
          FORGE_TASK_ID: req.taskContext.taskId,
          FORGE_ATTEMPT: String(req.taskContext.attempt),
          FORGE_TASK_FILE: path.join(req.sessionDir, "task.md"),
          FORGE_BRANCH: req.taskContext.branch,
          FORGE_BASE_REF: req.taskContext.baseRef,
        },
        masker: options.masker,
        reports: {
          walkthrough: req.walkthroughPath,
          question: path.join(req.sessionDir, "question.md"),
          changeRequest: path.join(req.sessionDir, "change-request.md"),
          refinement: path.join(req.sessionDir, "refinement.md"),
        },
        ...(options.adapter === "command" ? { command: "sh", args: ["-c", options.command ?? ""] } : {}),
      });
      return {
        exitCode: r.exitCode,
        ...(r.reports.walkthrough ? { walkthroughPath: r.reports.walkthrough } : {}),
        ...(r.reports.changeRequest ? { changeRequestPath: r.reports.changeRequest } : {}),
        ...(r.rateLimitedUntil ? { rateLimitedUntil: r.rateLimitedUntil } : {}),
        ...(r.error && r.exitCode !== 0 ? { error: r.error.message } : {}),
        agent: r.adapter,
        ...(r.model ? { model: r.model } : {}),
        ...(r.costUsd !== undefined ? { costUsd: r.costUsd } : {}),
        ...(r.turns !== undefined ? { turns: r.turns } : {}),
      };
    },
  };
}
