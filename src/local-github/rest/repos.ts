// REST operations of the local GitHub: repositories, branches, commits, contents, merges,
// comparisons, collaborators and commit statuses (docs.github.com/rest/repos …).
import { HttpError } from "../auth.js";
import * as git from "../git/index.js";
import type { Repo } from "../state.js";
import { now } from "../state.js";
import { branchProtectionSummary } from "../branch-protection.js";
import type { Handler, RestCtx } from "./context.js";
import { commitish, diffEntry, emit, identity, invalid, moveRef, notFound, ok, repoOf, str, wrap64 } from "./context.js";

/** The contents API's size limits (docs.github.com/rest/repos/contents#get-repository-content): inline up to 1 MB, none past 100 MB. */
export const CONTENTS_INLINE_BYTES = 1024 * 1024;
export const CONTENTS_MAX_BYTES = 100 * 1024 * 1024;
const TOO_LARGE =
  "This API returns blobs up to 100 MB in size. The requested blob is too large to fetch via the API, but you can use the Git Data API or a clone to read it.";

export const repoHandlers: Record<string, Handler> = {
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
  // File size limits: "1 MB or smaller: All features of this endpoint are supported. Between 1-100 MB:
  // Only the raw or object custom media types are supported … Greater than 100 MB: This endpoint is
  // not supported."
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
    // "Greater than 100 MB: This endpoint is not supported."
    if (blob.length > CONTENTS_MAX_BYTES)
      throw new HttpError(403, TOO_LARGE, ctx.doc, { errors: [{ resource: "Blob", field: "data", code: "too_large" }] });
    // `Accept: application/vnd.github.raw` (or the v3 form) returns the file's bytes themselves.
    if (/application\/vnd\.github(\.v3)?\.raw/.test(ctx.accept))
      return { status: 200, raw: blob, contentType: "application/vnd.github.raw; charset=utf-8" };
    // "Between 1-100 MB: … the content field will be an empty string and the encoding field will be "none"."
    const inline = blob.length <= CONTENTS_INLINE_BYTES;
    return ok({
      ...contentEntry(ctx, repo, ref, path, { ...entry, size: blob.length }),
      content: inline ? wrap64(blob.toString("base64")) : "",
      encoding: inline ? "base64" : "none",
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
      // Signed by GitHub unless an author or committer is given (../signing.ts).
      const sign = b.author || b.committer ? undefined : ctx.core.sign;
      const commit = await git.commitTree(repo.gitDir, tree, tip ? [tip] : [], `${str(b, "message")}\n`, author, committer, sign);
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
      const sha = await git.commitTree(repo.gitDir, tree, [base, head], `${message}\n`, who, who, ctx.core.sign);
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
