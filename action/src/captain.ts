/**
 * A Captain dispatch (`_captain-<crId>`): the App paused the run on a Change Request and asks for
 * an overlay. Current while the journal holds that CR `pending` or `approved`. The Captain agent
 * (src/agent's captain stages: write → validate) gets the plan folder and the CR as its goal and
 * writes `overlays/overlay-NNN.md`, new task files and the updated `dag.json`; the job checks that
 * `forge validate` passes, commits the plan folder on `forge/<runId>/_captain-<crId>` (cut from the
 * default branch) and opens a PR to the default branch that links the CR issue. Merging it is the
 * person's call, and the App applies the overlay then. No task record, no walkthrough gate.
 *
 * A plan Captain (`_captain-plan-<issue>`, run id `_plan-<issue>`, from `/forge plan` on an issue):
 * no run and no journal. The App cut `forge/_plan-<issue>` from the default branch; the agent gets the
 * issue (title and body from the dispatch context, outside text) as its goal and writes a new plan
 * folder `.forge/plans/<planId>/`; the job checks that `forge validate` passes, commits only that
 * folder and opens a PR to the default branch naming the issue. Merging it starts a run (autostart).
 */
import { mkdir, readdir, rm } from "node:fs/promises";
import path from "node:path";
import { sanitizeUntrusted } from "../../src/agent/secrets.js";
import { EXIT_CODES, succeeded } from "../../src/core/exit-codes.js";
import type { ChangeRequestState, Journal } from "../../src/core/journal.js";
import {
  captainBranch,
  parseCaptainId,
  parsePlanCaptainId,
  planCaptainBranch,
  planDir as planDirOf,
  planRunId,
} from "../../src/core/layout.js";
import { loadPlan } from "../../src/core/plan/load.js";
import { validatePlan } from "../../src/core/plan/validate.js";
import type { ForgeConfig } from "../../src/core/schemas/config.js";
import type { AgentRunOutcome, TaskContext } from "./agent-runner.js";
import { formatProblem } from "../../src/core/problems.js";
import { readJournal } from "./dispatch-check.js";
import { messageWithTrailers } from "./git.js";
import { NO_LOG, neutralReport, type JobArgs, type MainDeps, type MainInput, type NeutralReport } from "./job.js";
import { isProtectedPath } from "./protected-paths.js";
import { exitCodeOfStop, supervise } from "./supervisor.js";

export type CaptainCheck = { current: true; cr: ChangeRequestState } | { current: false; reason: string };

/** Pure: the Captain's dispatch is current while its CR waits for an overlay. */
export function checkCaptainDispatch(journal: Journal, taskId: string, attempt: number): CaptainCheck {
  const crId = parseCaptainId(taskId);
  if (!crId) return { current: false, reason: `${taskId} is not a Captain dispatch` };
  if (journal.status !== "running") return { current: false, reason: `run ${journal.runId} is ${journal.status}` };
  if (attempt !== 1) return { current: false, reason: `the Captain of ${crId} has one attempt, not ${attempt}` };
  const cr = journal.changeRequests.find((c) => c.id === crId);
  if (!cr) return { current: false, reason: `run ${journal.runId} has no Change Request ${crId}` };
  if (cr.status !== "pending" && cr.status !== "approved")
    return { current: false, reason: `Change Request ${crId} is ${cr.status}, not pending or approved` };
  return { current: true, cr };
}

export interface CaptainReport {
  kind: "captain";
  exitCode: number;
  branch: string;
  headSha?: string;
  overlay?: string;
  /** A plan Captain: the plan folder it wrote. */
  plan?: string;
  prNumber?: number;
  prUrl?: string;
  error?: string;
  warnings: string[];
  summary: string;
}

/** What the Captain's dispatch context carries (src/app/effects/branches-and-dispatch.ts dispatchCaptain). */
export interface CaptainContext {
  changeRequest?: string;
  planDir?: string;
  reason?: string;
  issue?: number;
}

/** What a plan Captain's dispatch context carries (src/app/app.ts `/forge plan`): the issue, its title and body. */
export interface CaptainPlanContext {
  issue?: number;
  title?: string;
  body?: string;
}

