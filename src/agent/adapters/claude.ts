/**
 * Claude Code CLI:
 *
 *   claude -p <prompt> --append-system-prompt <text> --allowedTools <a,b> --max-turns N
 *          --output-format stream-json --verbose [--model M]
 *
 * `--output-format stream-json` needs `--verbose` in print mode. Every line of stdout is then one JSON
 * object: `system` (subtype `init`: model, session_id, tools), `assistant` (one content block per
 * line: text or tool_use; lines of one API message share `message.id`), `user` (tool_result blocks)
 * and, last, `result` (`subtype`, `is_error`, `num_turns`, `total_cost_usd`, `result`,
 * `api_error_status`, `session_id`). A persistent API error (e.g. 429) ends with exit code 1 and a
 * `result` whose text is `API Error: … (429) · <message>`. With `--include-partial-messages`,
 * `stream_event` lines carry the API's SSE events as they arrive; they only prove liveness (one
 * progress event every few seconds) and stay out of the transcript.
 *
 * A prompt longer than Linux's single-argument limit (128 KiB) is sent on stdin instead, which
 * `claude -p` reads when no prompt argument is given.
 */
import { pickEnv } from "../env.js";
import {
  oneLine,
  type Adapter,
  type AdapterInput,
  type AdapterOutcome,
  type Invocation,
  type OutputParser,
  type ProgressDraft,
} from "./types.js";

/** Variables Claude Code reads: the model key and endpoint, its own settings, its quiet switches. */
export const CLAUDE_ENV = [
  "ANTHROPIC_*",
  "CLAUDE_CODE_*",
  "CLAUDE_CONFIG_DIR",
  "DISABLE_*",
  "MAX_THINKING_TOKENS",
  "API_TIMEOUT_MS",
  "BASH_DEFAULT_TIMEOUT_MS",
  "BASH_MAX_TIMEOUT_MS",
];

const ARG_LIMIT = 100_000;

/** At most one progress event per this many ms from partial-message chunks. */
const STREAM_PROGRESS_EVERY_MS = 5_000;

/** Lines kept out of the transcript: partial chunks repeat what the complete message says. */
export function isPartialChunk(line: string): boolean {
  return line.startsWith('{"type":"stream_event"');
}

export function claudeArgs(
  input: Pick<AdapterInput, "prompt" | "systemPrompt" | "model" | "allowedTools" | "maxTurns" | "resumeSession">,
): {
  args: string[];
  stdin?: string;
} {
  const viaStdin = Buffer.byteLength(input.prompt, "utf8") > ARG_LIMIT;
  const args = viaStdin ? ["-p"] : ["-p", input.prompt];
  // A resumed attempt continues the earlier session's conversation: the prompt is its next turn.
  if (input.resumeSession) args.push("--resume", input.resumeSession);
  if (input.systemPrompt) args.push("--append-system-prompt", input.systemPrompt);
  if (input.allowedTools.length > 0) args.push("--allowedTools", input.allowedTools.join(","));
  if (input.maxTurns !== undefined) args.push("--max-turns", String(input.maxTurns));
  // Partial messages keep the stream alive while the model writes a long answer: without them a
  // single big tool call (a 2,000-line file) shows no output for minutes and looks like a stall.
  args.push("--output-format", "stream-json", "--verbose", "--include-partial-messages");
  if (input.model) args.push("--model", input.model);
  return viaStdin ? { args, stdin: input.prompt } : { args };
}

export const claudeAdapter: Adapter = {
  name: "claude",
  invocation(input: AdapterInput): Invocation {
    const { args, stdin } = claudeArgs(input);
    return {
      command: input.binary ?? "claude",
      args,
      env: { ...pickEnv(input.parentEnv, [...CLAUDE_ENV, ...input.passEnv]), ...input.forgeEnv, ...input.extraEnv },
      ...(stdin !== undefined ? { stdin } : {}),
    };
  },
  parser: () => new StreamJsonParser(),
};

type Json = Record<string, unknown>;

function toolSummary(name: string, input: unknown): string {
  const i = (input ?? {}) as Json;
  const target = i.file_path ?? i.path ?? i.command ?? i.pattern ?? i.url ?? i.description ?? i.prompt;
  return oneLine(`${name}${typeof target === "string" ? ` ${target}` : ""}`, 160);
}

/** Reads Claude Code's stream-json. Also used for command agents that print the same shapes. */
export class StreamJsonParser implements OutputParser {
  readonly #messageIds = new Set<string>();
  readonly #openTools = new Set<string>();
  #assistantLines = 0;
  #result: Json | undefined;
  #model: string | undefined;
  #sessionId: string | undefined;
  #lastText: string | undefined;
  #lastStreamDraft = 0;
  /** Lines that were not stream-json (a command agent's plain output). */
  readonly plainLines: string[] = [];

