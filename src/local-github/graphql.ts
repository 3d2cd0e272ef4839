// GraphQL at /api/graphql (GHES' path), for the few operations Forge uses:
//   mutation markPullRequestReadyForReview, convertPullRequestToDraft, createCommitOnBranch,
//            enablePullRequestAutoMerge, disablePullRequestAutoMerge, enqueuePullRequest, dequeuePullRequest (graphql-merge.ts)
//   query    repository(owner, name) { id nameWithOwner pullRequest(number) { … mergeable mergeStateStatus files(first, after) reviews(first|last, states) } ref(qualifiedName) defaultBranchRef
//                                     issue(number) { title body createdAt lastEditedAt }
//                                     object(expression: "<rev>:<path>") { ... on Blob { oid text isBinary isTruncated byteSize } } }
// Every document is parsed and validated against GitHub's own schema (@octokit/graphql-schema)
// and executed by graphql-js, so the answer has exactly the requested shape. A field the simulator
// does not model is an error naming it — never an invented null.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { IncomingMessage, ServerResponse } from "node:http";
import { buildSchema, graphql, GraphQLError, type GraphQLFieldResolver, type GraphQLSchema } from "graphql";
import { authenticate, hasPermission, HttpError, roleAtLeast, roleOf } from "./auth.js";
import type { SimCore } from "./domain/index.js";
import * as git from "./git/index.js";
import { mergeMutations, pullMergeFields, type GraphqlHelpers } from "./graphql-merge.js";
import { mergeStateOf } from "./mergeability.js";
import { nodeId } from "./resources/index.js";
import { commitDate } from "./rest/context.js";
import type { Issue, Repo, Token, User } from "./state.js";
import { now } from "./state.js";

/** Where GitHub cuts a `Blob.text` (then `isTruncated` is true). */
export const BLOB_TEXT_BYTES = 512_000;

/**
 * schema.graphql of @octokit/graphql-schema, found the way Node finds a package: in node_modules
 * of this folder or of any folder above it (a checkout, or the project Forge is installed in). The
 * package's `exports` name only its JavaScript entry, so `require.resolve` cannot name the file.
 */
function graphqlSchemaFile(): string {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    const file = path.join(dir, "node_modules", "@octokit", "graphql-schema", "schema.graphql");
    if (existsSync(file)) return file;
    if (path.dirname(dir) === dir) throw new Error("@octokit/graphql-schema is not installed: the local GitHub's GraphQL needs it");
  }
}

let schema: GraphQLSchema | undefined;
/** GitHub's public schema, built once per process (about half a second). */
function githubSchema(): GraphQLSchema {
  if (!schema) {
    const sdl = readFileSync(graphqlSchemaFile(), "utf8");
    schema = buildSchema(sdl, { assumeValidSDL: true });
  }
  return schema;
}

interface Ctx {
  core: SimCore;
  actor: User;
  token?: Token;
}

/** Resolves from plain objects; a field missing from the object is an explicit error. */
const fieldResolver: GraphQLFieldResolver<unknown, Ctx> = (source, args, ctx, info) => {
  const obj = source as Record<string, unknown>;
  if (obj && Object.prototype.hasOwnProperty.call(obj, info.fieldName)) {
    const v = obj[info.fieldName];
    return typeof v === "function" ? (v as (a: unknown, c: Ctx) => unknown)(args, ctx) : v;
  }
  if (info.fieldName === "__typename") return undefined;
  throw new GraphQLError(`${info.parentType.name}.${info.fieldName} is not implemented by Forge's local GitHub`);
};

function gqlError(message: string, type: string): GraphQLError {
  return new GraphQLError(message, { extensions: { type } });
}

function decodeNodeId(id: string): { kind: string; id: string } | undefined {
  const text = Buffer.from(id, "base64").toString("utf8");
  const i = text.indexOf(":");
  return i > 0 ? { kind: text.slice(0, i), id: text.slice(i + 1) } : undefined;
}

