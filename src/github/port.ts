/**
 * The GitHub port: every GitHub operation Forge's App needs, in Forge's terms. The App depends on
 * this interface only; `octokit-port.ts` implements it over Octokit (real GitHub, GitHub Enterprise
 * Server, or the local GitHub in src/local-github). Errors are `GitHubError` with the HTTP status kept.
 */
import type { MergeQueuePort } from "./merge-queue.js";
import type { CiChecks } from "./ci-checks.js";
import type { BranchUpdateResult } from "./branch-update.js";
import type { BranchRule } from "./merge-rules.js";

export class GitHubError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly operation: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "GitHubError";
  }
}

/** A compare-and-swap write lost its race: someone else wrote first. Re-read and re-decide. */
export class ConflictError extends GitHubError {
  constructor(operation: string, message = "the ref moved since it was read") {
    super(message, 409, operation);
    this.name = "ConflictError";
  }
}

export interface FileAt {
  content: string;
  /** Blob sha of the file, the compare-and-swap token of `writeFile`. */
  blobSha: string;
}

export interface PullRequestInfo {
  number: number;
  state: "open" | "closed";
  merged: boolean;
  mergeSha?: string;
  headRef: string;
  headSha: string;
  baseRef: string;
  draft: boolean;
  /** The head branch is in another repository (a fork): whatever its name, it is no task's branch. */
  fromFork: boolean;
  /**
   * Whether GitHub found it merges without conflict (`mergeable` of a pull request read alone): null
   * while GitHub's background job computes it — to be read again later, never taken for false;
   * absent when the read did not say.
   */
  mergeable?: boolean | null;
  /** Whether it is set to merge automatically (REST `auto_merge`); absent when the read did not say. */
  autoMerge?: boolean;
}

/** A submitted review of a pull request (docs.github.com/rest/pulls/reviews). */
export interface ReviewInfo {
  id: number;
  login: string;
  bot: boolean;
  /** APPROVED, CHANGES_REQUESTED, COMMENTED or DISMISSED. */
  state: string;
  /** The head the review was given on. */
  commitId: string;
  body?: string;
}

export interface WorkflowRunInfo {
  id: number;
  headBranch: string;
  status: string;
  conclusion: string | null;
  createdAt: string;
  /** What started it: `workflow_dispatch`, `push`, `pull_request`, … */
  event: string;
  /**
   * The workflow file it runs, e.g. `.github/workflows/forge-agent.yml`. GitHub Enterprise Server's
   * runs may not say; a run listed by its workflow's file is that file's.
   */
  path: string | undefined;
  /** The repository its head commit comes from (a fork's for a pull request from a fork); null when GitHub gives none. */
  headRepositoryId: number | null;
}

export type CheckStatus = "queued" | "in_progress" | "completed";
export type CheckConclusion = "success" | "failure" | "neutral" | "cancelled" | "timed_out" | "action_required" | "skipped";

export interface CheckRunFields {
  name: string;
  headSha: string;
  status: CheckStatus;
  conclusion?: CheckConclusion;
  title: string;
  summary: string;
  text?: string;
  detailsUrl?: string;
  externalId?: string;
  /** Buttons (`requested_action`); GitHub allows at most three. */
  actions?: { label: string; description: string; identifier: string }[];
  annotations?: {
    path: string;
    startLine: number;
    endLine: number;
    level: "notice" | "warning" | "failure";
    message: string;
    title?: string;
  }[];
}

export type MergeResult = { kind: "merged"; sha: string } | { kind: "noop" } | { kind: "conflict" };
/**
 * What a merge attempt came to. `base_moved`: another merge moved the base while this one ran
 * (GitHub's 405 "Base branch was modified") — try again. `head_moved`: the PR's head is not the
 * `sha` given (409).
 */
export type PullMergeResult =
  | { kind: "merged"; sha: string }
  | { kind: "not_mergeable"; message: string }
  | { kind: "base_moved"; message: string }
  | { kind: "head_moved" };

/** The jobs of a finished workflow run, as GitHub lists them. */
export interface EndedJobs {
  /** A job ended with a step still unfinished: its runner went away mid-step. */
  runnerLost: boolean;
  /** The first job that did not succeed: its name, the step that failed, and its page on GitHub (where its log is). */
  failed?: { name: string; step?: string; htmlUrl?: string };
  /**
   * The failure annotations of its failed jobs, when no runner went away: what `core.setFailed` said
   * (a refused push's GH013 among them).
   */
  errors: string[];
}

