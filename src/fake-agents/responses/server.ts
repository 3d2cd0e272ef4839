// The scripted Responses server itself: the HTTP endpoints, the requests it records, the errors a
// test injects, and which turn of the script each request is answered with.
import type http from "node:http";
import { createScriptedServer, listen, readRequest, scriptTurn, sseHead, takeInjectedError, writeSse } from "../scripted-server.js";
import type { ScriptedError, ScriptedRequestRecord, ScriptedServer } from "../scripted-server.js";
import { lastToolOutputs, messagesText, turnOf, unansweredToolCalls } from "./conversation.js";
import type { ResponsesRequest, ResponsesScript, ResponsesTurn } from "./script.js";
import { estimateTokens, hex, responseBody, responsesSseEvents } from "./stream.js";

/** kind `main`: a conversation turn (it offers tools); `side`: any other /v1/responses call; `models`; `other`. */
export interface RecordedResponsesRequest extends ScriptedRequestRecord<ResponsesRequest, "main" | "side" | "models" | "other"> {
  /** An answer's tokens, as its `usage` reports them: input (conversation + instructions) and output. */
  tokens?: { input: number; output: number };
}

/** `code`: the error's `code` in the body (default by status; OpenAI's `insufficient_quota` is a usage limit). */
export type InjectedResponsesError = ScriptedError<429 | 500 | 503 | 400 | 401 | 403> & { code?: string };

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

export interface ResponsesServer extends ScriptedServer<RecordedResponsesRequest, InjectedResponsesError> {
  /** The base URL, `/v1` included (what a client's `base_url` is set to). */
  url: string;
}

const ERROR_CODES: Record<number, { type: string; code: string | null }> = {
  400: { type: "invalid_request_error", code: null },
  401: { type: "invalid_request_error", code: "invalid_api_key" },
  403: { type: "invalid_request_error", code: null },
  404: { type: "invalid_request_error", code: null },
  429: { type: "requests", code: "rate_limit_exceeded" },
  500: { type: "server_error", code: null },
  503: { type: "server_error", code: null },
};

function sendError(res: http.ServerResponse, status: number, message: string, headers: Record<string, string> = {}, code?: string): void {
  const byStatus = ERROR_CODES[status] ?? { type: "server_error", code: null };
  const kind = code ? { type: code, code } : byStatus;
  res.writeHead(status, { "content-type": "application/json", "x-request-id": `req_${hex(12)}`, ...headers });
  res.end(JSON.stringify({ error: { message, type: kind.type, param: null, code: kind.code } }));
}

export async function startResponsesServer(options: ResponsesServerOptions): Promise<ResponsesServer> {
  const requests: RecordedResponsesRequest[] = [];
  const pendingErrors: InjectedResponsesError[] = (options.errors ?? []).map((e) => ({ ...e }));
  let exhausted = false;
  const chunkSize = options.chunkSize ?? 24;
  const defaultModel = options.defaultModel ?? "gpt-5.5";

  const server = createScriptedServer(
    async (req, res) => {
      const { url, body, record: read } = await readRequest<ResponsesRequest>(req);
      const record: RecordedResponsesRequest = read;
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
        const injected = takeInjectedError(pendingErrors, "x-ratelimit-remaining-requests");
        if (injected) {
          const { error, headers } = injected;
          reply(error.status);
          sendError(
            res,
            error.status,
            error.message ??
              (error.status === 429 ? "Rate limit reached for requests" : "The server had an error while processing your request."),
            headers,
            error.code,
          );
          return;
        }
        index = turnOf(body);
        record.turn = index;
        const scripted = scriptTurn(options.script, index, () => ({
          turn: index,
          body,
          toolOutputs: lastToolOutputs(body),
          userText: messagesText(body, "user"),
          developerText: messagesText(body, "developer"),
        }));
        exhausted ||= scripted.exhausted;
        turn = scripted.turn;
      } else {
        turn = (options.sideReply ?? (() => ({ text: "Forge" })))(body);
      }

      reply(200);
      // What the answer bills, as its `usage` says: for benches that count a session's tokens.
      const usage = responseBody(turn, model, inputTokens, index).usage as { input_tokens: number; output_tokens: number } | null;
      if (usage) record.tokens = { input: usage.input_tokens, output: usage.output_tokens };
      if (body.stream) {
        sseHead(res, { "x-request-id": `req_${hex(12)}` });
        const events = responsesSseEvents(turn, model, inputTokens, index, chunkSize);
        writeSse(res, turn.stall ? events.slice(0, 4) : events);
        if (!turn.stall) res.end();
      } else {
        res.writeHead(200, { "content-type": "application/json", "x-request-id": `req_${hex(12)}` });
        res.end(JSON.stringify(responseBody(turn, model, inputTokens, index)));
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
    close,
  };
}
