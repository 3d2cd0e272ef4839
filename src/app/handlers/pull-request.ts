/**
 * `pull_request`: a task PR opened or merged moves its attempt on; a plan PR is checked. A PR is a
 * task's only when its head is the attempt's branch in this repository: a fork may name a branch
 * like a task's, and its PR is never one (docs/architecture.md#trust-boundaries).
 */
import type { Context } from "probot";
import type { AppContext } from "../context.js";
import { onPullMergedIntoBase } from "../issue-events.js";
import { checkPlanPullRequest } from "../plan-check.js";
import { onQueueChange } from "./merge-group.js";

/** The actions the App acts on; others (labels, `auto_merge_*`) are ignored without a call to GitHub. */
const ACTED_ON = new Set(["opened", "reopened", "synchronize", "closed", "ready_for_review", "edited"]);

export async function onPullRequest(ctx: AppContext, context: Context<"pull_request">): Promise<void> {
  const { payload } = context;
  // The merge queue took a task PR in or dropped it: its merge looks again (./merge-group.ts).
  if (payload.action === "enqueued" || payload.action === "dequeued") return onQueueChange(ctx, context);
  if (!ACTED_ON.has(payload.action)) return;
  const rt = await ctx.rtOf(context);
  const pr = payload.pull_request;
  const fromThisRepository = pr.head.repo?.id === payload.repository.id;
  const ref = fromThisRepository ? await ctx.attemptOf(rt, pr.head.ref) : undefined;
  if (!ref) {
    // A PR into the default branch that changes a plan or the config is checked before it merges.
    if (["opened", "reopened", "synchronize"].includes(payload.action) && pr.base.ref === payload.repository.default_branch) {
      await checkPlanPullRequest(rt.port, rt.engine, await ctx.knownRuns(rt), { number: pr.number, headSha: pr.head.sha });
    }
    // A run's final PR merged: the issues its tasks came from close (../issue-events.ts).
    if (payload.action === "closed" && pr.merged && fromThisRepository)
      await onPullMergedIntoBase(ctx, rt, { number: pr.number, head: pr.head.ref, base: pr.base.ref });
    return;
  }
  if (payload.action === "closed") {
    if (pr.merged && pr.merge_commit_sha)
      await ctx.apply(rt, ref.runId, [
        { kind: "pr.merged", taskId: ref.taskId, attempt: ref.attempt, number: pr.number, mergeSha: pr.merge_commit_sha },
      ]);
    return;
  }
  if (["opened", "reopened", "ready_for_review", "synchronize", "edited"].includes(payload.action)) {
    await ctx.apply(rt, ref.runId, [{ kind: "pr.opened", taskId: ref.taskId, attempt: ref.attempt, number: pr.number }]);
  }
}
