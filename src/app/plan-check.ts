/**
 * A check run on pull requests that change a plan or `.github/forge.yml`: the same rules as
 * `forge validate`, shown as annotations on the lines at fault, before anything is merged. When a
 * run of the plan is in progress, the change must also be append-only over the plan it pinned
 * (an overlay), or the PR is marked as failing with the reason.
 */
import { planDir } from "../core/layout.js";
import type { Problem } from "../core/plan/problem.js";
import { validateDagChange } from "../core/plan/validate.js";
import type { CheckRunFields, GitHubPort } from "../github/port.js";
import type { Engine } from "./engine.js";
import { touchedPlans } from "./normalize.js";
import { CONFIG_PATH, pinnedDag, readConfig, readPlan } from "./plan-source.js";

export const PLAN_CHECK_NAME = "forge · plan";

/** GitHub accepts at most 50 annotations per check run request. */
const MAX_ANNOTATIONS = 50;

export async function checkPlanPullRequest(
  port: GitHubPort,
  engine: Engine,
  runs: ReadonlyMap<string, { planId: string; status: string }>,
  pr: { number: number; headSha: string },
): Promise<{ checked: boolean; problems: number }> {
  const files = await port.listPullRequestFiles(pr.number);
  const plans = touchedPlans([{ modified: files }]);
  const configChanged = files.includes(CONFIG_PATH);
  if (plans.size === 0 && !configChanged) return { checked: false, problems: 0 };

  const found: { path: string; problem: Problem }[] = [];
  for (const planId of plans.keys()) {
    const plan = await readPlan(port, planId, pr.headSha);
    for (const p of plan.problems) found.push({ path: `${planDir(planId)}/${p.file}`, problem: p });
    const active = [...runs].find(([, r]) => r.planId === planId && r.status === "running");
    if (active && plan.parsed.dag.data) {
      const loaded = await engine.state(active[0]);
      if (loaded) {
        for (const p of validateDagChange(pinnedDag(loaded.state.journal), plan.parsed.dag.data))
          found.push({ path: `${planDir(planId)}/dag.json`, problem: { ...p, message: `run ${active[0]} is in progress: ${p.message}` } });
      }
    }
  }
  if (configChanged) {
    const config = await readConfig(port, pr.headSha);
    if (!config.ok) for (const p of config.problems) found.push({ path: CONFIG_PATH, problem: p });
  }

  const annotations: NonNullable<CheckRunFields["annotations"]> = found.slice(0, MAX_ANNOTATIONS).map(({ path, problem }) => ({
    path,
    startLine: problem.line ?? 1,
    endLine: problem.line ?? 1,
    level: "failure",
    title: problem.rule,
    message: `${problem.field ? `${problem.field} — ` : ""}${problem.message}`,
  }));
  const summary = found.length
    ? [
        `${found.length} problem${found.length === 1 ? "" : "s"}:`,
        "",
        ...found
          .slice(0, 100)
          .map(({ path, problem }) => `- \`${path}${problem.line ? `:${problem.line}` : ""}\` ${problem.field ?? ""} — ${problem.message}`),
      ].join("\n")
    : `Checked ${[...plans.keys()].map((p) => `\`${p}\``).join(", ")}${configChanged ? `${plans.size ? " and " : ""}\`${CONFIG_PATH}\`` : ""}: no problems.`;
  await port.createCheckRun({
    name: PLAN_CHECK_NAME,
    headSha: pr.headSha,
    status: "completed",
    conclusion: found.length ? "failure" : "success",
    title: found.length ? `${found.length} problem${found.length === 1 ? "" : "s"} in the plan` : "The plan is valid",
    summary,
    annotations,
  });
  return { checked: true, problems: found.length };
}
