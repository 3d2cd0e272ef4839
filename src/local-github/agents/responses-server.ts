// A scripted model server speaking OpenAI's Responses API, so the real Codex CLI (`codex exec`) can
// run offline against it in tests and really edit files through its tools — the counterpart of
// model-server.ts (Anthropic's Messages API, for Claude Code).
//
// Endpoints: POST /v1/responses, streamed (SSE) or not. GET /v1/models answers a one-model list.
// Everything else answers 404 in the API's error shape and is recorded.
//
// Which turn to answer is derived from the conversation, not from a request counter: every call id
// and message id this server hands out carries its turn number (`call_forge_<turn>_<n>`,
// `msg_forge_<turn>`), and the client sends them back in `input` (Codex runs with `store: false`,
// so each request carries the whole conversation). Turn k is answered when the highest turn number
// in the input is k − 1. A client that retries (after a 429, a dropped stream) gets the same turn
// again, and requests that offer no tools do not move the script.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * One tool call of a scripted turn. A function tool (Codex: `exec_command`) takes `arguments`, sent
 * as a JSON string; a freeform custom tool (Codex: `apply_patch`) takes `input`, sent verbatim.
 */
export interface ResponsesToolCall {
  name: string;
  arguments?: Record<string, unknown>;
  input?: string;
  callId?: string;
}

/** A scripted model response: reasoning summary, text, tool calls (in this order; any may be left out). */
export interface ResponsesTurn {
  reasoning?: string;
  text?: string;
  toolCalls?: ResponsesToolCall[];
  /** Stream `response.created`, `response.in_progress` and the first item's opening events, then nothing more (the connection stays open): a model that stalls. */
  stall?: boolean;
}

/** A tool's output as the client sent it back (`function_call_output` / `custom_tool_call_output`). */
export interface ToolOutput {
  call_id: string;
  output: string;
}

/** What the script function sees when it is asked for a turn. */
export interface ResponsesTurnRequest {
  /** 0-based index of the turn (responses of this server already in the conversation). */
  turn: number;
  body: ResponsesRequest;
  /** Outputs of the tool calls of the previous turn. */
  toolOutputs: ToolOutput[];
  /** The text of every `user` message of the input, joined (the prompt, among Codex's context). */
  userText: string;
  /** The text of every `developer` message of the input, joined (Codex's instructions, Forge's system prompt). */
  developerText: string;
}

export type ResponsesScript = Array<ResponsesTurn | ((req: ResponsesTurnRequest) => ResponsesTurn)>;

export interface ResponsesRequest {
  model?: string;
  input?: Array<Record<string, unknown>>;
  instructions?: string;
  tools?: Array<{ type: string; name?: string }>;
  stream?: boolean;
  [key: string]: unknown;
}

export interface RecordedResponsesRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: ResponsesRequest | null;
  /** `main`: a conversation turn (it offers tools); `side`: any other /v1/responses call; `models`; `other`. */
  kind: "main" | "side" | "models" | "other";
  turn: number | null;
  status: number;
  at: number;
}

export interface InjectedResponsesError {
  status: 429 | 500 | 503 | 400 | 401 | 403;
  /** Seconds for the `retry-after` header. */
  retryAfter?: number;
  message?: string;
  /** How many consecutive main requests get it (default 1). */
  count?: number;
}

export interface ResponsesServerOptions {
  script: ResponsesScript;
  /** Reply for requests that offer no tools. */
  sideReply?: (req: ResponsesRequest) => ResponsesTurn;
  /** Errors answered before the script, to the next main requests. */
  errors?: InjectedResponsesError[];
  /** Characters per `*.delta` event (default 24), so clients must reassemble. */
  chunkSize?: number;
  defaultModel?: string;
  host?: string;
  port?: number;
}

export interface ResponsesServer {
  /** The base URL, `/v1` included (what a client's `base_url` is set to). */
  url: string;
  port: number;
  requests: RecordedResponsesRequest[];
  /** Main requests only. */
  turns(): RecordedResponsesRequest[];
  /** True once a request asked for a turn past the end of the script. */
  exhausted(): boolean;
  failNext(error: InjectedResponsesError): void;
  close(): Promise<void>;
}

