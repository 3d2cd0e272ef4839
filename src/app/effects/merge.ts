// Effect runner: merging a task's own pull request, once its head passed the gate (and opening the
// pull request its runner could not open).
import type { AttemptRecord, TaskState } from "../../core/journal.js";
import { attemptNumbered, branchUpdatePending, prHead, reviewSeen } from "../../core/task-rules.js";
import { LABELS, walkthroughPath } from "../../core/layout.js";
import { protectedChanges } from "../../core/protected-paths.js";
import type { LeafInput } from "../../core/inputs.js";
import { bounded, FEEDBACK_LIMITS } from "../../core/feedback.js";
import type { PullRequestInfo, ReviewInfo } from "../../github/port.js";
import { WRITE_PERMISSIONS } from "../commands.js";
import { checksFailedInput, ciVerdict } from "../../github/ci-checks.js";
import { graceLeft, readRuledChecks, requiredChecks } from "../../github/required-checks.js";
import {
  BRANCH_UPDATE_POLL_MS,
  BRANCH_UPDATE_WAIT_MS,
  conflictBlocker,
  updateRefusedBlocker,
  wantsUpToDate,
} from "../../github/branch-update.js";
import {
  cachedBranchRules,
  cachedRulesetName,
  mergeBlocker,
  refusesMergeCommits,
  rememberLinear,
  RULES_TTL_MS,
  withRulesetNames,
  type BranchRule,
} from "../../github/merge-rules.js";
import { ruleRefusal, ruleTypesOf } from "../../github/rule-refusals.js";
import { MERGE_BLOCKED } from "../../core/decide/merge-blocked.js";
import { done, task, type EffectContext, type EffectOf, type EffectOutcome } from "./context.js";
import { throughQueue } from "./merge-queue.js";

/** How soon a merge that lost a race with another merge into the same base is tried again. */
export const MERGE_RETRY_MS = 300;

