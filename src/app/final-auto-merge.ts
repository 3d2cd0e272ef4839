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
 */
import { cachedBranchRules, finalMergeMethod, RULES_TTL_MS } from "../github/merge-rules.js";
import type { GitHubPort } from "../github/port.js";
import { WRITE_PERMISSIONS } from "./commands.js";
import type { AppContext } from "./context.js";
import type { RepoRuntime } from "./runtime.js";

/** The final PR approved (its number, head and base): auto-merge is enabled when its run asks for it. */
export async function finalPrApproved(
  ctx: AppContext,
  rt: RepoRuntime,
  pr: { number: number; headRef: string; headSha: string; baseRef: string },
): Promise<"enabled" | "merged" | "queued" | "refused" | undefined> {
  const run = await finalPrRun(ctx, rt, pr);
  if (!run) return undefined;
  const port = rt.port;
  // Read back: the PR's head now, and a writer's approval of it that stands.
  const current = await port.getPullRequest(pr.number);
  if (current.state !== "open" || current.merged || current.headRef !== pr.headRef) return undefined;
  if (!(await approvedByWriter(port, pr.number, current.headSha))) return undefined;
  const { rules } = await cachedBranchRules(port, pr.baseRef, ctx.now(), RULES_TTL_MS, () => port.branchRules(pr.baseRef));
  const method = finalMergeMethod(rules) ?? "merge";
  const res = await port.queue.enableAutoMerge(pr.number, method, current.headSha);
  if (res.kind === "enabled") return "enabled";
  // Nothing left to wait for: merged now (as `gh pr merge --auto` does), or queued.
  if (/\b(clean|unstable) status\b/i.test(res.message)) {
    if (rules.some((r) => r.type === "merge_queue")) {
      const q = await port.queue.enqueue(pr.number, current.headSha);
      if (q.kind === "queued") return "queued";
      return refusedOn(port, pr.number, current.headSha, q.message);
    }
    const merged = await port.mergePullRequest(pr.number, { sha: current.headSha, method });
    if (merged.kind === "merged") return "merged";
    return refusedOn(port, pr.number, current.headSha, "message" in merged ? merged.message : "the head moved");
  }
  return refusedOn(port, pr.number, current.headSha, res.message);
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
