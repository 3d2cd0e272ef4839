/**
 * `check_suite` and `status`: required checks or statuses finished, so merges that were waiting may
 * go through now; and a task PR whose head's own CI failed gets a fix revision
 * (docs/executor.md#iterations).
 */
import type { Context } from "probot";
import { prHead } from "../../core/task-rules.js";
import { checksFailedInput } from "../../github/ci-checks.js";
import { logOf, type AppContext } from "../context.js";
import type { RepoRuntime } from "../runtime.js";

export async function onChecksDone(ctx: AppContext, context: Context<"check_suite"> | Context<"status">): Promise<void> {
  if (context.name === "check_suite" && (context.payload as { action: string }).action !== "completed") return;
  const rt = await ctx.rtOf(context);
  if (context.name === "check_suite") {
    const suite = (context as Context<"check_suite">).payload.check_suite;
    // Forge's own suite (its check runs) is not the repository's CI.
    if (ctx.slug === undefined || suite.app?.slug !== ctx.slug)
      await redChecks(ctx, rt, context, { branch: suite.head_branch, headSha: suite.head_sha, conclusion: suite.conclusion });
  } else await redStatus(ctx, rt, context as Context<"status">);
  await flushMerges(ctx, rt);
}

/** The repository's CI workflow finished on a branch: a red run may call for a fix, a green one may let a merge through. */
export async function onCiDone(ctx: AppContext, rt: RepoRuntime, context: Context, done: CiDone): Promise<void> {
  await redChecks(ctx, rt, context, done);
  await flushMerges(ctx, rt);
}

/** At most this many branches of a `status` payload are looked at (the task branch is one of them). */
const STATUS_BRANCHES = 10;

/**
 * A commit status (the legacy Statuses API: Jenkins, CircleCI, …) failed: for a task PR's head it
 * counts as a red required check when its context is one of the run's `required_checks` (any
 * token with `statuses: write` may post any context); never Forge's own. The payload names the commit and the branches whose head it is; what failed is read back
 * from GitHub (`ciChecks`), as for check suites.
 */
async function redStatus(ctx: AppContext, rt: RepoRuntime, context: Context<"status">): Promise<void> {
  const p = context.payload;
  if (p.state !== "failure" && p.state !== "error") return;
  if (typeof p.context !== "string" || p.context.startsWith("forge · ")) return;
  for (const b of (Array.isArray(p.branches) ? p.branches : []).slice(0, STATUS_BRANCHES)) {
    if (typeof b?.name !== "string" || typeof p.sha !== "string") continue;
    await redChecks(ctx, rt, context, { branch: b.name, headSha: p.sha, conclusion: "failure", context: p.context });
  }
}

/** Merges waiting for checks are tried again. */
async function flushMerges(ctx: AppContext, rt: RepoRuntime): Promise<void> {
  for (const [runId, r] of await ctx.knownRuns(rt)) {
    if (r.status !== "running") continue;
    const loaded = await rt.engine.state(runId);
    if (loaded?.state.journal.outbox.some((e) => e.kind === "MergePullRequest")) await rt.engine.flush(runId);
  }
}

/** A finished suite or workflow run of the repository's CI: which branch and head, and how it ended. */
export interface CiDone {
  branch: string | null | undefined;
  headSha: string;
  conclusion: string | null | undefined;
  /** A commit status's context: it counts only when the run requires it. */
  context?: string;
}

/**
 * A failed suite (or CI workflow run) on a verified task PR's head: once every required check on
 * that head is done (read from GitHub, Forge's own never counted), its failures —
 * names, summaries, annotations, log excerpts — become `checks.failed`. The payload only says which
 * head to look at.
 */
async function redChecks(ctx: AppContext, rt: RepoRuntime, context: Context, done: CiDone): Promise<void> {
  if (!done.branch || (done.conclusion !== "failure" && done.conclusion !== "timed_out")) return;
  // (A failed commit status arrives here as conclusion "failure".)
  const suite = { head_branch: done.branch, head_sha: done.headSha };
  const ref = await ctx.attemptOf(rt, suite.head_branch);
  if (!ref) return;
  const loaded = await rt.engine.state(ref.runId);
  const t = loaded?.state.journal.tasks.find((x) => x.id === ref.taskId);
  if (!loaded || !t || t.attempts !== ref.attempt || t.status !== "MERGE_READY" || prHead(t) !== suite.head_sha) return;
  // Only the checks the run requires count: anyone with a token that may post a status or a check
  // run could otherwise start fix revisions with their own text in the agent's prompt.
  const required = loaded.state.config.required_checks;
  if (required.length === 0 || (done.context !== undefined && !required.includes(done.context))) return;
  const checks = await rt.port.ciChecks(suite.head_sha, required);
  if (checks.pending || checks.failing.length === 0) return;
  const result = await ctx.apply(rt, ref.runId, [checksFailedInput(ref, suite.head_sha, checks.failing)]);
  if (result.rejections.length)
    logOf(context).info(
      { runId: ref.runId, taskId: ref.taskId, rejections: result.rejections.map((r) => r.reason) },
      "red checks changed nothing",
    );
}
