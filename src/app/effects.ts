/**
 * Carrying out the executor's effects on GitHub. Every effect is idempotent: running one twice (a
 * crash between persisting the journal and acknowledging the effect re-runs it) has the result of
 * running it once. Each returns `done` with data for the executor, `failed` for good, or `later`
 * when GitHub is not ready yet (the effect stays in the outbox and is tried again).
 */
import { branchName } from "../core/decide.js";
import type { Effect } from "../core/effects.js";
import type { Journal, TaskState } from "../core/journal.js";
import { dispatchContextPath, splitDispatchContext } from "../core/dispatch-inputs.js";
import { captainBranch, captainId, checkRunName, DISPATCH_INPUTS, LABELS, planDir, stateBranch, walkthroughPath } from "../core/layout.js";
import type { ForgeConfig } from "../core/schemas/config.js";
import { protectedChanges } from "../core/protected-paths.js";
import { ConflictError, type CheckConclusion, type GitHubPort, type PullRequestInfo, type WorkflowRunInfo } from "../github/port.js";
import type { LeafInput } from "../core/inputs.js";
import { checksFailedInput } from "../github/ci-checks.js";
import type { FactsPatch } from "./rounds.js";
import { readRunEvents, type RunFacts } from "./run-store.js";
import { asData } from "../core/render/as-data.js";
import { outcomeFigures, type OutcomeFigures } from "../core/outcomes.js";
import { checkSummary } from "./check-summary.js";
import { appTelemetry, traceDispatch, traceRun } from "./telemetry.js";
import { dispatchTraceparent } from "../core/trace.js";
import { crMarker, renderChangeRequestIssue, renderFinalPr, renderTracker, trackerMarker } from "./render.js";
import type { ForgeEvent } from "../core/schemas/events.js";

/**
 * What carrying out an effect came to. An effect never writes the run's state: what it learned
 * (ids of the GitHub objects it made or found) travels in `learned`, which the engine applies.
 */
export type EffectOutcome = (
  | { kind: "done"; result: Record<string, unknown> }
  | { kind: "failed"; error: string }
  /** Not now: tried again at the next flush, or after `retryInMs` at the latest. */
  | { kind: "later"; reason: string; retryInMs?: number }
) & {
  learned?: FactsPatch;
  /** Facts the effect found on GitHub, decided with its outcome (a merge that finds the head's required checks red). */
  inputs?: LeafInput[];
};

export interface EffectContext {
  port: GitHubPort;
  journal: Journal;
  config: ForgeConfig;
  /** Read-only: what an effect learns goes in its outcome's `learned`. */
  facts: DeepReadonly<RunFacts>;
  /** The open segment of the event log, for the tracker's tail. */
  events: readonly ForgeEvent[];
  /** The effect was loaded from the stored outbox rather than decided in this process: it may have run already. */
  replay: boolean;
  now: number;
  /** Conflicts found while preparing a refinery's branch, handed to its dispatch. */
  conflicts: Map<string, string[]>;
  /** Link to the App's page or the repository, for check run details. */
  htmlUrl?: string;
  /**
   * A branch's head read while the decision that made this effect was being written (reads are
   * safe before the write: they change nothing), so a new task branch is cut without waiting for one
   * more call after it. Read after the facts that made the task ready, it holds every MERGED dependency.
   */
  prefetchedHead?: Promise<string | null>;
}

type DeepReadonly<T> = { readonly [K in keyof T]: T[K] extends object ? Readonly<T[K]> : T[K] };

const done = (result: Record<string, unknown> = {}, learned?: FactsPatch): EffectOutcome => ({
  kind: "done",
  result,
  ...(learned ? { learned } : {}),
});

function task(ctx: EffectContext, taskId: string): TaskState | undefined {
  return ctx.journal.tasks.find((t) => t.id === taskId);
}

/** How soon a merge that lost a race with another merge into the same base is tried again. */
export const MERGE_RETRY_MS = 300;

/** Minimum time between two writes of a tracker issue (the content-creation budget is ~80/min per installation). */
export const TRACKER_DEBOUNCE_MS = 5_000;
/** The longest a big plan's tracker waits between two writes. */
export const TRACKER_DEBOUNCE_MAX_MS = 60_000;

