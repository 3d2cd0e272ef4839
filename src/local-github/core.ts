// The simulator's core: state, repositories, Apps and installations, tokens, and the events that
// follow from changes (ref updates, pull requests). The HTTP layers (REST, git, control) call in here.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { newToken } from "./auth.js";
import { Faults } from "./faults.js";
import { Latency } from "./latency/profile.js";
import * as git from "./git/index.js";
import { Model } from "./model.js";
import { specValidator, type Violation } from "./openapi.js";
import {
  now,
  SimState,
  type App,
  type Installation,
  type Issue,
  type Permissions,
  type Repo,
  type Role,
  type Token,
  type User,
} from "./state.js";
import { WebhookBus } from "./webhooks.js";

export interface RefChange {
  ref: string;
  before: string | null;
  after: string | null;
}

export interface SeedRepoOptions {
  owner: string;
  name: string;
  defaultBranch?: string;
  private?: boolean;
  description?: string;
  /** files of the first commit (path → content) */
  files?: Record<string, string>;
  /** or a folder whose files make the first commit */
  fromDir?: string;
  collaborators?: Record<string, Role>;
  labels?: Array<{ name: string; color?: string; description?: string }>;
}

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

export interface ActContext {
  actor: User;
  token?: Token;
}

export const ZERO = "0".repeat(40);

/** GitHub Actions' own App, which owns workflow check suites and the GITHUB_TOKEN. */
export const ACTIONS_APP_ID = 15368;
export const GITHUB_ACTIONS_BOT_ID = 41898282;

export class SimCore {
  readonly state = new SimState();
  readonly validator = specValidator();
  readonly faults = new Faults();
  /** GitHub's response times, webhook delays and runner queue time (off unless a profile is set) */
  readonly latency = new Latency();
  readonly violations: Violation[] = [];
  /** `${operationId} ${status}` of every REST answer, for conformance coverage */
  readonly served = new Set<string>();
  readonly model: Model;
  readonly bus: WebhookBus;
  readonly root: string;
  baseUrl = "http://127.0.0.1";

  constructor(readonly opts: { strict?: boolean; webhookTimeoutMs?: number } = {}) {
    this.root = mkdtempSync(join(tmpdir(), "forge-sim-"));
    this.model = new Model(this.state, () => this.baseUrl);
    this.bus = new WebhookBus(
      this.state,
      this.validator,
      this.faults,
      (id, errors) => this.violation({ kind: "webhook", id, errors }),
      opts.webhookTimeoutMs,
      this.latency,
    );
    const ghActions = this.ensureUser("github-actions[bot]", "Bot");
    // GitHub's id of the Actions bot, as its commits' no-reply address shows.
    ghActions.id = GITHUB_ACTIONS_BOT_ID;
    const github = this.ensureUser("github", "Organization");
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
    this.state.apps.set(app.id, app);
  }

  violation(v: Violation): void {
    this.violations.push(v);
    if (this.opts.strict) console.error(`[forge-sim] ${v.kind} violation ${v.id}: ${v.errors}`);
  }

  closed = false;

  close(): void {
    this.closed = true;
    git.closeReaders(this.root);
    rmSync(this.root, { recursive: true, force: true });
  }

  // ---------- users, repositories, Apps ----------

  ensureUser(login: string, type?: User["type"]): User {
    let u = this.state.users.get(login);
    if (!u) {
      // GitHub Apps act as "<slug>[bot]" users of type Bot.
      u = { id: this.state.id(), login, type: type ?? (login.endsWith("[bot]") ? "Bot" : "User") };
      this.state.users.set(login, u);
    }
    return u;
  }

  userToken(login: string): string {
    const actor = this.ensureUser(login);
    const token = newToken("ghp");
    this.state.tokens.set(token, { token, kind: "user", actor, permissions: {}, expiresAt: Date.now() + 365 * 86400_000 });
    return token;
  }

  gitDir(owner: string, name: string): string {
    return join(this.root, "git", owner, `${name}.git`);
  }

