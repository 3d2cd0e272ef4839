/**
 * `workflow_run` and `workflow_job`: an agent job the App dispatched started, lives on, or ended.
 * Only Forge's own jobs are facts about Forge's jobs: the repository's CI runs on task branches too,
 * and a fork may name a branch like a task's (docs/architecture.md#trust-boundaries).
 */
import type { Context } from "probot";
import type { Journal } from "../../core/journal.js";
import { logOf, type AppContext } from "../context.js";
import { agentWorkflowPath, endedJobInput, notTheAttemptsJob, workflowFile, type AttemptRef, type JobRunFacts } from "../normalize.js";
import type { RepoRuntime } from "../runtime.js";
import { onCiDone } from "./checks-done.js";

/** The workflow run recorded for the attempt (the dispatch's answer, or the first own job seen), if any. */
function recordedRunId(journal: Journal | undefined, ref: AttemptRef): number | undefined {
  const t = journal?.tasks.find((x) => x.id === ref.taskId);
  return t && t.attempt === ref.attempt ? t.workflowRunId : undefined;
}

/** Whether `run` is the attempt's job; a run that is not is logged and left alone. */
async function isTheAttemptsJob(
  ctx: AppContext,
  rt: RepoRuntime,
  context: Context<"workflow_run" | "workflow_job">,
  ref: AttemptRef,
  run: JobRunFacts,
  journal: Journal | undefined,
): Promise<boolean> {
  const why = notTheAttemptsJob(run, {
    repositoryId: context.payload.repository.id,
    workflowPath: agentWorkflowPath(await ctx.configOf(rt)),
    recordedRunId: recordedRunId(journal, ref),
  });
  if (why)
    logOf(context).info(
      { event: context.name, workflowRunId: run.id, path: run.path ?? null, runEvent: run.event, attempt: ref, reason: why },
      "a workflow run on a task branch that is not the attempt's job: ignored",
    );
  return why === undefined;
}

export async function onWorkflowRun(ctx: AppContext, context: Context<"workflow_run">): Promise<void> {
  const { payload } = context;
  const run = payload.workflow_run;
  const rt = await ctx.rtOf(context);
  const ref = run.head_branch ? await ctx.attemptOf(rt, run.head_branch) : undefined;
  if (!ref) return;
  const loaded = await rt.engine.state(ref.runId);
  const journal = loaded?.state.journal;
  const facts: JobRunFacts = {
    id: run.id,
    // GitHub Enterprise Server's runs carry no `path`; the delivery's `workflow` names the file.
    path: (run as { path?: string }).path ?? (payload.workflow as { path?: string } | null | undefined)?.path,
    event: run.event,
    headRepositoryId: (run.head_repository as { id?: number } | null | undefined)?.id,
  };
  if (!(await isTheAttemptsJob(ctx, rt, context, ref, facts, journal))) {
    // The repository's CI on a task branch: a red run may call for a fix revision (docs/executor.md#iterations).
    const file = workflowFile(facts.path);
    if (payload.action === "completed" && file !== undefined && file !== agentWorkflowPath(await ctx.configOf(rt)))
      await onCiDone(ctx, rt, context, { branch: run.head_branch, headSha: run.head_sha, conclusion: run.conclusion });
    return;
  }
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
  // when the attempt is still RUNNING, the push is given a moment (it often comes a second or two
  // later); then the branch is read for a record commit before the attempt is called lost.
  if (!stillRunning(journal, ref)) return;
  const branch = run.head_branch!;
  const ended = { id: run.id, conclusion: run.conclusion };
  await ctx.laterReads.after(`${rt.port.owner}/${rt.port.repo}:${ref.runId}:${ref.taskId}:${ref.attempt}:${run.id}`, async () => {
    const now = ctx.laterReads.graceMs > 0 ? (await rt.engine.state(ref.runId))?.state.journal : journal;
    if (!stillRunning(now, ref)) return;
    const iteration = now?.tasks.find((x) => x.id === ref.taskId)?.iteration;
    await ctx.apply(rt, ref.runId, [await endedJobInput(rt.port, ref, branch, ended, iteration)]);
  });
}

/** Whether the attempt (a task's, or a follow-up's) is still waiting for its job's result. */
function stillRunning(journal: Journal | undefined, ref: AttemptRef): boolean {
  const task = journal?.tasks.find((x) => x.id === ref.taskId);
  if (task) return task.status === "RUNNING" && task.attempt === ref.attempt;
  return journal?.followups.find((f) => f.id === ref.taskId)?.status === "running";
}

export async function onWorkflowJob(ctx: AppContext, context: Context<"workflow_job">): Promise<void> {
  const { payload } = context;
  if (payload.action !== "in_progress") return;
  const rt = await ctx.rtOf(context);
  const job = payload.workflow_job;
  const ref = job.head_branch ? await ctx.attemptOf(rt, job.head_branch) : undefined;
  if (!ref) return;
  const journal = (await rt.engine.state(ref.runId))?.state.journal;
  // A job event names its run but not the run's workflow file or event: only once the attempt's run
  // is known (the dispatch's answer, or its `workflow_run`) does the run id settle it. Before, the
  // job is left alone: its `workflow_run` in_progress tells the same, with what it takes to check
  // it in the payload — reading the run from GitHub cost a call for most tasks of a busy run.
  const recorded = recordedRunId(journal, ref);
  if (recorded === undefined || recorded !== job.run_id) return;
  await ctx.apply(rt, ref.runId, [{ kind: "agent.started", taskId: ref.taskId, attempt: ref.attempt, workflowRunId: job.run_id }]);
}