/**
 * The wait between two writes of the tracker of a run of `tasks` tasks: 5 s up to 100 tasks, then
 * 50 ms a task, at most a minute. A big plan's tracker changes with every task (several times a
 * second at 1,000 tasks), and written every 5 s it cost 0.4 calls a task; a person reading the
 * tracker of 1,000 tasks needs its progress, not each task's second. The final update is not held.
 */
export const trackerDebounceMs = (tasks: number) => Math.min(TRACKER_DEBOUNCE_MAX_MS, Math.max(TRACKER_DEBOUNCE_MS, 50 * tasks));

type EffectOf<K extends Effect["kind"]> = Extract<Effect, { kind: K }>;

/** One handler per effect kind: the compiler names a kind without one, and a handler of a kind that is gone. */
type EffectHandlers = { [K in Effect["kind"]]: (effect: EffectOf<K>, ctx: EffectContext) => Promise<EffectOutcome> };

export async function runEffect(effect: Effect, ctx: EffectContext): Promise<EffectOutcome> {
  const handler = HANDLERS[effect.kind] as (effect: Effect, ctx: EffectContext) => Promise<EffectOutcome>;
  return handler(effect, ctx);
}

/**
 * Cut from the integration head as it is now (it holds every MERGED dependency); an existing
 * branch (a repeated effect) is left as it is.
 */
async function prepareBranch(effect: EffectOf<"PrepareBranch">, ctx: EffectContext): Promise<EffectOutcome> {
  const { port } = ctx;
  const from = (await ctx.prefetchedHead) ?? (await port.branchHead(effect.from));
  if (!from) return { kind: "failed", error: `branch ${effect.from} does not exist` };
  await port.createBranch(effect.branch, from);
  // A refinery's upstream branches are merged server-side; the conflicted ones are left to its agent.
  const conflicts: string[] = [];
  for (const upstream of effect.merge) {
    const merged = await port.mergeBranch(effect.branch, upstream, `forge: merge ${upstream} into ${effect.branch}`);
    if (merged.kind === "conflict") conflicts.push(upstream);
  }
  if (conflicts.length) ctx.conflicts.set(`${effect.taskId}:${effect.attempt}`, conflicts);
  return done({ conflicts });
}

async function dispatchAgent(effect: EffectOf<"DispatchAgent">, ctx: EffectContext): Promise<EffectOutcome> {
  if (ctx.replay) {
    // A dispatch may have happened before a crash: its run is on the attempt's branch, unique to it.
    // A revision's branch also holds the earlier jobs of its attempt: only a run newer than the
    // previous revision's is this one's (GitHub's run ids increase).
    const run = await dispatchedBefore(ctx, effect.branch);
    if (run && (effect.afterRunId === undefined || run.id > effect.afterRunId)) return done({ workflowRunId: run.id });
  }
  // Found while preparing the branch in this round, else kept in the journal when that was acknowledged
  // (this dispatch is tried again after a failure, or after a restart).
  const t = task(ctx, effect.taskId);
  const conflicts =
    ctx.conflicts.get(`${effect.taskId}:${effect.attempt}`) ?? (t?.attempt === effect.attempt ? t.context?.conflicts : undefined);
  const context = {
    ...(effect.context ?? {}),
    ...(conflicts?.length ? { conflicts } : {}),
    ...(effect.iteration !== undefined ? { iteration: effect.iteration } : {}),
  };
  const { workflowRunId } = await dispatchJob(ctx, effect.branch, effect.taskId, effect.attempt, context, effect.iteration);
  return done(workflowRunId !== undefined ? { workflowRunId } : {});
}

/**
 * Dispatches the agent workflow for an attempt with GitHub's limits on inputs kept: a context too
 * long for the `context` input (a refinement document, a retry message) has its largest fields
 * written to a file on the run's state branch, and the input names the file and its blob sha
 * (src/core/dispatch-inputs.ts). Without that, GitHub's 422 would refuse this attempt's every dispatch.
 */
