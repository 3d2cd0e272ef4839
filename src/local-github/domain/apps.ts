// Apps, installations and their tokens in the local GitHub: GitHub Actions' own App, Apps registered,
// installed and uninstalled (with the installation webhooks), repositories added, tokens minted.
import { newToken } from "../auth.js";
import { now, type App, type Installation, type Permissions, type Repo, type Token } from "../state.js";
import type { SimCore } from "./index.js";

export interface RegisterAppOptions {
  id?: number;
  slug: string;
  name?: string;
  owner?: string;
  publicKeyPem: string;
  webhookUrl?: string | null;
  webhookSecret?: string | null;
  permissions: Permissions;
  events: string[];
  /** Where GitHub sends the person after they install the App (the manifest's `setup_url`). */
  setupUrl?: string | null;
}

/** GitHub Actions' own App, which owns workflow check suites and the GITHUB_TOKEN. */
export const ACTIONS_APP_ID = 15368;
export const GITHUB_ACTIONS_BOT_ID = 41898282;

/** Creates GitHub Actions' App and its bot, which every simulator has. */
export function addActionsApp(core: SimCore): void {
  const ghActions = core.ensureUser("github-actions[bot]", "Bot");
  // GitHub's id of the Actions bot, as its commits' no-reply address shows.
  ghActions.id = GITHUB_ACTIONS_BOT_ID;
  const github = core.ensureUser("github", "Organization");
  const app: App = {
    id: ACTIONS_APP_ID,
    clientId: "Iv1.actions",
    slug: "github-actions",
    name: "GitHub Actions",
    owner: github,
    publicKeyPem: "",
    webhookUrl: null,
    webhookSecret: null,
    permissions: {
      actions: "write",
      checks: "write",
      contents: "write",
      metadata: "read",
      pull_requests: "write",
      issues: "write",
      statuses: "write",
    },
    events: [],
    bot: ghActions,
    createdAt: now(),
  };
  ghActions.appId = app.id;
  core.state.apps.set(app.id, app);
}

export function registerApp(core: SimCore, o: RegisterAppOptions): App {
  const id = o.id ?? core.state.id();
  const bot = core.ensureUser(`${o.slug}[bot]`, "Bot");
  bot.appId = id;
  const app: App = {
    id,
    clientId: `Iv1.${id.toString(16).padStart(16, "0")}`,
    slug: o.slug,
    name: o.name ?? o.slug,
    owner: core.ensureUser(o.owner ?? "forge-dev"),
    publicKeyPem: o.publicKeyPem,
    webhookUrl: o.webhookUrl ?? null,
    webhookSecret: o.webhookSecret ?? null,
    permissions: { metadata: "read", ...o.permissions },
    events: o.events,
    setupUrl: o.setupUrl ?? null,
    bot,
    createdAt: now(),
  };
  core.state.apps.set(id, app);
  if (app.webhookUrl) {
    const hookId = core.state.id();
    core.state.hooks.set(hookId, {
      id: hookId,
      targetType: "integration",
      targetId: app.id,
      url: app.webhookUrl,
      secret: app.webhookSecret,
      events: app.events,
    });
  }
  return app;
}

export function setAppWebhookUrl(core: SimCore, appId: number, url: string): void {
  for (const h of core.state.hooks.values()) if (h.targetType === "integration" && h.targetId === appId) h.url = url;
}

export function addRepoHook(core: SimCore, repo: Repo, url: string, secret: string | null, events: string[]): number {
  const id = core.state.id();
  core.state.hooks.set(id, { id, targetType: "repository", targetId: repo.id, url, secret, events });
  return id;
}

export function install(core: SimCore, appId: number, account: string, repositories: "all" | string[]): Installation {
  const app = core.state.apps.get(appId);
  if (!app) throw new Error(`no App ${appId}`);
  const acct = core.ensureUser(account);
  const ids =
    repositories === "all"
      ? "all"
      : repositories.map((n) => {
          const [o, r] = n.includes("/") ? n.split("/") : [account, n];
          const repo = core.state.repoByName(o!, r!);
          if (!repo) throw new Error(`no repository ${n}`);
          return repo.id;
        });
  const t = now();
  const inst: Installation = {
    id: core.state.id(),
    appId,
    account: acct,
    repositories: ids,
    permissions: { ...app.permissions },
    events: [...app.events],
    createdAt: t,
    updatedAt: t,
  };
  core.state.installations.set(inst.id, inst);
  const repos = [...core.state.repos.values()].filter((r) => r.owner.id === acct.id && (ids === "all" || ids.includes(r.id)));
  // installation.created goes to the App (docs: "installation" event).
  core.bus.emit(
    "installation",
    "created",
    {
      installation: core.model.installation(inst),
      repositories: repos.map((r) => ({
        id: r.id,
        node_id: core.model.minimalRepo(r).node_id as string,
        name: r.name,
        full_name: `${r.owner.login}/${r.name}`,
        private: r.private,
      })),
      requester: null,
      sender: core.model.user(acct),
    },
    { installation: inst },
  );
  core.bus.flush();
  return inst;
}

