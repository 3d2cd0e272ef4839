/**
 * `forge spawn` — Layer 0 of the agent layer (docs/runner.md#layers) on the command line. Agents allowed to have sub-agents run it
 * from their shell; people run it to try an agent by hand.
 *
 * stdout: `KEY=value` lines (text) or one JSON object (json). stderr: `{"status":"error","error":{…}}`
 * when the spawn did not succeed. Exit code: one of docs/runner.md#exit-codes (0, 1, 2, 3, 10, 11, 12, 20, 21); a bad
 * option is 1 with `error.code` `bad_options` (never 2, which means "depth exceeded").
 */
import { mkdirSync, mkdtempSync } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Command } from "commander";
import { EXIT_CODES, succeeded } from "../../core/exit-codes.js";
import { finishSubWorktree, forgeCheckoutOf, startSubWorktree, type SubBranchReport, type SubWorktree } from "../../agent/branches.js";
import { loadSystemPrompt } from "../../agent/prompts.js";
import { spawnAgent } from "../../agent/spawn/index.js";
import { ADAPTER_NAMES, AGENT_KINDS, isAgentKind, type AdapterName, type AgentKind, type SpawnResult } from "../../agent/types.js";
import { MODELS_ENV, modelFromEnv } from "../../core/tiers.js";
import { existingDir, existingFile, writableDir } from "../args.js";
import { CliError, type CliIo } from "../io.js";
import type { CommandContext } from "./index.js";

interface SpawnFlags {
  prompt?: string;
  promptFile?: string;
  systemPrompt?: string;
  extraContext?: string[];
  adapter?: string;
  command?: string;
  arg?: string[];
  model?: string;
  maxDepth?: string;
  outputFormat?: string;
  cwd?: string;
  allowedTools?: string;
  agentType?: string;
  sessionDir?: string;
  name?: string;
  maxTurns?: string;
  timeout?: string;
  idleTimeout?: string;
  passEnv?: string;
}

class BadOptions extends Error {}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** A bad option of `forge spawn`: one JSON line on stderr and exit 1 (never 2, which means "depth exceeded"). */
export function spawnBadOptions(io: CliIo, message: string): number {
  io.err(`${JSON.stringify({ status: "error", error: { code: "bad_options", message } })}\n`);
  return EXIT_CODES.FAILURE;
}