async function dispatchJob(
  ctx: EffectContext,
  branch: string,
  taskId: string,
  attempt: number,
  context: Record<string, unknown>,
  iteration?: number,
): Promise<{ workflowRunId?: number }> {
  const base: Record<string, string> = {
    [DISPATCH_INPUTS.runId]: ctx.journal.runId,
    [DISPATCH_INPUTS.taskId]: taskId,
    [DISPATCH_INPUTS.attempt]: String(attempt),
  };
  const inputs = { ...base };
  const telemetry = appTelemetry(ctx.config);
  // The attempt's place in the run's trace; only when telemetry is on, so a workflow without it sees nothing new.
  if (telemetry) {
    context = { ...context, traceparent: dispatchTraceparent(ctx.journal.runId, taskId, attempt) };
    traceDispatch(telemetry, ctx.journal.runId, taskId, attempt, ctx.now);
  }
  if (Object.keys(context).length) {
    const path = dispatchContextPath(taskId, attempt, iteration);
    const { inline, spilled } = splitDispatchContext(base, context, path);
    const file = spilled ? { path, sha: await writeContextFile(ctx, path, JSON.stringify(spilled)) } : undefined;
    inputs[DISPATCH_INPUTS.context] = JSON.stringify(file ? { ...inline, file } : inline);
  }
  return ctx.port.dispatchWorkflow(ctx.config.workflow, branch, inputs);
}

/** Writes an attempt's context file on the run's state branch (once: a dispatch tried again finds it). Returns its blob sha. */
async function writeContextFile(ctx: EffectContext, path: string, text: string): Promise<string> {
  const branch = stateBranch(ctx.journal.runId);
  const message = `forge: the dispatch context of ${path}`;
  try {
    return (await ctx.port.writeFile(branch, path, text, message)).blobSha;
  } catch (e) {
    if (!(e instanceof ConflictError)) throw e;
    const existing = await ctx.port.readFile(path, branch);
    if (existing?.content === text) return existing.blobSha;
    if (existing) return (await ctx.port.writeFile(branch, path, text, message, existing.blobSha)).blobSha;
    throw e;
  }
}

async function mergePullRequest(effect: EffectOf<"MergePullRequest">, ctx: EffectContext): Promise<EffectOutcome> {
  const { port } = ctx;
  const t = task(ctx, effect.taskId);
  const known = effect.prNumber ?? (t?.attempt === effect.attempt ? t.prNumber : undefined);
  // Read just before merging: only the task's own pull request is merged — its head the attempt's
  // branch in this repository, its base the run's integration branch — whatever number was recorded.
  // With its number known, the pull request and what it changes come in one call.
  const current: (PullRequestInfo & { files?: string[] }) | null =
    known !== undefined
      ? await port.getPullRequestWithFiles(known)
      : ((await port.findPullRequest(effect.branch)) ?? (t?.attempt === effect.attempt ? await openMissingPull(effect, ctx, t) : null));
  if (!current) return { kind: "later", reason: `no pull request for ${effect.branch} yet` };
  if (current.merged && current.mergeSha) return done({ mergeSha: current.mergeSha, prNumber: current.number });
  if (current.fromFork || current.headRef !== effect.branch || current.baseRef !== ctx.journal.integrationBranch)
    return {
      kind: "failed",
      error: `pull request #${current.number} is not ${effect.branch} → ${ctx.journal.integrationBranch} in this repository; Forge merges only a task's own pull request`,
    };
  const number = current.number;
  // Merge exactly the head that passed the MERGE_READY gate: GitHub answers 409 if it moved.
  const sha = t?.attempt === effect.attempt ? t.pushedSha : undefined;
  // What the PR changes, as GitHub lists it: protected paths wait for a person's approval of this head.
  const head = sha ? headOf(ctx, t, sha) : current.headSha;
  if (t?.approvedHead !== head) {
    // Listed for the head GitHub has now: a head that moved since is refused by the merge below.
    const held = protectedChanges(current.files ?? (await port.listPullRequestFiles(number)), ctx.config);
    if (held.length) return done({ held, prNumber: number });
  }
  // The checks the config requires, on the head that merges: running → wait; failed → the fix revision answers them.
  if (ctx.config.required_checks.length) {
    const ci = await port.ciChecks(head, ctx.config.required_checks);
    if (ci.pending) return { kind: "later", reason: `required checks of ${head.slice(0, 7)} are not done` };
    // Red: the fix revision answers them — even when they failed before the task reached the gate,
    // when their own webhook found nothing to do.
    if (ci.failing.length)
      return {
        kind: "later",
        reason: `required checks failed: ${ci.failing.map((c) => c.name).join(", ")}`,
        ...(t?.attempt === effect.attempt && head === (t.recordSha ?? t.pushedSha)
          ? { inputs: [checksFailedInput({ taskId: t.id, attempt: t.attempt }, head, ci.failing)] }
          : {}),
      };
  }
  const title = t ? `forge(${t.id}): ${ctx.journal.plan.nodes.find((n) => n.id === t.id)?.title || t.id}` : `forge: ${effect.taskId}`;
  const res = await port.mergePullRequest(number, { ...(sha ? { sha: headOf(ctx, t, sha) } : {}), title });
  if (res.kind === "merged") return done({ mergeSha: res.sha, prNumber: number });
  // Another merge into the same base won the race: nothing is wrong with this one, try again soon.
  if (res.kind === "base_moved") return { kind: "later", reason: res.message, retryInMs: MERGE_RETRY_MS };
  // Merged already (by this effect before a crash, behind a lost answer, or by a person)? Else it
  // waits: for required checks (check_suite/status webhooks flush it) or the next reconcile pass.
  const pr = await port.getPullRequest(number);
  if (pr.merged && pr.mergeSha) return done({ mergeSha: pr.mergeSha, prNumber: number });
  if (res.kind === "not_mergeable") return { kind: "later", reason: res.message };
  // GitHub said the head is not the verified one: only a head that really moved fails the merge.
  const verified = sha ? headOf(ctx, t, sha) : undefined;
  if (pr.state === "open" && verified && pr.headSha === verified)
    return { kind: "later", reason: "GitHub answered 409 for the verified head; trying again", retryInMs: MERGE_RETRY_MS };
  return {
    kind: "failed",
    error: `the head of ${effect.branch} moved after it was verified (${verified?.slice(0, 7) ?? "?"} → ${pr.headSha.slice(0, 7)}); it will not be merged unverified`,
  };
}

