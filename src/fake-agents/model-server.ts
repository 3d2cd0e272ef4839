// A scripted model server speaking Anthropic's Messages API, so a real agent CLI (Claude Code)
// can run offline against it in tests and really edit files through tool calls.
//
// Endpoints: POST /v1/messages (also `?beta=true`), streamed (SSE) or not; POST
// /v1/messages/count_tokens. Everything else answers 404 in the API's error shape and is recorded.
//
// Which turn to answer is derived from the conversation, not from a request counter: turn k is
// answered when the request carries k assistant messages. A client that retries (after a 429, a
// dropped connection) therefore gets the same turn again, and side requests do not move the script.
import { randomBytes } from "node:crypto";
import type http from "node:http";
import { createScriptedServer, listen, readRequest, scriptTurn, sseHead, takeInjectedError, writeSse } from "./scripted-server.js";
import type { ScriptedError, ScriptedRequestRecord, ScriptedServer } from "./scripted-server.js";

/** One tool call of a scripted turn. */
export interface ScriptedToolCall {
  name: string;
  input: Record<string, unknown>;
  id?: string;
}

/** A scripted assistant turn: text, tool calls, or both (text first). */
export interface ScriptedTurn {
  text?: string;
  toolCalls?: ScriptedToolCall[];
  /** Defaults to "tool_use" when there are tool calls, else "end_turn". */
  stopReason?: "end_turn" | "tool_use" | "max_tokens" | "stop_sequence";
  /** Streamed: send `message_start` and the first block's start, then nothing more (the connection stays open): a model that stalls. */
  stall?: boolean;
  /** Answered in place of the turn, to this conversation only (e.g. a usage limit): a retry asks for the same turn again. */
  error?: InjectedError;
}

/** Claude Code's tool calls, for writing scripts (paths must be absolute). */
export const claudeTools = {
  write: (file_path: string, content: string): ScriptedToolCall => ({ name: "Write", input: { file_path, content } }),
  read: (file_path: string): ScriptedToolCall => ({ name: "Read", input: { file_path } }),
  edit: (file_path: string, old_string: string, new_string: string): ScriptedToolCall => ({
    name: "Edit",
    input: { file_path, old_string, new_string },
  }),
  bash: (command: string, description = "Run a command"): ScriptedToolCall => ({ name: "Bash", input: { command, description } }),
};

/** What the script function sees when it is asked for a turn. */
export interface TurnRequest {
  /** 0-based index of the turn (assistant messages already in the conversation). */
  turn: number;
  body: MessagesRequest;
  /** tool_result blocks of the last user message. */
  toolResults: Array<{ tool_use_id: string; content: unknown; is_error?: boolean }>;
}

export type Script = Array<ScriptedTurn | ((req: TurnRequest) => ScriptedTurn)>;

export interface MessagesRequest {
  model?: string;
  messages?: Array<{ role: string; content: unknown }>;
  system?: unknown;
  tools?: Array<{ name: string }>;
  stream?: boolean;
  max_tokens?: number;
  [key: string]: unknown;
}

/** kind `main`: a conversation turn (it offers tools); `side`: any other Messages call; `count_tokens`; `other`. */
export interface RecordedRequest extends ScriptedRequestRecord<MessagesRequest, "main" | "side" | "count_tokens" | "other"> {
  query: string;
  /** A Messages answer's tokens, as its `usage` reports them: input (conversation + system) and output. */
  tokens?: { input: number; output: number };
}

/** The tokens of every answered Messages request in `requests` (main and side), summed: what the model would bill. */
export function tokensOf(requests: readonly RecordedRequest[]): { input: number; output: number; requests: number } {
  let input = 0;
  let output = 0;
  let n = 0;
  for (const r of requests) {
    if (!r.tokens) continue;
    input += r.tokens.input;
    output += r.tokens.output;
    n++;
  }
  return { input, output, requests: n };
}

export type InjectedError = ScriptedError<429 | 500 | 503 | 529 | 400 | 401 | 403>;

export interface ModelServerOptions {
  script: Script;
  /** Reply for requests that are not conversation turns (no tools offered), e.g. title generation. */
  sideReply?: (req: MessagesRequest) => ScriptedTurn;
  /** Errors answered before the script, to the next main requests. */
  errors?: InjectedError[];
  /** Bytes per SSE `input_json_delta`/`text_delta` chunk, to exercise partial JSON (default 24). */
  chunkSize?: number;
  /** Model name in responses when the request names none. */
  defaultModel?: string;
  host?: string;
  port?: number;
}

export type ModelServer = ScriptedServer<RecordedRequest, InjectedError>;

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  429: "rate_limit_error",
  500: "api_error",
  503: "api_error",
  529: "overloaded_error",
};

