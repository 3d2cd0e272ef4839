// Branch protection (docs.github.com/rest/branches/branch-protection): stored per branch, read,
// replaced and removed through the REST API by administrators, and enforced as GitHub enforces it
// ("About protected branches"):
// - required pull request reviews: a direct update of the branch is refused — over Git by the
//   rules hook (rulesets.ts) with GitHub's "GH006: Protected branch update failed" text, through the
//   REST API (refs, contents, branch merges) with 422 — and merging a pull request needs that many
//   approving reviews from people with write access (405);
// - required status checks: merging a pull request waits until every named check (a check run or a
//   commit status of that name on the head) has succeeded (405);
// - force pushes and deletions are refused unless `allow_force_pushes` / `allow_deletions`;
// - `restrictions` (organization repositories only) limit who may push at all;
// - `required_linear_history`: a push or write bringing a merge commit is refused, and so is a pull
//   request merge with merge_method "merge" (405, merge-rules.ts);
// - `strict` required status checks: a pull request merges only when its head contains the base's
//   tip (405, merge-rules.ts).
// Without `enforce_admins`, administrators are exempt, as "the restrictions of a branch protection
// rule don't apply to people with admin permissions" by default. Stored but not enforced: code
// owner reviews, last-push approval, signatures, conversation resolution, lock branch, and status
// checks on direct pushes.
import { HttpError, roleAtLeast, roleOf } from "./auth.js";
import type { ActContext, SimCore } from "./domain/index.js";
import type { Handler, RestCtx } from "./rest/index.js";
import type { RefWrite } from "./rulesets.js";
import * as git from "./git/index.js";
import type { Issue, Repo, User } from "./state.js";

export interface BranchProtection {
  requiredStatusChecks: { strict: boolean; checks: Array<{ context: string; appId: number | null }> } | null;
  enforceAdmins: boolean;
  requiredPullRequestReviews: {
    dismissStaleReviews: boolean;
    requireCodeOwnerReviews: boolean;
    requiredApprovingReviewCount: number;
    requireLastPushApproval: boolean;
    /** who may dismiss reviews (logins, App ids); null when not given */
    dismissal: { users: string[]; apps: number[] } | null;
    /** who may push without a pull request (logins, App ids) */
    bypass: { users: string[]; apps: number[] } | null;
  } | null;
  /** who may push (logins, App ids); null = anyone with write access */
  restrictions: { users: string[]; apps: number[] } | null;
  requiredLinearHistory: boolean;
  allowForcePushes: boolean;
  allowDeletions: boolean;
  blockCreations: boolean;
  requiredConversationResolution: boolean;
  lockBranch: boolean;
  allowForkSyncing: boolean;
}

/** The protection of a full ref name (`refs/heads/x`), if any. */
export function protectionOf(repo: Repo, ref: string): BranchProtection | undefined {
  if (!ref.startsWith("refs/heads/")) return undefined;
  return repo.protection?.get(ref.slice("refs/heads/".length));
}

function isPerson(who: ActContext): boolean {
  return !who.token || who.token.kind === "user";
}

/** Administrators are exempt unless `enforce_admins` is on. */
export function adminExempt(repo: Repo, p: BranchProtection, who: ActContext): boolean {
  return !p.enforceAdmins && isPerson(who) && roleOf(repo, who.actor) === "admin";
}

function listed(list: { users: string[]; apps: number[] } | null, who: ActContext): boolean {
  if (!list) return false;
  if (isPerson(who)) return list.users.some((u) => u.toLowerCase() === who.actor.login.toLowerCase());
  return who.token?.appId !== undefined && list.apps.includes(who.token.appId);
}

/** What GitHub says of each protection a push breaks (its GH006 texts). */
export const PROTECTION_MESSAGES = {
  pullRequest: "Changes must be made through a pull request.",
  forcePush: "Cannot force-push to this protected branch",
  deletion: "Cannot delete this protected branch",
  linearHistory: "This branch must not contain merge commits.",
  restricted:
    "You're not authorized to push to this branch. Visit https://docs.github.com/articles/about-protected-branches/ for more information.",
};

