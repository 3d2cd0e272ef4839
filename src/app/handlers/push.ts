/**
 * `push`: a deleted state branch is put back; a record commit on an attempt's branch brings the
 * runner's result; a push to the default branch that touches plans starts runs or changes them.
 */
import type { Context } from "probot";
import type { LeafInput } from "../../core/inputs.js";
import { isReservedBranch, parseStateBranch } from "../../core/layout.js";
import { logOf, type AppContext } from "../context.js";
import { recordInput, touchedPlans } from "../normalize.js";
import { overlayInput } from "../overlays.js";
import type { RepoRuntime } from "../runtime.js";
import { startPlanRun } from "../start-run.js";

export async function onPush(ctx: AppContext, context: Context<"push">): Promise<void> {
  const { payload } = context;
  if (!payload.ref.startsWith("refs/heads/")) return;
  const branch = payload.ref.slice("refs/heads/".length);
  if (payload.deleted) {
    // A run's state branch deleted by hand (Forge never deletes one): GitHub keeps its commits, so
    // a run that is not over is put back where it was. `/forge cancel` is how a run is stopped.
    const runId = parseStateBranch(branch);
    if (runId && /^[0-9a-f]{40}$/.test(payload.before) && !/^0+$/.test(payload.before)) {
      const rt = await ctx.rtOf(context);
      await rt.engine.restore(runId, payload.before, payload.sender?.login);
    }
    return;
  }
  // The journal's own writes come back as pushes: nothing to learn from them.
  if (isReservedBranch(branch)) return;
  const rt = await ctx.rtOf(context);
  if (branch === payload.repository.default_branch) {
    // `.github/forge.yml` lives there: whatever this push changed, the next use reads it again.
    rt.config = undefined;
    // Serialised per repository: a second push must see the run the first one started.
    const next = rt.planChain.then(() => onDefaultBranchPush(ctx, rt, context));
    rt.planChain = next.catch(() => undefined);
    return next;
  }
  const ref = await ctx.attemptOf(rt, branch);
  if (!ref || !payload.head_commit) return;
  // The record commit of an attempt, if its branch ends in one: ingest the runner's result. The
  // message and the parent come with the payload (the head commit's parent is the previous commit
  // of the push, or `before` when it was pushed alone); otherwise one read. The payload lists at
  // most 20 commits; trust it only when it ends with the head commit.
  const commits = payload.commits;
  const listed = commits[commits.length - 1]?.id === payload.after;
  const parent = !listed ? undefined : commits.length >= 2 ? commits[commits.length - 2]!.id : payload.before;
  const input = await recordInput(
    rt.port,
    ref,
    payload.after,
    parent ? { message: payload.head_commit.message, parents: [parent] } : undefined,
  );
  if (input) await ctx.apply(rt, ref.runId, [input]);
}

/** Plans changed on the default branch: new ones start (with `autostart`), running ones learn of it. */
async function onDefaultBranchPush(ctx: AppContext, rt: RepoRuntime, context: Context<"push">): Promise<void> {
  const { payload } = context;
  const plans = touchedPlans(payload.commits);
  if (plans.size === 0) return;
  const runs = await ctx.knownRuns(rt);
  const config = await ctx.configOf(rt);
  for (const [planId, files] of plans) {
    const active = [...runs].filter(([, r]) => r.planId === planId && r.status === "running").map(([id]) => id);
    if (active.length === 0) {
      if (!config.autostart || !files.has("dag.json")) continue;
      const started = await startPlanRun(ctx, rt, planId, payload.after, logOf(context));
      if (started.problems) context.log.warn({ planId, problems: started.problems }, "plan not started");
      continue;
    }
    for (const runId of active) {
      const overlayFiles = [...files].filter((f) => /^overlays\/overlay-\d{3,}\.md$/.test(f));
      const inputs: LeafInput[] = [];
      for (const f of overlayFiles) {
        const res = await overlayInput(rt.port, rt.engine, runId, planId, f, payload.after);
        if (res.input) inputs.push(res.input);
        else if (res.problem) context.log.warn({ runId, overlay: f, problem: res.problem }, "overlay refused");
      }
      if (inputs.length === 0) inputs.push({ kind: "plan.changed", commit: payload.after });
      await ctx.apply(rt, runId, inputs);
    }
  }
}
