/**
 * `issues`: a Change Request issue closed by a person with write access withdraws the CR
 * (`cr-close.ts`); a task's issue closed by a person while its run goes is answered (`issue-events.ts`).
 */
import type { Context } from "probot";
import { LABELS } from "../../core/layout.js";
import type { AppContext } from "../context.js";
import { crCloseCounts } from "../cr-close.js";
import { onIssueClosed } from "../issue-events.js";
import { isAppAuthor, parseMarker } from "../render.js";

export async function onIssues(ctx: AppContext, context: Context<"issues">): Promise<void> {
  const { payload } = context;
  if (payload.action !== "closed") return;
  if (!payload.issue.labels?.some((l) => (typeof l === "string" ? l : l.name) === LABELS.changeRequest)) {
    // Forge closes the issues of a run whose final PR merged: that is no person's doing.
    if (payload.sender.type !== "Bot") await onIssueClosed(ctx, await ctx.rtOf(context), payload.issue.number);
    return;
  }
  // Only a CR issue the App opened names a CR: a marker in anyone else's issue is text.
  if (!isAppAuthor(payload.issue.user, ctx.slug)) return;
  const marker = parseMarker(payload.issue.body ?? "");
  if (!marker?.crId) return;
  const rt = await ctx.rtOf(context);
  if (!(await crCloseCounts(rt.port, payload.issue.number, marker.runId, marker.crId, payload.sender.login))) return;
  await ctx.apply(rt, marker.runId, [{ kind: "cr.closed", crId: marker.crId }]);
}
