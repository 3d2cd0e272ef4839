/**
 * The production AgentRunner: the agent layer of `src/agent` (layers 0–2, see docs/runner.md#layers) behind the
 * pipeline's interface. `runStages` runs the agent type's stage sequence (implement → verify →
 * walkthrough for types 1 and 2; `.forge/stages.yml` of the repository may change it) through the
 * configured adapter — Claude Code, Codex or any command — and handles depth, trace ids, rate-limit
 * backoff, report files, masking and the environment the agent sees.
 */
import type { AgentUser } from "../../src/agent/isolation.js";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { GitRun } from "../../src/agent/branches.js";
import type { Masker } from "../../src/agent/secrets.js";
import { runStages } from "../../src/agent/stages/index.js";
import { SubAgentCap } from "../../src/agent/sub-agents.js";
import type { AdapterName } from "../../src/agent/types.js";
import type { ModelPlan } from "../../src/core/tiers.js";
import { EXIT_CODES } from "../../src/core/exit-codes.js";
import type { AgentRunner } from "./agent-runner.js";

export interface StagesRunnerOptions {
  adapter: AdapterName;
  model?: string;
  /** The models of the sessions by role and tier (docs/runner.md#model-tiers): over `model` when given. */
  models?: ModelPlan;
  /** Adapter "command": a shell command line. */
  command?: string;
  maxTurns: number;
  maxDepth: number;
  /** Sub-agents one job may start, every depth counted (`agent.max_sub_agents`; src/agent/sub-agents.ts). Absent: the default cap. */
  maxSubAgents?: number;
  /** Idle limit handed to each session as well (no output for this long → exit 21). */
  idleTimeoutMs: number;
  /** The agent's wall-clock budget, shared by all its stages. */
  timeoutMs: number;
  /** One stage session's own limit: reached, the session is stopped and the stage tried once more (src/agent/stages/context.ts). */
  stageTimeoutMs?: number;
  /** Environment the agent layer picks from (model keys, PATH); never the job token. */
  env: NodeJS.ProcessEnv;
  /** Variables passed to the agent as given (e.g. ANTHROPIC_API_KEY from the action input). */
  extraEnv: Record<string, string>;
  /** Each session's model credentials (the runner's proxy): they die with the session. */
  modelSession?: () => { env: Record<string, string>; end(): void };
  masker: Masker;
  /** Built-in prompts (a bundle ships them beside itself). */
  builtinPromptDir?: string;
  /** The agent CLI's executable (default: `claude` / `codex` on PATH). */
  binary?: string;
  /**
   * The `forge` command agents run for `forge spawn` (sub-agents within the depth budget and the
   * hierarchy): the bundle's `forge.js` beside `index.js`. Absent: the agent layer's default.
   */
  forgeCli?: { command: string; args: string[] };
  /** Run each agent session as this OS user (src/agent/isolation.ts). */
  runAs?: AgentUser;
  /** The runner's git for the stages' own merges and sub-branches (Git.forStages); else plain git. */
  git?: GitRun;
}

