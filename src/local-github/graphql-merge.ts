// GraphQL of auto-merge and the merge queue (docs.github.com/graphql/reference/mutations):
// `enablePullRequestAutoMerge`, `disablePullRequestAutoMerge` (../auto-merge.ts), `enqueuePullRequest`,
// `dequeuePullRequest` (../merge-queue.ts), and the pull request's `autoMergeRequest`,
// `mergeQueueEntry` and `isInMergeQueue`. A refusal is a GraphQL error of type UNPROCESSABLE with
// GitHub's message.
import { HttpError } from "./auth.js";
import { disableAutoMerge, enableAutoMerge } from "./auto-merge.js";
import type { SimCore } from "./domain/index.js";
import { dequeue, enqueue, queueEntry, queueFor, type QueueEntry } from "./merge-queue.js";
import { nodeId } from "./resources/index.js";
import type { Issue, Repo, Token, User } from "./state.js";
import { GraphQLError } from "graphql";

interface Ctx {
  core: SimCore;
  actor: User;
  token?: Token;
}

/** What graphql.ts lends: its pull request object, node lookup and permission check. */
export interface GraphqlHelpers {
  pullObject(core: SimCore, repo: Repo, issue: Issue): Record<string, unknown>;
  findPull(core: SimCore, id: string): { repo: Repo; issue: Issue };
  requireRepoPermission(ctx: Ctx, repo: Repo, perm: string, level: "read" | "write"): void;
}

function gqlError(message: string, type: string): GraphQLError {
  return new GraphQLError(message, { extensions: { type } });
}

const METHODS: Record<string, string> = { MERGE: "merge", SQUASH: "squash", REBASE: "rebase" };

function actor(u: User): Record<string, unknown> {
  // A bot's login in GraphQL carries no "[bot]" suffix.
  return u.type === "Bot" ? { __typename: "Bot", login: u.login.replace(/\[bot\]$/, "") } : { __typename: "User", login: u.login };
}

async function unprocessable<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof HttpError) throw gqlError(e.message, "UNPROCESSABLE");
    throw e;
  }
}

function commit(core: SimCore, repo: Repo, sha: string): Record<string, unknown> {
  const url = `${core.baseUrl}/${repo.owner.login}/${repo.name}/commit/${sha}`;
  return { __typename: "Commit", oid: sha, url, commitUrl: url };
}

function entryObject(h: GraphqlHelpers, core: SimCore, repo: Repo, issue: Issue, e: QueueEntry): Record<string, unknown> {
  return {
    __typename: "MergeQueueEntry",
    id: nodeId("MergeQueueEntry", `${repo.id}:${issue.number}`),
    enqueuedAt: e.enqueuedAt,
    enqueuer: actor(e.who.actor),
    jump: false,
    solo: true,
    state: e.state,
    position: Math.max(0, queueFor(core, repo, e.baseRef).indexOf(e)),
    headCommit: e.group ? commit(core, repo, e.group.sha) : null,
    baseCommit: e.group ? commit(core, repo, e.group.baseSha) : null,
    pullRequest: () => h.pullObject(core, repo, issue),
  };
}

/** The pull request's fields about auto-merge and the queue. */
export function pullMergeFields(h: GraphqlHelpers, core: SimCore, repo: Repo, issue: Issue): Record<string, unknown> {
  const am = issue.pull!.autoMerge;
  return {
    autoMergeRequest: am
      ? {
          __typename: "AutoMergeRequest",
          enabledAt: am.enabledAt,
          enabledBy: actor(am.who.actor),
          mergeMethod: am.method.toUpperCase(),
          commitHeadline: am.commitTitle ?? null,
          commitBody: am.commitMessage ?? null,
          authorEmail: null,
          pullRequest: () => h.pullObject(core, repo, issue),
        }
      : null,
    isInMergeQueue: () => !!queueEntry(core, repo, issue),
    mergeQueueEntry: () => {
      const e = queueEntry(core, repo, issue);
      return e ? entryObject(h, core, repo, issue, e) : null;
    },
  };
}

interface AutoMergeInput {
  pullRequestId: string;
  mergeMethod?: string;
  commitHeadline?: string;
  commitBody?: string;
  expectedHeadOid?: string;
  clientMutationId?: string;
}

/** The mutations, as the root value's resolvers. */
export const mergeMutations = (h: GraphqlHelpers) => ({
  enablePullRequestAutoMerge: async ({ input }: { input: AutoMergeInput }, c: Ctx) => {
    const { repo, issue } = h.findPull(c.core, input.pullRequestId);
    h.requireRepoPermission(c, repo, "contents", "write");
    await unprocessable(() =>
      enableAutoMerge(
        c.core,
        repo,
        issue,
        { actor: c.actor, token: c.token },
        {
          method: METHODS[input.mergeMethod ?? "MERGE"] ?? "merge",
          ...(input.commitHeadline != null ? { commitTitle: input.commitHeadline } : {}),
          ...(input.commitBody != null ? { commitMessage: input.commitBody } : {}),
          ...(input.expectedHeadOid != null ? { expectedHeadOid: input.expectedHeadOid } : {}),
        },
      ),
    );
    return { clientMutationId: input.clientMutationId ?? null, actor: actor(c.actor), pullRequest: h.pullObject(c.core, repo, issue) };
  },
  disablePullRequestAutoMerge: async ({ input }: { input: { pullRequestId: string; clientMutationId?: string } }, c: Ctx) => {
    const { repo, issue } = h.findPull(c.core, input.pullRequestId);
    h.requireRepoPermission(c, repo, "contents", "write");
    await disableAutoMerge(c.core, repo, issue, { actor: c.actor, token: c.token });
    return { clientMutationId: input.clientMutationId ?? null, actor: actor(c.actor), pullRequest: h.pullObject(c.core, repo, issue) };
  },
  enqueuePullRequest: async (
    { input }: { input: { pullRequestId: string; expectedHeadOid?: string; jump?: boolean; clientMutationId?: string } },
    c: Ctx,
  ) => {
    const { repo, issue } = h.findPull(c.core, input.pullRequestId);
    h.requireRepoPermission(c, repo, "contents", "write");
    const doc = "https://docs.github.com/graphql/reference/mutations#enqueuepullrequest";
    const e = await unprocessable(() =>
      enqueue(
        c.core,
        repo,
        issue,
        { actor: c.actor, token: c.token },
        { doc, ...(input.expectedHeadOid ? { expectedHeadOid: input.expectedHeadOid } : {}) },
      ),
    );
    return { clientMutationId: input.clientMutationId ?? null, mergeQueueEntry: entryObject(h, c.core, repo, issue, e) };
  },
  dequeuePullRequest: async ({ input }: { input: { id: string; clientMutationId?: string } }, c: Ctx) => {
    const { repo, issue } = h.findPull(c.core, input.id);
    h.requireRepoPermission(c, repo, "contents", "write");
    const doc = "https://docs.github.com/graphql/reference/mutations#dequeuepullrequest";
    const e = await unprocessable(() => dequeue(c.core, repo, issue, { actor: c.actor, token: c.token }, doc));
    return { clientMutationId: input.clientMutationId ?? null, mergeQueueEntry: entryObject(h, c.core, repo, issue, e) };
  },
});