/** Runs the Captain agent under the runner's heartbeats and time limits; its exit code and errors. */
async function runCaptainAgent(
  config: ForgeConfig,
  deps: MainDeps,
  request: Omit<Parameters<MainDeps["agent"]["run"]>[0], "signal" | "onProgress">,
): Promise<{ exitCode: number; errors: string[] }> {
  const supervised = await supervise(
    (ctl) =>
      deps.agent.run({ ...request, signal: ctl.signal, onProgress: (p) => ctl.onProgress(p) }).catch((err: unknown): AgentRunOutcome => ({
        exitCode: EXIT_CODES.FAILURE,
        error: `the agent runner failed: ${(err as Error).message}`,
      })),
    {
      heartbeatMs: config.heartbeat_interval_seconds * 1000,
      missedBeats: Math.max(1, Math.round(config.stale_threshold_seconds / config.heartbeat_interval_seconds)),
      idleMs: config.timeouts.idle_minutes * 60_000,
      wallClockMs: config.timeouts.agent_minutes * 60_000,
      ...(deps.cancel ? { cancel: deps.cancel } : {}),
      ...(deps.now ? { now: deps.now } : {}),
    },
  );
  return {
    exitCode: supervised.stopped ? exitCodeOfStop(supervised.stopped.reason) : supervised.outcome.exitCode,
    errors: supervised.stopped
      ? [`the agent was stopped: ${supervised.stopped.detail}`]
      : supervised.outcome.error
        ? [supervised.outcome.error]
        : [],
  };
}

/**
 * Stages the agent's work on `branch` keeping only `dir/`: anything else (workflows included) is put
 * back, with a warning. Returns every staged change before the filter and the kept ones.
 */
async function stageOnly(
  git: MainDeps["git"],
  branch: string,
  preHead: string,
  dir: string,
  warnings: string[],
): Promise<{ staged: Array<{ status: string; path: string }>; kept: Array<{ status: string; path: string }> }> {
  await git.run(["symbolic-ref", "HEAD", `refs/heads/${branch}`]);
  if ((await git.head()) !== preHead) await git.run(["reset", "--soft", "--quiet", preHead]);
  await git.run(["add", "--all", "--", "."]);
  const staged = await git.stagedChanges(preHead);
  const outside = staged.filter((c) => !c.path.startsWith(`${dir}/`));
  for (const c of outside) {
    if (c.status.startsWith("A")) await git.run(["rm", "--cached", "--quiet", "--force", "--", c.path]);
    else await git.run(["restore", `--source=${preHead}`, "--staged", "--", c.path]);
  }
  if (outside.length)
    warnings.push(
      `changes outside ${dir}/ were left out${outside.some((c) => isProtectedPath(c.path)) ? " (protected paths among them)" : ""}: ${outside.map((c) => c.path).join(", ")}`,
    );
  return { staged, kept: staged.filter((c) => c.path.startsWith(`${dir}/`)) };
}

/** `forge validate`'s problems with the plan folder, one line each. */
async function planProblems(dir: string): Promise<string[]> {
  return loadPlan(dir)
    .then((p) => validatePlan(p).map((x) => formatProblem(x)))
    .catch((err: unknown) => [`the plan cannot be read: ${(err as Error).message}`]);
}

/** A Captain dispatch (`_captain-<crId>`): current while its Change Request waits for an overlay, else neutral. */
export async function captainDispatchJob({ config, input, deps }: JobArgs): Promise<CaptainReport | NeutralReport> {
  const journal = await readJournal(deps.github, input.runId);
  const check =
    typeof journal === "string" ? { current: false as const, reason: journal } : checkCaptainDispatch(journal, input.taskId, input.attempt);
  if (!check.current) return neutralReport(deps.log ?? NO_LOG, `Forge · ${input.taskId}`, check.reason);
  return captainJob({ config, input, deps, journal: journal as Journal, cr: check.cr, context: input.context });
}