/** Uninstalls an App: `installation.deleted`, and its tokens stop working. */
export function uninstall(core: SimCore, installationId: number, by?: string): void {
  const inst = core.state.installations.get(installationId);
  if (!inst) throw new Error(`no installation ${installationId}`);
  const sender = by ? core.ensureUser(by) : inst.account;
  core.bus.emit(
    "installation",
    "deleted",
    {
      installation: core.model.installation(inst),
      repositories: installedRepos(core, inst),
      requester: null,
      sender: core.model.user(sender),
    },
    { installation: inst },
  );
  core.bus.flush();
  core.state.installations.delete(installationId);
  for (const t of core.state.tokens.values()) if (t.installationId === installationId) t.expiresAt = 0;
}

/**
 * Suspends or unsuspends an installation ("Suspending a GitHub App installation",
 * docs.github.com/apps/maintaining-github-apps/suspending-a-github-app-installation): the App gets
 * `installation.suspend` / `installation.unsuspend`; while suspended, its tokens answer 403 and
 * new ones are refused ("This installation has been suspended") and no other webhook reaches it.
 */
export function setSuspended(core: SimCore, installationId: number, suspended: boolean, by?: string): void {
  const inst = core.state.installations.get(installationId);
  if (!inst) throw new Error(`no installation ${installationId}`);
  if (!!inst.suspended === suspended) return;
  const sender = by ? core.ensureUser(by) : inst.account;
  // The suspend event is sent before the installation stops hearing; unsuspend once it hears again.
  if (!suspended) inst.suspended = undefined;
  else inst.suspended = { at: now(), by: sender };
  inst.updatedAt = now();
  core.bus.emit(
    "installation",
    suspended ? "suspend" : "unsuspend",
    {
      installation: core.model.installation(inst),
      repositories: installedRepos(core, inst),
      requester: null,
      sender: core.model.user(sender),
    },
    { installation: inst },
  );
  core.bus.flush();
}

/** Adds repositories to a "selected" installation: `installation_repositories.added`. */
export function addInstallationRepos(core: SimCore, installationId: number, fullNames: string[], by?: string): void {
  const inst = core.state.installations.get(installationId);
  if (!inst || inst.repositories === "all") throw new Error(`installation ${installationId} does not select repositories`);
  const added: Repo[] = [];
  for (const n of fullNames) {
    const [o, r] = n.split("/");
    const repo = core.state.repoByName(o ?? "", r ?? "");
    if (!repo) throw new Error(`no repository ${n}`);
    if (!inst.repositories.includes(repo.id)) {
      inst.repositories.push(repo.id);
      added.push(repo);
    }
  }
  const sender = by ? core.ensureUser(by) : inst.account;
  core.bus.emit(
    "installation_repositories",
    "added",
    {
      installation: core.model.installation(inst),
      repository_selection: "selected",
      repositories_added: added.map((r) => repoLite(core, r)),
      repositories_removed: [],
      requester: null,
      sender: core.model.user(sender),
    },
    { installation: inst },
  );
  core.bus.flush();
}

function repoLite(core: SimCore, r: Repo): Record<string, unknown> {
  return {
    id: r.id,
    node_id: core.model.minimalRepo(r).node_id as string,
    name: r.name,
    full_name: `${r.owner.login}/${r.name}`,
    private: r.private,
  };
}

function installedRepos(core: SimCore, inst: Installation): Array<Record<string, unknown>> {
  return [...core.state.repos.values()]
    .filter((r) => r.owner.id === inst.account.id && (inst.repositories === "all" || inst.repositories.includes(r.id)))
    .map((r) => repoLite(core, r));
}

export function mintInstallationToken(core: SimCore, inst: Installation, repoIds?: number[], permissions?: Permissions): Token {
  const app = core.state.apps.get(inst.appId)!;
  const token = newToken("ghs");
  const t: Token = {
    token,
    kind: "installation",
    actor: app.bot,
    installationId: inst.id,
    appId: app.id,
    repoIds,
    permissions: permissions ?? { ...inst.permissions },
    // eslint-disable-next-line no-restricted-properties -- credentials expire in real time: the clients holding them read the real clock
    expiresAt: Date.now() + 3600_000,
  };
  core.state.tokens.set(token, t);
  return t;
}
