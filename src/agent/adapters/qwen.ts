/**
 * Qwen Code, headless (checked against the real `qwen` 0.24.4, offline, in
 * test/agent/real/, its row):
 *
 *   qwen -p <prompt> --auth-type openai --yolo -o stream-json -m <model>
 *        --append-system-prompt <text> --exclude-tools <t>… [--include-directories <dir>…] [-r <session id>]
 *
 * What the CLI does with them, and what Forge puts around it:
 * - `-o stream-json`: Claude Code's shapes (StreamJsonParser reads them) — `system` (`init`:
 *   `session_id`, `model`, `tools`), `assistant` (one content block per line, text or `tool_use`),
 *   `user` (`tool_result` blocks), `stream_event` (liveness) and, last, `result` (`subtype`,
 *   `is_error`, `num_turns`, `result`, `usage`). Its tools carry its own names (`write_file`, `edit`,
 *   `run_shell_command`); progress names them as Forge does.
 * - `--auth-type openai`: Chat Completions at OPENAI_BASE_URL (the job's model proxy) with
 *   OPENAI_API_KEY (the proxy's session token), streamed, usage in the last chunk.
 * - `--yolo`: no tool call waits for a person. `--exclude-tools`: every tool the agent's kind may not
 *   use, and its own sub-agents (`agent`) always. `--include-directories`: Forge's session directory
 *   and its report files' folders join the workspace its file tools may write in.
 * - Its home: QWEN_HOME (its `.qwen` folder: settings, conversations under
 *   `projects/<cwd with every other character a dash>/chats/<session id>.jsonl`) is the session home's
 *   `.qwen`; its settings are the runner's own (its QWEN_HOME's or HOME's `.qwen/settings.json`) with
 *   telemetry, usage statistics and update checks off on top.
 * - Errors: the CLI retries 429s and 5xx itself (its OpenAI client honours `retry-after`, then it
 *   tries the whole call again after a minute, `model.generationConfig.maxRetries` times, default 10);
 *   then a `result` with `is_error` and `[API Error: 429 <the API's message>]`, and exit 1, which
 *   Forge's rate-limit check reads.
 * The prompt goes on stdin when it is longer than one argument may be (`-p` is appended to stdin's input).
 * - Its search tool (`grep_search`) runs the ripgrep its package vendors
 *   (`vendor/ripgrep/<arch>-<platform>/rg` beside its entry script), which the npm package ships
 *   without its exec bit (mode 0644 in 0.24.4's tarball): the CLI then finds it unusable and falls
 *   back to a search of its own (or a system `rg`). The session's set-up gives the file the exec bit
 *   of each class that may read it (qwenRipgrep), best effort.
 */
