/**
 * `sub_issues` and `issue_dependencies`: a change to the issue tree of a running run's plan is
 * answered on the issue — the plan stays as merged (`../issue-events.ts`). GitHub sends each change
 * twice, once from each side (`sub_issue_added` and `parent_issue_added`, `blocked_by_added` and
 * `blocking_added`): only the parent's and the blocked issue's side is taken.
 */
import type { Context } from "probot";
import type { AppContext } from "../context.js";
import { onTreeChanged } from "../issue-events.js";

export async function onSubIssues(ctx: AppContext, context: Context<"sub_issues">): Promise<void> {
  const { payload } = context;
  if (payload.action !== "sub_issue_added" && payload.action !== "sub_issue_removed") return;
  if (payload.sender?.type === "Bot") return;
  const verb = payload.action === "sub_issue_added" ? "added to" : "removed from";
  const what = `sub-issue #${payload.sub_issue.number} was ${verb} #${payload.parent_issue.number}`;
  await onTreeChanged(ctx, await ctx.rtOf(context), [payload.parent_issue.number, payload.sub_issue.number], what);
}

export async function onIssueDependencies(ctx: AppContext, context: Context<"issue_dependencies">): Promise<void> {
  const { payload } = context;
  if (payload.action !== "blocked_by_added" && payload.action !== "blocked_by_removed") return;
  if (payload.sender?.type === "Bot") return;
  const blocked = payload.blocked_issue?.number;
  const blocking = payload.blocking_issue?.number;
  if (blocked === undefined) return;
  const what = `#${blocked} ${payload.action === "blocked_by_added" ? "is now" : "is no longer"} blocked by #${blocking ?? "?"}`;
  await onTreeChanged(ctx, await ctx.rtOf(context), [blocked], what);
}
