// Effect runners: change request issues, comments, the run's tracker issue and its final pull request.
import { createHash } from "node:crypto";
import type { Effect } from "../../core/effects.js";
import type { Journal } from "../../core/journal.js";
import { branchName, LABELS } from "../../core/layout.js";
import { attemptNumbered, heldForProtectedPaths } from "../../core/task-rules.js";
import { readRunEvents } from "../run-store.js";
import { asData } from "../../core/render/as-data.js";
import { outcomeFigures, type OutcomeFigures } from "../../core/outcomes.js";
import { appTelemetry, traceRun } from "../telemetry.js";
import { cachedBranchRules, finalMergeMethod, RULES_TTL_MS } from "../../github/merge-rules.js";
import { changeRequestIssueTitle, crMarker, renderChangeRequestIssue, renderFinalPr, renderTracker, trackerMarker } from "../render.js";
import { done, task, type DeepReadonly, type EffectContext, type EffectOf, type EffectOutcome } from "./context.js";
import type { RunFacts } from "../run-store.js";
import { syncIssues } from "../issue-sync.js";

/** Minimum time between two writes of a tracker issue (the content-creation budget is ~80/min per installation). */
export const TRACKER_DEBOUNCE_MS = 5_000;
/** The longest a big plan's tracker waits between two writes. */
export const TRACKER_DEBOUNCE_MAX_MS = 60_000;

/**
 * The wait between two writes of the tracker of a run of `tasks` tasks that has been going for
 * `elapsedMs` and merged `merged` of them: at least 5 s, at most a minute, and beyond that the
 * larger of
 * - 50 ms a task: a big plan's tracker changes with every task (several times a second at 1,000
 *   tasks), and written every 5 s it cost 0.4 calls a task; a person reading the tracker of 1,000
 *   tasks needs its progress, not each task's second;
 * - the run's pace, the time a merge has taken so far: a task changes state four or five times
 *   between two merges (dispatched, started, finished, checked, merged) and a slow run (GitHub's
 *   latencies, real agents) redrawn every 5 s cost two writes a task for states a person sees for
 *   seconds. At one write per merge interval the tracker still moves with every merge, never more
 *   than a minute behind.
 * The final update is not held, nor is one that shows something new waiting for a person
 * (`attentionOf`): those go at the shortest wait.
 */
export const trackerDebounceMs = (tasks: number, pace: { elapsedMs: number; merged: number } = { elapsedMs: 0, merged: 1 }) =>
  Math.min(TRACKER_DEBOUNCE_MAX_MS, Math.max(TRACKER_DEBOUNCE_MS, 50 * tasks, pace.elapsedMs / Math.max(1, pace.merged)));

/**
 * What in the run waits for a person — held tasks, tasks waiting for a review or an approval, a
 * pause and its reasons, open Change Requests — as a short digest: when it changes, the tracker is
 * redrawn at the shortest wait, whatever the run's pace.
 */
export function attentionOf(journal: Journal): string {
  const known = attentionMemo.get(journal);
  if (known !== undefined) return known;
  const items: string[] = [];
  for (const t of journal.tasks) {
    const a = t.attempt;
    if (a?.hold) items.push(`${t.id}:${t.attempts}:${a.hold}`);
    if (t.status === "MERGE_READY" && a?.revision.waiting) items.push(`${t.id}:${t.attempts}:waiting:${a.revision.waiting}`);
    if (t.status === "MERGE_READY" && heldForProtectedPaths(t)) items.push(`${t.id}:${t.attempts}:approve`);
  }
  for (const cr of journal.changeRequests) if (cr.status === "pending") items.push(`cr:${cr.id}`);
  items.push(JSON.stringify(journal.pause));
  const digest = createHash("sha256").update(items.join("\n")).digest("base64url").slice(0, 16);
  attentionMemo.set(journal, digest);
  return digest;
}

/** A decision makes a new journal object: its digest is taken once, whoever asks (the lease, the redraw). */
const attentionMemo = new WeakMap<Journal, string>();

