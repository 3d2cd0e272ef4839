// What a pull request merge must satisfy beyond a ref write (docs.github.com/rest/pulls/pulls#merge-a-pull-request
// answers 405 "if merge cannot be performed"):
// - rulesets (docs.github.com/rest/repos/rules, "Available rules for rulesets"): `pull_request`
//   (`required_approving_review_count` approvals of people with write access, of the head when
//   `dismiss_stale_reviews_on_push`) and `required_status_checks` (each context green on the head;
//   `strict_required_status_checks_policy`: the head contains the base's tip), `merge_queue` (only
//   the merge queue merges: a direct merge is refused), `pull_request.allowed_merge_methods` (the
//   method must be one of them). An actor on the
//   ruleset's bypass list (modes `always` and `pull_request`) is exempt. GitHub answers
//   "Repository rule violations found" with the rules named, as for a push (GH013).
// - branch protection (docs.github.com/rest/branches/branch-protection, "About protected branches"):
//   `strict` required status checks ("Require branches to be up to date before merging") and
//   `required_linear_history` for merge_method "merge" (the merge commit would reach the branch).
// The texts: "This branch must not contain merge commits." (405 of a merge under linear history,
// github.com/chdsbd/kodiak/issues/295); "Head branch is out of date. Review and try the merge
// again." (github.com/strands-labs/robots/issues/2538); approvals and checks as branch protection's.
import { HttpError } from "./auth.js";
import { adminExempt, approvals, checkState, PROTECTION_MESSAGES, protectionOf } from "./branch-protection.js";
import type { ActContext, SimCore } from "./domain/index.js";
import * as git from "./git/index.js";
import { canBypass, rulesetsFor } from "./rulesets.js";
import type { Issue, Repo } from "./state.js";

export const MERGE_MESSAGES = {
  outOfDate: "Head branch is out of date. Review and try the merge again.",
  approvals: (need: number): string =>
    need === 1
      ? "At least 1 approving review is required by reviewers with write access."
      : `At least ${need} approving reviews are required by reviewers with write access.`,
  check: (context: string, state: string): string => `Required status check "${context}" is ${state}.`,
  // A merge into a branch whose rules require a merge queue: only the queue merges
  // (e.g. github.com/pascalgn/automerge-action/issues/235, "Changes must be made through the merge queue").
  mergeQueue: "Changes must be made through the merge queue",
  // GitHub's wording for a method a `pull_request` rule's `allowed_merge_methods` leaves out is not
  // published: the local GitHub's.
  method: (method: string): string => `Merge method ${method} is not allowed by the rules of this branch.`,
};

interface RequiredCheck {
  context: string;
  integration_id?: number;
}

/** The rulesets' pull request requirements the merge of `issue` into `base` (its tip) by `method` breaks, as GitHub words them. */
async function rulesetMergeViolations(
  core: SimCore,
  repo: Repo,
  issue: Issue,
  base: string,
  who: ActContext,
  method: string,
  viaQueue: boolean,
): Promise<string[]> {
  const p = issue.pull!;
  const out: string[] = [];
  const add = (m: string): void => {
    if (!out.includes(m)) out.push(m);
  };
  for (const set of rulesetsFor(repo, `refs/heads/${p.baseRef}`)) {
    if (canBypass(repo, set, who, true)) continue;
    for (const rule of set.rules) {
      const params = rule.parameters ?? {};
      if (rule.type === "merge_queue") {
        if (!viaQueue) add(MERGE_MESSAGES.mergeQueue);
      } else if (rule.type === "pull_request") {
        const methods = params.allowed_merge_methods as string[] | undefined;
        if (Array.isArray(methods) && !methods.includes(method)) add(MERGE_MESSAGES.method(method));
        const need = Number(params.required_approving_review_count ?? 0);
        if (need > 0 && approvals(core, repo, issue, params.dismiss_stale_reviews_on_push === true) < need)
          add(MERGE_MESSAGES.approvals(need));
      } else if (rule.type === "required_status_checks") {
        for (const c of (params.required_status_checks as RequiredCheck[] | undefined) ?? []) {
          const state = checkState(core, repo, p.headSha, c.context, c.integration_id ?? null);
          if (state !== "success") add(MERGE_MESSAGES.check(c.context, state));
        }
        // The queue tests the pull request on the base's tip: being behind does not keep it out.
        if (!viaQueue && params.strict_required_status_checks_policy === true && !(await git.isAncestor(repo.gitDir, base, p.headSha)))
          add(MERGE_MESSAGES.outOfDate);
      }
    }
  }
  return out;
}

/**
 * Refuse a pull request merge the rulesets' pull request requirements forbid (405 "Repository rule
 * violations found" naming them), or branch protection's `strict` (405, the head does not contain
 * the base's tip) — checked before the merge commit is made.
 */
export async function enforceMergeRequirements(
  core: SimCore,
  repo: Repo,
  issue: Issue,
  base: string,
  who: ActContext,
  doc: string,
  method = "merge",
  /** entering the merge queue: every requirement but the queue's own */
  viaQueue = false,
): Promise<void> {
  const broken = await rulesetMergeViolations(core, repo, issue, base, who, method, viaQueue);
  if (broken.length) throw new HttpError(405, `Repository rule violations found\n\n${broken.join("\n")}\n`, doc);
  const p = protectionOf(repo, `refs/heads/${issue.pull!.baseRef}`);
  if (!p || adminExempt(repo, p, who) || viaQueue) return;
  if (p.requiredStatusChecks?.strict && !(await git.isAncestor(repo.gitDir, base, issue.pull!.headSha)))
    throw new HttpError(405, MERGE_MESSAGES.outOfDate, doc);
}

/** Branch protection's linear history refuses a merge commit: merge_method "merge" (405). */
export function enforceLinearHistoryOnMerge(repo: Repo, issue: Issue, method: string, who: ActContext, doc: string): void {
  const p = protectionOf(repo, `refs/heads/${issue.pull!.baseRef}`);
  if (!p?.requiredLinearHistory || adminExempt(repo, p, who) || method !== "merge") return;
  throw new HttpError(405, PROTECTION_MESSAGES.linearHistory, doc);
}