export async function mergePullRequest(effect: EffectOf<"MergePullRequest">, ctx: EffectContext): Promise<EffectOutcome> {
  const { port } = ctx;
  const t = task(ctx, effect.taskId);
  const a = attemptNumbered(t, effect.attempt);
  const known = effect.prNumber ?? a?.prNumber;
  // Read just before merging: only the task's own pull request is merged — its head the attempt's
  // branch in this repository, its base the run's integration branch — whatever number was recorded.
  // With its number known, the pull request and what it changes come in one call.
  const current: (PullRequestInfo & { files?: string[]; changeRequests?: ReviewInfo[] }) | null =
    known !== undefined
      ? await port.getPullRequestWithFiles(known)
      : ((await port.findPullRequest(effect.branch)) ?? (t && a ? await openMissingPull(effect, ctx, t, a) : null));
  if (!current) return { kind: "later", reason: `no pull request for ${effect.branch} yet` };
  if (current.merged && current.mergeSha) return done({ mergeSha: current.mergeSha, prNumber: current.number });
  if (current.fromFork || current.headRef !== effect.branch || current.baseRef !== ctx.journal.integrationBranch)
    return {
      kind: "failed",
      error: `pull request #${current.number} is not ${effect.branch} → ${ctx.journal.integrationBranch} in this repository; Forge merges only a task's own pull request`,
    };
  const number = current.number;
  // An update of the branch GitHub accepted: its new head, read back here, is the PR's; until it is
  // there nothing merges.
  if (t && a) {
    const updating = await awaitBranchUpdate(ctx, effect, t, current.headSha);
    if (updating) return updating;
  }
  // Merge exactly the head that passed the MERGE_READY gate (the PR's head over the verified work,
  // or Forge's update of it): GitHub answers 409 if it moved.
  const verified = t && a?.revision.pushedSha !== undefined ? prHead(t) : undefined;
  // What the PR changes, as GitHub lists it: protected paths wait for a person's approval of this head.
  const head = verified ?? current.headSha;
  if (a?.revision.approvedHead !== head) {
    // Listed for the head GitHub has now: a head that moved since is refused by the merge below.
    const held = protectedChanges(current.files ?? (await port.listPullRequestFiles(number)), ctx.config);
    if (held.length) return done({ held, prNumber: number });
  }
  // The checks the config and the integration branch's rules require, on the head that merges,
  // whoever reports them (Actions, another App, a commit status): running → wait; failed → the fix
  // revision answers them; one only the rules name that nothing reported → GitHub's refusal says so.
  const base = ctx.journal.integrationBranch;
  // The branch's rules, read at most once here for both what they require and the merge method.
  let rules: Promise<BranchRule[]> | undefined;
  const readRules = () => (rules ??= port.branchRules(base));
  const required = await requiredChecks(port, base, ctx.config.required_checks, ctx.now, RULES_TTL_MS, () =>
    readRuledChecks(port, base, readRules),
  );
  if (required.all.length) {
    const ci = await port.ciChecks(head, required.all);
    const verdict = ciVerdict(ci, required.configured);
    if (verdict === "wait") return { kind: "later", reason: `required checks of ${head.slice(0, 7)} are not done` };
    // A check only the rules name has not reported yet: its App may not have heard of the push. It
    // is given a moment before the merge is tried without it (GitHub's refusal then names it).
    const wait = verdict === "go" ? graceLeft(port, head, ci.missing, ctx.now) : 0;
    if (wait > 0)
      return {
        kind: "later",
        reason: `required checks ${ci.missing.join(", ")} of ${head.slice(0, 7)} have not reported yet`,
        retryInMs: wait,
      };
    // Red: the fix revision answers them — even when they failed before the task reached the gate,
    // when their own webhook found nothing to do.
    if (verdict === "red")
      return {
        kind: "later",
        reason: `required checks failed: ${ci.failing.map((c) => c.name).join(", ")}`,
        ...(t && a && head === prHead(t) ? { inputs: [checksFailedInput({ taskId: t.id, attempt: t.attempts }, head, ci.failing)] } : {}),
      };
  }
  // A writer's request for changes of this head that the journal has not taken in yet (its webhook
  // still on the way, or lost): the merge waits, and the review goes in with this outcome — the
  // revision it starts, or the revision limit it meets, takes the merge out of the outbox.
  if (t && a) {
    const unseen = await unseenChangeRequests(ctx, t, a, number, head, current.changeRequests);
    if (unseen.length)
      return { kind: "later", reason: `a request for changes of ${head.slice(0, 7)} is not in the journal yet`, inputs: unseen };
  }
  const title = t ? `forge(${t.id}): ${ctx.journal.plan.nodes.find((n) => n.id === t.id)?.title || t.id}` : `forge: ${effect.taskId}`;
  // The reads above took time: a turn decided meanwhile (a review that starts a revision on this
  // PR) may have dropped this merge. A merge cannot be taken back, so the journal is asked again.
  if (ctx.stillWanted && !ctx.stillWanted()) return { kind: "later", reason: "the merge left the outbox while it was being checked" };
  // The method the integration branch's rules allow: squash where they want a linear history or signed commits.
  const { method, rules: branchRules } = await cachedBranchRules(port, base, ctx.now, RULES_TTL_MS, readRules);
  // A branch whose rules want a merge queue takes the task's PR through it (./merge-queue.ts).
  const queued = async () => {
    const pr = await port.getPullRequest(number);
    if (pr.merged && pr.mergeSha) return done({ mergeSha: pr.mergeSha, prNumber: number });
    return throughQueue(ctx, effect, { t: t!, number, head, required }, async (message) =>
      refused(ctx, effect, t, message, method, { number, head: verified, mergeable: pr.mergeable }, branchRules),
    );
  };
  if (t && branchRules.some((r) => r.type === "merge_queue")) return queued();
  const res = await port.mergePullRequest(number, { ...(verified ? { sha: verified } : {}), method, title });
  if (res.kind === "merged") return done({ mergeSha: res.sha, prNumber: number });
  // Another merge into the same base won the race: nothing is wrong with this one, try again soon.
  if (res.kind === "base_moved") return { kind: "later", reason: res.message, retryInMs: MERGE_RETRY_MS };
  // A queue the rules did not show (their read failed, or branch protection's): through it.
  if (t && res.kind === "not_mergeable" && ruleTypesOf(res.message, branchRules).includes("merge_queue")) return queued();
  // Merged already (by this effect before a crash, behind a lost answer, or by a person)? Else it
  // waits: for required checks (check_suite/status webhooks flush it) or the next reconcile pass.
  const pr = await port.getPullRequest(number);
  if (pr.merged && pr.mergeSha) return done({ mergeSha: pr.mergeSha, prNumber: number });
  if (res.kind === "not_mergeable")
    return refused(ctx, effect, t, res.message, method, { number, head: verified, mergeable: pr.mergeable }, branchRules);
  // GitHub said the head is not the verified one: only a head that really moved fails the merge.
  if (pr.state === "open" && verified && pr.headSha === verified)
    return { kind: "later", reason: "GitHub answered 409 for the verified head; trying again", retryInMs: MERGE_RETRY_MS };
  return {
    kind: "failed",
    error: `the head of ${effect.branch} moved after it was verified (${verified?.slice(0, 7) ?? "?"} → ${pr.headSha.slice(0, 7)}); it will not be merged unverified`,
  };
}