/**
 * The protections a direct write of a ref breaks for this actor, each as a rule of the push hook
 * (rule types creation/update/deletion/non_fast_forward with GH006 texts); empty when it may go.
 */
export function protectionRules(repo: Repo, ref: string, who: ActContext): Array<{ type: string; message: string }> {
  const p = protectionOf(repo, ref);
  if (!p || adminExempt(repo, p, who)) return [];
  const out: Array<{ type: string; message: string }> = [];
  if (p.restrictions && !listed(p.restrictions, who))
    for (const type of ["update", "deletion"]) out.push({ type, message: PROTECTION_MESSAGES.restricted });
  if (p.requiredPullRequestReviews && !listed(p.requiredPullRequestReviews.bypass, who))
    out.push({ type: "update", message: PROTECTION_MESSAGES.pullRequest });
  if (!p.allowForcePushes) out.push({ type: "non_fast_forward", message: PROTECTION_MESSAGES.forcePush });
  if (!p.allowDeletions) out.push({ type: "deletion", message: PROTECTION_MESSAGES.deletion });
  if (p.requiredLinearHistory) out.push({ type: "required_linear_history", message: PROTECTION_MESSAGES.linearHistory });
  return out;
}

/**
 * Refuse a write through the REST API (refs, contents, branch merges) that the branch's protection
 * forbids: 422, naming what it breaks.
 */
export async function enforceProtection(repo: Repo, write: RefWrite, who: ActContext, doc: string): Promise<void> {
  const broken: string[] = [];
  for (const r of protectionRules(repo, write.ref, who)) {
    const applies =
      r.type === "deletion"
        ? write.before !== null && write.after === null
        : r.type === "update"
          ? write.before !== null && write.after !== null
          : r.type === "non_fast_forward"
            ? write.before !== null && write.after !== null && !(await (write.fastForward?.() ?? Promise.resolve(true)))
            : r.type === "required_linear_history"
              ? write.after !== null && (await git.bringsMergeCommits(repo.gitDir, write.before, write.after))
              : false;
    if (applies && !broken.includes(r.message)) broken.push(r.message);
  }
  if (broken.length) throw new HttpError(422, `Protected branch update failed for ${write.ref}.\n\n${broken.join("\n")}`, doc);
}

/** The App that last reported `context` in the repository — a check run, or a commit status posted with an App's token — or null (any source). */
export function recentSource(core: SimCore, repo: Repo, context: string): number | null {
  let best: { id: number; appId: number } | undefined;
  for (const r of core.state.checkRuns.values())
    if (r.repoId === repo.id && r.name === context && (!best || r.id > best.id)) best = { id: r.id, appId: r.appId };
  for (const s of core.state.statuses)
    if (s.repoId === repo.id && s.context === context && s.creator.appId !== undefined && (!best || s.id > best.id))
      best = { id: s.id, appId: s.creator.appId };
  return best?.appId ?? null;
}

/**
 * Whether a check run or commit status of `context` on `sha` succeeded ("expected" when none or still
 * running). With `appId`, only what that App reported counts — its check runs, and the statuses
 * posted with its token ("The optional integration ID that this status check must originate from",
 * rulesets' `integration_id`; branch protection's `app_id`, "The ID of the GitHub App that must
 * provide this check").
 */
export function checkState(
  core: SimCore,
  repo: Repo,
  sha: string,
  context: string,
  appId: number | null,
): "success" | "expected" | "failing" {
  const runs = [...core.state.checkRuns.values()]
    .filter((r) => r.repoId === repo.id && r.headSha === sha && r.name === context && (appId === null || r.appId === appId))
    .sort((a, b) => b.id - a.id);
  const statuses = core.state.statuses.filter(
    (s) => s.repoId === repo.id && s.sha === sha && s.context === context && (appId === null || s.creator.appId === appId),
  );
  const run = runs[0];
  const status = statuses[statuses.length - 1];
  // "Skipped" and "neutral" check runs count as successful for required checks.
  if (run?.status === "completed" && ["success", "neutral", "skipped"].includes(run.conclusion ?? "")) return "success";
  if (status?.state === "success") return "success";
  if ((run?.status === "completed" && run.conclusion) || status?.state === "failure" || status?.state === "error") return "failing";
  return "expected";
}

