// Repository rulesets (docs.github.com/rest/repos/rules): stored per repository, listed and read
// through the REST API, and enforced on every write of a ref — a push over Git (by a pre-receive
// hook, as GitHub does, answering "GH013: Repository rule violations found"), the refs API, the
// contents API, branch merges and pull request merges. Rules enforced on every write: creation,
// update, deletion, non_fast_forward and required_linear_history (no merge commit among the new
// commits); on pull request merges also pull_request (approvals) and required_status_checks (with
// `strict_required_status_checks_policy`), in merge-rules.ts. Other rule types are stored and listed
// but not enforced. Rulesets are created, listed, read, updated and deleted through the REST API.
// The same hook enforces branch protection on pushes (branch-protection.ts), with GitHub's GH006 text.
import { chmodSync, existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import picomatch from "picomatch";
import { HttpError, roleAtLeast, roleOf } from "./auth.js";
import { protectionRules } from "./branch-protection.js";
import * as git from "./git/index.js";
import type { ActContext } from "./domain/index.js";
import { nodeId } from "./resources/index.js";
import type { Handler, RestCtx } from "./rest/index.js";
import type { Repo, Role } from "./state.js";
import { now } from "./state.js";

export type RuleType =
  | "creation"
  | "update"
  | "deletion"
  | "non_fast_forward"
  | "required_linear_history"
  | "pull_request"
  | "required_status_checks"
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
}

/** GitHub's ids of the repository roles a bypass list can name. */
const ROLE_IDS: Record<number, Role> = { 1: "read", 2: "maintain", 3: "triage", 4: "write", 5: "admin" };

/** Whether a ruleset pattern names `ref` — the same regular expression the push hook applies. */
function patternMatches(repo: Repo, target: Ruleset["target"], pattern: string, ref: string): boolean {
  return new RegExp(patternRegex(repo, target, pattern)).test(ref);
}

/** Active rulesets whose conditions name `ref`. */
export function rulesetsFor(repo: Repo, ref: string): Ruleset[] {
  return (repo.rulesets ?? []).filter(
    (r) =>
      r.enforcement === "active" &&
      r.target !== "push" &&
      r.include.some((p) => patternMatches(repo, r.target, p, ref)) &&
      !r.exclude.some((p) => patternMatches(repo, r.target, p, ref)),
  );
}

/**
 * Whether the actor (a person, an App's installation token, a workflow's token) is on the bypass
 * list. An actor listed with bypass mode `pull_request` bypasses only when merging a pull request.
 */
export function canBypass(repo: Repo, ruleset: Ruleset, who: ActContext, viaPullRequest = false): boolean {
  const person = !who.token || who.token.kind === "user";
  for (const b of ruleset.bypassActors) {
    if (b.bypassMode === "pull_request" && !viaPullRequest) continue; // bypass through pull requests only: not for direct writes
    if (b.actorType === "Integration" && who.token?.kind === "installation" && b.actorId === who.token.appId) return true;
    if (b.actorType === "User" && person && b.actorId === who.actor.id) return true;
    if (b.actorType === "RepositoryRole" && person && b.actorId !== null) {
      const need = ROLE_IDS[b.actorId];
      if (need && roleAtLeast(roleOf(repo, who.actor), need)) return true;
    }
    if (b.actorType === "OrganizationAdmin" && person && roleOf(repo, who.actor) === "admin") return true;
  }
  return false;
}

export interface RefWrite {
  ref: string;
  before: string | null;
  after: string | null;
  /** whether `after` contains `before` (asked only when a non_fast_forward rule applies) */
  fastForward?: () => Promise<boolean>;
}

/** What GitHub says of each rule a ref write breaks (the texts of its GH013 messages). */
const MESSAGES: Record<string, string> = {
  creation: "Cannot create ref due to creations being restricted.",
  update: "Cannot update this protected ref.",
  deletion: "Cannot delete this protected ref.",
  non_fast_forward: "Cannot force-push to this branch",
  // The text GitHub answers for a merge commit on a branch that requires a linear history (a push's
  // "remote: error:" line, and a pull request merge's 405 as github.com/chdsbd/kodiak/issues/295 shows).
  required_linear_history: "This branch must not contain merge commits.",
};

