/**
 * A webhook's body, bounded before anyone buffers it. Probot's middleware reads the whole body into
 * memory before it checks the signature, so an unsigned body of any size would sit in memory: here
 * a body over GitHub's own payload cap is refused with 413 — by its `Content-Length` before a byte is
 * read, or as soon as the bytes streamed pass the cap — and a body within it is handed to Probot
 * already read (`@octokit/webhooks` takes `request.body` when it is a string).
 *
 * One body's cap does not bound many: every body in flight — read, or handed to Probot and not yet
 * answered — is counted against one budget for the whole server (`BodyBudget`), and a request whose
 * bytes would pass it is answered 503 with `Retry-After` (by its `Content-Length` before a byte is
 * read, or as soon as the streamed bytes pass it). GitHub records a 503 as a failed delivery, which
 * can be redelivered; nobody's signature was checked yet, so nothing is lost that a sender may claim.
 * With the webhook secret, the signature (`X-Hub-Signature-256`, HMAC-SHA256 of the raw bytes) is
 * computed as the bytes arrive and checked here, so an unsigned body is dropped the moment it ends —
 * never decoded, parsed or logged by Probot, which logs a refused event with its whole payload.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * GitHub does not deliver a payload over 25 MB
 * (docs.github.com/webhooks/webhook-events-and-payloads#payload-cap): nothing larger is a webhook.
 */
export const WEBHOOK_BODY_LIMIT = 25 * 1024 * 1024;

/** The bytes of webhook bodies a server holds at once by default (`FORGE_WEBHOOK_BUFFER_MB`): two at GitHub's cap, and more. */
export const WEBHOOK_BUFFER_DEFAULT = 64 * 1024 * 1024;

/** How long a sender refused for the server's budget is asked to wait before trying again (seconds). */
const RETRY_AFTER_SECONDS = 5;

/** The bytes of webhook bodies the server holds at once, across requests. */
export class BodyBudget {
  #used = 0;
  #peak = 0;
  constructor(readonly limit: number = WEBHOOK_BUFFER_DEFAULT) {}

  /** Takes `n` more bytes if they fit; false (and nothing taken) when they would pass the limit. */
  take(n: number): boolean {
    if (this.#used + n > this.limit) return false;
    this.#used += n;
    this.#peak = Math.max(this.#peak, this.#used);
    return true;
  }

  give(n: number): void {
    this.#used = Math.max(0, this.#used - n);
  }

  /** Bytes held now. */
  get used(): number {
    return this.#used;
  }

  /** The most ever held at once. */
  get peak(): number {
    return this.#peak;
  }
}

/** How long a refused sender may go on sending (its bytes are dropped) before the connection is cut. */
const DRAIN_MS = 2_000;

const decoder = new TextDecoder("utf-8", { fatal: false });

export interface BodyBounds {
  /** One body's most bytes (413 beyond it). */
  limit?: number;
  /** The server's bytes in flight, across requests (503 beyond it). */
  budget?: BodyBudget;
  /** The webhook secret: a body whose signature does not match is answered 400 here. */
  secret?: string;
}

/** `X-Hub-Signature-256` matches the HMAC-SHA256 of the body under the secret (compared in constant time). */
function signatureMatches(header: string | string[] | undefined, digest: Buffer): boolean {
  const given = typeof header === "string" && /^sha256=[0-9a-f]{64}$/i.test(header) ? Buffer.from(header.slice(7), "hex") : undefined;
  return given !== undefined && timingSafeEqual(given, digest);
}

/**
 * Reads the body of a webhook request up to `limit` bytes and leaves it on `req.body`; answers 413
 * and returns false when the body is larger, 503 when the server's `budget` cannot hold it now, 400
 * when it is not signed with `secret`. The bytes taken from the budget are given back when the
 * response is over. Requests Probot would refuse without reading their body (no signature, delivery
 * or event header) are left to it, unread.
 */
export function takeWebhookBody(req: IncomingMessage, res: ServerResponse, bounds: BodyBounds = {}): Promise<boolean> {
  const { limit = WEBHOOK_BODY_LIMIT, budget = new BodyBudget(Infinity), secret } = bounds;
  const h = req.headers;
  if (!h["x-hub-signature-256"] || !h["x-github-delivery"] || !h["x-github-event"]) return Promise.resolve(true);
  const declared = Number(h["content-length"]);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve(refuse(req, res, 413, limit));
  // Whatever the request took is given back once its response is over (answered, refused or cut).
  let held = 0;
  res.once("close", () => budget.give(held));
  if (Number.isFinite(declared) && declared > 0) {
    if (!budget.take(declared)) return Promise.resolve(refuse(req, res, 503, limit));
    held = declared;
  }
  const hmac = secret === undefined ? undefined : createHmac("sha256", secret);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return void dropAnd(413);
      // Bytes beyond what was declared (or all of them, chunked) are taken as they come.
      if (size > held) {
        if (!budget.take(size - held)) return void dropAnd(503);
        held = size;
      }
      hmac?.update(chunk);
      chunks.push(chunk);
    };
    const dropAnd = (status: 400 | 413 | 503) => {
      chunks.length = 0;
      finish(refuse(req, res, status, limit));
    };
    const finish = (ok: boolean) => {
      if (settled) return;
      settled = true;
      req.off("data", onData);
      resolve(ok);
    };
    req.on("data", onData);
    req.once("end", () => {
      if (settled) return;
      if (hmac && !signatureMatches(h["x-hub-signature-256"], hmac.digest())) return dropAnd(400);
      (req as IncomingMessage & { body?: string }).body = decoder.decode(Buffer.concat(chunks, size));
      chunks.length = 0;
      finish(true);
    });
    // The sender went away: there is nobody to answer.
    req.once("error", () => finish(false));
    req.once("close", () => finish(false));
  });
}

const REFUSALS = {
  400: "Error: [@octokit/webhooks] signature does not match event payload and secret",
  413: "Payload Too Large: a webhook's body is at most %d bytes",
  503: "Service Unavailable: too many webhook bytes in flight; try again later",
} as const;

function refuse(req: IncomingMessage, res: ServerResponse, status: 400 | 413 | 503, limit: number): false {
  const headers: Record<string, string> = { "content-type": "application/json", connection: "close" };
  if (status === 503) headers["retry-after"] = String(RETRY_AFTER_SECONDS);
  res.writeHead(status, headers);
  res.end(JSON.stringify({ error: REFUSALS[status].replace("%d", String(limit)) }));
  // Whatever else comes is dropped unread, and the connection is cut soon after.
  req.resume();
  // eslint-disable-next-line no-restricted-globals -- a socket's drain bounds real I/O
  const cut = setTimeout(() => req.socket.destroy(), DRAIN_MS);
  cut.unref();
  req.socket.once("close", () => clearTimeout(cut));
  return false;
}
