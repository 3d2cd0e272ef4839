/**
 * Before the agent runs: who may spawn whom at which depth (the hierarchy admits the session or
 * the spawn ends with exit 2), the working directory, the prompt files, the agent's environment
 * (only what it needs, the job's identity, the `forge` command on its PATH) and the adapter's
 * invocation.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { adapterFor } from "../adapters/index.js";
import type { Adapter, Invocation } from "../adapters/types.js";
import { ENV } from "../depth.js";
import { defaultForgeCli, writeForgeShim } from "../forge-shim.js";
import { FORBIDDEN_TOOLS, allowedToolsFor, mayCallerSpawn } from "../hierarchy.js";
import { askHierarchy, HIERARCHY_ENV, HierarchyService, type SpawnAnswer } from "../hierarchy-service.js";
import type { ReportPaths, SpawnResult } from "../types.js";
import { defaultReportPaths, emit, finish, type SpawnContext } from "./context.js";
import { MODELS_ENV } from "../../core/tiers.js";

/** Variables naming the job an agent works for, passed on from parent to child. */
// FORGE_MODELS: the models per role sub-agents take (src/core/tiers.ts), passed down every level.
const JOB_ENV = [
  "FORGE_RUN_ID",
  "FORGE_TASK_ID",
  "FORGE_ATTEMPT",
  "FORGE_BRANCH",
  "FORGE_BASE_REF",
  "FORGE_TASK_FILE",
  MODELS_ENV,
] as const;

/** Prompts longer than this travel in `FORGE_PROMPT_FILE` only (Linux limits one env string to 128 KiB). */
const ENV_VALUE_LIMIT = 100_000;

/** What the run needs: where, which reports, the adapter and its invocation, and until when rate limits may be waited out. */
export interface PreparedSpawn {
  cwd: string;
  reports: ReportPaths;
  adapter: Adapter;
  invocation: Invocation;
  /** Epoch ms: rate limits are backed off inside the session only until then. */
  deadline: number;
}

/** The hierarchy's ticket and socket the agent passes on to its own sub-agents. */
interface ChildTicket {
  ticket?: string;
  socket?: string;
}

/** Admits the session and builds its invocation; `done` when the spawn ends before the agent starts. */
export async function prepare(sc: SpawnContext): Promise<PreparedSpawn | { done: SpawnResult }> {
  const { options } = sc;
  const admitted = await admit(sc);
  if ("done" in admitted) return admitted;
  if (!admitted.ticket) await startService(sc, admitted);
  if (sc.depthCheck.remaining === 0)
    emit(sc, { kind: "system", summary: `depth ${sc.depthCheck.depth} of ${sc.depthCheck.maxDepth}: this agent cannot spawn sub-agents` });

  let cwd = options.cwd;
  if (options.prepareCwd) {
    try {
      cwd = await options.prepareCwd();
    } catch (err) {
      return {
        done: await finish(sc, 1, {
          error: { code: "spawn_failed", message: `could not prepare the agent's working directory: ${(err as Error).message}` },
        }),
      };
    }
  }

  const reports = { ...defaultReportPaths(sc.sessionDir), ...options.reports };
  const allowedTools = (options.allowedTools ?? allowedToolsFor(options.agentType, options.adapter)).filter((t) => !FORBIDDEN_TOOLS.has(t));
  const forgeEnv = await agentForgeEnv(sc, reports, allowedTools, admitted);
  const shimDir = forgeEnv.FORGE_CLI ? path.dirname(forgeEnv.FORGE_CLI) : undefined;

  const adapter = adapterFor(options.adapter);
  let invocation: Invocation;
  try {
    invocation = adapter.invocation({
      prompt: options.prompt,
      ...(options.systemPrompt ? { systemPrompt: options.systemPrompt } : {}),
      ...(options.model ? { model: options.model } : {}),
      ...(options.modelTier ? { modelTier: options.modelTier } : {}),
      cwd,
      allowedTools,
      ...(options.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {}),
      parentEnv: sc.parentEnv,
      forgeEnv,
      passEnv: options.passEnv ?? [],
      extraEnv: options.extraEnv ?? {},
      ...(options.command ? { command: options.command } : {}),
      ...(options.args ? { args: options.args } : {}),
      ...(options.binary ? { binary: options.binary } : {}),
      ...(options.resumeSession ? { resumeSession: options.resumeSession } : {}),
    });
  } catch (err) {
    return { done: await finish(sc, 1, { error: { code: "bad_options", message: (err as Error).message } }) };
  }
  if (shimDir) invocation.env.PATH = [shimDir, invocation.env.PATH ?? ""].filter(Boolean).join(path.delimiter);

  const deadline = options.deadline ?? sc.started.getTime() + (options.timeoutMs ?? 30 * 60_000);
  emit(sc, {
    kind: "start",
    summary: `${options.adapter}${options.agentType ? ` type ${options.agentType}` : ""} at depth ${sc.depthCheck.depth}/${sc.depthCheck.maxDepth}`,
  });
  return { cwd, reports, adapter, invocation, deadline };
}