/** The rules a write breaks, as GitHub words them; empty when it may go ahead. */
export async function violations(repo: Repo, write: RefWrite, who: ActContext, viaPullRequest = false): Promise<string[]> {
  const out: string[] = [];
  for (const set of rulesetsFor(repo, write.ref)) {
    if (canBypass(repo, set, who, viaPullRequest)) continue;
    for (const rule of set.rules) {
      const broken =
        rule.type === "creation"
          ? write.before === null
          : rule.type === "deletion"
            ? write.after === null
            : rule.type === "update"
              ? write.before !== null && write.after !== null
              : rule.type === "non_fast_forward"
                ? write.before !== null && write.after !== null && !(await (write.fastForward?.() ?? Promise.resolve(true)))
                : rule.type === "required_linear_history"
                  ? write.after !== null && (await git.bringsMergeCommits(repo.gitDir, write.before, write.after))
                  : false;
      if (broken && !out.includes(MESSAGES[rule.type]!)) out.push(MESSAGES[rule.type]!);
    }
  }
  return out;
}

/**
 * Refuse a write through the REST API that a ruleset forbids: 422 "Repository rule violations
 * found" with the rules named (405 for a pull request merge, as GitHub answers it).
 */
export async function enforceRules(repo: Repo, write: RefWrite, who: ActContext, doc: string, status = 422): Promise<void> {
  const broken = await violations(repo, write, who, status === 405);
  if (broken.length) throw new HttpError(status, `Repository rule violations found\n\n${broken.join("\n")}\n`, doc);
}

// ---------------------------------------------------------------- pushes over Git

/**
 * The pre-receive hook a push runs when rules apply to its author: it reads the rules from
 * FORGE_RULES (regular expressions of full ref names, the pusher's bypasses already taken out) and
 * refuses the whole push when one ref update breaks one — with GitHub's GH013 message for a
 * ruleset, GH006 for a branch protection (a rule with `code: "GH006"` and its own `messages`).
 */
const HOOK_SOURCE = `"use strict";
const { execFileSync } = require("node:child_process");
const rules = JSON.parse(process.env.FORGE_RULES || "[]");
const zero = /^0+$/;
const messages = ${JSON.stringify(MESSAGES)};
const broken = new Map();
for (const line of require("node:fs").readFileSync(0, "utf8").split("\\n")) {
  const [before, after, ref] = line.trim().split(" ");
  if (!ref) continue;
  for (const r of rules) {
    if (!r.include.some((s) => new RegExp(s).test(ref)) || r.exclude.some((s) => new RegExp(s).test(ref))) continue;
    const created = zero.test(before), deleted = zero.test(after);
    for (const t of r.types) {
      let bad = false;
      if (t === "creation") bad = created;
      else if (t === "deletion") bad = deleted;
      else if (t === "update") bad = !created && !deleted;
      else if (t === "non_fast_forward" && !created && !deleted) {
        try { execFileSync("git", ["merge-base", "--is-ancestor", before, after], { stdio: "ignore" }); } catch { bad = true; }
      } else if (t === "required_linear_history" && !deleted) {
        const range = created ? [after, "--not", "--all"] : [after, "^" + before];
        try { bad = execFileSync("git", ["rev-list", "--min-parents=2", "--max-count=1", ...range], { encoding: "utf8" }).trim() !== ""; } catch { bad = true; }
      }
      const key = (r.code || "GH013") + " " + ref;
      if (bad) broken.set(key, [...new Set([...(broken.get(key) || []), (r.messages || messages)[t]])]);
    }
  }
}
for (const [key, list] of broken) {
  const [code, ref] = key.split(" ");
  if (code === "GH006") {
    process.stderr.write("error: GH006: Protected branch update failed for " + ref + ".\\n");
    for (const m of list) process.stderr.write("error: " + m + "\\n");
  } else {
    process.stderr.write("error: GH013: Repository rule violations found for " + ref + ".\\n");
    for (const m of list) process.stderr.write("- " + m + "\\n");
  }
}
process.exit(broken.size ? 1 : 0);
`;

