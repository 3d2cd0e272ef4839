/**
 * The job's small window on GitHub's API — a port, so `main` is tested against a fake, nock, or
 * the local GitHub (test/sim) without knowing which. `createOctokitGitHub` is the only Octokit user.
 * `JobGitHub` is not the App's `GitHubPort` (src/github/port.ts); where they overlap they take
 * arguments in the same order (`readFile(path, ref)`).
 */
import { Octokit } from "@octokit/rest";
import { retry } from "@octokit/plugin-retry";

export interface PullRef {
  number: number;
  /** GraphQL node id, for `markPullRequestReadyForReview`. */
  nodeId: string;
  url: string;
  draft: boolean;
}

export interface JobGitHub {
  /** A file's text at a ref (the default branch when `ref` is ""), or undefined when the ref or the file does not exist. */
  readFile(path: string, ref: string): Promise<string | undefined>;
  /** The open PR from `head` into `base`, if any. */
  findOpenPull(head: string, base: string): Promise<PullRef | undefined>;
  /** Opens a PR; rejects with NoCommitsError when the head has nothing over the base. */
  createPull(p: { head: string; base: string; title: string; body: string; draft: boolean }): Promise<PullRef>;
  updatePull(number: number, p: { title?: string; body?: string }): Promise<void>;
  /** Adds labels to a PR (GitHub creates labels that do not exist yet). */
  addLabels(number: number, labels: string[]): Promise<void>;
  markReadyForReview(pull: PullRef): Promise<void>;
  /**
   * The attempt's live check run (task/live-check.ts): created in progress, then updated. Needs the
   * workflow's `checks: write`; absent from ports that cannot.
   */
  createCheckRun?(c: { name: string; headSha: string; title: string; summary: string; externalId: string }): Promise<number>;
  updateCheckRun?(id: number, c: { title: string; summary: string; conclusion?: "success" | "failure" | "neutral" }): Promise<void>;
  /** A review of a PR with its inline comments, or undefined when there is no such review (a revision's feedback). */
  review?(pr: number, reviewId: number): Promise<ReviewFacts | undefined>;
  /** Replies in the thread of a review comment. */
  replyToReviewComment?(pr: number, commentId: number, body: string): Promise<void>;
  /** Asks these people to review the PR again. */
  requestReviewers?(pr: number, logins: string[]): Promise<void>;
  /** Comments on an issue or PR updated at or after `since` (ISO), with their authors as GitHub names them (steering). */
  issueComments?(issue: number, since: string): Promise<Array<{ id: number; author: string; body: string }>>;
}

/** A review as a revision reads it: untrusted text, bounded and sanitized by the caller. */
export interface ReviewFacts {
  id: number;
  author: string;
  state: string;
  body: string;
  comments: Array<{ id: number; path: string; line: number | null; diffHunk: string; body: string }>;
}

/** GitHub refuses a PR whose head has no commit that the base lacks (422 "No commits between …"). */
export class NoCommitsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NoCommitsError";
  }
}

/** An API call that failed, with the HTTP status kept. */
export class GitHubApiError extends Error {
  constructor(
    message: string,
    readonly status: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "GitHubApiError";
  }
}

interface RequestErrorLike {
  status?: number;
  message?: string;
  response?: { data?: { message?: string; errors?: Array<{ message?: string; code?: string; field?: string }> } };
}

function statusOf(err: unknown): number | undefined {
  return typeof (err as RequestErrorLike)?.status === "number" ? (err as RequestErrorLike).status : undefined;
}

function detail(err: unknown): string {
  const e = err as RequestErrorLike;
  const errors = e.response?.data?.errors?.map((x) => x.message ?? `${x.field ?? ""} ${x.code ?? ""}`.trim()).filter(Boolean) ?? [];
  return [e.response?.data?.message ?? e.message ?? String(err), ...errors].join(": ");
}

export interface OctokitGitHubOptions {
  token: string;
  /**
   * GITHUB_API_URL: https://api.github.com, or https://host/api/v3 for GHES and the local GitHub
   * (Octokit's GraphQL client turns a /api/v3 base into /api/graphql by itself).
   */
  baseUrl: string;
  owner: string;
  repo: string;
  /** Retries of 5xx and secondary limits; 0 in tests. */
  retries?: number;
  userAgent?: string;
}