/**
 * Who may spawn whom, at which depth. Inside an agent, the hierarchy service that started it decides
 * from what it recorded (hierarchy-service.ts); the environment's FORGE_AGENT_TYPE, FORGE_SPAWN_DEPTH
 * and FORGE_MAX_DEPTH are not believed. At the top, Forge's own code may name the caller (`caller`).
 */
async function admit(sc: SpawnContext): Promise<ChildTicket | { done: SpawnResult }> {
  const { options, parentEnv } = sc;
  const socket = parentEnv[HIERARCHY_ENV.socket];
  const ticket = parentEnv[HIERARCHY_ENV.ticket];
  const claimed = parentEnv[ENV.agentType] || undefined;
  const refuse = async (code: "spawn_not_allowed" | "depth_exceeded" | "sub_agents_exceeded", message: string) => ({
    done: await finish(sc, 2, { error: { code, message } }),
  });
  const child: ChildTicket = {};
  if (socket && ticket) {
    let answer: SpawnAnswer;
    try {
      answer = await askHierarchy(socket, {
        op: "spawn",
        ticket,
        ...(options.agentType ? { agentType: options.agentType } : {}),
        ...(options.maxDepth !== undefined ? { maxDepth: options.maxDepth } : {}),
        ...(claimed ? { claimedType: claimed } : {}),
      });
    } catch (err) {
      return refuse(
        "spawn_not_allowed",
        `cannot reach Forge's hierarchy service (${(err as Error).message}); a sub-agent can only be spawned while the agent Forge started is running`,
      );
    }
    if (!answer.ok) {
      if (answer.depth !== undefined && answer.maxDepth !== undefined)
        sc.depthCheck = { depth: answer.depth, maxDepth: answer.maxDepth, ok: answer.code !== "depth_exceeded", remaining: 0 };
      if (answer.caller) sc.traceId = answer.caller.traceId;
      return refuse(
        answer.code === "depth_exceeded" || answer.code === "sub_agents_exceeded" ? answer.code : "spawn_not_allowed",
        answer.message,
      );
    }
    sc.traceId = answer.traceId;
    sc.depthCheck = { depth: answer.depth, maxDepth: answer.maxDepth, ok: true, remaining: Math.max(0, answer.maxDepth - answer.depth) };
    child.ticket = answer.ticket;
    child.socket = socket;
  } else if (claimed && options.caller === undefined) {
    return refuse(
      "spawn_not_allowed",
      `FORGE_AGENT_TYPE=${claimed} is set but this process carries no hierarchy ticket from Forge (${HIERARCHY_ENV.ticket}, ${HIERARCHY_ENV.socket}); an agent's type is what Forge recorded when it started it, not an environment variable`,
    );
  } else if (options.caller !== undefined) {
    const type = options.agentType;
    if (!type || !mayCallerSpawn(options.caller, type)) {
      return refuse(
        "spawn_not_allowed",
        !type
          ? `an agent of type ${options.caller} must name the type it spawns (--agent-type)`
          : `an agent of type ${options.caller} may not spawn type ${type}`,
      );
    }
  }
  if (!sc.depthCheck.ok)
    return refuse("depth_exceeded", `spawn depth ${sc.depthCheck.depth} exceeds the budget of ${sc.depthCheck.maxDepth}`);
  // Forge's own spawn on an agent's behalf is a sub-agent too, and takes a place of the job's cap.
  if (options.caller !== undefined) {
    const capped = options.subAgents?.take(sc.depthCheck.depth, options.agentType);
    if (capped) return refuse("sub_agents_exceeded", capped);
  }
  return child;
}