/** A literal text as a regular expression's source. */
function escapeRegex(t: string): string {
  return t.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/**
 * Regular expression (source) of a ruleset pattern: `~ALL`, `~DEFAULT_BRANCH`, or an fnmatch pattern
 * of full ref names (a bare name is taken under the target's prefix).
 */
function patternRegex(repo: Repo, target: Ruleset["target"], pattern: string): string {
  const prefix = target === "tag" ? "refs/tags/" : "refs/heads/";
  if (pattern === "~ALL") return `^${escapeRegex(prefix)}`;
  if (pattern === "~DEFAULT_BRANCH") return `^${escapeRegex(`refs/heads/${repo.defaultBranch}`)}$`;
  const full = pattern.startsWith("refs/") ? pattern : `${prefix}${pattern}`;
  return picomatch.makeRe(full, { dot: true }).source;
}

/**
 * The hook's files under `<root>/hooks`, written once per server and each by an atomic rename: a
 * push running the hook while another push starts must never read a half-written file (a hook that
 * fails to parse declines the push with no rule broken).
 */
function installHook(root: string): string {
  const dir = join(root, "hooks");
  const hook = join(dir, "pre-receive");
  if (existsSync(hook)) return dir;
  mkdirSync(dir, { recursive: true });
  const place = (name: string, text: string, mode: number): void => {
    const temp = join(dir, `.${name}.${process.pid}.${Math.random().toString(36).slice(2)}`);
    writeFileSync(temp, text, { mode });
    chmodSync(temp, mode);
    renameSync(temp, join(dir, name));
  };
  place("rules.cjs", HOOK_SOURCE, 0o644);
  place("pre-receive", `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(join(dir, "rules.cjs"))}\n`, 0o755);
  return dir;
}

/** A rule of the push hook: ref patterns, the rule types it refuses, and GH006's texts for a branch protection. */
interface HookRule {
  include: string[];
  exclude: string[];
  types: string[];
  code?: "GH006";
  messages?: Record<string, string>;
}

/**
 * Environment for `git http-backend` so that receive-pack runs the rules hook; empty when no rule
 * applies to this pusher (every ruleset bypassed and no branch protection binding, or none).
 */
export function pushRulesEnv(root: string, repo: Repo, who: ActContext): Record<string, string> {
  const rules: HookRule[] = (repo.rulesets ?? [])
    .filter((r) => r.enforcement === "active" && r.target !== "push" && !canBypass(repo, r, who))
    .map((r) => ({
      include: r.include.map((p) => patternRegex(repo, r.target, p)),
      exclude: r.exclude.map((p) => patternRegex(repo, r.target, p)),
      types: r.rules.map((x) => x.type).filter((t) => t in MESSAGES),
    }))
    .filter((r) => r.types.length > 0);
  // Branch protection: one rule per protected branch and protection this pusher is held to.
  for (const branch of repo.protection?.keys() ?? []) {
    const ref = `refs/heads/${branch}`;
    for (const { type, message } of protectionRules(repo, ref, who))
      rules.push({ include: [`^${escapeRegex(ref)}$`], exclude: [], types: [type], code: "GH006", messages: { [type]: message } });
  }
  if (rules.length === 0) return {};
  const dir = installHook(root);
  return {
    FORGE_RULES: JSON.stringify(rules),
    GIT_CONFIG_COUNT: "1",
    GIT_CONFIG_KEY_0: "core.hooksPath",
    GIT_CONFIG_VALUE_0: dir,
  };
}

// ---------------------------------------------------------------- REST

function rulesetJson(ctx: RestCtx, repo: Repo, r: Ruleset): Record<string, unknown> {
  const full = `${repo.owner.login}/${repo.name}`;
  return {
    id: r.id,
    name: r.name,
    target: r.target,
    source_type: "Repository",
    source: full,
    enforcement: r.enforcement,
    bypass_actors: r.bypassActors.map((b) => ({ actor_id: b.actorId, actor_type: b.actorType, bypass_mode: b.bypassMode })),
    // "always", or "pull_requests_only" for an actor listed with bypass mode pull_request.
    current_user_can_bypass: canBypass(repo, r, { actor: ctx.actor, token: ctx.token })
      ? "always"
      : canBypass(repo, r, { actor: ctx.actor, token: ctx.token }, true)
        ? "pull_requests_only"
        : "never",
    node_id: nodeId("RepositoryRuleset", r.id),
    _links: {
      self: { href: `${ctx.core.model.api}/repos/${full}/rulesets/${r.id}` },
      html: { href: `${ctx.core.baseUrl}/${full}/rules/${r.id}` },
    },
    conditions: { ref_name: { include: r.include, exclude: r.exclude } },
    rules: r.rules,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  };
}

/**
 * A ruleset from a create or update request (checked against GitHub's description before it
 * reaches here): the body's fields over `base`'s (an update keeps what the body leaves out).
 */
function fromBody(ctx: RestCtx, repo: Repo, base: Partial<Ruleset> & { id: number; createdAt: string }): Ruleset {
  const b = ctx.body ?? {};
  const name = b.name === undefined ? (base.name ?? "") : String(b.name);
  if ((repo.rulesets ?? []).some((r) => r.name === name && r.id !== base.id))
    throw new HttpError(422, "Validation Failed", ctx.doc, {
      errors: [{ resource: "Ruleset", code: "custom", field: "name", message: "Name must be unique" }],
    });
  const cond = (b.conditions as { ref_name?: { include?: string[]; exclude?: string[] } } | undefined)?.ref_name;
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
  };
}