const RetryingOctokit = Octokit.plugin(retry);

type JobOctokit = InstanceType<typeof RetryingOctokit>;

/** A revision's reads and replies, and the attempt's live check run. */
function reviewsAndChecks(
  octokit: JobOctokit,
  owner: string,
  repo: string,
): Pick<JobGitHub, "review" | "replyToReviewComment" | "requestReviewers" | "createCheckRun" | "updateCheckRun"> {
  return {
    async review(pr, reviewId) {
      try {
        const [{ data: r }, comments] = await Promise.all([
          octokit.rest.pulls.getReview({ owner, repo, pull_number: pr, review_id: reviewId }),
          // A review's own comments (docs.github.com/rest/pulls/reviews#list-comments-for-a-pull-request-review), 100 at most.
          octokit.rest.pulls.listCommentsForReview({ owner, repo, pull_number: pr, review_id: reviewId, per_page: 100 }),
        ]);
        return {
          id: r.id,
          author: r.user?.login ?? "",
          state: r.state,
          body: r.body ?? "",
          comments: comments.data.map((c) => ({
            id: c.id,
            path: c.path,
            line: (c as { line?: number | null }).line ?? c.position ?? null,
            diffHunk: c.diff_hunk,
            body: c.body,
          })),
        };
      } catch (err) {
        if (statusOf(err) === 404) return undefined;
        throw new GitHubApiError(`reading review ${reviewId} of #${pr} failed: ${detail(err)}`, statusOf(err), { cause: err });
      }
    },

    async replyToReviewComment(pr, commentId, body) {
      try {
        await octokit.rest.pulls.createReplyForReviewComment({ owner, repo, pull_number: pr, comment_id: commentId, body });
      } catch (err) {
        throw new GitHubApiError(`replying to review comment ${commentId} failed: ${detail(err)}`, statusOf(err), { cause: err });
      }
    },

    async requestReviewers(pr, logins) {
      try {
        await octokit.rest.pulls.requestReviewers({ owner, repo, pull_number: pr, reviewers: logins });
      } catch (err) {
        throw new GitHubApiError(`requesting reviews of #${pr} failed: ${detail(err)}`, statusOf(err), { cause: err });
      }
    },

    async createCheckRun(c) {
      try {
        const { data } = await octokit.rest.checks.create({
          owner,
          repo,
          name: c.name,
          head_sha: c.headSha,
          status: "in_progress",
          external_id: c.externalId,
          output: { title: c.title, summary: c.summary },
        });
        return data.id;
      } catch (err) {
        throw new GitHubApiError(`creating the live check run failed: ${detail(err)}`, statusOf(err), { cause: err });
      }
    },

    async updateCheckRun(id, c) {
      try {
        await octokit.rest.checks.update({
          owner,
          repo,
          check_run_id: id,
          output: { title: c.title, summary: c.summary },
          ...(c.conclusion ? { status: "completed" as const, conclusion: c.conclusion, completed_at: new Date().toISOString() } : {}),
        });
      } catch (err) {
        throw new GitHubApiError(`updating the live check run failed: ${detail(err)}`, statusOf(err), { cause: err });
      }
    },
  };
}