/**
 * A verified attempt whose runner could not open its pull request (a lost push or call, the job
 * killed between its last push and the PR): the App opens it, pointing at the attempt's walkthrough,
 * so the work is reviewed and merged as any other. A PR the runner opens meanwhile is found instead.
 */
async function openMissingPull(effect: EffectOf<"MergePullRequest">, ctx: EffectContext, t: TaskState): Promise<PullRequestInfo | null> {
  const { port, journal } = ctx;
  const head = await port.branchHead(effect.branch);
  if (!head) return null;
  const title = journal.plan.nodes.find((n) => n.id === t.id)?.title || t.id;
  const record = t.recordSha ?? head;
  const body = [
    `The runner of attempt ${effect.attempt} could not open this pull request; Forge opened it.`,
    "",
    `The walkthrough: \`${walkthroughPath(journal.runId, t.id, effect.attempt)}\` at ${record}.`,
  ].join("\n");
  try {
    const pr = await port.createPullRequest({
      head: effect.branch,
      base: journal.integrationBranch,
      title: `forge(${t.id}): ${title}`,
      body,
    });
    await port.updateIssue(pr.number, { labels: [LABELS.task] }).catch(() => undefined);
    return pr;
  } catch (e) {
    // GitHub answers 422 for a second PR of the same head and base: the runner opened it meanwhile.
    const found = await port.findPullRequest(effect.branch);
    if (found) return found;
    throw e;
  }
}

async function openChangeRequest(effect: EffectOf<"OpenChangeRequest">, ctx: EffectContext): Promise<EffectOutcome> {
  const { port } = ctx;
  // An issue opened before a crash (or behind a lost answer) carries the CR's marker.
  const cr = ctx.journal.changeRequests.find((c) => c.id === effect.crId);
  const known =
    cr?.issueNumber ??
    (ctx.replay ? await port.findIssue(LABELS.changeRequest, crMarker(ctx.journal.runId, effect.crId)) : null) ??
    undefined;
  if (known !== undefined) return done({ issueNumber: known });
  const emitter = task(ctx, effect.emittedBy);
  const doc = effect.path && emitter?.branch ? await port.readFile(effect.path, emitter.branch) : null;
  const number = await port.createIssue({
    title: `Change Request: ${asData(cr?.title ?? effect.crId)}`,
    body: renderChangeRequestIssue(ctx.journal, effect.crId, doc?.content, ctx.config),
    labels: [LABELS.changeRequest],
  });
  return done({ issueNumber: number });
}

