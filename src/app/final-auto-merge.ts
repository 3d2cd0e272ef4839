/**
 * The run's final pull request set to auto-merge once a person approves it, where the run's config
 * says so (`final_pr.auto_merge`, default off — docs/executor.md#merge-queue-and-auto-merge).
 * Forge never approves it: the approval is a person's with write access, of the PR's current head,
 * read back from GitHub (a late or repeated review webhook, or one whose approval was dismissed
 * since, enables nothing). GraphQL `enablePullRequestAutoMerge` then merges it by the method the
 * base's rules allow, once every other requirement is met — through the base's merge queue where it
 * has one. A PR that already meets every requirement cannot take auto-merge ("clean status"): it
 * is merged at once, or enqueued where the base wants a queue. A refusal (auto-merge not allowed in
 * the repository's settings, a rule) is said on the PR: nothing is silent.
 *
 * The approval is looked for when its review webhook comes, and again — since webhooks come in no
 * order, and not at all to an App that is down — once the run's final PR is recorded (a review can
 * come before: between GitHub opening the PR and the App writing down its number) and on the
 * reconciler's passes, at growing intervals, for `FINAL_PR_WATCH_MS` after the run completed. What
 * became of it (`facts.finalAutoMerge`: enabled, merged, queued, refused, closed) ends the passes' looks.
 */
import { cachedBranchRules, finalMergeMethod, RULES_TTL_MS } from "../github/merge-rules.js";
import type { GitHubPort, PullRequestInfo } from "../github/port.js";
import { WRITE_PERMISSIONS } from "./commands.js";
import type { AppContext } from "./context.js";
import type { RunFacts } from "./run-store.js";
import type { RepoRuntime } from "./runtime.js";

export type FinalOutcome = NonNullable<RunFacts["finalAutoMerge"]>["outcome"];

/** How long after a run completed the reconciler looks for an approval of its final PR that no webhook brought. */
export const FINAL_PR_WATCH_MS = 7 * 24 * 60 * 60_000;
/** The first interval between two such looks; each next one is twice as long, up to `FINAL_PR_LOOK_MAX_MS`. */
export const FINAL_PR_LOOK_MS = 60_000;
export const FINAL_PR_LOOK_MAX_MS = 60 * 60_000;

/** The final PR approved (its review webhook: its number, head and base): auto-merge is enabled when its run asks for it. */
export async function finalPrApproved(
  ctx: AppContext,
  rt: RepoRuntime,
  pr: { number: number; headRef: string; headSha: string; baseRef: string },
): Promise<FinalOutcome | undefined> {
  const runId = await finalPrRun(ctx, rt, pr);
  // Not recorded yet (or no run's): looked at again once it is (`finalPrRecorded`).
  if (!runId) return undefined;
  return settle(ctx, rt, runId, pr.number);
}

/** The run whose final PR this is and whose config turns auto-merge on. */
async function finalPrRun(ctx: AppContext, rt: RepoRuntime, pr: { number: number; headRef: string }): Promise<string | undefined> {
  // (Every run the App knows: the status kept beside each may lag its journal's.)
  for (const runId of (await ctx.knownRuns(rt)).keys()) {
    const loaded = await rt.engine.state(runId);
    if (
      !loaded ||
      loaded.state.journal.status === "running" ||
      loaded.state.facts.finalPr !== pr.number ||
      loaded.state.journal.integrationBranch !== pr.headRef
    )
      continue;
    return loaded.state.config.final_pr.auto_merge ? runId : undefined;
  }
  return undefined;
}

/** The run's final PR was just recorded (an effect's outcome landed): an approval given before is looked for now. */
export function finalPrRecorded(ctx: AppContext, rt: RepoRuntime, runId: string): void {
  const work = lookAtFinalPr(ctx, rt, runId).then(
    () => undefined,
    (e: unknown) => ctx.log.warn({ runId, err: (e as Error).message }, "could not look at the final PR's approval"),
  );
  ctx.inFlight.add(work);
  void work.finally(() => ctx.inFlight.delete(work));
}

/** When each run's final PR is next looked at (per repository, in this process), and the interval to the one after. */
const looks = new WeakMap<RepoRuntime, Map<string, { next: number; gap: number }>>();

/**
 * A reconciler's pass (and the final PR's recording): a completed run with `final_pr.auto_merge`
 * whose final PR is recorded and nothing became of it yet has it looked at — at once the first
 * time, then at intervals doubling from `FINAL_PR_LOOK_MS` to `FINAL_PR_LOOK_MAX_MS`, for
 * `FINAL_PR_WATCH_MS` after the run completed. Anything else costs no call.
 */
export async function lookAtFinalPr(ctx: AppContext, rt: RepoRuntime, runId: string): Promise<FinalOutcome | undefined> {
  const loaded = await rt.engine.state(runId);
  if (!loaded) return undefined;
  const { journal, config, facts } = loaded.state;
  if (journal.status !== "completed" || !config.final_pr.auto_merge || facts.finalPr === undefined || facts.finalAutoMerge)
    return undefined;
  const now = ctx.now();
  if (!(now - Date.parse(journal.completedAt ?? "") < FINAL_PR_WATCH_MS)) return undefined;
  const planned = looks.get(rt) ?? new Map<string, { next: number; gap: number }>();
  looks.set(rt, planned);
  const last = planned.get(runId);
  if (last && now < last.next) return undefined;
  const gap = last ? Math.min(last.gap * 2, FINAL_PR_LOOK_MAX_MS) : FINAL_PR_LOOK_MS;
  planned.set(runId, { next: now + gap, gap });
  return settle(ctx, rt, runId, facts.finalPr);
}

