/** `workflow_run` and `workflow_job`: an agent job the App dispatched started, lives on, or ended. */
import type { Context } from "probot";
import type { AppContext } from "../context.js";
import { endedJobInput } from "../normalize.js";

export async function onWorkflowRun(ctx: AppContext, context: Context<"workflow_run">): Promise<void> {
  const { payload } = context;
  const run = payload.workflow_run;
  const rt = await ctx.rtOf(context);
  const ref = run.head_branch ? await ctx.attemptOf(rt, run.head_branch) : undefined;
  if (!ref) return;
  if (payload.action === "in_progress" || payload.action === "requested") {
    await ctx.apply(rt, ref.runId, [
      {
        kind: payload.action === "in_progress" ? "agent.started" : "agent.heartbeat",
        taskId: ref.taskId,
        attempt: ref.attempt,
        ...(payload.action === "in_progress" ? { workflowRunId: run.id } : {}),
      },
    ]);
    return;
  }
  if (payload.action !== "completed") return;
  // The job ended. Its result normally arrived first (as a push), but order is not guaranteed:
  // when the attempt is still RUNNING, look at the branch for a record commit before calling it lost.
  const loaded = await rt.engine.state(ref.runId);
  const task = loaded?.state.journal.tasks.find((x) => x.id === ref.taskId);
  const followup = loaded?.state.journal.followups.find((f) => f.id === ref.taskId);
  const stillRunning = task ? task.status === "RUNNING" && task.attempt === ref.attempt : followup?.status === "running";
  if (!stillRunning) return;
  await ctx.apply(rt, ref.runId, [await endedJobInput(rt.port, ref, run.head_branch!, run)]);
}

export async function onWorkflowJob(ctx: AppContext, context: Context<"workflow_job">): Promise<void> {
  const { payload } = context;
  if (payload.action !== "in_progress") return;
  const rt = await ctx.rtOf(context);
  const branch = payload.workflow_job.head_branch;
  const ref = branch ? await ctx.attemptOf(rt, branch) : undefined;
  if (ref)
    await ctx.apply(rt, ref.runId, [
      { kind: "agent.started", taskId: ref.taskId, attempt: ref.attempt, workflowRunId: payload.workflow_job.run_id },
    ]);
}