async function dispatchCaptain(effect: EffectOf<"DispatchCaptain">, ctx: EffectContext): Promise<EffectOutcome> {
  const { port } = ctx;
  const base = ctx.journal.baseBranch;
  const branch = captainBranch(ctx.journal.runId, effect.crId);
  if (ctx.replay) {
    const run = await dispatchedBefore(ctx, branch);
    if (run) return done({ workflowRunId: run.id });
  }
  if (!(await port.branchHead(branch))) {
    const head = await port.branchHead(base);
    if (!head) return { kind: "failed", error: `base branch ${base} does not exist` };
    await port.createBranch(branch, head);
  }
  const cr = ctx.journal.changeRequests.find((c) => c.id === effect.crId);
  const { workflowRunId } = await dispatchJob(ctx, branch, captainId(effect.crId), 1, {
    changeRequest: effect.crId,
    planDir: planDir(ctx.journal.planId),
    reason: cr?.reason ?? "",
    ...(cr?.issueNumber !== undefined ? { issue: cr.issueNumber } : {}),
  });
  return done(workflowRunId !== undefined ? { workflowRunId } : {});
}

async function postComment(effect: EffectOf<"PostComment">, ctx: EffectContext): Promise<EffectOutcome> {
  const { port } = ctx;
  const issue = await commentTarget(effect.target, ctx);
  if (issue === undefined) return { kind: "later", reason: "the comment's issue or PR does not exist yet", retryInMs: 2_000 };
  // A hidden marker names the effect: a replay finds the comment posted before a crash.
  const marker = `<!-- forge:comment ${ctx.journal.runId} ${effect.key} -->`;
  if (ctx.replay && (await port.findComment(issue, marker)) !== null) return done();
  // The body may quote an agent (its question, an error): shown as data, no marker or @mention of its own.
  await port.createComment(issue, `${asData(effect.body)}\n\n${marker}`);
  return done();
}

async function updateTracker(_effect: EffectOf<"UpdateTracker">, ctx: EffectContext): Promise<EffectOutcome> {
  const { port } = ctx;
  const final = ctx.journal.status !== "running";
  const last = ctx.facts.trackerUpdatedAt ? Date.parse(ctx.facts.trackerUpdatedAt) : 0;
  const wait = trackerDebounceMs(ctx.journal.tasks.length);
  if (!final && ctx.facts.trackerIssue !== undefined && ctx.now - last < wait)
    return { kind: "later", reason: "debounced", retryInMs: wait - (ctx.now - last) + 50 };
  const body = renderTracker(ctx.journal, ctx.events, ctx.facts, ctx.port, ctx.config);
  const title = `Forge run ${ctx.journal.runId}: ${ctx.journal.planId} (${ctx.journal.merged}/${ctx.journal.tasks.length} merged${ctx.journal.status !== "running" ? `, ${ctx.journal.status}` : ""})`;
  let issue = ctx.facts.trackerIssue;
  // The tracker may have been opened before a crash (or behind a lost answer): it carries the run's marker.
  if (issue === undefined && ctx.replay) issue = (await port.findIssue(LABELS.tracker, trackerMarker(ctx.journal.runId))) ?? undefined;
  if (issue === undefined) issue = await port.createIssue({ title, body, labels: [LABELS.tracker] });
  else await port.updateIssue(issue, { title, body, ...(final ? { state: "closed" as const } : {}) });
  return done({ issueNumber: issue }, { trackerIssue: issue, trackerUpdatedAt: new Date(ctx.now).toISOString() });
}