export async function openChangeRequest(effect: EffectOf<"OpenChangeRequest">, ctx: EffectContext): Promise<EffectOutcome> {
  const { port } = ctx;
  // An issue opened before a crash (or behind a lost answer) carries the CR's marker.
  const cr = ctx.journal.changeRequests.find((c) => c.id === effect.crId);
  const known =
    cr?.issueNumber ??
    (ctx.replay ? await port.findIssue(LABELS.changeRequest, crMarker(ctx.journal.runId, effect.crId)) : null) ??
    undefined;
  if (known !== undefined) return done({ issueNumber: known });
  // The emitter's attempt, also once it was retried (its branch is the one the template names).
  const branch =
    attemptNumbered(task(ctx, effect.emittedBy), effect.attempt)?.branch ??
    branchName(ctx.config, ctx.journal.runId, effect.emittedBy, effect.attempt);
  const doc = effect.path ? await port.readFile(effect.path, branch) : null;
  const number = await port.createIssue({
    // The emitter's own title (result.json change_request), as data.
    title: changeRequestIssueTitle(cr?.title ?? effect.crId),
    body: renderChangeRequestIssue(ctx.journal, effect.crId, doc?.content, ctx.config),
    labels: [LABELS.changeRequest],
  });
  return done({ issueNumber: number });
}

export async function postComment(effect: EffectOf<"PostComment">, ctx: EffectContext): Promise<EffectOutcome> {
  const { port } = ctx;
  const issue = await commentTarget(effect.target, ctx);
  if (issue === undefined) return { kind: "later", reason: "the comment's issue or PR does not exist yet", retryInMs: 2_000 };
  // A hidden marker names the effect: a replay finds the comment posted before a crash.
  const marker = `<!-- forge:comment ${ctx.journal.runId} ${effect.updates ?? effect.key} -->`;
  // Why a merge is refused is one comment, updated in place as the reason changes — and once the PR
  // merges, by an effect that `updates` it (which posts none if it was never posted).
  if (effect.key.startsWith("merge-blocked:") || effect.updates) {
    const id = await port.findComment(issue, marker);
    if (id !== null) {
      await port.updateComment(id, `${asData(effect.body)}\n\n${marker}`);
      return done();
    }
    if (effect.updates) return done();
  } else if (ctx.replay && (await port.findComment(issue, marker)) !== null) return done();
  // The body may quote an agent (its question, an error): shown as data, no marker or @mention of its own.
  await port.createComment(issue, `${asData(effect.body)}\n\n${marker}`);
  return done();
}

/**
 * When the tracker may next be written (ms since the epoch; 0: at once — never written, or the run
 * ended). Fixed between two writes — the run's pace is taken as of the last write — so the lease
 * that keeps the redraw this process's can be written to last until then (`effectDue`).
 */
export function trackerDue(journal: Journal, facts: DeepReadonly<RunFacts>): number {
  if (journal.status !== "running" || facts.trackerIssue === undefined || !facts.trackerUpdatedAt) return 0;
  const last = Date.parse(facts.trackerUpdatedAt);
  const shortest = trackerDebounceMs(journal.tasks.length);
  const paced = trackerDebounceMs(journal.tasks.length, { elapsedMs: last - Date.parse(journal.createdAt), merged: journal.merged });
  // The tasks are scanned for what waits for a person only when that can shorten the wait.
  return last + (paced > shortest && attentionOf(journal) === facts.trackerAttention ? paced : shortest);
}

/** How soon a completed run's last tracker drawing looks again for its final PR, and how long it waits for it at most. */
export const FINAL_PR_WAIT_MS = 1_000;
export const FINAL_PR_PATIENCE_MS = 5 * 60_000;