function repoOf(ctx: RestCtx): Repo {
  if (!ctx.repo) throw new HttpError(404, "Not Found", ctx.doc);
  return ctx.repo;
}

export const rulesetHandlers: Record<string, Handler> = {
  // docs.github.com/rest/repos/rules#create-a-repository-ruleset (the request body is checked
  // against GitHub's description before it reaches here).
  "repos/create-repo-ruleset": async (ctx) => {
    const repo = repoOf(ctx);
    const sets = (repo.rulesets ??= []);
    const t = now();
    const set = fromBody(ctx, repo, { id: ctx.core.state.id(), createdAt: t });
    sets.push(set);
    return { status: 201, body: rulesetJson(ctx, repo, set) };
  },
  // docs.github.com/rest/repos/rules#update-a-repository-ruleset: what the body gives replaces the
  // ruleset's field (conditions, rules and bypass actors whole); what it leaves out is kept.
  "repos/update-repo-ruleset": async (ctx) => {
    const repo = repoOf(ctx);
    const sets = repo.rulesets ?? [];
    const at = sets.findIndex((r) => String(r.id) === ctx.params.ruleset_id);
    if (at < 0) throw new HttpError(404, "Not Found", ctx.doc);
    const set = fromBody(ctx, repo, sets[at]!);
    sets[at] = set;
    return { status: 200, body: rulesetJson(ctx, repo, set) };
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
    return { status: 200, body: ctx.page((repo.rulesets ?? []).map((r) => rulesetJson(ctx, repo, r))) };
  },
  "repos/get-repo-ruleset": async (ctx) => {
    const repo = repoOf(ctx);
    const set = (repo.rulesets ?? []).find((r) => String(r.id) === ctx.params.ruleset_id);
    if (!set) throw new HttpError(404, "Not Found", ctx.doc);
    return { status: 200, body: rulesetJson(ctx, repo, set) };
  },
  // "Returns all active rules that apply to the specified branch" — the branch need not exist.
  "repos/get-branch-rules": async (ctx) => {
    const repo = repoOf(ctx);
    const ref = `refs/heads/${ctx.params.branch}`;
    const rules = rulesetsFor(repo, ref).flatMap((set) =>
      set.rules.map((r) => ({
        ...r,
        ruleset_source_type: "Repository",
        ruleset_source: `${repo.owner.login}/${repo.name}`,
        ruleset_id: set.id,
      })),
    );
    return { status: 200, body: ctx.page(rules) };
  },
};
