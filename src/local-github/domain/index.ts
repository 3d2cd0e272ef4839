// The simulator's core: state, repositories, Apps and installations, tokens, and the events that
// follow from changes (ref updates, pull requests). The HTTP layers (REST, git, control) call in here.
//
// The folder, by subject:
//   index.ts        `SimCore`: state, validator, faults, latency, model, webhook bus, users; the rest by name
//   repos.ts        repositories created and forked, pull request heads fetched from forks
//   apps.ts         GitHub Actions' App, Apps registered, installations, installation tokens
//   push-events.ts  what ref changes cause: create, delete, push, synchronize, merged by push, suites requested
//   pulls.ts        check suites, pull requests of a commit, pull request payloads and counts, merges
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { realClock, type Clock } from "../../core/clock.js";
import { newToken } from "../auth.js";
import { Faults } from "../faults.js";
import { Mergeability } from "../mergeability.js";
import { RateLimits } from "../rate-limits.js";
import { CommitSigner } from "../signing.js";
import { Latency } from "../latency/profile.js";
import * as git from "../git/index.js";
import { Model } from "../resources/index.js";
import { specValidator, type Violation } from "../openapi.js";
import { SimState, type App, type Installation, type Issue, type Permissions, type Repo, type Token, type User } from "../state.js";
import { WebhookBus } from "../webhooks.js";
import * as apps from "./apps.js";
import * as pulls from "./pulls.js";
import * as pushEvents from "./push-events.js";
import * as repos from "./repos.js";
import type { RegisterAppOptions } from "./apps.js";
import type { RefChange } from "./push-events.js";
import type { SeedRepoOptions } from "./repos.js";

export { ACTIONS_APP_ID, GITHUB_ACTIONS_BOT_ID, type RegisterAppOptions } from "./apps.js";
export { ZERO, type RefChange } from "./push-events.js";
export { type SeedRepoOptions } from "./repos.js";

export interface ActContext {
  actor: User;
  token?: Token;
}

export class SimCore {
  readonly state = new SimState();
  readonly validator = specValidator();
  readonly faults = new Faults();
  /** What the local GitHub's delays and timers run on (src/core/clock.ts): real time unless a test gives its own. */
  readonly clock: Clock;
  /** GitHub's background job computing whether a pull request can be merged (../mergeability.ts). */
  readonly mergeability: Mergeability;
  /** GitHub's rate limits per installation (../rate-limits.ts): counted always, enforced when set. */
  readonly rateLimits: RateLimits;
  /** GitHub's response times, webhook delays and runner queue time (off unless a profile is set) */
  readonly latency: Latency;
  readonly violations: Violation[] = [];
  /** GitHub's signature on the commits it creates (../signing.ts) */
  readonly signer = new CommitSigner();
  /** `signer.sign` as a commit writer takes it */
  readonly sign = (payload: string): string => this.signer.sign(payload);
  /** `${operationId} ${status}` of every REST answer, for conformance coverage */
  readonly served = new Set<string>();
  readonly model: Model;
  readonly bus: WebhookBus;
  readonly root: string;
  baseUrl = "http://127.0.0.1";

  constructor(readonly opts: { strict?: boolean; webhookTimeoutMs?: number; clock?: Clock; mergeabilityMs?: number } = {}) {
    this.clock = opts.clock ?? realClock;
    this.latency = new Latency(undefined, this.clock);
    this.rateLimits = new RateLimits(this.clock);
    this.mergeability = new Mergeability(this.clock, opts.mergeabilityMs);
    this.root = mkdtempSync(join(tmpdir(), "forge-sim-"));
    this.model = new Model(
      this.state,
      () => this.baseUrl,
      (signature, payload) => this.signer.verifies(signature, payload),
    );
    this.bus = new WebhookBus(
      this.state,
      this.validator,
      this.faults,
      (id, errors) => this.violation({ kind: "webhook", id, errors }),
      opts.webhookTimeoutMs,
      this.latency,
      this.clock,
    );
    apps.addActionsApp(this);
  }

  violation(v: Violation): void {
    this.violations.push(v);
    if (this.opts.strict) console.error(`[forge-sim] ${v.kind} violation ${v.id}: ${v.errors}`);
  }

  closed = false;

  /** Work GitHub does in the background (an asynchronous merge, the merge queue, auto-merge): `sim.idle()` waits for it. */
  private readonly jobs = new Set<Promise<void>>();

