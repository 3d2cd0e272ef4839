/**
 * A check run on pull requests that change a plan or `.github/forge.yml`: the same rules as
 * `forge validate`, shown as annotations on the lines at fault, before anything is merged. When a
 * run of the plan is in progress, the change must also be append-only over the plan it pinned
 * (an overlay), or the PR is marked as failing with the reason. Any PR may ask for a check, a
 * fork's included: what one check reads is bounded (PLAN_CHECK_LIMITS), and a change beyond the
 * bounds fails the check unread. Nothing read is executed: front matter is YAML only
 * (src/core/front-matter.ts), dag.json is JSON.
 */
import { CONFIG_PATH } from "../core/config.js";
import { planDir } from "../core/layout.js";
import type { Problem } from "../core/plan/problem.js";
import { formatProblem } from "../core/problems.js";
import { validateDagChange } from "../core/plan/validate.js";
import type { CheckRunFields, GitHubPort } from "../github/port.js";
import type { Engine } from "./engine/index.js";
import { touchedPlans } from "./normalize.js";
import { pinnedDag, readConfig, readPlan } from "./plan-source.js";

export const PLAN_CHECK_NAME = "forge · plan";

/** GitHub accepts at most 50 annotations per check run request. */
const MAX_ANNOTATIONS = 50;

/**
 * The most one plan check reads: plan folders, files (entries of the folders a plan is read from)
 * and bytes. Sizes come from directory listings, before any file is read.
 */
export const PLAN_CHECK_LIMITS = { plans: 20, files: 500, bytes: 2 * 1024 * 1024 };

/** The folders of a plan the check reads (as readPlanSourceFromGitHub walks them). */
const PLAN_SUBDIRS = new Set(["tasks", "overlays", "specs"]);

/** Files and bytes the plan check would read at `ref`, counted until past the limits. */
async function sizeToRead(
  port: GitHubPort,
  planIds: readonly string[],
  config: boolean,
  ref: string,
): Promise<{ files: number; bytes: number }> {
  const total = { files: 0, bytes: 0 };
  const over = () => total.files > PLAN_CHECK_LIMITS.files || total.bytes > PLAN_CHECK_LIMITS.bytes;
  const add = (e: { type: "file" | "dir"; size: number }) => {
    total.files++;
    if (e.type === "file") total.bytes += e.size;
  };
  if (config) {
    const entry = (await port.listDirectory(".github", ref)).find((e) => e.path === CONFIG_PATH);
    if (entry) add(entry);
  }
  for (const planId of planIds) {
    if (over()) break;
    const root = planDir(planId);
    for (const entry of await port.listDirectory(root, ref)) {
      add(entry);
      if (entry.type === "dir" && PLAN_SUBDIRS.has(entry.name))
        for (const inner of await port.listDirectory(`${root}/${entry.name}`, ref)) add(inner);
      if (over()) break;
    }
  }
  return total;
}

const mb = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MB`;

export async function checkPlanPullRequest(
  port: GitHubPort,
  engine: Engine,
  runs: ReadonlyMap<string, { planId: string; status: string }>,
  pr: { number: number; headSha: string },
): Promise<{ checked: boolean; problems: number; tooLarge?: boolean }> {
  const files = await port.listPullRequestFiles(pr.number);
  const plans = touchedPlans([{ modified: files }]);
  const configChanged = files.includes(CONFIG_PATH);
  if (plans.size === 0 && !configChanged) return { checked: false, problems: 0 };

  const size = plans.size > PLAN_CHECK_LIMITS.plans ? undefined : await sizeToRead(port, [...plans.keys()], configChanged, pr.headSha);
  if (!size || size.files > PLAN_CHECK_LIMITS.files || size.bytes > PLAN_CHECK_LIMITS.bytes) {
    const what = !size
      ? `${plans.size} plan folders`
      : size.files > PLAN_CHECK_LIMITS.files
        ? `more than ${PLAN_CHECK_LIMITS.files} files`
        : `more than ${mb(PLAN_CHECK_LIMITS.bytes)}`;
    await port.createCheckRun({
      name: PLAN_CHECK_NAME,
      headSha: pr.headSha,
      status: "completed",
      conclusion: "failure",
      title: "Too large to check",
      summary:
        `This pull request changes plans holding ${what}. Forge checks at most ${PLAN_CHECK_LIMITS.plans} plan folders, ` +
        `${PLAN_CHECK_LIMITS.files} files and ${mb(PLAN_CHECK_LIMITS.bytes)} in one pull request, and read none of it. ` +
        "Split the change into smaller pull requests.",
    });
    return { checked: true, problems: 1, tooLarge: true };
  }

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
        ...found.slice(0, 100).map(({ path, problem }) => `- ${formatProblem({ ...problem, file: path }, { markdown: true })}`),
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