  stdoutLine(line: string): ProgressDraft[] {
    const trimmed = line.trim();
    if (!trimmed) return [];
    let e: Json;
    try {
      const parsed: unknown = trimmed.startsWith("{") ? JSON.parse(trimmed) : undefined;
      if (!parsed || typeof parsed !== "object") throw new Error("not an object");
      e = parsed as Json;
    } catch {
      this.plainLines.push(line);
      return [{ kind: "output", summary: oneLine(line) }];
    }
    return this.event(e);
  }

  stderrLine(line: string): ProgressDraft[] {
    return line.trim() ? [{ kind: "stderr", summary: oneLine(line) }] : [];
  }

  event(e: Json): ProgressDraft[] {
    switch (e.type) {
      case "system": {
        if (typeof e.model === "string") this.#model = e.model;
        if (typeof e.session_id === "string") this.#sessionId = e.session_id;
        const subtype = typeof e.subtype === "string" ? e.subtype : "system";
        return [{ kind: "system", summary: oneLine(subtype === "init" ? `session started (model ${this.#model ?? "?"})` : subtype) }];
      }
      case "assistant": {
        const message = (e.message ?? {}) as Json;
        if (typeof message.id === "string") this.#messageIds.add(message.id);
        else this.#assistantLines++;
        if (typeof message.model === "string") this.#model ??= message.model;
        const drafts: ProgressDraft[] = [];
        for (const block of (Array.isArray(message.content) ? message.content : []) as Json[]) {
          if (block.type === "text" && typeof block.text === "string") {
            this.#lastText = block.text;
            drafts.push({ kind: "text", summary: oneLine(block.text) });
          } else if (block.type === "tool_use" && typeof block.name === "string") {
            if (typeof block.id === "string") this.#openTools.add(block.id);
            drafts.push({ kind: "tool_use", tool: block.name, summary: toolSummary(block.name, block.input) });
          } else if (block.type === "thinking") {
            drafts.push({ kind: "text", summary: "thinking" });
          }
        }
        return drafts;
      }
      case "user": {
        const message = (e.message ?? {}) as Json;
        const drafts: ProgressDraft[] = [];
        for (const block of (Array.isArray(message.content) ? message.content : []) as Json[]) {
          if (block.type !== "tool_result") continue;
          if (typeof block.tool_use_id === "string") this.#openTools.delete(block.tool_use_id);
          const content = typeof block.content === "string" ? block.content : JSON.stringify(block.content ?? "");
          drafts.push({ kind: "tool_result", summary: oneLine(`${block.is_error === true ? "error: " : ""}${content}`) });
        }
        return drafts;
      }
      case "stream_event": {
        const now = Date.now();
        if (now - this.#lastStreamDraft < STREAM_PROGRESS_EVERY_MS) return [];
        this.#lastStreamDraft = now;
        return [{ kind: "text", summary: "(the model is writing)" }];
      }
      case "result": {
        this.#result = e;
        if (typeof e.session_id === "string") this.#sessionId = e.session_id;
        const text = typeof e.result === "string" ? e.result : String(e.subtype ?? "");
        return [
          {
            kind: "result",
            summary: oneLine(`${e.is_error === true ? "error: " : ""}${text}`),
            ...(typeof e.total_cost_usd === "number" && e.total_cost_usd >= 0 ? { costUsd: e.total_cost_usd } : {}),
          },
        ];
      }
      default:
        return [{ kind: "system", summary: oneLine(String(e.type ?? "event")) }];
    }
  }

  turns(): number {
    return this.#messageIds.size + this.#assistantLines;
  }

  busy(): boolean {
    return this.#openTools.size > 0;
  }

  finish(exitCode: number | null): AdapterOutcome {
    const r = this.#result;
    const outcome: AdapterOutcome = { ok: exitCode === 0 && (r === undefined ? true : r.is_error !== true) };
    const result = typeof r?.result === "string" ? r.result : this.#lastText;
    if (result !== undefined) outcome.result = result;
    if (this.#model) outcome.model = this.#model;
    const turns = typeof r?.num_turns === "number" ? r.num_turns : this.turns();
    if (r || turns > 0) outcome.turns = turns;
    if (typeof r?.total_cost_usd === "number") outcome.costUsd = r.total_cost_usd;
    if (this.#sessionId) outcome.sessionId = this.#sessionId;
    if (typeof r?.api_error_status === "number") outcome.apiErrorStatus = r.api_error_status;
    if (r?.is_error === true) {
      const errors = Array.isArray(r.errors) ? (r.errors as unknown[]).map(String).join("; ") : "";
      outcome.errorText = [typeof r.result === "string" ? r.result : String(r.subtype ?? "error"), errors].filter(Boolean).join("; ");
    }
    return outcome;
  }
}
