/**
 * The model API served to the agent through the runner (see docs/runner.md#isolation): the agent
 * holds a local URL and a token good only for this proxy and this job; the proxy checks that token,
 * puts the real key in its place and forwards the request to the model API, streaming the answer
 * back. The key never enters the agent's environment. (It is also where a run's budget can be
 * enforced.)
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import { request as httpsRequest } from "node:https";
import type { AddressInfo } from "node:net";
import { AnswerUsage, emptyUsage, type ModelUsage } from "./model-usage.js";

export interface ModelProxy {
  /** Base URL the agent calls (http://127.0.0.1:<port>). */
  url: string;
  /** The token the agent presents instead of the key. */
  token: string;
  /** Requests forwarded so far. */
  forwarded(): number;
  /** Tokens the model's answers reported so far (src/agent/model-usage.ts). */
  usage(): ModelUsage;
  close(): Promise<void>;
}

export interface ModelProxyOptions {
  /** The model API's base URL (its path is kept: `https://api.openai.com/v1`). */
  upstream: string;
  /** The real key. */
  key: string;
}

/** The token a request presents: `x-api-key`, or `authorization: Bearer`. */
function presented(headers: IncomingHttpHeaders): { token: string; style: "x-api-key" | "bearer" } | undefined {
  const x = headers["x-api-key"];
  if (typeof x === "string" && x) return { token: x, style: "x-api-key" };
  const auth = headers.authorization;
  const m = typeof auth === "string" ? /^Bearer\s+(\S+)$/i.exec(auth) : null;
  return m ? { token: m[1]!, style: "bearer" } : undefined;
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Starts the proxy on 127.0.0.1 (a random port). */
export async function startModelProxy(options: ModelProxyOptions): Promise<ModelProxy> {
  const token = `forge-session-${randomBytes(24).toString("hex")}`;
  const upstream = new URL(options.upstream);
  const base = upstream.pathname.replace(/\/$/, "");
  let count = 0;
  const total = emptyUsage();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const who = presented(req.headers);
    if (!who || !same(who.token, token)) {
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify({ type: "error", error: { type: "authentication_error", message: "invalid session token" } }));
      req.resume();
      return;
    }
    count++;
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (v === undefined || ["host", "x-api-key", "authorization", "connection"].includes(k)) continue;
      headers[k] = v;
    }
    if (who.style === "x-api-key") headers["x-api-key"] = options.key;
    else headers.authorization = `Bearer ${options.key}`;
    const send = upstream.protocol === "https:" ? httpsRequest : httpRequest;
    const out = send(
      {
        protocol: upstream.protocol,
        hostname: upstream.hostname,
        port: upstream.port || undefined,
        method: req.method,
        path: `${base}${req.url ?? "/"}`,
        headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        // The answer goes back untouched; a copy is read for its token usage.
        const reading = new AnswerUsage(String(answer.headers["content-type"] ?? "").includes("text/event-stream"));
        answer.on("data", (chunk: Buffer) => reading.write(chunk));
        answer.on("end", () => reading.end(total));
        answer.pipe(res);
      },
    );
    out.on("error", (err) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ type: "error", error: { type: "api_error", message: `the model API could not be reached: ${err.message}` } }),
      );
    });
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    forwarded: () => count,
    usage: () => structuredClone(total),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