  /**
   * Runs `fn` in the background, one job after the events that caused it; the events it emits are
   * sent when it ends, and an error it throws is a simulator violation.
   */
  background(id: string, fn: () => Promise<void>): void {
    if (this.closed) return;
    const job = Promise.resolve()
      .then(fn)
      .catch((err: unknown) => {
        if (!this.closed)
          this.violation({ kind: "response", id, status: 500, errors: `simulator error: ${(err as Error).stack ?? String(err)}` });
      })
      .finally(() => {
        this.jobs.delete(job);
        if (!this.closed) this.bus.flush();
      });
    this.jobs.add(job);
  }

  /** Whether background work is under way. */
  get working(): boolean {
    return this.jobs.size > 0;
  }

  /** Resolves once no background work is under way. */
  async jobsIdle(): Promise<void> {
    while (this.jobs.size) await Promise.allSettled([...this.jobs]);
  }

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
    // eslint-disable-next-line no-restricted-properties -- credentials expire in real time: the clients holding them read the real clock
    this.state.tokens.set(token, { token, kind: "user", actor, permissions: {}, expiresAt: Date.now() + 365 * 86400_000 });
    return token;
  }

  gitDir(owner: string, name: string): string {
    return join(this.root, "git", owner, `${name}.git`);
  }

  createRepo(o: SeedRepoOptions): Promise<Repo> {
    return repos.createRepo(this, o);
  }

  fork(source: Repo, owner: string): Promise<Repo> {
    return repos.fork(this, source, owner);
  }

  fetchPullHead(base: Repo, issue: Issue): Promise<string | undefined> {
    return repos.fetchPullHead(this, base, issue);
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
    return apps.registerApp(this, o);
  }

  setAppWebhookUrl(appId: number, url: string): void {
    apps.setAppWebhookUrl(this, appId, url);
  }

  addRepoHook(repo: Repo, url: string, secret: string | null, events: string[]): number {
    return apps.addRepoHook(this, repo, url, secret, events);
  }

  install(appId: number, account: string, repositories: "all" | string[]): Installation {
    return apps.install(this, appId, account, repositories);
  }

  suspendInstallation(installationId: number, suspended: boolean, by?: string): void {
    apps.setSuspended(this, installationId, suspended, by);
  }

  uninstall(installationId: number, by?: string): void {
    apps.uninstall(this, installationId, by);
  }

  addInstallationRepos(installationId: number, fullNames: string[], by?: string): void {
    apps.addInstallationRepos(this, installationId, fullNames, by);
  }

  mintInstallationToken(inst: Installation, repoIds?: number[], permissions?: Permissions): Token {
    return apps.mintInstallationToken(this, inst, repoIds, permissions);
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
    const mine = prev.then(() => pushEvents.refsChangedNow(this, repo, changes, ctx));
    const tail = mine.catch(() => undefined);
    this.refEvents.set(repo.id, tail);
    void tail.then(() => {
      if (this.refEvents.get(repo.id) === tail) this.refEvents.delete(repo.id);
    });
    return mine;
  }

  private readonly refEvents = new Map<number, Promise<void>>();

  headCommit(repo: Repo, sha: string): Promise<Record<string, unknown>> {
    return pushEvents.headCommit(this, repo, sha);
  }

  // ---------- check suites and pull requests ----------

  ensureSuite(repo: Repo, appId: number, headSha: string, headBranch: string | null, before?: string | null) {
    return pulls.ensureSuite(this, repo, appId, headSha, headBranch, before);
  }

  newSuite(repo: Repo, appId: number, headSha: string, headBranch: string | null) {
    return pulls.newSuite(this, repo, appId, headSha, headBranch);
  }

  prsFor(repo: Repo, sha: string): Array<Record<string, unknown>> {
    return pulls.prsFor(this, repo, sha);
  }

  pullPayload(repo: Repo, issue: Issue): Promise<Record<string, unknown>> {
    return pulls.pullPayload(this, repo, issue);
  }

  fillPullCounts(repo: Repo, issue: Issue, body: Record<string, unknown>): Promise<void> {
    return pulls.fillPullCounts(this, repo, issue, body);
  }

  markMerged(repo: Repo, issue: Issue, ctx: ActContext, mergeSha: string): Promise<void> {
    return pulls.markMerged(this, repo, issue, ctx, mergeSha);
  }

  /** Writes a file in the temp root (used for logs and seeds). */
  writeTemp(rel: string, content: string | Buffer): string {
    const p = join(this.root, rel);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, content);
    return p;
  }
}
