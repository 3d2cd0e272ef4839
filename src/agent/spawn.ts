/**
 * Layer 0 (seed 001): one agent session through an adapter.
 *
 * Owns what every session needs whatever the CLI: the depth budget (`FORGE_SPAWN_DEPTH`, incremented
 * only here), the trace id carried into every child, who may spawn whom, the agent's environment (only
 * what it needs), wall-clock and idle timeouts and cancellation (partial work stays in `cwd`),
 * rate-limit backoff inside the job, and the session directory: `events.ndjson` (one progress event
 * per line), `transcript.log` (the agent's raw output, masked), `prompt.md`, `system-prompt.md`
 * and the signal file `.signals/<layer>-<name>.<done|fail|refine>`.
 */
import { createWriteStream, existsSync, type WriteStream } from "node:fs";
import { chmod, mkdir, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { isPartialChunk } from "./adapters/claude.js";
import { adapterFor } from "./adapters/index.js";
import type { AdapterOutcome, Invocation, OutputParser, ProgressDraft } from "./adapters/types.js";
import { ENV, checkDepth, traceIdFrom } from "./depth.js";
import { FORBIDDEN_TOOLS, allowedToolsFor, mayCallerSpawn } from "./hierarchy.js";
import { askHierarchy, HIERARCHY_ENV, HierarchyService, type SpawnAnswer } from "./hierarchy-service.js";
import { runProcess, type ProcessOutcome } from "./process.js";
import { detectRateLimit, planRateLimitWait } from "./rate-limit.js";
import { Masker } from "./secrets.js";
import { writeSignal, type SignalStatus } from "./signals.js";
import {
  STATUS_OF_EXIT,
  isForgeExitCode,
  type ForgeExitCode,
  type ProgressEvent,
  type ReportPaths,
  type SpawnError,
  type SpawnOptions,
  type SpawnResult,
} from "./types.js";

export type { SpawnOptions, SpawnResult } from "./types.js";

/** Variables naming the job an agent works for, passed on from parent to child. */
const JOB_ENV = ["FORGE_RUN_ID", "FORGE_TASK_ID", "FORGE_ATTEMPT", "FORGE_BRANCH", "FORGE_BASE_REF", "FORGE_TASK_FILE"] as const;

/** Prompts longer than this travel in `FORGE_PROMPT_FILE` only (Linux limits one env string to 128 KiB). */
const ENV_VALUE_LIMIT = 100_000;

/** `FORGE_EXIT=<code>` on a line of the agent's final message states its exit code. */
const EXIT_MARKER = /^[ \t>*`]*FORGE_EXIT\s*[=:]\s*(\d+)\b/gm;

export function explicitExitCode(text: string | undefined): ForgeExitCode | undefined {
  if (!text) return undefined;
  let found: ForgeExitCode | undefined;
  for (const m of text.matchAll(EXIT_MARKER)) {
    const n = Number(m[1]);
    if (isForgeExitCode(n)) found = n;
  }
  return found;
}

export function defaultReportPaths(sessionDir: string): ReportPaths {
  return {
    walkthrough: path.join(sessionDir, "walkthrough.md"),
    question: path.join(sessionDir, "question.md"),
    changeRequest: path.join(sessionDir, "change-request.md"),
    refinement: path.join(sessionDir, "refinement.md"),
  };
}

const sleepFor = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });

/** This package's `forge` entry, when it is there to be run (a source checkout or an installed package). */
function defaultForgeCli(): { command: string; args: string[] } | undefined {
  const bin = fileURLToPath(new URL("../../bin/forge.js", import.meta.url));
  const main = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
  return existsSync(bin) && existsSync(main) ? { command: process.execPath, args: [bin] } : undefined;
}

function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** A `forge` command on the agent's PATH, so an agent allowed to spawn sub-agents can run `forge spawn`. */
async function writeForgeShim(dir: string, cli: { command: string; args: string[] }): Promise<string> {
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, "forge");
  await writeFile(file, `#!/bin/sh\nexec ${[cli.command, ...cli.args].map(shQuote).join(" ")} "$@"\n`, "utf8");
  await chmod(file, 0o755);
  return file;
}

export async function spawnAgent(options: SpawnOptions): Promise<SpawnResult> {
  const parentEnv = options.env ?? process.env;
  let traceId = traceIdFrom(parentEnv);
  const name = options.name ?? "spawn";
  const layer = options.layer ?? "exec";
  const sessionDir = path.resolve(options.sessionDir);
  await mkdir(sessionDir, { recursive: true });
  const eventsPath = path.join(sessionDir, "events.ndjson");
  const transcriptPath = path.join(sessionDir, "transcript.log");
  const started = new Date();
  const masker = options.masker ?? new Masker().addFromEnv(parentEnv);
  for (const [k, v] of Object.entries(options.extraEnv ?? {})) if (/KEY|TOKEN|SECRET|PASSWORD/i.test(k)) masker.add(v);

  let depthCheck = checkDepth(parentEnv, options.maxDepth);
  const events = createWriteStream(eventsPath, { flags: "a" });
  const transcript = createWriteStream(transcriptPath, { flags: "a" });
  // A full disk must not crash the runner: the session's own outcome still counts.
  events.on("error", () => undefined);
  transcript.on("error", () => undefined);
  let turn = 0;
  const emit = (draft: ProgressDraft) => {
    const event: ProgressEvent = {
      at: new Date().toISOString(),
      kind: draft.kind,
      summary: masker.mask(draft.summary),
      ...(draft.tool ? { tool: draft.tool } : {}),
      ...(turn > 0 ? { turn } : {}),
      traceId,
      depth: depthCheck.depth,
      name,
    };
    events.write(`${JSON.stringify(event)}\n`);
    try {
      options.onProgress?.(event);
    } catch {
      // A failing observer must not break the session.
    }
  };

  const base = {
    adapter: options.adapter,
    ...(options.agentType ? { agentType: options.agentType } : {}),
    sessionDir,
    eventsPath,
    transcriptPath,
  };
  /** The hierarchy service this spawn runs for its descendants (a top-level spawn only). */
  let service: HierarchyService | undefined;

  const finish = async (
    exitCode: ForgeExitCode,
    extra: Partial<SpawnResult> & { error?: SpawnError } = {},
    reports: Partial<ReportPaths> = {},
  ): Promise<SpawnResult> => {
    const finished = new Date();
    await service?.close().catch(() => undefined);
    emit({ kind: "exit", summary: `exit ${exitCode}${extra.error ? ` (${extra.error.code}: ${extra.error.message})` : ""}` });
    await Promise.all([closeStream(events), closeStream(transcript)]);
    const status: SignalStatus = exitCode === 0 || exitCode === 12 ? "done" : exitCode === 10 ? "refine" : "fail";
    const signalFile = await writeSignal({
      sessionDir,
      layer,
      name,
      status,
      ...(reports.walkthrough ? { artifactPath: reports.walkthrough } : existsSync(transcriptPath) ? { artifactPath: transcriptPath } : {}),
      traceId,
      createdAt: started,
      completedAt: finished,
      extra: { exit_code: exitCode, depth: depthCheck.depth, ...(extra.error ? { error_code: extra.error.code } : {}) },
    }).catch(() => undefined);
    const result: SpawnResult = {
      ...base,
      traceId,
      depth: depthCheck.depth,
      maxDepth: depthCheck.maxDepth,
      exitCode,
      status: STATUS_OF_EXIT[exitCode],
      startedAt: started.toISOString(),
      finishedAt: finished.toISOString(),
      durationMs: finished.getTime() - started.getTime(),
      rateLimitRetries: 0,
      reports,
      ...extra,
      ...(signalFile ? { signalPath: signalFile } : {}),
    };
    if (result.error) result.error = { code: result.error.code, message: masker.mask(result.error.message) };
    if (result.result !== undefined) result.result = masker.mask(result.result);
    return result;
  };

  // Who may spawn whom, at which depth. Inside an agent, the hierarchy service that started it decides
  // from what it recorded (hierarchy-service.ts); the environment's FORGE_AGENT_TYPE, FORGE_SPAWN_DEPTH
  // and FORGE_MAX_DEPTH are not believed. At the top, Forge's own code may name the caller (`caller`).
  const socket = parentEnv[HIERARCHY_ENV.socket];
  const ticket = parentEnv[HIERARCHY_ENV.ticket];
  const claimed = parentEnv[ENV.agentType] || undefined;
  let childTicket: string | undefined;
  let childSocket: string | undefined;
  if (socket && ticket) {
    let answer: SpawnAnswer;
    try {
      answer = await askHierarchy(socket, { op: "spawn", ticket, ...(options.agentType ? { agentType: options.agentType } : {}), ...(options.maxDepth !== undefined ? { maxDepth: options.maxDepth } : {}), ...(claimed ? { claimedType: claimed } : {}) });
    } catch (err) {
      return finish(2, { error: { code: "spawn_not_allowed", message: `cannot reach Forge's hierarchy service (${(err as Error).message}); a sub-agent can only be spawned while the agent Forge started is running` } });
    }
    if (!answer.ok) {
      if (answer.depth !== undefined && answer.maxDepth !== undefined) depthCheck = { depth: answer.depth, maxDepth: answer.maxDepth, ok: false, remaining: 0 };
      if (answer.caller) traceId = answer.caller.traceId;
      return finish(2, { error: { code: answer.code === "depth_exceeded" ? "depth_exceeded" : "spawn_not_allowed", message: answer.message } });
    }
    traceId = answer.traceId;
    depthCheck = { depth: answer.depth, maxDepth: answer.maxDepth, ok: true, remaining: Math.max(0, answer.maxDepth - answer.depth) };
    childTicket = answer.ticket;
    childSocket = socket;
  } else if (claimed && options.caller === undefined) {
    return finish(2, {
      error: {
        code: "spawn_not_allowed",
        message: `FORGE_AGENT_TYPE=${claimed} is set but this process carries no hierarchy ticket from Forge (${HIERARCHY_ENV.ticket}, ${HIERARCHY_ENV.socket}); an agent's type is what Forge recorded when it started it, not an environment variable`,
      },
    });
  } else if (options.caller !== undefined) {
    const child = options.agentType;
    if (!child || !mayCallerSpawn(options.caller, child)) {
      return finish(2, {
        error: {
          code: "spawn_not_allowed",
          message: !child ? `an agent of type ${options.caller} must name the type it spawns (--agent-type)` : `an agent of type ${options.caller} may not spawn type ${child}`,
        },
      });
    }
  }
  if (!depthCheck.ok) {
    return finish(2, {
      error: { code: "depth_exceeded", message: `spawn depth ${depthCheck.depth} exceeds the budget of ${depthCheck.maxDepth}` },
    });
  }
  if (!childTicket) {
    // The top of a hierarchy: this process keeps the records of every session below it.
    try {
      service = await HierarchyService.start();
      childTicket = service.issue({ ...(options.agentType ? { agentType: options.agentType } : {}), depth: depthCheck.depth, maxDepth: depthCheck.maxDepth, traceId });
      childSocket = service.socketPath;
    } catch (err) {
      emit({ kind: "system", summary: `no hierarchy service (${(err as Error).message}): this agent cannot spawn sub-agents` });
    }
  }
  if (depthCheck.remaining === 0) emit({ kind: "system", summary: `depth ${depthCheck.depth} of ${depthCheck.maxDepth}: this agent cannot spawn sub-agents` });

  let cwd = options.cwd;
  if (options.prepareCwd) {
    try {
      cwd = await options.prepareCwd();
    } catch (err) {
      return finish(1, { error: { code: "spawn_failed", message: `could not prepare the agent's working directory: ${(err as Error).message}` } });
    }
  }

  const reports = { ...defaultReportPaths(sessionDir), ...options.reports };
  const allowedTools = (options.allowedTools ?? allowedToolsFor(options.agentType, options.adapter)).filter((t) => !FORBIDDEN_TOOLS.has(t));
  const promptFile = path.join(sessionDir, "prompt.md");
  const systemPromptFile = path.join(sessionDir, "system-prompt.md");
  await writeFile(promptFile, masker.mask(options.prompt), "utf8");
  if (options.systemPrompt) await writeFile(systemPromptFile, masker.mask(options.systemPrompt), "utf8");

  const forgeEnv: Record<string, string> = {
    FORGE_SESSION_DIR: sessionDir,
    FORGE_SPAWN_DEPTH: String(depthCheck.depth),
    FORGE_MAX_DEPTH: String(depthCheck.maxDepth),
    FORGE_TRACE_ID: traceId,
    FORGE_PROMPT_FILE: promptFile,
    FORGE_ALLOWED_TOOLS: allowedTools.join(","),
    FORGE_WALKTHROUGH_PATH: reports.walkthrough,
    FORGE_QUESTION_FILE: reports.question,
    FORGE_CHANGE_REQUEST_FILE: reports.changeRequest,
    FORGE_REFINEMENT_FILE: reports.refinement,
    FORGE_SIGNAL_DIR: sessionDir,
    FORGE_ADAPTER: options.adapter,
    FORGE_SPAWN_NAME: name,
  };
  // The job's identity reaches every descendant (a nested `forge spawn` needs the task branch).
  for (const k of JOB_ENV) {
    const v = parentEnv[k];
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
  if (options.agentType) forgeEnv.FORGE_AGENT_TYPE = options.agentType;
  if (childTicket && childSocket) {
    forgeEnv[HIERARCHY_ENV.socket] = childSocket;
    forgeEnv[HIERARCHY_ENV.ticket] = childTicket;
  }
  if (options.maxTurns !== undefined) forgeEnv.FORGE_MAX_TURNS = String(options.maxTurns);

  let shimDir: string | undefined;
  const cli = options.forgeCli === false ? undefined : typeof options.forgeCli === "string" ? { command: process.execPath, args: [options.forgeCli] } : (options.forgeCli ?? defaultForgeCli());
  if (cli) {
    shimDir = path.join(sessionDir, ".bin");
    forgeEnv.FORGE_CLI = await writeForgeShim(shimDir, cli);
  }

  const adapter = adapterFor(options.adapter);
  let invocation: Invocation;
  try {
    invocation = adapter.invocation({
      prompt: options.prompt,
      ...(options.systemPrompt ? { systemPrompt: options.systemPrompt } : {}),
      ...(options.model ? { model: options.model } : {}),
      cwd,
      allowedTools,
      ...(options.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {}),
      parentEnv,
      forgeEnv,
      passEnv: options.passEnv ?? [],
      extraEnv: options.extraEnv ?? {},
      ...(options.command ? { command: options.command } : {}),
      ...(options.args ? { args: options.args } : {}),
      ...(options.binary ? { binary: options.binary } : {}),
    });
  } catch (err) {
    return finish(1, { error: { code: "bad_options", message: (err as Error).message } });
  }
  if (shimDir) invocation.env.PATH = [shimDir, invocation.env.PATH ?? ""].filter(Boolean).join(path.delimiter);

  const deadline = options.deadline ?? started.getTime() + (options.timeoutMs ?? 30 * 60_000);
  const sleep = options.sleep ?? sleepFor;
  let rateLimitRetries = 0;
  emit({ kind: "start", summary: `${options.adapter}${options.agentType ? ` type ${options.agentType}` : ""} at depth ${depthCheck.depth}/${depthCheck.maxDepth}` });

  for (;;) {
    const remaining = options.timeoutMs !== undefined ? options.timeoutMs - (Date.now() - started.getTime()) : undefined;
    if (remaining !== undefined && remaining <= 0) {
      return finish(21, { timedOut: "wall", rateLimitRetries, error: { code: "timeout", message: "wall-clock limit reached while waiting" } });
    }
    const parser: OutputParser = adapter.parser();
    const stderrTail: string[] = [];
    const runStart = Date.now();
    const outcome: ProcessOutcome = await runProcess({
      command: invocation.command,
      args: invocation.args,
      cwd,
      env: invocation.env,
      ...(invocation.stdin !== undefined ? { stdin: invocation.stdin } : {}),
      ...(remaining !== undefined ? { timeoutMs: remaining } : {}),
      ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
      busyIdleTimeoutMs: options.toolIdleTimeoutMs ?? 10 * 60_000,
      isBusy: () => parser.busy?.() ?? false,
      ...(options.signal ? { signal: options.signal } : {}),
      onStdoutLine: (line) => {
        if (!isPartialChunk(line)) transcript.write(`${masker.mask(line)}\n`);
        for (const d of parser.stdoutLine(line)) {
          turn = parser.turns();
          emit(d);
        }
      },
      onStderrLine: (line) => {
        transcript.write(`[stderr] ${masker.mask(line)}\n`);
        stderrTail.push(line);
        if (stderrTail.length > 50) stderrTail.shift();
        for (const d of parser.stderrLine(line)) emit(d);
      },
    });
    const parsed: AdapterOutcome = parser.finish(outcome.code);
    const common: Partial<SpawnResult> = {
      rateLimitRetries,
      ...(parsed.result !== undefined ? { result: parsed.result } : {}),
      ...(parsed.model ?? options.model ? { model: parsed.model ?? options.model } : {}),
      ...(parsed.turns !== undefined ? { turns: parsed.turns } : {}),
      ...(parsed.costUsd !== undefined ? { costUsd: parsed.costUsd } : {}),
      ...(parsed.sessionId ? { sessionId: parsed.sessionId } : {}),
    };
    // A little slack for file systems whose timestamps are coarser than the clock.
    const written = await reportsWritten(reports, runStart - 50);

    if (outcome.spawnError) {
      return finish(1, { ...common, error: { code: "spawn_failed", message: `${invocation.command}: ${outcome.spawnError.message}` } }, written);
    }
    if (outcome.stopped === "aborted") return finish(20, { ...common, error: { code: "aborted", message: "cancelled" } }, written);
    if (outcome.stopped === "timeout") {
      return finish(21, { ...common, timedOut: "wall", error: { code: "timeout", message: `wall-clock limit of ${Math.round((options.timeoutMs ?? 0) / 1000)} s reached` } }, written);
    }
    if (outcome.stopped === "idle") {
      return finish(
        21,
        { ...common, timedOut: "idle", error: { code: "idle_timeout", message: `no output for ${Math.round((outcome.silentMs ?? options.idleTimeoutMs ?? 0) / 1000)} s` } },
        written,
      );
    }

    const explicit = explicitExitCode(parsed.result);
    let exitCode: ForgeExitCode;
    if (explicit !== undefined) exitCode = explicit;
    else if (options.adapter === "command") exitCode = isForgeExitCode(outcome.code) ? outcome.code : 1;
    else if (!parsed.ok) exitCode = 1;
    else if (written.changeRequest) exitCode = 11;
    else if (written.question) exitCode = 3;
    else if (written.refinement) exitCode = 10;
    else exitCode = 0;

    if (exitCode === 1 && explicit === undefined) {
      const failureText = [parsed.errorText, parsed.ok ? "" : parsed.result, stderrTail.join("\n")].filter(Boolean).join("\n");
      const limit = detectRateLimit(failureText, { status: parsed.apiErrorStatus ?? null });
      if (limit) {
        const decision = planRateLimitWait(limit, {
          now: new Date(),
          deadline,
          attempt: rateLimitRetries,
          maxRetries: options.maxRateLimitRetries ?? 5,
          ...(options.random ? { random: options.random } : {}),
        });
        if (decision.action === "wait") {
          emit({ kind: "rate_limit", summary: `${limit.kind}: ${limit.message}; retrying at ${decision.until.toISOString()}` });
          await sleep(decision.ms, options.signal);
          if (options.signal?.aborted) return finish(20, { ...common, error: { code: "aborted", message: "cancelled while waiting for a rate limit" } }, written);
          rateLimitRetries++;
          emit({ kind: "retry", summary: `retry ${rateLimitRetries} after ${limit.kind}` });
          continue;
        }
        emit({ kind: "rate_limit", summary: `${limit.kind}: ${limit.message}; limited until ${decision.until.toISOString()}, past this job's budget` });
        return finish(
          1,
          {
            ...common,
            rateLimitRetries,
            rateLimitedUntil: decision.until.toISOString(),
            error: { code: "rate_limited", message: `${limit.kind} until ${decision.until.toISOString()}: ${limit.message}` },
          },
          written,
        );
      }
    }

    let error: SpawnError | undefined;
    if (exitCode !== 0) {
      const said = explicit !== undefined ? `the agent ended with FORGE_EXIT=${explicit}` : undefined;
      const why = parsed.errorText ?? (parsed.ok ? undefined : parsed.result) ?? (stderrTail.length > 0 ? stderrTail.slice(-3).join(" | ") : undefined);
      error = {
        code: exitCode === 1 ? "agent_failed" : STATUS_OF_EXIT[exitCode],
        message: oneLineError([said, why].filter(Boolean).join(": ") || `${invocation.command} exited with ${String(outcome.code ?? outcome.signal)}`),
      };
    }
    return finish(exitCode, { ...common, ...(error ? { error } : {}) }, written);
  }
}

function oneLineError(text: string): string {
  const s = text.replace(/\s+/g, " ").trim();
  return (s.length > 500 ? `${s.slice(0, 499)}…` : s) || "the agent failed";
}

/** Report files written (or rewritten) since `sinceMs`. */
async function reportsWritten(reports: ReportPaths, sinceMs: number): Promise<Partial<ReportPaths>> {
  const out: Partial<ReportPaths> = {};
  for (const key of Object.keys(reports) as Array<keyof ReportPaths>) {
    const s = await stat(reports[key]).catch(() => undefined);
    if (s && s.isFile() && s.mtimeMs >= sinceMs) out[key] = reports[key];
  }
  return out;
}

function closeStream(s: WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (s.closed || s.destroyed) return resolve();
    s.end(() => resolve());
  });
}
