/**
 * The GraphQL queries of the GitHub port over Octokit and their answers: a pull request with the
 * paths it changes, and a batch of files read at one ref (a plan's documents) in one call.
 */
import type { FileAt, PullRequestInfo, ReviewInfo } from "./port.js";

/** A pull request with what a merge checks — whether it merges, its first 100 changed paths, its newest requests for changes — in one GraphQL call. */
export const PULL_WITH_FILES = `query ($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      number
      state
      merged
      mergeCommit { oid }
      headRefName
      headRefOid
      baseRefName
      isDraft
      mergeable
      autoMergeRequest { enabledAt }
      isCrossRepository
      headRepository { id }
      files(first: 100) { pageInfo { hasNextPage } nodes { path changeType } }
      reviews(last: 20, states: [CHANGES_REQUESTED]) { nodes { databaseId body commit { oid } author { __typename login } } }
    }
  }
}`;

export interface GraphqlPull {
  number: number;
  state: "OPEN" | "CLOSED" | "MERGED";
  merged: boolean;
  mergeCommit: { oid: string } | null;
  headRefName: string;
  headRefOid: string;
  baseRefName: string;
  isDraft: boolean;
  /** MERGEABLE, CONFLICTING, or UNKNOWN while GitHub computes it. */
  mergeable?: "MERGEABLE" | "CONFLICTING" | "UNKNOWN";
  /** Set while the pull request is to merge automatically; null otherwise. */
  autoMergeRequest?: { enabledAt: string | null } | null;
  isCrossRepository: boolean;
  headRepository: { id: string } | null;
  files: { pageInfo: { hasNextPage: boolean }; nodes: { path: string; changeType?: string }[] | null } | null;
  reviews?: {
    nodes:
      | { databaseId: number | null; body: string; commit: { oid: string } | null; author: { __typename: string; login: string } | null }[]
      | null;
  } | null;
}

/** The newest requests for changes of a `PULL_WITH_FILES` pull request, in the port's type. */
export function changeRequestsOf(p: GraphqlPull): ReviewInfo[] {
  return (p.reviews?.nodes ?? []).flatMap((r) =>
    r.databaseId == null
      ? []
      : [
          {
            id: r.databaseId,
            login: r.author?.login ?? "",
            bot: r.author?.__typename === "Bot",
            state: "CHANGES_REQUESTED",
            commitId: r.commit?.oid ?? "",
            body: r.body,
          },
        ],
  );
}

/** A pull request of `PULL_WITH_FILES` in the port's type. */
export function pullInfo(p: GraphqlPull): PullRequestInfo {
  return {
    number: p.number,
    state: p.state === "OPEN" ? "open" : "closed",
    merged: p.merged,
    ...(p.merged && p.mergeCommit ? { mergeSha: p.mergeCommit.oid } : {}),
    headRef: p.headRefName,
    headSha: p.headRefOid,
    baseRef: p.baseRefName,
    draft: p.isDraft,
    // A deleted fork leaves no head repository: not this repository either.
    fromFork: p.isCrossRepository || p.headRepository === null,
    // UNKNOWN: GitHub is still computing it — null, as REST says, never false.
    ...(p.mergeable !== undefined ? { mergeable: p.mergeable === "UNKNOWN" ? null : p.mergeable === "MERGEABLE" } : {}),
    // As REST's `auto_merge`: absent when the answer did not say.
    ...(p.autoMergeRequest !== undefined ? { autoMerge: p.autoMergeRequest !== null } : {}),
  };
}

/** What `readFilesQuery` answers for one path: a blob, another kind of object, or nothing. */
export type GraphqlBlob = { __typename: string; oid?: string; text?: string | null; isBinary?: boolean; isTruncated?: boolean } | null;

/** The query reading `batch` at `ref` (the k-th path as `f<k>`), and its variables. */
export function readFilesQuery(
  owner: string,
  name: string,
  ref: string,
  batch: readonly string[],
): { query: string; vars: Record<string, string> } {
  const vars: Record<string, string> = { owner, name };
  batch.forEach((path, k) => (vars[`e${k}`] = `${ref}:${path}`));
  const query = `query(${["$owner: String!", "$name: String!", ...batch.map((_, k) => `$e${k}: String!`)].join(", ")}) {
  repository(owner: $owner, name: $name) {
${batch.map((_, k) => `    f${k}: object(expression: $e${k}) { __typename ... on Blob { oid text isBinary isTruncated } }`).join("\n")}
  }
}`;
  return { query, vars };
}

/** An issue's title and body as they are now, and when its body was last edited (`null`: never). */
export const ISSUE_AS_EDITED =
  "query($owner: String!, $name: String!, $number: Int!) { repository(owner: $owner, name: $name) { issue(number: $number) { title body lastEditedAt } } }";
export type IssueAsEdited = { repository: { issue: { title: string; body: string; lastEditedAt: string | null } | null } | null };

/**
 * Files at `ref`, `size` paths a query; a file GraphQL does not give whole (binary, or cut) is read
 * through `readOne` (the contents API).
 */
export async function readFilesInBatches(
  owner: string,
  name: string,
  ref: string,
  paths: readonly string[],
  size: number,
  query: (query: string, vars: Record<string, string>) => Promise<{ repository: Record<string, GraphqlBlob> }>,
  readOne: (path: string) => Promise<FileAt | null>,
): Promise<Map<string, FileAt | null>> {
  const out = new Map<string, FileAt | null>();
  for (let from = 0; from < paths.length; from += size) {
    const batch = paths.slice(from, from + size);
    const q = readFilesQuery(owner, name, ref, batch);
    const data = await query(q.query, q.vars);
    for (const [k, path] of batch.entries()) {
      const o = data.repository[`f${k}`];
      if (!o || o.__typename !== "Blob") out.set(path, null);
      else if (o.isBinary || o.isTruncated || typeof o.text !== "string" || !o.oid) out.set(path, await readOne(path));
      else out.set(path, { content: o.text, blobSha: o.oid });
    }
  }
  return out;
}