/** An issue as a sub-issue or dependency list shows it. */
export interface LinkedIssue {
  /** Its id (what sub-issue and dependency requests name it by), not its number. */
  id: number;
  number: number;
  title: string;
  body: string;
  state: "open" | "closed";
  labels: string[];
  /** An issue of this port's repository (a sub-issue or a blocker may be in another of the owner's). */
  sameRepo: boolean;
}

export interface GitHubPort {
  readonly owner: string;
  readonly repo: string;
  /** The web root of the GitHub this port talks to (https://github.com, a GHES host, the local GitHub): links Forge writes go there. */
  readonly webUrl: string;
  /** The merge queue and auto-merge (GraphQL only: ./merge-queue.ts). */
  readonly queue: MergeQueuePort;

  defaultBranch(): Promise<string>;
  /** The repository's id (what webhook payloads and workflow runs name it by). */
  repositoryId(): Promise<number>;
  /** The repository's id as a signed webhook or the installation's list named it: `repositoryId` then asks nothing. */
  knowRepositoryId?(id: number): void;
  /** Head commit of a branch, or null when there is no such branch. */
  branchHead(branch: string): Promise<string | null>;
  /** Create a branch at `sha`; false when it already exists. */
  createBranch(branch: string, sha: string): Promise<boolean>;
  deleteBranch(branch: string): Promise<void>;
  /** Branch names under a prefix (e.g. `forge/`). */
  listBranches(prefix: string): Promise<{ name: string; sha: string }[]>;
  /** Server-side merge of `head` into `base` (`POST /merges`). */
  mergeBranch(base: string, head: string, message: string): Promise<MergeResult>;
  /**
   * How `head` relates to `base` (`GET /compare/{base}...{head}`): `ahead` or `identical` means
   * `head` contains `base`.
   */
  compareCommits(base: string, head: string): Promise<"ahead" | "behind" | "identical" | "diverged">;
  /** Commit message and parents of a commit. */
  commit(sha: string): Promise<{ sha: string; message: string; parents: string[] }>;

  readFile(path: string, ref: string): Promise<FileAt | null>;
  /**
   * Many files at `ref` in few calls (GraphQL, `READ_FILES_BATCH` a query), by path; null for one
   * that is not there. Optional: a port without it is read file by file.
   */
  readFiles?(paths: readonly string[], ref: string): Promise<Map<string, FileAt | null>>;
  /** A directory's entries at `ref`; empty when it does not exist. */
  listDirectory(path: string, ref: string): Promise<{ name: string; path: string; type: "file" | "dir"; size: number }[]>;
  /**
   * Write one file as one commit on `branch`. With `expectedBlobSha` the write only succeeds when
   * the file is still that blob (compare-and-swap, `ConflictError` otherwise); without it the file
   * must not exist yet.
   */
  writeFile(
    branch: string,
    path: string,
    content: string,
    message: string,
    expectedBlobSha?: string,
  ): Promise<{ blobSha: string; commitSha: string }>;

  dispatchWorkflow(workflow: string, ref: string, inputs: Record<string, string>): Promise<{ workflowRunId?: number }>;
  listWorkflowRuns(workflow: string, filter: { branch?: string; createdAfter?: string }): Promise<WorkflowRunInfo[]>;
  /** One workflow run (`GET /actions/runs/{id}`); null when it does not exist in this repository. */
  getWorkflowRun(id: number): Promise<WorkflowRunInfo | null>;
  cancelWorkflowRun(id: number): Promise<void>;
  /** What the jobs of a finished workflow run left: whether its runner went away, and the job that failed (`GET …/runs/{id}/jobs`). */
  endedJobs(runId: number): Promise<EndedJobs>;

  createCheckRun(fields: CheckRunFields): Promise<number>;
  /** The check run named `name` on `headSha` whose external id is `externalId`, if one exists. */
  findCheckRun(headSha: string, name: string, externalId: string): Promise<number | null>;
  updateCheckRun(id: number, fields: Partial<CheckRunFields>): Promise<void>;
  /** The check runs named `name` on `headSha` (one page of 100): their ids, external ids and summaries. */
  listCheckRuns(headSha: string, name: string): Promise<{ id: number; externalId: string | null; summary: string | null }[]>;

