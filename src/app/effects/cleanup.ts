// Effect runners: deleting a run's branches and cancelling an attempt's workflow run.
import { done, ownRuns, task, type EffectContext, type EffectOf, type EffectOutcome } from "./context.js";

export async function cleanupBranches(effect: EffectOf<"CleanupBranches">, ctx: EffectContext): Promise<EffectOutcome> {
  for (const b of effect.branches) await ctx.port.deleteBranch(b);
  return done();
}

export async function cancelAgent(effect: EffectOf<"CancelAgent">, ctx: EffectContext): Promise<EffectOutcome> {
  const { port } = ctx;
  const t = task(ctx, effect.taskId);
  const id = effect.workflowRunId ?? (t?.attempt === effect.attempt ? t.workflowRunId : undefined);
  if (id !== undefined) await port.cancelWorkflowRun(id);
  else {
    const branch = t?.attempt === effect.attempt && t.branch ? t.branch : undefined;
    if (branch) for (const run of await ownRuns(ctx, branch)) if (run.status !== "completed") await port.cancelWorkflowRun(run.id);
  }
  return done();
}