function requireRepoPermission(ctx: Ctx, repo: Repo, perm: string, level: "read" | "write"): void {
  const t = ctx.token;
  if (!t) throw gqlError("This endpoint requires you to be authenticated.", "UNAUTHORIZED");
  if (t.kind === "user") {
    if (!roleAtLeast(roleOf(repo, t.actor), level === "write" ? "write" : "read"))
      throw gqlError(`${t.actor.login} does not have the correct permissions to execute this mutation`, "FORBIDDEN");
    return;
  }
  if (t.repoIds && !t.repoIds.includes(repo.id)) throw gqlError("Could not resolve to a node", "NOT_FOUND");
  if (!hasPermission(t.permissions, perm, level)) throw gqlError("Resource not accessible by integration", "FORBIDDEN");
}

function pullObject(core: SimCore, repo: Repo, issue: Issue): Record<string, unknown> {
  const p = issue.pull!;
  return {
    __typename: "PullRequest",
    id: nodeId("PullRequest", issue.id),
    number: issue.number,
    title: issue.title,
    body: issue.body ?? "",
    isDraft: p.draft,
    merged: p.merged,
    state: p.merged ? "MERGED" : issue.state === "open" ? "OPEN" : "CLOSED",
    url: `${core.baseUrl}/${repo.owner.login}/${repo.name}/pull/${issue.number}`,
    headRefName: p.headRef,
    headRefOid: p.headSha,
    baseRefName: p.baseRef,
    isCrossRepository: p.headRepoId !== undefined && p.headRepoId !== repo.id,
    headRepository: () => {
      const head = core.state.repos.get(p.headRepoId ?? repo.id);
      return head
        ? { __typename: "Repository", id: nodeId("Repository", head.id), nameWithOwner: `${head.owner.login}/${head.name}` }
        : null;
    },
    mergeCommit: p.merged && p.mergeCommitSha ? commitObject(core, repo, p.mergeCommitSha) : null,
    ...pullMergeFields(helpers, core, repo, issue),
    // `mergeable` (MergeableState) and `mergeStateStatus` (MergeStateStatus): GitHub's background
    // job, as REST's `mergeable` and `mergeable_state` (./mergeability.ts) — UNKNOWN while it runs.
    mergeable: async () => {
      const m = await core.mergeability.read(repo, issue);
      return m === null ? "UNKNOWN" : m ? "MERGEABLE" : "CONFLICTING";
    },
    mergeStateStatus: async () => (await mergeStateOf(core, repo, issue, await core.mergeability.read(repo, issue))).toUpperCase(),
    // docs.github.com/graphql/reference/objects#pullrequest — `reviews(first|last, states)`: the
    // submitted reviews, oldest first; `last` takes the newest, `states` filters. Like every
    // connection, it needs `first` or `last` (1..100).
    reviews: ({ first, last, states }: { first?: number | null; last?: number | null; states?: string[] | null }) => {
      const n = first ?? last;
      if (n == null || n < 1 || n > 100)
        throw gqlError(
          "You must provide a `first` or `last` value between 1 and 100 to properly paginate the `reviews` connection.",
          "INVALID_CURSOR_ARGUMENTS",
        );
      const all = core.state.reviews.filter(
        (r) => r.repoId === repo.id && r.number === issue.number && (!states || states.includes(r.state)),
      );
      const page = first != null ? all.slice(0, n) : all.slice(Math.max(0, all.length - n));
      return {
        totalCount: all.length,
        nodes: page.map((r) => ({
          __typename: "PullRequestReview",
          id: nodeId("PullRequestReview", r.id),
          databaseId: r.id,
          body: r.body,
          state: r.state,
          submittedAt: r.submittedAt,
          commit: commitObject(core, repo, r.commitId),
          // A bot's login in GraphQL carries no "[bot]" suffix.
          author:
            r.user.type === "Bot"
              ? { __typename: "Bot", login: r.user.login.replace(/\[bot\]$/, "") }
              : { __typename: "User", login: r.user.login },
        })),
      };
    },
    files: async ({ first, after }: { first?: number | null; after?: string | null }) => {
      // GitHub's connections take `first` up to 100; the cursor here is the offset, base64 as GitHub's are opaque.
      if (first == null || first < 1 || first > 100)
        throw gqlError(
          "You must provide a `first` value between 1 and 100 to properly paginate the `files` connection.",
          "INVALID_CURSOR_ARGUMENTS",
        );
      const from = after ? Number(Buffer.from(after, "base64").toString("utf8")) : 0;
      const all = await git.pullRequestFiles(repo.gitDir, p, false);
      const page = all.slice(from, from + first);
      const cursor = (i: number) => Buffer.from(String(i)).toString("base64");
      return {
        totalCount: all.length,
        pageInfo: {
          hasNextPage: from + first < all.length,
          hasPreviousPage: from > 0,
          startCursor: page.length ? cursor(from) : null,
          endCursor: page.length ? cursor(from + page.length) : null,
        },
        nodes: page.map((f) => ({
          __typename: "PullRequestChangedFile",
          path: f.filename,
          additions: f.additions,
          deletions: f.deletions,
          changeType: f.status === "added" ? "ADDED" : f.status === "removed" ? "DELETED" : f.status === "renamed" ? "RENAMED" : "MODIFIED",
        })),
      };
    },
  };
}

