/**
 * The merge queue and auto-merge, which GitHub offers through GraphQL only
 * (docs/executor.md#merge-queue-and-auto-merge):
 * - `enqueuePullRequest` (docs.github.com/graphql/reference/mutations#enqueuepullrequest) adds a pull
 *   request to its base's queue, at the head Forge verified (`expectedHeadOid`); GitHub then builds a
 *   merge group on a `gh-readonly-queue/{base}/pr-{n}-{head}` branch, the repository's CI runs on it
 *   (`merge_group`), and the base moves to the group's head — or the pull request is dropped.
 * - the pull request's `mergeQueueEntry` says whether it is still queued, and the head of its group
 *   once one is built (the commit the required checks run on);
 * - `enablePullRequestAutoMerge` (…#enablepullrequestautomerge) merges a pull request once its base's
 *   requirements are met — through the queue where the base has one.
 * A refusal is a GraphQL error whose message is GitHub's (type UNPROCESSABLE and the like).
 */
import type { Octokit } from "./octokit-port.js";
import { wrap } from "./octokit-rest.js";
import type { MergeMethod } from "./merge-rules.js";

export interface QueueEntryInfo {
  /** QUEUED, AWAITING_CHECKS, MERGEABLE, UNMERGEABLE or LOCKED */
  state: string;
  position: number;
  /** the head of the merge group being tested, once GitHub built it */
  groupSha?: string;
}

export type QueueResult = { kind: "queued"; entry: QueueEntryInfo } | { kind: "refused"; message: string };

/** What Forge asks of GitHub's merge queue and auto-merge (part of the port: ./port.ts). */
export interface MergeQueuePort {
  /** The pull request's entry in its base's merge queue, or null when it is not queued. */
  entry(number: number): Promise<QueueEntryInfo | null>;
  /** Add the pull request to its base's queue if its head is still `expectedHeadSha`. */
  enqueue(number: number, expectedHeadSha: string): Promise<QueueResult>;
  /**
   * The heads of the merge groups GitHub Actions ran on for the queue branch `branch`
   * (`gh-readonly-queue/{base}/pr-{n}-{head}`, deleted once the group is done), newest first: what
   * the group was, when no webhook or look at the queue said so.
   */
  groupHeads(branch: string): Promise<string[]>;
  /** Merge the pull request by `method` once its base's requirements are met (an approval, the queue). */
  enableAutoMerge(
    number: number,
    method: MergeMethod,
    expectedHeadSha?: string,
  ): Promise<{ kind: "enabled" } | { kind: "refused"; message: string }>;
}

const PULL_QUEUE = `query ($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      id
      mergeQueueEntry { state position headCommit { oid } }
    }
  }
}`;

const ENQUEUE = `mutation ($id: ID!, $head: GitObjectID) {
  enqueuePullRequest(input: { pullRequestId: $id, expectedHeadOid: $head }) {
    mergeQueueEntry { state position headCommit { oid } }
  }
}`;

const AUTO_MERGE = `mutation ($id: ID!, $mergeMethod: PullRequestMergeMethod, $head: GitObjectID) {
  enablePullRequestAutoMerge(input: { pullRequestId: $id, mergeMethod: $mergeMethod, expectedHeadOid: $head }) {
    pullRequest { number }
  }
}`;

interface GraphqlEntry {
  state: string;
  position: number;
  headCommit: { oid: string } | null;
}

const entryInfo = (e: GraphqlEntry): QueueEntryInfo => ({
  state: e.state,
  position: e.position,
  ...(e.headCommit ? { groupSha: e.headCommit.oid } : {}),
});

/** A GraphQL refusal's message (GitHub's own words), or undefined when the call failed otherwise. */
function refusal(e: unknown): string | undefined {
  const errors = (e as { errors?: Array<{ message?: string; type?: string }> }).errors;
  if (!Array.isArray(errors) || errors.length === 0) return undefined;
  // Not found or forbidden is no refusal of this pull request: the caller's error, thrown.
  if (errors.some((x) => x.type === "NOT_FOUND" || x.type === "FORBIDDEN")) return undefined;
  return errors.map((x) => x.message ?? "").join("; ");
}

export function mergeQueuePort(octokit: Octokit, r: { owner: string; repo: string }): MergeQueuePort {
  const read = async (number: number) => {
    try {
      const data = await octokit.graphql<{
        repository: { pullRequest: { id: string; mergeQueueEntry: GraphqlEntry | null } | null } | null;
      }>(PULL_QUEUE, { owner: r.owner, name: r.repo, number });
      const p = data.repository?.pullRequest;
      if (!p) throw new Error(`pull request #${number} not found`);
      return p;
    } catch (e) {
      throw wrap("graphql pullRequest.mergeQueueEntry", e);
    }
  };
  return {
    async entry(number) {
      const e = (await read(number)).mergeQueueEntry;
      return e ? entryInfo(e) : null;
    },
    async enqueue(number, expectedHeadSha) {
      const { id } = await read(number);
      try {
        const data = await octokit.graphql<{ enqueuePullRequest: { mergeQueueEntry: GraphqlEntry | null } | null }>(ENQUEUE, {
          id,
          head: expectedHeadSha,
        });
        const e = data.enqueuePullRequest?.mergeQueueEntry;
        return { kind: "queued", entry: e ? entryInfo(e) : { state: "QUEUED", position: 0 } };
      } catch (e) {
        const message = refusal(e);
        if (message !== undefined) return { kind: "refused", message };
        throw wrap("graphql enqueuePullRequest", e);
      }
    },
    async groupHeads(branch) {
      try {
        const { data } = await octokit.rest.actions.listWorkflowRunsForRepo({ ...r, branch, event: "merge_group", per_page: 20 });
        return [...new Set(data.workflow_runs.map((w) => w.head_sha))];
      } catch (e) {
        throw wrap("actions.listWorkflowRunsForRepo", e);
      }
    },
    async enableAutoMerge(number, method, expectedHeadSha) {
      const { id } = await read(number);
      try {
        await octokit.graphql(AUTO_MERGE, { id, mergeMethod: method.toUpperCase(), ...(expectedHeadSha ? { head: expectedHeadSha } : {}) });
        return { kind: "enabled" };
      } catch (e) {
        const message = refusal(e);
        if (message !== undefined) return { kind: "refused", message };
        throw wrap("graphql enablePullRequestAutoMerge", e);
      }
    },
  };
}
