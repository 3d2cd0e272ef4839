/**
 * GitHub Copilot CLI, headless, bring-your-own-key (checked against the real `copilot` 1.0.102,
 * offline, in test/agent/real/, its row):
 *
 *   copilot --output-format json --allow-all-tools --available-tools=<tools> --model <model>
 *           --no-ask-user --no-auto-update --disable-client-telemetry --no-color
 *           --usage-output-file <COPILOT_HOME>/forge-usage.json [--add-dir <dir>…] [--resume <id>]   (prompt on stdin)
 *
 * What the CLI does with them, and what Forge puts around it:
 * - The model: COPILOT_PROVIDER_BASE_URL (the job's model proxy) with COPILOT_PROVIDER_TYPE
 *   `anthropic` — the CLI speaks Anthropic Messages to it, streamed, its key (COPILOT_PROVIDER_API_KEY)
 *   in `x-api-key` — and COPILOT_OFFLINE=true: no GitHub sign-in, telemetry, web tools, GitHub MCP
 *   server or update check. Bring-your-own-key needs a model: `--model` (Forge's, else
 *   COPILOT_DEFAULT_MODEL), sent to the provider as is.
 * - The prompt on stdin (no argument-length limit; the CLI runs it as `-p` would).
 * - `--output-format json`: one JSON event per stdout line, `{ type, data }` — `assistant.turn_start`
 *   (one per model response), `assistant.message` (`content`, `toolRequests`), `tool.execution_start`
 *   (`toolCallId`, `toolName`, `arguments`), `tool.execution_complete` (`success`, `result.content`,
 *   `error`), `session.error` (`errorType`, `statusCode`, `message`), `session.*` notices, and last
 *   `result` (`sessionId`, `exitCode`, `usage`: premium requests, durations, code changes). Tokens
 *   are not in it: `--usage-output-file` writes them at the end (`modelMetrics.<model>.usage`:
 *   `inputTokens`, `outputTokens`, `cacheReadTokens`, `cacheWriteTokens`), which the parser reads
 *   when the process ends. No cost is reported for a provider of one's own; its tokens are priced by
 *   `prices`, and the model proxy meters them either way.
 * - Tools: `--available-tools` is the agent kind's tools in the CLI's names (COPILOT_TOOLS); its own
 *   sub-agents (`task`, `*_agent`) and questions to nobody (`ask_user`) are never offered.
 *   Its `create` makes no folders ("Parent directory does not exist"): a model makes them with `bash`.
 *   `--allow-all-tools` lets them run without a person; `--add-dir` opens Forge's session directory
 *   and the report files' folders to the file tools (the checkout is open already).
 * - Its home: COPILOT_HOME is the session folder's `home/.copilot` (kept out of the record the runner
 *   publishes, as Gemini CLI's is). Forge's system prompt is its `copilot-instructions.md`, which the
 *   CLI puts in its system prompt (it has no flag that appends to its own). Its conversations are
 *   `session-state/<id>/events.jsonl`, carried for a resumed attempt (src/agent/agent-sessions.ts).
 * - Errors: the CLI retries a 429 itself (five times, a second apart when the API asks for no wait); when it gives up the stream has a
 *   `session.error` (`statusCode` 429) and the process exits 1, which Forge's rate-limit check reads.
 * What it cannot do: a turn limit (no flag: the wall-clock and idle limits bound it), a reasoning
 * effort per tier for a provider of one's own (tiers are models), cost in its own output.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import {
  agentEnv,
  HeadlessParser,
  isObject,
  mapTools,
  readJsonObject,
  sessionHome,
  sessionWritableDirs,
  toolCallSummary,
  type Json,
} from "./headless.js";
import { oneLine, type Adapter, type AdapterInput, type AdapterOutcome, type Invocation, type ProgressDraft } from "./types.js";

/** Variables Copilot CLI reads: its provider (COPILOT_PROVIDER_*), its own switches. COPILOT_HOME is Forge's. */
export const COPILOT_ENV = ["COPILOT_*"];

/** The model when none is configured: bring-your-own-key needs one, and the proxy forwards it to Anthropic's API. */
export const COPILOT_DEFAULT_MODEL = "claude-sonnet-4-5";

/** The file `--usage-output-file` names, in the CLI's home (never published with the session's record). */
export const COPILOT_USAGE_FILE = "forge-usage.json";