import { accessSync, chmodSync, constants, existsSync, mkdirSync, realpathSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { StreamJsonParser } from "./claude.js";
import { agentEnv, mapTools, mergeJson, readJsonObject, sessionHome, sessionWritableDirs, type Json } from "./headless.js";
import type { Adapter, AdapterInput, Invocation, ProgressDraft } from "./types.js";

/** Variables Qwen Code's OpenAI auth reads: the key (the proxy's token) and the proxy's URL. */
export const QWEN_ENV = ["OPENAI_API_KEY", "OPENAI_BASE_URL"];

/** The model when none is configured. */
export const QWEN_DEFAULT_MODEL = "qwen3-coder-plus";

const ARG_LIMIT = 100_000;

/** Claude Code's tool names (Forge's per-kind lists) → Qwen Code's. */
const TOOL_MAP: Record<string, string[]> = {
  Read: ["read_file", "read_many_files"],
  Write: ["write_file"],
  Edit: ["edit"],
  MultiEdit: ["edit"],
  NotebookEdit: ["notebook_edit"],
  Glob: ["glob"],
  Grep: ["grep_search"],
  LS: ["list_directory"],
  Bash: ["run_shell_command"],
  TodoWrite: ["todo_write"],
  WebFetch: ["web_fetch"],
  WebSearch: ["web_search"],
};

/** Tools never given: its own sub-agents (outside Forge's budget and depth), worktrees of its own, questions to nobody. */
const QWEN_EXCLUDED = ["agent", "list_agents", "send_message", "enter_worktree", "exit_worktree", "ask_user_question", "exit_plan_mode"];

export function qwenTools(allowedTools: readonly string[]): string[] {
  return mapTools(allowedTools, TOOL_MAP);
}

/**
 * Excluding some tools excludes others with them: the CLI reads `--exclude-tools` as deny rules, and
 * the rule `edit` is its Edit category (`edit`, `write_file`, `notebook_edit`), `read_file` its Read
 * category (`read_file`, `grep_search`, `glob`, `list_directory`, `zoom_image`) — 0.24.4's
 * `toolMatchesRuleToolName`.
 */
const RULE_COVERS: Record<string, string[]> = {
  edit: ["write_file", "notebook_edit"],
  read_file: ["grep_search", "glob", "list_directory"],
};

/**
 * The tools a session must not have: every mapped tool of another kind's, and the always-excluded —
 * but not a rule that would take an allowed tool with it: a sentinel (Write, not Edit) keeps `edit`
 * for its `write_file` to write its report (its Bash could change files anyway).
 */
export function qwenExcludedTools(allowedTools: readonly string[]): string[] {
  const allowed = new Set(qwenTools(allowedTools));
  const all = new Set(Object.values(TOOL_MAP).flat());
  const takesAllowed = (t: string) => (RULE_COVERS[t] ?? []).some((c) => allowed.has(c));
  return [...[...all].filter((t) => !allowed.has(t) && !takesAllowed(t)), ...QWEN_EXCLUDED];
}

/** Qwen Code's home (QWEN_HOME) for a session. */
export const qwenHome = (input: Pick<AdapterInput, "forgeEnv" | "cwd">) => path.join(sessionHome(input), ".qwen");

/** The settings Forge writes: no telemetry, usage statistics or update checks. */
export function qwenSettings(): Json {
  return {
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { disableAutoUpdate: true, disableUpdateNag: true },
  };
}

/** The runner's own settings (its QWEN_HOME's, else its HOME's `.qwen/settings.json`), under Forge's; `{}` when none or unreadable. */
function runnerSettings(env: NodeJS.ProcessEnv): Json {
  const dir = env.QWEN_HOME || (env.HOME ? path.join(env.HOME, ".qwen") : undefined);
  return readJsonObject(dir && path.join(dir, "settings.json")) ?? {};
}

export function qwenArgs(
  input: Pick<AdapterInput, "prompt" | "systemPrompt" | "model" | "allowedTools" | "maxTurns" | "resumeSession" | "cwd"> & {
    forgeEnv?: Record<string, string>;
  },
): { args: string[]; stdin?: string } {
  const viaStdin = Buffer.byteLength(input.prompt, "utf8") > ARG_LIMIT;
  const args = ["-p", viaStdin ? "Follow the instructions above." : input.prompt];
  args.push("--auth-type", "openai", "--yolo", "-o", "stream-json", "-m", input.model || QWEN_DEFAULT_MODEL);
  if (input.systemPrompt) args.push("--append-system-prompt", input.systemPrompt);
  for (const t of qwenExcludedTools(input.allowedTools)) args.push("--exclude-tools", t);
  if (input.maxTurns !== undefined) args.push("--max-session-turns", String(input.maxTurns));
  for (const dir of sessionWritableDirs(input.cwd, input.forgeEnv)) args.push("--include-directories", dir);
  // A resumed attempt continues the earlier session's conversation: the prompt is its next turn.
  if (input.resumeSession) args.push("-r", input.resumeSession);
  return viaStdin ? { args, stdin: input.prompt } : { args };
}

/** The CLI's entry script: `binary` (a path, else the `qwen` first on PATH), links followed; undefined when not found. */
function qwenEntry(binary: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  const name = binary ?? "qwen";
  const candidates = name.includes(path.sep)
    ? [name]
    : (env.PATH ?? "")
        .split(path.delimiter)
        .filter(Boolean)
        .map((d) => path.join(d, name));
  for (const file of candidates) {
    try {
      accessSync(file, constants.X_OK);
      return realpathSync(file);
    } catch {
      // not this one
    }
  }
  return undefined;
}

/**
 * Qwen Code's vendored ripgrep for this machine, made executable by each class (owner, group,
 * others) that may read it — the npm package ships it without the bit. Returns its path when it is
 * there (executable or not: a file Forge may not change stays as it is); undefined when the CLI or
 * its ripgrep is not found.
 */
export function qwenRipgrep(
  binary: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  platform: string = process.platform,
  arch: string = process.arch,
): string | undefined {
  const entry = qwenEntry(binary, env);
  if (!entry) return undefined;
  const rg = path.join(path.dirname(entry), "vendor", "ripgrep", `${arch}-${platform}`, platform === "win32" ? "rg.exe" : "rg");
  try {
    const { mode } = statSync(rg);
    const wanted = mode | ((mode & 0o444) >> 2);
    if ((mode & 0o777) !== (wanted & 0o777)) chmodSync(rg, wanted & 0o7777);
    return rg;
  } catch {
    return existsSync(rg) ? rg : undefined;
  }
}

export const qwenAdapter: Adapter = {
  name: "qwen",
  invocation(input: AdapterInput): Invocation {
    qwenRipgrep(input.binary, input.parentEnv);
    const home = qwenHome(input);
    mkdirSync(home, { recursive: true });
    const settings = mergeJson(runnerSettings(input.parentEnv), qwenSettings());
    writeFileSync(path.join(home, "settings.json"), `${JSON.stringify(settings, null, 2)}\n`);
    const { args, stdin } = qwenArgs(input);
    return {
      command: input.binary ?? "qwen",
      args,
      env: {
        ...agentEnv(input, QWEN_ENV),
        QWEN_HOME: home,
        // One process: the CLI otherwise starts itself again as a child.
        QWEN_CODE_NO_RELAUNCH: "true",
        QWEN_CODE_SUPPRESS_YOLO_WARNING: "1",
      },
      ...(stdin !== undefined ? { stdin } : {}),
    };
  },
  parser: () => new QwenStreamParser(),
};

/** Forge's names for the CLI's tools, in progress events. */
const FORGE_TOOL: Record<string, string> = { write_file: "Write", edit: "Edit", run_shell_command: "Bash", read_file: "Read" };

/** Qwen Code's stream-json: Claude Code's shapes, its tools named as Forge names them, the result's usage as tokens. */
export class QwenStreamParser extends StreamJsonParser {
  override event(e: Json): ProgressDraft[] {
    const drafts = super.event(e);
    for (const d of drafts) if (d.kind === "tool_use" && d.tool) d.tool = FORGE_TOOL[d.tool] ?? d.tool;
    if (e.type === "result" && e.usage && typeof e.usage === "object") {
      const u = e.usage as Json;
      const input = typeof u.input_tokens === "number" ? u.input_tokens : 0;
      const output = typeof u.output_tokens === "number" ? u.output_tokens : 0;
      const result = drafts.find((d) => d.kind === "result");
      if (result && (input > 0 || output > 0)) result.tokens = { input, output };
    }
    return drafts;
  }
}
