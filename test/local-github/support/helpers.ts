// Test helpers for the local GitHub: App keys (from src/demo/app-keys.ts) and JWTs, and a
// webhook receiver that checks signatures and schemas the way a real App endpoint would.
import { createSign } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { verify } from "@octokit/webhooks-methods";
import { specValidator, SpecValidator } from "../../../src/local-github/openapi.js";

export { appKeys, type AppKeys } from "../../../src/demo/app-keys.js";

/** An App JWT as GitHub documents it: RS256, iat back-dated 60 s, exp ≤ 10 min. */
export function appJwt(appId: number | string, privateKeyPem: string, claims: { iat?: number; exp?: number } = {}): string {
  const nowSec = Math.floor(Date.now() / 1000);
  const header = Buffer.from(JSON.stringify({ alg: "RS256", typ: "JWT" })).toString("base64url");
  const payload = Buffer.from(JSON.stringify({ iat: claims.iat ?? nowSec - 60, exp: claims.exp ?? nowSec + 540, iss: appId })).toString(
    "base64url",
  );
  const sig = createSign("RSA-SHA256").update(`${header}.${payload}`).sign(privateKeyPem).toString("base64url");
  return `${header}.${payload}.${sig}`;
}

export interface ReceivedHook {
  event: string;
  action: string | null;
  delivery: string;
  headers: Record<string, string>;
  payload: Record<string, unknown>;
  signatureValid: boolean;
  schemaError: string | undefined;
}

export interface Receiver {
  url: string;
  received: ReceivedHook[];
  /** answer with this status (default 200) */
  status: number;
  waitFor(pred: (h: ReceivedHook) => boolean, timeoutMs?: number): Promise<ReceivedHook>;
  close(): Promise<void>;
}

/** A separate local HTTP server receiving webhooks; verifies each signature and payload schema. */
export async function startReceiver(secret: string): Promise<Receiver> {
  const validator = specValidator();
  const received: ReceivedHook[] = [];
  const waiters: Array<() => void> = [];
  const r: Receiver = {
    url: "",
    received,
    status: 200,
    async waitFor(pred, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const hit = received.find(pred);
        if (hit) return hit;
        if (Date.now() > deadline)
          throw new Error(`no matching webhook within ${timeoutMs} ms; got ${received.map((h) => `${h.event}.${h.action}`).join(", ")}`);
        await new Promise<void>((res) => {
          waiters.push(res);
          setTimeout(res, 50);
        });
      }
    },
    close: () => new Promise((res) => server.close(() => res())),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      void (async () => {
        const body = Buffer.concat(chunks).toString("utf8");
        const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
        const payload = JSON.parse(body) as Record<string, unknown>;
        const event = headers["x-github-event"] ?? "";
        const action = typeof payload.action === "string" ? payload.action : null;
        const signatureValid = await verify(secret, body, headers["x-hub-signature-256"] ?? "");
        received.push({
          event,
          action,
          delivery: headers["x-github-delivery"] ?? "",
          headers,
          payload,
          signatureValid,
          schemaError: validator.validateWebhook(SpecValidator.webhookKey(event, action ?? undefined), payload),
        });
        res.writeHead(r.status);
        res.end();
        waiters.splice(0).forEach((w) => w());
      })();
    });
  });
  await new Promise<void>((res) => server.listen(0, "127.0.0.1", () => res()));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return r;
}
