/**
 * Octokit's REST answers in the port's types (pull requests, reviews, workflow runs, the body of a
 * check run, a refused merge), and its request errors as the port's `GitHubError`s: the helpers of
 * `octokit-port.ts`.
 */
import {
  GitHubError,
  type CheckRunFields,
  type EndedJobs,
  type PullMergeResult,
  type PullRequestInfo,
  type ReviewInfo,
  type WorkflowRunInfo,
} from "./port.js";

interface RequestErrorLike {
  status?: number;
  message?: string;
  response?: { data?: { message?: string } };
}

export function statusOf(e: unknown): number | undefined {
  return (e as RequestErrorLike)?.status;
}

/**
 * How long GitHub asked the installation to wait, when `e` (an Octokit error, or the port's error
 * around one) is a rate-limit answer — docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api:
 * "If the retry-after response header is present, you should not retry your request until after
 * that many seconds has elapsed. If the x-ratelimit-remaining header is 0, you should not retry your
 * request until after the time, in UTC epoch seconds, specified by the x-ratelimit-reset header.
 * Otherwise, wait for at least one minute before retrying." Undefined for any other answer.
 */
export function rateLimitWaitMs(e: unknown, now: number): number | undefined {
  const err = (e instanceof GitHubError && e.cause ? e.cause : e) as RequestErrorLike & {
    response?: { headers?: Record<string, string | number | undefined> };
  };
  if (err?.status !== 403 && err?.status !== 429) return undefined;
  const h = err.response?.headers ?? {};
  const after = Number(h["retry-after"]);
  if (h["retry-after"] !== undefined && Number.isFinite(after)) return Math.max(0, after * 1000);
  if (String(h["x-ratelimit-remaining"]) === "0") {
    const reset = Number(h["x-ratelimit-reset"]);
    if (Number.isFinite(reset)) return Math.max(0, reset * 1000 - now) + 1000;
  }
  const message = err.response?.data?.message ?? err.message ?? "";
  if (err.status === 429 || /secondary rate limit/i.test(message)) return 60_000;
  return undefined;
}

export function wrap(operation: string, e: unknown): GitHubError {
  if (e instanceof GitHubError) return e;
  const status = statusOf(e) ?? 0;
  const message = (e as RequestErrorLike)?.response?.data?.message ?? (e as Error)?.message ?? String(e);
  return new GitHubError(`${operation}: ${status} ${message}`, status, operation, { cause: e });
}

export function pull(data: {
  number: number;
  state: string;
  merged?: boolean | null;
  merged_at?: string | null;
  merge_commit_sha?: string | null;
  head: { ref: string; sha: string; repo?: { id: number } | null };
  base: { ref: string; repo?: { id: number } | null };
  draft?: boolean;
  mergeable?: boolean | null;
  auto_merge?: unknown;
}): PullRequestInfo {
  const merged = data.merged ?? data.merged_at != null;
  return {
    number: data.number,
    state: data.state === "open" ? "open" : "closed",
    merged,
    ...(merged && data.merge_commit_sha ? { mergeSha: data.merge_commit_sha } : {}),
    headRef: data.head.ref,
    headSha: data.head.sha,
    baseRef: data.base.ref,
    draft: data.draft ?? false,
    // GitHub gives a null head repository when the fork was deleted: not this repository either.
    fromFork: !data.head.repo || (data.base.repo != null && data.head.repo.id !== data.base.repo.id),
    // Only a pull request read alone says (a list does not): null while GitHub computes it.
    ...("mergeable" in data ? { mergeable: data.mergeable ?? null } : {}),
    ...("auto_merge" in data ? { autoMerge: data.auto_merge != null } : {}),
  };
}

/**
 * A merge GitHub refused: 405, not mergeable (required checks, conflicts, draft) — or "Base branch
 * was modified" when a concurrent merge moved the base (a race, to be tried again); 409, `sha` is not
 * the head any more. Any other error is thrown as a GitHubError.
 */
