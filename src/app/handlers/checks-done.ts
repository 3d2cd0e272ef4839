/**
 * `check_suite` and `status`: required checks or statuses finished, so merges that were waiting may
 * go through now; and a task PR whose head's own CI failed gets a fix revision
 * (docs/executor.md#iterations).
 */
import type { Context } from "probot";
import { prHead } from "../../core/task-rules.js";
import type { AttemptRef } from "../../core/layout.js";
import { checksFailedInput, ciVerdict, onGroup } from "../../github/ci-checks.js";
import { RULES_TTL_MS } from "../../github/merge-rules.js";
import { readRuledChecks, requiredChecks } from "../../github/required-checks.js";
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
 * counts as a red required check when its context is required — by the run's `required_checks` or
 * the integration branch's rules (any token with `statuses: write` may post any context); never
 * Forge's own. The payload names the commit and the branches whose head it is; what failed is read back
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

/** Merges waiting for checks (or for the merge queue) are tried again. */
export async function flushMerges(ctx: AppContext, rt: RepoRuntime): Promise<void> {
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
  /** The merge group the checks ran on, when not on the head itself (the head is the task PR's that the group merged). */
  group?: string;
}

/** Red checks being read, by attempt and head: the same red CI reaching the App twice (its workflow run, its suite, its check runs) is read once. */
const reading = new WeakMap<AppContext, Map<string, Promise<void>>>();

/**
 * A failed suite, check run, commit status or CI workflow run on a verified task PR's head: once
 * every required check on that head is done (read from GitHub, Forge's own never counted), its
 * failures — names, summaries, annotations, log excerpts — become `checks.failed`. Required: the
 * config's `required_checks` and the integration branch's rules' (../../github/required-checks.ts),
 * whoever reports them. The payload only says which head to look at. The same head's red CI arriving
 * by several webhooks is read once at a time, and not again once the attempt took it.
 */
export async function redChecks(ctx: AppContext, rt: RepoRuntime, context: Context, done: CiDone): Promise<void> {
  if (!done.branch || (done.conclusion !== "failure" && done.conclusion !== "timed_out")) return;
  // (A failed commit status arrives here as conclusion "failure".)
  const ref = await ctx.attemptOf(rt, done.branch);
  if (!ref) return;
  const key = `${rt.port.owner}/${rt.port.repo}:${ref.runId}:${ref.taskId}:${ref.attempt}:${done.headSha}:${done.group ?? ""}`;
  const mine = reading.get(ctx) ?? new Map<string, Promise<void>>();
  reading.set(ctx, mine);
  const under = mine.get(key);
  if (under) return under;
  const work = readRedChecks(ctx, rt, context, ref, done).finally(() => mine.delete(key));
  mine.set(key, work);
  return work;
}

async function readRedChecks(ctx: AppContext, rt: RepoRuntime, context: Context, ref: AttemptRef, done: CiDone): Promise<void> {
  const loaded = await rt.engine.state(ref.runId);
  const t = loaded?.state.journal.tasks.find((x) => x.id === ref.taskId);
  if (!loaded || !t || t.attempts !== ref.attempt || t.status !== "MERGE_READY" || prHead(t) !== done.headSha) return;
  // Taken already: a fix revision answers this head, or waits for it.
  const a = t.attempt;
  if (a?.feedback?.some((f) => f.source === "ci" && f.headSha === done.headSha) || a?.answeredHeads?.includes(done.headSha)) return;
  // Only the checks the run requires count: anyone with a token that may post a status or a check
  // run could otherwise start fix revisions with their own text in the agent's prompt.
  const base = loaded.state.journal.integrationBranch;
  const required = await requiredChecks(rt.port, base, loaded.state.config.required_checks, ctx.now(), RULES_TTL_MS, () =>
    readRuledChecks(rt.port, base),
  );
  if (required.all.length === 0 || (done.context !== undefined && !required.all.includes(done.context))) return;
  const checks = await rt.port.ciChecks(done.group ?? done.headSha, required.all);
  if (ciVerdict(checks, required.configured) !== "red") return;
  const failing = done.group ? onGroup(checks.failing, done.group, base) : checks.failing;
  const result = await ctx.apply(rt, ref.runId, [checksFailedInput(ref, done.headSha, failing)]);
  if (result.rejections.length)
    logOf(context).info(
      { runId: ref.runId, taskId: ref.taskId, rejections: result.rejections.map((r) => r.reason) },
      "red checks changed nothing",
    );
}

/**
 * `check_run` completed, of an App other than Forge (GitHub Actions' jobs, a CI service's checks): a
 * red one on a task PR's head may call for a fix revision — when its name is required — and any may
 * let a waiting merge through.
 */
export async function onCheckRunDone(ctx: AppContext, context: Context<"check_run">): Promise<void> {
  const run = context.payload.check_run;
  if (context.payload.action !== "completed" || (ctx.slug !== undefined && run.app?.slug === ctx.slug)) return;
  if (typeof run.name !== "string" || run.name.startsWith("forge · ")) return;
  const rt = await ctx.rtOf(context);
  await redChecks(ctx, rt, context, {
    branch: run.check_suite?.head_branch,
    headSha: run.head_sha,
    conclusion: run.conclusion,
    context: run.name.slice(0, 200),
  });
  await flushMerges(ctx, rt);
}
