// The asynchronous merge (docs.github.com/rest/pulls/pulls#merge-a-pull-request-asynchronously and
// #get-the-result-of-an-asynchronous-merge, both in @octokit/openapi 23.0.2's description):
// `PUT /pulls/{n}/merge-async` answers at once and the merge happens in the background; the answer's
// `uuid` reads the result with `GET /pulls/{n}/merge-async/{uuid}`. No webhook reports the result
// beyond the merge's own `push` and `pull_request.closed`. As the description says:
// - 202 `pending` with the uuid, the method, the action and the head the merge expects (the request's
//   `sha`, else the head now — "if the PR is pushed in between the merge being requested and being
//   executed, the merge will be cancelled");
// - 409 with the uuid of a request already made for the pull request ("the merge options may be
//   different from those that were requested");
// - 200 `merged` with the merge commit when the pull request is already merged;
// - 400 `failed` when it cannot be merged ("because it is closed, or still a draft"): "Branch
//   protection rules and repository rules are not run at this stage" — they are when the merge runs,
//   and a refusal then makes the result `failed` with the refusal's message;
// - `merge_action: merge_queue` (or `default` where the base requires a merge queue) adds it to the
//   queue (../merge-queue.ts): the result is `enqueued`.
// Results are kept (GitHub: 24 hours after their last update; here for the server's life).
import { randomUUID } from "node:crypto";
import { HttpError } from "../auth.js";
import { mergePullRequest } from "../merging.js";
import { enqueue, queueRuleFor } from "../merge-queue.js";
import type { Issue } from "../state.js";
import type { Handler, RestCtx } from "./context.js";
import { act, notFound, ok, repoOf, str } from "./context.js";

interface AsyncMerge {
  uuid: string;
  repoId: number;
  number: number;
  method: string;
  action: string;
  expectedHeadSha: string;
  status: "pending" | "merged" | "enqueued" | "failed";
  message: string;
  sha?: string;
}

const results = new WeakMap<object, Map<string, AsyncMerge>>();

function resultsOf(ctx: RestCtx): Map<string, AsyncMerge> {
  let m = results.get(ctx.core);
  if (!m) results.set(ctx.core, (m = new Map()));
  return m;
}

function pullOf(ctx: RestCtx): Issue {
  const i = ctx.core.state.issue(repoOf(ctx).id, Number(ctx.params.pull_number));
  if (!i?.pull) throw notFound(ctx);
  return i;
}

function body(r: AsyncMerge): Record<string, unknown> {
  if (r.status === "merged") return { status: r.status, details: { message: r.message, sha: r.sha! } };
  if (r.status === "failed") return { status: r.status, details: { message: r.message } };
  return {
    status: r.status,
    details: { message: r.message, uuid: r.uuid, merge_method: r.method, merge_action: r.action, expected_head_sha: r.expectedHeadSha },
  };
}

export const mergeAsyncHandlers: Record<string, Handler> = {
  "pulls/merge-async": async (ctx) => {
    const repo = repoOf(ctx);
    const issue = pullOf(ctx);
    const p = issue.pull!;
    const b = ctx.body ?? {};
    if (p.merged)
      return ok({ status: "merged", details: { message: "Pull Request successfully merged", sha: p.mergeCommitSha ?? p.headSha } });
    if (issue.state !== "open") return ok({ status: "failed", details: { message: "Pull Request is not mergeable" } }, 400);
    if (p.draft) return ok({ status: "failed", details: { message: "Pull Request is still a draft" } }, 400);
    const all = resultsOf(ctx);
    const open = [...all.values()].find((r) => r.repoId === repo.id && r.number === issue.number && r.status === "pending");
    if (open) return ok(body(open), 409);
    const r: AsyncMerge = {
      uuid: randomUUID(),
      repoId: repo.id,
      number: issue.number,
      method: str(b, "merge_method") ?? "default",
      action: str(b, "merge_action") ?? "default",
      expectedHeadSha: str(b, "sha") ?? p.headSha,
      status: "pending",
      message: "Merge request accepted",
    };
    all.set(r.uuid, r);
    const who = act(ctx);
    const doc = ctx.doc;
    ctx.core.background("pulls/merge-async", async () => {
      try {
        if (p.headSha !== r.expectedHeadSha) throw new HttpError(409, "Head branch was modified. Review and try the merge again.", doc);
        const rule = queueRuleFor(repo, p.baseRef);
        if (r.action === "merge_queue" || (r.action === "default" && rule)) {
          await enqueue(ctx.core, repo, issue, who, { doc, expectedHeadOid: r.expectedHeadSha });
          Object.assign(r, { status: "enqueued", message: "Pull request added to the merge queue" });
          return;
        }
        const sha = await mergePullRequest(ctx.core, repo, issue, who, {
          doc,
          method: r.method === "default" ? "merge" : r.method,
          sha: r.expectedHeadSha,
          commitTitle: str(b, "commit_title"),
          commitMessage: str(b, "commit_message"),
        });
        Object.assign(r, { status: "merged", message: "Pull Request successfully merged", sha });
      } catch (e) {
        if (!(e instanceof HttpError)) throw e;
        Object.assign(r, { status: "failed", message: e.message });
      }
    });
    return ok(body(r), 202);
  },
  "pulls/get-merge-async-result": async (ctx) => {
    const repo = repoOf(ctx);
    const issue = pullOf(ctx);
    const r = resultsOf(ctx).get(ctx.params.uuid ?? "");
    if (!r || r.repoId !== repo.id || r.number !== issue.number) throw notFound(ctx);
    return ok(body(r));
  },
};
