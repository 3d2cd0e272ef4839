/**
 * The model API served to the agent through the runner (see docs/runner.md#isolation and
 * #budgets): the agent holds a local URL and a session token good only for this proxy and this
 * session; the proxy checks that token, puts the real key in its place and forwards the request to
 * the model API, streaming the answer back. The key never enters the agent's environment.
 *
 * It is the budget's gate: only the endpoints an agent session needs go upstream (everything else
 * is answered here, never forwarded with the key); every answer is metered, whatever its encoding;
 * once the attempt's cap is reached no call goes upstream; a session's token dies with the session.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import { request as httpsRequest } from "node:https";
import type { AddressInfo } from "node:net";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import type { Transform } from "node:stream";
import { AnswerUsage, emptyUsage, type ModelUsage } from "./model-usage.js";

/** Which model API is behind the proxy: it decides the endpoints allowed and the shape of the proxy's own errors. */
export type ModelApi = "anthropic" | "openai" | "chat" | "gemini";

/**
 * The endpoints a session needs, relative to the base URL the agent is given (`METHOD path`, the
 * path compared exactly, undecoded, without its query). Anthropic: Claude Code's Messages calls and
 * token counts. OpenAI (base `…/v1`): Codex's Responses calls, remote compaction and model list;
 * `chat`, the same base: the Chat Completions calls and model list of opencode and Qwen Code (each
 * agent gets only its own API's endpoints).
 * Gemini: Gemini CLI's calls of one model (`{model}`: a letter or digit, then those, `.`, `_`, `-`), streamed or
 * not, and token counts. Batches, files, admin and every other path are refused here: they would spend (or reach data)
 * outside what the proxy meters.
 */
export const MODEL_ENDPOINTS: Record<ModelApi, readonly string[]> = {
  anthropic: ["POST /v1/messages", "POST /v1/messages/count_tokens"],
  openai: ["POST /responses", "POST /responses/compact", "GET /models"],
  chat: ["POST /chat/completions", "GET /models"],
  gemini: [
    "POST /v1beta/models/{model}:streamGenerateContent",
    "POST /v1beta/models/{model}:generateContent",
    "POST /v1beta/models/{model}:countTokens",
  ],
};

/** Whether `METHOD path` is one of `endpoints` (`{model}` stands for one model id). */
export function endpointAllowed(endpoints: readonly string[], request: string): boolean {
  const escape = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return endpoints.some((e) =>
    e.includes("{model}")
      ? new RegExp(`^${e.split("{model}").map(escape).join("[A-Za-z0-9][A-Za-z0-9._-]*")}$`).test(request)
      : e === request,
  );
}

export interface ModelSession {
  /** The token this session's agent presents instead of the key. */
  token: string;
  /** Revokes the token: later requests with it are refused (401). */
  end(): void;
}

export interface ModelProxy {
  /** Base URL the agent calls (http://127.0.0.1:<port>). */
  url: string;
  /** A new token for one agent session; it dies with `end()` (or `close()`). */
  openSession(): ModelSession;
  /**
   * The budget's gate: asked before every call; a text means the attempt's cap is reached and the
   * call is refused with it. `undefined` removes the gate.
   */
  gate(check: (() => string | undefined) | undefined): void;
  /** Requests forwarded so far. */
  forwarded(): number;
  /** Tokens the model's answers reported so far (src/agent/model-usage.ts). */
  usage(): ModelUsage;
  /** Revokes every token and stops serving. */
  close(): Promise<void>;
}

export interface ModelProxyOptions {
  /** The model API's base URL (its path is kept: `https://api.openai.com/v1`). */
  upstream: string;
  /** The real key. */
  key: string;
  /** Which API (default: `anthropic`). */
  api?: ModelApi;
}

type KeyStyle = "x-api-key" | "x-goog-api-key" | "bearer";

