// Effect runner: the check run that shows an attempt's verdict on its pull request's head.
import { branchName } from "../../core/decide/index.js";
import type { TaskState } from "../../core/journal.js";
import { checkRunName } from "../../core/layout.js";
import { attemptNumbered, heldForProtectedPaths, prHead } from "../../core/task-rules.js";
import type { CheckConclusion } from "../../github/port.js";
import { asData } from "../../core/render/as-data.js";
import { repoPage } from "../../github/web-url.js";
import { checkSummary } from "../check-summary.js";
import { done, task, type EffectContext, type EffectOf, type EffectOutcome } from "./context.js";

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
export async function upsertCheckRun(effect: EffectOf<"UpsertCheckRun">, ctx: EffectContext): Promise<EffectOutcome> {
  const t = task(ctx, effect.taskId);
  const a = attemptNumbered(t, effect.attempt);
  const held = effect.status === "MERGE_READY" && !!a && heldForProtectedPaths(t!);
  const conclusion = held ? "action_required" : CONCLUSION[effect.status];
  if (!conclusion) return done();
  const key = `${effect.taskId}:${effect.attempt}`;
  const existing = ctx.facts.checkRuns[key];
  const fields = {
    status: "completed" as const,
    conclusion,
    title: held ? `${effect.taskId}: waiting for /forge approve (protected paths changed)` : asData(effect.summary),
    summary: asData(checkSummary({ journal: ctx.journal, facts: ctx.facts, repo: ctx.port }, t, effect, held)),
    externalId: `${ctx.journal.runId}/${effect.taskId}/${effect.attempt}`,
    // "Details": the attempt's job on the GitHub the App talks to, where its log is (else GitHub shows the App's page).
    ...(a?.revision.workflowRunId !== undefined ? { detailsUrl: repoPage(ctx.port, `actions/runs/${a.revision.workflowRunId}`) } : {}),
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
  const branch = a ? a.branch : t ? branchName(ctx.config, ctx.journal.runId, effect.taskId, effect.attempt) : undefined;
  const headSha = (a ? prHead(t!) : undefined) ?? (branch ? await ctx.port.branchHead(branch) : null);
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
