/**
 * One attempt of one task, start to end, as data in and data out: `main({ config, input, deps })`.
 * No `@actions/core`, no `process.env`: the runner (runner.ts) reads those and owns `setFailed`.
 *
 *  1. the dispatch is current (journal: this attempt RUNNING), else neutral — nothing touched
 *  2. check out the task branch          3. build the context (pinned plan, deps, AGENTS.md, sanitized extra)
 *  4. open the draft PR early             5. run the agent under heartbeats and timeouts
 *  6. collect the work: protected paths reverted, one work commit `forge(<task>): <title>`
 *  7. complete and validate the walkthrough (runner facts win)
 *  8. the record commit (attempt folder only, Forge-* trailers), push
 *  9. walkthrough as PR body, ready for review   10. summary, artifact, outputs
 */
import { cp, mkdir, readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { writeSignal } from "../../src/agent/signals.js";
import { branchName } from "../../src/core/decide.js";
import { LABELS, TRAILERS, attemptDir, resultPath, walkthroughPath } from "../../src/core/layout.js";
import { agentResultSchema, type AgentResult } from "../../src/core/schemas/agent-result.js";
import type { ForgeConfig } from "../../src/core/schemas/config.js";
import type { AgentRunner, AgentRunOutcome } from "./agent-runner.js";
import { buildContext } from "./context.js";
import { CAPTAIN_ID, CAPTAIN_PLAN_ID, captainJob, captainPlanJob, checkCaptainDispatch, type CaptainReport } from "./captain.js";
import { readAndCheckDispatch, readJournal } from "./dispatch-check.js";
import { AttemptEvents } from "./events.js";
import { commitMessage, type Git } from "./git.js";
import type { GitHubPort, PullRef } from "./github.js";
import type { DispatchContext } from "./inputs.js";
import { isProtectedPath, revertProtectedChanges, type Refusal } from "./protected-paths.js";
import { attemptStartHead, attemptTrailers } from "./start-head.js";
import { exitMeaning, renderPrBody, renderStatusBody } from "./render.js";
import { exitCodeOfStop, supervise, type Supervised } from "./supervisor.js";
import { completeWalkthrough, type CompletedWalkthrough } from "../../src/agent/walkthrough.js";

export interface MainInput {
  runId: string;
  taskId: string;
  attempt: number;
  context: DispatchContext;
  /** owner/name */
  repository: string;
  serverUrl: string;
  /** The checkout (GITHUB_WORKSPACE). */
  workspace: string;
  /** Where the session folder goes (RUNNER_TEMP): outside the work tree. */
  tempDir: string;
  /** Link to this workflow run, for the PR and summary. */
  jobUrl?: string;
  /** When the job started (epoch ms): a cancel near the job's time limit is a timeout. */
  jobStartedAt?: number;
}

export interface Logger {
  info(message: string): void;
  warning(message: string): void;
}

export interface MainDeps {
  github: GitHubPort;
  /** Git over the workspace, authenticated with the job token. */
  git: Git;
  agent: AgentRunner;
  now?: () => number;
  log?: Logger;
  /** Uploads the session folder as a workflow artifact; absent when the artifact service is not available. */
  uploadArtifact?: (name: string, rootDir: string, files: string[]) => Promise<void>;
  /** Aborted when the job is cancelled (SIGINT/SIGTERM from the runner). */
  cancel?: AbortSignal;
}

export interface Timings {
  /** Checkout of the task branch, context, draft PR: before the agent starts. */
  beforeAgentMs: number;
  agentMs: number;
  /** Commits, push, PR update: after the agent ends. */
  afterAgentMs: number;
  /** From the agent's last progress to its kill (stall) and to the push of its partial work. */
  stallDetectedAfterMs?: number;
  partialPushedAfterMs?: number;
  /** Milliseconds from the job's start at the end of each step. */
  steps?: Record<string, number>;
}

export type JobReport =
  | { kind: "neutral"; reason: string; summary: string }
  | CaptainReport
  | {
      kind: "attempt";
      exitCode: number;
      result: AgentResult;
      branch: string;
      /** The record commit: the branch head after the push. */
      headSha: string;
      workSha?: string;
      resultPath: string;
      prNumber?: number;
      prUrl?: string;
      refusals: Refusal[];
      warnings: string[];
      summary: string;
      timings: Timings;
      /** Progress pushes made at stage ends (before the final push). */
      progressPushes: number;
      /** Every push of the task branch this job made (start commit, progress, record). */
      pushes: number;
    };

export class JobError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "JobError";
  }
}

