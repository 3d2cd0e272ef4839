/**
 * The agent's process, once: under the wall-clock limit left, the idle limits and cancellation,
 * its output masked into the transcript and parsed into progress events, and what the adapter's
 * parser made of it.
 */
import { mkdirSync } from "node:fs";
import { stat } from "node:fs/promises";
import path from "node:path";
import { EXIT_CODES } from "../../core/exit-codes.js";
import { HIERARCHY_ENV } from "../hierarchy-service.js";
import { asAgentUser, handOver, killAgentProcesses, signalAgentGroup, takeBack, unreachableCommand, type AgentUser } from "../isolation.js";
import { isPartialChunk } from "../adapters/claude.js";
import { readAgentFile } from "../agent-files.js";
import { carrySession, MAX_CARRIED_SESSION_BYTES, restoreSession } from "../agent-sessions.js";
import type { AdapterOutcome, OutputParser } from "../adapters/types.js";
import { runProcess, type ProcessOutcome } from "../process.js";
import type { ReportPaths, SpawnResult } from "../types.js";
import { emit, finish, type SpawnContext } from "./context.js";
import type { PreparedSpawn } from "./prepare.js";

/** One run of the agent's process, for `collect`. */
export interface AgentRun {
  outcome: ProcessOutcome;
  parsed: AdapterOutcome;
  /** The last 50 lines of stderr. */
  stderrTail: string[];
  /** What every result of this run carries: model, turns, cost, the agent's session id. */
  common: Partial<SpawnResult>;
  /** Report files the agent wrote during this run. */
  written: Partial<ReportPaths>;
}

/** Runs the agent once; `done` when the wall clock ran out while waiting for a rate limit. */
export async function runAgentOnce(sc: SpawnContext, p: PreparedSpawn): Promise<AgentRun | { done: SpawnResult }> {
  const { options } = sc;
  const remaining = options.timeoutMs !== undefined ? options.timeoutMs - (Date.now() - sc.started.getTime()) : undefined;
  if (remaining !== undefined && remaining <= 0) {
    return {
      done: await finish(sc, 21, {
        timedOut: "wall",
        rateLimitRetries: sc.rateLimitRetries,
        error: { code: "timeout", message: "wall-clock limit reached while waiting" },
      }),
    };
  }
  const parser: OutputParser = p.adapter.parser(p.invocation);
  const stderrTail: string[] = [];
  const runStart = Date.now();
  const isolated = asIsolated(sc, p);
  const env = isolated?.env ?? p.invocation.env;
  // A resumed session's conversation, carried from the earlier job, goes where the CLI looks for it.
  if (options.resumeSession && options.resumeFile) await restoreCarried(sc, p, env);
  if (isolated) {
    await handOver(isolated.user, isolated.dirs);
    const why = await unreachableCommand(isolated.user, p.invocation.command, p.invocation.args, env);
    if (why) {
      await takeBack(isolated.user, isolated.dirs);
      return { done: await finish(sc, EXIT_CODES.FAILURE, { error: { code: "spawn_failed", message: why } }) };
    }
  }
  const outcome: ProcessOutcome = await runProcess({
    command: isolated?.command ?? p.invocation.command,
    args: isolated?.args ?? p.invocation.args,
    cwd: p.cwd,
    env,
    ...(isolated ? { signalGroup: (pgid: number, sig: NodeJS.Signals) => void signalAgentGroup(isolated.user, pgid, sig) } : {}),
    ...(p.invocation.stdin !== undefined ? { stdin: p.invocation.stdin } : {}),
    ...(remaining !== undefined ? { timeoutMs: remaining } : {}),
    ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
    busyIdleTimeoutMs: options.toolIdleTimeoutMs ?? 10 * 60_000,
    isBusy: () => parser.busy?.() ?? false,
    ...(options.signal ? { signal: options.signal } : {}),
    onStdoutLine: (line) => {
      if (!isPartialChunk(line)) sc.transcript.write(`${sc.masker.mask(line)}\n`);
      for (const d of parser.stdoutLine(line)) {
        sc.turn = parser.turns();
        emit(sc, d);
      }
    },
    onStderrLine: (line) => {
      sc.transcript.write(`[stderr] ${sc.masker.mask(line)}\n`);
      stderrTail.push(line);
      if (stderrTail.length > 50) stderrTail.shift();
      for (const d of parser.stderrLine(line)) emit(sc, d);
    },
  });
  if (isolated) await endIsolated(sc, isolated);
  const parsed: AdapterOutcome = parser.finish(outcome.code);
  for (const d of parser.afterExit?.() ?? []) emit(sc, d);
  // The conversation goes with the session folder, masked, for a resumed attempt to continue.
  if (parsed.sessionId && options.adapter !== "command") {
    const carried = await carrySession(options.adapter, env, parsed.sessionId, sc.sessionDir, sc.masker).catch((e: unknown) => ({
      why: (e as Error).message,
    }));
    if (carried.why) emit(sc, { kind: "system", summary: `session ${parsed.sessionId} not carried: ${carried.why}` });
  }
  const common: Partial<SpawnResult> = {
    rateLimitRetries: sc.rateLimitRetries,
    ...(parsed.result !== undefined ? { result: parsed.result } : {}),
    ...((parsed.model ?? options.model) ? { model: parsed.model ?? options.model } : {}),
    ...(parsed.turns !== undefined ? { turns: parsed.turns } : {}),
    ...(parsed.costUsd !== undefined ? { costUsd: parsed.costUsd } : {}),
    ...(parsed.sessionId ? { sessionId: parsed.sessionId } : {}),
  };
  // A little slack for file systems whose timestamps are coarser than the clock.
  const written = await reportsWritten(p.reports, runStart - 50);
  return { outcome, parsed, stderrTail, common, written };
}