/** The top of a hierarchy: this process keeps the records of every session below it. Without a service the agent cannot spawn. */
async function startService(sc: SpawnContext, child: ChildTicket): Promise<void> {
  const { options, depthCheck } = sc;
  try {
    sc.service = await HierarchyService.start(options.subAgents);
    child.ticket = sc.service.issue({
      ...(options.agentType ? { agentType: options.agentType } : {}),
      depth: depthCheck.depth,
      maxDepth: depthCheck.maxDepth,
      traceId: sc.traceId,
    });
    child.socket = sc.service.socketPath;
  } catch (err) {
    emit(sc, { kind: "system", summary: `no hierarchy service (${(err as Error).message}): this agent cannot spawn sub-agents` });
  }
}

/** Writes `prompt.md` (and `system-prompt.md`) and returns the FORGE_* variables the agent gets. */
async function agentForgeEnv(
  sc: SpawnContext,
  reports: ReportPaths,
  allowedTools: string[],
  child: ChildTicket,
): Promise<Record<string, string>> {
  const { options, sessionDir, depthCheck } = sc;
  const promptFile = path.join(sessionDir, "prompt.md");
  const systemPromptFile = path.join(sessionDir, "system-prompt.md");
  await writeFile(promptFile, sc.masker.mask(options.prompt), "utf8");
  if (options.systemPrompt) await writeFile(systemPromptFile, sc.masker.mask(options.systemPrompt), "utf8");

  const forgeEnv: Record<string, string> = {
    FORGE_SESSION_DIR: sessionDir,
    FORGE_SPAWN_DEPTH: String(depthCheck.depth),
    FORGE_MAX_DEPTH: String(depthCheck.maxDepth),
    FORGE_TRACE_ID: sc.traceId,
    FORGE_PROMPT_FILE: promptFile,
    FORGE_ALLOWED_TOOLS: allowedTools.join(","),
    FORGE_WALKTHROUGH_PATH: reports.walkthrough,
    FORGE_QUESTION_FILE: reports.question,
    FORGE_CHANGE_REQUEST_FILE: reports.changeRequest,
    FORGE_REFINEMENT_FILE: reports.refinement,
    FORGE_SIGNAL_DIR: sessionDir,
    FORGE_ADAPTER: options.adapter,
    FORGE_SPAWN_NAME: sc.name,
  };
  // The job's identity reaches every descendant (a nested `forge spawn` needs the task branch).
  for (const k of JOB_ENV) {
    const v = sc.parentEnv[k];
    if (v) forgeEnv[k] = v;
  }
  if (options.adapter === "command" && options.command) forgeEnv.FORGE_COMMAND = options.command;
  // So a sub-agent started with `forge spawn` finds the same agent CLI.
  if (options.binary) forgeEnv.FORGE_AGENT_BINARY = options.binary;
  if (options.prompt.length <= ENV_VALUE_LIMIT) forgeEnv.FORGE_PROMPT = options.prompt;
  if (options.systemPrompt) {
    forgeEnv.FORGE_SYSTEM_PROMPT_FILE = systemPromptFile;
    if (options.systemPrompt.length <= ENV_VALUE_LIMIT) forgeEnv.FORGE_SYSTEM_PROMPT = options.systemPrompt;
  }
  if (options.model) forgeEnv.FORGE_MODEL = options.model;
  if (options.modelTier) forgeEnv.FORGE_MODEL_TIER = options.modelTier;
  if (options.agentType) forgeEnv.FORGE_AGENT_TYPE = options.agentType;
  if (child.ticket && child.socket) {
    forgeEnv[HIERARCHY_ENV.socket] = child.socket;
    forgeEnv[HIERARCHY_ENV.ticket] = child.ticket;
  }
  if (options.maxTurns !== undefined) forgeEnv.FORGE_MAX_TURNS = String(options.maxTurns);

  const cli =
    options.forgeCli === false
      ? undefined
      : typeof options.forgeCli === "string"
        ? { command: process.execPath, args: [options.forgeCli] }
        : (options.forgeCli ?? defaultForgeCli());
  if (cli) forgeEnv.FORGE_CLI = await writeForgeShim(path.join(sessionDir, ".bin"), cli);
  return forgeEnv;
}
