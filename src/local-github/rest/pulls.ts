// REST operations of the local GitHub: pull requests (docs.github.com/rest/pulls).
import { enforceActionsMayCreatePulls } from "../actions-permissions.js";
import { HttpError } from "../auth.js";
import * as git from "../git/index.js";
import type { Issue } from "../state.js";
import { now } from "../state.js";
import { enforceProtectionOnMerge } from "../branch-protection.js";
import { enforceLinearHistoryOnMerge, enforceMergeRequirements } from "../merge-rules.js";
import { enforceMergeMethod } from "../repo-settings.js";
import { enforceRules } from "../rule-violations.js";
import type { Handler, RestCtx } from "./context.js";
import { act, checkBodyLength, diffEntry, emit, identity, invalid, newIssue, notFound, ok, repoOf, setIssueState, str } from "./context.js";

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
    // The repository's settings first: a method they leave out is refused whatever the branch's rules.
    enforceMergeMethod(repo, method, ctx.doc);
    const baseRef = `refs/heads/${p.baseRef}`;
    const base = await git.resolveRef(repo.gitDir, baseRef);
    if (!base) throw new HttpError(405, "Pull Request is not mergeable", ctx.doc);
    // Branch protection: approving reviews and required status checks (405); the rulesets' and
    // protection's pull request requirements (approvals, checks, up to date, linear history).
    enforceProtectionOnMerge(ctx.core, repo, issue, act(ctx), ctx.doc);
    await enforceMergeRequirements(ctx.core, repo, issue, base, act(ctx), ctx.doc, method);
    enforceLinearHistoryOnMerge(repo, issue, method, act(ctx), ctx.doc);
    const tree = await git.mergeTrees(repo.gitDir, base, p.headSha);
    if (!tree) throw new HttpError(405, "Pull Request is not mergeable", ctx.doc);
    const who = identity(ctx, undefined);
    let sha: string;
    if (method === "merge") {
      const title = str(b, "commit_title") ?? `Merge pull request #${issue.number} from ${repo.owner.login}/${p.headRef}`;
      const message = `${title}\n\n${str(b, "commit_message") ?? issue.title}\n`;
      sha = await git.commitTree(repo.gitDir, tree, [base, p.headSha], message, who, who, ctx.core.sign);
    } else if (method === "squash") {
      const title = str(b, "commit_title") ?? `${issue.title} (#${issue.number})`;
      const message = `${title}\n\n${str(b, "commit_message") ?? ""}`.trimEnd() + "\n";
      sha = await git.commitTree(repo.gitDir, tree, [base], message, who, who, ctx.core.sign);
    } else {
      // Rebase replays the head's commits on the base; the simulator supports the linear case. GitHub
      // cannot sign the commits it rewrites ("About commit signature verification"): they are unsigned.
      const mb = await git.mergeBase(repo.gitDir, base, p.headSha);
      if (mb !== base) throw new HttpError(405, "This branch can't be rebased", ctx.doc);
      sha = base;
      for (const c of await git.revList(repo.gitDir, base, p.headSha)) {
        const info = await git.readCommit(repo.gitDir, c);
        if (info.parents.length > 1) throw new HttpError(405, "This branch can't be rebased", ctx.doc);
        sha = await git.commitTree(repo.gitDir, info.tree, [sha], info.message, info.author, who);
      }
    }
    // The rulesets judge the write the merge makes: its commit (a merge commit under linear history is refused).
    await enforceRules(ctx.core, repo, { ref: baseRef, before: base, after: sha }, act(ctx), ctx.doc, 405);
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
