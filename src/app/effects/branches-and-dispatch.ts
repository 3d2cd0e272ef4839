// Effect runners: task branches, and the dispatches of the agent workflow (an attempt, the Captain,
// a follow-up) with the context they carry.
import { dispatchContextPath, splitDispatchContext } from "../../core/dispatch-inputs.js";
import { captainBranch, captainId, DISPATCH_INPUTS, planDir, stateBranch } from "../../core/layout.js";
import { attemptNumbered, prHead } from "../../core/task-rules.js";
import { ConflictError } from "../../github/port.js";
import { appTelemetry, traceDispatch } from "../telemetry.js";
import { dispatchTraceparent } from "../../core/trace.js";
import { dispatchedBefore, done, task, type EffectContext, type EffectOf, type EffectOutcome } from "./context.js";

/**
 * Cut from the integration head as it is now (it holds every MERGED dependency); an existing
 * branch (a repeated effect) is left as it is.
 */
export async function prepareBranch(effect: EffectOf<"PrepareBranch">, ctx: EffectContext): Promise<EffectOutcome> {
  const { port } = ctx;
  const from = (await ctx.prefetchedHead) ?? (await port.branchHead(effect.from));
  if (!from) return { kind: "failed", error: `branch ${effect.from} does not exist` };
  await port.createBranch(effect.branch, from);
  // A refinery's upstream branches are merged server-side; the conflicted ones are left to its agent.
  // Each at the head the journal verified (and whose pull request was read for protected paths),
  // never whatever its branch holds by now: a job token still alive can push to it.
  const conflicts: string[] = [];
  for (const upstream of effect.merge) {
    const u = ctx.journal.tasks.find((t) => t.attempt?.branch === upstream && t.status === "MERGE_READY");
    const head = (u && prHead(u)) ?? upstream;
    const merged = await port.mergeBranch(effect.branch, head, `forge: merge ${upstream} into ${effect.branch}`);
    if (merged.kind === "conflict") conflicts.push(upstream);
  }
  if (conflicts.length) ctx.conflicts.set(`${effect.taskId}:${effect.attempt}`, conflicts);
  return done({ conflicts });
}

export async function dispatchAgent(effect: EffectOf<"DispatchAgent">, ctx: EffectContext): Promise<EffectOutcome> {
  if (ctx.replay) {
    // A dispatch may have happened before a crash: its run is on the attempt's branch, unique to it.
    // A revision's branch also holds the earlier jobs of its attempt: only a run newer than the
    // previous revision's is this one's (GitHub's run ids increase).
    const run = await dispatchedBefore(ctx, effect.branch);
    if (run && (effect.afterRunId === undefined || run.id > effect.afterRunId)) return done({ workflowRunId: run.id });
  }
  // Found while preparing the branch in this round, else kept in the journal when that was acknowledged
  // (this dispatch is tried again after a failure, or after a restart).
  const t = task(ctx, effect.taskId);
  const conflicts = ctx.conflicts.get(`${effect.taskId}:${effect.attempt}`) ?? attemptNumbered(t, effect.attempt)?.conflicts;
  const context = {
    ...(effect.context ?? {}),
    ...(conflicts?.length ? { conflicts } : {}),
    ...(effect.iteration !== undefined ? { iteration: effect.iteration } : {}),
  };
  const { workflowRunId } = await dispatchJob(ctx, effect.branch, effect.taskId, effect.attempt, context, effect.iteration);
  return done(workflowRunId !== undefined ? { workflowRunId } : {});
}

/**
 * Dispatches the agent workflow for an attempt with GitHub's limits on inputs kept: a context too
 * long for the `context` input (a refinement document, a retry message) has its largest fields
 * written to a file on the run's state branch, and the input names the file and its blob sha
 * (src/core/dispatch-inputs.ts). Without that, GitHub's 422 would refuse this attempt's every dispatch.
 */