function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString("hex")}`;
}

function estimateTokens(value: unknown): number {
  return Math.max(1, Math.ceil(JSON.stringify(value ?? "").length / 4));
}

function lastToolResults(body: MessagesRequest): TurnRequest["toolResults"] {
  const last = body.messages?.[body.messages.length - 1];
  if (!last || last.role !== "user" || !Array.isArray(last.content)) return [];
  return (last.content as Array<Record<string, unknown>>)
    .filter((b) => b.type === "tool_result")
    .map((b) => ({
      tool_use_id: String(b.tool_use_id),
      content: b.content,
      ...(b.is_error !== undefined ? { is_error: Boolean(b.is_error) } : {}),
    }));
}

/** The API's complaint when an assistant tool_use has no tool_result right after it, else null. */
export function unansweredToolUses(body: MessagesRequest): string | null {
  const messages = body.messages ?? [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role !== "assistant" || !Array.isArray(m.content)) continue;
    const ids = (m.content as Array<Record<string, unknown>>).filter((b) => b.type === "tool_use").map((b) => String(b.id));
    if (ids.length === 0) continue;
    const next = messages[i + 1];
    const answered = new Set(
      next && next.role === "user" && Array.isArray(next.content)
        ? (next.content as Array<Record<string, unknown>>).filter((b) => b.type === "tool_result").map((b) => String(b.tool_use_id))
        : [],
    );
    const missing = ids.filter((id) => !answered.has(id));
    if (missing.length > 0 && i + 1 < messages.length) {
      return `messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    }
  }
  return null;
}

type Block = { type: "text"; text: string } | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

function blocksOf(turn: ScriptedTurn): Block[] {
  const blocks: Block[] = [];
  if (turn.text !== undefined && turn.text !== "") blocks.push({ type: "text", text: turn.text });
  for (const call of turn.toolCalls ?? [])
    blocks.push({ type: "tool_use", id: call.id ?? newId("toolu"), name: call.name, input: call.input });
  if (blocks.length === 0) blocks.push({ type: "text", text: "" });
  return blocks;
}

function chunks(s: string, size: number): string[] {
  if (s === "") return [""];
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

/** The SSE events of one streamed message, in the Messages API's order. */
export function sseEvents(turn: ScriptedTurn, model: string, inputTokens: number, chunkSize = 24): Array<{ event: string; data: unknown }> {
  const blocks = blocksOf(turn);
  const stopReason = turn.stopReason ?? (turn.toolCalls?.length ? "tool_use" : "end_turn");
  const id = newId("msg");
  const events: Array<{ event: string; data: unknown }> = [
    {
      event: "message_start",
      data: {
        type: "message_start",
        message: {
          id,
          type: "message",
          role: "assistant",
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: inputTokens, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
        },
      },
    },
    { event: "ping", data: { type: "ping" } },
  ];
  let outputTokens = 0;
  blocks.forEach((b, index) => {
    if (b.type === "text") {
      events.push({
        event: "content_block_start",
        data: { type: "content_block_start", index, content_block: { type: "text", text: "" } },
      });
      for (const c of chunks(b.text, chunkSize)) {
        events.push({ event: "content_block_delta", data: { type: "content_block_delta", index, delta: { type: "text_delta", text: c } } });
      }
      outputTokens += estimateTokens(b.text);
    } else {
      events.push({
        event: "content_block_start",
        data: { type: "content_block_start", index, content_block: { type: "tool_use", id: b.id, name: b.name, input: {} } },
      });
      const json = JSON.stringify(b.input);
      for (const c of chunks(json, chunkSize)) {
        events.push({
          event: "content_block_delta",
          data: { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: c } },
        });
      }
      outputTokens += estimateTokens(json);
    }
    events.push({ event: "content_block_stop", data: { type: "content_block_stop", index } });
  });
  events.push({
    event: "message_delta",
    data: { type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: outputTokens } },
  });
  events.push({ event: "message_stop", data: { type: "message_stop" } });
  return events;
}

/** Output tokens of one message, as `sseEvents` and `messageBody` count them. */
function outputTokensOf(turn: ScriptedTurn, streamed: boolean): number {
  const blocks = blocksOf(turn);
  if (!streamed) return estimateTokens(blocks);
  return blocks.reduce((n, b) => n + estimateTokens(b.type === "text" ? b.text : JSON.stringify(b.input)), 0);
}