/** Claude Code's tool names (Forge's per-kind lists, src/agent/hierarchy.ts) → Copilot CLI's. */
const TOOL_MAP: Record<string, string[]> = {
  Read: ["view"],
  Write: ["create"],
  Edit: ["edit"],
  MultiEdit: ["edit"],
  Glob: ["glob"],
  Grep: ["grep"],
  LS: ["view"],
  // 1.0.102 has no `write_bash` (it names it an unknown tool in the allowlist).
  Bash: ["bash", "read_bash", "stop_bash", "list_bash"],
  WebFetch: ["web_fetch"],
};

/** Copilot CLI's tools for Forge's allowed tool names (`Bash(git:*)` counts as Bash). */
export function copilotTools(allowedTools: readonly string[]): string[] {
  return mapTools(allowedTools, TOOL_MAP);
}

/** The session's Copilot home (COPILOT_HOME): `home/.copilot` of the session folder, never published. */
export function copilotHome(input: Pick<AdapterInput, "forgeEnv" | "cwd">): string {
  return path.join(sessionHome(input), ".copilot");
}

export function copilotArgs(
  input: Pick<AdapterInput, "model" | "allowedTools" | "resumeSession" | "cwd"> & { forgeEnv?: Record<string, string> },
): string[] {
  const tools = copilotTools(input.allowedTools);
  const args = ["--output-format", "json", "--allow-all-tools"];
  // An empty list would be no restriction at all: `view` alone is the least the CLI can be given.
  args.push(`--available-tools=${(tools.length ? tools : ["view"]).join(",")}`);
  args.push("--model", input.model || COPILOT_DEFAULT_MODEL);
  args.push("--no-ask-user", "--no-auto-update", "--disable-client-telemetry", "--no-color");
  args.push("--usage-output-file", path.join(copilotHome({ forgeEnv: input.forgeEnv ?? {}, cwd: input.cwd }), COPILOT_USAGE_FILE));
  for (const dir of sessionWritableDirs(input.cwd, input.forgeEnv)) args.push("--add-dir", dir);
  // A resumed attempt continues the earlier session's conversation: the prompt is its next turn.
  if (input.resumeSession) args.push(`--resume=${input.resumeSession}`);
  return args;
}

export const copilotAdapter: Adapter = {
  name: "copilot",
  invocation(input: AdapterInput): Invocation {
    const home = copilotHome(input);
    mkdirSync(home, { recursive: true });
    if (input.systemPrompt) writeFileSync(path.join(home, "copilot-instructions.md"), `${input.systemPrompt}\n`);
    const env: Record<string, string> = {
      ...agentEnv(input, COPILOT_ENV),
      COPILOT_HOME: home,
      COPILOT_AUTO_UPDATE: "false",
    };
    // A provider of one's own (the job's model proxy): nothing else of GitHub's is reached.
    if (env.COPILOT_PROVIDER_BASE_URL && env.COPILOT_OFFLINE === undefined) env.COPILOT_OFFLINE = "true";
    return {
      command: input.binary ?? "copilot",
      args: copilotArgs(input),
      env: withShellProvider(env, input.parentEnv),
      stdin: input.prompt,
    };
  },
  parser: (invocation?: Invocation) => new CopilotJsonParser(usageFileOf(invocation)),
};

/** The variables of the session's provider, which Copilot CLI keeps out of its shell tool's environment. */
const PROVIDER_VAR = /^COPILOT_(?:PROVIDER_[A-Z_]+|OFFLINE)$/;

/**
 * Copilot CLI leaves its provider's variables (COPILOT_PROVIDER_*, COPILOT_OFFLINE) out of the
 * environment of the commands its shell tool runs: a `forge spawn` there would start its Copilot
 * sub-agent with no provider (and the CLI would ask for a GitHub sign-in). So the session gets them
 * twice, the copy named `FORGE_<name>`, which the shell keeps; a session started from that shell (no
 * COPILOT_PROVIDER_* of its own) takes its provider from the copy.
 */
export function withShellProvider(env: Record<string, string>, parentEnv: NodeJS.ProcessEnv): Record<string, string> {
  const out = { ...env };
  if (!Object.keys(out).some((k) => PROVIDER_VAR.test(k)))
    for (const [k, v] of Object.entries(parentEnv))
      if (v !== undefined && k.startsWith("FORGE_") && PROVIDER_VAR.test(k.slice(6)) && out[k.slice(6)] === undefined) out[k.slice(6)] = v;
  for (const [k, v] of Object.entries(out)) if (PROVIDER_VAR.test(k)) out[`FORGE_${k}`] = v;
  return out;
}

function usageFileOf(invocation: Invocation | undefined): string | undefined {
  const i = invocation?.args.indexOf("--usage-output-file") ?? -1;
  return i >= 0 ? invocation!.args[i + 1] : undefined;
}

