/**
 * The merge queue's webhooks (docs/executor.md#merge-queue-and-auto-merge): `merge_group`
 * (`checks_requested`, `destroyed`) and `pull_request` `enqueued` / `dequeued`. The merge group's
 * workflow runs and checks are the repository's CI on a `gh-readonly-queue/…` branch, never an
 * agent's. A group destroyed because it was dequeued, whose required checks failed, is red CI of
 * the task PR it merged: the same `checks.failed` a red head brings, so the task's fix revision
 * answers it. Every event also flushes the merges waiting in the queue: they read where their PR
 * stands from GitHub, so a late, repeated or lost webhook changes nothing but how soon they look.
 */
import type { Context } from "probot";
import type { AppContext } from "../context.js";
import { flushMerges, redChecks } from "./checks-done.js";

/** `gh-readonly-queue/{base}/pr-{number}-{head sha}`: the pull request and head a group merges. */
const GROUP_REF = /^(?:refs\/heads\/)?gh-readonly-queue\/.+\/pr-(\d{1,9})-([0-9a-f]{40})$/;

export async function onMergeGroup(ctx: AppContext, context: Context<"merge_group">): Promise<void> {
  const p = context.payload as { action: string; reason?: string; merge_group: { head_sha: string; head_ref: string } };
  const rt = await ctx.rtOf(context);
  const m = p.action === "destroyed" && p.reason === "dequeued" ? GROUP_REF.exec(String(p.merge_group.head_ref).slice(0, 400)) : null;
  if (m) {
    const pr = await rt.port.getPullRequest(Number(m[1]));
    // Only a task's own PR (its head in this repository), and only the head the group merged.
    if (!pr.fromFork && pr.headSha === m[2])
      await redChecks(ctx, rt, context, { branch: pr.headRef, headSha: m[2], conclusion: "failure", group: p.merge_group.head_sha });
  }
  await flushMerges(ctx, rt);
}

/** `pull_request` `enqueued` / `dequeued` of a task PR: its merge looks again. */
export async function onQueueChange(ctx: AppContext, context: Context<"pull_request">): Promise<void> {
  const pr = context.payload.pull_request;
  if (pr.head.repo?.id !== context.payload.repository.id) return;
  const rt = await ctx.rtOf(context);
  if (await ctx.attemptOf(rt, pr.head.ref)) await flushMerges(ctx, rt);
}
