/**
 * `pull_request_review` submitted on a task PR: an approval (merge_policy review) or a request for
 * changes (a revision, docs/executor.md#iterations). A review is a reason to act only when its author
 * has write access, asked of GitHub (`GET /repos/{o}/{r}/collaborators/{u}/permission`) — never the
 * payload's `author_association`, which a reader's review can carry as well. Anyone else's review,
 * and a bot's, is ignored and costs nothing more than that call. The body is bounded before it
 * reaches the journal; it stays data (docs/architecture.md#trust-boundaries).
 */
import type { Context } from "probot";
import { bounded, FEEDBACK_LIMITS } from "../../core/feedback.js";
import { attemptNumbered } from "../../core/task-rules.js";
import { WRITE_PERMISSIONS } from "../commands.js";
import { logOf, type AppContext } from "../context.js";
import { finalPrApproved } from "../final-auto-merge.js";

export async function onPullRequestReview(ctx: AppContext, context: Context<"pull_request_review">): Promise<void> {
  const { payload } = context;
  if (payload.action === "dismissed") return onDismissed(ctx, context);
  if (payload.action !== "submitted") return;
  const review = payload.review;
  const state = review.state.toLowerCase();
  if (state !== "approved" && state !== "changes_requested") return;
  const reviewer = review.user;
  if (!reviewer || reviewer.type === "Bot" || payload.sender.type === "Bot") return;
  const pr = payload.pull_request;
  // A fork's PR is no task's, whatever its branch is called.
  if (pr.head.repo?.id !== payload.repository.id) return;
  const rt = await ctx.rtOf(context);
  const ref = await ctx.attemptOf(rt, pr.head.ref);
  // No task's: perhaps a run's final PR, which its config may set to auto-merge once approved.
  if (!ref) {
    if (state === "approved")
      await finalPrApproved(ctx, rt, { number: pr.number, headRef: pr.head.ref, headSha: pr.head.sha, baseRef: pr.base.ref });
    return;
  }
  const permission = await rt.port.permission(reviewer.login);
  if (!WRITE_PERMISSIONS.has(permission)) {
    logOf(context).info(
      { runId: ref.runId, taskId: ref.taskId, reviewer: reviewer.login, permission },
      "a review by someone without write access: ignored",
    );
    return;
  }
  const body = review.body ? bounded(review.body, FEEDBACK_LIMITS.message) : undefined;
  const result = await ctx.apply(rt, ref.runId, [
    {
      kind: "review.submitted",
      taskId: ref.taskId,
      attempt: ref.attempt,
      reviewId: review.id,
      actor: reviewer.login,
      state,
      headSha: review.commit_id,
      ...(body ? { body } : {}),
    },
  ]);
  if (result.rejections.length)
    logOf(context).info(
      { runId: ref.runId, taskId: ref.taskId, rejections: result.rejections.map((r) => r.reason) },
      "review changed nothing",
    );
}

/** At most this many distinct approvers of a head are asked for their permission when a review is dismissed. */
const APPROVERS_CHECKED = 5;

/**
 * A review of a task PR was dismissed. The payload says only which review and which PR: the App
 * re-reads the PR's reviews from GitHub and asks whether a writer's approval of the PR's current head
 * still stands (a person's, not a bot's, not dismissed); `decide` withdraws the approval otherwise.
 */
async function onDismissed(ctx: AppContext, context: Context<"pull_request_review">): Promise<void> {
  const { payload } = context;
  const pr = payload.pull_request;
  if (pr.head.repo?.id !== payload.repository.id) return;
  const rt = await ctx.rtOf(context);
  const ref = await ctx.attemptOf(rt, pr.head.ref);
  if (!ref) return;
  const loaded = await rt.engine.state(ref.runId);
  const t = loaded?.state.journal.tasks.find((x) => x.id === ref.taskId);
  // Only an approval Forge holds can be withdrawn: nothing to look up otherwise.
  if (!attemptNumbered(t, ref.attempt)?.revision.reviewApprovedHead) return;
  const current = await rt.port.getPullRequest(pr.number);
  const approvers = [
    ...new Set(
      (await rt.port.listReviews(pr.number))
        .filter((r) => r.state === "APPROVED" && r.commitId === current.headSha && !r.bot && r.login)
        .map((r) => r.login),
    ),
  ].slice(0, APPROVERS_CHECKED);
  let approved = false;
  for (const login of approvers) if (WRITE_PERMISSIONS.has(await rt.port.permission(login))) approved = true;
  const result = await ctx.apply(rt, ref.runId, [
    { kind: "review.dismissed", taskId: ref.taskId, attempt: ref.attempt, reviewId: payload.review.id, headSha: current.headSha, approved },
  ]);
  if (result.rejections.length)
    logOf(context).info(
      { runId: ref.runId, taskId: ref.taskId, rejections: result.rejections.map((r) => r.reason) },
      "dismissed review changed nothing",
    );
}
