// The control API: what a test (or `forge demo`) does to the local GitHub that is not part of
// GitHub's API — seed repositories and users, register and install Apps, act as a person, inspect
// and redeliver webhook deliveries, inject faults. Available in-process (`sim.control.*`) and over
// HTTP under /_sim/ (documented in ./README.md).
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RegisterAppOptions, SeedRepoOptions, SimCore } from "./domain/index.js";
import { createCiApp, type CiApp, type CiAppOptions } from "./ci-app.js";
import type { FaultConfig } from "./faults.js";
import type { RateLimitConfig } from "./rate-limits.js";
import { Model } from "./resources/index.js";
import { storeSecret } from "./secrets.js";
import type { Delivery, Repo, Role } from "./state.js";
import { now } from "./state.js";
import type { Workflows } from "./workflows/index.js";

export interface ApiAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

export class Control {
  baseUrl = "";

  constructor(
    readonly core: SimCore,
    private readonly workflows: Workflows,
  ) {}

  private repo(fullName: string): Repo {
    const [o, r] = fullName.split("/");
    const repo = this.core.state.repoByName(o ?? "", r ?? "");
    if (!repo) throw new Error(`no repository ${fullName}`);
    return repo;
  }

  // ---- seeding

  createUser(login: string, type: "User" | "Organization" = "User"): { id: number; login: string } {
    const u = this.core.ensureUser(login, type);
    return { id: u.id, login: u.login };
  }

  async createRepo(o: SeedRepoOptions): Promise<{ id: number; full_name: string; clone_url: string; default_branch: string }> {
    const r = await this.core.createRepo(o);
    return {
      id: r.id,
      full_name: `${r.owner.login}/${r.name}`,
      clone_url: `${this.baseUrl}/${r.owner.login}/${r.name}.git`,
      default_branch: r.defaultBranch,
    };
  }

  /** A fork of `fullName` owned by `owner` (GitHub's "Fork" button): its branches can head pull requests into the original. */
  async fork(fullName: string, owner: string): Promise<{ id: number; full_name: string; clone_url: string; default_branch: string }> {
    const r = await this.core.fork(this.repo(fullName), owner);
    return {
      id: r.id,
      full_name: `${r.owner.login}/${r.name}`,
      clone_url: `${this.baseUrl}/${r.owner.login}/${r.name}.git`,
      default_branch: r.defaultBranch,
    };
  }

  setCollaborator(fullName: string, login: string, role: Role): void {
    this.core.ensureUser(login);
    this.repo(fullName).collaborators.set(login, role);
  }

  registerApp(o: RegisterAppOptions): { id: number; slug: string; client_id: string } {
    const a = this.core.registerApp(o);
    return { id: a.id, slug: a.slug, client_id: a.clientId };
  }

  setAppWebhookUrl(appId: number, url: string): void {
    this.core.setAppWebhookUrl(appId, url);
  }

  install(appId: number, account: string, repositories: "all" | string[]): { id: number } {
    return { id: this.core.install(appId, account, repositories).id };
  }

  /** Suspends an installation (installation.suspend); its tokens answer 403 until unsuspended (installation.unsuspend). */
  suspend(installationId: number, by?: string): void {
    this.core.suspendInstallation(installationId, true, by);
  }

  unsuspend(installationId: number, by?: string): void {
    this.core.suspendInstallation(installationId, false, by);
  }

  uninstall(installationId: number, by?: string): void {
    this.core.uninstall(installationId, by);
  }

  addInstallationRepositories(installationId: number, fullNames: string[], by?: string): void {
    this.core.addInstallationRepos(installationId, fullNames, by);
  }

  /**
   * An Actions secret of the repository, by name and plain value (what the REST API stores once it
   * has opened the sealed box): listed by `GET …/actions/secrets`, passed to its workflow runs.
   */
  setSecret(fullName: string, name: string, value: string): void {
    storeSecret(this.repo(fullName), name, value);
  }

  addRepoHook(fullName: string, url: string, secret: string | null, events: string[] = ["*"]): { id: number } {
    return { id: this.core.addRepoHook(this.repo(fullName), url, secret, events) };
  }

  /** A personal access token acting as `login` (permissions follow the user's role). */
  userToken(login: string): string {
    return this.core.userToken(login);
  }

