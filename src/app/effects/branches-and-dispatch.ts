// Effect runners: task branches, and the dispatches of the agent workflow (an attempt, the Captain,
// a follow-up) with the context they carry.
import { dispatchContextPath, splitDispatchContext } from "../../core/dispatch-inputs.js";
import { captainBranch, captainId, DISPATCH_INPUTS, planDir, stateBranch } from "../../core/layout.js";
import { attemptNumbered, prHead } from "../../core/task-rules.js";
import type { SquashUpstream } from "../../core/task-record.js";
import { refusesMergeCommits } from "../../github/merge-rules.js";
import { ConflictError, GitHubError } from "../../github/port.js";
import { appTelemetry, traceDispatch } from "../telemetry.js";
import { dispatchTraceparent } from "../../core/trace.js";
import { dispatchedBefore, done, task, type EffectContext, type EffectOf, type EffectOutcome } from "./context.js";

/**
 * Cut from the integration head as it is now (it holds every MERGED dependency); an existing
 * branch (a repeated effect) is left as it is. A refinery's upstream branches are merged into it
 * server-side, each at the head the journal verified — unless the branch must keep a linear
 * history (`wantsLinearHistory`, or a merge GitHub refuses for its merge commit): then nothing is
 * merged here and its job squashes each one (one commit per upstream, action/src/task/squash.ts),
 * as it merges the conflicted ones otherwise.
 */
export async function prepareBranch(effect: EffectOf<"PrepareBranch">, ctx: EffectContext): Promise<EffectOutcome> {
  const { port } = ctx;
  const from = (await ctx.prefetchedHead) ?? (await port.branchHead(effect.from));
  if (!from) return { kind: "failed", error: `branch ${effect.from} does not exist` };
  await port.createBranch(effect.branch, from);
  // Each upstream at the head the journal verified (and whose pull request was read for protected
  // paths), never whatever its branch holds by now: a job token still alive can push to it.
  const upstreams = await Promise.all(
    effect.merge.map(async (upstream) => {
      const u = ctx.journal.tasks.find((t) => t.attempt?.branch === upstream && t.status === "MERGE_READY");
      return { branch: upstream, head: (u && prHead(u)) ?? (await port.branchHead(upstream)) ?? upstream };
    }),
  );
  const key = `${effect.taskId}:${effect.attempt}`;
  const conflicts: string[] = [];
  if (upstreams.length > 0 && (await wantsLinearHistory(port, effect.branch))) return squashed(ctx, key, upstreams);
  for (const [n, upstream] of upstreams.entries()) {
    const merged = await port
      .mergeBranch(effect.branch, upstream.head, `forge: merge ${upstream.branch} into ${effect.branch}`)
      .catch((e: unknown) => {
        // A merge commit refused for the branch (branch protection's linear history, unreadable to
        // the App, or a rule the rules read missed): the rest, and the conflicted ones, go to the job.
        if (e instanceof GitHubError && refusesMergeCommits(e.message)) return undefined;
        throw e;
      });
    if (!merged) {
      const left = [...upstreams.filter((u) => conflicts.includes(u.branch)), ...upstreams.slice(n)];
      return squashed(ctx, key, left);
    }
    if (merged.kind === "conflict") conflicts.push(upstream.branch);
  }
  // The conflicted ones are left to the refinery's agent.
  if (conflicts.length) ctx.conflicts.set(key, conflicts);
  return done({ conflicts });
}

/** Whether the branch's rules want a linear history (a read that fails says no: a refused merge then says yes). */
async function wantsLinearHistory(port: EffectContext["port"], branch: string): Promise<boolean> {
  try {
    const rules = await port.branchRules(branch);
    return Array.isArray(rules) && rules.some((r) => r.type === "required_linear_history");
  } catch {
    return false;
  }
}

/** The upstreams left for the refinery's job to squash (at a sha: a branch name that did not resolve is left out). */
function squashed(ctx: EffectContext, key: string, upstreams: readonly SquashUpstream[]): EffectOutcome {
  const squash = upstreams.filter((u) => /^[0-9a-f]{40}$/.test(u.head));
  ctx.squash?.set(key, squash);
  return done({ conflicts: [], squash });
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
  const squash = ctx.squash?.get(`${effect.taskId}:${effect.attempt}`) ?? attemptNumbered(t, effect.attempt)?.squash;
  const context = {
    ...(effect.context ?? {}),
    ...(conflicts?.length ? { conflicts } : {}),
    ...(squash?.length ? { squash } : {}),
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
