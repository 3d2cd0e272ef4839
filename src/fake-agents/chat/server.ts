// A scripted model server speaking OpenAI's Chat Completions API (`POST /v1/chat/completions`,
// streamed or not; `GET /v1/models`), so the real opencode and Qwen Code CLIs can run offline against
// a script. A request that offers tools is a conversation turn (`main`); any other (a title, a
// summary) gets `sideReply`. Which turn to answer is read from the conversation: the assistant
// messages since the last user message with text (the session's prompt), so a retried request gets
// the same turn again and a resumed session's new prompt starts at turn 0.
import type http from "node:http";
import { createScriptedServer, listen, readRequest, scriptTurn, sseHead, takeInjectedError } from "../scripted-server.js";
import type { ScriptedError, ScriptedRequestRecord, ScriptedServer } from "../scripted-server.js";
import type { ChatMessage, ChatRequest, ChatScript, ChatToolOutput, ChatTurn } from "./script.js";
import { chatBody, chatChunks, estimateTokens } from "./stream.js";

/** kind `main`: a conversation turn (it offers tools); `side`: any other completion; `models`; `other`. */
export type RecordedChatRequest = ScriptedRequestRecord<ChatRequest, "main" | "side" | "models" | "other">;

/** `code`: the error's `code` in the body (default by status; OpenAI's `insufficient_quota` is a usage limit). */
export type InjectedChatError = ScriptedError<429 | 500 | 503 | 400 | 401 | 403> & { code?: string };

export interface ChatServerOptions {
  script: ChatScript;
  /** Reply for requests that offer no tools (default: "Forge"). */
  sideReply?: (req: ChatRequest) => ChatTurn;
  /** Errors answered before the script, to the next main requests. */
  errors?: InjectedChatError[];
  /** Characters per streamed piece (default 24), so clients must reassemble. */
  chunkSize?: number;
  defaultModel?: string;
  host?: string;
  port?: number;
}

export interface ChatServer extends ScriptedServer<RecordedChatRequest, InjectedChatError> {
  /** The base URL, `/v1` included (what a client's `baseURL` is set to). */
  url: string;
  /** Drops the errors not answered yet (a limit that has ended). */
  clearErrors(): void;
}

const ERROR_TYPES: Record<number, { type: string; code: string | null }> = {
  400: { type: "invalid_request_error", code: null },
  401: { type: "invalid_request_error", code: "invalid_api_key" },
  403: { type: "invalid_request_error", code: null },
  404: { type: "invalid_request_error", code: null },
  429: { type: "requests", code: "rate_limit_exceeded" },
  500: { type: "server_error", code: null },
  503: { type: "server_error", code: null },
};

function sendError(res: http.ServerResponse, status: number, message: string, headers: Record<string, string> = {}, code?: string): void {
  const byStatus = ERROR_TYPES[status] ?? { type: "server_error", code: null };
  const kind = code ? { type: code, code } : byStatus;
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ error: { message, type: kind.type, param: null, code: kind.code } }));
}

export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as Array<Record<string, unknown>>).map((c) => (typeof c.text === "string" ? c.text : "")).join("\n");
}

const isPrompt = (m: ChatMessage) => m.role === "user" && textOf(m.content).trim() !== "";

/** Assistant messages since the last user message with text. */
export function chatTurnOf(body: ChatRequest): number {
  const messages = body.messages ?? [];
  let turns = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === "assistant") turns++;
    else if (isPrompt(m)) break;
  }
  return turns;
}

/** The `tool` messages at the end of the conversation. */
function lastToolOutputs(body: ChatRequest): ChatToolOutput[] {
  const out: ChatToolOutput[] = [];
  const messages = body.messages ?? [];
  for (let i = messages.length - 1; i >= 0 && messages[i]!.role === "tool"; i--)
    out.unshift({ tool_call_id: String(messages[i]!.tool_call_id), output: textOf(messages[i]!.content) });
  return out;
}

const joined = (body: ChatRequest, role: string) =>
  (body.messages ?? [])
    .filter((m) => m.role === role)
    .map((m) => textOf(m.content))
    .join("\n");

export async function startChatServer(options: ChatServerOptions): Promise<ChatServer> {
  const requests: RecordedChatRequest[] = [];
  const pendingErrors: InjectedChatError[] = (options.errors ?? []).map((e) => ({ ...e }));
  let exhausted = false;
  const chunkSize = options.chunkSize ?? 24;
  const defaultModel = options.defaultModel ?? "forge-model";

  const server = createScriptedServer(
    async (req, res) => {
      const { url, body, record: read } = await readRequest<ChatRequest>(req);
      const record: RecordedChatRequest = read;
      requests.push(record);
      const reply = (status: number) => (record.status = status);
      if (req.method === "GET" && url.pathname === "/v1/models") {
        record.kind = "models";
        reply(200);
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ object: "list", data: [{ id: defaultModel, object: "model", created: 0, owned_by: "forge" }] }));
        return;
      }
      if (req.method !== "POST" || url.pathname !== "/v1/chat/completions") {
        reply(404);
        sendError(res, 404, `Not found: ${req.method} ${url.pathname}`);
        return;
      }
      if (!body || !Array.isArray(body.messages)) {
        reply(400);
        sendError(res, 400, "Missing required parameter: 'messages'.");
        return;
      }
      const isMain = Array.isArray(body.tools) && body.tools.length > 0;
      record.kind = isMain ? "main" : "side";
      const model = body.model ?? defaultModel;
      const promptTokens = estimateTokens(body.messages) + estimateTokens(body.tools);
      let turn: ChatTurn;
      let index = 0;
      if (isMain) {
        const injected = takeInjectedError(pendingErrors, "x-ratelimit-remaining-requests");
        if (injected) {
          const { error, headers } = injected;
          reply(error.status);
          const fallback =
            error.status === 429 ? "Rate limit reached for requests" : "The server had an error while processing your request.";
          sendError(res, error.status, error.message ?? fallback, headers, error.code);
          return;
        }
        index = chatTurnOf(body);
        record.turn = index;
        const scripted = scriptTurn(options.script, index, () => ({
          turn: index,
          body,
          toolOutputs: lastToolOutputs(body),
          userText: joined(body, "user"),
          systemText: joined(body, "system"),
        }));
        exhausted ||= scripted.exhausted;
        turn = scripted.turn;
      } else {
        turn = options.sideReply?.(body) ?? { text: "Forge" };
      }
      reply(200);
      if (body.stream) {
        sseHead(res, {});
        const includeUsage = body.stream_options?.include_usage === true;
        const all = chatChunks(turn, { model, promptTokens, chunkSize, index, includeUsage });
        for (const c of turn.stall ? all.slice(0, 1) : all) res.write(`data: ${JSON.stringify(c)}\n\n`);
        if (turn.stall) return;
        res.write("data: [DONE]\n\n");
        res.end();
      } else {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(chatBody(turn, model, promptTokens, index)));
      }
    },
    (res, err) => sendError(res, 500, String(err)),
  );

  const { url, port, close } = await listen(server, options.host, options.port);
  return {
    url: `${url}/v1`,
    port,
    requests,
    turns: () => requests.filter((r) => r.kind === "main"),
    exhausted: () => exhausted,
    failNext: (error) => void pendingErrors.unshift({ ...error }),
    clearErrors: () => void pendingErrors.splice(0),
    close,
  };
}