/** The token a request presents: `x-api-key`, `x-goog-api-key` (Gemini), or `authorization: Bearer`. */
function presented(headers: IncomingHttpHeaders): { token: string; style: KeyStyle } | undefined {
  for (const style of ["x-api-key", "x-goog-api-key"] as const) {
    const x = headers[style];
    if (typeof x === "string" && x) return { token: x, style };
  }
  const auth = headers.authorization;
  const m = typeof auth === "string" ? /^Bearer\s+(\S+)$/i.exec(auth) : null;
  return m ? { token: m[1]!, style: "bearer" } : undefined;
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

const GEMINI_STATUS: Record<number, string> = { 400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 404: "NOT_FOUND", 502: "UNAVAILABLE" };

/** An error in the API's own shape, so the CLI reports it as it reports the API's. */
function refuse(res: ServerResponse, api: ModelApi, status: number, type: string, message: string): void {
  const body =
    api === "anthropic"
      ? { type: "error", error: { type, message } }
      : api === "gemini"
        ? { error: { code: status, message, status: GEMINI_STATUS[status] ?? "UNKNOWN" } }
        : { error: { message, type, code: type, param: null } };
  if (!res.headersSent) res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/**
 * A decoder for the answer's encoding, for metering only (the bytes go back untouched): the proxy
 * asks upstream for `identity`, but a server may encode anyway. `null`: an encoding it cannot read.
 */
function decoderFor(encoding: string | undefined): Transform | undefined | null {
  const e = (encoding ?? "").trim().toLowerCase();
  if (e === "" || e === "identity") return undefined;
  if (e === "gzip" || e === "x-gzip") return createGunzip();
  if (e === "deflate") return createInflate();
  if (e === "br") return createBrotliDecompress();
  return null;
}

/** Starts the proxy on 127.0.0.1 (a random port). */
export async function startModelProxy(options: ModelProxyOptions): Promise<ModelProxy> {
  const api = options.api ?? "anthropic";
  const allowed = MODEL_ENDPOINTS[api];
  const tokens = new Set<string>();
  const upstream = new URL(options.upstream);
  const base = upstream.pathname.replace(/\/$/, "");
  let count = 0;
  let check: (() => string | undefined) | undefined;
  const total = emptyUsage();
  const valid = (t: string) => [...tokens].some((k) => same(t, k));

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const raw = req.url ?? "/";
    const q = raw.indexOf("?");
    const pathname = q < 0 ? raw : raw.slice(0, q);
    const deny = (status: number, type: string, message: string) => {
      req.resume();
      refuse(res, api, status, type, message);
    };
    // Claude Code's reachability probe: answered here.
    if (req.method === "HEAD" && pathname === "/") {
      req.resume();
      res.writeHead(200).end();
      return;
    }
    const who = presented(req.headers);
    if (!who || !valid(who.token)) return deny(401, "authentication_error", "invalid session token");
    if (!endpointAllowed(allowed, `${req.method} ${pathname}`))
      return deny(
        404,
        "not_found_error",
        `Forge's model proxy serves only ${allowed.join(", ")}; ${req.method} ${pathname} is not forwarded`,
      );
    const spent = check?.();
    if (spent !== undefined) return deny(400, "invalid_request_error", spent);
    forward(req, res, who.style, `${base}${raw}`);
  });

  function forward(req: IncomingMessage, res: ServerResponse, style: KeyStyle, path: string): void {
    count++;
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (v === undefined || ["host", "x-api-key", "x-goog-api-key", "authorization", "connection", "accept-encoding"].includes(k))
        continue;
      headers[k] = v;
    }
    // Plain answers: the usage is read as they stream, and nothing waits on a compressor.
    headers["accept-encoding"] = "identity";
    if (style !== "bearer") headers[style] = options.key;
    else headers.authorization = `Bearer ${options.key}`;
    const send = upstream.protocol === "https:" ? httpsRequest : httpRequest;
    const out = send(
      { protocol: upstream.protocol, hostname: upstream.hostname, port: upstream.port || undefined, method: req.method, path, headers },
      (answer) => meter(answer, res),
    );
    out.on("error", (err) => refuse(res, api, 502, "api_error", `the model API could not be reached: ${err.message}`));
    req.pipe(out);
  }

  /** Streams the answer back untouched; a copy (decoded when encoded) is read for its token usage. */
  function meter(answer: IncomingMessage, res: ServerResponse): void {
    const decoder = decoderFor(answer.headers["content-encoding"] as string | undefined);
    if (decoder === null) {
      answer.resume();
      return refuse(
        res,
        api,
        502,
        "api_error",
        `the model API answered in an encoding the proxy cannot meter (${String(answer.headers["content-encoding"])})`,
      );
    }
    const reading = new AnswerUsage(String(answer.headers["content-type"] ?? "").includes("text/event-stream"));
    let counted = false;
    // Counted once, at the end of the answer or when it stops early (an agent that hangs up mid-stream still spent).
    const finish = () => {
      if (counted) return;
      counted = true;
      reading.end(total);
    };
    if (decoder) {
      decoder.on("data", (chunk: Buffer) => reading.write(chunk));
      decoder.on("end", finish);
      decoder.on("error", finish);
      answer.on("data", (chunk: Buffer) => decoder.write(chunk));
      answer.on("end", () => decoder.end());
      // Ended early: what was decoded counts (a normal end finishes through the decoder).
      answer.on("close", () => void (answer.complete || finish()));
    } else {
      answer.on("data", (chunk: Buffer) => reading.write(chunk));
      answer.on("end", finish);
      answer.on("close", finish);
    }
    // The agent hung up: stop the answer upstream too (what it streamed so far is counted).
    res.on("close", () => void (answer.complete || answer.destroy()));
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    openSession: () => {
      const token = `forge-session-${randomBytes(24).toString("hex")}`;
      tokens.add(token);
      return { token, end: () => void tokens.delete(token) };
    },
    gate: (c) => void (check = c),
    forwarded: () => count,
    usage: () => structuredClone(total),
    close: () =>
      new Promise<void>((resolve) => {
        tokens.clear();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
