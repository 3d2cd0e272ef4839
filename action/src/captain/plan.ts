/**
 * A plan Captain (`_captain-plan-<issue>`, run id `_plan-<issue>`, from `/forge plan` on an issue):
 * no run and no journal. The App cut `forge/_plan-<issue>` from the default branch; the agent gets the
 * issue (title and body from the dispatch context, outside text) as its goal and writes a new plan
 * folder `.forge/plans/<planId>/`; the job checks that `forge validate` passes, commits only that
 * folder and opens a PR to the default branch naming the issue. Merging it starts a run (autostart).
 */
import { mkdir, readdir, rm } from "node:fs/promises";
import path from "node:path";
import { sanitizeUntrusted } from "../../../src/agent/secrets.js";
import { EXIT_CODES, succeeded } from "../../../src/core/exit-codes.js";
import { parsePlanCaptainId, planCaptainBranch, planDir as planDirOf, planRunId } from "../../../src/core/layout.js";
import type { ForgeConfig } from "../../../src/core/schemas/config.js";
import type { JobTaskContext } from "../agent-runner.js";
import { messageWithTrailers } from "../git.js";
import type { MainDeps, MainInput } from "../job.js";
import { planProblems, runCaptainAgent, stageOnly, upsertCaptainPull, type CaptainReport } from "./shared.js";

/** What a plan Captain's dispatch context carries (src/app/app.ts `/forge plan`): the issue, its title and body. */
export interface CaptainPlanContext {
  issue?: number;
  title?: string;
  body?: string;
}

/** A plan id from an issue title: lower-case words joined by '-', at most 40 characters. */
export function planIdFromTitle(title: string | undefined, issue: number): string {
  const slug = (title ?? "")
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .slice(0, 40)
    .replace(/^-+|-+$/g, "");
  return slug || `issue-${issue}`;
}

/** The repository's default branch, as the remote names it (`git ls-remote --symref origin HEAD`). */
async function defaultBranchOf(git: MainDeps["git"]): Promise<string | undefined> {
  const out = await git.out(["ls-remote", "--symref", "origin", "HEAD"]).catch(() => "");
  return /^ref: refs\/heads\/(\S+)\s+HEAD$/m.exec(out)?.[1];
}

/** The plan Captain agent's task: the plan folder to write from the issue, file by file, and the rules it must keep. */
function planTask(planId: string, planDir: string, issue: number): string {
  return [
    `# Write plan ${planId} from issue #${issue}`,
    "",
    `Issue #${issue} asks for the work in the goal below. Write a Forge plan for it in \`${planDir}/\`:`,
    "",
    `- \`${planDir}/plan.md\`: what the plan builds and the shape of the work;`,
    `- \`${planDir}/tasks/<taskId>.md\`, one per task: YAML frontmatter (\`id\`, \`title\`, \`type\` 1|2|3|refinery, \`dependencies\`, \`acceptance_criteria\`, \`estimated_complexity\` small|medium|large; optional \`spec\`, \`paths\`, \`test_command\`) and the sections \`## Description\`, \`## Context\`, \`## Instructions\`;`,
    `- \`${planDir}/dag.json\`: \`{ "version": 1, "planId": "${planId}", "nodes": [{ "id", "type": "task"|"refinery", "agentType", "dependencies" }], "metadata": { "createdAt", "createdBy", "totalTasks", "totalRefineries" } }\`, agreeing with the task files;`,
    `- optional specs under \`${planDir}/specs/\`.`,
    "",
    `\`forge validate ${planDir}\` must pass. Change nothing outside \`${planDir}/\`.`,
  ].join("\n");
}

/**
 * A plan Captain (`_captain-plan-<issue>`): writes a new plan folder from the issue on
 * `forge/_plan-<issue>` and opens its PR to the default branch. Neutral when the dispatch is not
 * one (run id, issue) or when the branch already holds this Captain's plan commit.
 */