async function spawnFollowup(effect: EffectOf<"SpawnFollowup">, ctx: EffectContext): Promise<EffectOutcome> {
  const { port } = ctx;
  if (ctx.replay) {
    const run = await dispatchedBefore(ctx, effect.branch);
    if (run) return done({ workflowRunId: run.id });
  }
  if (!(await port.branchHead(effect.branch))) {
    const from = await port.branchHead(ctx.journal.integrationBranch);
    if (!from) return { kind: "failed", error: `branch ${ctx.journal.integrationBranch} does not exist` };
    await port.createBranch(effect.branch, from);
  }
  const { workflowRunId } = await dispatchJob(ctx, effect.branch, effect.followupId, 1, {
    followup: effect.text,
    sourceTaskId: effect.sourceTaskId,
  });
  return done(workflowRunId !== undefined ? { workflowRunId } : {});
}

async function openFinalPullRequest(_effect: EffectOf<"OpenFinalPullRequest">, ctx: EffectContext): Promise<EffectOutcome> {
  if (ctx.facts.finalPr !== undefined) return done({ prNumber: ctx.facts.finalPr });
  const existing = await ctx.port.findPullRequest(ctx.journal.integrationBranch, "all");
  const pr =
    existing ??
    (await ctx.port.createPullRequest({
      head: ctx.journal.integrationBranch,
      base: ctx.journal.baseBranch,
      title: `Forge run ${ctx.journal.runId}: ${ctx.journal.planId}`,
      body: renderFinalPr(ctx.journal, ctx.facts, await finalFigures(ctx)),
    }));
  return done({ prNumber: pr.number }, { finalPr: pr.number });
}

/** The run's outcome figures for its final PR; without them (a segment could not be read) the PR says less, and still opens. */
async function finalFigures(ctx: EffectContext): Promise<OutcomeFigures | undefined> {
  try {
    const events = await readRunEvents(ctx.port, ctx.journal.runId, ctx.events);
    const telemetry = appTelemetry(ctx.config);
    if (telemetry) traceRun(telemetry, ctx.journal, events, ctx.now);
    return outcomeFigures(ctx.journal, events, ctx.config);
  } catch {
    return undefined;
  }
}

async function cleanupBranches(effect: EffectOf<"CleanupBranches">, ctx: EffectContext): Promise<EffectOutcome> {
  for (const b of effect.branches) await ctx.port.deleteBranch(b);
  return done();
}

async function cancelAgent(effect: EffectOf<"CancelAgent">, ctx: EffectContext): Promise<EffectOutcome> {
  const { port } = ctx;
  const t = task(ctx, effect.taskId);
  const id = effect.workflowRunId ?? (t?.attempt === effect.attempt ? t.workflowRunId : undefined);
  if (id !== undefined) await port.cancelWorkflowRun(id);
  else {
    const branch = t?.attempt === effect.attempt && t.branch ? t.branch : undefined;
    if (branch) for (const run of await ownRuns(ctx, branch)) if (run.status !== "completed") await port.cancelWorkflowRun(run.id);
  }
  return done();
}

/** A MERGE_READY attempt whose PR changes protected paths and whose head no person approved yet. */
function isHeld(t: TaskState): boolean {
  return !!t.protectedPaths?.length && t.approvedHead !== (t.recordSha ?? t.pushedSha);
}

/**
 * Runs of the agent workflow on `branch` that Forge dispatched: started by `workflow_dispatch`,
 * with their head in this repository — never the repository's own CI, nor a fork's run.
 */
async function ownRuns(ctx: EffectContext, branch: string): Promise<WorkflowRunInfo[]> {
  const runs = await ctx.port.listWorkflowRuns(ctx.config.workflow, { branch });
  if (runs.length === 0) return runs;
  const repositoryId = await ctx.port.repositoryId();
  return runs.filter((r) => r.event === "workflow_dispatch" && r.headRepositoryId === repositoryId);
}

/** A dispatch on `branch` made before a crash (or behind a lost answer): the newest of Forge's runs there. */
async function dispatchedBefore(ctx: EffectContext, branch: string): Promise<WorkflowRunInfo | undefined> {
  const runs = await ownRuns(ctx, branch);
  return runs.sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt))[0];
}

/** The record commit sits on top of the walkthrough's head; the PR's head is the record commit. */
function headOf(_ctx: EffectContext, t: TaskState | undefined, pushed: string): string {
  return t?.recordSha ?? pushed;
}