  findPullRequest(head: string, state?: "open" | "closed" | "all"): Promise<PullRequestInfo | null>;
  getPullRequest(number: number): Promise<PullRequestInfo>;
  /**
   * The pull request and the paths it changes, in one call where GitHub allows (GraphQL, up to 100
   * files and no rename; more, or a rename, are listed through REST as `listPullRequestFiles` does),
   * with its newest requests for changes (up to 20) when the call could read them.
   */
  getPullRequestWithFiles(number: number): Promise<PullRequestInfo & { files: string[]; changeRequests?: ReviewInfo[] }>;
  createPullRequest(fields: { head: string; base: string; title: string; body: string; draft?: boolean }): Promise<PullRequestInfo>;
  updatePullRequest(number: number, fields: { title?: string; body?: string; state?: "open" | "closed" }): Promise<void>;
  /** Paths a PR changes, a renamed file by its old path as well (up to GitHub's 3,000-file limit of the endpoint). */
  listPullRequestFiles(number: number): Promise<string[]>;
  mergePullRequest(
    number: number,
    fields: { sha?: string; method?: "merge" | "squash" | "rebase"; title?: string },
  ): Promise<PullMergeResult>;
  /**
   * Bring a PR's branch up to date with its base, if its head is still `expectedHeadSha`
   * (`PUT …/pulls/{n}/update-branch`): GitHub merges the base into the head in the background.
   */
  updatePullRequestBranch(number: number, expectedHeadSha: string): Promise<BranchUpdateResult>;

  /** The newest issue (not PR) with `label` whose body holds `marker`, among the 100 newest with that label (the App's own, when it knows its login). */
  findIssue(label: string, marker: string): Promise<number | null>;
  createIssue(fields: { title: string; body: string; labels?: string[] }): Promise<number>;
  updateIssue(number: number, fields: { title?: string; body?: string; state?: "open" | "closed"; labels?: string[] }): Promise<void>;
  getIssue(number: number): Promise<{
    number: number;
    title: string;
    body: string;
    state: "open" | "closed";
    labels: string[];
    isPullRequest: boolean;
    /** Who closed it, when it is closed and GitHub says. */
    closedBy?: string;
  }>;
  /**
   * An issue's title and body as they are now, and when its body was last edited (GraphQL
   * `Issue.lastEditedAt`; null when never): REST does not say when an issue was edited — its
   * `updated_at` moves with every comment too.
   */
  issueAsEdited(number: number): Promise<{ title: string; body: string; lastEditedAt: string | null }>;
  /** An issue's sub-issues in GitHub's order (`GET …/issues/{n}/sub_issues`, 100 at most). Optional: a port without it has no issue trees. */
  subIssues?(issue: number): Promise<LinkedIssue[]>;
  /** The issues that block an issue (`GET …/issues/{n}/dependencies/blocked_by`, the first 100). */
  blockedBy?(issue: number): Promise<LinkedIssue[]>;
  /**
   * `files` (path → text) as one commit on top of `from`, and `branch` created at it (git trees,
   * commits and refs: three calls however many files). False when `branch` already exists.
   */
  commitFiles?(
    branch: string,
    from: string,
    files: ReadonlyMap<string, string>,
    message: string,
  ): Promise<{ created: boolean; sha: string }>;
  createComment(issue: number, body: string): Promise<number>;
  /** The id of a comment on `issue` whose body holds `marker`, if one exists (the App's own, when it knows its login). */
  findComment(issue: number, marker: string): Promise<number | null>;
  updateComment(id: number, body: string): Promise<void>;
  addReaction(target: { commentId: number } | { issue: number }, content: "+1" | "-1" | "eyes" | "rocket" | "confused"): Promise<void>;

  /**
   * The repository's own check runs on a commit (never Forge's), `names` only when given: whether
   * any is still running, and the failing ones with summary, annotations and a log excerpt.
   */
  ciChecks(headSha: string, names: readonly string[]): Promise<CiChecks>;
  /** The collaborator permission of a user: admin, maintain, write, triage, read or none. */
  permission(user: string): Promise<string>;
  /** A PR's reviews as GitHub has them now (the first 100): who, which state, on which commit. */
  listReviews(number: number): Promise<ReviewInfo[]>;
  /** The active ruleset rules that apply to a branch (which need not exist yet), with their parameters (docs.github.com/rest/repos/rules#get-rules-for-a-branch). */
  branchRules(branch: string): Promise<BranchRule[]>;
  /** A ruleset's name, a repository's or its organisation's (docs.github.com/rest/repos/rules#get-a-repository-ruleset). */
  rulesetName(id: number): Promise<string>;
  /**
   * The check names a branch's protection requires of a pull request into it (its required
   * contexts, as `GET …/branches/{branch}` shows them to any App); none when it is unprotected or
   * does not exist. Its rulesets' are in `branchRules` (./required-checks.ts puts both together).
   */
  protectionChecks(branch: string): Promise<string[]>;
}