export function createOctokitGitHub(options: OctokitGitHubOptions): JobGitHub {
  const octokit = new RetryingOctokit({
    auth: options.token,
    baseUrl: options.baseUrl.replace(/\/$/, ""),
    userAgent: options.userAgent ?? "forge-action",
    // plugin-retry retries 5xx (never 400/401/403/404/410/422/451), waiting retryCount² seconds.
    // 501 is added: "not implemented" (GHES without a feature, the local GitHub) never heals, and
    // three retries of it cost 14 s. Setting `request.retries` would make the plugin retry every
    // error, 422 included, so only its own options are used.
    retry: { enabled: (options.retries ?? 2) > 0, retries: options.retries ?? 2, doNotRetry: [400, 401, 403, 404, 410, 422, 451, 501] },
    // Errors are reported by the callers, with context; Octokit's own request log would only repeat them.
    log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
  });
  const { owner, repo } = options;

  return {
    async issueComments(issue, since) {
      try {
        const { data } = await octokit.rest.issues.listComments({ owner, repo, issue_number: issue, since, per_page: 100 });
        return data.map((c) => ({ id: c.id, author: c.user?.login ?? "", body: c.body ?? "" }));
      } catch (err) {
        throw new GitHubApiError(`reading the comments of #${issue} failed: ${detail(err)}`, statusOf(err), { cause: err });
      }
    },

    async readFile(path, ref) {
      try {
        // No ref: the default branch.
        const { data } = await octokit.rest.repos.getContent({ owner, repo, path, ...(ref ? { ref } : {}) });
        if (Array.isArray(data) || data.type !== "file") return undefined;
        // Files over 1 MB come back with encoding "none" and no content
        // (docs.github.com/rest/repos/contents#get-repository-content); the blob API serves up to 100 MB.
        if (data.encoding === "base64" && typeof data.content === "string" && (data.content !== "" || data.size === 0)) {
          return Buffer.from(data.content, "base64").toString("utf8");
        }
        const { data: blob } = await octokit.rest.git.getBlob({ owner, repo, file_sha: data.sha });
        return Buffer.from(blob.content, "base64").toString("utf8");
      } catch (err) {
        if (statusOf(err) === 404) return undefined;
        throw new GitHubApiError(`reading ${path} at ${ref} failed: ${detail(err)}`, statusOf(err), { cause: err });
      }
    },

    async findOpenPull(head, base) {
      try {
        // `head` must be "owner:branch" for the filter to apply (docs.github.com/rest/pulls/pulls#list-pull-requests).
        const { data } = await octokit.rest.pulls.list({ owner, repo, head: `${owner}:${head}`, base, state: "open", per_page: 10 });
        const pr = data.find((p) => p.head.ref === head && p.base.ref === base);
        return pr ? { number: pr.number, nodeId: pr.node_id, url: pr.html_url, draft: pr.draft ?? false } : undefined;
      } catch (err) {
        throw new GitHubApiError(`listing pull requests for ${head} failed: ${detail(err)}`, statusOf(err), { cause: err });
      }
    },

    async createPull(p) {
      try {
        const { data } = await octokit.rest.pulls.create({
          owner,
          repo,
          head: p.head,
          base: p.base,
          title: p.title,
          body: p.body,
          draft: p.draft,
          maintainer_can_modify: true,
        });
        return { number: data.number, nodeId: data.node_id, url: data.html_url, draft: data.draft ?? p.draft };
      } catch (err) {
        const text = detail(err);
        if (statusOf(err) === 422 && /no commits between/i.test(text)) throw new NoCommitsError(text);
        throw new GitHubApiError(`opening the pull request ${p.head} → ${p.base} failed: ${text}`, statusOf(err), { cause: err });
      }
    },

    async updatePull(number, p) {
      try {
        await octokit.rest.pulls.update({ owner, repo, pull_number: number, ...p });
      } catch (err) {
        throw new GitHubApiError(`updating pull request #${number} failed: ${detail(err)}`, statusOf(err), { cause: err });
      }
    },

    async addLabels(number, labels) {
      try {
        // Labels of a PR live on its issue; `pull-requests: write` is enough for a PR's issue
        // endpoints (docs.github.com/rest/issues/labels#add-labels-to-an-issue).
        await octokit.rest.issues.addLabels({ owner, repo, issue_number: number, labels });
      } catch (err) {
        throw new GitHubApiError(`labelling pull request #${number} failed: ${detail(err)}`, statusOf(err), { cause: err });
      }
    },

    ...reviewsAndChecks(octokit, owner, repo),

    async markReadyForReview(pull) {
      if (!pull.draft) return;
      // REST cannot undraft a PR (PATCH /pulls/{n} has no `draft` field); GraphQL's
      // markPullRequestReadyForReview can (docs.github.com/graphql/reference/mutations#markpullrequestreadyforreview).
      try {
        await octokit.graphql(
          `mutation($id: ID!) { markPullRequestReadyForReview(input: { pullRequestId: $id }) { pullRequest { isDraft } } }`,
          { id: pull.nodeId },
        );
      } catch (err) {
        throw new GitHubApiError(`marking pull request #${pull.number} ready for review failed: ${detail(err)}`, statusOf(err), {
          cause: err,
        });
      }
    },
  };
}
