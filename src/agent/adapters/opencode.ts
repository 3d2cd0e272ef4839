/**
 * opencode, headless (checked against the real `opencode` 1.18.33, offline, in
 * test/agent/real/, its row):
 *
 *   opencode run --format json --pure -m forge/<model> [-s <session id>]   (the prompt on stdin)
 *
 * What the CLI does with them, and what Forge puts around it:
 * - `--format json`: one JSON event per stdout line, each with `sessionID` — `step_start` (one model
 *   call begins), `text` (`part.text`, the whole text of the call), `reasoning`, `tool_use`
 *   (`part.tool`, `part.state` { status completed|error, input, output, error }: printed once the
 *   tool has run), `step_finish` (`part.reason` tool-calls|stop, `part.tokens` { input, output,
 *   reasoning, cache { read, write } }, `part.cost`) and `error` (`error.name`, `error.data` {
 *   message, statusCode, responseBody }). There is no final event: the last `step_finish` (reason
 *   `stop`) ends a good session.
 * - The model: a provider of Forge's own, `forge`, in the config — an OpenAI-compatible one
 *   (`@ai-sdk/openai-compatible`, bundled in the binary) whose base URL is the job's model proxy and
 *   whose key is read from OPENAI_API_KEY (the proxy's session token; the file holds no credential).
 *   It speaks Chat Completions, streamed, usage in the last chunk. The session's title is asked of
 *   the same model (`small_model`), without tools.
 * - Its config: OPENCODE_CONFIG names the session home's `opencode.json` (never a file in the
 *   checkout); XDG_CONFIG_HOME, XDG_DATA_HOME (its sessions database), XDG_CACHE_HOME and
 *   XDG_STATE_HOME are the session home's too. The config holds the tools of the agent's kind
 *   (`tools`, every other one off — `task`, its own sub-agents, always), permissions that never wait
 *   for a person, no sharing, no update check, and Forge's system prompt as an instructions file.
 *   `--pure`: no external plugins.
 * - Errors: the CLI retries a 429 or 5xx itself (five times, honouring `retry-after`, printing
 *   nothing meanwhile); then an `error` event with the status and the API's message, and exit 1,
 *   which Forge's rate-limit check reads. No cost unless the model's config names prices (Forge
 *   meters at the proxy and prices by `prices`).
 * The prompt always goes on stdin, which the CLI reads whole when it is not a terminal: a message
 * argument with a space in it reaches the model wrapped in double quotes, its own quotes escaped
 * (`"${arg.replace(/"/g, '\\"')}"` in its `run` command), so a task's front matter would no longer be
 * the YAML Forge wrote (`title: \"A: b\"`), nor its code blocks the code.
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
  toolCallSummary,
  type Json,
} from "./headless.js";
import { oneLine, type Adapter, type AdapterInput, type AdapterOutcome, type Invocation, type ProgressDraft } from "./types.js";

/** Variables opencode's Forge provider reads: the key (the proxy's token) and the proxy's URL. */
export const OPENCODE_ENV = ["OPENAI_API_KEY", "OPENAI_BASE_URL"];

/** The model when none is configured. */
export const OPENCODE_DEFAULT_MODEL = "gpt-5.5";

/** The provider id of the model proxy in opencode's config. */
export const OPENCODE_PROVIDER = "forge";

/** Claude Code's tool names (Forge's per-kind lists) → opencode's. */
const TOOL_MAP: Record<string, string[]> = {
  Read: ["read"],
  Write: ["write"],
  Edit: ["edit", "patch", "apply_patch"],
  MultiEdit: ["edit", "patch", "apply_patch"],
  Glob: ["glob"],
  Grep: ["grep"],
  LS: ["list"],
  Bash: ["bash"],
  TodoWrite: ["todowrite", "todoread"],
  WebFetch: ["webfetch"],
  WebSearch: ["websearch"],
};

/** Every opencode tool Forge knows: those not allowed are turned off (`task` and `question` always). */
const ALL_TOOLS = [...new Set([...Object.values(TOOL_MAP).flat(), "task", "question", "skill", "codesearch", "lsp"])];

