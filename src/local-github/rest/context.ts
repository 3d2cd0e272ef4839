// The request context every REST operation of the local GitHub receives, the result it returns, and
// the helpers the operation groups share (errors, the repository, events, refs).
import { HttpError } from "../auth.js";
import type { ActContext, SimCore } from "../domain/index.js";
import * as git from "../git/index.js";
import type { App, Issue, Repo, Token, User } from "../state.js";
import { now } from "../state.js";
import { enforceProtection } from "../branch-protection.js";
import { enforceRules } from "../rule-violations.js";

export interface RestCtx {
  core: SimCore;
  op: string;
  params: Record<string, string>;
  query: URLSearchParams;
  body: Record<string, unknown> | undefined;
  repo?: Repo;
  token?: Token;
  app?: App;
  actor: User;
  doc: string;
  /** the request's Accept header ("" when absent) */
  accept: string;
  /** paginates a list and sets the Link header */
  page<T>(items: T[]): T[];
}

export interface Result {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** non-JSON body */
  raw?: Buffer | string;
  contentType?: string;
}

export type Handler = (ctx: RestCtx) => Promise<Result>;

export const ok = (body: unknown, status = 200): Result => ({ status, body });

/** GitHub's 422 "Validation Failed" with an `errors` array. */
export function invalid(ctx: RestCtx, message: string, errors?: Array<Record<string, unknown>>): HttpError {
  return new HttpError(422, message, ctx.doc, errors ? { errors } : {});
}
export function notFound(ctx: RestCtx): HttpError {
  return new HttpError(404, "Not Found", ctx.doc);
}

export function repoOf(ctx: RestCtx): Repo {
  if (!ctx.repo) throw notFound(ctx);
  return ctx.repo;
}

export function act(ctx: RestCtx): ActContext {
  return { actor: ctx.actor, token: ctx.token };
}

export function emit(ctx: RestCtx, event: string, action: string | null, payload: Record<string, unknown>, onlyAppId?: number): void {
  ctx.core.bus.emit(
    event,
    action,
    { ...payload, repository: ctx.core.model.repo(repoOf(ctx)), sender: ctx.core.model.user(ctx.actor) },
    {
      repo: ctx.repo,
      onlyAppId,
      causedByWorkflowRun: ctx.token?.workflowRunId,
    },
  );
}

export function str(body: Record<string, unknown> | undefined, key: string): string | undefined {
  const v = body?.[key];
  return typeof v === "string" ? v : undefined;
}

/** PR and issue bodies and comments are limited to 65,536 characters. */
export function checkBodyLength(ctx: RestCtx, resource: string, text: string | undefined | null, field = "body"): void {
  if (text && text.length > 65536) {
    throw invalid(ctx, "Validation Failed", [
      { resource, code: "custom", field, message: `${field} is too long (maximum is 65536 characters)` },
    ]);
  }
}

/** Resolves a branch, tag, `refs/…` name or sha to a commit sha. */
export async function commitish(repo: Repo, ref: string): Promise<string | undefined> {
  if (/^[0-9a-f]{40}$/.test(ref)) return (await git.objectType(repo.gitDir, ref)) === "commit" ? ref : undefined;
  for (const cand of ref.startsWith("refs/") ? [ref] : [`refs/heads/${ref}`, `refs/tags/${ref}`]) {
    const sha = await git.resolveRef(repo.gitDir, cand);
    if (sha) return sha;
  }
  if (/^[0-9a-f]{7,39}$/.test(ref)) return git.resolveRef(repo.gitDir, ref);
  return undefined;
}

/**
 * The date of a commit GitHub makes (the git database, contents, merges, GraphQL): the time of its
 * clock — a test clock's when the local GitHub runs on one, so a run's history on its state branch
 * is dated in the run's time.
 */
export function commitDate(core: Pick<SimCore, "clock">): string {
  return new Date(core.clock.now()).toISOString().replace(/\.\d{3}Z$/, "Z");
}

export function identity(ctx: RestCtx, given: unknown): git.GitIdentity {
  const g = given as { name?: string; email?: string; date?: string } | undefined;
  return {
    name: g?.name ?? ctx.actor.login,
    email: g?.email ?? ctx.core.email(ctx.actor),
    date: g?.date ?? commitDate(ctx.core),
  };
}

/** Moves a ref with compare-and-swap and emits the events; returns false if it lost the race. */
export async function moveRef(
  ctx: RestCtx,
  repo: Repo,
  ref: string,
  sha: string,
  old: string | null,
  fastForward?: () => Promise<boolean>,
): Promise<boolean> {
  // The repository's rulesets and branch protection first (a forced update says whether it fast-forwards).
  const write = { ref, before: old, after: sha, ...(fastForward ? { fastForward } : {}) };
  // The contents API answers a rule violation 409, as its description says; the refs API 422.
  await enforceRules(ctx.core, repo, write, act(ctx), ctx.doc, ctx.op === "repos/create-or-update-file-contents" ? 409 : 422);
  await enforceProtection(repo, write, act(ctx), ctx.doc);
  const okMove = await git.updateRef(repo.gitDir, ref, sha, old ?? undefined);
  if (!okMove) return false;
  await ctx.core.refsChanged(repo, [{ ref, before: old, after: sha }], act(ctx));
  return true;
}

// Shared by repositories and contents and the git database.
export function wrap64(b64: string): string {
  return (b64.match(/.{1,60}/g) ?? [""]).join("\n") + (b64.length ? "\n" : "");
}

// Shared by repositories (a commit, a comparison) and pull requests (their files).
export function diffEntry(ctx: RestCtx, repo: Repo, f: git.FileDiff, ref: string): Record<string, unknown> {
  const web = `${ctx.core.baseUrl}/${repo.owner.login}/${repo.name}`;
  return {
    sha: f.sha,
    filename: f.filename,
    ...(f.previous_filename !== undefined ? { previous_filename: f.previous_filename } : {}),
    status: f.status,
    additions: f.additions,
    deletions: f.deletions,
    changes: f.additions + f.deletions,
    blob_url: `${web}/blob/${ref}/${f.filename}`,
    raw_url: `${web}/raw/${ref}/${f.filename}`,
    contents_url: `${ctx.core.model.api}/repos/${repo.owner.login}/${repo.name}/contents/${f.filename}?ref=${ref}`,
    patch: f.patch,
  };
}

// Shared by pull requests and issues.
export function newIssue(ctx: RestCtx, repo: Repo, title: string, body: string | null): Issue {
  const t = now();
  const issue: Issue = {
    id: ctx.core.state.id(),
    number: repo.nextNumber++,
    repoId: repo.id,
    title,
    body,
    user: ctx.actor,
    state: "open",
    stateReason: null,
    labels: [],
    assignees: [],
    locked: false,
    comments: 0,
    createdAt: t,
    updatedAt: t,
    closedAt: null,
    closedBy: null,
    viaAppId: ctx.token?.appId,
  };
  ctx.core.state.issues.set(`${repo.id}#${issue.number}`, issue);
  return issue;
}

export function setIssueState(ctx: RestCtx, issue: Issue, state: "open" | "closed", reason: string | null): void {
  const t = now();
  issue.state = state;
  issue.updatedAt = t;
  if (state === "closed") {
    issue.closedAt = t;
    issue.closedBy = ctx.actor;
    issue.stateReason = (reason as Issue["stateReason"]) ?? "completed";
  } else {
    issue.closedAt = null;
    issue.closedBy = null;
    issue.stateReason = "reopened";
  }
}