  /** An installation token without the JWT dance (tests that are not about App auth). */
  installationToken(installationId: number): string {
    const inst = this.core.state.installations.get(installationId);
    if (!inst) throw new Error(`no installation ${installationId}`);
    return this.core.mintInstallationToken(inst).token;
  }

  // ---- acting as a person (through the REST API with the person's token, so every rule applies)

  async api(login: string, method: string, path: string, body?: unknown): Promise<ApiAnswer> {
    const token = this.userTokens.get(login) ?? this.core.userToken(login);
    this.userTokens.set(login, token);
    return this.apiWith(token, method, path, body);
  }

  /** A REST call with `token` (a person's, an installation's), answered once the webhooks it caused were delivered. */
  async apiWith(token: string, method: string, path: string, body?: unknown): Promise<ApiAnswer> {
    const res = await fetch(`${this.baseUrl}/api/v3${path}`, {
      method,
      headers: {
        authorization: `token ${token}`,
        accept: "application/vnd.github+json",
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      redirect: "manual",
    });
    const text = await res.text();
    // A person's action returns once the webhooks it caused were delivered (and, for Probot apps,
    // handled): tests can look at the outcome right away. GitHub itself promises no such thing.
    await this.core.bus.idle();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON */
    }
    return { status: res.status, headers: Object.fromEntries(res.headers.entries()), body: parsed };
  }
  private userTokens = new Map<string, string>();

  comment(login: string, fullName: string, number: number, body: string): Promise<ApiAnswer> {
    return this.api(login, "POST", `/repos/${fullName}/issues/${number}/comments`, { body });
  }
  editComment(login: string, fullName: string, commentId: number, body: string): Promise<ApiAnswer> {
    return this.api(login, "PATCH", `/repos/${fullName}/issues/comments/${commentId}`, { body });
  }
  review(login: string, fullName: string, number: number, event: "APPROVE" | "REQUEST_CHANGES" | "COMMENT", body = ""): Promise<ApiAnswer> {
    return this.api(login, "POST", `/repos/${fullName}/pulls/${number}/reviews`, { event, body });
  }
  merge(
    login: string,
    fullName: string,
    number: number,
    opts: { merge_method?: "merge" | "squash" | "rebase"; sha?: string } = {},
  ): Promise<ApiAnswer> {
    return this.api(login, "PUT", `/repos/${fullName}/pulls/${number}/merge`, opts);
  }
  close(login: string, fullName: string, number: number): Promise<ApiAnswer> {
    return this.api(login, "PATCH", `/repos/${fullName}/issues/${number}`, { state: "closed" });
  }
  reopen(login: string, fullName: string, number: number): Promise<ApiAnswer> {
    return this.api(login, "PATCH", `/repos/${fullName}/issues/${number}`, { state: "open" });
  }
  edit(login: string, fullName: string, number: number, fields: { title?: string; body?: string }): Promise<ApiAnswer> {
    return this.api(login, "PATCH", `/repos/${fullName}/issues/${number}`, fields);
  }
  openIssue(login: string, fullName: string, title: string, body = "", labels: string[] = []): Promise<ApiAnswer> {
    return this.api(login, "POST", `/repos/${fullName}/issues`, { title, body, labels });
  }

  /** "Ready for review" exists only in the web UI and GraphQL; the control API does it for a person. */
  async readyForReview(login: string, fullName: string, number: number): Promise<void> {
    const repo = this.repo(fullName);
    const issue = this.core.state.issue(repo.id, number);
    if (!issue?.pull) throw new Error(`no pull request #${number}`);
    if (!issue.pull.draft) return;
    issue.pull.draft = false;
    issue.updatedAt = now();
    const actor = this.core.ensureUser(login);
    this.core.bus.emit(
      "pull_request",
      "ready_for_review",
      {
        number,
        pull_request: await this.core.pullPayload(repo, issue),
        repository: this.core.model.repo(repo),
        sender: this.core.model.user(actor),
      },
      { repo },
    );
    await this.core.bus.idle();
  }

