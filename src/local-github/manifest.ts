// Registering a GitHub App from a manifest (docs.github.com/apps/sharing-github-apps/registering-a-github-app-from-a-manifest):
// 1. the App's setup page posts a form with `manifest` (JSON) to `/settings/apps/new?state=…`
//    (or `/organizations/{org}/settings/apps/new`); GitHub shows the person a page to create it;
// 2. on "Create GitHub App", GitHub redirects to the manifest's `redirect_url` with `code` and `state`;
// 3. the App exchanges the code, within an hour and once, at `POST /app-manifests/{code}/conversions`
//    (no authentication) for its id, private key (`pem`), webhook secret and client credentials.
import { generateKeyPairSync, randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { escapeHtml as escape } from "../core/render/html.js";
import { HttpError } from "./auth.js";
import type { SimCore } from "./domain/index.js";
import type { Handler } from "./rest/index.js";

interface Manifest {
  name?: string;
  url: string;
  redirect_url?: string;
  setup_url?: string;
  hook_attributes?: { url?: string; active?: boolean };
  public?: boolean;
  default_permissions?: Record<string, "read" | "write" | "admin">;
  default_events?: string[];
  description?: string;
}

interface Pending {
  manifest: Manifest;
  owner: string;
  expires: number;
}

const pending = new WeakMap<SimCore, Map<string, Pending>>();
const codesOf = (core: SimCore): Map<string, Pending> => {
  let m = pending.get(core);
  if (!m) pending.set(core, (m = new Map()));
  return m;
};

const WEB_PATH = /^(?:\/organizations\/([^/]+))?\/settings\/apps\/new(\/confirm)?$/;
const INSTALL_PATH = /^\/apps\/([^/]+)\/installations\/new$/;
const INSTALLED_PATH = /^\/settings\/installations\/(\d+)$/;

export function isManifestWebRequest(path: string): boolean {
  return WEB_PATH.test(path) || INSTALL_PATH.test(path) || INSTALLED_PATH.test(path);
}

function page(res: ServerResponse, status: number, title: string, body: string): void {
  res.writeHead(status, { "content-type": "text/html; charset=utf-8" });
  res.end(`<!doctype html><html><head><meta charset="utf-8"><title>${escape(title)}</title></head><body>${body}</body></html>`);
}

function parseManifest(text: string | null): Manifest | string {
  if (!text) return "the form has no manifest";
  let m: unknown;
  try {
    m = JSON.parse(text);
  } catch {
    return "the manifest is not JSON";
  }
  if (!m || typeof m !== "object") return "the manifest is not an object";
  const man = m as Manifest;
  if (typeof man.url !== "string" || !man.url) return "the manifest has no url";
  return man;
}

/**
 * GitHub's web pages of the flow. The local GitHub has no sign-in: the App is created for the
 * organization in the path, else for `?login=` or the user `forge-dev`.
 */
export async function handleManifestWeb(
  core: SimCore,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  readBody: (req: IncomingMessage) => Promise<Buffer>,
): Promise<void> {
  if (!WEB_PATH.test(url.pathname)) return handleInstallWeb(core, req, res, url, readBody);
  const m = WEB_PATH.exec(url.pathname)!;
  if (req.method !== "POST") return page(res, 405, "Method not allowed", "<p>Post the manifest form here.</p>");
  const form = new URLSearchParams((await readBody(req)).toString("utf8"));
  const manifest = parseManifest(form.get("manifest"));
  if (typeof manifest === "string") return page(res, 422, "Invalid manifest", `<p id="error">${escape(manifest)}</p>`);
  const owner = m[1] ?? url.searchParams.get("login") ?? form.get("login") ?? "forge-dev";
  const state = url.searchParams.get("state") ?? form.get("state") ?? "";
  if (!m[2]) {
    // The page a person sees: the App's name (editable) and "Create GitHub App".
    const action = `${m[1] ? `/organizations/${encodeURIComponent(m[1])}` : ""}/settings/apps/new/confirm`;
    return page(
      res,
      200,
      "Create GitHub App",
      `<h1>Create GitHub App for ${escape(owner)}</h1><form method="post" action="${escape(action)}">` +
        `<label>GitHub App name <input name="name" id="name" value="${escape(manifest.name ?? "")}"></label>` +
        `<input type="hidden" name="manifest" value="${escape(JSON.stringify(manifest))}">` +
        `<input type="hidden" name="state" value="${escape(state)}"><input type="hidden" name="login" value="${escape(owner)}">` +
        `<button type="submit" id="create">Create GitHub App for ${escape(owner)}</button></form>`,
    );
  }
  const name = (form.get("name") ?? manifest.name ?? "").trim();
  if (!name) return page(res, 422, "Invalid manifest", '<p id="error">the App needs a name</p>');
  const code = randomBytes(20).toString("hex");
  // eslint-disable-next-line no-restricted-properties -- credentials expire in real time: the clients holding them read the real clock
  codesOf(core).set(code, { manifest: { ...manifest, name }, owner, expires: Date.now() + 3_600_000 });
  const back = new URL(manifest.redirect_url ?? manifest.url);
  back.searchParams.set("code", code);
  if (state) back.searchParams.set("state", state);
  res.writeHead(302, { location: back.href });
  res.end();
}

/**
 * Installing an App (docs.github.com/apps/using-github-apps/installing-a-github-app-from-a-third-party):
 * `/apps/{slug}/installations/new` asks where (an account that owns repositories), then which
 * repositories (all, or those ticked); "Install" installs it — `installation.created` reaches the
 * App — and sends the person to the App's setup URL with `installation_id` and `setup_action=install`,
 * else to the installation's settings page.
 */
async function handleInstallWeb(
  core: SimCore,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  readBody: (req: IncomingMessage) => Promise<Buffer>,
): Promise<void> {
  const done = INSTALLED_PATH.exec(url.pathname);
  if (done) {
    const inst = core.state.installations.get(Number(done[1]));
    if (!inst) return page(res, 404, "Not found", "<p>No such installation.</p>");
    const app = core.state.apps.get(inst.appId)!;
    return page(res, 200, "Installed", `<h1 id="installed">${escape(app.name)} is installed on ${escape(inst.account.login)}</h1>`);
  }
  const slug = decodeURIComponent(INSTALL_PATH.exec(url.pathname)![1]!);
  const app = [...core.state.apps.values()].find((a) => a.slug === slug);
  if (!app) return page(res, 404, "Not found", "<p>No such App.</p>");
  const repos = [...core.state.repos.values()];
  if (req.method === "POST") {
    const form = new URLSearchParams((await readBody(req)).toString("utf8"));
    const account = form.get("target") ?? "";
    const owned = repos.filter((r) => r.owner.login === account);
    if (!owned.length) return page(res, 422, "Install", `<p id="error">${escape(account)} owns no repository</p>`);
    const selected = form.getAll("repository").filter((n) => owned.some((r) => r.name === n));
    if (form.get("repository_selection") === "selected" && !selected.length)
      return page(res, 422, "Install", '<p id="error">select at least one repository</p>');
    const inst = core.install(app.id, account, form.get("repository_selection") === "selected" ? selected : "all");
    const next = app.setupUrl ? new URL(app.setupUrl) : new URL(`/settings/installations/${inst.id}`, url);
    if (app.setupUrl) {
      next.searchParams.set("installation_id", String(inst.id));
      next.searchParams.set("setup_action", "install");
    }
    res.writeHead(302, { location: next.href });
    res.end();
    return;
  }
  if (req.method !== "GET") return page(res, 405, "Method not allowed", "<p>Use GET or POST.</p>");
  const target = url.searchParams.get("target");
  const title = `Install ${app.name}`;
  if (!target) {
    const accounts = [...new Set(repos.map((r) => r.owner.login))].sort();
    const links = accounts.map((a) => `<li><a class="account" href="?target=${encodeURIComponent(a)}">${escape(a)}</a></li>`).join("");
    return page(res, 200, title, `<h1>${escape(title)}</h1><p>Where do you want to install ${escape(app.name)}?</p><ul>${links}</ul>`);
  }
  const owned = repos.filter((r) => r.owner.login === target);
  const boxes = owned
    .map((r) => `<label><input type="checkbox" name="repository" value="${escape(r.name)}"> ${escape(r.name)}</label>`)
    .join("<br>");
  const permissions = Object.entries(app.permissions)
    .map(([k, v]) => `<li>${escape(k)}: ${escape(String(v))}</li>`)
    .join("");
  return page(
    res,
    200,
    title,
    `<h1>${escape(title)} on ${escape(target)}</h1><ul id="permissions">${permissions}</ul>` +
      `<form method="post"><input type="hidden" name="target" value="${escape(target)}">` +
      `<label><input type="radio" name="repository_selection" value="all" id="all" checked> All repositories</label>` +
      `<label><input type="radio" name="repository_selection" value="selected" id="selected"> Only select repositories</label><br>${boxes}` +
      `<button type="submit" id="install">Install</button></form>`,
  );
}

export const manifestHandlers: Record<string, Handler> = {
  // docs.github.com/rest/apps/apps#create-a-github-app-from-a-manifest: 201 with the App and its
  // credentials; a code works once, for an hour.
  "apps/create-from-manifest": async (ctx) => {
    const codes = codesOf(ctx.core);
    const found = codes.get(ctx.params.code!);
    codes.delete(ctx.params.code!);
    // eslint-disable-next-line no-restricted-properties -- credentials expire in real time: the clients holding them read the real clock
    if (!found || found.expires < Date.now()) throw new HttpError(404, "Not Found", ctx.doc);
    const { manifest, owner } = found;
    const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const webhookSecret = manifest.hook_attributes?.url ? randomBytes(20).toString("hex") : null;
    const slug = manifest
      .name!.toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-|-$/g, "");
    if ([...ctx.core.state.apps.values()].some((a) => a.slug === slug))
      throw new HttpError(422, "Validation Failed", ctx.doc, {
        errors: [{ resource: "Integration", code: "custom", field: "name", message: "Name is already in use" }],
      });
    const app = ctx.core.registerApp({
      slug,
      name: manifest.name!,
      owner,
      publicKeyPem: publicKey.export({ type: "spki", format: "pem" }).toString(),
      webhookUrl: manifest.hook_attributes?.active === false ? null : (manifest.hook_attributes?.url ?? null),
      webhookSecret,
      permissions: manifest.default_permissions ?? {},
      events: manifest.default_events ?? [],
      setupUrl: manifest.setup_url ?? null,
    });
    return {
      status: 201,
      body: {
        ...(ctx.core.model.app(app) as Record<string, unknown>),
        client_id: app.clientId,
        client_secret: randomBytes(20).toString("hex"),
        webhook_secret: webhookSecret,
        pem: privateKey.export({ type: "pkcs1", format: "pem" }).toString(),
      },
    };
  },
};
