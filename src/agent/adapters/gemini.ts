/**
 * Gemini CLI, headless (checked against the real `gemini` 0.61.0, offline, in
 * test/agent/real/, its row):
 *
 *   gemini -p <prompt> --approval-mode yolo --skip-trust -o stream-json -m <model> [-r <session id>]
 *
 * What the CLI does with them, and what Forge puts around it:
 * - `-o stream-json`: one JSON event per stdout line — `init` (`session_id`, `model`), `message`
 *   (`role` user|assistant, `content`, `delta: true` for the model's text in pieces), `tool_use`
 *   (`tool_name`, `tool_id`, `parameters`), `tool_result` (`tool_id`, `status` success|error,
 *   `output`, `error.message`), `error` (`severity` warning|error, `message`: retries, loops, quota)
 *   and, last, `result` (`status` success|error, `error { type, message }`, `stats`: `input_tokens`,
 *   `output_tokens`, `cached`, `input`, `tool_calls`, `models.<model>.{input_tokens, output_tokens,
 *   cached, input, total_tokens}`). No cost is reported; its tokens are priced by `prices`.
 * - `--include-directories <dir>`: the CLI's file tools refuse paths outside the workspace (the
 *   checkout); Forge's session directory and its report files' folders are added to it.
 * - `--approval-mode yolo`: no tool call waits for a person; `--skip-trust`: the checkout is trusted
 *   for this session (an untrusted folder would be refused in headless mode).
 * - `-m`: always a concrete model — the default `auto` router asks the model first which model to use
 *   (a JSON-schema call outside the conversation).
 * - Its home: GEMINI_CLI_HOME (it stands for the home directory; the CLI keeps `.gemini/` in it) is
 *   the session's own `home/`, holding `.gemini/settings.json` and `.gemini/GEMINI.md`. The
 *   settings are the runner's own (its GEMINI_CLI_HOME's or HOME's `.gemini/settings.json`) with
 *   Forge's on top: the auth type `gemini-api-key` — GOOGLE_GEMINI_BASE_URL (the model proxy) alone
 *   makes the CLI pick a "gateway" auth that headless mode refuses with exit 41 — the tools of the
 *   agent's kind (`tools.core`), its own sub-agents off, no telemetry, usage statistics or update
 *   checks. GEMINI.md is the CLI's global context file, which it puts in its system instruction:
 *   Forge's system prompt goes there (the CLI has no flag that appends to its own). The CLI's
 *   conversations (`tmp/<project>/chats/`) are kept there too, for a resumed attempt.
 * - Errors: the CLI retries 429s and 5xx itself (`general.maxAttempts`, default 10, with backoff); a
 *   quota it deems terminal (`limit: 0`, a daily quota, a retry delay over 5 minutes) ends at once.
 *   Either way the session ends with exit 173 and a `result` whose `error.message` carries the API's
 *   message (`[API Error: …]`), which Forge's rate-limit check reads. An auth failure exits 41, bad
 *   input 42, bad config 52.
 * The prompt goes on stdin when it is longer than one argument may be (`-p` is appended to stdin's
 * input); its key is GEMINI_API_KEY (or GOOGLE_API_KEY).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import {
  agentEnv,
  HeadlessParser,
  isObject,
  mapTools,
  mergeJson,
  readJsonObject,
  sessionHome,
  sessionWritableDirs,
  toolCallSummary,
  type Json,
} from "./headless.js";
import { oneLine, type Adapter, type AdapterInput, type AdapterOutcome, type Invocation, type ProgressDraft } from "./types.js";

/** Variables Gemini CLI reads: its key and endpoint, its own switches. GEMINI_CLI_HOME is Forge's. */
export const GEMINI_ENV = ["GEMINI_*", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"];

/** The CLI's exit codes Forge reads (the CLI's ExitCodes, and 173 for a 429 it gave up on). */
export const GEMINI_EXIT = { auth: 41, input: 42, config: 52, quota: 173 } as const;

/** The model when none is configured (the CLI's own default, not its `auto` router). */
export const GEMINI_DEFAULT_MODEL = "gemini-2.5-pro";

const ARG_LIMIT = 100_000;

/** Claude Code's tool names (Forge's per-kind lists, src/agent/hierarchy.ts) → Gemini CLI's. */
const TOOL_MAP: Record<string, string[]> = {
  Read: ["read_file", "read_many_files"],
  Write: ["write_file"],
  Edit: ["replace"],
  MultiEdit: ["replace"],
  Glob: ["glob"],
  Grep: ["grep_search"],
  LS: ["list_directory"],
  Bash: ["run_shell_command"],
  TodoWrite: ["write_todos"],
  WebFetch: ["web_fetch"],
  WebSearch: ["google_web_search"],
};

/** Tools never given: its own sub-agents (outside Forge's budget and depth), questions to nobody. */
const GEMINI_EXCLUDED = ["invoke_agent", "ask_user", "enter_plan_mode", "exit_plan_mode"];

/** Gemini CLI's tools for Forge's allowed tool names (`Bash(git:*)` counts as Bash). */
export function geminiTools(allowedTools: readonly string[]): string[] {
  return mapTools(allowedTools, TOOL_MAP);
}

/** The settings Forge needs, for `tools` (Gemini names; undefined: the CLI's own set) and `maxAttempts`. */
export function geminiSettings(o: { tools?: string[]; maxAttempts?: number } = {}): Json {
  return {
    security: { auth: { selectedType: "gemini-api-key" }, folderTrust: { enabled: false } },
    tools: { ...(o.tools ? { core: o.tools } : {}), exclude: GEMINI_EXCLUDED },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: {
      enableAutoUpdate: false,
      enableAutoUpdateNotification: false,
      ...(o.maxAttempts !== undefined ? { maxAttempts: o.maxAttempts } : {}),
    },
  };
}

/** The settings file of a CLI home (GEMINI_CLI_HOME). */
export const geminiSettingsPath = (home: string) => path.join(home, ".gemini", "settings.json");

/** Writes `settings` into the home (merged over what is there) and returns the file. */
export function writeGeminiSettings(home: string, settings: Json, base: Json = {}): string {
  const file = geminiSettingsPath(home);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(mergeJson(base, settings), null, 2)}\n`);
  return file;
}

/** The runner's own settings: its GEMINI_CLI_HOME's, else its HOME's; `{}` when none or unreadable. */
function runnerSettings(env: NodeJS.ProcessEnv): Json {
  const home = env.GEMINI_CLI_HOME || env.HOME;
  return (home && readJsonObject(geminiSettingsPath(home))) || {};
}

/**
 * The session's CLI home: the session folder's `home/`, the same folder that is its HOME when it runs
 * as its own OS user — kept out of the record the runner publishes (action/src/task/files.ts
 * `inAgentHome`): its settings, GEMINI.md (a protected instruction file's name) and raw conversation
 * are not the work. The conversation travels apart, masked, for a resumed attempt.
 */
export function geminiHome(input: Pick<AdapterInput, "forgeEnv" | "cwd">): string {
  return sessionHome(input);
}

export function geminiArgs(
  input: Pick<AdapterInput, "prompt" | "model" | "resumeSession" | "cwd"> & { forgeEnv?: Record<string, string> },
): { args: string[]; stdin?: string } {
  const viaStdin = Buffer.byteLength(input.prompt, "utf8") > ARG_LIMIT;
  // `-p` is appended to stdin's input: a prompt too long for an argument goes there whole.
  const args = ["-p", viaStdin ? "Follow the instructions above." : input.prompt];
  args.push("--approval-mode", "yolo", "--skip-trust", "-o", "stream-json", "-m", input.model || GEMINI_DEFAULT_MODEL);
  // Its file tools write only inside the workspace: the session directory and the reports' folders join it.
  for (const dir of sessionWritableDirs(input.cwd, input.forgeEnv)) args.push("--include-directories", dir);
  // A resumed attempt continues the earlier session's conversation: the prompt is its next turn.
  if (input.resumeSession) args.push("-r", input.resumeSession);
  return viaStdin ? { args, stdin: input.prompt } : { args };
}

export const geminiAdapter: Adapter = {
  name: "gemini",
  invocation(input: AdapterInput): Invocation {
    const home = geminiHome(input);
    const settings = geminiSettings({ tools: geminiTools(input.allowedTools) });
    writeGeminiSettings(home, settings, runnerSettings(input.parentEnv));
    if (input.systemPrompt) writeFileSync(path.join(home, ".gemini", "GEMINI.md"), `${input.systemPrompt}\n`);
    const { args, stdin } = geminiArgs(input);
    return {
      command: input.binary ?? "gemini",
      args,
      env: {
        ...agentEnv(input, GEMINI_ENV),
        GEMINI_CLI_HOME: home,
        // One process: the CLI otherwise starts itself again as a child to raise its heap limit.
        GEMINI_CLI_NO_RELAUNCH: "true",
      },
      ...(stdin !== undefined ? { stdin } : {}),
    };
  },
  parser: () => new GeminiStreamParser(),
};

/** Forge's names for the CLI's tools, in progress events (as Claude Code's and Codex's are). */
const FORGE_TOOL: Record<string, string> = { write_file: "Write", replace: "Edit", run_shell_command: "Bash", read_file: "Read" };

export class GeminiStreamParser extends HeadlessParser {
  /** A model response starts with the next message or tool call (at the start, after tool results). */
  #newTurn = true;
  #text = "";
  #lastText: string | undefined;
  #sessionId: string | undefined;
  #model: string | undefined;
  #result: Json | undefined;

  protected event(e: Json): ProgressDraft[] {
    switch (e.type) {
      case "init":
        if (typeof e.session_id === "string") this.#sessionId = e.session_id;
        if (typeof e.model === "string") this.#model = e.model;
        return [{ kind: "system", summary: oneLine(`session started (model ${this.#model ?? "?"})`) }];
      case "message": {
        if (e.role !== "assistant" || typeof e.content !== "string") return [];
        this.#startTurn();
        this.#text += e.content;
        this.#lastText = this.#text;
        return [];
      }
      case "tool_use": {
        const drafts = this.#flush();
        this.#startTurn();
        const name = String(e.tool_name ?? "tool");
        if (typeof e.tool_id === "string") this.running.add(e.tool_id);
        drafts.push({ kind: "tool_use", tool: FORGE_TOOL[name] ?? name, summary: toolCallSummary(name, e.parameters) });
        return drafts;
      }
      case "tool_result": {
        this.#newTurn = true;
        if (typeof e.tool_id === "string") this.running.delete(e.tool_id);
        const err = isObject(e.error) ? String(e.error.message ?? "") : "";
        const text = e.status === "error" ? `error: ${err || String(e.output ?? "")}` : String(e.output ?? "");
        return [{ kind: "tool_result", summary: oneLine(text) }];
      }
      case "error": {
        const msg = String(e.message ?? "error");
        if (e.severity === "error") this.errors.push(msg);
        return [{ kind: "stderr", summary: oneLine(msg) }];
      }
      case "result":
        return [...this.#flush(), this.#resultDraft(e)];
      default:
        return [{ kind: "system", summary: oneLine(String(e.type ?? "event")) }];
    }
  }

  #startTurn(): void {
    if (!this.#newTurn) return;
    this.turnCount++;
    this.#newTurn = false;
  }

  /** The text the model streamed since the last tool call, as one progress event. */
  #flush(): ProgressDraft[] {
    if (!this.#text) return [];
    const text = this.#text;
    this.#text = "";
    return [{ kind: "text", summary: oneLine(text) }];
  }

  #resultDraft(e: Json): ProgressDraft {
    this.#result = e;
    const stats = isObject(e.stats) ? e.stats : {};
    const models = isObject(stats.models) ? Object.keys(stats.models) : [];
    if (models.length > 0 && !this.#model) this.#model = models[0];
    const input = typeof stats.input_tokens === "number" ? stats.input_tokens : undefined;
    const output = typeof stats.output_tokens === "number" ? stats.output_tokens : undefined;
    const tokens = input !== undefined && output !== undefined ? ` (${input} input, ${output} output tokens)` : "";
    const error = isObject(e.error) ? String(e.error.message ?? e.error.type ?? "error") : "";
    if (error) this.errors.push(error);
    const text = e.status === "error" ? `error: ${error}` : `done${tokens}${this.#lastText ? `: ${this.#lastText}` : ""}`;
    return {
      kind: "result",
      summary: oneLine(text),
      ...(input !== undefined && output !== undefined && (input > 0 || output > 0) ? { tokens: { input, output } } : {}),
    };
  }

  finish(exitCode: number | null): AdapterOutcome {
    const r = this.#result;
    return this.outcome(
      exitCode === 0 && r?.status === "success",
      {
        result: this.#lastText,
        model: this.#model,
        sessionId: this.#sessionId,
        // The CLI's exit code for an API error it gave up on after a 429 (its retries spent, or a quota).
        ...(exitCode === GEMINI_EXIT.quota ? { apiErrorStatus: 429 } : {}),
      },
      { exitCode, ended: r !== undefined, missingEnd: "gemini ended without a result event" },
    );
  }
}