  /** A person clicks a check run's action button: `check_run.requested_action` goes to the App that created it. */
  async requestAction(login: string, fullName: string, checkRunId: number, identifier: string): Promise<void> {
    const repo = this.repo(fullName);
    const run = this.core.state.checkRuns.get(checkRunId);
    if (!run) throw new Error(`no check run ${checkRunId}`);
    if (!run.actions.some((a) => a.identifier === identifier)) throw new Error(`check run ${checkRunId} offers no action ${identifier}`);
    const actor = this.core.ensureUser(login);
    this.core.bus.emit(
      "check_run",
      "requested_action",
      {
        check_run: this.core.model.checkRunForHook(repo, run, this.core.prsFor(repo, run.headSha)),
        requested_action: { identifier },
        repository: this.core.model.repo(repo),
        sender: this.core.model.user(actor),
      },
      { repo, onlyAppId: run.appId },
    );
    await this.core.bus.idle();
  }

  /**
   * Another App on the repositories — a CI service's, as CircleCI's or Buildkite's GitHub App is
   * (`ci-app.ts`): registered with Checks and Commit statuses write, installed on `account`'s
   * `repositories`, posting check runs and statuses through the REST API with its own token.
   */
  ciApp(o: CiAppOptions): CiApp {
    return createCiApp(this, o);
  }

  // ---- deliveries and faults

  deliveries(filter: { event?: string; action?: string; status?: Delivery["status"] } = {}): Delivery[] {
    return this.core.state.deliveries.filter(
      (d) =>
        (!filter.event || d.event === filter.event) &&
        (!filter.action || d.action === filter.action) &&
        (!filter.status || d.status === filter.status),
    );
  }

  redeliver(id: number): Delivery {
    return this.core.bus.redeliver(id);
  }

  faults(partial: Partial<FaultConfig>): FaultConfig {
    return this.core.faults.set(partial);
  }

  /** GitHub's rate limits (../rate-limits.ts): `{ enabled: true }` enforces GitHub's numbers; tighter ones for tests. Counts start again. */
  rateLimits(partial: Partial<RateLimitConfig>): RateLimitConfig {
    return this.core.rateLimits.set(partial);
  }

  resetFaults(): FaultConfig {
    this.core.faults.reset();
    return this.core.faults.config;
  }

  /** Makes the App's webhook endpoint unreachable for `ms` milliseconds. */
  appUnreachableFor(ms: number): void {
    this.core.faults.set({ appUnreachableUntil: this.core.clock.now() + ms });
  }

  logsOfRun(id: number): Buffer | undefined {
    const run = this.core.state.runs.get(id);
    return run ? this.workflows.logsZip(run) : undefined;
  }

  logsOfJob(id: number): string | undefined {
    for (const r of this.core.state.runs.values()) for (const j of r.jobs) if (j.id === id) return j.log;
    return undefined;
  }
}

type Send = (res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>) => void;

