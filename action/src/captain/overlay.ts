/**
 * A Captain dispatch (`_captain-<crId>`): the App paused the run on a Change Request and asks for
 * an overlay. Current while the journal holds that CR `pending` or `approved`. The Captain agent
 * (src/agent's captain stages: write → validate) gets the plan folder and the CR as its goal and
 * writes `overlays/overlay-NNN.md`, new task files and the updated `dag.json`; the job checks that
 * `forge validate` passes, commits the plan folder on `forge/<runId>/_captain-<crId>` (cut from the
 * default branch) and opens a PR to the default branch that links the CR issue. Merging it is the
 * person's call, and the App applies the overlay then. No task record, no walkthrough gate.
 */
import { mkdir, readdir, rm } from "node:fs/promises";
import path from "node:path";
import { sanitizeUntrusted } from "../../../src/agent/secrets.js";
import { EXIT_CODES, succeeded } from "../../../src/core/exit-codes.js";
import type { ChangeRequestState, Journal } from "../../../src/core/journal.js";
import { captainBranch, parseCaptainId, planDir as planDirOf } from "../../../src/core/layout.js";
import type { ForgeConfig } from "../../../src/core/schemas/config.js";
import type { JobTaskContext } from "../agent-runner.js";
import { readJournal } from "../dispatch-check.js";
import { messageWithTrailers } from "../git.js";
import { NO_LOG, neutralReport, type JobArgs, type MainDeps, type MainInput, type NeutralReport } from "../job.js";
import { planProblems, runCaptainAgent, stageOnly, upsertCaptainPull, type CaptainReport } from "./shared.js";

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

/** What the Captain's dispatch context carries (src/app/effects/branches-and-dispatch.ts dispatchCaptain). */
export interface CaptainContext {
  changeRequest?: string;
  planDir?: string;
  reason?: string;
  issue?: number;
}

/** The Captain agent's task: the overlay to write for the Change Request, and the rules it must keep. */
function overlayTask(journal: Journal, cr: ChangeRequestState, overlay: string, planDir: string, issue: number | undefined): string {
  return [
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
  const task = overlayTask(journal, cr, overlay, planDir, issue);
  const sessionDir = path.join(input.tempDir, `forge-session-${taskId}-1`);
  await rm(sessionDir, { recursive: true, force: true });
  await mkdir(sessionDir, { recursive: true });
  const taskContext: JobTaskContext = {
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

  const agentRun = await runCaptainAgent(config, deps, { taskContext, workdir: input.workspace, sessionDir });
  let exitCode = agentRun.exitCode;
  const errors = agentRun.errors;

  // Only the plan folder: anything else the Captain changed is put back (workflows included).
  const { staged, kept: planChanges } = await stageOnly(git, branch, preHead, planDir, warnings);

  if (succeeded(exitCode)) {
    const problems = await planProblems(input.workspace, path.join(input.workspace, planDir));
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