/** Codex's tools, for writing scripts. */
export const codexTools = {
  /** `exec_command { cmd, workdir? }`: a shell command (Codex runs it in its sandbox). */
  exec: (cmd: string, workdir?: string): ResponsesToolCall => ({
    name: "exec_command",
    arguments: { cmd, ...(workdir ? { workdir } : {}) },
  }),
  /** `apply_patch`, freeform: the whole patch text. */
  applyPatch: (patch: string): ResponsesToolCall => ({ name: "apply_patch", input: patch }),
  /** An `apply_patch` that adds one file (path absolute or relative to the session's cwd). */
  addFile: (file: string, content: string): ResponsesToolCall => ({
    name: "apply_patch",
    input: `*** Begin Patch\n*** Add File: ${file}\n${content
      .replace(/\n$/, "")
      .split("\n")
      .map((l) => `+${l}`)
      .join("\n")}\n*** End Patch\n`,
  }),
  /** An `apply_patch` that replaces one line of an existing file. */
  replaceLine: (file: string, oldLine: string, newLine: string): ResponsesToolCall => ({
    name: "apply_patch",
    input: `*** Begin Patch\n*** Update File: ${file}\n@@\n-${oldLine}\n+${newLine}\n*** End Patch\n`,
  }),
};

const ERROR_CODES: Record<number, { type: string; code: string | null }> = {
  400: { type: "invalid_request_error", code: null },
  401: { type: "invalid_request_error", code: "invalid_api_key" },
  403: { type: "invalid_request_error", code: null },
  404: { type: "invalid_request_error", code: null },
  429: { type: "requests", code: "rate_limit_exceeded" },
  500: { type: "server_error", code: null },
  503: { type: "server_error", code: null },
};

function hex(n: number): string {
  return randomBytes(n).toString("hex");
}

function estimateTokens(value: unknown): number {
  return Math.max(1, Math.ceil(JSON.stringify(value ?? "").length / 4));
}

function chunks(s: string, size: number): string[] {
  if (s === "") return [""];
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

const TURN_TAG = /^(?:call|msg|rs|fc|ctc)_forge_(\d+)(?:_|$)/;

/** How many of this server's responses the conversation already holds (highest turn tag + 1). */
export function turnOf(body: ResponsesRequest): number {
  let turns = 0;
  for (const item of body.input ?? []) {
    for (const key of ["call_id", "id"]) {
      const m = typeof item[key] === "string" ? TURN_TAG.exec(item[key]) : null;
      if (m) turns = Math.max(turns, Number(m[1]) + 1);
    }
  }
  return turns;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as Array<Record<string, unknown>>).map((c) => (typeof c.text === "string" ? c.text : "")).join("\n");
}

function messagesText(body: ResponsesRequest, role: string): string {
  return (body.input ?? [])
    .filter((i) => (i.type === "message" || i.type === undefined) && i.role === role)
    .map((i) => textOf(i.content))
    .join("\n");
}

function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  if (output && typeof output === "object" && typeof (output as { content?: unknown }).content === "string")
    return (output as { content: string }).content;
  if (Array.isArray(output)) return textOf(output);
  return JSON.stringify(output ?? "");
}

/** The outputs of the tool calls of the last response in the conversation (this server's call ids tell which those are). */
export function lastToolOutputs(body: ResponsesRequest): ToolOutput[] {
  const input = body.input ?? [];
  const last = turnOf(body) - 1;
  const outputs = input.filter((i) => i.type === "function_call_output" || i.type === "custom_tool_call_output");
  const ours = outputs.filter((i) => TURN_TAG.exec(String(i.call_id))?.[1] === String(last));
  const trailing: typeof outputs = [];
  if (ours.length === 0) {
    // Call ids this server did not hand out: the outputs at the end of the input.
    for (
      let i = input.length - 1;
      i >= 0 && (input[i]!.type === "function_call_output" || input[i]!.type === "custom_tool_call_output");
      i--
    )
      trailing.unshift(input[i]!);
  }
  return (ours.length > 0 ? ours : trailing).map((i) => ({ call_id: String(i.call_id), output: outputText(i.output) }));
}

/** The API's complaint when a tool call in the input has no output, else null. */
export function unansweredToolCalls(body: ResponsesRequest): string | null {
  const input = body.input ?? [];
  const answered = new Set(
    input.filter((i) => i.type === "function_call_output" || i.type === "custom_tool_call_output").map((i) => String(i.call_id)),
  );
  const missing = input
    .filter((i) => (i.type === "function_call" || i.type === "custom_tool_call") && !answered.has(String(i.call_id)))
    .map((i) => String(i.call_id));
  return missing.length > 0 ? `No tool output found for function call ${missing[0]}.` : null;
}

type OutputItem = Record<string, unknown> & { type: string; id: string };

