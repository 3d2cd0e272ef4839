/** `issues`: a Change Request issue closed by a person withdraws the CR. */
import type { Context } from "probot";
import { LABELS } from "../../core/layout.js";
import type { AppContext } from "../context.js";
import { parseMarker } from "../render.js";

export async function onIssues(ctx: AppContext, context: Context<"issues">): Promise<void> {
  const { payload } = context;
  if (payload.action !== "closed") return;
  if (!payload.issue.labels?.some((l) => (typeof l === "string" ? l : l.name) === LABELS.changeRequest)) return;
  const marker = parseMarker(payload.issue.body ?? "");
  if (!marker?.crId) return;
  const rt = await ctx.rtOf(context);
  await ctx.apply(rt, marker.runId, [{ kind: "cr.closed", crId: marker.crId }]);
}
