// REST operations of the local GitHub: pull requests (docs.github.com/rest/pulls).
import { enforceActionsMayCreatePulls } from "../actions-permissions.js";
import * as git from "../git/index.js";
import type { Issue } from "../state.js";
import { now } from "../state.js";
import { mergePullRequest } from "../merging.js";
import type { Handler, RestCtx } from "./context.js";
import { act, checkBodyLength, diffEntry, emit, invalid, newIssue, notFound, ok, repoOf, setIssueState, str } from "./context.js";

function pullOf(ctx: RestCtx): Issue {
  const repo = repoOf(ctx);
  const i = ctx.core.state.issue(repo.id, Number(ctx.params.pull_number));
  if (!i?.pull) throw notFound(ctx);
  return i;
}

export const pullHandlers: Record<string, Handler> = {
  // docs.github.com/rest/pulls/pulls#create-a-pull-request
  "pulls/create": async (ctx) => {
    const repo = repoOf(ctx);
    enforceActionsMayCreatePulls(ctx, repo);
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
    const b = ctx.body ?? {};
    const sha = await mergePullRequest(ctx.core, repoOf(ctx), pullOf(ctx), act(ctx), {
      doc: ctx.doc,
      method: str(b, "merge_method") ?? "merge",
      sha: str(b, "sha"),
      commitTitle: str(b, "commit_title"),
      commitMessage: str(b, "commit_message"),
    });
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
