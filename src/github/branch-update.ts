/**
 * Bringing a task's pull request up to date with the integration branch, when the branch's rules
 * want it before a merge (branch protection's "Require branches to be up to date before merging",
 * a ruleset's `strict_required_status_checks_policy`), and reading whether a pull request merges
 * at all (docs/executor.md#merging-under-the-repositorys-rules):
 * - PUT /repos/{owner}/{repo}/pulls/{pull_number}/update-branch
 *   (docs.github.com/rest/pulls/pulls#update-a-pull-request-branch): GitHub merges the base into the
 *   head in the background and answers 202; 422 "expected head sha didn't match current head ref.",
 *   "There are no new commits on the base branch." or "merge conflict between base and head";
 * - `mergeable` is null while GitHub computes it in a background job
 *   (docs.github.com/rest/guides/using-the-rest-api-to-interact-with-your-git-database#checking-mergeability-of-pull-requests):
 *   Forge reads it again later rather than taking null for false.
 */
import type { Octokit } from "./octokit-port.js";
import { rateLimitWaitMs, statusOf, wrap } from "./octokit-rest.js";

/** What GitHub answered to an update of a pull request's branch. */
export type BranchUpdateResult =
  | { kind: "accepted" }
  /** The head is not the one named (`expected_head_sha`). */
  | { kind: "head_moved"; message: string }
  /** The base's tip is in the head already. */
  | { kind: "up_to_date"; message: string }
  /** Merging the base into the head conflicts. */
  | { kind: "conflict"; message: string }
  /** Refused otherwise (the head branch's own rules, a permission). */
  | { kind: "refused"; message: string };

export async function updatePullBranch(
  octokit: Octokit,
  owner: string,
  repo: string,
  number: number,
  expectedHeadSha: string,
): Promise<BranchUpdateResult> {
  try {
    await octokit.rest.pulls.updateBranch({ owner, repo, pull_number: number, expected_head_sha: expectedHeadSha });
    return { kind: "accepted" };
  } catch (e) {
    const status = statusOf(e);
    const message = (e as { response?: { data?: { message?: string } } }).response?.data?.message ?? (e as Error).message ?? "";
    if (status === 422) {
      if (/expected head sha/i.test(message)) return { kind: "head_moved", message };
      if (/no new commits/i.test(message)) return { kind: "up_to_date", message };
      if (/merge conflict/i.test(message)) return { kind: "conflict", message };
      return { kind: "refused", message };
    }
    // A rate limit is the engine's to wait out; any other 403 is a refusal a person can lift.
    if (status === 403 && rateLimitWaitMs(e, 0) === undefined) return { kind: "refused", message };
    throw wrap("pulls.updateBranch", e);
  }
}

/** Whether a refused merge says the head must contain the base's tip first (Forge updates the branch then). */
export const wantsUpToDate = (message: string): boolean => /out of date/i.test(message);

/** How soon the merge looks again for the head of an update GitHub accepted, or for a mergeability GitHub was computing. */
export const BRANCH_UPDATE_POLL_MS = 2_000;

/** How long the merge waits for the new head of an accepted update before asking GitHub again. */
export const BRANCH_UPDATE_WAIT_MS = 2 * 60_000;

/**
 * Why a task's pull request cannot merge when its branch conflicts with the integration branch
 * (its update refused, or GitHub found it not mergeable): the branches, and what a person can do.
 */
export function conflictBlocker(taskId: string, branch: string, base: string, message: string): string {
  return `\`${branch}\` conflicts with \`${base}\`, and GitHub cannot merge or update it ("${message.replace(/\s+/g, " ").trim()}"). Comment \`/forge fix ${taskId} merge ${base} into the branch and resolve the conflicts\` (a revision of the task does it), or resolve them on the pull request and merge it by hand.`;
}

/** Why a task's pull request cannot be brought up to date when GitHub refuses the update for another reason. */
export function updateRefusedBlocker(branch: string, base: string, message: string): string {
  return `\`${base}\` requires branches to be up to date before merging, and GitHub refused to update \`${branch}\` ("${message.replace(/\s+/g, " ").trim()}"). Give the Forge App write access to \`${branch}\` (Contents and Pull requests), or turn off "Require branches to be up to date" for \`${base}\`, then comment \`/forge retry\`.`;
}