export function opencodeTools(allowedTools: readonly string[]): string[] {
  return mapTools(allowedTools, TOOL_MAP);
}

/** opencode's config for a session: the proxy as provider `forge`, the tools of the kind, Forge's instructions. */
export function opencodeConfig(o: { baseUrl: string; model: string; tools: string[]; instructions?: string }): Json {
  const model = `${OPENCODE_PROVIDER}/${o.model}`;
  return {
    $schema: "https://opencode.ai/config.json",
    provider: {
      [OPENCODE_PROVIDER]: {
        npm: "@ai-sdk/openai-compatible",
        name: "Forge model proxy",
        options: { baseURL: o.baseUrl, apiKey: "{env:OPENAI_API_KEY}", includeUsage: true },
        models: { [o.model]: { name: o.model, tool_call: true } },
      },
    },
    model,
    small_model: model,
    enabled_providers: [OPENCODE_PROVIDER],
    tools: Object.fromEntries(ALL_TOOLS.map((t) => [t, o.tools.includes(t)])),
    // A permission that allows a tool brings it back even when `tools` turns it off: only the kind's tools are allowed.
    permission: {
      edit: o.tools.includes("edit") || o.tools.includes("write") ? "allow" : "deny",
      bash: o.tools.includes("bash") ? "allow" : "deny",
      webfetch: o.tools.includes("webfetch") ? "allow" : "deny",
      external_directory: "allow",
      doom_loop: "allow",
    },
    ...(o.instructions ? { instructions: [o.instructions] } : {}),
    share: "disabled",
    autoupdate: false,
  };
}

export const opencodeConfigPath = (home: string) => path.join(home, "opencode.json");

/** The runner's own opencode config (its OPENCODE_CONFIG), under Forge's; `{}` when none or unreadable. */
function runnerConfig(env: NodeJS.ProcessEnv): Json {
  return readJsonObject(env.OPENCODE_CONFIG) ?? {};
}

export function opencodeArgs(input: Pick<AdapterInput, "prompt" | "model" | "resumeSession">): { args: string[]; stdin: string } {
  const args = ["run", "--format", "json", "--pure", "-m", `${OPENCODE_PROVIDER}/${input.model || OPENCODE_DEFAULT_MODEL}`];
  // A resumed attempt continues the earlier session: the prompt is its next message.
  if (input.resumeSession) args.push("-s", input.resumeSession);
  return { args, stdin: input.prompt };
}

/** The environment opencode runs with: its config and XDG folders in the session home, its network features off. */
export function opencodeHomeEnv(home: string): Record<string, string> {
  return {
    OPENCODE_CONFIG: opencodeConfigPath(home),
    XDG_CONFIG_HOME: path.join(home, ".config"),
    XDG_DATA_HOME: path.join(home, ".local", "share"),
    XDG_CACHE_HOME: path.join(home, ".cache"),
    XDG_STATE_HOME: path.join(home, ".local", "state"),
    OPENCODE_DISABLE_AUTOUPDATE: "true",
    OPENCODE_DISABLE_MODELS_FETCH: "true",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "true",
    OPENCODE_DISABLE_DEFAULT_PLUGINS: "true",
    OPENCODE_DISABLE_SHARE: "true",
  };
}

export const opencodeAdapter: Adapter = {
  name: "opencode",
  invocation(input: AdapterInput): Invocation {
    const home = sessionHome(input);
    mkdirSync(home, { recursive: true });
    const env = agentEnv(input, OPENCODE_ENV);
    let instructions: string | undefined;
    if (input.systemPrompt) {
      instructions = path.join(home, "forge-instructions.md");
      writeFileSync(instructions, `${input.systemPrompt}\n`);
    }
    const config = opencodeConfig({
      baseUrl: env.OPENAI_BASE_URL || "https://api.openai.com/v1",
      model: input.model || OPENCODE_DEFAULT_MODEL,
      tools: opencodeTools(input.allowedTools),
      ...(instructions ? { instructions } : {}),
    });
    writeFileSync(opencodeConfigPath(home), `${JSON.stringify(mergeJson(runnerConfig(input.parentEnv), config), null, 2)}\n`);
    const { args, stdin } = opencodeArgs(input);
    return {
      command: input.binary ?? "opencode",
      args,
      env: { ...env, ...opencodeHomeEnv(home) },
      stdin,
    };
  },
  parser: () => new OpencodeJsonParser(),
};