/** The /_sim/ HTTP endpoints, one per Control method. */
export async function handleControl(
  control: Control,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  readBody: (r: IncomingMessage) => Promise<Buffer>,
  send: Send,
): Promise<void> {
  const method = req.method ?? "GET";
  const path = url.pathname.replace(/^\/_sim/, "") || "/";
  const raw = await readBody(req);
  let body: Record<string, unknown> = {};
  try {
    body = raw.length ? (JSON.parse(raw.toString("utf8")) as Record<string, unknown>) : {};
  } catch {
    return send(res, 400, { message: "Problems parsing JSON" });
  }
  const s = (k: string) => String(body[k] ?? "");
  let m: RegExpExecArray | null;
  try {
    if (method === "GET" && path === "/") return send(res, 200, { endpoints: CONTROL_ENDPOINTS });
    if (method === "POST" && path === "/users")
      return send(res, 201, control.createUser(s("login"), body.type === "Organization" ? "Organization" : "User"));
    if (method === "POST" && (m = /^\/users\/([^/]+)\/tokens$/.exec(path)))
      return send(res, 201, { token: control.userToken(decodeURIComponent(m[1]!)) });
    if (method === "POST" && path === "/repos") return send(res, 201, await control.createRepo(body as unknown as SeedRepoOptions));
    if (method === "POST" && (m = /^\/repos\/([^/]+\/[^/]+)\/forks$/.exec(path)))
      return send(res, 201, await control.fork(m[1]!, s("owner")));
    if (method === "PUT" && (m = /^\/repos\/([^/]+\/[^/]+)\/collaborators\/([^/]+)$/.exec(path))) {
      control.setCollaborator(m[1]!, decodeURIComponent(m[2]!), (s("permission") || "write") as Role);
      return send(res, 204, undefined);
    }
    if (method === "PUT" && (m = /^\/repos\/([^/]+\/[^/]+)\/actions\/secrets\/([^/]+)$/.exec(path))) {
      control.setSecret(m[1]!, decodeURIComponent(m[2]!), s("value"));
      return send(res, 204, undefined);
    }
    if (method === "POST" && (m = /^\/repos\/([^/]+\/[^/]+)\/hooks$/.exec(path)))
      return send(
        res,
        201,
        control.addRepoHook(m[1]!, s("url"), (body.secret as string | undefined) ?? null, (body.events as string[] | undefined) ?? ["*"]),
      );
    if (method === "POST" && (m = /^\/repos\/([^/]+\/[^/]+)\/pulls\/(\d+)\/ready_for_review$/.exec(path))) {
      await control.readyForReview(s("as"), m[1]!, Number(m[2]));
      return send(res, 204, undefined);
    }
    if (method === "POST" && (m = /^\/repos\/([^/]+\/[^/]+)\/check-runs\/(\d+)\/requested_action$/.exec(path))) {
      await control.requestAction(s("as"), m[1]!, Number(m[2]), s("identifier"));
      return send(res, 204, undefined);
    }
    if (method === "POST" && path === "/apps") return send(res, 201, control.registerApp(body as unknown as RegisterAppOptions));
    if (method === "PATCH" && (m = /^\/apps\/(\d+)$/.exec(path))) {
      control.setAppWebhookUrl(Number(m[1]), s("webhook_url"));
      return send(res, 204, undefined);
    }
    if (method === "POST" && (m = /^\/apps\/(\d+)\/installations$/.exec(path)))
      return send(res, 201, control.install(Number(m[1]), s("account"), (body.repositories as string[] | "all" | undefined) ?? "all"));
    if ((method === "PUT" || method === "DELETE") && (m = /^\/installations\/(\d+)\/suspended$/.exec(path))) {
      if (method === "PUT") control.suspend(Number(m[1]), (body.as as string | undefined) ?? undefined);
      else control.unsuspend(Number(m[1]), (body.as as string | undefined) ?? undefined);
      return send(res, 204, undefined);
    }
    if (method === "DELETE" && (m = /^\/installations\/(\d+)$/.exec(path))) {
      control.uninstall(Number(m[1]), (body.as as string | undefined) ?? undefined);
      return send(res, 204, undefined);
    }
    if (method === "POST" && (m = /^\/installations\/(\d+)\/repositories$/.exec(path))) {
      control.addInstallationRepositories(
        Number(m[1]),
        (body.repositories as string[] | undefined) ?? [],
        (body.as as string | undefined) ?? undefined,
      );
      return send(res, 204, undefined);
    }
    if (method === "POST" && path === "/ci-apps") {
      const ci = control.ciApp({
        account: s("account"),
        ...(body.slug ? { slug: s("slug") } : {}),
        ...(body.repositories ? { repositories: body.repositories as string[] | "all" } : {}),
        ...(body.webhookUrl ? { webhookUrl: s("webhookUrl"), webhookSecret: (body.webhookSecret as string | undefined) ?? null } : {}),
      });
      return send(res, 201, { id: ci.id, slug: ci.slug, installation_id: ci.installationId, token: ci.token() });
    }
    if (method === "POST" && (m = /^\/installations\/(\d+)\/token$/.exec(path)))
      return send(res, 201, { token: control.installationToken(Number(m[1])) });
    if (method === "POST" && path === "/act") {
      const a = await control.api(s("as"), s("method") || "GET", s("path"), body.body);
      return send(res, 200, a);
    }
    if (method === "GET" && path === "/deliveries") {
      const list = control.deliveries({
        event: url.searchParams.get("event") ?? undefined,
        action: url.searchParams.get("action") ?? undefined,
        status: (url.searchParams.get("status") as Delivery["status"] | null) ?? undefined,
      });
      return send(
        res,
        200,
        list.map((d) => ({
          id: d.id,
          guid: d.guid,
          event: d.event,
          action: d.action,
          status: d.status,
          status_code: d.statusCode,
          error: d.error,
          redelivery: d.redelivery,
          delivered_at: d.deliveredAt,
          installation_id: d.installationId,
          repository_id: d.repositoryId,
          payload: d.payload,
        })),
      );
    }
    if (method === "POST" && (m = /^\/deliveries\/(\d+)\/redeliver$/.exec(path))) {
      const d = control.redeliver(Number(m[1]));
      return send(res, 202, { id: d.id, guid: d.guid });
    }
    if (method === "GET" && path === "/faults") return send(res, 200, control.core.faults.config);
    if (method === "PUT" && path === "/faults") return send(res, 200, control.faults(body as Partial<FaultConfig>));
    if (method === "DELETE" && path === "/faults") return send(res, 200, control.resetFaults());
    if (method === "GET" && path === "/rate-limits") return send(res, 200, control.core.rateLimits.config);
    if (method === "PUT" && path === "/rate-limits") return send(res, 200, control.rateLimits(body as Partial<RateLimitConfig>));
    if (method === "DELETE" && path === "/rate-limits") return send(res, 200, control.core.rateLimits.reset());
    if (method === "GET" && path === "/violations") return send(res, 200, control.core.violations);
    if (method === "GET" && (m = /^\/logs\/runs\/(\d+)\.zip$/.exec(path))) {
      const zip = control.logsOfRun(Number(m[1]));
      return zip ? send(res, 200, zip, { "content-type": "application/zip" }) : send(res, 404, Model.error("Not Found", 404));
    }
    if (method === "GET" && (m = /^\/logs\/jobs\/(\d+)\.txt$/.exec(path))) {
      const log = control.logsOfJob(Number(m[1]));
      return log !== undefined
        ? send(res, 200, log, { "content-type": "text/plain; charset=utf-8" })
        : send(res, 404, Model.error("Not Found", 404));
    }
    return send(res, 404, { message: `no control endpoint ${method} ${url.pathname}` });
  } catch (e) {
    return send(res, 422, { message: (e as Error).message });
  }
}

