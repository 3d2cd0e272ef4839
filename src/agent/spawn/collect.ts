/**
 * After the agent's process ended: how the session ends (stopped, timed out, or the exit code the
 * agent stated, its process returned or its report files imply), and a rate limit waited out
 * inside the session while the deadline allows — then the run is tried again.
 */
import path from "node:path";
import { detectRateLimit, planRateLimitWait } from "../rate-limit.js";
import { EXIT_CODES, EXIT_STATUS, isExitCode, type ExitCode } from "../../core/exit-codes.js";
import type { SpawnError, SpawnResult } from "../types.js";
import { emit, finish, type SpawnContext } from "./context.js";
import type { PreparedSpawn } from "./prepare.js";
import type { AgentRun } from "./run.js";

/** `FORGE_EXIT=<code>` on a line of the agent's final message states its exit code. */
const EXIT_MARKER = /^[ \t>*`]*FORGE_EXIT\s*[=:]\s*(\d+)\b/gm;

/** The last valid exit code the text states, if any. */
export function explicitExitCode(text: string | undefined): ExitCode | undefined {
  if (!text) return undefined;
  let found: ExitCode | undefined;
  for (const m of text.matchAll(EXIT_MARKER)) {
    const n = Number(m[1]);
    if (isExitCode(n)) found = n;
  }
  return found;
}

/** How the agents' CLIs are installed, by command: what a job (or a person) without one needs to do. */
const INSTALL: Record<string, string> = {
  claude: "Claude Code: npm i -g @anthropic-ai/claude-code",
  codex: "Codex: npm i -g @openai/codex",
  gemini: "Gemini CLI: npm i -g @google/gemini-cli",
  opencode: "opencode: npm i -g opencode-ai",
  qwen: "Qwen Code: npm i -g @qwen-code/qwen-code",
  copilot: "GitHub Copilot CLI: npm i -g @github/copilot (its own licence; Forge does not bring it)",
};

/** Why the agent's process did not start: a command not found says so, and how to install it when Forge knows. */
function spawnFailure(command: string, err: Error): string {
  if ((err as NodeJS.ErrnoException).code !== "ENOENT") return `${command}: ${err.message}`;
  const install = INSTALL[path.basename(command)];
  return `${command}: no such command (not on PATH)${install ? `; install ${install}` : ""} (${err.message})`;
}

/** The session's result, or "again" after waiting out a rate limit. */
export async function collect(sc: SpawnContext, p: PreparedSpawn, run: AgentRun): Promise<SpawnResult | "again"> {
  const { options } = sc;
  const { outcome, parsed, common, written } = run;
  if (outcome.spawnError) {
    return finish(
      sc,
      EXIT_CODES.FAILURE,
      { ...common, error: { code: "spawn_failed", message: spawnFailure(p.invocation.command, outcome.spawnError) } },
      written,
    );
  }
  if (outcome.stopped === "aborted")
    return finish(sc, EXIT_CODES.INTERRUPTED, { ...common, error: { code: "aborted", message: "cancelled" } }, written);
  if (outcome.stopped === "timeout") {
    return finish(
      sc,
      EXIT_CODES.TIMEOUT,
      {
        ...common,
        timedOut: "wall",
        error: { code: "timeout", message: `wall-clock limit of ${Math.round((options.timeoutMs ?? 0) / 1000)} s reached` },
      },
      written,
    );
  }
  if (outcome.stopped === "idle") {
    return finish(
      sc,
      EXIT_CODES.TIMEOUT,
      {
        ...common,
        timedOut: "idle",
        error: { code: "idle_timeout", message: `no output for ${Math.round((outcome.silentMs ?? options.idleTimeoutMs ?? 0) / 1000)} s` },
      },
      written,
    );
  }

  const explicit = explicitExitCode(parsed.result);
  const exitCode = exitCodeOf(sc, run, explicit);
  if (exitCode === EXIT_CODES.FAILURE && explicit === undefined) {
    const limited = await rateLimited(sc, p, run);
    if (limited) return limited;
  }
  return finish(
    sc,
    exitCode,
    { ...common, ...(exitCode !== EXIT_CODES.SUCCESS ? { error: failureOf(p, run, exitCode, explicit) } : {}) },
    written,
  );
}

/** The exit code the agent stated; else the command's own; else what its report files imply. */
function exitCodeOf(sc: SpawnContext, run: AgentRun, explicit: ExitCode | undefined): ExitCode {
  const { parsed, written, outcome } = run;
  if (explicit !== undefined) return explicit;
  if (sc.options.adapter === "command") return isExitCode(outcome.code) ? outcome.code : EXIT_CODES.FAILURE;
  if (!parsed.ok) return EXIT_CODES.FAILURE;
  if (written.changeRequest) return EXIT_CODES.NEEDS_ESCALATION;
  if (written.question) return EXIT_CODES.HUMAN_INPUT;
  if (written.refinement) return EXIT_CODES.NEEDS_REFINEMENT;
  return EXIT_CODES.SUCCESS;
}

/**
 * A failure that reads as a rate limit: waited out ("again") while the deadline allows and the
 * retries last, else the session ends with the reset time. Undefined when it is no rate limit.
 */
async function rateLimited(sc: SpawnContext, p: PreparedSpawn, run: AgentRun): Promise<SpawnResult | "again" | undefined> {
  const { options } = sc;
  const { parsed, common, written, stderrTail } = run;
  const failureText = [parsed.errorText, parsed.ok ? "" : parsed.result, stderrTail.join("\n")].filter(Boolean).join("\n");
  const limit = detectRateLimit(failureText, { status: parsed.apiErrorStatus ?? null });
  if (!limit) return undefined;
  const decision = planRateLimitWait(limit, {
    now: new Date(),
    deadline: p.deadline,
    attempt: sc.rateLimitRetries,
    maxRetries: options.maxRateLimitRetries ?? 5,
    ...(options.random ? { random: options.random } : {}),
  });
  if (decision.action === "wait") {
    emit(sc, { kind: "rate_limit", summary: `${limit.kind}: ${limit.message}; retrying at ${decision.until.toISOString()}` });
    await (options.sleep ?? sleepFor)(decision.ms, options.signal);
    if (options.signal?.aborted)
      return finish(
        sc,
        EXIT_CODES.INTERRUPTED,
        { ...common, error: { code: "aborted", message: "cancelled while waiting for a rate limit" } },
        written,
      );
    sc.rateLimitRetries++;
    emit(sc, { kind: "retry", summary: `retry ${sc.rateLimitRetries} after ${limit.kind}` });
    return "again";
  }
  emit(sc, {
    kind: "rate_limit",
    summary: `${limit.kind}: ${limit.message}; limited until ${decision.until.toISOString()}, past this job's budget`,
  });
  return finish(
    sc,
    EXIT_CODES.FAILURE,
    {
      ...common,
      rateLimitRetries: sc.rateLimitRetries,
      rateLimitedUntil: decision.until.toISOString(),
      error: { code: "rate_limited", message: `${limit.kind} until ${decision.until.toISOString()}: ${limit.message}` },
    },
    written,
  );
}

/** The error of a session that did not succeed: what the agent said, and why as far as its output tells. */
function failureOf(p: PreparedSpawn, run: AgentRun, exitCode: ExitCode, explicit: ExitCode | undefined): SpawnError {
  const { parsed, stderrTail, outcome } = run;
  const said = explicit !== undefined ? `the agent ended with FORGE_EXIT=${explicit}` : undefined;
  const why =
    parsed.errorText ?? (parsed.ok ? undefined : parsed.result) ?? (stderrTail.length > 0 ? stderrTail.slice(-3).join(" | ") : undefined);
  return {
    code: exitCode === EXIT_CODES.FAILURE ? "agent_failed" : EXIT_STATUS[exitCode],
    message: oneLineError(
      [said, why].filter(Boolean).join(": ") || `${p.invocation.command} exited with ${String(outcome.code ?? outcome.signal)}`,
    ),
  };
}

function oneLineError(text: string): string {
  const s = text.replace(/\s+/g, " ").trim();
  return (s.length > 500 ? `${s.slice(0, 499)}…` : s) || "the agent failed";
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