  async createRepo(o: SeedRepoOptions): Promise<Repo> {
    if (this.state.repoByName(o.owner, o.name)) throw new Error(`repository ${o.owner}/${o.name} exists`);
    const owner = this.ensureUser(o.owner);
    const branch = o.defaultBranch ?? "main";
    const dir = this.gitDir(owner.login, o.name);
    mkdirSync(dirname(dir), { recursive: true });
    await git.initBare(dir, branch);
    const t = now();
    const repo: Repo = {
      id: this.state.id(),
      owner,
      name: o.name,
      private: o.private ?? false,
      defaultBranch: branch,
      gitDir: dir,
      collaborators: new Map(Object.entries(o.collaborators ?? {})),
      labels: new Map(),
      nextNumber: 1,
      createdAt: t,
      updatedAt: t,
      pushedAt: t,
      description: o.description ?? null,
    };
    for (const login of repo.collaborators.keys()) this.ensureUser(login);
    for (const l of o.labels ?? [])
      repo.labels.set(l.name, {
        id: this.state.id(),
        name: l.name,
        color: l.color ?? "ededed",
        description: l.description ?? null,
        default: false,
      });
    this.state.repos.set(repo.id, repo);
    let tree: string | undefined;
    if (o.fromDir) tree = await git.treeFromFolder(dir, o.fromDir);
    else if (o.files) {
      const changes: git.TreeChange[] = [];
      for (const [path, content] of Object.entries(o.files)) changes.push({ path, sha: await git.hashBlob(dir, Buffer.from(content)) });
      tree = await git.buildTree(dir, undefined, changes);
    }
    if (tree) {
      const id = { name: owner.login, email: this.email(owner), date: t };
      const sha = await git.commitTree(dir, tree, [], "Initial commit\n", id, id);
      await git.updateRef(dir, `refs/heads/${branch}`, sha);
    }
    return repo;
  }

  /**
   * A fork of `source` owned by `owner` (same name): its own bare repository holding the source's
   * default branch (what GitHub's fork button copies unless told otherwise). Pull requests from its
   * branches into `source` are "from a fork".
   */
  async fork(source: Repo, owner: string): Promise<Repo> {
    if (this.state.repoByName(owner, source.name)) throw new Error(`repository ${owner}/${source.name} exists`);
    const user = this.ensureUser(owner);
    const dir = this.gitDir(user.login, source.name);
    mkdirSync(dirname(dir), { recursive: true });
    await git.initBare(dir, source.defaultBranch);
    const head = `refs/heads/${source.defaultBranch}`;
    if (await git.resolveRef(source.gitDir, head)) await git.runGit(dir, ["fetch", "--quiet", source.gitDir, `+${head}:${head}`]);
    const t = now();
    const repo: Repo = {
      id: this.state.id(),
      owner: user,
      name: source.name,
      private: source.private,
      defaultBranch: source.defaultBranch,
      gitDir: dir,
      collaborators: new Map(),
      labels: new Map(),
      nextNumber: 1,
      createdAt: t,
      updatedAt: t,
      pushedAt: t,
      description: source.description,
      forkOf: source.id,
    };
    this.state.repos.set(repo.id, repo);
    return repo;
  }

  /**
   * A pull request's head commit as the base repository sees it. GitHub keeps every PR's head at
   * `refs/pull/<n>/head` of the base repository; the simulator needs it only for PRs from forks,
   * whose commits it fetches there so every read of the base repository finds them.
   */
  async fetchPullHead(base: Repo, issue: Issue): Promise<string | undefined> {
    const p = issue.pull!;
    const head = p.headRepoId !== undefined ? this.state.repos.get(p.headRepoId) : undefined;
    if (!head) return git.resolveRef(base.gitDir, `refs/heads/${p.headRef}`);
    const sha = await git.resolveRef(head.gitDir, `refs/heads/${p.headRef}`);
    if (!sha) return undefined;
    await git.runGit(base.gitDir, ["fetch", "--quiet", head.gitDir, `+refs/heads/${p.headRef}:refs/pull/${issue.number}/head`]);
    return sha;
  }

  /**
   * GitHub's no-reply address is `<id>+<login>@users.noreply.github.com`, bots' logins brackets
   * included (`41898282+github-actions[bot]@users.noreply.github.com`); the validator's `email`
   * format accepts that "[bot]" (openapi.ts).
   */
  email(u: User): string {
    return `${u.id}+${u.login}@users.noreply.github.com`;
  }