export const CONTROL_ENDPOINTS = [
  "GET    /_sim/                                   this list",
  "POST   /_sim/users {login, type?}               create a user or organization",
  "POST   /_sim/users/{login}/tokens               personal access token for a user",
  "POST   /_sim/repos {owner, name, defaultBranch?, private?, files?|fromDir?, collaborators?, labels?}",
  "POST   /_sim/repos/{o}/{r}/forks {owner}            a fork owned by owner",
  "PUT    /_sim/repos/{o}/{r}/collaborators/{login} {permission}",
  "PUT    /_sim/repos/{o}/{r}/actions/secrets/{name} {value}   Actions secret (plain value)",
  "POST   /_sim/repos/{o}/{r}/hooks {url, secret?, events?}   repository webhook",
  "POST   /_sim/repos/{o}/{r}/pulls/{n}/ready_for_review {as}",
  "POST   /_sim/repos/{o}/{r}/check-runs/{id}/requested_action {as, identifier}",
  "POST   /_sim/apps {slug, publicKeyPem, webhookUrl, webhookSecret, permissions, events, id?}",
  "PATCH  /_sim/apps/{id} {webhook_url}",
  "POST   /_sim/apps/{id}/installations {account, repositories: 'all' | ['o/r']}",
  "POST   /_sim/ci-apps {account, slug?, repositories?, webhookUrl?, webhookSecret?}   another App (checks, statuses: write), installed; → {id, slug, installation_id, token}",
  "POST   /_sim/installations/{id}/token               installation token without a JWT",
  "POST   /_sim/installations/{id}/repositories {repositories: ['o/r'], as?}   installation_repositories.added",
  "DELETE /_sim/installations/{id}                     uninstall (installation.deleted)",
  "PUT|DELETE /_sim/installations/{id}/suspended {as?}   suspend (installation.suspend) / unsuspend",
  "POST   /_sim/act {as, method, path, body?}          REST call as a person",
  "GET    /_sim/deliveries?event=&action=&status=",
  "POST   /_sim/deliveries/{id}/redeliver",
  "GET|PUT|DELETE /_sim/faults",
  "GET|PUT|DELETE /_sim/rate-limits {enabled, primary, primaryWindowMs, creatingPerMinute, creatingPerHour, status}",
  "GET    /_sim/violations",
  "GET    /_sim/logs/runs/{id}.zip, /_sim/logs/jobs/{id}.txt",
];
