// A repository's pull request settings (docs.github.com/rest/repos/repos#update-a-repository):
// which merge methods its pull requests may use, auto-merge, the "Update branch" button and head
// branch deletion — changed by administrators through `PATCH /repos/{owner}/{repo}` and shown by
// every repository object. A pull request merge by a method the repository does not allow answers
// 405 with GitHub's words ("Merge commits are not allowed on this repository." — the three texts as
// Mergifyio/mergify's merge action matches them). The other fields of the update (a rename, the
// visibility, archiving, …) are not implemented: the request answers 501 naming them.
import { HttpError } from "./auth.js";
import type { Handler, RestCtx } from "./rest/index.js";
import type { Repo } from "./state.js";
import { now } from "./state.js";

export interface RepoSettings {
  allowMergeCommit: boolean;
  allowSquashMerge: boolean;
  allowRebaseMerge: boolean;
  allowAutoMerge: boolean;
  allowUpdateBranch: boolean;
  deleteBranchOnMerge: boolean;
}

/** GitHub's defaults for a new repository: every merge method, no auto-merge, no update button, head branches kept. */
const DEFAULTS: RepoSettings = {
  allowMergeCommit: true,
  allowSquashMerge: true,
  allowRebaseMerge: true,
  allowAutoMerge: false,
  allowUpdateBranch: false,
  deleteBranchOnMerge: false,
};

export function repoSettingsOf(repo: Repo): RepoSettings {
  return repo.settings ?? DEFAULTS;
}

/** The request fields this file implements, by the setting each one changes. */
const FIELDS: Record<string, keyof RepoSettings> = {
  allow_merge_commit: "allowMergeCommit",
  allow_squash_merge: "allowSquashMerge",
  allow_rebase_merge: "allowRebaseMerge",
  allow_auto_merge: "allowAutoMerge",
  allow_update_branch: "allowUpdateBranch",
  delete_branch_on_merge: "deleteBranchOnMerge",
};

const REFUSED: Record<string, string> = {
  merge: "Merge commits are not allowed on this repository.",
  squash: "Squash merges are not allowed on this repository.",
  rebase: "Rebase merges are not allowed on this repository.",
};

/** Refuse a pull request merge by a method the repository's settings leave out (405). */
export function enforceMergeMethod(repo: Repo, method: string, doc: string): void {
  const s = repoSettingsOf(repo);
  const allowed = method === "merge" ? s.allowMergeCommit : method === "squash" ? s.allowSquashMerge : s.allowRebaseMerge;
  if (!allowed) throw new HttpError(405, REFUSED[method] ?? REFUSED.merge!, doc);
}

function repoOf(ctx: RestCtx): Repo {
  if (!ctx.repo) throw new HttpError(404, "Not Found", ctx.doc);
  return ctx.repo;
}

export const repoSettingsHandlers: Record<string, Handler> = {
  // The body is checked against GitHub's description before it reaches here; the answer is the
  // repository as it is now (200).
  "repos/update": async (ctx) => {
    const repo = repoOf(ctx);
    const b = ctx.body ?? {};
    const unknown = Object.keys(b).filter((k) => !(k in FIELDS) && k !== "description");
    if (unknown.length)
      throw new HttpError(501, `Forge's local GitHub does not implement these fields of repos/update: ${unknown.join(", ")}`, ctx.doc, {
        operationId: "repos/update",
      });
    const next: RepoSettings = { ...repoSettingsOf(repo) };
    for (const [field, key] of Object.entries(FIELDS)) if (typeof b[field] === "boolean") next[key] = b[field];
    repo.settings = next;
    if (b.description !== undefined) repo.description = b.description === null ? null : String(b.description);
    repo.updatedAt = now();
    return { status: 200, body: ctx.core.model.repo(repo, { permissionsFor: ctx.token?.kind === "user" ? ctx.actor : undefined }) };
  },
};
