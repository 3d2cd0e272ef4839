// Whether a pull request can be merged, as GitHub computes it: in a background job
// (docs.github.com/rest/guides/using-the-rest-api-to-interact-with-your-git-database#checking-mergeability-of-pull-requests:
// "the value of the mergeable attribute can be true, false, or null. If the value is null, then
// GitHub has started a background job to compute the mergeability. After giving the job time to
// complete, resubmit the request"). A read of a pull request whose head or base tip changed since
// the last job starts a new one and answers `mergeable: null`, `mergeable_state: "unknown"`; a read
// once the job is done (`delayMs` later on the local GitHub's clock) has the value. The job merges
// the two tips as they were when it started, so the answer is computed when it is first needed.
//
// `mergeable_state` (REST) and `mergeStateStatus` (GraphQL, enum MergeStateStatus) as GitHub
// reports them, in this order: `dirty` (the merge conflicts), `draft`, `blocked` (a required
// review or required check of the base's protection or rulesets is missing or not green — GitHub
// reports BLOCKED over BEHIND), `behind` (a strict protection or ruleset wants the head to contain
// the base's tip and it does not), `unstable` (a check or status that is not required is failing
// or not done), else `clean`; `unknown` while the job runs, and for a closed pull request. The
// state is a pull request's, not a viewer's: bypass lists and admin exemptions are not applied.
import type { Clock } from "../core/clock.js";
import { approvals, checkState, protectionOf } from "./branch-protection.js";
import type { SimCore } from "./domain/index.js";
import * as git from "./git/index.js";
import { rulesetsFor } from "./rulesets.js";
import type { Issue, Repo } from "./state.js";

/** How long the local GitHub's mergeability job takes by default (GitHub's takes about as long, more on a large repository). */
export const MERGEABILITY_MS = 1000;

export type MergeState = "clean" | "dirty" | "blocked" | "behind" | "unstable" | "draft" | "unknown";

interface Job {
  head: string;
  base: string;
  /** The clock's time at which the job is done. */
  doneAt: number;
  clean?: boolean;
}

export class Mergeability {
  readonly #jobs = new WeakMap<Issue, Job>();

  constructor(
    private readonly clock: Pick<Clock, "now">,
    /** How long a job takes, in ms of the clock. */
    public delayMs = MERGEABILITY_MS,
  ) {}

  /** `mergeable` of an open pull request as a read answers it now: null while its job runs (a read of changed tips starts one). */
  async read(repo: Repo, issue: Issue): Promise<boolean | null> {
    const p = issue.pull!;
    if (p.merged || issue.state !== "open") return null;
    const base = await git.resolveRef(repo.gitDir, `refs/heads/${p.baseRef}`);
    const head = p.headRepoId !== undefined ? p.headSha : await git.resolveRef(repo.gitDir, `refs/heads/${p.headRef}`);
    if (!base || !head) return false;
    const job = this.#jobs.get(issue);
    if (!job || job.head !== head || job.base !== base) {
      this.#jobs.set(issue, { head, base, doneAt: this.clock.now() + this.delayMs });
      return null;
    }
    if (this.clock.now() < job.doneAt) return null;
    job.clean ??= (await git.mergeTrees(repo.gitDir, base, head)) !== undefined;
    return job.clean;
  }
}

/** What the base's protection and active rulesets require of a pull request into it. */
interface Requirements {
  /** A required review or check is missing or not green. */
  blocked: boolean;
  /** The head must contain the base's tip. */
  strict: boolean;
  /** The names of the required checks. */
  required: Set<string>;
}

function requirements(core: SimCore, repo: Repo, issue: Issue): Requirements {
  const p = issue.pull!;
  const ref = `refs/heads/${p.baseRef}`;
  const out: Requirements = { blocked: false, strict: false, required: new Set() };
  const check = (context: string, appId: number | null) => {
    out.required.add(context);
    if (checkState(core, repo, p.headSha, context, appId) !== "success") out.blocked = true;
  };
  const protection = protectionOf(repo, ref);
  const reviews = protection?.requiredPullRequestReviews;
  if (reviews && reviews.requiredApprovingReviewCount > 0)
    if (approvals(core, repo, issue, reviews.dismissStaleReviews) < reviews.requiredApprovingReviewCount) out.blocked = true;
  for (const c of protection?.requiredStatusChecks?.checks ?? []) check(c.context, c.appId);
  if (protection?.requiredStatusChecks?.strict) out.strict = true;
  for (const set of rulesetsFor(repo, ref))
    for (const rule of set.rules) {
      const params = rule.parameters ?? {};
      if (rule.type === "pull_request") {
        const need = Number(params.required_approving_review_count ?? 0);
        if (need > 0 && approvals(core, repo, issue, params.dismiss_stale_reviews_on_push === true) < need) out.blocked = true;
      } else if (rule.type === "required_status_checks") {
        for (const c of (params.required_status_checks as Array<{ context: string; integration_id?: number }> | undefined) ?? [])
          check(c.context, c.integration_id ?? null);
        if (params.strict_required_status_checks_policy === true) out.strict = true;
      }
    }
  return out;
}

/** Whether a check run or commit status on `sha` that is not required is failing or not done. */
function otherChecksNotGreen(core: SimCore, repo: Repo, sha: string, required: Set<string>): boolean {
  const runs = new Map<string, { status: string; conclusion: string | null; id: number }>();
  for (const r of core.state.checkRuns.values()) {
    if (r.repoId !== repo.id || r.headSha !== sha || required.has(r.name)) continue;
    const key = `${r.appId}:${r.name}`;
    if ((runs.get(key)?.id ?? -1) < r.id) runs.set(key, r);
  }
  for (const r of runs.values())
    if (r.status !== "completed" || !["success", "neutral", "skipped"].includes(r.conclusion ?? "")) return true;
  const statuses = new Map<string, string>();
  for (const s of core.state.statuses)
    if (s.repoId === repo.id && s.sha === sha && !required.has(s.context)) statuses.set(s.context, s.state);
  return [...statuses.values()].some((state) => state !== "success");
}

/** `mergeable_state` of a pull request whose `mergeable` a read answered (see the top of this file). */
export async function mergeStateOf(core: SimCore, repo: Repo, issue: Issue, mergeable: boolean | null): Promise<MergeState> {
  const p = issue.pull!;
  if (p.merged || issue.state !== "open" || mergeable === null) return "unknown";
  if (!mergeable) return "dirty";
  if (p.draft) return "draft";
  const req = requirements(core, repo, issue);
  if (req.blocked) return "blocked";
  if (req.strict) {
    const base = await git.resolveRef(repo.gitDir, `refs/heads/${p.baseRef}`);
    if (base && !(await git.isAncestor(repo.gitDir, base, p.headSha))) return "behind";
  }
  return otherChecksNotGreen(core, repo, p.headSha, req.required) ? "unstable" : "clean";
}