function outputItems(turn: ResponsesTurn, index: number): OutputItem[] {
  const items: OutputItem[] = [];
  if (turn.reasoning !== undefined) {
    items.push({ type: "reasoning", id: `rs_forge_${index}_${hex(6)}`, summary: [{ type: "summary_text", text: turn.reasoning }] });
  }
  if (turn.text !== undefined && turn.text !== "") {
    items.push({
      type: "message",
      id: `msg_forge_${index}_${hex(6)}`,
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: turn.text, annotations: [] }],
    });
  }
  (turn.toolCalls ?? []).forEach((call, n) => {
    const callId = call.callId ?? `call_forge_${index}_${n}`;
    if (call.input !== undefined) {
      items.push({
        type: "custom_tool_call",
        id: `ctc_forge_${index}_${n}`,
        status: "completed",
        call_id: callId,
        name: call.name,
        input: call.input,
      });
    } else {
      items.push({
        type: "function_call",
        id: `fc_forge_${index}_${n}`,
        status: "completed",
        call_id: callId,
        name: call.name,
        arguments: JSON.stringify(call.arguments ?? {}),
      });
    }
  });
  if (items.length === 0) {
    items.push({
      type: "message",
      id: `msg_forge_${index}_${hex(6)}`,
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: "", annotations: [] }],
    });
  }
  return items;
}

function usageOf(inputTokens: number, items: OutputItem[]) {
  const outputTokens = estimateTokens(items);
  const reasoningTokens = items.filter((i) => i.type === "reasoning").reduce((n, i) => n + estimateTokens(i.summary), 0);
  return {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: reasoningTokens },
    total_tokens: inputTokens + outputTokens,
  };
}

function responseObject(
  id: string,
  model: string,
  status: "in_progress" | "completed",
  output: OutputItem[],
  usage: ReturnType<typeof usageOf> | null,
) {
  return {
    id,
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status,
    error: null,
    incomplete_details: null,
    model,
    output,
    parallel_tool_calls: true,
    tool_choice: "auto",
    tools: [],
    usage,
  };
}

/**
 * The SSE events of one streamed response, in the Responses API's order: `response.created`,
 * `response.in_progress`, then per output item `response.output_item.added`, its deltas and their
 * `.done`, `response.output_item.done`; last `response.completed` with the whole output and usage.
 * Every event carries `type` and a growing `sequence_number`.
 */
export function responsesSseEvents(
  turn: ResponsesTurn,
  model: string,
  inputTokens: number,
  turnIndex = 0,
  chunkSize = 24,
): Array<{ event: string; data: Record<string, unknown> }> {
  const id = `resp_forge_${turnIndex}_${hex(8)}`;
  const items = outputItems(turn, turnIndex);
  const events: Array<{ event: string; data: Record<string, unknown> }> = [];
  const push = (type: string, data: Record<string, unknown>) =>
    events.push({ event: type, data: { type, sequence_number: events.length, ...data } });
  push("response.created", { response: responseObject(id, model, "in_progress", [], null) });
  push("response.in_progress", { response: responseObject(id, model, "in_progress", [], null) });
  items.forEach((item, output_index) => {
    const item_id = item.id;
    if (item.type === "reasoning") {
      const text = (item.summary as Array<{ text: string }>)[0]!.text;
      push("response.output_item.added", { output_index, item: { ...item, summary: [] } });
      const part = { type: "summary_text", text: "" };
      push("response.reasoning_summary_part.added", { item_id, output_index, summary_index: 0, part });
      for (const delta of chunks(text, chunkSize))
        push("response.reasoning_summary_text.delta", { item_id, output_index, summary_index: 0, delta });
      push("response.reasoning_summary_text.done", { item_id, output_index, summary_index: 0, text });
      push("response.reasoning_summary_part.done", { item_id, output_index, summary_index: 0, part: { ...part, text } });
    } else if (item.type === "message") {
      const text = (item.content as Array<{ text: string }>)[0]!.text;
      push("response.output_item.added", { output_index, item: { ...item, status: "in_progress", content: [] } });
      const part = { type: "output_text", text: "", annotations: [] };
      push("response.content_part.added", { item_id, output_index, content_index: 0, part });
      for (const delta of chunks(text, chunkSize))
        push("response.output_text.delta", { item_id, output_index, content_index: 0, delta, logprobs: [] });
      push("response.output_text.done", { item_id, output_index, content_index: 0, text, logprobs: [] });
      push("response.content_part.done", { item_id, output_index, content_index: 0, part: { ...part, text } });
    } else if (item.type === "function_call") {
      const args = item.arguments as string;
      push("response.output_item.added", { output_index, item: { ...item, status: "in_progress", arguments: "" } });
      for (const delta of chunks(args, chunkSize)) push("response.function_call_arguments.delta", { item_id, output_index, delta });
      push("response.function_call_arguments.done", { item_id, output_index, arguments: args });
    } else {
      const input = item.input as string;
      push("response.output_item.added", { output_index, item: { ...item, status: "in_progress", input: "" } });
      for (const delta of chunks(input, chunkSize)) push("response.custom_tool_call_input.delta", { item_id, output_index, delta });
      push("response.custom_tool_call_input.done", { item_id, output_index, input });
    }
    push("response.output_item.done", { output_index, item });
  });
  push("response.completed", { response: responseObject(id, model, "completed", items, usageOf(inputTokens, items)) });
  return events;
}

