/**
 * First start without credentials: a setup page that registers the Forge App on GitHub from its
 * manifest (app.yml), as Probot's setup mode does
 * (docs.github.com/apps/sharing-github-apps/registering-a-github-app-from-a-manifest):
 *
 *  1. the console prints a one-time link, `http://<host>:<port>/?token=…`; the page it opens posts
 *     app.yml — with this server's webhook, redirect and setup URLs — to GitHub's
 *     `/settings/apps/new?state=…`;
 *  2. the person creates the App on GitHub, which sends the browser back to `/setup/done?code&state`;
 *  3. the code is exchanged once at `POST /app-manifests/{code}/conversions` for the App's id,
 *     private key and webhook secret, written to `.env` (mode 0600; read on every later start), and
 *     the browser goes on to install the App; the caller then starts the App on the same port.
 *
 * Probot's own setup (`run()` without an App id) is not reused: it is reachable only through
 * Probot's own server, posts app.yml's webhook URL as written (Forge's placeholder), checks no
 * `state` and asks for a restart. Here only the person holding the console's link can start a
 * registration, and each registration's `state` is checked and used once — so no one who merely
 * reaches the page can configure the server with an App of their own.
 */
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parseEnv } from "node:util";
import YAML from "yaml";
import { escapeHtml as escape } from "../core/render/html.js";
import { convertManifestCode } from "../github/app-client.js";
import { WEBHOOK_PATH } from "./server.js";

export interface AppCredentials {
  appId: string;
  privateKey: string;
  webhookSecret: string;
}

export interface SetupOptions {
  port: number;
  host: string;
  /** GitHub's web root: https://github.com, a GitHub Enterprise Server, or the local GitHub. */
  webUrl: string;
  /** GitHub's REST root (https://api.github.com, or `<web>/api/v3`). */
  apiUrl: string;
  /** Where GitHub and the browser reach this server (default `http://<host>:<port>`). */
  publicUrl?: string;
  /** Register the App for this organization rather than the person's own account. */
  org?: string;
  /** The App's manifest. */
  manifestPath: string;
  /** The file the credentials are written to. */
  envPath: string;
  log(line: string): void;
}

export interface SetupServer {
  /** The one-time link to open. */
  url: string;
  /** The port it listens on: the App takes it over once registered (GitHub was given its URLs). */
  port: number;
  /** Resolves once the App is registered and `.env` written; the setup server is closed by then. */
  registered: Promise<AppCredentials>;
  close(): Promise<void>;
}

const SETUP_DONE = "/setup/done";
export const SETUP_INSTALLED = "/setup/installed";

function page(res: ServerResponse, status: number, title: string, body: string): void {
  res.writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
  res.end(`<!doctype html><html><head><meta charset="utf-8"><title>${escape(title)}</title></head><body>${body}</body></html>`);
}

/** app.yml with this server's URLs: webhooks, the redirect after registering, the page after installing. */
export function setupManifest(manifestPath: string, publicUrl: string): Record<string, unknown> {
  const manifest = YAML.parse(readFileSync(manifestPath, "utf8")) as Record<string, unknown>;
  const hook = (manifest.hook_attributes ?? {}) as Record<string, unknown>;
  return {
    ...manifest,
    hook_attributes: { ...hook, url: `${publicUrl}${WEBHOOK_PATH}` },
    redirect_url: `${publicUrl}${SETUP_DONE}`,
    setup_url: `${publicUrl}${SETUP_INSTALLED}`,
  };
}

/** A dotenv value: quoted, newlines escaped (node:util parseEnv and dotenv read it back). */
const envValue = (v: string): string =>
  /^[\w.:/@+-]*$/.test(v) ? v : `"${v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"')}"`;

/** Merges `values` into the dotenv file at `path` (kept: every other variable), readable by its owner only. */
export function updateEnvFile(path: string, values: Record<string, string>): void {
  const kept = existsSync(path) ? parseEnv(readFileSync(path, "utf8")) : {};
  const all = { ...kept, ...values };
  writeFileSync(
    path,
    `${Object.entries(all)
      .map(([k, v]) => `${k}=${envValue(v ?? "")}`)
      .join("\n")}\n`,
    { mode: 0o600 },
  );
  chmodSync(path, 0o600);
}

