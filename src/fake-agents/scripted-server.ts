// What the two scripted model servers (model-server.ts, responses/server.ts) share: the HTTP server,
// the request records, reading a JSON body, injected errors, script turns, SSE writing, listening.
// Each server keeps its API: routes, request kinds, which turn to answer, error shapes, encodings.
import http from "node:http";
import type { AddressInfo } from "node:net";

/** One request as a scripted server recorded it; its route sets `kind`, `turn` and `status`. */
export interface ScriptedRequestRecord<Body, Kind extends string> {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Body | null;
  kind: Kind;
  turn: number | null;
  status: number;
  at: number;
}

/** An error a test injects: answered before the script, to the next main requests. */
export interface ScriptedError<Status extends number> {
  status: Status;
  /** Seconds for the `retry-after` header. */
  retryAfter?: number;
  message?: string;
  /** How many consecutive main requests get it (default 1). */
  count?: number;
}

export interface ScriptedServer<Recorded, Err> {
  url: string;
  port: number;
  requests: Recorded[];
  /** Main requests only. */
  turns(): Recorded[];
  /** True once a request asked for a turn past the end of the script. */
  exhausted(): boolean;
  failNext(error: Err): void;
  close(): Promise<void>;
}

/** An HTTP server answering with `handle`; a failure answers with `fail` (or ends a response already begun). */
export function createScriptedServer(
  handle: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>,
  fail: (res: http.ServerResponse, err: unknown) => void,
): http.Server {
  return http.createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) fail(res, err);
      else res.end();
    });
  });
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}

/**
 * Reads a request: its URL, its JSON body (null when empty or not JSON), and its record (kind
 * `other`, no turn, no status yet; the caller keeps it).
 */
export async function readRequest<Body>(
  req: http.IncomingMessage,
): Promise<{ url: URL; body: Body | null; record: ScriptedRequestRecord<Body, "other"> }> {
  const url = new URL(req.url ?? "/", "http://localhost");
  const raw = await readBody(req);
  let body: Body | null = null;
  try {
    body = raw ? (JSON.parse(raw) as Body) : null;
  } catch {
    body = null;
  }
  const record: ScriptedRequestRecord<Body, "other"> = {
    method: req.method ?? "",
    path: url.pathname,
    headers: req.headers,
    body,
    kind: "other",
    turn: null,
    status: 0,
    at: Date.now(),
  };
  return { url, body, record };
}

/**
 * Takes the next injected error, if any (counting it down), with the headers it is answered with:
 * `retry-after` when it has one, and `rateLimitHeader: 0` on a 429.
 */
export function takeInjectedError<E extends ScriptedError<number>>(
  pending: E[],
  rateLimitHeader: string,
): { error: E; headers: Record<string, string> } | undefined {
  const error = pending[0];
  if (!error) return undefined;
  error.count = (error.count ?? 1) - 1;
  if (error.count <= 0) pending.shift();
  const headers: Record<string, string> = {};
  if (error.retryAfter !== undefined) headers["retry-after"] = String(error.retryAfter);
  if (error.status === 429) headers[rateLimitHeader] = "0";
  return { error, headers };
}

/** Turn `index` of a script (a function entry is called with `request()`); past its end, a turn saying so. */
export function scriptTurn<Turn extends { text?: string }, Request>(
  script: ReadonlyArray<Turn | ((req: Request) => Turn)>,
  index: number,
  request: () => Request,
): { turn: Turn; exhausted: boolean } {
  const entry = script[index];
  if (entry === undefined) return { turn: { text: "The script has no more turns." } as Turn, exhausted: true };
  return { turn: typeof entry === "function" ? entry(request()) : entry, exhausted: false };
}

/** Starts a 200 event stream; `headers` are added last (the request id). */
export function sseHead(res: http.ServerResponse, headers: Record<string, string>): void {
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
    ...headers,
  });
}

/** Writes SSE events, one chunk each. */
export function writeSse(res: http.ServerResponse, events: Array<{ event: string; data: unknown }>): void {
  for (const e of events) res.write(`event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`);
}

/** Listens on `host` (default 127.0.0.1) and `port` (default: a free one); `close` drops open connections. */
export async function listen(
  server: http.Server,
  host = "127.0.0.1",
  port = 0,
): Promise<{ url: string; port: number; close: () => Promise<void> }> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${bound}`,
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
