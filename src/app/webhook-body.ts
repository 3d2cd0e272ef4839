/**
 * A webhook's body, bounded before anyone buffers it. Probot's middleware reads the whole body into
 * memory before it checks the signature, so an unsigned body of any size would sit in memory: here
 * a body over GitHub's own payload cap is refused with 413 — by its `Content-Length` before a byte is
 * read, or as soon as the bytes streamed pass the cap — and a body within it is handed to Probot
 * already read (`@octokit/webhooks` takes `request.body` when it is a string).
 */
import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * GitHub does not deliver a payload over 25 MB
 * (docs.github.com/webhooks/webhook-events-and-payloads#payload-cap): nothing larger is a webhook.
 */
export const WEBHOOK_BODY_LIMIT = 25 * 1024 * 1024;

/** How long a refused sender may go on sending (its bytes are dropped) before the connection is cut. */
const DRAIN_MS = 2_000;

const decoder = new TextDecoder("utf-8", { fatal: false });

/**
 * Reads the body of a webhook request up to `limit` bytes and leaves it on `req.body`; answers 413
 * and returns false when the body is larger. Requests Probot would refuse without reading their body
 * (no signature, delivery or event header) are left to it, unread.
 */
export function takeWebhookBody(req: IncomingMessage, res: ServerResponse, limit = WEBHOOK_BODY_LIMIT): Promise<boolean> {
  const h = req.headers;
  if (!h["x-hub-signature-256"] || !h["x-github-delivery"] || !h["x-github-event"]) return Promise.resolve(true);
  const declared = Number(h["content-length"]);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve(refuse(req, res, limit));
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      chunks.length = 0;
      finish(refuse(req, res, limit));
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
      (req as IncomingMessage & { body?: string }).body = decoder.decode(Buffer.concat(chunks, size));
      finish(true);
    });
    // The sender went away: there is nobody to answer.
    req.once("error", () => finish(false));
    req.once("close", () => finish(false));
  });
}

function refuse(req: IncomingMessage, res: ServerResponse, limit: number): false {
  res.writeHead(413, { "content-type": "application/json", connection: "close" });
  res.end(JSON.stringify({ error: `Payload Too Large: a webhook's body is at most ${limit} bytes` }));
  // Whatever else comes is dropped unread, and the connection is cut soon after.
  req.resume();
  const cut = setTimeout(() => req.socket.destroy(), DRAIN_MS);
  cut.unref();
  req.socket.once("close", () => clearTimeout(cut));
  return false;
}