export async function startSetup(o: SetupOptions): Promise<SetupServer> {
  const token = randomBytes(16).toString("hex");
  const states = new Set<string>();
  let resolveRegistered!: (c: AppCredentials) => void;
  const registered = new Promise<AppCredentials>((r) => (resolveRegistered = r));
  let publicUrl = o.publicUrl?.replace(/\/$/, "");

  const server = createServer((req, res) => {
    void handle(req, res).catch((e: unknown) => {
      o.log(`setup: ${(e as Error).message}`);
      if (!res.headersSent) page(res, 502, "Setup failed", `<p id="error">${escape((e as Error).message)}</p>`);
      else res.end();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://setup.invalid");
    if (url.pathname === "/healthz") {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("setup\n");
      return;
    }
    if (req.method === "POST" && url.pathname === WEBHOOK_PATH) {
      res.writeHead(503, { "content-type": "text/plain" });
      res.end("Forge is not set up yet\n");
      return;
    }
    if (req.method !== "GET") return page(res, 405, "Method not allowed", "<p>Method not allowed.</p>");
    if (url.pathname === "/") {
      if (url.searchParams.get("token") !== token)
        return page(res, 403, "Forge setup", '<p id="error">Open the setup link printed in the App\'s console.</p>');
      const state = randomBytes(16).toString("hex");
      states.add(state);
      const manifest = setupManifest(o.manifestPath, publicUrl!);
      const action = `${o.webUrl.replace(/\/$/, "")}${o.org ? `/organizations/${encodeURIComponent(o.org)}` : ""}/settings/apps/new?state=${state}`;
      const local = /^https?:\/\/(127\.|localhost|\[::1\])/.test(publicUrl!) && /github\.com/.test(o.webUrl);
      return page(
        res,
        200,
        "Set up Forge",
        `<h1>Set up Forge</h1><p>Register the Forge GitHub App${o.org ? ` for ${escape(o.org)}` : ""} on ${escape(o.webUrl)}. ` +
          `GitHub will send its webhooks to <code id="webhook">${escape(`${publicUrl}${WEBHOOK_PATH}`)}</code>.</p>` +
          (local
            ? `<p id="warning">GitHub cannot reach ${escape(publicUrl!)}: start the App with PUBLIC_URL set to a public address.</p>`
            : "") +
          `<form method="post" action="${escape(action)}"><input type="hidden" name="manifest" value="${escape(JSON.stringify(manifest))}">` +
          `<button type="submit" id="register">Register the GitHub App</button></form>`,
      );
    }
    if (url.pathname === SETUP_DONE) {
      const code = url.searchParams.get("code") ?? "";
      const state = url.searchParams.get("state") ?? "";
      if (!states.delete(state) || !/^[\w-]{1,128}$/.test(code))
        return page(res, 400, "Forge setup", '<p id="error">This registration was not started from this setup page.</p>');
      const data = await convertManifestCode(o.apiUrl, code);
      const credentials: AppCredentials = { appId: String(data.id), privateKey: data.pem, webhookSecret: data.webhook_secret ?? "" };
      updateEnvFile(o.envPath, {
        APP_ID: credentials.appId,
        PRIVATE_KEY: credentials.privateKey,
        WEBHOOK_SECRET: credentials.webhookSecret,
        GITHUB_CLIENT_ID: data.client_id,
        GITHUB_CLIENT_SECRET: data.client_secret,
        ...(o.apiUrl !== "https://api.github.com" ? { GITHUB_API_URL: o.apiUrl } : {}),
      });
      o.log(`setup: registered the App ${data.slug ?? data.id}; its credentials are in ${o.envPath}`);
      res.writeHead(302, { location: `${data.html_url}/installations/new` });
      res.end(() => {
        void close().then(() => resolveRegistered(credentials));
      });
      return;
    }
    return page(res, 404, "Not found", "<p>Not found.</p>");
  }

  async function close(): Promise<void> {
    if (!server.listening) return;
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, o.host, resolve);
  });
  const port = (server.address() as AddressInfo).port;
  publicUrl ??= `http://${o.host === "0.0.0.0" ? "127.0.0.1" : o.host}:${port}`;
  const url = `${publicUrl}/?token=${token}`;
  return { url, port, registered, close };
}