const SUCCESS_CODES = new Set([0, 12]);
/** Transcripts and other session files above this are cut (head and tail kept) in the record commit. */
const MAX_RECORD_FILE_BYTES = 1_000_000;

export async function main({ config, input, deps }: { config: ForgeConfig; input: MainInput; deps: MainDeps }): Promise<JobReport> {
  const now = deps.now ?? Date.now;
  const log = deps.log ?? { info: () => {}, warning: () => {} };
  const { git, github } = deps;
  const { runId, taskId, attempt } = input;
  const t0 = now();
  /** Milliseconds since t0 at each step, for the job log and the overhead figures. */
  const marks: Record<string, number> = {};
  const mark = (label: string) => void (marks[label] = now() - t0);

  // A plan Captain (`/forge plan` on an issue, `_captain-plan-<issue>`) writes a new plan folder as a
  // PR to the default branch. Tested first: CAPTAIN_ID matches its id too.
  if (CAPTAIN_PLAN_ID.test(taskId)) return captainPlanJob({ config, input, deps, context: input.context });

  // A Captain dispatch (`_captain-<crId>`) writes an overlay on its own branch, with its own PR.
  if (CAPTAIN_ID.test(taskId)) {
    const journal = await readJournal(github, runId);
    const check = typeof journal === "string" ? { current: false as const, reason: journal } : checkCaptainDispatch(journal, taskId, attempt);
    if (!check.current) {
      log.info(`Nothing to do: ${check.reason}.`);
      return { kind: "neutral", reason: check.reason, summary: `### Forge · ${taskId}\n\nNothing to do: ${check.reason}. This dispatch is no longer current, so the job changed nothing.\n` };
    }
    return captainJob({ config, input, deps, journal: journal as Exclude<typeof journal, string>, cr: check.cr, context: input.context });
  }

  // 1. Is this dispatch the one the App is waiting for? The task branch is fetched meanwhile (into
  // a remote-tracking ref only: a neutral exit still leaves the repository and GitHub untouched).
  const expectedBranch = branchName(config, runId, taskId, attempt);
  const prefetch = git.fetchBranch(expectedBranch).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))));
  const check = await readAndCheckDispatch(github, runId, taskId, attempt);
  if (!check.current) {
    await prefetch;
    log.info(`Nothing to do: ${check.reason}.`);
    return { kind: "neutral", reason: check.reason, summary: `### Forge · ${taskId} · attempt ${attempt}\n\nNothing to do: ${check.reason}. This dispatch is no longer current, so the job changed nothing.\n` };
  }
  const { journal, task, node } = check;
  const branch = task.branch ?? expectedBranch;
  const base = journal.integrationBranch;
  const recordRel = attemptDir(runId, taskId, attempt);
  const warnings: string[] = [];
  mark("journal");

  // 2. The task branch, as the App prepared it.
  const tip = branch === expectedBranch ? await prefetch : await git.fetchBranch(branch);
  if (tip instanceof Error) throw tip;
  if (!tip) throw new JobError(`the task branch ${branch} does not exist on the remote; the App creates it before dispatching`);
  // An attempt ends once: if the branch already ends with this attempt's record commit (a person
  // re-ran a finished job), the App has its result and nothing more is done.
  const recorded = await git.out(["log", "-1", "--format=%(trailers:key=Forge-Run,valueonly,separator=%x2C)|%(trailers:key=Forge-Task,valueonly,separator=%x2C)|%(trailers:key=Forge-Attempt,valueonly,separator=%x2C)|%(trailers:key=Forge-Exit,valueonly,separator=%x2C)", tip]);
  const [rRun, rTask, rAttempt, rExit] = recorded.split("|");
  if (rRun === runId && rTask === taskId && rAttempt === String(attempt) && rExit) {
    const reason = `attempt ${attempt} of ${taskId} already ended with exit ${rExit} (record commit ${tip.slice(0, 12)})`;
    log.info(`Nothing to do: ${reason}.`);
    return { kind: "neutral", reason, summary: `### Forge · ${taskId} · attempt ${attempt}\n\nNothing to do: ${reason}.\n` };
  }
  await git.run(["checkout", "--quiet", "--force", "-B", branch, `refs/remotes/origin/${branch}`]);
  // What this attempt changed is measured from where its branch started, before any of its commits:
  // a re-run finds the progress pushes of the run before it on the branch (start-head.ts).
  const ids = { runId, taskId, attempt };
  const startHead = await attemptStartHead(git, branch, tip, ids);
  if (startHead !== tip) log.info(`The branch carries earlier work of this attempt; changes are measured from ${startHead.slice(0, 12)}.`);
  mark("checkout");

  // 3. Context and the session folder (outside the work tree; copied into the record folder at the
  // end), while looking for the PR of an earlier run of this same attempt (a re-run).
  const sessionDir = path.join(input.tempDir, `forge-session-${taskId}-${attempt}`);
  await rm(sessionDir, { recursive: true, force: true });
  await mkdir(path.join(sessionDir, ".signals"), { recursive: true });
  const events = new AttemptEvents(path.join(sessionDir, "events.ndjson"), runId, taskId, attempt, now);
  const [built, existingPr] = await Promise.all([
    buildContext({ github, journal, node, attempt, branch, workdir: input.workspace, dispatch: input.context, ...(check.followup ? { followup: check.followup } : {}) }),
    github.findOpenPull(branch, base).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err)))),
  ]);
  // A refinery merges in its merge stage the upstream branches the App could not merge server-side
  // (their conflicts are resolved by sub-agents, src/agent/stages.ts); the clean ones are on the branch already.
  const conflicts = node.kind === "refinery" ? (input.context.conflicts ?? []) : [];
  if (conflicts.length) built.taskContext.mergeRefs = await git.fetchForMerge(conflicts, branch);
  const title = built.frontmatter.title;
  const prTitle = `forge(${taskId}): ${title}`;
  await writeFile(path.join(sessionDir, "context.md"), built.markdown);
  await writeFile(path.join(sessionDir, "task.md"), built.taskContext.task);
  mark("context");

  // 4. The draft PR, early, so people can follow along — opened while the agent already works.
  const statusBody = (state: "running" | "ended", extra: { exitCode?: number; error?: string; headSha?: string; notes?: string[] } = {}) =>
    renderStatusBody({ state, title: prTitle, runId, taskId, attempt, exitCode: extra.exitCode ?? 0, error: extra.error ?? "", branch, baseBranch: base, ...(extra.headSha ? { headSha: extra.headSha } : {}), ...(input.jobUrl ? { jobUrl: input.jobUrl } : {}), ...(extra.notes ? { notes: extra.notes } : {}) });
  /**
   * The branch head on the remote as far as this job knows: its tip at checkout, then each push. A
   * push of the head the remote already has is skipped (nothing to send, one round trip saved).
   */
  let remoteHead = tip;
  let pushes = 0;
  const pushHead = async (sha: string): Promise<boolean> => {
    if (sha === remoteHead) return false;
    await git.push(branch, sha);
    remoteHead = sha;
    pushes++;
    return true;
  };
  let prOpening: Promise<PullRef | undefined>;
  if (existingPr instanceof Error) {
    warnings.push(`could not look for the task's pull request: ${existingPr.message}`);
    prOpening = Promise.resolve(undefined);
  } else if (existingPr) {
    prOpening = Promise.resolve(existingPr);
  } else {
    // GitHub refuses a PR whose head has no commit over its base (422 "No commits between …",
    // docs.github.com/rest/pulls/pulls#create-a-pull-request), and a fresh task branch is its
    // base: an empty start commit, made before the agent touches the index, gives the PR something
    // to show until the work arrives. It is pushed by sha, so whatever the agent does to HEAD meanwhile
    // does not matter.
    const startCommit = await git.commit(commitMessage(`forge(${taskId}): start attempt ${attempt}`, undefined, [...attemptTrailers(ids), ["Agent", deps.agent.name]]), { allowEmpty: true });
    prOpening = (async () => {
      await pushHead(startCommit);
      const pr = await github.createPull({ head: branch, base, title: prTitle, body: statusBody("running"), draft: true });
      // The label lets people (and the App) filter Forge's PRs; a PR without it still works.
      await github.addLabels(pr.number, [LABELS.task]).catch((err: unknown) => void warnings.push(`could not label the pull request: ${(err as Error).message}`));
      return pr;
    })().catch((err: unknown) => {
      warnings.push(`could not open the draft pull request: ${(err as Error).message}`);
      return undefined;
    });
  }
  mark("draft_pr");
  const preAgentHead = await git.head();
  /**
   * Stages the agent's work over `foldBase` (the pre-agent head, then the last progress commit): the
   * agent's own commits are folded into the runner's — except merge commits (a refinery's upstream, a
   * type 3's sub-branches), which are kept so the history says what was merged. The attempt's record
   * folder is never part of it; protected paths are reverted and remembered. Returns the files the
   * attempt changed so far (against its starting head, so the progress pushes of this run and of an
   * earlier run of the same attempt count) and whether anything is staged over HEAD.
   */
  let foldBase = preAgentHead;
  const refused = new Map<string, Refusal>();
  const stageWork = async (): Promise<{ filesChanged: string[]; pending: boolean }> => {
    await git.run(["symbolic-ref", "HEAD", `refs/heads/${branch}`]);
    const keep = (await git.out(["rev-list", "--merges", "-1", `${foldBase}..HEAD`]).catch(() => "")) || foldBase;
    if ((await git.head()) !== keep) await git.run(["reset", "--soft", "--quiet", keep]);
    await git.run(["add", "--all", "--", ".", `:(exclude)${recordRel}`]);
    const staged = await git.stagedChanges(startHead);
    if (staged.some((c) => c.path.startsWith(`${recordRel}/`))) await git.run(["reset", "--quiet", startHead, "--", recordRel]);
    for (const r of await revertProtectedChanges(git, startHead, staged)) refused.set(r.path, r);
    const pending = (await git.run(["diff", "--cached", "--quiet", "HEAD"], { allowFail: true })).code !== 0;
    return { filesChanged: staged.filter((c) => !c.path.startsWith(`${recordRel}/`) && !isProtectedPath(c.path)).map((c) => c.path), pending };
  };
  /**
   * Progress push (DESIGN.md §6) at each stage end, while no agent runs: the work so far becomes a
   * commit on the task branch and is pushed, so a runner machine that dies loses one stage at most.
   * A stage that left only a merge commit (a sub-agent's branch merged back) pushes that; a stage that
   * changed nothing since the last push pushes nothing. The final work and record commits come on
   * top (pushes stay fast-forwards).
   */
  let progressPushes = 0;
  const pushProgress = async (stage: string): Promise<void> => {
    const { pending } = await stageWork();
    if (pending) foldBase = await git.commit(commitMessage(`forge(${taskId}): work after stage ${stage}`, undefined, [...attemptTrailers(ids), ["Agent", deps.agent.name], ["Stage", stage]]));
    // The start commit's push (with the PR) lands first.
    await prOpening;
    const head = await git.head();
    if (!(await pushHead(head))) return;
    progressPushes++;
    log.info(`Pushed the work after stage ${stage} (${head.slice(0, 12)}).`);
  };
  const tAgent = now();
  events.emit("task.started", { agentId: events.agentId, type: node.agentType, branch, attempt });

  // 5. The agent, under heartbeats and timeouts.
  const heartbeatMs = config.heartbeat_interval_seconds * 1000;
  let progressNote: string | undefined;
  const walkthroughSession = path.join(sessionDir, "walkthrough.md");
  const supervised: Supervised = await supervise(
    (ctl) =>
      deps.agent
        .run({
          agentType: node.agentType,
          taskContext: built.taskContext,
          workdir: input.workspace,
          sessionDir,
          walkthroughPath: walkthroughSession,
          signal: ctl.signal,
          onProgress: (p) => {
            progressNote = p.summary;
            ctl.onProgress(p);
          },
          // The runner's own push is like a tool call in flight: silence is expected (only the idle limit applies).
          onStageEnd: async (stage) => {
            ctl.onProgress({ summary: `pushing the work after stage ${stage}`, kind: "tool_use" });
            await pushProgress(stage).catch((err: unknown) => void warnings.push(`could not push the work after stage ${stage}: ${(err as Error).message}`));
            ctl.onProgress({ summary: `pushed the work after stage ${stage}`, kind: "tool_result" });
          },
        })
        .catch((err: unknown): AgentRunOutcome => ({ exitCode: 1, error: `the agent runner failed: ${(err as Error).message}` })),
    {
      heartbeatMs,
      missedBeats: Math.max(1, Math.round(config.stale_threshold_seconds / config.heartbeat_interval_seconds)),
      idleMs: config.timeouts.idle_minutes * 60_000,
      wallClockMs: config.timeouts.agent_minutes * 60_000,
      ...(deps.cancel ? { cancel: deps.cancel } : {}),
      now,
      onBeat: (at) => {
        events.emit("task.heartbeat", { agentId: events.agentId, timestamp: new Date(at).toISOString() });
        if (progressNote) events.emit("task.progress", { attempt, message: progressNote });
        progressNote = undefined;
      },
      onStop: (reason, detail, _at, lastProgressAt) => {
        log.warning(`Stopping the agent: ${detail}.`);
        if (reason !== "cancelled") events.emit("task.stale", { lastHeartbeat: new Date(lastProgressAt).toISOString(), threshold: config.stale_threshold_seconds, attempt });
      },
    },
  );
  const tAgentEnd = now();
  const outcome = supervised.outcome;
  let exitCode = outcome.exitCode;
  const errors: string[] = [];
  if (supervised.stopped) {
    let reason = supervised.stopped.reason;
    // GitHub stops a job that reaches timeout-minutes the way it cancels one (SIGINT to the step,
    // docs.github.com/actions/reference/workflow-cancellation-reference): near the job's limit it
    // is a timeout (retried), not a person's cancel.
    if (reason === "cancelled" && input.jobStartedAt !== undefined && now() - input.jobStartedAt >= config.timeouts.job_minutes * 60_000 * 0.97) reason = "wall_clock";
    exitCode = exitCodeOfStop(reason);
    errors.push(`the agent was stopped: ${supervised.stopped.detail}`);
  } else if (outcome.error) errors.push(outcome.error);

  // 6. Collect the work into one commit on top of the pre-agent head (or of the last progress push).
  const agentRecordCopy = path.join(input.workspace, recordRel, "walkthrough.md");
  if (!(await exists(walkthroughSession)) && !outcome.walkthroughPath && (await exists(agentRecordCopy))) await cp(agentRecordCopy, walkthroughSession);
  const { filesChanged, pending } = await stageWork();
  const refusals = [...refused.values()];
  if (refusals.length) {
    const list = refusals.map((r) => r.path).join(", ");
    errors.unshift(`refused changes to protected paths (.forge/plans/**, .github/workflows/**): ${list}`);
    if (!(exitCode === 20 || exitCode === 21)) exitCode = 1;
  }
  let workSha: string | undefined;
  if (pending) {
    const body = supervised.stopped ? `Partial work of attempt ${attempt}, kept when the agent was stopped (${supervised.stopped.reason}).` : undefined;
    workSha = await git.commit(commitMessage(prTitle, body, [...attemptTrailers(ids), ["Agent", deps.agent.name]]));
  } else if (filesChanged.length > 0 || (await git.head()) !== preAgentHead) {
    // Everything was in a progress push already, or in the merges kept.
    workSha = await git.head();
  }
  const headForFacts = workSha ?? preAgentHead;
  if (SUCCESS_CODES.has(exitCode) && filesChanged.length === 0 && node.kind !== "refinery") {
    exitCode = 1;
    errors.push("the agent reported success but changed no files (an empty diff is never success)");
  }

  mark("work_commit");
  // 7. The walkthrough: runner facts win; required for a success.
  const wtFile = outcome.walkthroughPath ?? walkthroughSession;
  const wtText = await readFile(wtFile, "utf8").catch(() => undefined);
  const agentStartedAt = new Date(tAgent).toISOString();
  const completed: CompletedWalkthrough = completeWalkthrough(wtText, {
    task_id: taskId,
    run_id: runId,
    attempt,
    branch,
    base_ref: built.taskContext.baseRef,
    head_sha: headForFacts,
    time_spent_minutes: Math.round(((tAgentEnd - tAgent) / 60_000) * 10) / 10,
    files_changed: filesChanged,
    agent: outcome.agent ?? deps.agent.name,
    ...(outcome.model ?? config.agent.model ? { model: outcome.model ?? config.agent.model } : {}),
    ...(outcome.costUsd !== undefined ? { cost_usd: outcome.costUsd } : {}),
    ...(outcome.turns !== undefined ? { turns: outcome.turns } : {}),
  });
  warnings.push(...completed.warnings);
  if (!completed.ok) {
    if (SUCCESS_CODES.has(exitCode)) {
      exitCode = 1;
      errors.push(`walkthrough: ${completed.error}`);
    } else if (wtText !== undefined) warnings.push(`walkthrough ignored: ${completed.error}`);
  } else if (exitCode === 0 && completed.frontmatter.status === "partial") {
    exitCode = 12;
  } else if (exitCode === 0 && completed.frontmatter.status === "failed") {
    exitCode = 1;
    errors.push("the walkthrough reports status: failed");
  }
  if (completed.ok) await writeFile(walkthroughSession, completed.markdown);
  else await rm(walkthroughSession, { force: true });

  // 8. The record: result, events, signals, manifest, transcript, reports — only in the attempt folder.
  const error = errors.length ? errors.join("; ") : undefined;
  if (exitCode === 0 || exitCode === 12) events.emit("task.completed", { agentId: events.agentId, status: completed.ok ? completed.frontmatter.status : "completed", ...(completed.ok ? { confidence: completed.frontmatter.confidence } : {}), attempt });
  else events.emit("task.failed", { agentId: events.agentId, error: error ?? exitMeaning(exitCode), attemptId: attempt, exitCode, retryable: ![2, 3, 11, 20].includes(exitCode) });
  const question = outcome.question ?? (await readFile(path.join(sessionDir, "question.md"), "utf8").catch(() => undefined));
  const refinement = outcome.refinement ?? (await readFile(path.join(sessionDir, "refinement.md"), "utf8").catch(() => undefined));
  const crSession = outcome.changeRequestPath ?? path.join(sessionDir, "change-request.md");
  const hasCr = await exists(crSession);
  const result: AgentResult = agentResultSchema.parse({
    version: 1,
    run_id: runId,
    task_id: taskId,
    attempt,
    exit_code: exitCode,
    branch,
    ...(workSha ? { head_sha: workSha } : {}),
    ...(completed.ok ? { walkthrough_path: walkthroughPath(runId, taskId, attempt), walkthrough: completed.frontmatter } : {}),
    ...(error ? { error } : {}),
    ...(refinement && exitCode === 10 ? { refinement: refinement.trim() } : {}),
    ...(question && exitCode === 3 ? { question: question.trim() } : {}),
    ...(hasCr && exitCode === 11 ? { change_request_path: `${recordRel}/change-request.md` } : {}),
    ...(outcome.rateLimitedUntil ? { rate_limited_until: outcome.rateLimitedUntil } : {}),
    started_at: agentStartedAt,
    finished_at: new Date(now()).toISOString(),
    agent: outcome.agent ?? deps.agent.name,
    ...(outcome.model ?? config.agent.model ? { model: outcome.model ?? config.agent.model } : {}),
    ...(outcome.costUsd !== undefined ? { cost_usd: outcome.costUsd } : {}),
    ...(outcome.turns !== undefined ? { turns: outcome.turns } : {}),
  });
  await writeFile(path.join(sessionDir, "result.json"), `${JSON.stringify(result, null, 2)}\n`);
  if (hasCr && crSession !== path.join(sessionDir, "change-request.md")) await cp(crSession, path.join(sessionDir, "change-request.md"));
  // The stage manifest (seed 001 §3) at the top of the record: the agent layer's, else a one-stage one.
  if (outcome.manifestPath && outcome.manifestPath !== path.join(sessionDir, "manifest.json") && (await exists(outcome.manifestPath))) await cp(outcome.manifestPath, path.join(sessionDir, "manifest.json"));
  if (!(await exists(path.join(sessionDir, "manifest.json")))) {
    const status = exitCode === 0 ? "success" : "failure";
    await writeFile(
      path.join(sessionDir, "manifest.json"),
      `${JSON.stringify({ orchestrator: `forge-${node.agentType}`, stages: [{ name: "agent", status, exit_code: exitCode, ...(error ? { error } : {}) }], summary: { total: 1, passed: exitCode === 0 ? 1 : 0, failed: exitCode === 0 ? 0 : 1, exit_code: exitCode } }, null, 2)}\n`,
    );
  }
  await writeSignal({
    sessionDir,
    layer: "orch",
    name: `job-${taskId}`,
    status: exitCode === 0 || exitCode === 12 ? "done" : exitCode === 10 ? "refine" : "fail",
    artifactPath: path.join(sessionDir, "result.json"),
    traceId: traceId(runId, taskId, attempt),
    createdAt: new Date(tAgent),
    completedAt: new Date(now()),
    extra: { exit_code: exitCode },
  });
  const recordAbs = path.join(input.workspace, recordRel);
  await copyForRecord(sessionDir, recordAbs);
  // -f: a repository may ignore .forge/runs; the record is committed regardless.
  await git.run(["add", "--force", "--", recordRel]);
  const recordSha = await git.commit(
    commitMessage(`forge(${taskId}): record attempt ${attempt} (exit ${exitCode}: ${exitMeaning(exitCode)})`, error, [
      [TRAILERS.run, runId],
      [TRAILERS.task, taskId],
      [TRAILERS.attempt, String(attempt)],
      [TRAILERS.agent, outcome.agent ?? deps.agent.name],
      [TRAILERS.exit, String(exitCode)],
    ]),
  );
  mark("record_commit");
  // The start commit's push (with the PR) must land first: the final push fast-forwards from it.
  const pr = await prOpening;
  await pushHead(recordSha);
  const tPushed = now();
  mark("push");

  // 9. The PR shows the walkthrough; a success is ready for review (both calls at once).
  const notes = [...refusals.map((r) => `refused change to protected path \`${r.path}\` (reverted)`), ...completed.warnings];
  if (pr) {
    const wtUrl = `${input.serverUrl.replace(/\/$/, "")}/${input.repository}/blob/${recordSha}/${walkthroughPath(runId, taskId, attempt)}`;
    const body = completed.ok
      ? renderPrBody({ title: prTitle, frontmatter: completed.frontmatter, body: completed.body, walkthroughUrl: wtUrl, baseBranch: base, exitCode, notes })
      : statusBody("ended", { exitCode, error: error ?? exitMeaning(exitCode), headSha: recordSha, notes });
    const report = (what: string) => (err: unknown) => void warnings.push(`could not ${what}: ${(err as Error).message}`);
    await Promise.all([
      github.updatePull(pr.number, { body }).catch(report("update the pull request")),
      SUCCESS_CODES.has(exitCode) && completed.ok ? github.markReadyForReview(pr).catch(report("mark the pull request ready")) : Promise.resolve(),
    ]);
  }
  const tEnd = now();
  mark("pr_body");

  // 10. The artifact (the same files are in the record folder anyway).
  if (deps.uploadArtifact) {
    try {
      const files = await listFiles(sessionDir);
      await deps.uploadArtifact(`forge-${runId}-${taskId}-${attempt}`, sessionDir, files);
    } catch (err) {
      warnings.push(`could not upload the session artifact: ${(err as Error).message}`);
    }
  }

  const timings: Timings = {
    beforeAgentMs: tAgent - t0,
    agentMs: tAgentEnd - tAgent,
    afterAgentMs: tEnd - tAgentEnd,
    steps: { ...marks, agent_start: tAgent - t0, agent_end: tAgentEnd - t0 },
    ...(supervised.stopped?.reason === "stalled"
      ? { stallDetectedAfterMs: supervised.stopped.at - supervised.lastProgressAt, partialPushedAfterMs: tPushed - supervised.lastProgressAt }
      : {}),
  };
  const summary = renderSummary({ prTitle, result, exitCode, error, completed, branch, base, recordSha, pr, timings, warnings, refusals, jobUrl: input.jobUrl, serverUrl: input.serverUrl, repository: input.repository });
  return {
    kind: "attempt",
    exitCode,
    result,
    branch,
    headSha: recordSha,
    ...(workSha ? { workSha } : {}),
    resultPath: resultPath(runId, taskId, attempt),
    ...(pr ? { prNumber: pr.number, prUrl: pr.url } : {}),
    refusals,
    warnings,
    summary,
    timings,
    progressPushes,
    pushes,
  };
}

