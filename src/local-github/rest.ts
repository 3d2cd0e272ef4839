// REST operations of the local GitHub, keyed by GitHub's operationId. Each handler reproduces the
// documented behaviour of the operation (docs.github.com/rest/…, cited per group) over the
// simulator's state and bare repositories.
import { HttpError } from "./auth.js";
import type { ActContext, SimCore } from "./core.js";
import { ZERO } from "./core.js";
import * as git from "./git.js";
import type { App, CheckRun, Comment, Issue, Label, Reaction, Repo, Token, User } from "./state.js";
import { now } from "./state.js";
import { actionsPermissionsHandlers } from "./actions-permissions.js";
import { branchProtectionHandlers, branchProtectionSummary, enforceProtection, enforceProtectionOnMerge } from "./branch-protection.js";
import { enforceRules, rulesetHandlers } from "./rulesets.js";
import { reviewHandlers } from "./reviews.js";
import { secretHandlers } from "./secrets.js";

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

const ok = (body: unknown, status = 200): Result => ({ status, body });

/** GitHub's 422 "Validation Failed" with an `errors` array. */
function invalid(ctx: RestCtx, message: string, errors?: Array<Record<string, unknown>>): HttpError {
  return new HttpError(422, message, ctx.doc, errors ? { errors } : {});
}
function notFound(ctx: RestCtx): HttpError {
  return new HttpError(404, "Not Found", ctx.doc);
}

function repoOf(ctx: RestCtx): Repo {
  if (!ctx.repo) throw notFound(ctx);
  return ctx.repo;
}

function act(ctx: RestCtx): ActContext {
  return { actor: ctx.actor, token: ctx.token };
}

