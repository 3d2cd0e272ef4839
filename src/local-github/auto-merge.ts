// Auto-merge (docs.github.com/pull-requests/collaborating-with-pull-requests/incorporating-changes-from-a-pull-request/automatically-merging-a-pull-request;
// GraphQL `enablePullRequestAutoMerge` / `disablePullRequestAutoMerge`, docs.github.com/graphql/reference/mutations):
// - "If you enable auto-merge for a pull request, the pull request will merge automatically when all
//   required reviews are met and all required status checks have passed." Enabled only where the
//   repository allows it (`allow_auto_merge`, repo-settings.ts) — else "Auto merge is not allowed for
//   this repository" — and only on a pull request that cannot merge yet: one GitHub already reports
//   `clean` or `unstable` is refused "Pull request Pull request is in clean status" / "… unstable
//   status" (GraphQL errors as clients meet them: github.com/peter-evans/enable-pull-request-automerge/issues/343
//   and /1118; the GitHub CLI merges such a pull request directly instead).
// - Enabling sends `pull_request.auto_merge_enabled`, disabling `auto_merge_disabled`; the pull
//   request's `auto_merge` (REST) and `autoMergeRequest` (GraphQL) show it.
// - Where the base requires a merge queue, auto-merge adds the pull request to the queue once it meets
//   the branch's other requirements ("merge when ready", merge-queue.ts).
// The local GitHub tries again after each event that may unblock it: a check run completed, a status,
// a review, a push.
import { HttpError } from "./auth.js";
import type { ActContext, SimCore } from "./domain/index.js";
import { enqueue, queueEntry, queueRuleFor } from "./merge-queue.js";
import { mergeStateOf } from "./mergeability.js";
import { mergePullRequest } from "./merging.js";
import { repoSettingsOf } from "./repo-settings.js";
import type { Issue, Repo } from "./state.js";
import { now } from "./state.js";
import type { EmittedEvent } from "./webhooks.js";

const DOC = "https://docs.github.com/graphql/reference/mutations#enablepullrequestautomerge";
const WAKERS = new Set(["check_run", "check_suite", "status", "pull_request_review", "push"]);
const watching = new WeakSet<SimCore>();

function watch(core: SimCore): void {
  if (watching.has(core)) return;
  watching.add(core);
  core.bus.onEvent((e: EmittedEvent) => {
    if (!e.repo || !WAKERS.has(e.event)) return;
    const repo = e.repo;
    for (const issue of core.state.issuesOf(repo.id))
      if (issue.pull?.autoMerge && issue.state === "open" && !issue.pull.merged)
        core.background("auto-merge", () => attempt(core, repo, issue));
  });
}

function emitAutoMerge(
  core: SimCore,
  repo: Repo,
  issue: Issue,
  action: string,
  who: ActContext,
  extra: Record<string, unknown>,
): Promise<void> {
  return core
    .pullPayload(repo, issue)
    .then((pull_request) =>
      core.bus.emit(
        "pull_request",
        action,
        { number: issue.number, pull_request, ...extra, repository: core.model.repo(repo), sender: core.model.user(who.actor) },
        { repo, causedByWorkflowRun: who.token?.workflowRunId },
      ),
    );
}

/** Merges (or enqueues) when the pull request now can; otherwise leaves it waiting. */
async function attempt(core: SimCore, repo: Repo, issue: Issue): Promise<void> {
  const p = issue.pull!;
  const am = p.autoMerge;
  if (!am || p.merged || issue.state !== "open" || queueEntry(core, repo, issue)) return;
  try {
    if (queueRuleFor(repo, p.baseRef)) await enqueue(core, repo, issue, am.who, { doc: DOC });
    else
      await mergePullRequest(core, repo, issue, am.who, {
        doc: DOC,
        method: am.method,
        ...(am.commitTitle !== undefined ? { commitTitle: am.commitTitle } : {}),
        ...(am.commitMessage !== undefined ? { commitMessage: am.commitMessage } : {}),
      });
  } catch (e) {
    if (!(e instanceof HttpError)) throw e;
  }
}

export async function enableAutoMerge(
  core: SimCore,
  repo: Repo,
  issue: Issue,
  who: ActContext,
  o: { method: string; commitTitle?: string; commitMessage?: string; expectedHeadOid?: string },
): Promise<void> {
  const p = issue.pull!;
  if (!repoSettingsOf(repo).allowAutoMerge) throw new HttpError(422, "Pull request Auto merge is not allowed for this repository", DOC);
  if (p.merged || issue.state !== "open") throw new HttpError(422, "Pull request is not open", DOC);
  if (o.expectedHeadOid && o.expectedHeadOid !== p.headSha)
    throw new HttpError(422, "Pull request head has changed: expected head oid did not match", DOC);
  const queued = !!queueRuleFor(repo, p.baseRef);
  const state = queued ? "queued" : await mergeStateOf(core, repo, issue, await core.mergeability.read(repo, issue));
  if (state === "clean" || state === "unstable") throw new HttpError(422, `Pull request Pull request is in ${state} status`, DOC);
  watch(core);
  p.autoMerge = { who, method: o.method, commitTitle: o.commitTitle, commitMessage: o.commitMessage, enabledAt: now() };
  issue.updatedAt = now();
  await emitAutoMerge(core, repo, issue, "auto_merge_enabled", who, {});
  core.background("auto-merge", () => attempt(core, repo, issue));
}

export async function disableAutoMerge(core: SimCore, repo: Repo, issue: Issue, who: ActContext): Promise<void> {
  const p = issue.pull!;
  if (!p.autoMerge) return;
  delete p.autoMerge;
  issue.updatedAt = now();
  // The payload's `reason` is required and free text; GitHub's wording is not published.
  await emitAutoMerge(core, repo, issue, "auto_merge_disabled", who, { reason: `Auto-merge disabled by ${who.actor.login}` });
}