export function createStagesRunner(options: StagesRunnerOptions): AgentRunner {
  return {
    name: options.adapter,
    async run(req) {
      // The agent layer's own folder inside the session: its manifest, stage sessions and reports.
      const agentDir = path.join(req.sessionDir, "agent");
      await mkdir(agentDir, { recursive: true });
      const c = req.taskContext;
      // One count for the whole job: every stage's sessions and their sub-agents at any depth.
      const subAgents = new SubAgentCap(options.maxSubAgents);
      subAgents.onRefusal((refusal) =>
        req.onProgress({
          kind: "system",
          summary: `a sub-agent${refusal.agentType ? ` of type ${refusal.agentType}` : ""} at depth ${refusal.depth} was refused: ${refusal.message}`,
        }),
      );
      const r = await runStages({
        agentType: req.agentType,
        // The job's context as it is: the same `steering` array, so messages the job receives later
        // reach the stages that start later.
        taskContext: c,
        // Types 2, 3 and the refinery run sub-agents on `<branch>-<sub>`, merged back (see docs/runner.md#sub-agent-branches).
        subBranches: true,
        ...(options.git ? { git: options.git } : {}),
        workdir: req.workdir,
        sessionDir: agentDir,
        spawn: {
          adapter: options.adapter,
          ...(options.model ? { model: options.model } : {}),
          maxTurns: options.maxTurns,
          maxDepth: options.maxDepth,
          subAgents,
          idleTimeoutMs: options.idleTimeoutMs,
          ...(options.stageTimeoutMs !== undefined ? { timeoutMs: options.stageTimeoutMs } : {}),
          env: options.env,
          extraEnv: {
            ...options.extraEnv,
            FORGE_RUN_ID: c.runId,
            FORGE_TASK_ID: c.taskId,
            FORGE_ATTEMPT: String(c.attempt),
            FORGE_TASK_FILE: path.join(req.sessionDir, "task.md"),
            FORGE_BRANCH: c.branch,
            FORGE_BASE_REF: c.baseRef,
            ...(req.traceparent ? { TRACEPARENT: req.traceparent } : {}),
            ...(req.spendFile ? { FORGE_SPEND_FILE: req.spendFile } : {}),
          },
          ...(options.modelSession ? { modelSession: options.modelSession } : {}),
          masker: options.masker,
          ...(options.binary ? { binary: options.binary } : {}),
          ...(options.forgeCli ? { forgeCli: options.forgeCli } : {}),
          ...(options.runAs ? { runAs: options.runAs } : {}),
          ...(options.adapter === "command" ? { command: "sh", args: ["-c", options.command ?? ""] } : {}),
        },
        deadline: Date.now() + options.timeoutMs,
        signal: req.signal,
        onProgress: (e) =>
          req.onProgress({
            summary: e.summary,
            kind: e.kind,
            stage: e.name,
            ...(e.tool ? { tool: e.tool } : {}),
            ...(e.turn !== undefined ? { turn: e.turn } : {}),
            ...(e.costUsd !== undefined ? { costUsd: e.costUsd } : {}),
            ...(e.tokens ? { tokens: e.tokens } : {}),
          }),
        ...(req.onStageEnd ? { onStageEnd: (stage: string, _record, progress) => req.onStageEnd!(stage, progress) } : {}),
        ...(req.resume ? { resume: req.resume } : {}),
        ...(options.models ? { models: options.models } : {}),
        ...(req.taskModel !== undefined ? { taskModel: req.taskModel } : {}),
        ...(req.sentinel ? { sentinel: req.sentinel } : {}),
        promptOptions: { repoDir: req.workdir, ...(options.builtinPromptDir ? { builtinDir: options.builtinPromptDir } : {}) },
      });
      return {
        exitCode: r.exitCode,
        manifestPath: r.manifestPath,
        ...(r.walkthroughPath ? { walkthroughPath: r.walkthroughPath } : {}),
        ...(r.changeRequestPath ? { changeRequestPath: r.changeRequestPath } : {}),
        ...(r.question ? { question: r.question } : {}),
        ...(r.refinement ? { refinement: r.refinement } : {}),
        ...(r.rateLimitedUntil ? { rateLimitedUntil: r.rateLimitedUntil } : {}),
        ...(r.error && r.exitCode !== EXIT_CODES.SUCCESS ? { error: r.error } : {}),
        agent: options.adapter,
        ...(r.model ? { model: r.model } : {}),
        ...(r.models ? { models: r.models } : {}),
        ...(r.costUsd !== undefined ? { costUsd: r.costUsd } : {}),
        ...(r.turns !== undefined ? { turns: r.turns } : {}),
        ...(r.progress ? { progress: r.progress } : {}),
        ...(r.sentinel ? { sentinel: r.sentinel } : {}),
        subAgents: subAgents.summary(),
      };
    },
  };
}