function emit(ctx: RestCtx, event: string, action: string | null, payload: Record<string, unknown>, onlyAppId?: number): void {
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

function str(body: Record<string, unknown> | undefined, key: string): string | undefined {
  const v = body?.[key];
  return typeof v === "string" ? v : undefined;
}

/** PR and issue bodies and comments are limited to 65,536 characters. */
function checkBodyLength(ctx: RestCtx, resource: string, text: string | undefined | null, field = "body"): void {
  if (text && text.length > 65536) {
    throw invalid(ctx, "Validation Failed", [
      { resource, code: "custom", field, message: `${field} is too long (maximum is 65536 characters)` },
    ]);
  }
}

/** Resolves a branch, tag, `refs/…` name or sha to a commit sha. */
async function commitish(repo: Repo, ref: string): Promise<string | undefined> {
  if (/^[0-9a-f]{40}$/.test(ref)) return (await git.objectType(repo.gitDir, ref)) === "commit" ? ref : undefined;
  for (const cand of ref.startsWith("refs/") ? [ref] : [`refs/heads/${ref}`, `refs/tags/${ref}`]) {
    const sha = await git.resolveRef(repo.gitDir, cand);
    if (sha) return sha;
  }
  if (/^[0-9a-f]{7,39}$/.test(ref)) return git.resolveRef(repo.gitDir, ref);
  return undefined;
}

function identity(ctx: RestCtx, given: unknown): git.GitIdentity {
  const g = given as { name?: string; email?: string; date?: string } | undefined;
  return {
    name: g?.name ?? ctx.actor.login,
    email: g?.email ?? ctx.core.email(ctx.actor),
    date: g?.date ?? now(),
  };
}

/** Moves a ref with compare-and-swap and emits the events; returns false if it lost the race. */
async function moveRef(
  ctx: RestCtx,
  repo: Repo,
  ref: string,
  sha: string,
  old: string | null,
  fastForward?: () => Promise<boolean>,
): Promise<boolean> {
  // The repository's rulesets and branch protection first (a forced update says whether it fast-forwards).
  const write = { ref, before: old, after: sha, ...(fastForward ? { fastForward } : {}) };
  await enforceRules(repo, write, act(ctx), ctx.doc);
  await enforceProtection(repo, write, act(ctx), ctx.doc);
  const okMove = await git.updateRef(repo.gitDir, ref, sha, old ?? undefined);
  if (!okMove) return false;
  await ctx.core.refsChanged(repo, [{ ref, before: old, after: sha }], act(ctx));
  return true;
}

// ---------------------------------------------------------------- apps

const apps: Record<string, Handler> = {
  // docs.github.com/rest/apps/apps — every endpoint here is called with the App's JWT.
  "apps/get-authenticated": async (ctx) => ok(ctx.core.model.app(ctx.app!)),
  "apps/list-installations": async (ctx) =>
    ok(
      ctx.page(
        [...ctx.core.state.installations.values()].filter((i) => i.appId === ctx.app!.id).map((i) => ctx.core.model.installation(i)),
      ),
    ),
  "apps/get-installation": async (ctx) => {
    const inst = ctx.core.state.installations.get(Number(ctx.params.installation_id));
    if (!inst || inst.appId !== ctx.app!.id) throw notFound(ctx);
    return ok(ctx.core.model.installation(inst));
  },
  "apps/get-repo-installation": async (ctx) => {
    const repo = repoOf(ctx);
    const inst = ctx.core.state.installationsFor(repo).find((i) => i.appId === ctx.app!.id);
    if (!inst) throw notFound(ctx);
    return ok(ctx.core.model.installation(inst));
  },
  // "Create an installation access token for an app": 201; tokens expire after one hour; asking for
  // a permission or repository the installation lacks is 422.
  "apps/create-installation-access-token": async (ctx) => {
    const { core } = ctx;
    const inst = core.state.installations.get(Number(ctx.params.installation_id));
    if (!inst || inst.appId !== ctx.app!.id) throw notFound(ctx);
    const b = ctx.body ?? {};
    let repoIds: number[] | undefined;
    const names = b.repositories as string[] | undefined;
    const ids = b.repository_ids as number[] | undefined;
    const visible = [...core.state.repos.values()].filter((r) => core.state.installationsFor(r).includes(inst));
    if (names || ids) {
      repoIds = [];
      for (const n of names ?? []) {
        const r = visible.find((v) => v.name === n);
        if (!r) throw invalid(ctx, "There is at least one repository that does not exist or is not accessible to the parent installation.");
        repoIds.push(r.id);
      }
      for (const id of ids ?? []) {
        if (!visible.some((v) => v.id === id))
          throw invalid(ctx, "There is at least one repository that does not exist or is not accessible to the parent installation.");
        repoIds.push(id);
      }
    }
    let perms = { ...inst.permissions };
    if (b.permissions) {
      const asked = b.permissions as Record<string, "read" | "write">;
      for (const [k, v] of Object.entries(asked)) {
        const have = inst.permissions[k];
        if (!have || (v === "write" && have === "read"))
          throw invalid(ctx, "The permissions requested are not granted to this installation.");
      }
      perms = { ...asked };
    }
    const t = core.mintInstallationToken(inst, repoIds, perms);
    const out: Record<string, unknown> = {
      token: t.token,
      expires_at: new Date(t.expiresAt).toISOString().replace(/\.\d{3}Z$/, "Z"),
      permissions: perms,
      repository_selection: repoIds ? "selected" : inst.repositories === "all" ? "all" : "selected",
    };
    if (repoIds) out.repositories = repoIds.map((id) => core.model.repo(core.state.repos.get(id)!));
    return ok(out, 201);
  },
  // docs.github.com/rest/apps/installations#list-repositories-accessible-to-the-app-installation
  "apps/list-repos-accessible-to-installation": async (ctx) => {
    const { core } = ctx;
    const inst = core.state.installations.get(ctx.token!.installationId!);
    if (!inst) throw new HttpError(401, "Bad credentials", ctx.doc);
    const repos = [...core.state.repos.values()].filter(
      (r) => core.state.installationsFor(r).includes(inst) && (!ctx.token!.repoIds || ctx.token!.repoIds.includes(r.id)),
    );
    return ok({
      total_count: repos.length,
      repository_selection: inst.repositories === "all" ? "all" : "selected",
      repositories: ctx.page(repos).map((r) => core.model.repo(r)),
    });
  },
  "rate-limit/get": async () => {
    const reset = Math.floor(Date.now() / 1000) + 3600;
    const core = { limit: 5000, used: 0, remaining: 5000, reset };
    return ok({ resources: { core, search: { ...core, limit: 30, remaining: 30 } }, rate: core });
  },
};

// ---------------------------------------------------------------- repositories and contents

const repos: Record<string, Handler> = {
  "repos/get": async (ctx) => ok(ctx.core.model.repo(repoOf(ctx), { permissionsFor: ctx.token?.kind === "user" ? ctx.actor : undefined })),

  "repos/list-branches": async (ctx) => {
    const repo = repoOf(ctx);
    const refs = await git.listRefs(repo.gitDir, "refs/heads/");
    const base = `${ctx.core.model.api}/repos/${repo.owner.login}/${repo.name}`;
    const list = [...refs].map(([ref, sha]) => ({
      name: ref.slice(11),
      commit: { sha, url: `${base}/commits/${sha}` },
      protected: branchProtectionSummary(repo, ref.slice(11)).protected,
    }));
    return ok(ctx.page(list));
  },

  "repos/get-branch": async (ctx) => {
    const repo = repoOf(ctx);
    const sha = await git.resolveRef(repo.gitDir, `refs/heads/${ctx.params.branch}`);
    if (!sha) throw new HttpError(404, "Branch not found", ctx.doc);
    const base = `${ctx.core.model.api}/repos/${repo.owner.login}/${repo.name}`;
    return ok({
      name: ctx.params.branch,
      commit: ctx.core.model.commit(repo, await git.readCommit(repo.gitDir, sha)),
      _links: {
        html: `${ctx.core.baseUrl}/${repo.owner.login}/${repo.name}/tree/${ctx.params.branch}`,
        self: `${base}/branches/${ctx.params.branch}`,
      },
      ...branchProtectionSummary(repo, ctx.params.branch!),
      protection_url: `${base}/branches/${ctx.params.branch}/protection`,
    });
  },

  "repos/get-commit": async (ctx) => {
    const repo = repoOf(ctx);
    const sha = await commitish(repo, ctx.params.ref!);
    if (!sha) throw invalid(ctx, `No commit found for SHA: ${ctx.params.ref}`);
    const c = await git.readCommit(repo.gitDir, sha);
    const out = ctx.core.model.commit(repo, c);
    const files = c.parents[0] ? await git.diffFiles(repo.gitDir, c.parents[0], sha) : [];
    out.files = files.map((f) => diffEntry(ctx, repo, f, sha));
    const additions = files.reduce((n, f) => n + f.additions, 0);
    const deletions = files.reduce((n, f) => n + f.deletions, 0);
    out.stats = { additions, deletions, total: additions + deletions };
    return ok(out);
  },

  // docs.github.com/rest/repos/contents — files come back base64-encoded; a directory as a list.
  "repos/get-content": async (ctx) => {
    const repo = repoOf(ctx);
    const ref = ctx.query.get("ref") ?? repo.defaultBranch;
    const sha = await commitish(repo, ref);
    if (!sha) throw new HttpError(404, `No commit found for the ref ${ref}`, ctx.doc);
    const path = (ctx.params.path ?? "").replace(/^\/+|\/+$/g, "");
    const entry = await git.entryAt(repo.gitDir, sha, path);
    if (!entry) throw notFound(ctx);
    if (entry.type === "tree") {
      const entries = await git.lsTree(repo.gitDir, `${sha}:${path}`);
      return ok(entries.map((e) => contentEntry(ctx, repo, ref, path ? `${path}/${e.path}` : e.path, e)));
    }
    const blob = await git.readBlob(repo.gitDir, entry.sha);
    // `Accept: application/vnd.github.raw` (or the v3 form) returns the file's bytes themselves.
    if (/application\/vnd\.github(\.v3)?\.raw/.test(ctx.accept))
      return { status: 200, raw: blob, contentType: "application/vnd.github.raw; charset=utf-8" };
    return ok({
      ...contentEntry(ctx, repo, ref, path, { ...entry, size: blob.length }),
      content: wrap64(blob.toString("base64")),
      encoding: "base64",
    });
  },

  // "Create or update file contents": 201 created / 200 updated; updating needs the blob `sha`
  // of the file being replaced (422 without it, 409 when it does not match).
  "repos/create-or-update-file-contents": async (ctx) => {
    const repo = repoOf(ctx);
    const b = ctx.body!;
    const path = ctx.params.path!.replace(/^\/+/, "");
    const branch = str(b, "branch") ?? repo.defaultBranch;
    const refName = `refs/heads/${branch}`;
    const content = Buffer.from(str(b, "content") ?? "", "base64");
    for (let attempt = 0; attempt < 5; attempt++) {
      const tip = await git.resolveRef(repo.gitDir, refName);
      if (!tip && branch !== repo.defaultBranch) throw new HttpError(404, `Branch ${branch} not found`, ctx.doc);
      const existing = tip ? await git.entryAt(repo.gitDir, tip, path) : undefined;
      if (existing && !str(b, "sha")) throw invalid(ctx, 'Invalid request.\n\n"sha" wasn\'t supplied.');
      if (existing && str(b, "sha") !== existing.sha) throw new HttpError(409, `${path} does not match ${str(b, "sha")}`, ctx.doc);
      const blob = await git.hashBlob(repo.gitDir, content);
      const baseTree = tip ? (await git.readCommit(repo.gitDir, tip)).tree : undefined;
      const tree = await git.buildTree(repo.gitDir, baseTree, [{ path, sha: blob }]);
      const committer = identity(ctx, b.committer);
      const author = b.author ? identity(ctx, b.author) : committer;
      const commit = await git.commitTree(repo.gitDir, tree, tip ? [tip] : [], `${str(b, "message")}\n`, author, committer);
      if (!(await moveRef(ctx, repo, refName, commit, tip ?? null))) continue;
      const info = await git.readCommit(repo.gitDir, commit);
      return ok(
        {
          content: contentEntry(ctx, repo, branch, path, { mode: "100644", type: "blob", sha: blob, path, size: content.length }),
          commit: ctx.core.model.gitCommit(repo, info),
        },
        existing ? 200 : 201,
      );
    }
    throw new HttpError(409, `${path} does not match`, ctx.doc);
  },

  // docs.github.com/rest/branches/branches#merge-a-branch: 201 merge commit, 204 nothing to merge,
  // 404 missing base/head, 409 merge conflict.
  "repos/merge": async (ctx) => {
    const repo = repoOf(ctx);
    const b = ctx.body!;
    const baseName = str(b, "base")!;
    const headName = str(b, "head")!;
    const baseRef = `refs/heads/${baseName}`;
    for (let attempt = 0; attempt < 5; attempt++) {
      const base = await git.resolveRef(repo.gitDir, baseRef);
      if (!base) throw new HttpError(404, "Base does not exist", ctx.doc);
      const head = await commitish(repo, headName);
      if (!head) throw new HttpError(404, "Head does not exist", ctx.doc);
      if (await git.isAncestor(repo.gitDir, head, base)) return { status: 204 };
      const tree = await git.mergeTrees(repo.gitDir, base, head);
      if (!tree) throw new HttpError(409, "Merge conflict", ctx.doc);
      const who = identity(ctx, undefined);
      const message = str(b, "commit_message") ?? `Merge ${headName} into ${baseName}`;
      const sha = await git.commitTree(repo.gitDir, tree, [base, head], `${message}\n`, who, who);
      if (!(await moveRef(ctx, repo, baseRef, sha, base))) continue;
      return ok(ctx.core.model.commit(repo, await git.readCommit(repo.gitDir, sha)), 201);
    }
    throw new HttpError(409, "Merge conflict", ctx.doc);
  },

  "repos/compare-commits": async (ctx) => {
    const repo = repoOf(ctx);
    const base = await commitish(repo, ctx.params.base!);
    const head = await commitish(repo, ctx.params.head!);
    if (!base || !head) throw notFound(ctx);
    const mb = await git.mergeBase(repo.gitDir, base, head);
    const ahead = mb ? await git.countCommits(repo.gitDir, mb, head) : 0;
    const behind = mb ? await git.countCommits(repo.gitDir, mb, base) : 0;
    const status = ahead === 0 && behind === 0 ? "identical" : behind === 0 ? "ahead" : ahead === 0 ? "behind" : "diverged";
    const shas = mb ? await git.revList(repo.gitDir, mb, head) : [];
    const commits = await Promise.all(shas.map(async (s) => ctx.core.model.commit(repo, await git.readCommit(repo.gitDir, s))));
    const files = mb ? await git.diffFiles(repo.gitDir, mb, head) : [];
    const web = `${ctx.core.baseUrl}/${repo.owner.login}/${repo.name}`;
    return ok({
      url: `${ctx.core.model.api}/repos/${repo.owner.login}/${repo.name}/compare/${ctx.params.base}...${ctx.params.head}`,
      html_url: `${web}/compare/${ctx.params.base}...${ctx.params.head}`,
      permalink_url: `${web}/compare/${base.slice(0, 7)}...${head.slice(0, 7)}`,
      diff_url: `${web}/compare/${ctx.params.base}...${ctx.params.head}.diff`,
      patch_url: `${web}/compare/${ctx.params.base}...${ctx.params.head}.patch`,
      base_commit: ctx.core.model.commit(repo, await git.readCommit(repo.gitDir, base)),
      merge_base_commit: ctx.core.model.commit(repo, await git.readCommit(repo.gitDir, mb ?? base)),
      status,
      ahead_by: ahead,
      behind_by: behind,
      total_commits: ahead,
      commits,
      files: files.map((f) => diffEntry(ctx, repo, f, head)),
    });
  },

  // Legacy `permission` maps maintain→write and triage→read; `role_name` keeps the real role.
  "repos/get-collaborator-permission-level": async (ctx) => {
    const repo = repoOf(ctx);
    const user = ctx.core.state.users.get(ctx.params.username!);
    if (!user) throw new HttpError(404, `${ctx.params.username} is not a user`, ctx.doc);
    const role = user.id === repo.owner.id ? "admin" : repo.collaborators.get(user.login);
    const permission = role === "admin" ? "admin" : role === "maintain" || role === "write" ? "write" : role ? "read" : "none";
    const rank = ["read", "triage", "write", "maintain", "admin"].indexOf(role ?? "");
    return ok({
      permission,
      role_name: role ?? "none",
      user: {
        ...ctx.core.model.user(user),
        permissions: { admin: rank >= 4, maintain: rank >= 3, push: rank >= 2, triage: rank >= 1, pull: rank >= 0 },
        role_name: role ?? "none",
      },
    });
  },

  // docs.github.com/rest/commits/statuses
  "repos/create-commit-status": async (ctx) => {
    const repo = repoOf(ctx);
    const sha = ctx.params.sha!;
    if ((await git.objectType(repo.gitDir, sha)) !== "commit") throw invalid(ctx, `No commit found for SHA: ${sha}`);
    const b = ctx.body!;
    const t = now();
    const s = {
      id: ctx.core.state.id(),
      repoId: repo.id,
      sha,
      state: str(b, "state") as "success",
      context: str(b, "context") ?? "default",
      description: str(b, "description") ?? null,
      targetUrl: str(b, "target_url") ?? null,
      creator: ctx.actor,
      createdAt: t,
      updatedAt: t,
    };
    ctx.core.state.statuses.push(s);
    // The `status` webhook (docs.github.com/webhooks/webhook-events-and-payloads#status): the commit,
    // and the branches whose head it is.
    const base = `${ctx.core.model.api}/repos/${repo.owner.login}/${repo.name}`;
    const branches = [...(await git.listRefs(repo.gitDir, "refs/heads/"))]
      .filter(([, head]) => head === sha)
      .map(([ref]) => ({
        name: ref.slice(11),
        commit: { sha, url: `${base}/commits/${sha}` },
        protected: branchProtectionSummary(repo, ref.slice(11)).protected,
      }));
    const json = ctx.core.model.status(s);
    emit(ctx, "status", null, {
      id: s.id,
      sha,
      name: `${repo.owner.login}/${repo.name}`,
      target_url: s.targetUrl,
      context: s.context,
      description: s.description,
      state: s.state,
      commit: ctx.core.model.commit(repo, await git.readCommit(repo.gitDir, sha)),
      branches,
      created_at: s.createdAt,
      updated_at: s.updatedAt,
    });
    return ok(json, 201);
  },
  "repos/list-commit-statuses-for-ref": async (ctx) => {
    const repo = repoOf(ctx);
    const sha = await commitish(repo, ctx.params.ref!);
    const list = ctx.core.state.statuses.filter((s) => s.repoId === repo.id && s.sha === sha).reverse();
    return ok(ctx.page(list.map((s) => ctx.core.model.status(s))));
  },
  // Combined state: failure if any latest context is error/failure, pending if none or any pending,
  // success otherwise.
  "repos/get-combined-status-for-ref": async (ctx) => {
    const repo = repoOf(ctx);
    const sha = await commitish(repo, ctx.params.ref!);
    if (!sha) throw notFound(ctx);
    const latest = new Map<string, (typeof ctx.core.state.statuses)[number]>();
    for (const s of ctx.core.state.statuses) if (s.repoId === repo.id && s.sha === sha) latest.set(s.context, s);
    const list = [...latest.values()];
    const state = list.some((s) => s.state === "error" || s.state === "failure")
      ? "failure"
      : list.length === 0 || list.some((s) => s.state === "pending")
        ? "pending"
        : "success";
    const base = `${ctx.core.model.api}/repos/${repo.owner.login}/${repo.name}`;
    return ok({
      state,
      sha,
      total_count: list.length,
      statuses: list.map((s) => {
        const full = ctx.core.model.status(s);
        delete full.creator;
        return full;
      }),
      repository: ctx.core.model.minimalRepo(repo),
      commit_url: `${base}/commits/${sha}`,
      url: `${base}/commits/${sha}/status`,
    });
  },
};

function wrap64(b64: string): string {
  return (b64.match(/.{1,60}/g) ?? [""]).join("\n") + (b64.length ? "\n" : "");
}

function contentEntry(ctx: RestCtx, repo: Repo, ref: string, path: string, e: git.TreeEntry): Record<string, unknown> {
  const api = `${ctx.core.model.api}/repos/${repo.owner.login}/${repo.name}`;
  const web = `${ctx.core.baseUrl}/${repo.owner.login}/${repo.name}`;
  const type = e.type === "tree" ? "dir" : e.mode === "120000" ? "symlink" : e.type === "commit" ? "submodule" : "file";
  const url = `${api}/contents/${path}?ref=${encodeURIComponent(ref)}`;
  const gitUrl = `${api}/git/${e.type === "tree" ? "trees" : "blobs"}/${e.sha}`;
  const html = `${web}/${e.type === "tree" ? "tree" : "blob"}/${ref}/${path}`;
  return {
    type,
    size: e.size ?? 0,
    name: path.split("/").pop() ?? path,
    path,
    sha: e.sha,
    url,
    git_url: gitUrl,
    html_url: html,
    download_url: type === "file" ? `${ctx.core.baseUrl}/raw/${repo.owner.login}/${repo.name}/${ref}/${path}` : null,
    _links: { self: url, git: gitUrl, html },
  };
}

function diffEntry(ctx: RestCtx, repo: Repo, f: git.FileDiff, ref: string): Record<string, unknown> {
  const web = `${ctx.core.baseUrl}/${repo.owner.login}/${repo.name}`;
  return {
    sha: f.sha,
    filename: f.filename,
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

// ---------------------------------------------------------------- git database

const gitdb: Record<string, Handler> = {
  // docs.github.com/rest/git/blobs
  "git/create-blob": async (ctx) => {
    const repo = repoOf(ctx);
    const b = ctx.body!;
    const enc = str(b, "encoding") ?? "utf-8";
    if (enc !== "utf-8" && enc !== "utf8" && enc !== "base64") throw invalid(ctx, `encoding must be 'utf-8' or 'base64'`);
    const sha = await git.hashBlob(repo.gitDir, Buffer.from(str(b, "content") ?? "", enc === "base64" ? "base64" : "utf8"));
    return ok({ url: `${ctx.core.model.api}/repos/${repo.owner.login}/${repo.name}/git/blobs/${sha}`, sha }, 201);
  },
  "git/get-blob": async (ctx) => {
    const repo = repoOf(ctx);
    const sha = ctx.params.file_sha!;
    if ((await git.objectType(repo.gitDir, sha)) !== "blob") throw notFound(ctx);
    const data = await git.readBlob(repo.gitDir, sha);
    return ok({
      content: wrap64(data.toString("base64")),
      encoding: "base64",
      url: `${ctx.core.model.api}/repos/${repo.owner.login}/${repo.name}/git/blobs/${sha}`,
      sha,
      size: data.length,
      node_id: Buffer.from(`Blob:${sha}`).toString("base64"),
    });
  },

  // docs.github.com/rest/git/trees: entries with `content` create blobs; `sha: null` deletes.
  "git/create-tree": async (ctx) => {
    const repo = repoOf(ctx);
    const b = ctx.body!;
    const baseTree = str(b, "base_tree");
    if (baseTree && (await git.objectType(repo.gitDir, baseTree)) !== "tree") throw invalid(ctx, "base_tree is not a valid tree oid");
    const changes: git.TreeChange[] = [];
    for (const e of (b.tree as Array<Record<string, unknown>>) ?? []) {
      const path = String(e.path ?? "");
      const mode = String(e.mode ?? "100644");
      if (!path || path.startsWith("/") || path.endsWith("/"))
        throw invalid(ctx, "GitHub.Tree.InvalidPath", [{ resource: "Tree", field: "path", code: "invalid" }]);
      if (typeof e.content === "string") {
        changes.push({ path, mode, sha: await git.hashBlob(repo.gitDir, Buffer.from(e.content)) });
      } else if (e.sha === null) {
        changes.push({ path, sha: null });
      } else if (typeof e.sha === "string") {
        const type = await git.objectType(repo.gitDir, e.sha);
        if (!type) throw invalid(ctx, `tree.sha ${e.sha} is not a valid ${String(e.type ?? "blob")}`);
        if (type === "tree") {
          changes.push({ path, sha: null });
          for (const sub of await git.lsTree(repo.gitDir, e.sha, true))
            if (sub.type !== "tree") changes.push({ path: `${path}/${sub.path}`, mode: sub.mode, sha: sub.sha });
        } else changes.push({ path, mode, sha: e.sha });
      } else
        throw invalid(ctx, "Must supply either tree.sha or tree.content", [{ resource: "Tree", field: "tree", code: "missing_field" }]);
    }
    const sha = await git.buildTree(repo.gitDir, baseTree, changes);
    return ok(await treeJson(ctx, repo, sha, false), 201);
  },
  "git/get-tree": async (ctx) => {
    const repo = repoOf(ctx);
    let sha = ctx.params.tree_sha!;
    const t = await git.objectType(repo.gitDir, sha);
    if (t === "commit") sha = (await git.readCommit(repo.gitDir, sha)).tree;
    else if (t !== "tree") {
      const c = await commitish(repo, sha);
      if (!c) throw notFound(ctx);
      sha = (await git.readCommit(repo.gitDir, c)).tree;
    }
    const recursive = ctx.query.has("recursive") && !["0", "false"].includes(ctx.query.get("recursive")!);
    return ok(await treeJson(ctx, repo, sha, recursive));
  },

  // docs.github.com/rest/git/commits
  "git/create-commit": async (ctx) => {
    const repo = repoOf(ctx);
    const b = ctx.body!;
    const tree = str(b, "tree")!;
    if ((await git.objectType(repo.gitDir, tree)) !== "tree") throw invalid(ctx, "Tree SHA does not exist");
    const parents = (b.parents as string[] | undefined) ?? [];
    for (const p of parents)
      if ((await git.objectType(repo.gitDir, p)) !== "commit") throw invalid(ctx, "Parent SHA does not exist or is not a commit object");
    const author = identity(ctx, b.author);
    const committer = b.committer ? identity(ctx, b.committer) : author;
    const sha = await git.commitTree(repo.gitDir, tree, parents, str(b, "message")!, author, committer);
    return ok(ctx.core.model.gitCommit(repo, await git.readCommit(repo.gitDir, sha)), 201);
  },
  "git/get-commit": async (ctx) => {
    const repo = repoOf(ctx);
    const sha = ctx.params.commit_sha!;
    if ((await git.objectType(repo.gitDir, sha)) !== "commit") throw notFound(ctx);
    return ok(ctx.core.model.gitCommit(repo, await git.readCommit(repo.gitDir, sha)));
  },

  // docs.github.com/rest/git/refs
  "git/get-ref": async (ctx) => {
    const repo = repoOf(ctx);
    const ref = `refs/${ctx.params.ref}`;
    const refs = await git.listRefs(repo.gitDir, ref);
    const sha = refs.get(ref);
    if (!sha) throw notFound(ctx);
    return ok(ctx.core.model.ref(repo, ref, sha));
  },
  "git/list-matching-refs": async (ctx) => {
    const repo = repoOf(ctx);
    const prefix = `refs/${ctx.params.ref}`;
    const refs = await git.listRefs(repo.gitDir, "refs/");
    return ok([...refs].filter(([r]) => r.startsWith(prefix)).map(([r, s]) => ctx.core.model.ref(repo, r, s)));
  },
  "git/create-ref": async (ctx) => {
    const repo = repoOf(ctx);
    const ref = str(ctx.body, "ref")!;
    const sha = str(ctx.body, "sha")!;
    // "The name of the fully qualified reference (ie: refs/heads/master). If it doesn't start with
    // 'refs' and have at least two slashes, it will be rejected."
    if (!ref.startsWith("refs/") || ref.split("/").length < 3) throw invalid(ctx, `${ref} is not a valid ref name.`);
    if ((await git.objectType(repo.gitDir, sha)) !== "commit" && !ref.startsWith("refs/tags/")) throw invalid(ctx, "Object does not exist");
    if (!(await moveRef(ctx, repo, ref, sha, null))) throw invalid(ctx, "Reference already exists");
    return ok(ctx.core.model.ref(repo, ref, sha), 201);
  },
  // A non-forced update must fast-forward ("Update is not a fast forward", 422); this is what makes
  // a commit whose parent is the tip that was read a compare-and-swap.
  "git/update-ref": async (ctx) => {
    const repo = repoOf(ctx);
    const ref = `refs/${ctx.params.ref}`;
    const sha = str(ctx.body, "sha")!;
    const force = ctx.body?.force === true;
    if ((await git.objectType(repo.gitDir, sha)) !== "commit") throw invalid(ctx, "Object does not exist");
    for (let attempt = 0; attempt < 5; attempt++) {
      const cur = (await git.listRefs(repo.gitDir, ref)).get(ref);
      if (!cur) throw invalid(ctx, "Reference does not exist");
      if (cur === sha) return ok(ctx.core.model.ref(repo, ref, sha));
      if (!force && !(await git.isAncestor(repo.gitDir, cur, sha))) throw invalid(ctx, "Update is not a fast forward");
      const fastForward = (): Promise<boolean> => git.isAncestor(repo.gitDir, cur, sha);
      if (await moveRef(ctx, repo, ref, sha, cur, fastForward)) return ok(ctx.core.model.ref(repo, ref, sha));
    }
    throw invalid(ctx, "Update is not a fast forward");
  },
  "git/delete-ref": async (ctx) => {
    const repo = repoOf(ctx);
    const ref = `refs/${ctx.params.ref}`;
    const cur = (await git.listRefs(repo.gitDir, ref)).get(ref);
    if (!cur) throw invalid(ctx, "Reference does not exist");
    await enforceRules(repo, { ref, before: cur, after: null }, act(ctx), ctx.doc);
    await enforceProtection(repo, { ref, before: cur, after: null }, act(ctx), ctx.doc);
    if (!(await git.deleteRef(repo.gitDir, ref, cur))) throw invalid(ctx, "Reference cannot be deleted");
    await ctx.core.refsChanged(repo, [{ ref, before: cur, after: null }], act(ctx));
    return { status: 204 };
  },
};

async function treeJson(ctx: RestCtx, repo: Repo, sha: string, recursive: boolean): Promise<Record<string, unknown>> {
  const api = `${ctx.core.model.api}/repos/${repo.owner.login}/${repo.name}`;
  const entries = await git.lsTree(repo.gitDir, sha, recursive);
  return {
    sha,
    url: `${api}/git/trees/${sha}`,
    tree: entries.map((e) => ({
      path: e.path,
      mode: e.mode,
      type: e.type,
      sha: e.sha,
      ...(e.type === "blob" ? { size: e.size ?? 0 } : {}),
      url: `${api}/git/${e.type === "tree" ? "trees" : "blobs"}/${e.sha}`,
    })),
    truncated: false,
  };
}

// ---------------------------------------------------------------- pull requests

function pullOf(ctx: RestCtx): Issue {
  const repo = repoOf(ctx);
  const i = ctx.core.state.issue(repo.id, Number(ctx.params.pull_number));
  if (!i?.pull) throw notFound(ctx);
  return i;
}

function newIssue(ctx: RestCtx, repo: Repo, title: string, body: string | null): Issue {
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

const pulls: Record<string, Handler> = {
  // docs.github.com/rest/pulls/pulls#create-a-pull-request
  "pulls/create": async (ctx) => {
    const repo = repoOf(ctx);
    const b = ctx.body!;
    const headSpec = str(b, "head")!;
    const headName = headSpec.replace(/^[^:]+:/, "");
    const headOwner = headSpec.includes(":") ? headSpec.slice(0, headSpec.indexOf(":")) : repo.owner.login;
    const baseName = str(b, "base")!;
    checkBodyLength(ctx, "PullRequest", str(b, "body"));
    // `head` as `owner:branch` names a branch of a fork of this repository (same network).
    const headRepo =
      headOwner.toLowerCase() === repo.owner.login.toLowerCase()
        ? repo
        : [...ctx.core.state.repos.values()].find((r) => r.forkOf === repo.id && r.owner.login.toLowerCase() === headOwner.toLowerCase());
    const head = headRepo ? await git.resolveRef(headRepo.gitDir, `refs/heads/${headName}`) : undefined;
    const base = await git.resolveRef(repo.gitDir, `refs/heads/${baseName}`);
    if (!head || !headRepo) throw invalid(ctx, "Validation Failed", [{ resource: "PullRequest", field: "head", code: "invalid" }]);
    if (!base) throw invalid(ctx, "Validation Failed", [{ resource: "PullRequest", field: "base", code: "invalid" }]);
    const headRepoId = headRepo === repo ? undefined : headRepo.id;
    for (const i of ctx.core.state.issuesOf(repo.id)) {
      if (i.pull && i.state === "open" && i.pull.headRepoId === headRepoId && i.pull.headRef === headName && i.pull.baseRef === baseName) {
        throw invalid(ctx, "Validation Failed", [
          { resource: "PullRequest", code: "custom", message: `A pull request already exists for ${headRepo.owner.login}:${headName}.` },
        ]);
      }
    }
    if (headRepo !== repo)
      // The fork's commits, fetched to the base repository's refs/pull/<n>/head below, are needed first here.
      await git.runGit(repo.gitDir, ["fetch", "--quiet", headRepo.gitDir, `+refs/heads/${headName}:refs/forge-sim/incoming`]);
    if (await git.isAncestor(repo.gitDir, head, base)) {
      throw invalid(ctx, "Validation Failed", [
        { resource: "PullRequest", code: "custom", message: `No commits between ${baseName} and ${headName}` },
      ]);
    }
    const issue = newIssue(ctx, repo, str(b, "title") ?? headName, str(b, "body") ?? null);
    issue.pull = {
      ...(headRepoId !== undefined ? { headRepoId } : {}),
      headRef: headName,
      headSha: head,
      baseRef: baseName,
      baseSha: base,
      draft: b.draft === true,
      merged: false,
      mergedAt: null,
      mergedBy: null,
      mergeCommitSha: null,
      maintainerCanModify: b.maintainer_can_modify !== false,
    };
    if (headRepoId !== undefined) {
      await ctx.core.fetchPullHead(repo, issue);
      await git.deleteRef(repo.gitDir, "refs/forge-sim/incoming");
    }
    const payload = await ctx.core.pullPayload(repo, issue);
    emit(ctx, "pull_request", "opened", { number: issue.number, pull_request: payload });
    return ok(payload, 201);
  },
  "pulls/list": async (ctx) => {
    const repo = repoOf(ctx);
    const state = ctx.query.get("state") ?? "open";
    const head = ctx.query.get("head");
    const base = ctx.query.get("base");
    let list = ctx.core.state.issuesOf(repo.id).filter((i) => i.pull && (state === "all" || i.state === state));
    if (head) {
      const [owner, branch] = head.includes(":") ? head.split(":") : [repo.owner.login, head];
      const headOwner = (i: Issue) =>
        i.pull!.headRepoId !== undefined ? ctx.core.state.repos.get(i.pull!.headRepoId)?.owner.login : repo.owner.login;
      list = list.filter((i) => owner === headOwner(i) && i.pull!.headRef === branch);
    }
    if (base) list = list.filter((i) => i.pull!.baseRef === base);
    const sort = ctx.query.get("sort") ?? "created";
    // "Default: desc when sort is created or sort is not specified, otherwise asc."
    const dir = ctx.query.get("direction") ?? (sort === "created" ? "desc" : "asc");
    const key = (i: Issue) => (sort === "updated" ? i.updatedAt : i.createdAt) + String(i.number).padStart(9, "0");
    list.sort((a, b) => (dir === "asc" ? key(a).localeCompare(key(b)) : key(b).localeCompare(key(a))));
    return ok(ctx.page(list).map((i) => ctx.core.model.pull(repo, i, { full: false })));
  },
  "pulls/get": async (ctx) => ok(await ctx.core.pullPayload(repoOf(ctx), pullOf(ctx))),
  "pulls/update": async (ctx) => {
    const repo = repoOf(ctx);
    const issue = pullOf(ctx);
    const b = ctx.body ?? {};
    checkBodyLength(ctx, "PullRequest", str(b, "body"));
    const changes: Record<string, unknown> = {};
    if (str(b, "title") !== undefined && b.title !== issue.title) {
      changes.title = { from: issue.title };
      issue.title = str(b, "title")!;
    }
    if ("body" in b && b.body !== issue.body) {
      changes.body = { from: issue.body ?? "" };
      issue.body = (b.body as string | null) ?? null;
    }
    if (str(b, "base") && b.base !== issue.pull!.baseRef) {
      const sha = await git.resolveRef(repo.gitDir, `refs/heads/${str(b, "base")}`);
      if (!sha) throw invalid(ctx, "Validation Failed", [{ resource: "PullRequest", field: "base", code: "invalid" }]);
      changes.base = { ref: { from: issue.pull!.baseRef }, sha: { from: issue.pull!.baseSha } };
      issue.pull!.baseRef = str(b, "base")!;
      issue.pull!.baseSha = sha;
    }
    if (typeof b.maintainer_can_modify === "boolean") issue.pull!.maintainerCanModify = b.maintainer_can_modify;
    issue.updatedAt = now();
    if (Object.keys(changes).length)
      emit(ctx, "pull_request", "edited", { number: issue.number, changes, pull_request: await ctx.core.pullPayload(repo, issue) });
    const state = str(b, "state");
    if (state && state !== issue.state) {
      if (issue.pull!.merged)
        throw invalid(ctx, "Validation Failed", [
          { resource: "PullRequest", code: "custom", message: "Cannot change state of a merged pull request" },
        ]);
      setIssueState(ctx, issue, state as "open" | "closed", null);
      emit(ctx, "pull_request", state === "closed" ? "closed" : "reopened", {
        number: issue.number,
        pull_request: await ctx.core.pullPayload(repo, issue),
      });
    }
    return ok(await ctx.core.pullPayload(repo, issue));
  },
  // docs.github.com/rest/pulls/pulls#merge-a-pull-request: 405 when it cannot be merged (also
  // "Base branch was modified" when a concurrent merge moved the base), 409 when `sha` is not the head.
  "pulls/merge": async (ctx) => {
    const repo = repoOf(ctx);
    const issue = pullOf(ctx);
    const p = issue.pull!;
    const b = ctx.body ?? {};
    if (p.merged) throw new HttpError(405, "Pull Request is not mergeable", ctx.doc);
    if (issue.state !== "open") throw new HttpError(405, "Pull Request is not mergeable", ctx.doc);
    if (p.draft) throw new HttpError(405, "Pull Request is still a draft", ctx.doc);
    const head = p.headRepoId !== undefined ? p.headSha : await git.resolveRef(repo.gitDir, `refs/heads/${p.headRef}`);
    if (!head) throw new HttpError(405, "Pull Request is not mergeable", ctx.doc);
    if (str(b, "sha") && str(b, "sha") !== p.headSha)
      throw new HttpError(409, "Head branch was modified. Review and try the merge again.", ctx.doc);
    const method = str(b, "merge_method") ?? "merge";
    const baseRef = `refs/heads/${p.baseRef}`;
    const base = await git.resolveRef(repo.gitDir, baseRef);
    if (!base) throw new HttpError(405, "Pull Request is not mergeable", ctx.doc);
    await enforceRules(repo, { ref: baseRef, before: base, after: p.headSha }, act(ctx), ctx.doc, 405);
    // Branch protection: approving reviews and required status checks (405).
    enforceProtectionOnMerge(ctx.core, repo, issue, act(ctx), ctx.doc);
    const tree = await git.mergeTrees(repo.gitDir, base, p.headSha);
    if (!tree) throw new HttpError(405, "Pull Request is not mergeable", ctx.doc);
    const who = identity(ctx, undefined);
    let sha: string;
    if (method === "merge") {
      const title = str(b, "commit_title") ?? `Merge pull request #${issue.number} from ${repo.owner.login}/${p.headRef}`;
      const message = `${title}\n\n${str(b, "commit_message") ?? issue.title}\n`;
      sha = await git.commitTree(repo.gitDir, tree, [base, p.headSha], message, who, who);
    } else if (method === "squash") {
      const title = str(b, "commit_title") ?? `${issue.title} (#${issue.number})`;
      sha = await git.commitTree(repo.gitDir, tree, [base], `${title}\n\n${str(b, "commit_message") ?? ""}`.trimEnd() + "\n", who, who);
    } else {
      // Rebase replays the head's commits on the base; the simulator supports the linear case.
      const mb = await git.mergeBase(repo.gitDir, base, p.headSha);
      if (mb !== base) throw new HttpError(405, "This branch can't be rebased", ctx.doc);
      sha = base;
      for (const c of await git.revList(repo.gitDir, base, p.headSha)) {
        const info = await git.readCommit(repo.gitDir, c);
        if (info.parents.length > 1) throw new HttpError(405, "This branch can't be rebased", ctx.doc);
        sha = await git.commitTree(repo.gitDir, info.tree, [sha], info.message, info.author, who);
      }
    }
    // Another merge moved the base meanwhile: GitHub answers 405 with this message (not 409, which
    // is only for a `sha` that is not the head), and the merge may simply be tried again.
    if (!(await git.updateRef(repo.gitDir, baseRef, sha, base)))
      throw new HttpError(405, "Base branch was modified. Review and try the merge again.", ctx.doc);
    p.mergeCommitSha = sha;
    // The ref change emits push; the PR is then marked merged (closed with merged: true).
    await ctx.core.refsChanged(repo, [{ ref: baseRef, before: base, after: sha }], act(ctx));
    if (!p.merged) await ctx.core.markMerged(repo, issue, act(ctx), sha);
    else p.mergeCommitSha = sha;
    return ok({ sha, merged: true, message: "Pull Request successfully merged" });
  },
  "pulls/list-files": async (ctx) => {
    const repo = repoOf(ctx);
    const issue = pullOf(ctx);
    const p = issue.pull!;
    const files = await git.pullRequestFiles(repo.gitDir, p);
    return ok(ctx.page(files.map((f) => diffEntry(ctx, repo, f, p.headSha))));
  },
};

function setIssueState(ctx: RestCtx, issue: Issue, state: "open" | "closed", reason: string | null): void {
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

// ---------------------------------------------------------------- issues, comments, labels, reactions

function issueOf(ctx: RestCtx, n = ctx.params.issue_number): Issue {
  const repo = repoOf(ctx);
  const i = ctx.core.state.issue(repo.id, Number(n));
  if (!i) throw notFound(ctx);
  return i;
}

/** Issue events on a PR are pull_request events (labeled/unlabeled), issues events otherwise. */
async function emitIssueEvent(ctx: RestCtx, issue: Issue, action: string, extra: Record<string, unknown> = {}): Promise<void> {
  const repo = repoOf(ctx);
  if (issue.pull) {
    if (["labeled", "unlabeled", "edited", "closed", "reopened"].includes(action)) {
      emit(ctx, "pull_request", action, { number: issue.number, pull_request: await ctx.core.pullPayload(repo, issue), ...extra });
    }
    return;
  }
  emit(ctx, "issues", action, { issue: ctx.core.model.issue(repo, issue), ...extra });
}

function ensureLabel(ctx: RestCtx, repo: Repo, name: string): Label {
  let l = repo.labels.get(name);
  if (!l) {
    l = { id: ctx.core.state.id(), name, color: "ededed", description: null, default: false };
    repo.labels.set(name, l);
  }
  return l;
}

async function addLabels(ctx: RestCtx, issue: Issue, names: string[]): Promise<void> {
  const repo = repoOf(ctx);
  for (const n of names) {
    if (issue.labels.includes(n)) continue;
    const l = ensureLabel(ctx, repo, n);
    issue.labels.push(n);
    issue.updatedAt = now();
    await emitIssueEvent(ctx, issue, "labeled", { label: ctx.core.model.label(repo, l) });
  }
}

async function removeLabel(ctx: RestCtx, issue: Issue, name: string): Promise<void> {
  const repo = repoOf(ctx);
  issue.labels = issue.labels.filter((x) => x !== name);
  issue.updatedAt = now();
  const l = repo.labels.get(name);
  await emitIssueEvent(ctx, issue, "unlabeled", l ? { label: ctx.core.model.label(repo, l) } : {});
}

function labelNames(body: Record<string, unknown> | undefined): string[] {
  const raw = (body?.labels ?? []) as Array<string | { name: string }>;
  return raw.map((l) => (typeof l === "string" ? l : l.name));
}

const issues: Record<string, Handler> = {
  // docs.github.com/rest/issues/issues
  "issues/create": async (ctx) => {
    const repo = repoOf(ctx);
    const b = ctx.body!;
    const title = b.title === undefined ? "" : String(b.title);
    if (!title) throw invalid(ctx, "Validation Failed", [{ resource: "Issue", field: "title", code: "missing_field" }]);
    checkBodyLength(ctx, "Issue", str(b, "body"));
    const issue = newIssue(ctx, repo, title, str(b, "body") ?? null);
    for (const n of labelNames(b)) {
      ensureLabel(ctx, repo, n);
      issue.labels.push(n);
    }
    for (const a of (b.assignees as string[] | undefined) ?? []) {
      const u = ctx.core.state.users.get(a);
      if (u) issue.assignees.push(u);
    }
    emit(ctx, "issues", "opened", { issue: ctx.core.model.issue(repo, issue) });
    return ok(ctx.core.model.issue(repo, issue), 201);
  },
  "issues/get": async (ctx) => ok(ctx.core.model.issue(repoOf(ctx), issueOf(ctx))),
  "issues/update": async (ctx) => {
    const repo = repoOf(ctx);
    const issue = issueOf(ctx);
    const b = ctx.body ?? {};
    // A person with triage access may close, reopen and label it; another's title or body takes write access.
    if (("title" in b || "body" in b) && ctx.token?.kind === "user" && issue.user.id !== ctx.actor.id && !roleAtLeastWrite(ctx))
      throw new HttpError(403, "Must have push access to repository", ctx.doc);
    checkBodyLength(ctx, "Issue", str(b, "body"));
    const changes: Record<string, unknown> = {};
    if (typeof b.title === "string" && b.title !== issue.title) {
      changes.title = { from: issue.title };
      issue.title = b.title;
    }
    if ("body" in b && b.body !== issue.body) {
      changes.body = { from: issue.body ?? "" };
      issue.body = (b.body as string | null) ?? null;
    }
    if (Object.keys(changes).length) {
      issue.updatedAt = now();
      await emitIssueEvent(ctx, issue, "edited", { changes });
    }
    if (Array.isArray(b.assignees))
      issue.assignees = (b.assignees as string[]).map((a) => ctx.core.state.users.get(a)).filter((u): u is User => !!u);
    if (Array.isArray(b.labels)) {
      const want = labelNames(b);
      for (const old of [...issue.labels]) if (!want.includes(old)) await removeLabel(ctx, issue, old);
      await addLabels(ctx, issue, want);
    }
    const state = str(b, "state");
    if (state && state !== issue.state) {
      if (issue.pull?.merged)
        throw invalid(ctx, "Validation Failed", [
          { resource: "Issue", code: "custom", message: "Cannot change state of a merged pull request" },
        ]);
      setIssueState(ctx, issue, state as "open" | "closed", str(b, "state_reason") ?? null);
      await emitIssueEvent(ctx, issue, state === "closed" ? "closed" : "reopened");
    }
    return ok(ctx.core.model.issue(repo, issue));
  },
  "issues/list-for-repo": async (ctx) => {
    const repo = repoOf(ctx);
    const state = ctx.query.get("state") ?? "open";
    const labels = ctx.query.get("labels")?.split(",").filter(Boolean) ?? [];
    const creator = ctx.query.get("creator");
    const since = ctx.query.get("since");
    let list = ctx.core.state.issuesOf(repo.id).filter((i) => state === "all" || i.state === state);
    list = list.filter((i) => labels.every((l) => i.labels.includes(l)));
    if (creator) list = list.filter((i) => i.user.login === creator);
    if (since) list = list.filter((i) => i.updatedAt >= since);
    const sort = ctx.query.get("sort") ?? "created";
    const dir = ctx.query.get("direction") ?? "desc";
    const key = (i: Issue) =>
      (sort === "updated" ? i.updatedAt : sort === "comments" ? String(i.comments).padStart(9, "0") : i.createdAt) +
      String(i.number).padStart(9, "0");
    list.sort((a, b) => (dir === "asc" ? key(a).localeCompare(key(b)) : key(b).localeCompare(key(a))));
    return ok(ctx.page(list).map((i) => ctx.core.model.issue(repo, i)));
  },

  // docs.github.com/rest/issues/comments
  "issues/create-comment": async (ctx) => {
    const repo = repoOf(ctx);
    const issue = issueOf(ctx);
    const body = str(ctx.body, "body")!;
    checkBodyLength(ctx, "IssueComment", body);
    if (issue.locked && roleAtLeastWrite(ctx) === false)
      throw new HttpError(403, "Unable to create comment because issue is locked.", ctx.doc);
    const t = now();
    const c: Comment = {
      id: ctx.core.state.id(),
      repoId: repo.id,
      issueNumber: issue.number,
      body,
      user: ctx.actor,
      createdAt: t,
      updatedAt: t,
      viaAppId: ctx.token?.appId,
      reactions: [],
    };
    ctx.core.state.comments.set(c.id, c);
    issue.comments++;
    issue.updatedAt = t;
    emit(ctx, "issue_comment", "created", { issue: ctx.core.model.issue(repo, issue), comment: ctx.core.model.comment(repo, c) });
    return ok(ctx.core.model.comment(repo, c), 201);
  },
  "issues/list-comments": async (ctx) => {
    const repo = repoOf(ctx);
    const issue = issueOf(ctx);
    const since = ctx.query.get("since");
    const list = [...ctx.core.state.comments.values()].filter(
      (c) => c.repoId === repo.id && c.issueNumber === issue.number && (!since || c.updatedAt >= since),
    );
    return ok(ctx.page(list).map((c) => ctx.core.model.comment(repo, c)));
  },
  "issues/get-comment": async (ctx) => ok(ctx.core.model.comment(repoOf(ctx), commentOf(ctx))),
  "issues/update-comment": async (ctx) => {
    const repo = repoOf(ctx);
    const c = commentOf(ctx);
    const body = str(ctx.body, "body")!;
    checkBodyLength(ctx, "IssueComment", body);
    if (ctx.token?.kind === "user" && c.user.id !== ctx.actor.id && !roleAtLeastWrite(ctx))
      throw new HttpError(403, "Must have admin rights to Repository.", ctx.doc);
    const from = c.body;
    c.body = body;
    c.updatedAt = now();
    const issue = ctx.core.state.issue(repo.id, c.issueNumber)!;
    if (from !== body)
      emit(ctx, "issue_comment", "edited", {
        changes: { body: { from } },
        issue: ctx.core.model.issue(repo, issue),
        comment: ctx.core.model.comment(repo, c),
      });
    return ok(ctx.core.model.comment(repo, c));
  },
  "issues/delete-comment": async (ctx) => {
    const repo = repoOf(ctx);
    const c = commentOf(ctx);
    ctx.core.state.comments.delete(c.id);
    const issue = ctx.core.state.issue(repo.id, c.issueNumber)!;
    issue.comments--;
    emit(ctx, "issue_comment", "deleted", { issue: ctx.core.model.issue(repo, issue), comment: ctx.core.model.comment(repo, c) });
    return { status: 204 };
  },

  // docs.github.com/rest/issues/labels — adding an unknown label creates it.
  "issues/add-labels": async (ctx) => {
    const repo = repoOf(ctx);
    const issue = issueOf(ctx);
    await addLabels(ctx, issue, labelNames(ctx.body));
    return ok(issue.labels.map((n) => ctx.core.model.label(repo, repo.labels.get(n)!)));
  },
  "issues/set-labels": async (ctx) => {
    const repo = repoOf(ctx);
    const issue = issueOf(ctx);
    const want = labelNames(ctx.body);
    for (const old of [...issue.labels]) if (!want.includes(old)) await removeLabel(ctx, issue, old);
    await addLabels(ctx, issue, want);
    return ok(issue.labels.map((n) => ctx.core.model.label(repo, repo.labels.get(n)!)));
  },
  "issues/remove-label": async (ctx) => {
    const repo = repoOf(ctx);
    const issue = issueOf(ctx);
    if (!issue.labels.includes(ctx.params.name!)) throw new HttpError(404, "Label does not exist", ctx.doc);
    await removeLabel(ctx, issue, ctx.params.name!);
    return ok(issue.labels.map((n) => ctx.core.model.label(repo, repo.labels.get(n)!)));
  },
  "issues/list-labels-on-issue": async (ctx) => {
    const repo = repoOf(ctx);
    return ok(ctx.page(issueOf(ctx).labels.map((n) => ctx.core.model.label(repo, repo.labels.get(n)!))));
  },
  "issues/create-label": async (ctx) => {
    const repo = repoOf(ctx);
    const name = str(ctx.body, "name")!;
    if (repo.labels.has(name)) throw invalid(ctx, "Validation Failed", [{ resource: "Label", code: "already_exists", field: "name" }]);
    // Recorded from GitHub (@octokit/fixtures "errors"): a color that is not 6 hex digits is invalid.
    const color = str(ctx.body, "color");
    if (color !== undefined && !/^#?[0-9a-fA-F]{6}$/.test(color))
      throw invalid(ctx, "Validation Failed", [{ resource: "Label", code: "invalid", field: "color" }]);
    const l: Label = {
      id: ctx.core.state.id(),
      name,
      color: (str(ctx.body, "color") ?? "ededed").replace(/^#/, ""),
      description: str(ctx.body, "description") ?? null,
      default: false,
    };
    repo.labels.set(name, l);
    return ok(ctx.core.model.label(repo, l), 201);
  },
  "issues/get-label": async (ctx) => {
    const repo = repoOf(ctx);
    const l = repo.labels.get(ctx.params.name!);
    if (!l) throw notFound(ctx);
    return ok(ctx.core.model.label(repo, l));
  },
  "issues/list-labels-for-repo": async (ctx) => {
    const repo = repoOf(ctx);
    return ok(ctx.page([...repo.labels.values()].map((l) => ctx.core.model.label(repo, l))));
  },

  // docs.github.com/rest/reactions: 201 when created, 200 when the same reaction already exists.
  "reactions/create-for-issue": async (ctx) => {
    const repo = repoOf(ctx);
    const issue = issueOf(ctx);
    const key = `${repo.id}#${issue.number}`;
    const list = ctx.core.model.issueReactions.get(key) ?? [];
    ctx.core.model.issueReactions.set(key, list);
    return react(ctx, list);
  },
  "reactions/create-for-issue-comment": async (ctx) => react(ctx, commentOf(ctx).reactions),
  "reactions/list-for-issue-comment": async (ctx) => {
    const content = ctx.query.get("content");
    return ok(
      ctx.page(
        commentOf(ctx)
          .reactions.filter((r) => !content || r.content === content)
          .map((r) => ctx.core.model.reaction(r)),
      ),
    );
  },
};

function roleAtLeastWrite(ctx: RestCtx): boolean {
  if (ctx.token?.kind !== "user") return true;
  const repo = repoOf(ctx);
  const role = ctx.actor.id === repo.owner.id ? "admin" : repo.collaborators.get(ctx.actor.login);
  return role === "write" || role === "maintain" || role === "admin";
}

function commentOf(ctx: RestCtx): Comment {
  const repo = repoOf(ctx);
  const c = ctx.core.state.comments.get(Number(ctx.params.comment_id));
  if (!c || c.repoId !== repo.id) throw notFound(ctx);
  return c;
}

async function react(ctx: RestCtx, list: Reaction[]): Promise<Result> {
  const content = str(ctx.body, "content")!;
  const existing = list.find((r) => r.user.id === ctx.actor.id && r.content === content);
  if (existing) return ok(ctx.core.model.reaction(existing), 200);
  const r: Reaction = { id: ctx.core.state.id(), user: ctx.actor, content, createdAt: now() };
  list.push(r);
  return ok(ctx.core.model.reaction(r), 201);
}

// ---------------------------------------------------------------- checks

/**
 * docs.github.com/rest/checks: "Write permission for the Checks API is only available to GitHub
 * Apps"; a check run can only be updated by the App that created it; `rerequested` and
 * `requested_action` are sent only to that App.
 */
function checkApp(ctx: RestCtx): number {
  const appId = ctx.token?.appId;
  if (ctx.token?.kind === "workflow") return ctx.token.appId!;
  if (!appId) throw new HttpError(403, "You must authenticate via a GitHub App.", ctx.doc);
  return appId;
}

function runOf(ctx: RestCtx): CheckRun {
  const repo = repoOf(ctx);
  const r = ctx.core.state.checkRuns.get(Number(ctx.params.check_run_id));
  if (!r || r.repoId !== repo.id) throw notFound(ctx);
  return r;
}

function applyRunFields(ctx: RestCtx, run: CheckRun, b: Record<string, unknown>): void {
  if (str(b, "name")) run.name = str(b, "name")!;
  if ("details_url" in b) run.detailsUrl = (b.details_url as string | null) ?? null;
  if ("external_id" in b) run.externalId = (b.external_id as string | null) ?? null;
  if (str(b, "started_at")) run.startedAt = str(b, "started_at")!;
  if (str(b, "status")) run.status = str(b, "status") as CheckRun["status"];
  if (b.output) {
    const o = b.output as Record<string, unknown>;
    const added = Array.isArray(o.annotations) ? (o.annotations as Array<Record<string, unknown>>) : [];
    const annotations = added.length;
    run.annotations = [
      ...(run.annotations ?? []),
      ...added.map((a) => ({
        path: String(a.path ?? ""),
        startLine: Number(a.start_line ?? 1),
        endLine: Number(a.end_line ?? a.start_line ?? 1),
        level: (a.annotation_level as "notice" | "warning" | "failure") ?? "notice",
        message: String(a.message ?? ""),
        title: typeof a.title === "string" ? a.title : null,
      })),
    ];
    run.output = {
      title: (o.title as string) ?? run.output.title,
      summary: (o.summary as string) ?? run.output.summary,
      text: (o.text as string) ?? run.output.text,
      annotations_count: run.output.annotations_count + annotations,
    };
  }
  if (Array.isArray(b.actions)) run.actions = b.actions as CheckRun["actions"];
  // "Providing conclusion will automatically set the status parameter to completed."
  if (str(b, "conclusion")) {
    run.conclusion = str(b, "conclusion")!;
    run.status = "completed";
  }
  if (run.status === "completed") {
    run.completedAt = str(b, "completed_at") ?? run.completedAt ?? now();
    if (!run.conclusion) throw invalid(ctx, 'Invalid request.\n\nNo subschema in "anyOf" matched.\n"conclusion" wasn\'t supplied.');
  }
  if (run.status === "in_progress" && !run.startedAt) run.startedAt = now();
}

async function afterRunChange(ctx: RestCtx, run: CheckRun, wasCompleted: boolean, created: boolean): Promise<void> {
  const repo = repoOf(ctx);
  const prs = ctx.core.prsFor(repo, run.headSha);
  if (created) emit(ctx, "check_run", "created", { check_run: ctx.core.model.checkRunForHook(repo, run, prs) });
  if (run.status === "completed" && !wasCompleted) {
    emit(ctx, "check_run", "completed", { check_run: ctx.core.model.checkRunForHook(repo, run, prs) });
    const suite = ctx.core.state.suites.get(run.suiteId)!;
    const runs = [...ctx.core.state.checkRuns.values()].filter((r) => r.suiteId === suite.id);
    if (runs.every((r) => r.status === "completed")) {
      const order = ["action_required", "cancelled", "timed_out", "failure", "neutral", "skipped", "success"];
      suite.conclusion = runs.map((r) => r.conclusion ?? "neutral").sort((a, b) => order.indexOf(a) - order.indexOf(b))[0] ?? "neutral";
      if (suite.conclusion === "skipped") suite.conclusion = "success";
      suite.status = "completed";
      suite.updatedAt = now();
      emit(
        ctx,
        "check_suite",
        "completed",
        { check_suite: { ...ctx.core.model.suite(repo, suite, prs), head_commit: await ctx.core.headCommit(repo, suite.headSha) } },
        suite.appId,
      );
    }
  } else if (run.status !== "completed") {
    const suite = ctx.core.state.suites.get(run.suiteId)!;
    if (suite.status === "queued" && run.status === "in_progress") suite.status = "in_progress";
  }
}

const checks: Record<string, Handler> = {
  "checks/create": async (ctx) => {
    const repo = repoOf(ctx);
    const appId = checkApp(ctx);
    const b = ctx.body!;
    const headSha = str(b, "head_sha")!;
    if ((await git.objectType(repo.gitDir, headSha)) !== "commit") throw invalid(ctx, `No commit found for SHA: ${headSha}`);
    const branch = [...(await git.listRefs(repo.gitDir, "refs/heads/"))].find(([, s]) => s === headSha)?.[0].slice(11) ?? null;
    const suite = ctx.core.ensureSuite(repo, appId, headSha, branch);
    if (suite.status === "completed") {
      suite.status = "in_progress";
      suite.conclusion = null;
    }
    const run: CheckRun = {
      id: ctx.core.state.id(),
      repoId: repo.id,
      suiteId: suite.id,
      appId,
      name: str(b, "name")!,
      headSha,
      status: "queued",
      conclusion: null,
      startedAt: now(),
      completedAt: null,
      externalId: null,
      detailsUrl: null,
      output: { title: null, summary: null, text: null, annotations_count: 0 },
      actions: [],
    };
    applyRunFields(ctx, run, b);
    ctx.core.state.checkRuns.set(run.id, run);
    await afterRunChange(ctx, run, false, true);
    return ok(ctx.core.model.checkRun(repo, run, ctx.core.prsFor(repo, headSha)), 201);
  },
  "checks/update": async (ctx) => {
    const repo = repoOf(ctx);
    const run = runOf(ctx);
    const appId = checkApp(ctx);
    if (run.appId !== appId)
      throw new HttpError(403, `Invalid app_id \`${appId}\` - check run can only be modified by the GitHub App that created it.`, ctx.doc);
    const was = run.status === "completed";
    applyRunFields(ctx, run, ctx.body ?? {});
    await afterRunChange(ctx, run, was, false);
    return ok(ctx.core.model.checkRun(repo, run, ctx.core.prsFor(repo, run.headSha)));
  },
  // docs.github.com/rest/checks/runs#list-check-run-annotations
  "checks/list-annotations": async (ctx) => {
    const repo = repoOf(ctx);
    const run = ctx.core.state.checkRuns.get(Number(ctx.params.check_run_id));
    if (!run || run.repoId !== repo.id) throw notFound(ctx);
    const blob = `${ctx.core.model.web()}/${repo.owner.login}/${repo.name}/blob/${run.headSha}`;
    return ok(
      ctx.page(
        (run.annotations ?? []).map((a) => ({
          path: a.path,
          blob_href: `${blob}/${a.path}`,
          start_line: a.startLine,
          end_line: a.endLine,
          start_column: null,
          end_column: null,
          annotation_level: a.level,
          title: a.title,
          message: a.message,
          raw_details: null,
        })),
      ),
    );
  },
  "checks/get": async (ctx) => {
    const repo = repoOf(ctx);
    const run = runOf(ctx);
    return ok(ctx.core.model.checkRun(repo, run, ctx.core.prsFor(repo, run.headSha)));
  },
  "checks/list-for-ref": async (ctx) => {
    const repo = repoOf(ctx);
    const sha = await commitish(repo, ctx.params.ref!);
    if (!sha) throw invalid(ctx, `No commit found for SHA: ${ctx.params.ref}`);
    return listRuns(ctx, repo, (r) => r.headSha === sha);
  },
  "checks/list-for-suite": async (ctx) => {
    const repo = repoOf(ctx);
    const id = Number(ctx.params.check_suite_id);
    if (!ctx.core.state.suites.get(id)) throw notFound(ctx);
    return listRuns(ctx, repo, (r) => r.suiteId === id);
  },
  "checks/rerequest-run": async (ctx) => {
    const repo = repoOf(ctx);
    const run = runOf(ctx);
    if (run.status !== "completed") throw new HttpError(403, "This check run is not rerequestable", ctx.doc);
    emit(
      ctx,
      "check_run",
      "rerequested",
      { check_run: ctx.core.model.checkRunForHook(repo, run, ctx.core.prsFor(repo, run.headSha)) },
      run.appId,
    );
    return ok({}, 201);
  },
  "checks/create-suite": async (ctx) => {
    const repo = repoOf(ctx);
    const appId = checkApp(ctx);
    const headSha = str(ctx.body, "head_sha")!;
    if ((await git.objectType(repo.gitDir, headSha)) !== "commit") throw invalid(ctx, `No commit found for SHA: ${headSha}`);
    const existed = [...ctx.core.state.suites.values()].some((s) => s.repoId === repo.id && s.appId === appId && s.headSha === headSha);
    const suite = ctx.core.ensureSuite(repo, appId, headSha, null);
    return ok(
      { ...ctx.core.model.suite(repo, suite, ctx.core.prsFor(repo, headSha)), head_commit: await ctx.core.headCommit(repo, headSha) },
      existed ? 200 : 201,
    );
  },
  "checks/get-suite": async (ctx) => {
    const repo = repoOf(ctx);
    const s = ctx.core.state.suites.get(Number(ctx.params.check_suite_id));
    if (!s || s.repoId !== repo.id) throw notFound(ctx);
    return ok({
      ...ctx.core.model.suite(repo, s, ctx.core.prsFor(repo, s.headSha)),
      head_commit: await ctx.core.headCommit(repo, s.headSha),
    });
  },
  "checks/rerequest-suite": async (ctx) => {
    const repo = repoOf(ctx);
    const s = ctx.core.state.suites.get(Number(ctx.params.check_suite_id));
    if (!s || s.repoId !== repo.id) throw notFound(ctx);
    emit(
      ctx,
      "check_suite",
      "rerequested",
      {
        check_suite: {
          ...ctx.core.model.suite(repo, s, ctx.core.prsFor(repo, s.headSha)),
          head_commit: await ctx.core.headCommit(repo, s.headSha),
        },
      },
      s.appId,
    );
    return ok({}, 201);
  },
  "checks/list-suites-for-ref": async (ctx) => {
    const repo = repoOf(ctx);
    const sha = await commitish(repo, ctx.params.ref!);
    if (!sha) throw invalid(ctx, `No commit found for SHA: ${ctx.params.ref}`);
    const appId = ctx.query.get("app_id");
    const list = [...ctx.core.state.suites.values()].filter(
      (s) => s.repoId === repo.id && s.headSha === sha && (!appId || String(s.appId) === appId),
    );
    const page = ctx.page(list);
    return ok({
      total_count: list.length,
      check_suites: await Promise.all(
        page.map(async (s) => ({
          ...ctx.core.model.suite(repo, s, ctx.core.prsFor(repo, s.headSha)),
          head_commit: await ctx.core.headCommit(repo, s.headSha),
        })),
      ),
    });
  },
};

function listRuns(ctx: RestCtx, repo: Repo, pred: (r: CheckRun) => boolean): Result {
  const name = ctx.query.get("check_name");
  const status = ctx.query.get("status");
  const appId = ctx.query.get("app_id");
  const filter = ctx.query.get("filter") ?? "latest";
  let list = [...ctx.core.state.checkRuns.values()].filter((r) => r.repoId === repo.id && pred(r));
  if (name) list = list.filter((r) => r.name === name);
  if (status) list = list.filter((r) => r.status === status);
  if (appId) list = list.filter((r) => String(r.appId) === appId);
  list.sort((a, b) => b.id - a.id);
  // filter=latest keeps the most recent run per name (and App).
  if (filter === "latest") {
    const seen = new Set<string>();
    list = list.filter((r) => !seen.has(`${r.appId}:${r.name}`) && seen.add(`${r.appId}:${r.name}`));
  }
  const page = ctx.page(list);
  return ok({ total_count: list.length, check_runs: page.map((r) => ctx.core.model.checkRun(repo, r, ctx.core.prsFor(repo, r.headSha))) });
}

export const handlers: Record<string, Handler> = {
  ...apps,
  ...repos,
  ...gitdb,
  ...pulls,
  ...issues,
  ...checks,
  ...rulesetHandlers,
  ...branchProtectionHandlers,
  ...actionsPermissionsHandlers,
  ...secretHandlers,
  ...reviewHandlers,
};
export { ZERO };
