// Rulesets (docs.github.com/rest/repos/rules, docs.github.com/rest/orgs/rules): a repository's own,
// and its organisation's whose `repository_name` / `repository_id` conditions name it (org-rulesets.ts),
// applied together. Stored, listed and read through the REST API (a repository's list and read
// include its organisation's, `includes_parents`), created, updated and deleted by administrators,
// and enforced on every write of a ref: a push over Git (its pre-receive hook, push-hook.ts,
// answering "GH013: Repository rule violations found"), the refs API, the contents API, branch merges
// and pull request merges — the rules of each type in rule-violations.ts; what a pull request merge
// must meet beyond that (approvals, checks, the merge queue, merge methods) in merge-rules.ts.
// `GET …/rules/branches/{branch}` answers the active rules of both levels that apply to a branch.
import picomatch from "picomatch";
import { HttpError, roleAtLeast, roleOf } from "./auth.js";
import type { ActContext } from "./domain/index.js";
import { nodeId } from "./resources/index.js";
import type { Handler, RestCtx } from "./rest/index.js";
import type { Repo, Role, User } from "./state.js";
import { now } from "./state.js";

export type RuleType =
  | "creation"
  | "update"
  | "deletion"
  | "non_fast_forward"
  | "required_linear_history"
  | "pull_request"
  | "required_status_checks"
  | "merge_queue"
  | "required_signatures"
  | (string & {});

export interface BypassActor {
  actorId: number | null;
  actorType: string;
  bypassMode: string;
}

export interface Ruleset {
  id: number;
  name: string;
  target: "branch" | "tag" | "push";
  enforcement: "disabled" | "active" | "evaluate";
  bypassActors: BypassActor[];
  include: string[];
  exclude: string[];
  rules: Array<{ type: RuleType; parameters?: Record<string, unknown> }>;
  createdAt: string;
  updatedAt: string;
  /** an organisation's ruleset: the repositories it names (by name patterns, or by id) */
  org?: { login: string; repositoryName?: { include: string[]; exclude: string[] }; repositoryIds?: number[] };
}

/** What the local GitHub keeps of an organisation: its owners (logins) and its rulesets. */
export interface OrgData {
  owners: Set<string>;
  rulesets: Ruleset[];
}

/** An organisation's data, made on first use; undefined for a person's account. */
export function orgData(account: User): OrgData | undefined {
  if (account.type !== "Organization") return undefined;
  return (account.org ??= { owners: new Set(), rulesets: [] });
}

/** GitHub's ids of the repository roles a bypass list can name. */
const ROLE_IDS: Record<number, Role> = { 1: "read", 2: "maintain", 3: "triage", 4: "write", 5: "admin" };