/**
 * Before a refinery's branch merges an upstream's: what the upstream's pull request changes, read
 * from GitHub (renames by their old path too). Only the task's own PR counts, at the head the
 * journal verified; protected paths come back as `held` (the refinery waits for a person's
 * approval of that head), none as `clean`.
 */
export async function checkUpstream(effect: EffectOf<"CheckUpstream">, ctx: EffectContext): Promise<EffectOutcome> {
  const { port } = ctx;
  const t = task(ctx, effect.taskId);
  const a = attemptNumbered(t, effect.attempt);
  if (!t || !a || t.status !== "MERGE_READY") return done({});
  const known = effect.prNumber ?? a.prNumber;
  const current: (PullRequestInfo & { files?: string[] }) | null =
    known !== undefined ? await port.getPullRequestWithFiles(known) : await port.findPullRequest(effect.branch);
  if (!current) return { kind: "later", reason: `no pull request for ${effect.branch} yet` };
  if (current.fromFork || current.headRef !== effect.branch || current.baseRef !== ctx.journal.integrationBranch)
    return {
      kind: "failed",
      error: `pull request #${current.number} is not ${effect.branch} → ${ctx.journal.integrationBranch} in this repository`,
    };
  const head = prHead(t);
  if (current.headSha !== head)
    return {
      kind: "failed",
      error: `the head of ${effect.branch} moved after it was verified (${head?.slice(0, 7) ?? "?"} → ${current.headSha.slice(0, 7)})`,
    };
  const held = protectedChanges(current.files ?? (await port.listPullRequestFiles(current.number)), ctx.config);
  return done(held.length ? { held, prNumber: current.number } : { clean: true, prNumber: current.number });
}

/**
 * A verified attempt whose runner could not open its pull request (a job's token may not open pull
 * requests where the repository's Actions setting "Allow GitHub Actions to create and approve pull
 * requests" is off; a lost push or call; the job killed between its last push and the PR): the App
 * opens it, pointing at the attempt's walkthrough, so the work is reviewed and merged as any other.
 * A PR the runner opens meanwhile is found instead.
 */
async function openMissingPull(
  effect: { taskId: string; attempt: number; branch: string },
  ctx: EffectContext,
  t: TaskState,
  a: AttemptRecord,
): Promise<PullRequestInfo | null> {
  const { port, journal } = ctx;
  const head = await port.branchHead(effect.branch);
  if (!head) return null;
  const title = journal.plan.nodes.find((n) => n.id === t.id)?.title || t.id;
  const record = a.recordSha ?? head;
  const body = [
    `The runner of attempt ${effect.attempt} did not open this pull request; Forge opened it. (A job's token may not open pull requests while the repository's Actions setting "Allow GitHub Actions to create and approve pull requests" is off: Settings → Actions → General → Workflow permissions.)`,
    "",
    `The walkthrough: \`${walkthroughPath(journal.runId, t.id, effect.attempt)}\` at ${record}.`,
  ].join("\n");
  try {
    const pr = await port.createPullRequest({
      head: effect.branch,
      base: journal.integrationBranch,
      title: `forge(${t.id}): ${title}`,
      body,
    });
    await port.updateIssue(pr.number, { labels: [LABELS.task] }).catch(() => undefined);
    return pr;
  } catch (e) {
    // GitHub answers 422 for a second PR of the same head and base: the runner opened it meanwhile.
    const found = await port.findPullRequest(effect.branch);
    if (found) return found;
    throw e;
  }
}

