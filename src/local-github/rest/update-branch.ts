// PUT /repos/{owner}/{repo}/pulls/{pull_number}/update-branch
// (docs.github.com/rest/pulls/pulls#update-a-pull-request-branch): "Updates the pull request branch
// with the latest upstream changes by merging HEAD from the base branch into the pull request
// branch." 202 `{ message: "Updating pull request branch.", url }`; 422 when `expected_head_sha` is
// not the head ("expected head sha didn't match current head ref."), when the base's tip is in the
// head already ("There are no new commits on the base branch.") or when the merge conflicts ("merge
// conflict between base and head") — GitHub's texts as clients of the endpoint quote them. A GitHub
// App "must also have permission to write the contents of the head repository".
//
// The merge commit (parents: the head, then the base's tip; message "Merge branch '<base>' into
// <head>"; the caller its author and committer) is written to the head branch as any write of a
// ref: the head repository's rulesets and branch protection judge it, and `push` and
// `pull_request.synchronize` follow, and the workflows a push starts — none when the caller is a
// workflow's GITHUB_TOKEN, as for every event it causes. GitHub answers 202 and merges in the
// background; here the branch has moved when the answer comes, which a client may not count on.
import { HttpError, hasPermission, roleAtLeast, roleOf } from "../auth.js";
import * as git from "../git/index.js";
import type { Issue, Repo } from "../state.js";
import type { Handler, RestCtx } from "./context.js";
import { identity, moveRef, notFound, ok, repoOf, str } from "./context.js";

export const UPDATE_BRANCH_MESSAGES = {
  accepted: "Updating pull request branch.",
  headMoved: "expected head sha didn't match current head ref.",
  upToDate: "There are no new commits on the base branch.",
  conflict: "merge conflict between base and head",
  closed: "Pull request is closed.",
};

function pullOf(ctx: RestCtx): Issue {
  const repo = repoOf(ctx);
  const i = ctx.core.state.issue(repo.id, Number(ctx.params.pull_number));
  if (!i?.pull) throw notFound(ctx);
  return i;
}

/** The repository the head branch is in, when the caller may write it (a fork's: its writers, or the base's when maintainers may modify it). */
function headRepoFor(ctx: RestCtx, repo: Repo, issue: Issue): Repo {
  const p = issue.pull!;
  const token = ctx.token;
  if (token && token.kind !== "user" && !hasPermission(token.permissions, "contents", "write"))
    throw new HttpError(403, "Resource not accessible by integration", ctx.doc);
  if (p.headRepoId === undefined) return repo;
  const head = ctx.core.state.repos.get(p.headRepoId);
  if (!head) throw new HttpError(422, UPDATE_BRANCH_MESSAGES.headMoved, ctx.doc);
  const writer = (!token || token.kind === "user") && roleAtLeast(roleOf(head, ctx.actor), "write");
  if (!writer && !p.maintainerCanModify) throw new HttpError(403, "Resource not accessible by integration", ctx.doc);
  return head;
}

export const updateBranchHandlers: Record<string, Handler> = {
  "pulls/update-branch": async (ctx) => {
    const repo = repoOf(ctx);
    const issue = pullOf(ctx);
    const p = issue.pull!;
    if (issue.state !== "open" || p.merged) throw new HttpError(422, UPDATE_BRANCH_MESSAGES.closed, ctx.doc);
    const headRepo = headRepoFor(ctx, repo, issue);
    const headRef = `refs/heads/${p.headRef}`;
    const head = await git.resolveRef(headRepo.gitDir, headRef);
    const expected = str(ctx.body ?? undefined, "expected_head_sha");
    if (!head || (expected !== undefined && expected !== head)) throw new HttpError(422, UPDATE_BRANCH_MESSAGES.headMoved, ctx.doc);
    const base = await git.resolveRef(repo.gitDir, `refs/heads/${p.baseRef}`);
    if (!base) throw new HttpError(422, UPDATE_BRANCH_MESSAGES.conflict, ctx.doc);
    // A fork gets the base's commits first (its own object store).
    const TEMP = "refs/forge-sim/update-base";
    if (headRepo !== repo) await git.runGit(headRepo.gitDir, ["fetch", "--quiet", repo.gitDir, `+refs/heads/${p.baseRef}:${TEMP}`]);
    try {
      if (await git.isAncestor(headRepo.gitDir, base, head)) throw new HttpError(422, UPDATE_BRANCH_MESSAGES.upToDate, ctx.doc);
      const tree = await git.mergeTrees(headRepo.gitDir, head, base);
      if (!tree) throw new HttpError(422, UPDATE_BRANCH_MESSAGES.conflict, ctx.doc);
      const who = identity(ctx, undefined);
      const sha = await git.commitTree(headRepo.gitDir, tree, [head, base], `Merge branch '${p.baseRef}' into ${p.headRef}\n`, who, who);
      // The head branch's own rules judge the write; a write that lost a race is a moved head.
      if (!(await moveRef(ctx, headRepo, headRef, sha, head))) throw new HttpError(422, UPDATE_BRANCH_MESSAGES.headMoved, ctx.doc);
    } finally {
      if (headRepo !== repo) await git.deleteRef(headRepo.gitDir, TEMP);
    }
    const url = `${ctx.core.baseUrl}/${repo.owner.login}/${repo.name}/pull/${issue.number}`;
    return ok({ message: UPDATE_BRANCH_MESSAGES.accepted, url }, 202);
  },
};