export async function updateTracker(_effect: EffectOf<"UpdateTracker">, ctx: EffectContext): Promise<EffectOutcome> {
  const { port } = ctx;
  const final = ctx.journal.status !== "running";
  // A completed run's last drawing names its final PR, which waits for a person: drawn once the PR is
  // open — or, should GitHub not let it open, after a few minutes without it.
  const sinceEnd = ctx.now - Date.parse(ctx.journal.completedAt ?? "");
  if (
    final &&
    ctx.facts.finalPr === undefined &&
    ctx.journal.outbox.some((e) => e.kind === "OpenFinalPullRequest") &&
    !(sinceEnd > FINAL_PR_PATIENCE_MS)
  )
    return { kind: "later", reason: "the run's final PR is being opened", retryInMs: FINAL_PR_WAIT_MS };
  const due = trackerDue(ctx.journal, ctx.facts);
  if (ctx.now < due) return { kind: "later", reason: "debounced", retryInMs: due - ctx.now + 50 };
  const body = renderTracker(ctx.journal, ctx.events, ctx.facts, ctx.port, ctx.now, ctx.config);
  const title = `Forge run ${ctx.journal.runId}: ${ctx.journal.planId} (${ctx.journal.merged}/${ctx.journal.tasks.length} merged${ctx.journal.status !== "running" ? `, ${ctx.journal.status}` : ""})`;
  let issue = ctx.facts.trackerIssue;
  // The tracker may have been opened before a crash (or behind a lost answer): it carries the run's marker.
  if (issue === undefined && ctx.replay) issue = (await port.findIssue(LABELS.tracker, trackerMarker(ctx.journal.runId))) ?? undefined;
  if (issue === undefined) issue = await port.createIssue({ title, body, labels: [LABELS.tracker] });
  else await port.updateIssue(issue, { title, body, ...(final ? { state: "closed" as const } : {}) });
  // The issues the run shows on follow at the tracker's pace (../issue-sync.ts).
  const issues = await syncIssues(ctx, issue);
  return done(
    { issueNumber: issue },
    {
      trackerIssue: issue,
      trackerUpdatedAt: new Date(ctx.now).toISOString(),
      trackerAttention: attentionOf(ctx.journal),
      ...(issues ? { issues } : {}),
    },
  );
}

export async function openFinalPullRequest(_effect: EffectOf<"OpenFinalPullRequest">, ctx: EffectContext): Promise<EffectOutcome> {
  if (ctx.facts.finalPr !== undefined) return done({ prNumber: ctx.facts.finalPr });
  const existing = await ctx.port.findPullRequest(ctx.journal.integrationBranch, "all");
  const pr =
    existing ??
    (await ctx.port.createPullRequest({
      head: ctx.journal.integrationBranch,
      base: ctx.journal.baseBranch,
      title: `Forge run ${ctx.journal.runId}: ${ctx.journal.planId}`,
      body: renderFinalPr(ctx.journal, ctx.facts, await finalFigures(ctx), await baseMergeMethod(ctx)),
    }));
  return done({ prNumber: pr.number }, { finalPr: pr.number });
}

/** How the base's rules want the final PR merged when not by a merge commit; a read that fails says nothing. */
async function baseMergeMethod(ctx: EffectContext): Promise<"squash" | "rebase" | undefined> {
  try {
    const method = finalMergeMethod(await ctx.port.branchRules(ctx.journal.baseBranch));
    if (method !== "rebase") return method;
    // A rebase replays the integration branch: only one Forge squashed into holds no merge commit
    // (its merge method, read for the task merges, is kept: usually no call).
    const integration = ctx.journal.integrationBranch;
    const { method: tasks } = await cachedBranchRules(ctx.port, integration, ctx.now, RULES_TTL_MS, () =>
      ctx.port.branchRules(integration),
    );
    return tasks === "merge" ? "squash" : "rebase";
  } catch {
    return undefined;
  }
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

async function commentTarget(target: Extract<Effect, { kind: "PostComment" }>["target"], ctx: EffectContext): Promise<number | undefined> {
  if (target.on === "tracker") return ctx.facts.trackerIssue;
  if (target.on === "cr") return ctx.journal.changeRequests.find((c) => c.id === target.crId)?.issueNumber;
  const t = task(ctx, target.taskId);
  if (!t) return ctx.facts.trackerIssue;
  // The attempt's PR, also once the attempt was retried (its branch is the one the template names).
  const a = attemptNumbered(t, target.attempt);
  if (a?.prNumber !== undefined) return a.prNumber;
  const pr = await ctx.port.findPullRequest(a?.branch ?? branchName(ctx.config, ctx.journal.runId, t.id, target.attempt));
  return pr?.number ?? ctx.facts.trackerIssue;
}