/**
 * A MERGE_READY attempt's pull request no merge is about to open (merge_policy review or manual, an
 * upstream a refinery carries): found, or opened by the App, so that a person — or the refinery —
 * has it to read.
 */
export async function openPullRequest(effect: EffectOf<"OpenPullRequest">, ctx: EffectContext): Promise<EffectOutcome> {
  const t = task(ctx, effect.taskId);
  const a = attemptNumbered(t, effect.attempt);
  if (!t || !a || t.status !== "MERGE_READY") return done({});
  const pr = (await ctx.port.findPullRequest(effect.branch)) ?? (await openMissingPull(effect, ctx, t, a));
  if (!pr) return { kind: "later", reason: `no branch ${effect.branch} to open a pull request of` };
  return done({ prNumber: pr.number });
}

/** At most this many authors of requests for changes not yet in the journal are asked for their permission before a merge. */
const REVIEWERS_CHECKED = 5;

/**
 * The requests for changes of `head` by people with write access (asked of GitHub, as the review
 * webhook's handler asks) that the task has neither answered nor queued: as the review's webhook
 * would have brought them. A review the journal has seen — answered by a revision, waiting, or met
 * by the revision limit — is in `answered` or `feedback` and holds nothing back.
 */
async function unseenChangeRequests(
  ctx: EffectContext,
  t: TaskState,
  a: AttemptRecord,
  number: number,
  head: string,
  listed: ReviewInfo[] | undefined,
): Promise<LeafInput[]> {
  const candidates = (listed ?? (await ctx.port.listReviews(number)))
    .filter((r) => r.state === "CHANGES_REQUESTED" && r.commitId === head && !r.bot && r.login && !reviewSeen(a, r.id))
    .slice(-REVIEWERS_CHECKED);
  const inputs: LeafInput[] = [];
  for (const r of candidates) {
    if (!WRITE_PERMISSIONS.has(await ctx.port.permission(r.login))) continue;
    inputs.push({
      kind: "review.submitted",
      taskId: t.id,
      attempt: t.attempts,
      reviewId: r.id,
      actor: r.login,
      state: "changes_requested",
      headSha: r.commitId,
      ...(r.body ? { body: bounded(r.body, FEEDBACK_LIMITS.message) } : {}),
    });
  }
  return inputs;
}

/**
 * GitHub refused the merge (405). A merge commit refused by a linear history is tried again at once
 * as a squash; a branch that must be up to date is updated (update-branch, from the verified head);
 * GitHub's "not mergeable" is read further — a mergeability still being computed (null) is read
 * again later, a conflict is a block; a refusal Forge cannot resolve by itself goes to the task
 * (`merge.blocked`: its PR and the tracker say which rule, which branch, what a person can do) —
 * once per reason, so the outside fact it is decided as does not set off another try that says it again.
 */
async function refused(
  ctx: EffectContext,
  effect: EffectOf<"MergePullRequest">,
  t: TaskState | undefined,
  message: string,
  method: string,
  pr: { number: number; head: string | undefined; mergeable: boolean | null | undefined },
  rules: readonly BranchRule[],
): Promise<EffectOutcome> {
  const base = ctx.journal.integrationBranch;
  if (method === "merge" && refusesMergeCommits(message)) {
    rememberLinear(ctx.port, base, ctx.now);
    return { kind: "later", reason: `${message} (the next try squashes)`, retryInMs: MERGE_RETRY_MS };
  }
  // The rules the refusal names, each with its ruleset's name (read once per TTL).
  const said = ruleRefusal(message)?.messages ?? [message];
  const named = await withRulesetNames(
    rules,
    said.flatMap((m) => ruleTypesOf(m, rules)),
    (id) => cachedRulesetName(ctx.port, id, ctx.now, RULES_TTL_MS, () => ctx.port.rulesetName(id)),
  );
  const blocker = mergeBlocker(message, base, ctx.config.required_checks, named);
  const a = attemptNumbered(t, effect.attempt);
  if (blocker || !t || !a) return blocker && t && a ? blocked(t, a, blocker) : { kind: "later", reason: message };
  if (wantsUpToDate(message) && pr.head) return updateBranch(ctx, effect, t, a, pr.number, pr.head);
  // "Not mergeable": GitHub's job may still be computing whether it conflicts — read again later, never taken for a conflict.
  if (pr.mergeable === null)
    return {
      kind: "later",
      reason: `GitHub is still computing whether ${effect.branch} merges (${message})`,
      retryInMs: BRANCH_UPDATE_POLL_MS,
    };
  if (pr.mergeable === false) return blocked(t, a, conflictBlocker(t.id, effect.branch, base, message));
  return { kind: "later", reason: message };
}