async function commentTarget(target: Extract<Effect, { kind: "PostComment" }>["target"], ctx: EffectContext): Promise<number | undefined> {
  if (target.on === "tracker") return ctx.facts.trackerIssue;
  if (target.on === "cr") return ctx.journal.changeRequests.find((c) => c.id === target.crId)?.issueNumber;
  const t = task(ctx, target.taskId);
  if (t?.attempt === target.attempt && t.prNumber !== undefined) return t.prNumber;
  const branch = t?.attempt === target.attempt ? t.branch : undefined;
  if (!branch) return ctx.facts.trackerIssue;
  const pr = await ctx.port.findPullRequest(branch);
  return pr?.number ?? ctx.facts.trackerIssue;
}

const CONCLUSION: Partial<Record<TaskState["status"], CheckConclusion>> = {
  MERGE_READY: "success",
  MERGED: "success",
  FAILED: "failure",
  STALE: "timed_out",
};

/**
 * One check run per attempt, created when the attempt has a verdict, on the head the verdict is
 * about (the PR's head): a check run created earlier would sit on a commit the PR no longer shows.
 */
async function upsertCheckRun(effect: EffectOf<"UpsertCheckRun">, ctx: EffectContext): Promise<EffectOutcome> {
  const t0 = task(ctx, effect.taskId);
  const held = effect.status === "MERGE_READY" && t0?.attempt === effect.attempt && isHeld(t0);
  const conclusion = held ? "action_required" : CONCLUSION[effect.status];
  if (!conclusion) return done();
  const key = `${effect.taskId}:${effect.attempt}`;
  const t = task(ctx, effect.taskId);
  const existing = ctx.facts.checkRuns[key];
  const fields = {
    status: "completed" as const,
    conclusion,
    title: held ? `${effect.taskId}: waiting for /forge approve (protected paths changed)` : asData(effect.summary),
    summary: asData(checkSummary({ journal: ctx.journal, facts: ctx.facts, owner: ctx.port.owner, repo: ctx.port.repo }, t, effect, held)),
    externalId: `${ctx.journal.runId}/${effect.taskId}/${effect.attempt}`,
    ...(effect.status === "FAILED" || effect.status === "STALE"
      ? { actions: [{ label: "Retry", description: `Retry ${effect.taskId} with a new attempt`, identifier: "retry" }] }
      : {}),
  };
  if (existing !== undefined) {
    // MERGED after MERGE_READY changes nothing a reviewer sees: the attempt already succeeded.
    if (effect.status === "MERGED") return done({ checkRunId: existing });
    await ctx.port.updateCheckRun(existing, fields);
    return done({ checkRunId: existing });
  }
  // The task may be on its next attempt already (a retry without backoff is dispatched in the same
  // decision): the verdict still belongs on this attempt's branch, whose name the template gives.
  const branch =
    t?.attempt === effect.attempt ? t.branch : t ? branchName(ctx.config, ctx.journal.runId, effect.taskId, effect.attempt) : undefined;
  const headSha =
    (t?.attempt === effect.attempt ? (t.recordSha ?? t.pushedSha) : undefined) ?? (branch ? await ctx.port.branchHead(branch) : null);
  if (!headSha) return done();
  // A create may have happened before a crash or behind a lost answer: GitHub keeps it on the head.
  const found = ctx.replay ? await ctx.port.findCheckRun(headSha, checkRunName(effect.taskId), fields.externalId) : null;
  if (found !== null) {
    if (effect.status !== "MERGED") await ctx.port.updateCheckRun(found, fields);
    return done({ checkRunId: found }, { checkRuns: { [key]: found } });
  }
  const id = await ctx.port.createCheckRun({ name: checkRunName(effect.taskId), headSha, ...fields });
  return done({ checkRunId: id }, { checkRuns: { [key]: id } });
}

const HANDLERS: EffectHandlers = {
  PrepareBranch: prepareBranch,
  DispatchAgent: dispatchAgent,
  UpsertCheckRun: upsertCheckRun,
  MergePullRequest: mergePullRequest,
  OpenChangeRequest: openChangeRequest,
  DispatchCaptain: dispatchCaptain,
  PostComment: postComment,
  UpdateTracker: updateTracker,
  SpawnFollowup: spawnFollowup,
  OpenFinalPullRequest: openFinalPullRequest,
  CleanupBranches: cleanupBranches,
  CancelAgent: cancelAgent,
};

export { trackerMarker };