/** The tokens of a `--usage-output-file`, summed over its models; undefined when it is missing or unreadable. */
export function copilotUsage(file: string | undefined): { input: number; output: number; model?: string } | undefined {
  const parsed = readJsonObject(file);
  if (!parsed) return undefined;
  const metrics = isObject(parsed.modelMetrics) ? parsed.modelMetrics : {};
  let input = 0;
  let output = 0;
  for (const m of Object.values(metrics)) {
    const u = isObject(m) && isObject(m.usage) ? m.usage : {};
    const n = (k: string) => (typeof u[k] === "number" ? u[k] : 0);
    input += n("inputTokens") + n("cacheReadTokens") + n("cacheWriteTokens");
    output += n("outputTokens");
  }
  const model = Object.keys(metrics)[0];
  return { input, output, ...(model ? { model } : {}) };
}

/** Forge's names for the CLI's tools, in progress events (as Claude Code's and Codex's are). */
const FORGE_TOOL: Record<string, string> = { create: "Write", edit: "Edit", bash: "Bash", view: "Read", grep: "Grep", glob: "Glob" };

export class CopilotJsonParser extends HeadlessParser {
  #lastText: string | undefined;
  #sessionId: string | undefined;
  #model: string | undefined;
  #result: Json | undefined;
  #status: number | undefined;

  constructor(readonly usageFile?: string) {
    super();
  }

  protected event(e: Json): ProgressDraft[] {
    const d = isObject(e.data) ? e.data : {};
    switch (e.type) {
      case "assistant.turn_start":
        this.turnCount++;
        return [];
      case "assistant.message": {
        if (typeof d.model === "string") this.#model = d.model;
        if (typeof d.content !== "string" || !d.content) return [];
        this.#lastText = d.content;
        return [{ kind: "text", summary: oneLine(d.content) }];
      }
      case "tool.execution_start": {
        const name = String(d.toolName ?? "tool");
        if (typeof d.toolCallId === "string") this.running.add(d.toolCallId);
        return [{ kind: "tool_use", tool: FORGE_TOOL[name] ?? name, summary: toolCallSummary(FORGE_TOOL[name] ?? name, d.arguments) }];
      }
      case "tool.execution_complete": {
        if (typeof d.toolCallId === "string") this.running.delete(d.toolCallId);
        const r = isObject(d.result) ? d.result : {};
        const err = isObject(d.error) ? String(d.error.message ?? "") : "";
        const text = d.success === false ? `error: ${err || String(r.content ?? "")}` : String(r.content ?? "");
        return [{ kind: "tool_result", summary: oneLine(text) }];
      }
      case "session.error": {
        const msg = String(d.message ?? d.errorType ?? "error");
        if (typeof d.statusCode === "number") this.#status = d.statusCode;
        this.errors.push(msg);
        return [{ kind: "stderr", summary: oneLine(`${String(d.errorType ?? "error")}: ${msg}`) }];
      }
      case "session.warning":
        return [{ kind: "stderr", summary: oneLine(String(d.message ?? "warning")) }];
      case "result":
        return [this.#resultDraft(e)];
      default:
        // Streaming deltas and the CLI's bookkeeping (skills, tools, background tasks): not progress.
        return [];
    }
  }

  #resultDraft(e: Json): ProgressDraft {
    this.#result = e;
    if (typeof e.sessionId === "string") this.#sessionId = e.sessionId;
    const failed = typeof e.exitCode === "number" && e.exitCode !== 0;
    const text = failed ? `error: exit ${String(e.exitCode)}` : `done${this.#lastText ? `: ${this.#lastText}` : ""}`;
    return { kind: "result", summary: oneLine(text) };
  }

  finish(exitCode: number | null): AdapterOutcome {
    const r = this.#result;
    return this.outcome(
      exitCode === 0 && r !== undefined && (r.exitCode ?? 0) === 0,
      {
        result: this.#lastText,
        model: this.#model ?? copilotUsage(this.usageFile)?.model,
        sessionId: this.#sessionId,
        apiErrorStatus: this.#status,
      },
      { exitCode, ended: r !== undefined, missingEnd: "copilot ended without a result event" },
    );
  }

  /** The session's tokens, from `--usage-output-file` (written as the process ends). */
  afterExit(): ProgressDraft[] {
    const u = copilotUsage(this.usageFile);
    if (!u || (u.input === 0 && u.output === 0)) return [];
    return [
      { kind: "system", summary: `usage: ${u.input} input, ${u.output} output tokens`, tokens: { input: u.input, output: u.output } },
    ];
  }
}