/** Forge's names for the CLI's tools, in progress events. */
const FORGE_TOOL: Record<string, string> = { write: "Write", edit: "Edit", bash: "Bash", read: "Read", patch: "Edit", apply_patch: "Edit" };

const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0);

export class OpencodeJsonParser extends HeadlessParser {
  #lastText: string | undefined;
  #sessionId: string | undefined;
  #stopped = false;
  #cost = 0;
  #tokens = { input: 0, output: 0 };
  #status: number | undefined;

  protected event(e: Json): ProgressDraft[] {
    if (typeof e.sessionID === "string") this.#sessionId = e.sessionID;
    const part = isObject(e.part) ? e.part : {};
    switch (e.type) {
      case "step_start":
        this.turnCount++;
        this.#stopped = false;
        return [];
      case "text":
        if (typeof part.text !== "string") return [];
        this.#lastText = part.text;
        return [{ kind: "text", summary: oneLine(part.text) }];
      case "reasoning":
        return [{ kind: "text", summary: "thinking" }];
      case "tool_use":
        return this.#tool(part);
      case "step_finish":
        return this.#stepFinish(part);
      case "error":
        return [this.#error(e)];
      default:
        return [{ kind: "system", summary: oneLine(String(e.type ?? "event")) }];
    }
  }

  #tool(part: Json): ProgressDraft[] {
    const name = String(part.tool ?? "tool");
    const state = isObject(part.state) ? part.state : {};
    const out: ProgressDraft[] = [{ kind: "tool_use", tool: FORGE_TOOL[name] ?? name, summary: toolCallSummary(name, state.input) }];
    if (state.status === "error") out.push({ kind: "tool_result", summary: oneLine(`error: ${String(state.error ?? "")}`) });
    else if (state.status === "completed") out.push({ kind: "tool_result", summary: oneLine(String(state.output ?? "")) });
    return out;
  }

  #stepFinish(part: Json): ProgressDraft[] {
    const tokens = isObject(part.tokens) ? part.tokens : {};
    const cache = isObject(tokens.cache) ? tokens.cache : {};
    const input = num(tokens.input) + num(cache.read) + num(cache.write);
    const output = num(tokens.output) + num(tokens.reasoning);
    this.#tokens = { input: this.#tokens.input + input, output: this.#tokens.output + output };
    this.#cost += num(part.cost);
    if (part.reason === "tool-calls") return [];
    this.#stopped = true;
    const t = this.#tokens;
    return [
      {
        kind: "result",
        summary: oneLine(`done (${t.input} input, ${t.output} output tokens)${this.#lastText ? `: ${this.#lastText}` : ""}`),
        ...(t.input > 0 || t.output > 0 ? { tokens: { ...t } } : {}),
        ...(this.#cost > 0 ? { costUsd: this.#cost } : {}),
      },
    ];
  }

  #error(e: Json): ProgressDraft {
    const err = isObject(e.error) ? e.error : {};
    const data = isObject(err.data) ? err.data : {};
    if (typeof data.statusCode === "number") this.#status = data.statusCode;
    const body = typeof data.responseBody === "string" ? data.responseBody.slice(0, 500) : "";
    const message = [String(data.message ?? err.name ?? "error"), this.#status ? `(${this.#status})` : "", body].filter(Boolean).join(" ");
    this.errors.push(message);
    return { kind: "stderr", summary: oneLine(message) };
  }

  finish(exitCode: number | null): AdapterOutcome {
    return this.outcome(
      exitCode === 0 && this.errors.length === 0 && this.#stopped,
      { result: this.#lastText, sessionId: this.#sessionId, costUsd: this.#cost, apiErrorStatus: this.#status },
      { exitCode, ended: this.#stopped, missingEnd: "opencode ended without finishing its last step" },
    );
  }
}