  registerApp(o: RegisterAppOptions): App {
    const id = o.id ?? this.state.id();
    const bot = this.ensureUser(`${o.slug}[bot]`, "Bot");
    bot.appId = id;
    const app: App = {
      id,
      clientId: `Iv1.${id.toString(16).padStart(16, "0")}`,
      slug: o.slug,
      name: o.name ?? o.slug,
      owner: this.ensureUser(o.owner ?? "forge-dev"),
      publicKeyPem: o.publicKeyPem,
      webhookUrl: o.webhookUrl ?? null,
      webhookSecret: o.webhookSecret ?? null,
      permissions: { metadata: "read", ...o.permissions },
      events: o.events,
      setupUrl: o.setupUrl ?? null,
      bot,
      createdAt: now(),
    };
    this.state.apps.set(id, app);
    if (app.webhookUrl) {
      const hookId = this.state.id();
      this.state.hooks.set(hookId, {
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

  setAppWebhookUrl(appId: number, url: string): void {
    for (const h of this.state.hooks.values()) if (h.targetType === "integration" && h.targetId === appId) h.url = url;
  }

  addRepoHook(repo: Repo, url: string, secret: string | null, events: string[]): number {
    const id = this.state.id();
    this.state.hooks.set(id, { id, targetType: "repository", targetId: repo.id, url, secret, events });
    return id;
  }

  install(appId: number, account: string, repositories: "all" | string[]): Installation {
    const app = this.state.apps.get(appId);
    if (!app) throw new Error(`no App ${appId}`);
    const acct = this.ensureUser(account);
    const ids =
      repositories === "all"
        ? "all"
        : repositories.map((n) => {
            const [o, r] = n.includes("/") ? n.split("/") : [account, n];
            const repo = this.state.repoByName(o!, r!);
            if (!repo) throw new Error(`no repository ${n}`);
            return repo.id;
          });
    const t = now();
    const inst: Installation = {
      id: this.state.id(),
      appId,
      account: acct,
      repositories: ids,
      permissions: { ...app.permissions },
      events: [...app.events],
      createdAt: t,
      updatedAt: t,
    };
    this.state.installations.set(inst.id, inst);
    const repos = [...this.state.repos.values()].filter((r) => r.owner.id === acct.id && (ids === "all" || ids.includes(r.id)));
    // installation.created goes to the App (docs: "installation" event).
    this.bus.emit(
      "installation",
      "created",
      {
        installation: this.model.installation(inst),
        repositories: repos.map((r) => ({
          id: r.id,
          node_id: this.model.minimalRepo(r).node_id as string,
          name: r.name,
          full_name: `${r.owner.login}/${r.name}`,
          private: r.private,
        })),
        requester: null,
        sender: this.model.user(acct),
      },
      { installation: inst },
    );
    this.bus.flush();
    return inst;
  }

  /** Uninstalls an App: `installation.deleted`, and its tokens stop working. */
  uninstall(installationId: number, by?: string): void {
    const inst = this.state.installations.get(installationId);
    if (!inst) throw new Error(`no installation ${installationId}`);
    const sender = by ? this.ensureUser(by) : inst.account;
    this.bus.emit(
      "installation",
      "deleted",
      {
        installation: this.model.installation(inst),
        repositories: this.installedRepos(inst),
        requester: null,
        sender: this.model.user(sender),
      },
      { installation: inst },
    );
    this.bus.flush();
    this.state.installations.delete(installationId);
    for (const t of this.state.tokens.values()) if (t.installationId === installationId) t.expiresAt = 0;
  }

  /** Adds repositories to a "selected" installation: `installation_repositories.added`. */
  addInstallationRepos(installationId: number, fullNames: string[], by?: string): void {
    const inst = this.state.installations.get(installationId);
    if (!inst || inst.repositories === "all") throw new Error(`installation ${installationId} does not select repositories`);
    const added: Repo[] = [];
    for (const n of fullNames) {
      const [o, r] = n.split("/");
      const repo = this.state.repoByName(o ?? "", r ?? "");
      if (!repo) throw new Error(`no repository ${n}`);
      if (!inst.repositories.includes(repo.id)) {
        inst.repositories.push(repo.id);
        added.push(repo);
      }
    }
    const sender = by ? this.ensureUser(by) : inst.account;
    this.bus.emit(
      "installation_repositories",
      "added",
      {
        installation: this.model.installation(inst),
        repository_selection: "selected",
        repositories_added: added.map((r) => this.repoLite(r)),
        repositories_removed: [],
        requester: null,
        sender: this.model.user(sender),
      },
      { installation: inst },
    );
    this.bus.flush();
  }

  private repoLite(r: Repo): Record<string, unknown> {
    return {
      id: r.id,
      node_id: this.model.minimalRepo(r).node_id as string,
      name: r.name,
      full_name: `${r.owner.login}/${r.name}`,
      private: r.private,
    };
  }

  private installedRepos(inst: Installation): Array<Record<string, unknown>> {
    return [...this.state.repos.values()]
      .filter((r) => r.owner.id === inst.account.id && (inst.repositories === "all" || inst.repositories.includes(r.id)))
      .map((r) => this.repoLite(r));
  }

  mintInstallationToken(inst: Installation, repoIds?: number[], permissions?: Permissions): Token {
    const app = this.state.apps.get(inst.appId)!;
    const token = newToken("ghs");
    const t: Token = {
      token,
      kind: "installation",
      actor: app.bot,
      installationId: inst.id,
      appId: app.id,
      repoIds,
      permissions: permissions ?? { ...inst.permissions },
      expiresAt: Date.now() + 3600_000,
    };
    this.state.tokens.set(token, t);
    return t;
  }

  /** The actor and App an authenticated call acts as. */
  actorOf(token: Token | undefined): User | undefined {
    return token?.actor;
  }

  // ---------- refs and the events they cause ----------

  /**
   * Emits what GitHub emits after refs change (by the API or a git push): `create`/`delete`
   * for new/removed branches and tags, `push` for every change, `pull_request.synchronize` for
   * open PRs whose head moved, and marks PRs merged when their head lands on their base by push.
   */
  async refsChanged(repo: Repo, changes: RefChange[], ctx: ActContext): Promise<void> {
    // One repository's ref changes are turned into events one at a time, in the order they were
    // made: two writes in flight on one branch must not interleave their pull request updates
    // (a `synchronize` with a stale `before`) nor emit the second push before the first.
    const prev = this.refEvents.get(repo.id) ?? Promise.resolve();
    const mine = prev.then(() => this.refsChangedNow(repo, changes, ctx));
    const tail = mine.catch(() => undefined);
    this.refEvents.set(repo.id, tail);
    void tail.then(() => {
      if (this.refEvents.get(repo.id) === tail) this.refEvents.delete(repo.id);
    });
    return mine;
  }

  private readonly refEvents = new Map<number, Promise<void>>();

  private async refsChangedNow(repo: Repo, changes: RefChange[], ctx: ActContext): Promise<void> {
    const causedByWorkflowRun = ctx.token?.workflowRunId;
    const sender = this.model.user(ctx.actor);
    repo.pushedAt = now();
    for (const ch of changes) {
      const isBranch = ch.ref.startsWith("refs/heads/");
      const isTag = ch.ref.startsWith("refs/tags/");
      if (!isBranch && !isTag) continue; // refs/forge/… and other namespaces emit nothing on GitHub
      const short = ch.ref.replace(/^refs\/(heads|tags)\//, "");
      const refType = isBranch ? "branch" : "tag";
      if (!ch.before && ch.after) {
        this.bus.emit(
          "create",
          null,
          {
            ref: short,
            ref_type: refType,
            master_branch: repo.defaultBranch,
            description: repo.description,
            pusher_type: "user",
            repository: this.model.repo(repo),
            sender,
          },
          { repo, causedByWorkflowRun },
        );
      }
      if (ch.before && !ch.after) {
        this.bus.emit(
          "delete",
          null,
          { ref: short, ref_type: refType, pusher_type: "user", repository: this.model.repo(repo), sender },
          { repo, causedByWorkflowRun },
        );
      }
      const commits = ch.after ? await git.pushCommits(repo.gitDir, ch.before ?? undefined, ch.after) : [];
      const forced = !!(ch.before && ch.after && !(await git.isAncestor(repo.gitDir, ch.before, ch.after)));
      const base = `${this.baseUrl}/${repo.owner.login}/${repo.name}`;
      const hookCommits = await Promise.all(
        commits.map(async (c) => {
          const paths = await git.changedPaths(repo.gitDir, c.parents[0], c.sha);
          return {
            id: c.sha,
            tree_id: c.tree,
            distinct: true,
            message: c.message.replace(/\n$/, ""),
            timestamp: c.committer.date,
            url: `${base}/commit/${c.sha}`,
            author: { name: c.author.name, email: c.author.email, ...this.username(c.author.email) },
            committer: { name: c.committer.name, email: c.committer.email, ...this.username(c.committer.email) },
            ...paths,
          };
        }),
      );
      this.bus.emit(
        "push",
        null,
        {
          ref: ch.ref,
          before: ch.before ?? ZERO,
          after: ch.after ?? ZERO,
          created: !ch.before,
          deleted: !ch.after,
          forced,
          base_ref: null,
          compare:
            ch.before && ch.after
              ? `${base}/compare/${ch.before.slice(0, 12)}...${ch.after.slice(0, 12)}`
              : `${base}/commit/${(ch.after ?? ch.before)!.slice(0, 12)}`,
          commits: hookCommits,
          head_commit: hookCommits.at(-1) ?? null,
          repository: this.model.repo(repo, { timestamps: "unix" }),
          pusher: { name: ctx.actor.login, email: this.email(ctx.actor) },
          sender,
        },
        { repo, causedByWorkflowRun },
      );

      if (!isBranch) continue;
      // Pull requests whose head moved → synchronize; whose base moved → base sha and merged-by-push.
      for (const issue of this.state.issuesOf(repo.id)) {
        const p = issue.pull;
        if (!p || issue.state !== "open") continue;
        if (p.headRepoId === undefined && p.headRef === short && ch.after && p.headSha !== ch.after) {
          const before = p.headSha;
          p.headSha = ch.after;
          issue.updatedAt = now();
          this.bus.emit(
            "pull_request",
            "synchronize",
            {
              number: issue.number,
              before,
              after: ch.after,
              pull_request: await this.pullPayload(repo, issue),
              repository: this.model.repo(repo),
              sender,
            },
            { repo, causedByWorkflowRun },
          );
        }
        if (p.baseRef === short && ch.after) {
          p.baseSha = ch.after;
          if (await git.isAncestor(repo.gitDir, p.headSha, ch.after)) {
            // A push that brings the head into the base merges the PR (GitHub marks it merged).
            await this.markMerged(repo, issue, ctx, p.headSha);
          }
        }
      }
      if (ch.after) await this.requestCheckSuites(repo, short, ch.before, ch.after, ctx);
      // A push to a fork's branch moves the head of the PRs it has open in other repositories.
      for (const issue of this.state.issues.values()) {
        const p = issue.pull;
        if (!p || issue.state !== "open" || p.headRepoId !== repo.id || p.headRef !== short || !ch.after || p.headSha === ch.after)
          continue;
        const base = this.state.repos.get(issue.repoId);
        if (!base) continue;
        const before = p.headSha;
        await this.fetchPullHead(base, issue);
        p.headSha = ch.after;
        issue.updatedAt = now();
        this.bus.emit(
          "pull_request",
          "synchronize",
          {
            number: issue.number,
            before,
            after: ch.after,
            pull_request: await this.pullPayload(base, issue),
            repository: this.model.repo(base),
            sender,
          },
          { repo: base, causedByWorkflowRun },
        );
      }
    }
  }

  private username(email: string): { username?: string } {
    const m = /^(\d+)\+[^@]+@users\.noreply\./.exec(email);
    const u = m ? this.state.userById(Number(m[1])) : undefined;
    return u ? { username: u.login } : {};
  }

  /** On a push GitHub creates a check suite per App that has checks:write and sends it `check_suite.requested`. */
  private async requestCheckSuites(repo: Repo, branch: string, before: string | null, after: string, ctx: ActContext): Promise<void> {
    for (const inst of this.state.installationsFor(repo)) {
      if (inst.permissions.checks !== "write" || !inst.events.includes("check_suite")) continue;
      const suite = this.ensureSuite(repo, inst.appId, after, branch, before);
      this.bus.emit(
        "check_suite",
        "requested",
        {
          check_suite: { ...this.model.suite(repo, suite, this.prsFor(repo, after)), head_commit: await this.headCommit(repo, after) },
          repository: this.model.repo(repo),
          sender: this.model.user(ctx.actor),
        },
        { repo, onlyAppId: inst.appId, causedByWorkflowRun: ctx.token?.workflowRunId },
      );
    }
  }

  async headCommit(repo: Repo, sha: string): Promise<Record<string, unknown>> {
    const c = await git.readCommit(repo.gitDir, sha);
    return {
      id: c.sha,
      tree_id: c.tree,
      message: c.message.replace(/\n$/, ""),
      timestamp: c.committer.date,
      author: { name: c.author.name, email: c.author.email },
      committer: { name: c.committer.name, email: c.committer.email },
    };
  }

  ensureSuite(repo: Repo, appId: number, headSha: string, headBranch: string | null, before: string | null = null) {
    for (const s of this.state.suites.values()) if (s.repoId === repo.id && s.appId === appId && s.headSha === headSha) return s;
    const t = now();
    const s = {
      id: this.state.id(),
      repoId: repo.id,
      appId,
      headSha,
      headBranch,
      before,
      after: headSha,
      status: "queued" as const,
      conclusion: null,
      createdAt: t,
      updatedAt: t,
    };
    this.state.suites.set(s.id, s);
    return s;
  }

  /** A check suite of its own (GitHub gives every workflow run one). */
  newSuite(repo: Repo, appId: number, headSha: string, headBranch: string | null) {
    const t = now();
    const s = {
      id: this.state.id(),
      repoId: repo.id,
      appId,
      headSha,
      headBranch,
      before: null,
      after: headSha,
      status: "queued" as const,
      conclusion: null,
      createdAt: t,
      updatedAt: t,
    };
    this.state.suites.set(s.id, s);
    return s;
  }

  /** pull-request-minimal entries for open PRs whose head is `sha`. */
  prsFor(repo: Repo, sha: string): Array<Record<string, unknown>> {
    const out: Array<Record<string, unknown>> = [];
    for (const i of this.state.issuesOf(repo.id)) {
      // GitHub lists only pull requests whose head is in this repository here.
      if (!i.pull || i.state !== "open" || i.pull.headSha !== sha || i.pull.headRepoId !== undefined) continue;
      const r = { id: repo.id, url: `${this.model.api}/repos/${repo.owner.login}/${repo.name}`, name: repo.name };
      out.push({
        id: i.id,
        number: i.number,
        url: `${this.model.api}/repos/${repo.owner.login}/${repo.name}/pulls/${i.number}`,
        head: { ref: i.pull.headRef, sha: i.pull.headSha, repo: r },
        base: { ref: i.pull.baseRef, sha: i.pull.baseSha, repo: r },
      });
    }
    return out;
  }

  /** Whether a PR merges cleanly into its base (GitHub computes this in the background). */
  async mergeable(repo: Repo, issue: Issue): Promise<boolean | null> {
    const p = issue.pull!;
    const base = await git.resolveRef(repo.gitDir, `refs/heads/${p.baseRef}`);
    const head = p.headRepoId !== undefined ? p.headSha : await git.resolveRef(repo.gitDir, `refs/heads/${p.headRef}`);
    if (!base || !head) return false;
    return (await git.mergeTrees(repo.gitDir, base, head)) !== undefined;
  }

  async pullPayload(repo: Repo, issue: Issue): Promise<Record<string, unknown>> {
    const body = this.model.pull(repo, issue, { full: true, mergeable: issue.state === "open" ? await this.mergeable(repo, issue) : null });
    await this.fillPullCounts(repo, issue, body);
    return body;
  }

  async fillPullCounts(repo: Repo, issue: Issue, body: Record<string, unknown>): Promise<void> {
    const p = issue.pull!;
    const base = p.merged ? undefined : await git.resolveRef(repo.gitDir, `refs/heads/${p.baseRef}`);
    const mb = base ? await git.mergeBase(repo.gitDir, base, p.headSha) : undefined;
    if (!mb) return;
    const files = await git.diffFiles(repo.gitDir, mb, p.headSha, false);
    body.commits = await git.countCommits(repo.gitDir, mb, p.headSha);
    body.additions = files.reduce((n, f) => n + f.additions, 0);
    body.deletions = files.reduce((n, f) => n + f.deletions, 0);
    body.changed_files = files.length;
    (body.base as Record<string, unknown>).sha = base;
  }

  async markMerged(repo: Repo, issue: Issue, ctx: ActContext, mergeSha: string): Promise<void> {
    const p = issue.pull!;
    const t = now();
    p.merged = true;
    p.mergedAt = t;
    p.mergedBy = ctx.actor;
    p.mergeCommitSha = mergeSha;
    issue.state = "closed";
    issue.closedAt = t;
    issue.closedBy = ctx.actor;
    issue.updatedAt = t;
    this.bus.emit(
      "pull_request",
      "closed",
      {
        number: issue.number,
        pull_request: await this.pullPayload(repo, issue),
        repository: this.model.repo(repo),
        sender: this.model.user(ctx.actor),
      },
      { repo, causedByWorkflowRun: ctx.token?.workflowRunId },
    );
  }

  /** Writes a file in the temp root (used for logs and seeds). */
  writeTemp(rel: string, content: string | Buffer): string {
    const p = join(this.root, rel);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, content);
    return p;
  }
}