function traceId(runId: string, taskId: string, attempt: number): string {
  let h = 0xcbf29ce484222325n;
  for (const ch of `${runId}/${taskId}/${attempt}`) h = BigInt.asUintN(64, (h ^ BigInt(ch.codePointAt(0)!)) * 0x100000001b3n);
  return h.toString(16).padStart(16, "0");
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

async function listFiles(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(path.join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await listFiles(dir, rel)));
    else if (e.isFile()) out.push(path.join(dir, rel));
  }
  return out;
}

/** Copies the session folder into the record folder; oversized files keep their head and tail. */
async function copyForRecord(from: string, to: string): Promise<void> {
  await rm(to, { recursive: true, force: true });
  await mkdir(to, { recursive: true });
  for (const file of await listFiles(from)) {
    const rel = path.relative(from, file);
    if (path.basename(rel).includes(".tmp.")) continue;
    const dest = path.join(to, rel);
    await mkdir(path.dirname(dest), { recursive: true });
    const size = (await stat(file)).size;
    if (size <= MAX_RECORD_FILE_BYTES) await cp(file, dest);
    else {
      const buf = await readFile(file);
      const half = Math.floor(MAX_RECORD_FILE_BYTES / 2);
      await writeFile(dest, Buffer.concat([buf.subarray(0, half), Buffer.from(`\n[… ${size - 2 * half} bytes cut by the Forge runner …]\n`), buf.subarray(size - half)]));
    }
  }
}