/** Per repository and run, the look at its final PR under way: the next one waits for it (and reads again). */
const settling = new WeakMap<RepoRuntime, Map<string, Promise<unknown>>>();

function settle(ctx: AppContext, rt: RepoRuntime, runId: string, number: number): Promise<FinalOutcome | undefined> {
  const chains = settling.get(rt) ?? new Map<string, Promise<unknown>>();
  settling.set(rt, chains);
  const previous = chains.get(runId) ?? Promise.resolve();
  const next = previous.then(() => settleNow(ctx, rt, runId, number));
  const settled = next.catch(() => undefined);
  chains.set(runId, settled);
  void settled.finally(() => chains.get(runId) === settled && chains.delete(runId));
  return next;
}

/**
 * Read the PR back and act: merged or closed (by a person), already set to auto-merge, or a writer's
 * approval of its head that stands → auto-merge (or the merge, or the queue). What became of it is
 * recorded; an open PR without such an approval is left as it is.
 */
async function settleNow(ctx: AppContext, rt: RepoRuntime, runId: string, number: number): Promise<FinalOutcome | undefined> {
  const loaded = await rt.engine.state(runId);
  if (!loaded) return undefined;
  // Set once: a repeated review webhook (or a look behind it) does not set it again. After a
  // refusal, or a close, a new approval tries again.
  const known = loaded.state.facts.finalAutoMerge;
  if (known?.pr === number && known.outcome !== "refused" && known.outcome !== "closed") return known.outcome;
  const port = rt.port;
  const current = await port.getPullRequest(number);
  if (current.headRef !== loaded.state.journal.integrationBranch) return undefined;
  let outcome: FinalOutcome | undefined;
  if (current.merged) outcome = "merged";
  else if (current.state !== "open") outcome = "closed";
  else if (current.autoMerge) outcome = "enabled";
  else if (await approvedByWriter(port, number, current.headSha)) outcome = await enable(ctx, port, current);
  if (outcome && (known?.pr !== number || known.outcome !== outcome))
    await rt.engine.record(runId, { finalAutoMerge: { pr: number, outcome } }, `final PR #${number} ${outcome}`);
  return outcome;
}

/** Auto-merge on the approved PR — or, with nothing left to wait for, the merge or the queue. */
async function enable(ctx: AppContext, port: GitHubPort, pr: PullRequestInfo): Promise<FinalOutcome> {
  const { rules } = await cachedBranchRules(port, pr.baseRef, ctx.now(), RULES_TTL_MS, () => port.branchRules(pr.baseRef));
  const method = finalMergeMethod(rules) ?? "merge";
  const res = await port.queue.enableAutoMerge(pr.number, method, pr.headSha);
  if (res.kind === "enabled") return "enabled";
  // Nothing left to wait for: merged now (as `gh pr merge --auto` does), or queued.
  if (/\b(clean|unstable) status\b/i.test(res.message)) {
    if (rules.some((r) => r.type === "merge_queue")) {
      // Enqueued already (by an earlier look whose record was lost): nothing to do again.
      if (await port.queue.entry(pr.number)) return "queued";
      const q = await port.queue.enqueue(pr.number, pr.headSha);
      if (q.kind === "queued") return "queued";
      return refusedOn(port, pr.number, pr.headSha, q.message);
    }
    const merged = await port.mergePullRequest(pr.number, { sha: pr.headSha, method });
    if (merged.kind === "merged") return "merged";
    return refusedOn(port, pr.number, pr.headSha, "message" in merged ? merged.message : "the head moved");
  }
  return refusedOn(port, pr.number, pr.headSha, res.message);
}

/** At most this many approvers are asked for their permission. */
const APPROVERS_CHECKED = 5;

/** Whether a person with write access approved `head` and that approval stands (their latest review of it). */
async function approvedByWriter(port: GitHubPort, number: number, head: string): Promise<boolean> {
  const latest = new Map<string, string>();
  for (const r of await port.listReviews(number))
    if (!r.bot && r.login && r.commitId === head && r.state !== "COMMENTED") latest.set(r.login, r.state);
  const approvers = [...latest].filter(([, state]) => state === "APPROVED").map(([login]) => login);
  for (const login of approvers.slice(-APPROVERS_CHECKED)) if (WRITE_PERMISSIONS.has(await port.permission(login))) return true;
  return false;
}

async function refusedOn(port: GitHubPort, number: number, head: string, message: string): Promise<"refused"> {
  const text = message.replace(/\s+/g, " ").slice(0, 500);
  await port.createComment(
    number,
    `Forge could not set this pull request to merge automatically (\`final_pr.auto_merge\`): GitHub answered "${text}". A person merges it, or fixes what GitHub names (for auto-merge, Settings → General → "Allow auto-merge") and approves it again (at ${head.slice(0, 7)}).`,
  );
  return "refused";
}