/** The task's merge waits for a person: said once per reason (`merge.blocked`). */
function blocked(t: TaskState, a: AttemptRecord, reason: string): EffectOutcome {
  if (a.revision.waiting === `${MERGE_BLOCKED}${reason}`) return { kind: "later", reason };
  return { kind: "later", reason, inputs: [{ kind: "merge.blocked", taskId: t.id, attempt: t.attempts, reason }] };
}

/**
 * The integration branch's rules want the head to contain its tip: GitHub is asked to merge it
 * into the PR's branch, if its head is still `head`. Accepted, the merge waits for the new head —
 * pushed by the App, Forge's own: its webhook is not taken in (src/app/guard.ts), so no attempt or
 * revision starts; a conflict or another refusal is a block.
 */
async function updateBranch(
  ctx: EffectContext,
  effect: EffectOf<"MergePullRequest">,
  t: TaskState,
  a: AttemptRecord,
  number: number,
  head: string,
): Promise<EffectOutcome> {
  const base = ctx.journal.integrationBranch;
  if (ctx.stillWanted && !ctx.stillWanted()) return { kind: "later", reason: "the merge left the outbox while it was being tried" };
  const res = await ctx.port.updatePullRequestBranch(number, head);
  switch (res.kind) {
    case "accepted":
      return {
        kind: "later",
        reason: `bringing ${effect.branch} up to date with ${base} (GitHub merges it in)`,
        retryInMs: BRANCH_UPDATE_POLL_MS,
        inputs: [{ kind: "branch.update_requested", taskId: t.id, attempt: t.attempts, from: head }],
      };
    case "conflict":
      return blocked(t, a, conflictBlocker(t.id, effect.branch, base, res.message));
    case "refused":
      return blocked(t, a, updateRefusedBlocker(effect.branch, base, res.message));
    default:
      // The base moved back or the head moved meanwhile: the next try reads them again.
      return { kind: "later", reason: res.message, retryInMs: MERGE_RETRY_MS };
  }
}

/**
 * While an update of the branch GitHub accepted has not been seen: the merge waits for its new head
 * (asking again after `BRANCH_UPDATE_WAIT_MS`). A new head that is the integration branch merged
 * into the one Forge asked to update — a merge commit whose first parent is that head and whose
 * second is on the integration branch — is that update: GitHub answers the request before it
 * merges, and names no head; the App's own push webhook is not taken in. Undefined: nothing waits
 * (any other new head is refused by the merge as unverified).
 */
async function awaitBranchUpdate(
  ctx: EffectContext,
  effect: EffectOf<"MergePullRequest">,
  t: TaskState,
  current: string,
): Promise<EffectOutcome | undefined> {
  const from = branchUpdatePending(t);
  if (!from) return undefined;
  if (current === from) {
    const asked = Date.parse(t.attempt?.branchUpdate?.requestedAt ?? "");
    if (!(ctx.now - asked < BRANCH_UPDATE_WAIT_MS)) return undefined;
    return { kind: "later", reason: `waiting for GitHub to update ${effect.branch}`, retryInMs: BRANCH_UPDATE_POLL_MS };
  }
  const c = await ctx.port.commit(current);
  if (c.parents.length !== 2 || c.parents[0] !== from) return undefined;
  const relation = await ctx.port.compareCommits(c.parents[1]!, ctx.journal.integrationBranch);
  if (relation !== "ahead" && relation !== "identical") return undefined;
  return {
    kind: "later",
    reason: `${effect.branch} was brought up to date (${current.slice(0, 7)})`,
    retryInMs: MERGE_RETRY_MS,
    inputs: [{ kind: "branch.updated", taskId: t.id, attempt: t.attempts, from, head: current }],
  };
}