function commitObject(core: SimCore, repo: Repo, sha: string): Record<string, unknown> {
  return {
    __typename: "Commit",
    oid: sha,
    url: `${core.baseUrl}/${repo.owner.login}/${repo.name}/commit/${sha}`,
    commitUrl: `${core.baseUrl}/${repo.owner.login}/${repo.name}/commit/${sha}`,
  };
}

function refObject(core: SimCore, repo: Repo, full: string, sha: string): Record<string, unknown> {
  const m = /^(refs\/(?:heads|tags)\/)(.*)$/.exec(full);
  return {
    __typename: "Ref",
    id: nodeId("Ref", `${repo.id}:${full}`),
    name: m ? m[2] : full,
    prefix: m ? m[1] : "refs/",
    target: commitObject(core, repo, sha),
  };
}

function findPull(core: SimCore, id: string): { repo: Repo; issue: Issue } {
  const d = decodeNodeId(id);
  if (d?.kind === "PullRequest") {
    for (const issue of core.state.issues.values()) {
      if (String(issue.id) === d.id && issue.pull) return { repo: core.state.repos.get(issue.repoId)!, issue };
    }
  }
  throw gqlError(`Could not resolve to a node with the global id of '${id}'`, "NOT_FOUND");
}

async function setDraft(ctx: Ctx, id: string, draft: boolean): Promise<Record<string, unknown>> {
  const { core } = ctx;
  const { repo, issue } = findPull(core, id);
  requireRepoPermission(ctx, repo, "pull_requests", "write");
  if (issue.state !== "open") throw gqlError("Pull request is closed", "UNPROCESSABLE");
  if (issue.pull!.draft !== draft) {
    issue.pull!.draft = draft;
    issue.updatedAt = now();
    core.bus.emit(
      "pull_request",
      draft ? "converted_to_draft" : "ready_for_review",
      {
        number: issue.number,
        pull_request: await core.pullPayload(repo, issue),
        repository: core.model.repo(repo),
        sender: core.model.user(ctx.actor),
      },
      { repo, causedByWorkflowRun: ctx.token?.workflowRunId },
    );
  }
  return pullObject(core, repo, issue);
}

interface FileChanges {
  additions?: Array<{ path: string; contents: string }>;
  deletions?: Array<{ path: string }>;
}

/**
 * createCommitOnBranch: a strict compare-and-swap — the commit is made only if the branch still
 * points at `expectedHeadOid` (docs.github.com/graphql/reference/mutations#createcommitonbranch).
 */
