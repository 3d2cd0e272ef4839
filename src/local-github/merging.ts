// A pull request's merge as GitHub's merge button makes it (docs.github.com/rest/pulls/pulls#merge-a-pull-request):
// shared by `PUT /pulls/{n}/merge`, the asynchronous merge (rest/merge-async.ts) and auto-merge
// (auto-merge.ts). Every refusal is an HttpError with GitHub's status and words (405 unless said).
import { HttpError } from "./auth.js";
import { enforceProtectionOnMerge } from "./branch-protection.js";
import type { ActContext, SimCore } from "./domain/index.js";
import * as git from "./git/index.js";
import { enforceLinearHistoryOnMerge, enforceMergeRequirements } from "./merge-rules.js";
import { enforceMergeMethod } from "./repo-settings.js";
import { commitDate } from "./rest/context.js";
import { enforceRules } from "./rule-violations.js";
import type { Issue, Repo } from "./state.js";

export interface MergeOptions {
  /** the documentation URL refusals name */
  doc: string;
  method: string;
  /** the head the merge must find (409 otherwise) */
  sha?: string;
  commitTitle?: string;
  commitMessage?: string;
}

/** Merges `issue` into its base as `who`; answers the commit the base now points at. */
export async function mergePullRequest(core: SimCore, repo: Repo, issue: Issue, who: ActContext, o: MergeOptions): Promise<string> {
  const p = issue.pull!;
  const doc = o.doc;
  if (p.merged) throw new HttpError(405, "Pull Request is not mergeable", doc);
  if (issue.state !== "open") throw new HttpError(405, "Pull Request is not mergeable", doc);
  if (p.draft) throw new HttpError(405, "Pull Request is still a draft", doc);
  const head = p.headRepoId !== undefined ? p.headSha : await git.resolveRef(repo.gitDir, `refs/heads/${p.headRef}`);
  if (!head) throw new HttpError(405, "Pull Request is not mergeable", doc);
  if (o.sha && o.sha !== p.headSha) throw new HttpError(409, "Head branch was modified. Review and try the merge again.", doc);
  const method = o.method;
  // The repository's settings first: a method they leave out is refused whatever the branch's rules.
  enforceMergeMethod(repo, method, doc);
  const baseRef = `refs/heads/${p.baseRef}`;
  const base = await git.resolveRef(repo.gitDir, baseRef);
  if (!base) throw new HttpError(405, "Pull Request is not mergeable", doc);
  // Branch protection: approving reviews and required status checks (405); the rulesets' and
  // protection's pull request requirements (approvals, checks, up to date, linear history).
  enforceProtectionOnMerge(core, repo, issue, who, doc);
  await enforceMergeRequirements(core, repo, issue, base, who, doc, method);
  enforceLinearHistoryOnMerge(repo, issue, method, who, doc);
  const sha = await mergeCommit(core, repo, issue, base, who, o);
  // The rulesets judge the write the merge makes: its commit (a merge commit under linear history is refused).
  await enforceRules(core, repo, { ref: baseRef, before: base, after: sha }, who, doc, 405);
  // Another merge moved the base meanwhile: GitHub answers 405 with this message (not 409, which
  // is only for a `sha` that is not the head), and the merge may simply be tried again.
  if (!(await git.updateRef(repo.gitDir, baseRef, sha, base)))
    throw new HttpError(405, "Base branch was modified. Review and try the merge again.", doc);
  p.mergeCommitSha = sha;
  // The ref change emits push; the PR is then marked merged (closed with merged: true).
  await core.refsChanged(repo, [{ ref: baseRef, before: base, after: sha }], who);
  if (!p.merged) await core.markMerged(repo, issue, who, sha);
  else p.mergeCommitSha = sha;
  return sha;
}

/**
 * The commit a merge of `issue` onto `base` by `o.method` makes (not yet on any branch): a merge
 * commit (base, head), a squash commit (base), or the head's commits replayed on the base.
 */
export async function mergeCommit(
  core: SimCore,
  repo: Repo,
  issue: Issue,
  base: string,
  who: ActContext,
  o: Pick<MergeOptions, "doc" | "method" | "commitTitle" | "commitMessage">,
): Promise<string> {
  const p = issue.pull!;
  const tree = await git.mergeTrees(repo.gitDir, base, p.headSha);
  if (!tree) throw new HttpError(405, "Pull Request is not mergeable", o.doc);
  const me = { name: who.actor.login, email: core.email(who.actor), date: commitDate(core) };
  if (o.method === "merge") {
    const title = o.commitTitle ?? `Merge pull request #${issue.number} from ${repo.owner.login}/${p.headRef}`;
    const message = `${title}\n\n${o.commitMessage ?? issue.title}\n`;
    return git.commitTree(repo.gitDir, tree, [base, p.headSha], message, me, me, core.sign);
  }
  if (o.method === "squash") {
    const title = o.commitTitle ?? `${issue.title} (#${issue.number})`;
    const message = `${title}\n\n${o.commitMessage ?? ""}`.trimEnd() + "\n";
    return git.commitTree(repo.gitDir, tree, [base], message, me, me, core.sign);
  }
  // Rebase replays the head's commits on the base; the simulator supports the linear case. GitHub
  // cannot sign the commits it rewrites ("About commit signature verification"): they are unsigned.
  const mb = await git.mergeBase(repo.gitDir, base, p.headSha);
  if (mb !== base) throw new HttpError(405, "This branch can't be rebased", o.doc);
  let sha = base;
  for (const c of await git.revList(repo.gitDir, base, p.headSha)) {
    const info = await git.readCommit(repo.gitDir, c);
    if (info.parents.length > 1) throw new HttpError(405, "This branch can't be rebased", o.doc);
    sha = await git.commitTree(repo.gitDir, info.tree, [sha], info.message, info.author, me);
  }
  return sha;
}