/** The non-streamed JSON body of one response. */
export function responseBody(turn: ResponsesTurn, model: string, inputTokens: number, turnIndex = 0): Record<string, unknown> {
  const items = outputItems(turn, turnIndex);
  return responseObject(`resp_forge_${turnIndex}_${hex(8)}`, model, "completed", items, usageOf(inputTokens, items));
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}

function sendError(res: http.ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  const kind = ERROR_CODES[status] ?? { type: "server_error", code: null };
  res.writeHead(status, { "content-type": "application/json", "x-request-id": `req_${hex(12)}`, ...headers });
  res.end(JSON.stringify({ error: { message, type: kind.type, param: null, code: kind.code } }));
}

export async function startResponsesServer(options: ResponsesServerOptions): Promise<ResponsesServer> {
  const requests: RecordedResponsesRequest[] = [];
  const pendingErrors: InjectedResponsesError[] = (options.errors ?? []).map((e) => ({ ...e }));
  let exhausted = false;
  const chunkSize = options.chunkSize ?? 24;
  const defaultModel = options.defaultModel ?? "gpt-5.5";

  const server = http.createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", "http://localhost");
      const raw = await readBody(req);
      let body: ResponsesRequest | null = null;
      try {
        body = raw ? (JSON.parse(raw) as ResponsesRequest) : null;
      } catch {
        body = null;
      }
      const record: RecordedResponsesRequest = {
        method: req.method ?? "",
        path: url.pathname,
        headers: req.headers,
        body,
        kind: "other",
        turn: null,
        status: 0,
        at: Date.now(),
      };
      requests.push(record);
      const reply = (status: number) => (record.status = status);

      if (req.method === "GET" && url.pathname === "/v1/models") {
        record.kind = "models";
        reply(200);
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ object: "list", data: [{ id: defaultModel, object: "model", created: 0, owned_by: "forge" }] }));
        return;
      }
      if (req.method !== "POST" || url.pathname !== "/v1/responses") {
        reply(404);
        sendError(res, 404, `Not found: ${req.method} ${url.pathname}`);
        return;
      }
      if (!body || !Array.isArray(body.input)) {
        reply(400);
        sendError(res, 400, "Missing required parameter: 'input'.");
        return;
      }
      const isMain = Array.isArray(body.tools) && body.tools.length > 0;
      record.kind = isMain ? "main" : "side";
      const unanswered = unansweredToolCalls(body);
      if (unanswered) {
        // The real API refuses a conversation whose tool calls lack outputs; so does this one.
        reply(400);
        sendError(res, 400, unanswered);
        return;
      }
      const model = body.model ?? defaultModel;
      const inputTokens = estimateTokens(body.input) + estimateTokens(body.instructions);
      let turn: ResponsesTurn;
      let index = 0;
      if (isMain) {
        const injected = pendingErrors[0];
        if (injected) {
          injected.count = (injected.count ?? 1) - 1;
          if (injected.count <= 0) pendingErrors.shift();
          reply(injected.status);
          const headers: Record<string, string> = {};
          if (injected.retryAfter !== undefined) headers["retry-after"] = String(injected.retryAfter);
          if (injected.status === 429) headers["x-ratelimit-remaining-requests"] = "0";
          sendError(
            res,
            injected.status,
            injected.message ??
              (injected.status === 429 ? "Rate limit reached for requests" : "The server had an error while processing your request."),
            headers,
          );
          return;
        }
        index = turnOf(body);
        record.turn = index;
        const entry = options.script[index];
        if (entry === undefined) {
          exhausted = true;
          turn = { text: "The script has no more turns." };
        } else {
          turn =
            typeof entry === "function"
              ? entry({
                  turn: index,
                  body,
                  toolOutputs: lastToolOutputs(body),
                  userText: messagesText(body, "user"),
                  developerText: messagesText(body, "developer"),
                })
              : entry;
        }
      } else {
        turn = (options.sideReply ?? (() => ({ text: "Forge" })))(body);
      }

      reply(200);
      if (body.stream) {
        res.writeHead(200, {
          "content-type": "text/event-stream; charset=utf-8",
          "cache-control": "no-cache",
          connection: "keep-alive",
          "x-request-id": `req_${hex(12)}`,
        });
        const events = responsesSseEvents(turn, model, inputTokens, index, chunkSize);
        const send = turn.stall ? events.slice(0, 4) : events;
        for (const e of send) res.write(`event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`);
        if (!turn.stall) res.end();
      } else {
        res.writeHead(200, { "content-type": "application/json", "x-request-id": `req_${hex(12)}` });
        res.end(JSON.stringify(responseBody(turn, model, inputTokens, index)));
      }
    })().catch((err: unknown) => {
      if (!res.headersSent) sendError(res, 500, String(err));
      else res.end();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${options.host ?? "127.0.0.1"}:${port}/v1`,
    port,
    requests,
    turns: () => requests.filter((r) => r.kind === "main"),
    exhausted: () => exhausted,
    failNext: (error) => void pendingErrors.unshift({ ...error }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ——— The real Codex CLI, offline ———

/** `node_modules/.bin/codex` of this package (its launcher finds the platform's native binary). */
export function codexBinary(): string {
  const bin = fileURLToPath(new URL("../../../node_modules/.bin/codex", import.meta.url));
  if (!existsSync(bin)) throw new Error(`codex not found at ${bin}: run npm ci (@openai/codex is a devDependency)`);
  return bin;
}

/**
 * A fresh CODEX_HOME whose config.toml sends every model request to `baseUrl` (a provider `forge`
 * with `wire_api = "responses"`, key from OPENAI_API_KEY, `retries` request and stream retries —
 * none by default) and turns off what would reach the network otherwise (analytics, feedback,
 * update checks). `tmpWritable: false` also takes /tmp and $TMPDIR out of the `workspace-write`
 * sandbox's writable places, so a test can tell `--add-dir` works. Returns the environment for the
 * CLI: only PATH is inherited from the host, so no real key or setting leaks in.
 */
export function offlineCodexEnv(
  baseUrl: string,
  codexHome: string,
  extra: Record<string, string> = {},
  opts: { retries?: number; model?: string; tmpWritable?: boolean } = {},
): Record<string, string> {
  mkdirSync(codexHome, { recursive: true });
  const retries = opts.retries ?? 0;
  writeFileSync(
    path.join(codexHome, "config.toml"),
    [
      `model = ${JSON.stringify(opts.model ?? "gpt-5.5")}`,
      `model_provider = "forge"`,
      `check_for_update_on_startup = false`,
      "",
      "[analytics]",
      "enabled = false",
      "",
      "[feedback]",
      "enabled = false",
      "",
      ...(opts.tmpWritable === false ? ["[sandbox_workspace_write]", "exclude_slash_tmp = true", "exclude_tmpdir_env_var = true", ""] : []),
      "[model_providers.forge]",
      `name = "Forge scripted Responses server"`,
      `base_url = ${JSON.stringify(baseUrl)}`,
      `wire_api = "responses"`,
      `env_key = "OPENAI_API_KEY"`,
      `request_max_retries = ${retries}`,
      `stream_max_retries = ${retries}`,
      "",
    ].join("\n"),
  );
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: codexHome,
    CODEX_HOME: codexHome,
    OPENAI_API_KEY: "sk-forge-sim-dummy",
    ...extra,
  };
}

/**
 * Whether Codex's Linux sandbox can start here (`codex sandbox -- /bin/true`). It cannot where
 * unprivileged user namespaces are forbidden, e.g. GitHub's ubuntu-24.04 runners ("bwrap:
 * loopback: Failed RTM_NEWADDR: Operation not permitted").
 */
export function codexSandboxWorks(codexHome: string): { ok: boolean; output: string } {
  mkdirSync(codexHome, { recursive: true });
  const r = spawnSync(codexBinary(), ["sandbox", "-c", 'sandbox_mode="workspace-write"', "--", "/bin/true"], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: codexHome, CODEX_HOME: codexHome },
    encoding: "utf8",
    timeout: 30_000,
  });
  return { ok: r.status === 0, output: `${r.stdout ?? ""}${r.stderr ?? ""}`.trim() };
}