export async function captainJob(args: {
  config: ForgeConfig;
  input: MainInput;
  deps: MainDeps;
  journal: Journal;
  cr: ChangeRequestState;
  context: CaptainContext;
}): Promise<CaptainReport> {
  const { config, input, deps, journal, cr } = args;
  const { git, github } = deps;
  const log = deps.log ?? { info: () => {}, warning: () => {} };
  const warnings: string[] = [];
  const taskId = input.taskId;
  const branch = captainBranch(journal.runId, cr.id);
  const planDir = planDirOf(journal.planId);
  const issue = args.context.issue ?? cr.issueNumber;

  const tip = await git.fetchBranch(branch);
  if (!tip) throw new Error(`the Captain's branch ${branch} does not exist on the remote; the App creates it before dispatching`);
  await git.run(["checkout", "--quiet", "--force", "-B", branch, `refs/remotes/origin/${branch}`]);
  const preHead = await git.head();

  // The next overlay number, from the plan folder on the default branch.
  const existing = (await readdir(path.join(input.workspace, planDir, "overlays")).catch(() => [] as string[]))
    .map((f) => /^overlay-(\d{3,})\.md$/.exec(f)?.[1])
    .filter((n): n is string => n !== undefined);
  const next = String(Math.max(0, ...existing.map(Number)) + 1).padStart(3, "0");
  const overlay = `${planDir}/overlays/overlay-${next}.md`;

  // The CR document the emitting task wrote (an agent's words: sanitized), from its branch.
  const emitter = journal.tasks.find((t) => t.id === cr.emittedBy);
  const doc = cr.path && emitter?.branch ? await github.readFile(cr.path, emitter.branch).catch(() => undefined) : undefined;
  const goal = sanitizeUntrusted(
    [
      `Change Request ${cr.id}: ${cr.title}`,
      "",
      `Reason: ${cr.reason}`,
      ...(cr.affectedTasks.length ? [`Affected tasks: ${cr.affectedTasks.join(", ")}`] : []),
      ...(doc ? ["", doc.trim()] : []),
    ].join("\n"),
  );
  const plan = await github.readFile(`${planDir}/plan.md`, preHead).catch(() => undefined);
  const task = [
    `# Amend plan ${journal.planId} for Change Request ${cr.id}`,
    "",
    `Run \`${journal.runId}\` is paused on Change Request ${cr.id}${issue !== undefined ? ` (issue #${issue})` : ""}. Write an overlay that resolves it:`,
    "",
    `- \`${overlay}\` with the overlay frontmatter (\`cr: ${cr.id}\`) saying what changes and why;`,
    `- new task files under \`${planDir}/tasks/\` for the work the overlay adds;`,
    `- \`${planDir}/dag.json\` updated, append-only: existing tasks and edges stay.`,
    "",
    `\`forge validate ${planDir}\` must pass. Change nothing outside \`${planDir}/\`.`,
  ].join("\n");
  const sessionDir = path.join(input.tempDir, `forge-session-${taskId}-1`);
  await rm(sessionDir, { recursive: true, force: true });
  await mkdir(sessionDir, { recursive: true });
  const taskContext: TaskContext = {
    runId: journal.runId,
    taskId,
    attempt: 1,
    title: `Amend plan ${journal.planId} (overlay ${next})`,
    task,
    goal,
    planDir,
    branch,
    baseRef: journal.baseBranch,
    ...(plan !== undefined ? { plan } : {}),
  };

  const agentRun = await runCaptainAgent(config, deps, {
    agentType: "captain",
    taskContext,
    workdir: input.workspace,
    sessionDir,
    walkthroughPath: path.join(sessionDir, "walkthrough.md"),
  });
  let exitCode = agentRun.exitCode;
  const errors = agentRun.errors;

  // Only the plan folder: anything else the Captain changed is put back (workflows included).
  const { staged, kept: planChanges } = await stageOnly(git, branch, preHead, planDir, warnings);

  if (succeeded(exitCode)) {
    const problems = await planProblems(path.join(input.workspace, planDir));
    if (!staged.some((c) => /\/overlays\/overlay-\d{3,}\.md$/.test(c.path) && c.path.startsWith(`${planDir}/`)))
      problems.unshift(`no overlay was written under ${planDir}/overlays/`);
    if (problems.length) {
      exitCode = EXIT_CODES.NEEDS_REFINEMENT;
      errors.push(`the amended plan is not valid: ${problems.slice(0, 10).join("; ")}`);
    }
  }
  const error = errors.length ? errors.join("; ") : undefined;
  const summaryHead = `### Forge · Captain for ${cr.id}\n\n`;
  if (!succeeded(exitCode) || planChanges.length === 0) {
    const why = error ?? "the Captain changed nothing in the plan folder";
    log.warning(`Captain for ${cr.id}: ${why}`);
    return {
      kind: "captain",
      // A Captain that "succeeded" (0, or partly: 12) without producing anything failed.
      exitCode: succeeded(exitCode) ? EXIT_CODES.FAILURE : exitCode,
      branch,
      error: why,
      warnings,
      summary: `${summaryHead}No overlay: ${why}.\n`,
    };
  }
  const overlayFile = staged.map((c) => c.path).find((p) => /\/overlays\/overlay-\d{3,}\.md$/.test(p)) ?? overlay;
  const title = `forge(${taskId}): amend plan ${journal.planId} (${path.basename(overlayFile, ".md")})`;
  const headSha = await git.commit(
    messageWithTrailers(title, `Answers Change Request ${cr.id}${issue !== undefined ? ` (#${issue})` : ""}.`, [
      ["Task", taskId],
      ["Forge-Run", journal.runId],
      ["Agent", deps.agent.name],
    ]),
  );
  await git.push(branch);
  const link = issue !== undefined ? `#${issue}` : `Change Request ${cr.id}`;
  const pr = await upsertCaptainPull({
    github,
    input,
    branch,
    base: journal.baseBranch,
    title,
    intro: [
      `Overlay for ${link}: **${cr.title}**`,
      "",
      `Run \`${journal.runId}\` is paused on it. Merging this PR applies the overlay and resumes the run; the App checks it is append-only and valid.`,
      "",
      `**Reason:** ${sanitizeUntrusted(cr.reason)}`,
      "",
    ],
    changes: planChanges,
    warnings,
  });
  log.info(`Captain for ${cr.id}: ${overlayFile} on ${branch}${pr ? `, PR #${pr.number}` : ""}.`);
  return {
    kind: "captain",
    exitCode,
    branch,
    headSha,
    overlay: overlayFile,
    ...(pr ? { prNumber: pr.number, prUrl: pr.url } : {}),
    warnings,
    summary: `${summaryHead}Overlay \`${overlayFile}\` on \`${branch}\`${pr ? ` — PR [#${pr.number}](${pr.url})` : ""} for ${link}.\n`,
  };
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
  const task = [
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
  const sessionDir = path.join(input.tempDir, `forge-session-${taskId}-1`);
  await rm(sessionDir, { recursive: true, force: true });
  await mkdir(sessionDir, { recursive: true });
  const taskContext: TaskContext = {
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
  const agentRun = await runCaptainAgent(config, deps, {
    agentType: "captain",
    taskContext,
    workdir: input.workspace,
    sessionDir,
    walkthroughPath: path.join(sessionDir, "walkthrough.md"),
  });
  let exitCode = agentRun.exitCode;
  const errors = agentRun.errors;

  const { kept } = await stageOnly(git, branch, preHead, planDir, warnings);
  if (succeeded(exitCode) && kept.length) {
    const problems = await planProblems(path.join(input.workspace, planDir));
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

/**
 * The Captain's PR, opened or (a re-run) updated in place: its intro (ending with a blank line), the plan files it changes as a
 * table, warnings, and a link to the job. A PR that cannot be written is a warning, not a failure:
 * the commit is on the branch already.
 */
async function upsertCaptainPull(args: {
  github: MainDeps["github"];
  input: MainInput;
  branch: string;
  base: string;
  title: string;
  intro: string[];
  changes: { path: string; status: string }[];
  warnings: string[];
}): Promise<{ number: number; url: string } | undefined> {
  const { github, branch, base, title, warnings } = args;
  const body = [
    ...args.intro,
    "| File | Change |",
    "| --- | --- |",
    ...args.changes.map((c) => `| \`${c.path}\` | ${c.status.slice(0, 1)} |`),
    "",
    ...(warnings.length ? ["**Warnings**", "", ...warnings.map((w) => `- ${w}`), ""] : []),
    ...(args.input.jobUrl ? [`[The job](${args.input.jobUrl})`] : []),
  ].join("\n");
  const open = await github.findOpenPull(branch, base).catch(() => undefined);
  if (open) {
    await github
      .updatePull(open.number, { title, body })
      .catch((err: unknown) => void warnings.push(`could not update the pull request: ${(err as Error).message}`));
    return open;
  }
  return github.createPull({ head: branch, base, title, body, draft: false }).catch((err: unknown) => {
    warnings.push(`could not open the pull request: ${(err as Error).message}`);
    return undefined;
  });
}
