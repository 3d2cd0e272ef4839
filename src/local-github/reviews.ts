/**
 * Pull request reviews (docs.github.com/rest/pulls/reviews) and review comments
 * (docs.github.com/rest/pulls/comments): a review with inline comments on lines of the PR's head,
 * its comments listed, replies in a comment's thread, and review requests. `diff_hunk` is the file's
 * lines up to the commented one at the PR's head (GitHub's is the hunk of the PR's diff that holds
 * the line; both end with the commented line, which is what a reader of a thread needs).
 */
import { enforceActionsMayCreatePulls } from "./actions-permissions.js";
import { HttpError } from "./auth.js";
import * as git from "./git/index.js";
import type { Handler, RestCtx } from "./rest/index.js";
import type { Issue, Repo, Review, ReviewComment } from "./state.js";
import { now } from "./state.js";

type O = Record<string, unknown>;

function repoOf(ctx: RestCtx): Repo {
  if (!ctx.repo) throw new HttpError(404, "Not Found", ctx.doc);
  return ctx.repo;
}
function pullOf(ctx: RestCtx): Issue {
  const i = ctx.core.state.issue(repoOf(ctx).id, Number(ctx.params.pull_number));
  if (!i?.pull) throw new HttpError(404, "Not Found", ctx.doc);
  return i;
}
/** 422 as this operation answers it: `errors` is a list of strings for reviews (validation-error-simple), absent elsewhere. */
const invalid = (ctx: RestCtx, message: string, errors: string[]) => new HttpError(422, message, ctx.doc, errors.length ? { errors } : {});
const str = (b: O | undefined, key: string) => (typeof b?.[key] === "string" ? (b[key] as string) : undefined);

/** The hunk shown above a comment: up to four lines of the file ending at `line`, as added lines. */
function hunkOf(text: string, line: number): string {
  const lines = text.split("\n");
  const from = Math.max(1, line - 3);
  return [`@@ -${from - 1},0 +${from},${line - from + 1} @@`, ...lines.slice(from - 1, line).map((l) => `+${l}`)].join("\n");
}

function commentJson(ctx: RestCtx, repo: Repo, c: ReviewComment): O {
  const api = `${ctx.core.model.api}/repos/${repo.owner.login}/${repo.name}`;
  const html = `${ctx.core.model.web()}/${repo.owner.login}/${repo.name}/pull/${c.number}#discussion_r${c.id}`;
  return {
    url: `${api}/pulls/comments/${c.id}`,
    id: c.id,
    node_id: Buffer.from(`PullRequestReviewComment:${c.id}`).toString("base64"),
    pull_request_review_id: c.reviewId,
    diff_hunk: c.diffHunk,
    path: c.path,
    position: c.line,
    original_position: c.line,
    commit_id: c.commitId,
    original_commit_id: c.commitId,
    ...(c.inReplyTo !== undefined ? { in_reply_to_id: c.inReplyTo } : {}),
    user: ctx.core.model.user(c.user),
    body: c.body,
    created_at: c.createdAt,
    updated_at: c.createdAt,
    html_url: html,
    pull_request_url: `${api}/pulls/${c.number}`,
    author_association: ctx.core.model.association(repo, c.user),
    _links: { self: { href: `${api}/pulls/comments/${c.id}` }, html: { href: html }, pull_request: { href: `${api}/pulls/${c.number}` } },
    line: c.line,
    original_line: c.line,
    side: c.side,
    subject_type: "line",
  };
}

/** The inline comments of a new review, checked against the PR's head: 422 as GitHub answers for a path or line it cannot place. */
async function reviewComments(ctx: RestCtx, repo: Repo, issue: Issue, reviewId: number, commitId: string): Promise<ReviewComment[]> {
  const raw = ctx.body?.comments;
  if (raw === undefined) return [];
  const out: ReviewComment[] = [];
  for (const c of raw as O[]) {
    const path = str(c, "path") ?? "";
    const line = typeof c.line === "number" ? c.line : typeof c.position === "number" ? c.position : 0;
    const body = str(c, "body") ?? "";
    const entry = await git.entryAt(repo.gitDir, commitId, path).catch(() => undefined);
    const blob = entry?.type === "blob" ? (await git.readBlob(repo.gitDir, entry.sha)).toString("utf8") : undefined;
    if (blob === undefined) throw invalid(ctx, "Unprocessable Entity", ["Path could not be resolved"]);
    if (line < 1 || line > blob.split("\n").length) throw invalid(ctx, "Unprocessable Entity", ["Line could not be resolved"]);
    out.push({
      id: ctx.core.state.id(),
      repoId: repo.id,
      number: issue.number,
      reviewId,
      user: ctx.actor,
      body,
      path,
      line,
      side: str(c, "side") === "LEFT" ? "LEFT" : "RIGHT",
      commitId,
      diffHunk: hunkOf(blob, line),
      createdAt: now(),
    });
  }
  return out;
}