/** Approving reviews that count: the latest review of each person with write access, on the head if stale ones are dismissed. */
export function approvals(core: SimCore, repo: Repo, issue: Issue, dismissStale: boolean): number {
  const latest = new Map<number, { state: string; commitId: string }>();
  for (const r of core.state.reviews) {
    if (r.repoId !== repo.id || r.number !== issue.number || r.state === "COMMENTED") continue;
    latest.set(r.user.id, { state: r.state, commitId: r.commitId });
  }
  let n = 0;
  for (const [id, r] of latest) {
    const user = core.state.userById(id);
    if (!user || !roleAtLeast(roleOf(repo, user), "write") || r.state !== "APPROVED") continue;
    if (dismissStale && r.commitId !== issue.pull!.headSha) continue;
    n++;
  }
  return n;
}

/**
 * Refuse merging a pull request into a protected branch before its requirements are met: 405 with
 * GitHub's message ("At least 1 approving review is required by reviewers with write access.",
 * "Required status check "ci" is expected.").
 */
export function enforceProtectionOnMerge(core: SimCore, repo: Repo, issue: Issue, who: ActContext, doc: string): void {
  const p = protectionOf(repo, `refs/heads/${issue.pull!.baseRef}`);
  if (!p || adminExempt(repo, p, who)) return;
  if (p.restrictions && !listed(p.restrictions, who)) throw new HttpError(405, PROTECTION_MESSAGES.restricted, doc);
  const reviews = p.requiredPullRequestReviews;
  if (reviews && reviews.requiredApprovingReviewCount > 0) {
    const need = reviews.requiredApprovingReviewCount;
    if (approvals(core, repo, issue, reviews.dismissStaleReviews) < need)
      throw new HttpError(
        405,
        need === 1
          ? "At least 1 approving review is required by reviewers with write access."
          : `At least ${need} approving reviews are required by reviewers with write access.`,
        doc,
      );
  }
  const checks = p.requiredStatusChecks?.checks ?? [];
  const states = checks.map((c) => ({ context: c.context, state: checkState(core, repo, issue.pull!.headSha, c.context, c.appId) }));
  const bad = states.filter((s) => s.state !== "success");
  if (bad.length === 1) throw new HttpError(405, `Required status check "${bad[0]!.context}" is ${bad[0]!.state}.`, doc);
  if (bad.length > 1)
    throw new HttpError(
      405,
      bad.every((s) => s.state === "expected")
        ? `${bad.length} of ${checks.length} required status checks are expected.`
        : `${bad.length} of ${checks.length} required status checks have not succeeded.`,
      doc,
    );
}

// ---------------------------------------------------------------- REST

function repoOf(ctx: RestCtx): Repo {
  if (!ctx.repo) throw new HttpError(404, "Not Found", ctx.doc);
  return ctx.repo;
}

/** The `protected` and `protection` fields of a branch as repos/get-branch and list-branches show them. */
export function branchProtectionSummary(repo: Repo, branch: string): { protected: boolean; protection: Record<string, unknown> } {
  const p = repo.protection?.get(branch);
  const checks = p?.requiredStatusChecks?.checks ?? [];
  return {
    protected: !!p,
    protection: {
      enabled: !!p,
      required_status_checks: {
        enforcement_level: !p?.requiredStatusChecks ? "off" : p.enforceAdmins ? "everyone" : "non_admins",
        contexts: checks.map((c) => c.context),
        checks: checks.map((c) => ({ context: c.context, app_id: c.appId })),
      },
    },
  };
}

const validation = (ctx: RestCtx, message: string, errors?: string[]): HttpError =>
  new HttpError(422, message, ctx.doc, errors ? { errors } : {});