export function mergeRefusal(e: unknown): PullMergeResult {
  if (statusOf(e) === 405) {
    const message = wrap("pulls.merge", e).message;
    return /base branch was modified/i.test(message) ? { kind: "base_moved", message } : { kind: "not_mergeable", message };
  }
  if (statusOf(e) === 409) return { kind: "head_moved" };
  throw wrap("pulls.merge", e);
}

export function reviewInfo(r: {
  id: number;
  user: { login: string; type?: string } | null;
  state: string;
  commit_id: string | null;
  body: string;
}): ReviewInfo {
  return { id: r.id, login: r.user?.login ?? "", bot: r.user?.type === "Bot", state: r.state, commitId: r.commit_id ?? "", body: r.body };
}

export function runInfo(r: {
  id: number;
  head_branch: string | null;
  status: string | null;
  conclusion: string | null;
  created_at: string;
  event: string;
  path?: string | null;
  head_repository?: { id: number } | null;
}): WorkflowRunInfo {
  return {
    id: r.id,
    headBranch: r.head_branch ?? "",
    status: r.status ?? "",
    conclusion: r.conclusion ?? null,
    createdAt: r.created_at,
    event: r.event,
    path: r.path ?? undefined,
    headRepositoryId: r.head_repository?.id ?? null,
  };
}

export function checkBody(f: Partial<CheckRunFields>) {
  return {
    ...(f.name !== undefined ? { name: f.name } : {}),
    ...(f.headSha !== undefined ? { head_sha: f.headSha } : {}),
    ...(f.status !== undefined ? { status: f.status } : {}),
    ...(f.conclusion !== undefined ? { conclusion: f.conclusion } : {}),
    ...(f.detailsUrl !== undefined ? { details_url: f.detailsUrl } : {}),
    ...(f.externalId !== undefined ? { external_id: f.externalId } : {}),
    ...(f.actions !== undefined ? { actions: f.actions } : {}),
    ...(f.title !== undefined || f.summary !== undefined
      ? {
          output: {
            title: f.title ?? "",
            summary: f.summary ?? "",
            ...(f.text !== undefined ? { text: f.text } : {}),
            ...(f.annotations !== undefined
              ? {
                  annotations: f.annotations.map((a) => ({
                    path: a.path,
                    start_line: a.startLine,
                    end_line: a.endLine,
                    annotation_level: a.level,
                    message: a.message,
                    ...(a.title ? { title: a.title } : {}),
                  })),
                }
              : {}),
          },
        }
      : {}),
    ...(f.status === "completed" ? { completed_at: new Date().toISOString() } : {}),
  };
}

/** A job as `GET …/actions/runs/{id}/jobs` lists it: what endedJobsOf reads. */
export interface ListedJob {
  name: string;
  status: string;
  conclusion: string | null;
  html_url: string | null;
  steps?: { name: string; status: string; conclusion: string | null }[];
}

/** What the jobs of a finished run left: whether its runner went away, and the first job that did not succeed (its failed step, its page). */
export function endedJobsOf(jobs: readonly ListedJob[]): Omit<EndedJobs, "errors"> {
  // GitHub fails the job of a vanished runner after a while, leaving the step it died in unfinished.
  const runnerLost = jobs.some((j) => j.status === "completed" && (j.steps ?? []).some((step) => step.status !== "completed"));
  const job = jobs.find((j) => j.conclusion !== null && j.conclusion !== "success" && j.conclusion !== "skipped");
  if (!job) return { runnerLost };
  const step = (job.steps ?? []).find((x) => x.conclusion === "failure" || x.conclusion === "timed_out" || x.conclusion === "cancelled");
  return {
    runnerLost,
    failed: { name: job.name, ...(step ? { step: step.name } : {}), ...(job.html_url ? { htmlUrl: job.html_url } : {}) },
  };
}
