/** Starting a run of a plan at a commit of the default branch. */
import { integrationBranch, planDir, runIdFor } from "../core/layout.js";
import { formatProblem } from "../core/problems.js";
import type { AppContext } from "./context.js";
import type { Logger } from "./engine.js";
import { readConfig, readPlan } from "./plan-source.js";
import type { RepoRuntime } from "./runtime.js";

/**
 * Start a run of `planId` as committed at `sha`: its integration branch, then the engine's start
 * (state branch, journal, first effects). Refused, with the problems to tell, while another run of
 * the plan is running or when the config or the plan at that commit does not hold.
 */
export async function startPlanRun(
  ctx: AppContext,
  rt: RepoRuntime,
  planId: string,
  sha: string,
  log: Logger,
): Promise<{ runId?: string; problems?: string[] }> {
  const runs = await ctx.knownRuns(rt);
  for (const [runId, r] of runs)
    if (r.planId === planId && r.status === "running") return { problems: [`run ${runId} of plan ${planId} is still running`] };
  const read = await readConfig(rt.port, sha);
  if (!read.ok) return { problems: read.problems.map((p) => formatProblem(p)) };
  const config = read.config;
  const plan = await readPlan(rt.port, planId, sha);
  if (plan.problems.length) {
    return {
      problems: plan.problems.map((p) => formatProblem({ ...p, file: `${planDir(planId)}/${p.file}` })),
    };
  }
  // One run per plan commit: a repeated webhook finds the run already there.
  const runId = runIdFor(planId, sha);
  const base = config.base_branch ?? (await rt.port.defaultBranch());
  const integration = integrationBranch(config, runId);
  rt.runs.set(runId, { planId, status: "running" });
  await rt.port.createBranch(integration, sha);
  await rt.engine.start(
    { runId, planId, planCommit: sha, dagHash: plan.dagHash, nodes: plan.nodes, integrationBranch: integration, baseBranch: base },
    config,
    { planSha: sha },
    sha,
  );
  rt.runs.set(runId, { planId, status: "running" });
  log.info({ runId, planId }, "run started");
  return { runId };
}
