// Effect runners: deleting a run's branches and cancelling an attempt's workflow run.
import { branchName } from "../../core/layout.js";
import { attemptNumbered } from "../../core/task-rules.js";
import { done, ownRuns, task, type EffectContext, type EffectOf, type EffectOutcome } from "./context.js";

export async function cleanupBranches(effect: EffectOf<"CleanupBranches">, ctx: EffectContext): Promise<EffectOutcome> {
  for (const b of effect.branches) await ctx.port.deleteBranch(b);
  return done();
}

export async function cancelAgent(effect: EffectOf<"CancelAgent">, ctx: EffectContext): Promise<EffectOutcome> {
  const { port } = ctx;
  const a = attemptNumbered(task(ctx, effect.taskId), effect.attempt);
  const id = effect.workflowRunId ?? a?.revision.workflowRunId;
  if (id !== undefined) await port.cancelWorkflowRun(id);
  else {
    // A retried attempt is no longer the task's: its branch is the one the template names.
    const branch = a?.branch ?? branchName(ctx.config, ctx.journal.runId, effect.taskId, effect.attempt);
    for (const run of await ownRuns(ctx, branch)) if (run.status !== "completed") await port.cancelWorkflowRun(run.id);
  }
  return done();
}