/** The non-streamed JSON body of one message. */
export function messageBody(turn: ScriptedTurn, model: string, inputTokens: number): Record<string, unknown> {
  const blocks = blocksOf(turn);
  return {
    id: newId("msg"),
    type: "message",
    role: "assistant",
    model,
    content: blocks,
    stop_reason: turn.stopReason ?? (turn.toolCalls?.length ? "tool_use" : "end_turn"),
    stop_sequence: null,
    usage: { input_tokens: inputTokens, output_tokens: estimateTokens(blocks), cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
}

function sendError(res: http.ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", "request-id": newId("req"), ...headers });
  res.end(JSON.stringify({ type: "error", error: { type: ERROR_TYPES[status] ?? "api_error", message } }));
}

/**
 * Claude Code's only side request seen so far is a session title ("Return JSON with a single
 * "title" field"); anything else gets a short text.
 */
const defaultSideReply = (req: MessagesRequest): ScriptedTurn =>
  /\btitle\b/i.test(JSON.stringify(req.system ?? "")) ? { text: JSON.stringify({ title: "Forge scripted session" }) } : { text: "Forge" };

export async function startModelServer(options: ModelServerOptions): Promise<ModelServer> {
  const requests: RecordedRequest[] = [];
  const pendingErrors: InjectedError[] = (options.errors ?? []).map((e) => ({ ...e }));
  let exhausted = false;
  const chunkSize = options.chunkSize ?? 24;

  const server = createScriptedServer(
    async (req, res) => {
      const { url, body, record: read } = await readRequest<MessagesRequest>(req);
      const record: RecordedRequest = { ...read, query: url.search };
      requests.push(record);
      const reply = (status: number) => (record.status = status);

      if (req.method === "HEAD" && url.pathname === "/") {
        // Claude Code probes the base URL with `HEAD /` before its first request.
        reply(200);
        res.writeHead(200);
        res.end();
        return;
      }
      if (req.method === "POST" && url.pathname === "/v1/messages/count_tokens") {
        record.kind = "count_tokens";
        reply(200);
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({ input_tokens: estimateTokens(body?.messages) + estimateTokens(body?.system) + estimateTokens(body?.tools) }),
        );
        return;
      }
      if (req.method !== "POST" || url.pathname !== "/v1/messages") {
        reply(404);
        sendError(res, 404, `Not found: ${req.method} ${url.pathname}`);
        return;
      }
      if (!body || !Array.isArray(body.messages)) {
        reply(400);
        sendError(res, 400, "messages: Field required");
        return;
      }
      const unanswered = unansweredToolUses(body);
      if (unanswered) {
        // The real API refuses a conversation whose tool calls lack results; so does this one.
        reply(400);
        sendError(res, 400, unanswered);
        return;
      }
      const model = body.model ?? options.defaultModel ?? "claude-sonnet-4-5";
      const inputTokens = estimateTokens(body.messages) + estimateTokens(body.system);
      const isMain = Array.isArray(body.tools) && body.tools.length > 0;
      let turn: ScriptedTurn;
      if (isMain) {
        record.kind = "main";
        const injected = takeInjectedError(pendingErrors, "anthropic-ratelimit-requests-remaining");
        if (injected) {
          const { error, headers } = injected;
          reply(error.status);
          sendError(res, error.status, error.message ?? (error.status === 529 ? "Overloaded" : "Rate limited"), headers);
          return;
        }
        const index = body.messages.filter((m) => m.role === "assistant").length;
        record.turn = index;
        const scripted = scriptTurn(options.script, index, () => ({ turn: index, body, toolResults: lastToolResults(body) }));
        exhausted ||= scripted.exhausted;
        turn = scripted.turn;
        if (turn.error) {
          const headers: Record<string, string> =
            turn.error.retryAfter !== undefined ? { "retry-after": String(turn.error.retryAfter) } : {};
          reply(turn.error.status);
          sendError(res, turn.error.status, turn.error.message ?? "Rate limited", headers);
          return;
        }
      } else {
        record.kind = "side";
        turn = (options.sideReply ?? defaultSideReply)(body);
      }

      reply(200);
      record.tokens = { input: inputTokens, output: outputTokensOf(turn, !!body.stream) };
      if (body.stream) {
        sseHead(res, { "request-id": newId("req") });
        const events = sseEvents(turn, model, inputTokens, chunkSize);
        writeSse(res, turn.stall ? events.slice(0, 2) : events);
        if (!turn.stall) res.end();
      } else {
        res.writeHead(200, { "content-type": "application/json", "request-id": newId("req") });
        res.end(JSON.stringify(messageBody(turn, model, inputTokens)));
      }
    },
    (res, err) => sendError(res, 500, (err as Error).message),
  );

  const { url, port, close } = await listen(server, options.host, options.port);
  return {
    url,
    port,
    requests,
    turns: () => requests.filter((r) => r.kind === "main"),
    exhausted: () => exhausted,
    failNext: (e) => pendingErrors.push({ ...e }),
    close,
  };
}