/** Logins and App slugs of a request's `users`/`apps` lists, checked: the simulator has no teams. */
function actors(ctx: RestCtx, field: string, given: unknown): { users: string[]; apps: number[] } | null {
  if (given === null || given === undefined) return null;
  const g = given as { users?: string[]; teams?: string[]; apps?: string[] };
  if (g.teams?.length) throw validation(ctx, "Validation Failed", [`${field}: Forge's local GitHub has no teams (${g.teams.join(", ")})`]);
  const users = (g.users ?? []).map((login) => {
    const u = ctx.core.state.users.get(login);
    if (!u) throw validation(ctx, "Validation Failed", [`${field}: ${login} is not a user`]);
    return u.login;
  });
  const apps = (g.apps ?? []).map((slug) => {
    const a = [...ctx.core.state.apps.values()].find((x) => x.slug === slug);
    if (!a) throw validation(ctx, "Validation Failed", [`${field}: ${slug} is not an App`]);
    return a.id;
  });
  return { users, apps };
}

function protectionJson(ctx: RestCtx, repo: Repo, branch: string, p: BranchProtection): Record<string, unknown> {
  const url = `${ctx.core.model.api}/repos/${repo.owner.login}/${repo.name}/branches/${encodeURIComponent(branch)}/protection`;
  const users = (list: string[]) =>
    list
      .map((l) => ctx.core.state.users.get(l))
      .filter((u): u is User => !!u)
      .map((u) => ctx.core.model.user(u));
  const apps = (ids: number[]) => ids.map((id) => ctx.core.state.apps.get(id)).flatMap((a) => (a ? [ctx.core.model.app(a)] : []));
  const reviews = p.requiredPullRequestReviews;
  const enabled = (v: boolean) => ({ enabled: v });
  return {
    url,
    ...(p.requiredStatusChecks
      ? {
          required_status_checks: {
            url: `${url}/required_status_checks`,
            strict: p.requiredStatusChecks.strict,
            contexts: p.requiredStatusChecks.checks.map((c) => c.context),
            contexts_url: `${url}/required_status_checks/contexts`,
            checks: p.requiredStatusChecks.checks.map((c) => ({ context: c.context, app_id: c.appId })),
          },
        }
      : {}),
    ...(reviews
      ? {
          required_pull_request_reviews: {
            url: `${url}/required_pull_request_reviews`,
            dismiss_stale_reviews: reviews.dismissStaleReviews,
            require_code_owner_reviews: reviews.requireCodeOwnerReviews,
            required_approving_review_count: reviews.requiredApprovingReviewCount,
            require_last_push_approval: reviews.requireLastPushApproval,
            ...(reviews.dismissal
              ? {
                  dismissal_restrictions: {
                    url: `${url}/dismissal_restrictions`,
                    users_url: `${url}/dismissal_restrictions/users`,
                    teams_url: `${url}/dismissal_restrictions/teams`,
                    users: users(reviews.dismissal.users),
                    teams: [],
                    apps: apps(reviews.dismissal.apps),
                  },
                }
              : {}),
            ...(reviews.bypass
              ? { bypass_pull_request_allowances: { users: users(reviews.bypass.users), teams: [], apps: apps(reviews.bypass.apps) } }
              : {}),
          },
        }
      : {}),
    required_signatures: { url: `${url}/required_signatures`, enabled: false },
    enforce_admins: { url: `${url}/enforce_admins`, enabled: p.enforceAdmins },
    required_linear_history: enabled(p.requiredLinearHistory),
    allow_force_pushes: enabled(p.allowForcePushes),
    allow_deletions: enabled(p.allowDeletions),
    block_creations: enabled(p.blockCreations),
    required_conversation_resolution: enabled(p.requiredConversationResolution),
    lock_branch: enabled(p.lockBranch),
    allow_fork_syncing: enabled(p.allowForkSyncing),
    ...(p.restrictions
      ? {
          restrictions: {
            url: `${url}/restrictions`,
            users_url: `${url}/restrictions/users`,
            teams_url: `${url}/restrictions/teams`,
            apps_url: `${url}/restrictions/apps`,
            users: users(p.restrictions.users),
            teams: [],
            apps: apps(p.restrictions.apps),
          },
        }
      : {}),
  };
}

