/**
 * The App as a long-lived Node HTTP server: Probot's webhook middleware (signature checked with the
 * webhook secret) at `/api/github/webhooks`, behind a bound on the body's size (`webhook-body.ts`),
 * plus the reconciler on a timer.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createNodeMiddleware, Probot } from "probot";
import { octokitWithDefaults, pacedOctokitDefaults } from "../github/app-client.js";
import { createForgeApp, type ForgeApp, type ForgeAppOptions } from "./app.js";
import { BodyBudget, takeWebhookBody, WEBHOOK_BODY_LIMIT, WEBHOOK_BUFFER_DEFAULT } from "./webhook-body.js";
import { journalKeyFrom } from "./journal-seal.js";

export interface ForgeServerOptions extends ForgeAppOptions {
  appId: number | string;
  privateKey: string;
  webhookSecret: string;
  /** REST root: https://api.github.com, or https://<host>/api/v3 for GitHub Enterprise Server and the local GitHub. */
  baseUrl?: string;
  port?: number;
  /** Probot binds to localhost by default; use 0.0.0.0 in a container. */
  host?: string;
  logLevel?: "trace" | "debug" | "info" | "warn" | "error" | "fatal";
  /** Octokit request options (tests shorten retries). */
  octokitDefaults?: Record<string, unknown>;
  /**
   * The bytes of webhook bodies held at once, across requests, before their signatures are checked
   * (default `WEBHOOK_BUFFER_DEFAULT`, 64 MiB; at least GitHub's 25 MB cap): beyond it a webhook is
   * answered 503 with Retry-After.
   */
  webhookBufferBytes?: number;
}

export interface ForgeServer {
  url: string;
  webhookUrl: string;
  forge: ForgeApp;
  probot: Probot;
  /** The webhook bodies held now and at most (`webhook-body.ts`). */
  webhookBodies: BodyBudget;
  close(): Promise<void>;
}

export const WEBHOOK_PATH = "/api/github/webhooks";

/**
 * Where GitHub sends a person who installed the App (the manifest's setup_url): what comes next, in
 * commands that work from a clone of the repository. Forge's package is `@forge-dev/forge` (the
 * registry's `forge` is another project): the clone installs it first — from the npm registry, where
 * the release publishes it (scripts/release.mjs), or from the tarball `npm pack` makes in a Forge
 * checkout — and then `npx forge` runs the installed one, never a package fetched by a bare name.
 */
const INSTALLED_PAGE =
  '<!doctype html><html><head><meta charset="utf-8"><title>Forge is installed</title></head><body>' +
  '<h1 id="installed">Forge is installed</h1><p>Next, in a clone of the repository:</p><ol id="next">' +
  "<li>install Forge's package: <code>npm i -D @forge-dev/forge</code> (or, from a Forge checkout, " +
  "<code>npm pack</code> there and <code>npm i -D /path/to/forge-dev-forge-&lt;version&gt;.tgz</code> here; " +
  "the registry's <code>forge</code> is another project)</li>" +
  "<li><code>npx forge init</code> — the agent workflow, <code>.github/forge.yml</code> and an example plan</li>" +
  "<li>add the model key as an Actions secret, commit and push</li>" +
  "<li><code>npx forge doctor</code> — checks the installation, then merge a plan to start a run</li></ol></body></html>";

/** Probot's Octokit class with request options over its own (tests shorten retries). */
export { octokitWithDefaults };

/** Octokit's options: paced by Forge per installation unless `pace` is false, then the caller's. */
function octokitDefaultsOf(options: ForgeServerOptions): Record<string, unknown> {
  const paced = options.pace === false ? {} : pacedOctokitDefaults();
  const given = options.octokitDefaults ?? {};
  const throttle = { ...(paced.throttle as object | undefined), ...(given.throttle as object | undefined) };
  return { ...paced, ...given, ...(Object.keys(throttle).length ? { throttle } : {}) };
}

export async function startForgeServer(options: ForgeServerOptions): Promise<ForgeServer> {
  const probot = new Probot({
    appId: options.appId,
    privateKey: options.privateKey,
    secret: options.webhookSecret,
    ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}),
    logLevel: options.logLevel ?? "warn",
    Octokit: octokitWithDefaults(octokitDefaultsOf(options)),
  });
  const forge = createForgeApp({ ...options, journalKey: options.journalKey ?? journalKeyFrom(options.privateKey) });
  // createNodeMiddleware is async in Probot 14: it loads the app before answering.
  const middleware = await createNodeMiddleware(forge, { probot, webhooksPath: WEBHOOK_PATH });
  // One budget for every body in flight; never below one body at GitHub's cap, or a large webhook could never arrive.
  const bodies = new BodyBudget(Math.max(options.webhookBufferBytes ?? WEBHOOK_BUFFER_DEFAULT, WEBHOOK_BODY_LIMIT));
  const server: Server = createServer((req, res) => {
    if (req.url === "/healthz") {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("ok\n");
      return;
    }
    if (req.method === "GET" && req.url?.split("?")[0] === "/setup/installed") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(INSTALLED_PAGE);
      return;
    }
    const next = () => {
      res.writeHead(404);
      res.end();
    };
    // A webhook's body is bounded (and read) before Probot's middleware sees it — on every path
    // Probot might take for the webhook path (it ignores trailing slashes, for one) — and so are all
    // the bodies in flight together; an unsigned one goes no further.
    if (req.method === "POST")
      void takeWebhookBody(req, res, { budget: bodies, secret: options.webhookSecret }).then((ok) => ok && middleware(req, res, next));
    else void middleware(req, res, next);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 3000, options.host ?? "127.0.0.1", resolve);
  });
  const addr = server.address() as AddressInfo;
  const url = `http://${options.host && options.host !== "0.0.0.0" ? options.host : "127.0.0.1"}:${addr.port}`;
  return {
    url,
    webhookUrl: `${url}${WEBHOOK_PATH}`,
    forge,
    probot,
    webhookBodies: bodies,
    async close() {
      forge.stop();
      await forge.idle();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