async function dispatchJob(
  ctx: EffectContext,
  branch: string,
  taskId: string,
  attempt: number,
  context: Record<string, unknown>,
  iteration?: number,
): Promise<{ workflowRunId?: number }> {
  const base: Record<string, string> = {
    [DISPATCH_INPUTS.runId]: ctx.journal.runId,
    [DISPATCH_INPUTS.taskId]: taskId,
    [DISPATCH_INPUTS.attempt]: String(attempt),
  };
  const inputs = { ...base };
  const telemetry = appTelemetry(ctx.config);
  // The attempt's place in the run's trace; only when telemetry is on, so a workflow without it sees nothing new.
  if (telemetry) {
    context = { ...context, traceparent: dispatchTraceparent(ctx.journal.runId, taskId, attempt) };
    traceDispatch(telemetry, ctx.journal.runId, taskId, attempt, ctx.now);
  }
  if (Object.keys(context).length) {
    const path = dispatchContextPath(taskId, attempt, iteration);
    const { inline, spilled } = splitDispatchContext(base, context, path);
    const file = spilled ? { path, sha: await writeContextFile(ctx, path, JSON.stringify(spilled)) } : undefined;
    inputs[DISPATCH_INPUTS.context] = JSON.stringify(file ? { ...inline, file } : inline);
  }
  return ctx.port.dispatchWorkflow(ctx.config.workflow, branch, inputs);
}

/** Writes an attempt's context file on the run's state branch (once: a dispatch tried again finds it). Returns its blob sha. */
async function writeContextFile(ctx: EffectContext, path: string, text: string): Promise<string> {
  const branch = stateBranch(ctx.journal.runId);
  const message = `forge: the dispatch context of ${path}`;
  try {
    return (await ctx.port.writeFile(branch, path, text, message)).blobSha;
  } catch (e) {
    if (!(e instanceof ConflictError)) throw e;
    const existing = await ctx.port.readFile(path, branch);
    if (existing?.content === text) return existing.blobSha;
    if (existing) return (await ctx.port.writeFile(branch, path, text, message, existing.blobSha)).blobSha;
    throw e;
  }
}

export async function dispatchCaptain(effect: EffectOf<"DispatchCaptain">, ctx: EffectContext): Promise<EffectOutcome> {
  const { port } = ctx;
  const base = ctx.journal.baseBranch;
  const branch = captainBranch(ctx.journal.runId, effect.crId);
  if (ctx.replay) {
    const run = await dispatchedBefore(ctx, branch);
    if (run) return done({ workflowRunId: run.id });
  }
  if (!(await port.branchHead(branch))) {
    const head = await port.branchHead(base);
    if (!head) return { kind: "failed", error: `base branch ${base} does not exist` };
    await port.createBranch(branch, head);
  }
  const cr = ctx.journal.changeRequests.find((c) => c.id === effect.crId);
  const { workflowRunId } = await dispatchJob(ctx, branch, captainId(effect.crId), 1, {
    changeRequest: effect.crId,
    planDir: planDir(ctx.journal.planId),
    reason: cr?.reason ?? "",
    ...(cr?.issueNumber !== undefined ? { issue: cr.issueNumber } : {}),
  });
  return done(workflowRunId !== undefined ? { workflowRunId } : {});
}

export async function spawnFollowup(effect: EffectOf<"SpawnFollowup">, ctx: EffectContext): Promise<EffectOutcome> {
  const { port } = ctx;
  if (ctx.replay) {
    const run = await dispatchedBefore(ctx, effect.branch);
    if (run) return done({ workflowRunId: run.id });
  }
  if (!(await port.branchHead(effect.branch))) {
    const from = await port.branchHead(ctx.journal.integrationBranch);
    if (!from) return { kind: "failed", error: `branch ${ctx.journal.integrationBranch} does not exist` };
    await port.createBranch(effect.branch, from);
  }
  const { workflowRunId } = await dispatchJob(ctx, effect.branch, effect.followupId, 1, {
    followup: effect.text,
    sourceTaskId: effect.sourceTaskId,
  });
  return done(workflowRunId !== undefined ? { workflowRunId } : {});
}