async function createCommitOnBranch(
  ctx: Ctx,
  input: {
    branch: { repositoryNameWithOwner?: string; branchName?: string; id?: string };
    expectedHeadOid: string;
    message: { headline: string; body?: string };
    fileChanges?: FileChanges;
    clientMutationId?: string;
  },
): Promise<Record<string, unknown>> {
  const { core } = ctx;
  let repo: Repo | undefined;
  let branch = input.branch.branchName;
  if (input.branch.id) {
    const d = decodeNodeId(input.branch.id);
    const m = d?.kind === "Ref" ? /^(\d+):refs\/heads\/(.+)$/.exec(d.id) : null;
    if (m) {
      repo = core.state.repos.get(Number(m[1]));
      branch = m[2];
    }
  } else if (input.branch.repositoryNameWithOwner) {
    const [o, r] = input.branch.repositoryNameWithOwner.split("/");
    repo = core.state.repoByName(o ?? "", r ?? "");
  }
  if (!repo || !branch) throw gqlError("Could not resolve to a Ref", "NOT_FOUND");
  requireRepoPermission(ctx, repo, "contents", "write");
  const refName = `refs/heads/${branch}`;
  const tip = await git.resolveRef(repo.gitDir, refName);
  if (!tip) throw gqlError(`A ref named "${branch}" does not exist`, "NOT_FOUND");
  if (tip !== input.expectedHeadOid)
    throw gqlError(`Expected branch to point to "${input.expectedHeadOid}" but it did not. Pull and try again.`, "STALE_DATA");
  const changes: git.TreeChange[] = [];
  for (const d of input.fileChanges?.deletions ?? []) changes.push({ path: d.path, sha: null });
  for (const a of input.fileChanges?.additions ?? [])
    changes.push({ path: a.path, sha: await git.hashBlob(repo.gitDir, Buffer.from(a.contents, "base64")) });
  const base = await git.readCommit(repo.gitDir, tip);
  const tree = await git.buildTree(repo.gitDir, base.tree, changes);
  const who = { name: ctx.actor.login, email: core.email(ctx.actor), date: commitDate(core) };
  const message = input.message.body ? `${input.message.headline}\n\n${input.message.body}\n` : `${input.message.headline}\n`;
  // Commits made through createCommitOnBranch are signed by GitHub (../signing.ts).
  const sha = await git.commitTree(repo.gitDir, tree, [tip], message, who, who, core.sign);
  if (!(await git.updateRef(repo.gitDir, refName, sha, tip)))
    throw gqlError(`Expected branch to point to "${input.expectedHeadOid}" but it did not. Pull and try again.`, "STALE_DATA");
  await core.refsChanged(repo, [{ ref: refName, before: tip, after: sha }], { actor: ctx.actor, token: ctx.token });
  return {
    clientMutationId: input.clientMutationId ?? null,
    commit: commitObject(core, repo, sha),
    ref: refObject(core, repo, refName, sha),
  };
}

const helpers: GraphqlHelpers = { pullObject, findPull, requireRepoPermission };

function repositoryObject(ctx: Ctx, repo: Repo): Record<string, unknown> {
  const { core } = ctx;
  return {
    __typename: "Repository",
    id: nodeId("Repository", repo.id),
    name: repo.name,
    nameWithOwner: `${repo.owner.login}/${repo.name}`,
    isPrivate: repo.private,
    url: `${core.baseUrl}/${repo.owner.login}/${repo.name}`,
    pullRequest: ({ number }: { number: number }) => {
      const issue = core.state.issue(repo.id, number);
      return issue?.pull ? pullObject(core, repo, issue) : null;
    },
    // An issue (not a PR: GitHub answers NOT_FOUND for a PR's number here) with the fields Forge reads.
    issue: ({ number }: { number: number }) => {
      requireRepoPermission(ctx, repo, "issues", "read");
      const issue = core.state.issue(repo.id, number);
      if (!issue || issue.pull) throw gqlError(`Could not resolve to an Issue with the number of ${number}.`, "NOT_FOUND");
      return {
        __typename: "Issue",
        id: nodeId("Issue", issue.id),
        number: issue.number,
        title: issue.title,
        body: issue.body ?? "",
        createdAt: issue.createdAt,
        lastEditedAt: issue.lastEditedAt ?? null,
      };
    },
    ref: async ({ qualifiedName }: { qualifiedName: string }) => {
      const full = qualifiedName.startsWith("refs/") ? qualifiedName : `refs/heads/${qualifiedName}`;
      const sha = (await git.listRefs(repo.gitDir, full)).get(full);
      return sha ? refObject(core, repo, full, sha) : null;
    },
    // A file (or folder) at `<rev>:<path>`, the rev a branch, tag or commit sha; null when there is none.
    object: async ({ expression, oid }: { expression?: string; oid?: string }) => {
      if (oid !== undefined || expression === undefined)
        throw gqlError("object(oid:) is not modelled by the local GitHub", "NOT_SUPPORTED");
      requireRepoPermission(ctx, repo, "contents", "read");
      const colon = expression.indexOf(":");
      if (colon < 0) throw gqlError("object(expression:) is modelled for `<rev>:<path>` only", "NOT_SUPPORTED");
      const rev = expression.slice(0, colon);
      const commit = /^[0-9a-f]{40}$/.test(rev)
        ? rev
        : ((await git.resolveRef(repo.gitDir, `refs/heads/${rev}`)) ?? (await git.resolveRef(repo.gitDir, `refs/tags/${rev}`)));
      if (!commit) return null;
      const entry = await git.entryAt(repo.gitDir, commit, expression.slice(colon + 1)).catch(() => undefined);
      if (!entry) return null;
      if (entry.type === "tree") return { __typename: "Tree", id: nodeId("Tree", entry.sha), oid: entry.sha };
      const blob = await git.readBlob(repo.gitDir, entry.sha);
      const isBinary = blob.includes(0);
      return {
        __typename: "Blob",
        id: nodeId("Blob", entry.sha),
        oid: entry.sha,
        byteSize: blob.length,
        isBinary,
        // GitHub cuts `text` at 512,000 bytes and says so in `isTruncated` (the schema: "Indicates
        // whether the contents is truncated"; the cut measured at exactly 512,000 bytes).
        isTruncated: blob.length > BLOB_TEXT_BYTES,
        text: isBinary ? null : blob.subarray(0, BLOB_TEXT_BYTES).toString("utf8"),
      };
    },
    defaultBranchRef: async () => {
      const full = `refs/heads/${repo.defaultBranch}`;
      const sha = await git.resolveRef(repo.gitDir, full);
      return sha ? refObject(core, repo, full, sha) : null;
    },
  };
}