export function registerSpawn(program: Command, { io, setExitCode }: CommandContext): void {
  program
    .command("spawn")
    .description("Run one agent session (layer 0, see docs/runner.md#layers): depth budget, trace id, exit codes 0/1/2/3/10/11/12/20/21.")
    .option("--prompt <text>", "what to do")
    .option("--prompt-file <file>", "read the prompt from a file")
    .option("--system-prompt <file>", "system prompt file (default: the built-in or repository prompt of --agent-type)")
    .option("--extra-context <file>", "a resolution or context document appended to the prompt (repeatable)", collect)
    .option("--agent-type <kind>", `kind of agent: ${AGENT_KINDS.join(", ")}`)
    .option("--adapter <name>", "claude | codex | gemini | opencode | qwen | copilot | command (default: $FORGE_ADAPTER or claude)")
    .option("--command <exe>", "adapter command: the executable")
    .option("--arg <value>", "adapter command: an argument (repeatable)", collect)
    .option("--model <model>", "model id or alias (default: $FORGE_MODEL)")
    .option("--max-depth <n>", "spawn depth budget (default: $FORGE_MAX_DEPTH or 3)")
    .option("--output-format <format>", "text | json", "text")
    .option("--cwd <dir>", "working directory of the agent")
    .option("--allowed-tools <list>", "comma-separated tool names (default: the agent type's)")
    .option("--session-dir <dir>", "where events, transcript and signals go")
    .option("--name <name>", "name of this spawn in signals and events", "spawn")
    .option("--max-turns <n>", "turn limit passed to the agent CLI")
    .option("--timeout <seconds>", "wall-clock limit")
    .option("--idle-timeout <seconds>", "kill the agent after this long without output")
    .option("--pass-env <names>", "comma-separated environment variables to pass to the agent besides its adapter's own")
    // Unknown options and stray arguments are reported here, as JSON with exit 1: commander's own
    // usage error would exit 2, which callers read as "depth exceeded".
    .allowUnknownOption(true)
    .allowExcessArguments(true)
    .action(async (flags: SpawnFlags, cmd: Command) => {
      const json = flags.outputFormat === "json";
      const fail = (code: string, message: string) => {
        io.err(`${JSON.stringify({ status: "error", error: { code, message } })}\n`);
        setExitCode(EXIT_CODES.FAILURE);
      };
      try {
        if (cmd.args.length > 0) throw new BadOptions(`unknown option or argument: ${cmd.args.join(" ")}`);
        if (flags.outputFormat !== "text" && flags.outputFormat !== "json") throw new BadOptions("--output-format must be text or json");
        const controller = new AbortController();
        const onSignal = () => controller.abort();
        process.once("SIGINT", onSignal);
        process.once("SIGTERM", onSignal);
        try {
          const options = await optionsFrom(flags, io.cwd, controller.signal);
          const sub = await subWorktreePlan(options.cwd, options.name ?? "spawn", process.env);
          let worktree: SubWorktree | undefined;
          if (sub) {
            options.prepareCwd = async () => {
              worktree = await sub.start();
              return path.join(worktree.dir, sub.relative);
            };
          }
          let result: SpawnResult & { branch?: SubBranchReport } = await spawnAgent(options);
          if (sub && worktree) result = await sub.finish(worktree, result);
          else if (sub) await sub.cleanup();
          io.out(json ? `${JSON.stringify(toJson(result), null, 2)}\n` : toKeyValue(result));
          if (result.error) io.err(`${JSON.stringify({ status: "error", error: result.error })}\n`);
          setExitCode(result.exitCode);
        } finally {
          process.removeListener("SIGINT", onSignal);
          process.removeListener("SIGTERM", onSignal);
        }
      } catch (err) {
        if (err instanceof BadOptions || err instanceof CliError) setExitCode(spawnBadOptions(io, err.message));
        else fail("internal", err instanceof Error ? err.message : String(err));
      }
    });
}

/**
 * A sub-agent of an agent inside a Forge job (`FORGE_BRANCH` set, the checkout on the task branch or
 * one of its sub-branches) works in its own worktree on `<branch>-<name>` and is merged back into
 * the parent's branch when it ends (see docs/runner.md#sub-agent-branches). Outside a job — a person trying an agent — it works in `cwd` as asked.
 */
async function subWorktreePlan(cwd: string, name: string, env: NodeJS.ProcessEnv) {
  const checkout = await forgeCheckoutOf(cwd, env.FORGE_BRANCH || undefined);
  if (!checkout) return undefined;
  // Outside the checkout and outside the session folder (which is copied into the attempt's record).
  const root = mkdtempSync(path.join(tmpdir(), "forge-sub-"));
  const relative = path.relative(checkout.repoDir, cwd);
  return {
    relative,
    start: () =>
      startSubWorktree(checkout.repoDir, checkout.branch, name, path.join(root, "wt"), `forge spawn: work before sub-agent ${name}`),
    cleanup: () => rm(root, { recursive: true, force: true }),
    async finish(wt: SubWorktree, result: SpawnResult): Promise<SpawnResult & { branch: SubBranchReport }> {
      const ok = succeeded(result.exitCode);
      const branch = await finishSubWorktree(
        wt,
        `forge spawn: sub-agent ${name} (exit ${result.exitCode})`,
        ok ? { merge: true } : { merge: false, reason: `the sub-agent ended with exit ${result.exitCode}; its work stays on ${wt.branch}` },
      );
      await rm(root, { recursive: true, force: true });
      // A success whose work did not reach the parent's branch is not a success for the parent.
      if (ok && !branch.merged)
        return {
          ...result,
          exitCode: EXIT_CODES.FAILURE,
          status: "failure",
          error: { code: branch.conflicts?.length ? "merge_conflict" : "merge_failed", message: branch.error ?? "not merged" },
          branch,
        };
      return { ...result, branch };
    },
  };
}