/** A literal text as a regular expression's source. */
function escapeRegex(t: string): string {
  return t.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/**
 * Regular expression of a ruleset's ref pattern: `~ALL`, `~DEFAULT_BRANCH`, or an fnmatch pattern
 * of full ref names (a bare name is taken under the target's prefix).
 */
function patternRegex(repo: Repo, target: Ruleset["target"], pattern: string): RegExp {
  const prefix = target === "tag" ? "refs/tags/" : "refs/heads/";
  if (pattern === "~ALL") return new RegExp(`^${escapeRegex(prefix)}`);
  if (pattern === "~DEFAULT_BRANCH") return new RegExp(`^${escapeRegex(`refs/heads/${repo.defaultBranch}`)}$`);
  const full = pattern.startsWith("refs/") ? pattern : `${prefix}${pattern}`;
  return picomatch.makeRe(full, { dot: true });
}

/** Whether an organisation's ruleset names the repository (`~ALL` or fnmatch patterns of names, or ids). */
function namesRepo(set: Ruleset, repo: Repo): boolean {
  const o = set.org;
  if (!o) return true;
  if (o.repositoryIds) return o.repositoryIds.includes(repo.id);
  const c = o.repositoryName ?? { include: [], exclude: [] };
  const hit = (p: string) => p === "~ALL" || picomatch.isMatch(repo.name, p, { nocase: true, dot: true });
  return c.include.some(hit) && !c.exclude.some(hit);
}

/** The repository's rulesets and its organisation's that name it. */
export function allRulesets(repo: Repo): Ruleset[] {
  return [...(repo.rulesets ?? []), ...(repo.owner.org?.rulesets ?? []).filter((s) => namesRepo(s, repo))];
}

/** Active branch and tag rulesets (the repository's and its organisation's) whose conditions name `ref`. */
export function rulesetsFor(repo: Repo, ref: string): Ruleset[] {
  return allRulesets(repo).filter(
    (r) =>
      r.enforcement === "active" &&
      r.target !== "push" &&
      r.include.some((p) => patternRegex(repo, r.target, p).test(ref)) &&
      !r.exclude.some((p) => patternRegex(repo, r.target, p).test(ref)),
  );
}

/** The active rulesets a write of `ref` meets: those naming it, and the push rulesets (every ref of the repository). */
export function rulesetsOn(repo: Repo, ref: string): Ruleset[] {
  return [...rulesetsFor(repo, ref), ...allRulesets(repo).filter((r) => r.enforcement === "active" && r.target === "push")];
}

/**
 * Whether the actor (a person, an App's installation token, a workflow's token) is on the bypass
 * list. An actor listed with bypass mode `pull_request` bypasses only when merging a pull request.
 */
export function canBypass(repo: Repo, ruleset: Ruleset, who: ActContext, viaPullRequest = false): boolean {
  const person = !who.token || who.token.kind === "user";
  for (const b of ruleset.bypassActors) {
    if (b.bypassMode === "pull_request" && !viaPullRequest) continue; // bypass through pull requests only: not for direct writes
    if (b.actorType === "Integration" && who.token && who.token.kind !== "user" && b.actorId === who.token.appId) return true;
    if (b.actorType === "User" && person && b.actorId === who.actor.id) return true;
    if (b.actorType === "RepositoryRole" && person && b.actorId !== null) {
      const need = ROLE_IDS[b.actorId];
      if (need && roleAtLeast(roleOf(repo, who.actor), need)) return true;
    }
    if (b.actorType === "OrganizationAdmin" && person && roleOf(repo, who.actor) === "admin") return true;
  }
  return false;
}

// ---------------------------------------------------------------- REST

/** Where a ruleset is kept and seen from: a repository, or an organisation (its login). */
export type RulesetHome = { repo: Repo } | { org: User };

/** `current_user_can_bypass` of the caller: always, pull_requests_only, never. */
function callerBypass(ctx: RestCtx, home: RulesetHome, r: Ruleset): string {
  const who = { actor: ctx.actor, ...(ctx.token ? { token: ctx.token } : {}) };
  if ("org" in home) {
    const admin = !ctx.token || ctx.token.kind === "user" ? home.org.org?.owners.has(ctx.actor.login.toLowerCase()) : false;
    return admin && r.bypassActors.some((b) => b.actorType === "OrganizationAdmin") ? "always" : "never";
  }
  if (canBypass(home.repo, r, who)) return "always";
  return canBypass(home.repo, r, who, true) ? "pull_requests_only" : "never";
}

export function rulesetJson(ctx: RestCtx, home: RulesetHome, r: Ruleset): Record<string, unknown> {
  const orgLogin = r.org?.login;
  const source = orgLogin ?? ("repo" in home ? `${home.repo.owner.login}/${home.repo.name}` : "");
  const self =
    orgLogin !== undefined
      ? `${ctx.core.model.api}/orgs/${orgLogin}/rulesets/${r.id}`
      : `${ctx.core.model.api}/repos/${source}/rulesets/${r.id}`;
  const html =
    orgLogin !== undefined
      ? `${ctx.core.baseUrl}/organizations/${orgLogin}/settings/rules/${r.id}`
      : `${ctx.core.baseUrl}/${source}/rules/${r.id}`;
  const refName = { ref_name: { include: r.include, exclude: r.exclude } };
  const conditions = !r.org
    ? refName
    : r.org.repositoryIds
      ? { ...refName, repository_id: { repository_ids: r.org.repositoryIds } }
      : { ...refName, repository_name: { include: r.org.repositoryName?.include ?? [], exclude: r.org.repositoryName?.exclude ?? [] } };
  return {
    id: r.id,
    name: r.name,
    target: r.target,
    source_type: r.org ? "Organization" : "Repository",
    source,
    enforcement: r.enforcement,
    bypass_actors: r.bypassActors.map((b) => ({ actor_id: b.actorId, actor_type: b.actorType, bypass_mode: b.bypassMode })),
    current_user_can_bypass: callerBypass(ctx, home, r),
    node_id: nodeId("RepositoryRuleset", r.id),
    _links: { self: { href: self }, html: { href: html } },
    // Push rulesets name no refs: they apply to every push.
    conditions: r.target === "push" && !r.org ? null : conditions,
    rules: r.rules,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  };
}

/**
 * A ruleset from a create or update request (checked against GitHub's description before it
 * reaches here): the body's fields over `base`'s (an update keeps what the body leaves out).
 * `siblings`: the rulesets of the same home, whose names must differ.
 */
export function fromBody(ctx: RestCtx, siblings: readonly Ruleset[], base: Partial<Ruleset> & { id: number; createdAt: string }): Ruleset {
  const b = ctx.body ?? {};
  const name = b.name === undefined ? (base.name ?? "") : String(b.name);
  if (siblings.some((r) => r.name === name && r.id !== base.id))
    throw new HttpError(422, "Validation Failed", ctx.doc, {
      errors: [{ resource: "Ruleset", code: "custom", field: "name", message: "Name must be unique" }],
    });
  const cond = (b.conditions as { ref_name?: { include?: string[]; exclude?: string[] } } | null | undefined)?.ref_name;
  const actors = b.bypass_actors as Array<Record<string, unknown>> | undefined;
  const rules = b.rules as Array<Record<string, unknown>> | undefined;
  return {
    id: base.id,
    name,
    target: (b.target as Ruleset["target"] | undefined) ?? base.target ?? "branch",
    enforcement: (b.enforcement as Ruleset["enforcement"] | undefined) ?? base.enforcement ?? "disabled",
    bypassActors: actors
      ? actors.map((a) => ({
          actorId: typeof a.actor_id === "number" ? a.actor_id : null,
          actorType: String(a.actor_type),
          bypassMode: typeof a.bypass_mode === "string" ? a.bypass_mode : "always",
        }))
      : (base.bypassActors ?? []),
    include: cond ? (cond.include ?? []) : (base.include ?? []),
    exclude: cond ? (cond.exclude ?? []) : (base.exclude ?? []),
    rules: rules
      ? rules.map((r) => ({ type: String(r.type), ...(r.parameters ? { parameters: r.parameters as Record<string, unknown> } : {}) }))
      : (base.rules ?? []),
    createdAt: base.createdAt,
    updatedAt: now(),
    ...(base.org ? { org: base.org } : {}),
  };
}

function repoOf(ctx: RestCtx): Repo {
  if (!ctx.repo) throw new HttpError(404, "Not Found", ctx.doc);
  return ctx.repo;
}

/** `includes_parents` (default true): the organisation's rulesets that name the repository are listed and read too. */
function visibleRulesets(ctx: RestCtx, repo: Repo): Ruleset[] {
  return ctx.query.get("includes_parents") === "false" ? (repo.rulesets ?? []) : allRulesets(repo);
}

/** `targets`: a comma-separated list of the targets shown (all when not given). */
export function ofTargets(ctx: RestCtx, sets: Ruleset[]): Ruleset[] {
  const t = ctx.query.get("targets");
  if (!t) return sets;
  const wanted = new Set(t.split(",").map((x) => x.trim()));
  return sets.filter((s) => wanted.has(s.target));
}

export const rulesetHandlers: Record<string, Handler> = {
  // docs.github.com/rest/repos/rules#create-a-repository-ruleset (the request body is checked
  // against GitHub's description before it reaches here).
  "repos/create-repo-ruleset": async (ctx) => {
    const repo = repoOf(ctx);
    const sets = (repo.rulesets ??= []);
    const t = now();
    const set = fromBody(ctx, sets, { id: ctx.core.state.id(), createdAt: t });
    sets.push(set);
    return { status: 201, body: rulesetJson(ctx, { repo }, set) };
  },
  // docs.github.com/rest/repos/rules#update-a-repository-ruleset: what the body gives replaces the
  // ruleset's field (conditions, rules and bypass actors whole); what it leaves out is kept. An
  // organisation's ruleset is changed at the organisation only (404 here).
  "repos/update-repo-ruleset": async (ctx) => {
    const repo = repoOf(ctx);
    const sets = repo.rulesets ?? [];
    const at = sets.findIndex((r) => String(r.id) === ctx.params.ruleset_id);
    if (at < 0) throw new HttpError(404, "Not Found", ctx.doc);
    const set = fromBody(ctx, sets, sets[at]!);
    sets[at] = set;
    return { status: 200, body: rulesetJson(ctx, { repo }, set) };
  },
  // docs.github.com/rest/repos/rules#delete-a-repository-ruleset: 204.
  "repos/delete-repo-ruleset": async (ctx) => {
    const repo = repoOf(ctx);
    const sets = repo.rulesets ?? [];
    const at = sets.findIndex((r) => String(r.id) === ctx.params.ruleset_id);
    if (at < 0) throw new HttpError(404, "Not Found", ctx.doc);
    sets.splice(at, 1);
    return { status: 204 };
  },
  "repos/get-repo-rulesets": async (ctx) => {
    const repo = repoOf(ctx);
    return { status: 200, body: ctx.page(ofTargets(ctx, visibleRulesets(ctx, repo)).map((r) => rulesetJson(ctx, { repo }, r))) };
  },
  "repos/get-repo-ruleset": async (ctx) => {
    const repo = repoOf(ctx);
    const set = visibleRulesets(ctx, repo).find((r) => String(r.id) === ctx.params.ruleset_id);
    if (!set) throw new HttpError(404, "Not Found", ctx.doc);
    return { status: 200, body: rulesetJson(ctx, { repo }, set) };
  },
  // "Returns all active rules that apply to the specified branch" — the branch need not exist; the
  // organisation's rules with `ruleset_source_type: "Organization"`.
  "repos/get-branch-rules": async (ctx) => {
    const repo = repoOf(ctx);
    const ref = `refs/heads/${ctx.params.branch}`;
    const rules = rulesetsFor(repo, ref).flatMap((set) =>
      set.rules.map((r) => ({
        ...r,
        ruleset_source_type: set.org ? "Organization" : "Repository",
        ruleset_source: set.org ? set.org.login : `${repo.owner.login}/${repo.name}`,
        ruleset_id: set.id,
      })),
    );
    return { status: 200, body: ctx.page(rules) };
  },
};