export async function handleGraphql(
  core: SimCore,
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
  send: (res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>) => void,
): Promise<void> {
  const docUrl = "https://docs.github.com/graphql";
  let ctx: Ctx;
  try {
    const cred = authenticate(core.state, req.headers.authorization);
    if (cred.kind !== "token") throw new HttpError(401, "This endpoint requires you to be authenticated.", docUrl);
    ctx = { core, actor: cred.token.actor, token: cred.token };
  } catch (e) {
    const err = e as HttpError;
    return send(res, err.status ?? 401, { message: err.message, documentation_url: docUrl });
  }
  let request: { query?: string; variables?: Record<string, unknown>; operationName?: string };
  try {
    request = JSON.parse(body.toString("utf8")) as typeof request;
  } catch {
    return send(res, 400, { message: "Problems parsing JSON", documentation_url: docUrl });
  }
  if (!request.query) return send(res, 200, { errors: [{ message: "A query attribute must be specified and must be a string." }] });

  const rootValue = {
    // Query
    repository: ({ owner, name }: { owner: string; name: string }, c: Ctx) => {
      const repo = core.state.repoByName(owner, name);
      if (!repo) throw gqlError(`Could not resolve to a Repository with the name '${owner}/${name}'.`, "NOT_FOUND");
      requireRepoPermission(c, repo, "metadata", "read");
      return repositoryObject(c, repo);
    },
    viewer: (_: unknown, c: Ctx) => ({ __typename: "User", login: c.actor.login, id: nodeId(c.actor.type, c.actor.id) }),
    // Mutation
    markPullRequestReadyForReview: async ({ input }: { input: { pullRequestId: string; clientMutationId?: string } }, c: Ctx) => ({
      clientMutationId: input.clientMutationId ?? null,
      pullRequest: await setDraft(c, input.pullRequestId, false),
    }),
    convertPullRequestToDraft: async ({ input }: { input: { pullRequestId: string; clientMutationId?: string } }, c: Ctx) => ({
      clientMutationId: input.clientMutationId ?? null,
      pullRequest: await setDraft(c, input.pullRequestId, true),
    }),
    createCommitOnBranch: async ({ input }: { input: Parameters<typeof createCommitOnBranch>[1] }, c: Ctx) =>
      createCommitOnBranch(c, input),
    ...mergeMutations(helpers),
  };
  const result = await graphql({
    schema: githubSchema(),
    source: request.query,
    rootValue,
    contextValue: ctx,
    variableValues: request.variables ?? null,
    operationName: request.operationName ?? null,
    fieldResolver,
  });
  const out: Record<string, unknown> = {};
  if (result.data !== undefined) out.data = result.data;
  if (result.errors?.length) {
    // GitHub answers 200 with `errors` (type, path, locations, message).
    out.errors = result.errors.map((e) => ({
      type: (e.extensions?.type as string | undefined) ?? undefined,
      path: e.path,
      locations: e.locations,
      message: e.message,
    }));
  }
  res.on("finish", () => core.bus.flush());
  send(res, 200, out);
}
