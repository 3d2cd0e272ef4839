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
import { sanitizeUntrusted } from "../../src/agent/secrets.js";
import type { ChangeRequestState, Journal } from "../../src/core/journal.js";
import { planDir as planDirOf } from "../../src/core/layout.js";
import { loadPlan } from "../../src/core/plan/load.js";
import { validatePlan } from "../../src/core/plan/validate.js";
import type { ForgeConfig } from "../../src/core/schemas/config.js";
import type { AgentRunOutcome, TaskContext } from "./agent-runner.js";
import { commitMessage } from "./git.js";
import type { MainDeps, MainInput } from "./main.js";
import { isProtectedPath } from "./protected-paths.js";
import { exitCodeOfStop, supervise } from "./supervisor.js";

/** `_captain-<crId>`: the '_' keeps it apart from task ids. */
export const CAPTAIN_ID = /^_captain-([A-Za-z0-9][A-Za-z0-9._-]*)$/;

export type CaptainCheck = { current: true; cr: ChangeRequestState } | { current: false; reason: string };

/** Pure: the Captain's dispatch is current while its CR waits for an overlay. */
export function checkCaptainDispatch(journal: Journal, taskId: string, attempt: number): CaptainCheck {
  const crId = CAPTAIN_ID.exec(taskId)?.[1];
  if (!crId) return { current: false, reason: `${taskId} is not a Captain dispatch` };
  if (journal.status !== "running") return { current: false, reason: `run ${journal.runId} is ${journal.status}` };
  if (attempt !== 1) return { current: false, reason: `the Captain of ${crId} has one attempt, not ${attempt}` };
  const cr = journal.changeRequests.find((c) => c.id === crId);
  if (!cr) return { current: false, reason: `run ${journal.runId} has no Change Request ${crId}` };
  if (cr.status !== "pending" && cr.status !== "approved") return { current: false, reason: `Change Request ${crId} is ${cr.status}, not pending or approved` };
  return { current: true, cr };
}

export interface CaptainReport {
  kind: "captain";
  exitCode: number;
  branch: string;
  headSha?: string;
  overlay?: string;
  prNumber?: number;
  prUrl?: string;
  error?: string;
  warnings: string[];
  summary: string;
}

/** What the Captain's dispatch context carries (src/app/effects.ts DispatchCaptain). */
export interface CaptainContext {
  changeRequest?: string;
  planDir?: string;
  reason?: string;
  issue?: number;
}