async function existingBranch(ctx: RestCtx, repo: Repo): Promise<string> {
  const branch = ctx.params.branch!;
  if (!(await git.resolveRef(repo.gitDir, `refs/heads/${branch}`))) throw new HttpError(404, "Branch not found", ctx.doc);
  return branch;
}

export const branchProtectionHandlers: Record<string, Handler> = {
  // docs.github.com/rest/branches/branch-protection#get-branch-protection: 404 "Branch not protected".
  "repos/get-branch-protection": async (ctx) => {
    const repo = repoOf(ctx);
    const branch = await existingBranch(ctx, repo);
    const p = repo.protection?.get(branch);
    if (!p) throw new HttpError(404, "Branch not protected", ctx.doc);
    const json = protectionJson(ctx, repo, branch, p);
    return { status: 200, body: { ...json, enabled: true, name: branch, protection_url: json.url } };
  },
  // "Protecting a branch requires admin or owner permissions to the repository." The request (its
  // four required keys, each an object or null) is checked against GitHub's description first; the
  // whole protection is replaced.
  "repos/update-branch-protection": async (ctx) => {
    const repo = repoOf(ctx);
    const branch = await existingBranch(ctx, repo);
    const b = ctx.body ?? {};
    const checksIn = b.required_status_checks as {
      strict: boolean;
      contexts: string[];
      checks?: Array<{ context: string; app_id?: number }>;
    } | null;
    const reviewsIn = b.required_pull_request_reviews as Record<string, unknown> | null;
    const count = reviewsIn ? ((reviewsIn.required_approving_review_count as number | undefined) ?? 1) : 0;
    if (count < 0 || count > 6)
      throw validation(ctx, "Invalid request.", ["required_approving_review_count must be a number between 0 and 6"]);
    if (b.restrictions && repo.owner.type !== "Organization")
      throw validation(ctx, "Only organization repositories can have users and team restrictions");
    const p: BranchProtection = {
      requiredStatusChecks: checksIn
        ? {
            strict: checksIn.strict,
            // `checks` wins over the deprecated `contexts`. An App id of -1 accepts any source; a
            // check given without one is pinned to "the GitHub App that has recently provided this
            // check, or any app if it was not set by a GitHub App" (the operation's description).
            checks: checksIn.checks
              ? checksIn.checks.map((c) => ({
                  context: c.context,
                  appId: c.app_id === undefined ? recentSource(ctx.core, repo, c.context) : c.app_id >= 0 ? c.app_id : null,
                }))
              : checksIn.contexts.map((context) => ({ context, appId: null })),
          }
        : null,
      enforceAdmins: b.enforce_admins === true,
      requiredPullRequestReviews: reviewsIn
        ? {
            dismissStaleReviews: reviewsIn.dismiss_stale_reviews === true,
            requireCodeOwnerReviews: reviewsIn.require_code_owner_reviews === true,
            requiredApprovingReviewCount: count,
            requireLastPushApproval: reviewsIn.require_last_push_approval === true,
            dismissal: actors(ctx, "dismissal_restrictions", reviewsIn.dismissal_restrictions),
            bypass: actors(ctx, "bypass_pull_request_allowances", reviewsIn.bypass_pull_request_allowances),
          }
        : null,
      restrictions: actors(ctx, "restrictions", b.restrictions),
      requiredLinearHistory: b.required_linear_history === true,
      allowForcePushes: b.allow_force_pushes === true,
      allowDeletions: b.allow_deletions === true,
      blockCreations: b.block_creations === true,
      requiredConversationResolution: b.required_conversation_resolution === true,
      lockBranch: b.lock_branch === true,
      allowForkSyncing: b.allow_fork_syncing === true,
    };
    (repo.protection ??= new Map()).set(branch, p);
    return { status: 200, body: protectionJson(ctx, repo, branch, p) };
  },
  "repos/delete-branch-protection": async (ctx) => {
    const repo = repoOf(ctx);
    const branch = await existingBranch(ctx, repo);
    if (!repo.protection?.delete(branch)) throw new HttpError(404, "Branch not protected", ctx.doc);
    return { status: 204 };
  },
};
