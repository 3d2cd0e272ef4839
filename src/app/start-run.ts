/** Starting a run of a plan at a commit of the default branch. */
import { integrationBranch, planDir, runIdFor, stateBranch } from "../core/layout.js";
import { formatProblem } from "../core/problems.js";
import { missingRulesText, STATE_BRANCH_RULES } from "../core/state-rules.js";
import type { AppContext } from "./context.js";
import type { Logger } from "./engine/index.js";
import type { GitHubPort } from "../github/port.js";
import { issueLinks } from "./issue-sync.js";
import { readConfig, readPlan } from "./plan-source.js";
import type { RepoRuntime } from "./runtime.js";

export { STATE_BRANCH_RULES } from "../core/state-rules.js";

/**
 * The ruleset README.md tells installers to add (`POST /repos/{owner}/{repo}/rulesets`): creations,
 * updates, deletions and force pushes of every run's state branch restricted to the Forge App — and
 * to repository admins, who reset a branch Forge refused.
 */
export function stateBranchRuleset(appId: number) {
  return {
    name: "Forge state branches",
    target: "branch" as const,
    enforcement: "active" as const,
    conditions: { ref_name: { include: ["refs/heads/forge/*/_state"], exclude: [] as string[] } },
    rules: [
      { type: "creation" as const },
      { type: "update" as const },
      { type: "deletion" as const },
      { type: "non_fast_forward" as const },
    ],
    bypass_actors: [
      { actor_id: appId, actor_type: "Integration" as const, bypass_mode: "always" as const },
      { actor_id: 5, actor_type: "RepositoryRole" as const, bypass_mode: "always" as const },
    ],
  };
}

/**
 * What is missing for the run's state branch to be protected by a ruleset, or undefined when the
 * rules that keep others from creating, updating or deleting it apply to it.
 */
export async function stateBranchWarning(port: GitHubPort, runId: string): Promise<string | undefined> {
  const branch = stateBranch(runId);
  let types: string[];
  try {
    types = (await port.branchRules(branch)).map((r) => r.type);
  } catch (e) {
    return `Forge could not read the rules that apply to \`${branch}\` (${e instanceof Error ? e.message.slice(0, 200) : "unknown error"})`;
  }
  const missing = STATE_BRANCH_RULES.filter((t) => !types.includes(t));
  if (missing.length === 0) return undefined;
  return `no ruleset restricts ${missingRulesText(missing)} of \`${branch}\``;
}

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
  const warning = await stateBranchWarning(rt.port, runId);
  const issues = issueLinks(plan.parsed, config);
  if (warning) log.warn({ runId, warning }, "state branch not protected");
  await rt.engine.start(
    { runId, planId, planCommit: sha, dagHash: plan.dagHash, nodes: plan.nodes, integrationBranch: integration, baseBranch: base },
    config,
    { planSha: sha, ...(warning ? { stateBranchWarning: warning } : {}), ...(issues ? { issues } : {}) },
    sha,
  );
  rt.runs.set(runId, { planId, status: "running" });
  log.info({ runId, planId }, "run started");
  return { runId };
}