export const reviewHandlers: Record<string, Handler> = {
  // docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request: without `event` the review stays PENDING.
  "pulls/create-review": async (ctx) => {
    const repo = repoOf(ctx);
    const issue = pullOf(ctx);
    const b = ctx.body ?? {};
    const event = str(b, "event");
    if (event === "APPROVE") enforceActionsMayCreatePulls(ctx, repo);
    if ((event === "APPROVE" || event === "REQUEST_CHANGES") && issue.user.id === ctx.actor.id) {
      throw invalid(ctx, "Unprocessable Entity", [
        `Can not ${event === "APPROVE" ? "approve" : "request changes on"} your own pull request`,
      ]);
    }
    if ((event === "REQUEST_CHANGES" || event === "COMMENT") && !str(b, "body") && !Array.isArray(b.comments))
      throw invalid(ctx, "Unprocessable Entity", ["Body is required"]);
    const review: Review = {
      id: ctx.core.state.id(),
      repoId: repo.id,
      number: issue.number,
      user: ctx.actor,
      body: str(b, "body") ?? "",
      state:
        event === "APPROVE"
          ? "APPROVED"
          : event === "REQUEST_CHANGES"
            ? "CHANGES_REQUESTED"
            : event === "COMMENT"
              ? "COMMENTED"
              : ("PENDING" as "COMMENTED"),
      commitId: str(b, "commit_id") ?? issue.pull!.headSha,
      submittedAt: now(),
    };
    const comments = await reviewComments(ctx, repo, issue, review.id, review.commitId);
    ctx.core.state.reviews.push(review);
    ctx.core.state.reviewComments.push(...comments);
    // A review given is a request answered.
    const p = issue.pull!;
    if (event && p.requestedReviewers) p.requestedReviewers = p.requestedReviewers.filter((l) => l !== ctx.actor.login);
    const json = ctx.core.model.review(repo, review);
    if (event) {
      ctx.core.bus.emit(
        "pull_request_review",
        "submitted",
        {
          review: { ...json, state: review.state.toLowerCase() },
          pull_request: ctx.core.model.pull(repo, issue, { full: false }),
          repository: ctx.core.model.repo(repo),
          sender: ctx.core.model.user(ctx.actor),
        },
        { repo, causedByWorkflowRun: ctx.token?.workflowRunId },
      );
    } else delete json.submitted_at;
    return { status: 200, body: json };
  },
  // docs.github.com/rest/pulls/reviews#dismiss-a-review-for-a-pull-request: an approval or a request
  // for changes becomes DISMISSED (it no longer counts), with `pull_request_review` `dismissed`.
  "pulls/dismiss-review": async (ctx) => {
    const repo = repoOf(ctx);
    const issue = pullOf(ctx);
    const review = ctx.core.state.reviews.find(
      (x) => x.repoId === repo.id && x.number === issue.number && x.id === Number(ctx.params.review_id),
    );
    if (!review) throw new HttpError(404, "Not Found", ctx.doc);
    const message = str(ctx.body ?? {}, "message");
    if (!message) throw invalid(ctx, "Unprocessable Entity", ["message is required"]);
    if (review.state !== "APPROVED" && review.state !== "CHANGES_REQUESTED")
      throw invalid(ctx, "Unprocessable Entity", [`Can not dismiss a ${review.state.toLowerCase()} pull request review`]);
    review.state = "DISMISSED";
    const json = ctx.core.model.review(repo, review);
    ctx.core.bus.emit(
      "pull_request_review",
      "dismissed",
      {
        review: { ...json, state: "dismissed" },
        pull_request: ctx.core.model.pull(repo, issue, { full: false }),
        repository: ctx.core.model.repo(repo),
        sender: ctx.core.model.user(ctx.actor),
      },
      { repo, causedByWorkflowRun: ctx.token?.workflowRunId },
    );
    return { status: 200, body: json };
  },
  "pulls/list-reviews": async (ctx) => {
    const repo = repoOf(ctx);
    const issue = pullOf(ctx);
    const all = ctx.core.state.reviews.filter((r) => r.repoId === repo.id && r.number === issue.number);
    return { status: 200, body: ctx.page(all.map((r) => ctx.core.model.review(repo, r))) };
  },
  "pulls/get-review": async (ctx) => {
    const repo = repoOf(ctx);
    const issue = pullOf(ctx);
    const r = ctx.core.state.reviews.find(
      (x) => x.repoId === repo.id && x.number === issue.number && x.id === Number(ctx.params.review_id),
    );
    if (!r) throw new HttpError(404, "Not Found", ctx.doc);
    return { status: 200, body: ctx.core.model.review(repo, r) };
  },
  "pulls/list-comments-for-review": async (ctx) => {
    const repo = repoOf(ctx);
    const issue = pullOf(ctx);
    const id = Number(ctx.params.review_id);
    if (!ctx.core.state.reviews.some((x) => x.repoId === repo.id && x.number === issue.number && x.id === id))
      throw new HttpError(404, "Not Found", ctx.doc);
    const all = ctx.core.state.reviewComments.filter((c) => c.repoId === repo.id && c.reviewId === id);
    // The review-comment schema of this list has no line fields.
    const listed = all.map((c) => {
      const { line: _l, original_line: _o, side: _s, subject_type: _t, ...rest } = commentJson(ctx, repo, c);
      return rest;
    });
    return { status: 200, body: ctx.page(listed) };
  },
  "pulls/list-review-comments": async (ctx) => {
    const repo = repoOf(ctx);
    const issue = pullOf(ctx);
    const all = ctx.core.state.reviewComments.filter((c) => c.repoId === repo.id && c.number === issue.number);
    return { status: 200, body: ctx.page(all.map((c) => commentJson(ctx, repo, c))) };
  },
  // docs.github.com/rest/pulls/comments#create-a-reply-for-a-review-comment: "Replies to replies are not supported."
  "pulls/create-reply-for-review-comment": async (ctx) => {
    const repo = repoOf(ctx);
    const issue = pullOf(ctx);
    const to = ctx.core.state.reviewComments.find(
      (c) => c.repoId === repo.id && c.number === issue.number && c.id === Number(ctx.params.comment_id),
    );
    if (!to) throw new HttpError(404, "Not Found", ctx.doc);
    const body = str(ctx.body, "body");
    if (!body) throw invalid(ctx, "Validation Failed", []);
    const root = to.inReplyTo ?? to.id;
    const review: Review = {
      id: ctx.core.state.id(),
      repoId: repo.id,
      number: issue.number,
      user: ctx.actor,
      body: "",
      state: "COMMENTED",
      commitId: issue.pull!.headSha,
      submittedAt: now(),
    };
    ctx.core.state.reviews.push(review);
    const reply: ReviewComment = {
      ...to,
      id: ctx.core.state.id(),
      reviewId: review.id,
      user: ctx.actor,
      body,
      inReplyTo: root,
      createdAt: now(),
    };
    ctx.core.state.reviewComments.push(reply);
    return { status: 201, body: commentJson(ctx, repo, reply) };
  },
  // docs.github.com/rest/pulls/review-requests: reviewers must be collaborators, never the PR's author.
  "pulls/request-reviewers": async (ctx) => {
    const repo = repoOf(ctx);
    const issue = pullOf(ctx);
    const logins = Array.isArray(ctx.body?.reviewers)
      ? (ctx.body.reviewers as unknown[]).filter((l): l is string => typeof l === "string")
      : [];
    for (const login of logins) {
      if (login === issue.user.login) throw invalid(ctx, "Review cannot be requested from pull request author.", []);
      if (!repo.collaborators.has(login) && login !== repo.owner.login)
        throw invalid(
          ctx,
          "Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the repository.",
          [],
        );
    }
    const p = issue.pull!;
    p.requestedReviewers = [...new Set([...(p.requestedReviewers ?? []), ...logins])];
    return { status: 201, body: ctx.core.model.pull(repo, issue, { full: false }) };
  },
};