function positiveInt(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new BadOptions(`${flag} must be a whole number, got '${value}'`);
  return n;
}

function seconds(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new BadOptions(`${flag} must be a positive number of seconds, got '${value}'`);
  return Math.round(n * 1000);
}

async function optionsFrom(flags: SpawnFlags, baseCwd: string, signal: AbortSignal): Promise<Parameters<typeof spawnAgent>[0]> {
  const env = process.env;
  const adapter = (flags.adapter ?? (env.FORGE_ADAPTER || "claude")) as AdapterName;
  if (!ADAPTER_NAMES.includes(adapter)) throw new BadOptions(`--adapter must be one of ${ADAPTER_NAMES.join(", ")}`);
  if (flags.agentType !== undefined && !isAgentKind(flags.agentType))
    throw new BadOptions(`--agent-type must be one of ${AGENT_KINDS.join(", ")}`);
  const agentType = flags.agentType as AgentKind | undefined;
  const cwd = flags.cwd === undefined ? path.resolve(baseCwd) : existingDir("--cwd", flags.cwd, baseCwd);
  // Every file and number is checked before anything is read, created or started.
  const promptFile = flags.promptFile === undefined ? undefined : existingFile("--prompt-file", flags.promptFile, baseCwd);
  const extraContext = (flags.extraContext ?? []).map((file) => existingFile("--extra-context", file, baseCwd));
  const systemPromptFile = flags.systemPrompt ? existingFile("--system-prompt", flags.systemPrompt, baseCwd) : undefined;
  if (flags.sessionDir !== undefined) writableDir("--session-dir", flags.sessionDir, baseCwd);
  const maxDepth = positiveInt(flags.maxDepth ?? (env.FORGE_MAX_DEPTH || undefined), "--max-depth");
  const maxTurns = positiveInt(flags.maxTurns ?? (env.FORGE_MAX_TURNS || undefined), "--max-turns");
  const timeoutMs = seconds(flags.timeout, "--timeout");
  const idleTimeoutMs = seconds(flags.idleTimeout, "--idle-timeout");

  let prompt = flags.prompt ?? (promptFile ? await readFile(promptFile, "utf8") : undefined);
  if (prompt === undefined || prompt.trim() === "") throw new BadOptions("--prompt or --prompt-file is required");
  for (const file of extraContext) {
    prompt += `\n\n## Additional context (${path.basename(file)})\n\n${await readFile(file, "utf8")}`;
  }
  let systemPrompt: string | undefined;
  if (systemPromptFile) systemPrompt = await readFile(systemPromptFile, "utf8");
  else if (agentType) systemPrompt = (await loadSystemPrompt(agentType, { repoDir: cwd })).text;

  const command = flags.command ?? (adapter === "command" ? env.FORGE_COMMAND : undefined);
  if (adapter === "command" && !command) throw new BadOptions("--adapter command needs --command <exe>");
  const name = flags.name ?? "spawn";
  // Inside a session, a sub-agent's session goes under the parent's, so one artifact holds both.
  const parentSubDir = env.FORGE_SESSION_DIR ? path.join(env.FORGE_SESSION_DIR, "sub") : tmpdir();
  if (!flags.sessionDir) mkdirSync(parentSubDir, { recursive: true });
  const sessionDir = flags.sessionDir
    ? path.resolve(baseCwd, flags.sessionDir)
    : mkdtempSync(path.join(parentSubDir, `forge-${name.replace(/[^a-zA-Z0-9._-]/g, "-")}-`));
  const binary = env.FORGE_AGENT_BINARY || undefined;
  // A sub-agent takes its role's model from its parent's table (FORGE_MODELS, docs/runner.md#model-tiers),
  // else the parent's own model.
  const inherited = flags.model === undefined ? modelFromEnv(env[MODELS_ENV], agentType ?? "1") : undefined;
  const model = flags.model ?? inherited?.model ?? (inherited ? undefined : env.FORGE_MODEL || undefined);
  const modelTier = flags.model === undefined ? inherited?.tier : undefined;
  return {
    adapter,
    prompt,
    cwd,
    sessionDir,
    name,
    signal,
    ...(agentType ? { agentType } : {}),
    ...(systemPrompt ? { systemPrompt } : {}),
    ...(model ? { model } : {}),
    ...(modelTier ? { modelTier } : {}),
    ...(maxDepth !== undefined ? { maxDepth } : {}),
    ...(maxTurns !== undefined ? { maxTurns } : {}),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    ...(idleTimeoutMs !== undefined ? { idleTimeoutMs } : {}),
    ...(flags.allowedTools
      ? {
          allowedTools: flags.allowedTools
            .split(",")
            .map((t) => t.trim())
            .filter(Boolean),
        }
      : {}),
    ...(command ? { command } : {}),
    ...(binary && adapter !== "command" && adapter === env.FORGE_ADAPTER ? { binary } : {}),
    ...(flags.passEnv ? { passEnv: envNames(flags.passEnv) } : {}),
    ...(flags.arg ? { args: flags.arg } : {}),
    // The sub-agent gets the same `forge` its parent has (the bundled Action's, or this package's).
    ...(env.FORGE_CLI ? { forgeCli: { command: env.FORGE_CLI, args: [] } } : {}),
  };
}

