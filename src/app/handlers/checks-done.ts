/** `check_suite` and `status`: required checks or statuses finished, so merges that were waiting may go through now. */
import type { Context } from "probot";
import type { AppContext } from "../context.js";

export async function onChecksDone(ctx: AppContext, context: Context<"check_suite"> | Context<"status">): Promise<void> {
  if (context.name === "check_suite" && (context.payload as { action: string }).action !== "completed") return;
  const rt = await ctx.rtOf(context);
  for (const [runId, r] of await ctx.knownRuns(rt)) {
    if (r.status !== "running") continue;
    const loaded = await rt.engine.state(runId);
    if (loaded?.state.journal.outbox.some((e) => e.kind === "MergePullRequest")) await rt.engine.flush(runId);
  }
}