/**
 * How this session runs as the agent's own user, when it should (`options.runAs`, and this process
 * is not that user already): the command line, and the directories handed over for the session —
 * the working directory, the session folder (reports, its own HOME and TMPDIR) and the hierarchy's
 * socket folder.
 */
function asIsolated(
  sc: SpawnContext,
  p: PreparedSpawn,
): { user: AgentUser; command: string; args: string[]; env: NodeJS.ProcessEnv; dirs: string[] } | undefined {
  const user = sc.options.runAs;
  if (!user || process.getuid?.() === user.uid) return undefined;
  const home = path.join(sc.sessionDir, "home");
  const tmp = path.join(sc.sessionDir, "tmp");
  mkdirSync(home, { recursive: true });
  mkdirSync(tmp, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    ...p.invocation.env,
    HOME: p.invocation.env.HOME && p.invocation.env.HOME !== process.env.HOME ? p.invocation.env.HOME : home,
    TMPDIR: tmp,
    USER: user.user,
    LOGNAME: user.user,
  };
  const socket = env[HIERARCHY_ENV.socket];
  const dirs = [
    p.cwd,
    sc.sessionDir,
    ...Object.values(p.reports).map((f) => path.dirname(f)),
    ...(socket ? [path.dirname(socket)] : []),
    ...(env.HOME !== home ? [env.HOME!] : []),
  ];
  return { user, ...asAgentUser(user, p.invocation.command, p.invocation.args, env), env, dirs };
}

/**
 * The session is over for every process of the agent's user, not only its process group (a
 * `setsid` daemon would outlive it, and the next stages, and the job); then the directories are
 * taken back.
 */
async function endIsolated(sc: SpawnContext, isolated: { user: AgentUser; dirs: string[] }): Promise<void> {
  const left = await killAgentProcesses(isolated.user);
  if (left.length) emit(sc, { kind: "system", summary: `processes of ${isolated.user.user} outlived every kill: ${left.join(", ")}` });
  await takeBack(isolated.user, isolated.dirs);
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

/** Puts the conversation a resumed session continues back where its CLI looks for it (src/agent/agent-sessions.ts). */
async function restoreCarried(sc: SpawnContext, p: PreparedSpawn, env: NodeJS.ProcessEnv): Promise<void> {
  const { resumeSession, resumeFile, adapter } = sc.options;
  if (!resumeSession || !resumeFile) return;
  const buf = await readAgentFile(resumeFile.root, resumeFile.path, { maxBytes: MAX_CARRIED_SESSION_BYTES }).catch(() => undefined);
  const dest = buf
    ? await restoreSession(adapter, buf, path.basename(resumeFile.path), env, p.cwd, resumeSession).catch(() => undefined)
    : undefined;
  emit(sc, {
    kind: "system",
    summary: dest
      ? `resuming session ${resumeSession} from its carried conversation`
      : `resuming session ${resumeSession}: no carried conversation restored`,
  });
}