export function toJson(r: SpawnResult & { branch?: SubBranchReport }): Record<string, unknown> {
  return {
    status: r.status,
    exit_code: r.exitCode,
    ...(r.error ? { error: r.error } : {}),
    trace_id: r.traceId,
    depth: r.depth,
    max_depth: r.maxDepth,
    adapter: r.adapter,
    ...(r.agentType ? { agent_type: r.agentType } : {}),
    ...(r.model ? { model: r.model } : {}),
    ...(r.turns !== undefined ? { turns: r.turns } : {}),
    ...(r.costUsd !== undefined ? { cost_usd: r.costUsd } : {}),
    ...(r.timedOut ? { timed_out: r.timedOut } : {}),
    ...(r.rateLimitedUntil ? { rate_limited_until: r.rateLimitedUntil } : {}),
    duration_ms: r.durationMs,
    session_dir: r.sessionDir,
    events: r.eventsPath,
    transcript: r.transcriptPath,
    ...(r.signalPath ? { signal: r.signalPath } : {}),
    reports: r.reports,
    ...(r.branch ? { branch: r.branch } : {}),
    ...(r.result !== undefined ? { result: r.result } : {}),
  };
}

/** `KEY=value` lines; values with line breaks or quotes are written as JSON strings. */
export function toKeyValue(r: SpawnResult & { branch?: SubBranchReport }): string {
  const flat: Record<string, unknown> = { ...toJson(r) };
  delete flat.reports;
  delete flat.error;
  delete flat.branch;
  if (r.branch) {
    flat.branch = r.branch.branch;
    flat.branch_parent = r.branch.parent_branch;
    flat.branch_merged = r.branch.merged;
    flat.branch_head = r.branch.head;
    if (r.branch.conflicts) flat.branch_conflicts = r.branch.conflicts.join(",");
  }
  if (r.error) {
    flat.error_code = r.error.code;
    flat.error_message = r.error.message;
  }
  for (const [k, v] of Object.entries(r.reports)) flat[`report_${k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`] = v;
  return Object.entries(flat)
    .map(([k, v]) => {
      const s = String(v);
      return `${k.toUpperCase()}=${/[\n\r"]/.test(s) ? JSON.stringify(s) : s}\n`;
    })
    .join("");
}

/** `--pass-env`'s names, each an environment variable's name. */
function envNames(list: string): string[] {
  const names = list
    .split(",")
    .map((n) => n.trim())
    .filter(Boolean);
  const bad = names.find((n) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(n));
  if (bad !== undefined) throw new BadOptions(`--pass-env: ${JSON.stringify(bad)} is not an environment variable's name`);
  return names;
}