export async function captainJob(args: { config: ForgeConfig; input: MainInput; deps: MainDeps; journal: Journal; cr: ChangeRequestState; context: CaptainContext }): Promise<CaptainReport> {
  const { config, input, deps, journal, cr } = args;
  const { git, github } = deps;
  const log = deps.log ?? { info: () => {}, warning: () => {} };
  const warnings: string[] = [];
  const taskId = input.taskId;
  const branch = `forge/${journal.runId}/${taskId}`;
  const planDir = planDirOf(journal.planId);
  const issue = args.context.issue ?? cr.issueNumber;

  const tip = await git.fetchBranch(branch);
  if (!tip) throw new Error(`the Captain's branch ${branch} does not exist on the remote; the App creates it before dispatching`);
  await git.run(["checkout", "--quiet", "--force", "-B", branch, `refs/remotes/origin/${branch}`]);
  const preHead = await git.head();

  // The next overlay number, from the plan folder on the default branch.
  const existing = (await readdir(path.join(input.workspace, planDir, "overlays")).catch(() => [] as string[])).map((f) => /^overlay-(\d{3,})\.md$/.exec(f)?.[1]).filter((n): n is string => n !== undefined);
  const next = String(Math.max(0, ...existing.map(Number)) + 1).padStart(3, "0");
  const overlay = `${planDir}/overlays/overlay-${next}.md`;

  // The CR document the emitting task wrote (an agent's words: sanitized), from its branch.
  const emitter = journal.tasks.find((t) => t.id === cr.emittedBy);
  const doc = cr.path && emitter?.branch ? await github.readFile(emitter.branch, cr.path).catch(() => undefined) : undefined;
  const goal = sanitizeUntrusted([`Change Request ${cr.id}: ${cr.title}`, "", `Reason: ${cr.reason}`, ...(cr.affectedTasks.length ? [`Affected tasks: ${cr.affectedTasks.join(", ")}`] : []), ...(doc ? ["", doc.trim()] : [])].join("\n"));
  const plan = await github.readFile(preHead, `${planDir}/plan.md`).catch(() => undefined);
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
  const taskContext: TaskContext = { runId: journal.runId, taskId, attempt: 1, title: `Amend plan ${journal.planId} (overlay ${next})`, task, goal, planDir, branch, baseRef: journal.baseBranch, ...(plan !== undefined ? { plan } : {}) };

  const supervised = await supervise(
    (ctl) =>
      deps.agent
        .run({ agentType: "captain", taskContext, workdir: input.workspace, sessionDir, walkthroughPath: path.join(sessionDir, "walkthrough.md"), signal: ctl.signal, onProgress: (p) => ctl.onProgress(p) })
        .catch((err: unknown): AgentRunOutcome => ({ exitCode: 1, error: `the agent runner failed: ${(err as Error).message}` })),
    {
      heartbeatMs: config.heartbeat_interval_seconds * 1000,
      missedBeats: Math.max(1, Math.round(config.stale_threshold_seconds / config.heartbeat_interval_seconds)),
      idleMs: config.timeouts.idle_minutes * 60_000,
      wallClockMs: config.timeouts.agent_minutes * 60_000,
      ...(deps.cancel ? { cancel: deps.cancel } : {}),
      ...(deps.now ? { now: deps.now } : {}),
    },
  );
  let exitCode = supervised.stopped ? exitCodeOfStop(supervised.stopped.reason) : supervised.outcome.exitCode;
  const errors: string[] = supervised.stopped ? [`the agent was stopped: ${supervised.stopped.detail}`] : supervised.outcome.error ? [supervised.outcome.error] : [];

  // Only the plan folder: anything else the Captain changed is put back (workflows included).
  await git.run(["symbolic-ref", "HEAD", `refs/heads/${branch}`]);
  if ((await git.head()) !== preHead) await git.run(["reset", "--soft", "--quiet", preHead]);
  await git.run(["add", "--all", "--", "."]);
  const staged = await git.stagedChanges(preHead);
  const outside = staged.filter((c) => !c.path.startsWith(`${planDir}/`));
  for (const c of outside) {
    if (c.status.startsWith("A")) await git.run(["rm", "--cached", "--quiet", "--force", "--", c.path]);
    else await git.run(["restore", `--source=${preHead}`, "--staged", "--", c.path]);
  }
  if (outside.length) warnings.push(`changes outside ${planDir}/ were left out${outside.some((c) => isProtectedPath(c.path)) ? " (protected paths among them)" : ""}: ${outside.map((c) => c.path).join(", ")}`);
  const planChanges = staged.filter((c) => c.path.startsWith(`${planDir}/`));

  if (exitCode === 0 || exitCode === 12) {
    const problems = await loadPlan(path.join(input.workspace, planDir))
      .then((p) => validatePlan(p).map((x) => `${x.file}${x.line !== undefined ? `:${x.line}` : ""} — ${x.message}`))
      .catch((err: unknown) => [`the plan cannot be read: ${(err as Error).message}`]);
    if (!staged.some((c) => /\/overlays\/overlay-\d{3,}\.md$/.test(c.path) && c.path.startsWith(`${planDir}/`))) problems.unshift(`no overlay was written under ${planDir}/overlays/`);
    if (problems.length) {
      exitCode = 10;
      errors.push(`the amended plan is not valid: ${problems.slice(0, 10).join("; ")}`);
    }
  }
  const error = errors.length ? errors.join("; ") : undefined;
  const summaryHead = `### Forge · Captain for ${cr.id}\n\n`;
  if (!(exitCode === 0 || exitCode === 12) || planChanges.length === 0) {
    const why = error ?? "the Captain changed nothing in the plan folder";
    log.warning(`Captain for ${cr.id}: ${why}`);
    return { kind: "captain", exitCode: exitCode === 0 ? 1 : exitCode, branch, error: why, warnings, summary: `${summaryHead}No overlay: ${why}.\n` };
  }
  const overlayFile = staged.map((c) => c.path).find((p) => /\/overlays\/overlay-\d{3,}\.md$/.test(p)) ?? overlay;
  const title = `forge(${taskId}): amend plan ${journal.planId} (${path.basename(overlayFile, ".md")})`;
  const headSha = await git.commit(commitMessage(title, `Answers Change Request ${cr.id}${issue !== undefined ? ` (#${issue})` : ""}.`, [["Task", taskId], ["Forge-Run", journal.runId], ["Agent", deps.agent.name]]));
  await git.push(branch);
  const link = issue !== undefined ? `#${issue}` : `Change Request ${cr.id}`;
  const body = [
    `Overlay for ${link}: **${cr.title}**`,
    "",
    `Run \`${journal.runId}\` is paused on it. Merging this PR applies the overlay and resumes the run; the App checks it is append-only and valid.`,
    "",
    `**Reason:** ${sanitizeUntrusted(cr.reason)}`,
    "",
    "| File | Change |",
    "| --- | --- |",
    ...planChanges.map((c) => `| \`${c.path}\` | ${c.status.slice(0, 1)} |`),
    "",
    ...(warnings.length ? ["**Warnings**", "", ...warnings.map((w) => `- ${w}`), ""] : []),
    ...(input.jobUrl ? [`[The job](${input.jobUrl})`] : []),
  ].join("\n");
  let pr = await github.findOpenPull(branch, journal.baseBranch).catch(() => undefined);
  if (pr) await github.updatePull(pr.number, { title, body }).catch((err: unknown) => void warnings.push(`could not update the pull request: ${(err as Error).message}`));
  else {
    pr = await github.createPull({ head: branch, base: journal.baseBranch, title, body, draft: false }).catch((err: unknown) => {
      warnings.push(`could not open the pull request: ${(err as Error).message}`);
      return undefined;
    });
  }
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