export async function captainPlanJob(args: {
  config: ForgeConfig;
  input: MainInput;
  deps: MainDeps;
  context: CaptainPlanContext;
}): Promise<CaptainReport | { kind: "neutral"; reason: string; summary: string }> {
  const { config, input, deps, context } = args;
  const { git, github } = deps;
  const log = deps.log ?? { info: () => {}, warning: () => {} };
  const taskId = input.taskId;
  const summaryHead = `### Forge · plan Captain for #`;
  const issue = parsePlanCaptainId(taskId) ?? NaN;
  const neutral = (reason: string) => {
    log.info(`Nothing to do: ${reason}.`);
    return { kind: "neutral" as const, reason, summary: `### Forge · ${taskId}\n\nNothing to do: ${reason}.\n` };
  };
  if (!Number.isInteger(issue)) return neutral(`${taskId} is not a plan Captain's dispatch`);
  if (input.runId !== planRunId(issue)) return neutral(`a plan Captain for #${issue} runs as ${planRunId(issue)}, not ${input.runId}`);
  if (input.attempt !== 1) return neutral(`the plan Captain of #${issue} has one attempt, not ${input.attempt}`);
  if (context.issue !== undefined && context.issue !== issue)
    return neutral(`the dispatch context names issue #${context.issue}, not #${issue}`);
  const branch = planCaptainBranch(issue);
  const warnings: string[] = [];

  const tip = await git.fetchBranch(branch);
  if (!tip) throw new Error(`the plan Captain's branch ${branch} does not exist on the remote; the App creates it before dispatching`);
  // Once: a re-run of a finished job finds its commit on the branch.
  const done = await git.out(["log", "-1", "--format=%(trailers:key=Task,valueonly,separator=%x2C)", tip]).catch(() => "");
  if (done === taskId) return neutral(`${branch} already holds the plan of #${issue} (commit ${tip.slice(0, 12)})`);
  await git.run(["checkout", "--quiet", "--force", "-B", branch, `refs/remotes/origin/${branch}`]);
  const preHead = await git.head();
  const base = (await defaultBranchOf(git)) ?? "main";

  const title = context.title?.trim();
  const body = context.body?.trim();
  if (!title && !body) {
    const why = `the dispatch carries no text of issue #${issue} (context title and body): there is nothing to plan from`;
    log.warning(`Plan Captain for #${issue}: ${why}`);
    // 2, not 1: nothing to plan from is not worth another try (docs/runner.md#exit-codes lists it under 2).
    return {
      kind: "captain",
      exitCode: EXIT_CODES.DEPTH_EXCEEDED,
      branch,
      error: why,
      warnings,
      summary: `${summaryHead}${issue}\n\nNo plan: ${why}.\n`,
    };
  }
  // A new folder: the title's words, else issue-<n>; never an existing plan's.
  let planId = planIdFromTitle(title, issue);
  const exists = async (id: string) =>
    (await readdir(path.join(input.workspace, ".forge", "plans", id)).catch(() => undefined)) !== undefined;
  if (await exists(planId)) planId = `${planId.slice(0, 40)}-${issue}`;
  if (await exists(planId)) planId = `issue-${issue}-${Date.now().toString(36)}`;
  const planDir = planDirOf(planId);

  const goal = sanitizeUntrusted([`Issue #${issue}: ${title ?? ""}`, ...(body ? ["", body] : [])].join("\n"));
  const task = planTask(planId, planDir, issue);
  const sessionDir = path.join(input.tempDir, `forge-session-${taskId}-1`);
  await rm(sessionDir, { recursive: true, force: true });
  await mkdir(sessionDir, { recursive: true });
  const taskContext: JobTaskContext = {
    runId: input.runId,
    taskId,
    attempt: 1,
    title: `Plan ${planId} from #${issue}`,
    task,
    goal,
    planDir,
    branch,
    baseRef: base,
  };
  const agentRun = await runCaptainAgent(config, deps, { taskContext, workdir: input.workspace, sessionDir });
  let exitCode = agentRun.exitCode;
  const errors = agentRun.errors;

  const { kept } = await stageOnly(git, branch, preHead, planDir, warnings);
  if (succeeded(exitCode) && kept.length) {
    const problems = await planProblems(input.workspace, path.join(input.workspace, planDir));
    if (problems.length) {
      exitCode = EXIT_CODES.NEEDS_REFINEMENT;
      errors.push(`the plan is not valid: ${problems.slice(0, 10).join("; ")}`);
    }
  }
  const error = errors.length ? errors.join("; ") : undefined;
  if (!succeeded(exitCode) || kept.length === 0) {
    const why = error ?? `the Captain wrote nothing in ${planDir}/`;
    log.warning(`Plan Captain for #${issue}: ${why}`);
    return {
      kind: "captain",
      // A Captain that "succeeded" (0, or partly: 12) without producing anything failed.
      exitCode: succeeded(exitCode) ? EXIT_CODES.FAILURE : exitCode,
      branch,
      error: why,
      warnings,
      summary: `${summaryHead}${issue}\n\nNo plan: ${why}.\n`,
    };
  }
  const prTitle = `forge(${taskId}): plan ${planId} from #${issue}`;
  const headSha = await git.commit(
    messageWithTrailers(prTitle, `Written from issue #${issue}.`, [
      ["Task", taskId],
      ["Agent", deps.agent.name],
    ]),
  );
  await git.push(branch);
  const pr = await upsertCaptainPull({
    github,
    input,
    branch,
    base,
    title: prTitle,
    intro: [
      `Plan \`${planId}\` for #${issue}${title ? `: **${sanitizeUntrusted(title)}**` : ""}`,
      "",
      `Written by a Captain agent from the issue; \`forge validate\` passes. Review it like code: merging this PR starts a run of \`${planId}\` (with \`autostart: true\`, the default), or comment \`/forge run ${planId}\` once it is merged.`,
      "",
    ],
    changes: kept,
    warnings,
  });
  log.info(`Plan Captain for #${issue}: ${planDir} on ${branch}${pr ? `, PR #${pr.number}` : ""}.`);
  return {
    kind: "captain",
    exitCode,
    branch,
    headSha,
    plan: planDir,
    ...(pr ? { prNumber: pr.number, prUrl: pr.url } : {}),
    warnings,
    summary: `${summaryHead}${issue}\n\nPlan \`${planDir}\` on \`${branch}\`${pr ? ` — PR [#${pr.number}](${pr.url})` : ""}.\n`,
  };
}