function renderSummary(s: {
  prTitle: string;
  result: AgentResult;
  exitCode: number;
  error: string | undefined;
  completed: CompletedWalkthrough;
  branch: string;
  base: string;
  recordSha: string;
  pr: PullRef | undefined;
  timings: Timings;
  warnings: string[];
  refusals: Refusal[];
  jobUrl: string | undefined;
  serverUrl: string;
  repository: string;
}): string {
  const sec = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const lines = [
    `### ${s.exitCode === 0 ? "✅" : s.exitCode === 12 ? "🟡" : "❌"} ${s.prTitle}`,
    "",
    "| | |",
    "| --- | --- |",
    `| Outcome | exit ${s.exitCode}: ${exitMeaning(s.exitCode)} |`,
    `| Branch | \`${s.branch}\` → \`${s.base}\` |`,
    `| Record commit | \`${s.recordSha}\` |`,
    ...(s.result.head_sha ? [`| Work commit | \`${s.result.head_sha}\` |`] : []),
    ...(s.pr ? [`| Pull request | [#${s.pr.number}](${s.pr.url}) |`] : []),
    `| Before the agent | ${sec(s.timings.beforeAgentMs)} |`,
    `| Agent | ${sec(s.timings.agentMs)} |`,
    `| After the agent | ${sec(s.timings.afterAgentMs)} |`,
    ...(s.timings.stallDetectedAfterMs !== undefined ? [`| Stall detected after | ${sec(s.timings.stallDetectedAfterMs)} of silence |`, `| Partial work pushed after | ${sec(s.timings.partialPushedAfterMs!)} of silence |`] : []),
    "",
  ];
  if (s.error) lines.push(`**Why:** ${s.error}`, "");
  if (s.warnings.length) lines.push("**Warnings**", "", ...s.warnings.map((w) => `- ${w}`), "");
  if (s.completed.ok) {
    const f = s.completed.frontmatter;
    lines.push(`Walkthrough: **${f.status}**, confidence ${f.confidence.toFixed(2)}, ${f.files_changed.length} files, ${f.tests.length} tests, ${f.risks.length} risks, ${f.followups.length} follow-ups.`, "");
  }
  return lines.join("\n");
}
