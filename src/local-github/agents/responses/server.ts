// The scripted Responses server itself: the HTTP endpoints, the requests it records, the errors a
// test injects, and which turn of the script each request is answered with.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { lastToolOutputs, messagesText, turnOf, unansweredToolCalls } from "./conversation.js";
import type { ResponsesRequest, ResponsesScript, ResponsesTurn } from "./script.js";
import { estimateTokens, hex, responseBody, responsesSseEvents } from "./stream.js";

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

const ERROR_CODES: Record<number, { type: string; code: string | null }> = {
  400: { type: "invalid_request_error", code: null },
  401: { type: "invalid_request_error", code: "invalid_api_key" },
  403: { type: "invalid_request_error", code: null },
  404: { type: "invalid_request_error", code: null },
  429: { type: "requests", code: "rate_limit_exceeded" },
  500: { type: "server_error", code: null },
  503: { type: "server_error", code: null },
};

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
