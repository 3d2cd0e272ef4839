// In-memory state of the local GitHub. Repository *content* lives in bare repositories on disk;
// everything GitHub keeps beside git (issues, pulls, checks, runs, installations…) lives here.

import type { ActionsPermissions } from "./actions-permissions.js";
import type { BranchProtection } from "./branch-protection.js";
import type { RepoSettings } from "./repo-settings.js";
import type { OrgData, Ruleset } from "./rulesets.js";
import type { RepoSecrets } from "./secrets.js";

export type Role = "admin" | "maintain" | "write" | "triage" | "read";
export type Level = "read" | "write" | "admin";
export type Permissions = Record<string, Level>;

export interface User {
  id: number;
  login: string;
  type: "User" | "Bot" | "Organization";
  /** for Bot users: the App they belong to */
  appId?: number;
  /** for organisations: their owners and rulesets (./rulesets.ts) */
  org?: OrgData;
}

export interface Label {
  id: number;
  name: string;
  color: string;
  description: string | null;
  default: boolean;
}

export interface Repo {
  id: number;
  owner: User;
  name: string;
  private: boolean;
  defaultBranch: string;
  gitDir: string;
  collaborators: Map<string, Role>;
  labels: Map<string, Label>;
  nextNumber: number;
  createdAt: string;
  updatedAt: string;
  pushedAt: string;
  description: string | null;
  /** the repository this one was forked from */
  forkOf?: number;
  /** the repository's rulesets (src/local-github/rulesets.ts) */
  rulesets?: Ruleset[];
  /** its Actions permissions; none = GitHub's default, enabled with all actions allowed (src/local-github/actions-permissions.ts) */
  actionsPermissions?: ActionsPermissions;
  /** its Actions secrets and the key they are sealed with (src/local-github/secrets.ts) */
  secrets?: RepoSecrets;
  /** branch protection by branch name (src/local-github/branch-protection.ts) */
  protection?: Map<string, BranchProtection>;
  /** its pull request settings; none = GitHub's defaults, every merge method allowed (src/local-github/repo-settings.ts) */
  settings?: RepoSettings;
}

export interface App {
  id: number;
  clientId: string;
  slug: string;
  name: string;
  owner: User;
  publicKeyPem: string;
  webhookUrl: string | null;
  webhookSecret: string | null;
  permissions: Permissions;
  events: string[];
  /** Where a person goes after installing the App (`?installation_id=…&setup_action=install`). */
  setupUrl?: string | null;
  bot: User;
  createdAt: string;
}

export interface Installation {
  id: number;
  appId: number;
  account: User;
  /** "all" or the ids of selected repositories */
  repositories: "all" | number[];
  permissions: Permissions;
  events: string[];
  createdAt: string;
  updatedAt: string;
  /** set while the installation is suspended (its tokens answer 403; no webhooks are sent) */
  suspended?: { at: string; by: User };
}

export type TokenKind = "installation" | "workflow" | "user";

export interface Token {
  token: string;
  kind: TokenKind;
  /** the user the token acts as (bot for installation/workflow tokens) */
  actor: User;
  installationId?: number;
  appId?: number;
  /** repository restriction (installation/workflow tokens); undefined = all the installation's */
  repoIds?: number[];
  permissions: Permissions;
  expiresAt: number;
  /** set for a workflow's GITHUB_TOKEN: events it causes start no workflows */
  workflowRunId?: number;
}

export interface PullData {
  /** set when the head branch is in a fork (`headRef` names a branch of that repository) */
  headRepoId?: number;
  headRef: string;
  headSha: string;
  baseRef: string;
  /** base tip when the PR was last computed */
  baseSha: string;
  draft: boolean;
  merged: boolean;
  mergedAt: string | null;
  mergedBy: User | null;
  mergeCommitSha: string | null;
  maintainerCanModify: boolean;
  /** logins whose review was requested and not yet given */
  requestedReviewers?: string[];
  /** auto-merge, while enabled (../auto-merge.ts) */
  autoMerge?: { who: { actor: User; token?: Token }; method: string; commitTitle?: string; commitMessage?: string; enabledAt: string };
}

export interface Issue {
  id: number;
  number: number;
  repoId: number;
  title: string;
  body: string | null;
  user: User;
  state: "open" | "closed";
  stateReason: "completed" | "not_planned" | "reopened" | null;
  labels: string[];
  assignees: User[];
  locked: boolean;
  comments: number;
  createdAt: string;
  updatedAt: string;
  closedAt: string | null;
  closedBy: User | null;
  pull?: PullData;
  /** App that created it through an installation token */
  viaAppId?: number;
  /**
   * When its body was last edited (GraphQL `Issue.lastEditedAt`, "the moment the editor made the
   * last edit": docs.github.com/graphql/reference/objects#issue); unset while never edited.
   */
  lastEditedAt?: string;
  /** the id of its parent issue (sub-issues: ./rest/issue-tree.ts) */
  parentId?: number;
  /** the ids of its sub-issues, in their order */
  subIssueIds?: number[];
  /** the ids of the issues it is blocked by (issue dependencies: ./rest/issue-tree.ts) */
  blockedByIds?: number[];
}

export interface Comment {
  id: number;
  repoId: number;
  issueNumber: number;
  body: string;
  user: User;
  createdAt: string;
  updatedAt: string;
  viaAppId?: number;
  reactions: Reaction[];
}

export interface Reaction {
  id: number;
  user: User;
  content: string;
  createdAt: string;
}

export interface Review {
  id: number;
  repoId: number;
  number: number;
  user: User;
  body: string;
  state: "APPROVED" | "CHANGES_REQUESTED" | "COMMENTED" | "DISMISSED";
  commitId: string;
  submittedAt: string;
}

/** An inline comment of a review, or a reply in its thread (`inReplyTo`). */
export interface ReviewComment {
  id: number;
  repoId: number;
  number: number;
  reviewId: number;
  user: User;
  body: string;
  path: string;
  line: number;
  side: "LEFT" | "RIGHT";
  commitId: string;
  diffHunk: string;
  inReplyTo?: number;
  createdAt: string;
}

export interface CheckSuite {
  id: number;
  repoId: number;
  appId: number;
  headSha: string;
  headBranch: string | null;
  before: string | null;
  after: string | null;
  status: "queued" | "in_progress" | "completed";
  conclusion: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface CheckRunAction {
  label: string;
  description: string;
  identifier: string;
}

export interface CheckRun {
  id: number;
  repoId: number;
  suiteId: number;
  appId: number;
  name: string;
  headSha: string;
  status: "queued" | "in_progress" | "completed" | "waiting" | "requested" | "pending";
  conclusion: string | null;
  startedAt: string | null;
  completedAt: string | null;
  externalId: string | null;
  detailsUrl: string | null;
  output: { title: string | null; summary: string | null; text: string | null; annotations_count: number };
  actions: CheckRunAction[];
  /** Lines of code the run annotated (through the Checks API, or a job's `::error::` workflow commands). */
  annotations?: CheckAnnotation[];
}

/** A check run as GitHub creates it: queued, started now, no output yet. */
export function queuedCheckRun(fields: Pick<CheckRun, "id" | "repoId" | "suiteId" | "appId" | "name" | "headSha">): CheckRun {
  return {
    ...fields,
    status: "queued",
    conclusion: null,
    startedAt: now(),
    completedAt: null,
    externalId: null,
    detailsUrl: null,
    output: { title: null, summary: null, text: null, annotations_count: 0 },
    actions: [],
  };
}

export interface CheckAnnotation {
  path: string;
  startLine: number;
  endLine: number;
  level: "notice" | "warning" | "failure";
  message: string;
  title: string | null;
}

export interface CommitStatus {
  id: number;
  repoId: number;
  sha: string;
  state: "error" | "failure" | "pending" | "success";
  context: string;
  description: string | null;
  targetUrl: string | null;
  creator: User;
  createdAt: string;
  updatedAt: string;
}

export interface WorkflowFile {
  id: number;
  repoId: number;
  path: string;
  name: string;
  createdAt: string;
}

export interface Job {
  id: number;
  runId: number;
  name: string;
  status: "queued" | "in_progress" | "completed" | "waiting";
  conclusion: string | null;
  createdAt: string;
  startedAt: string;
  completedAt: string | null;
  steps: Array<{
    name: string;
    status: "queued" | "in_progress" | "completed";
    conclusion: string | null;
    number: number;
    started_at: string | null;
    completed_at: string | null;
  }>;
  log: string;
  checkRunId: number;
}

export interface WorkflowRun {
  id: number;
  repoId: number;
  workflowId: number;
  name: string;
  path: string;
  runNumber: number;
  runAttempt: number;
  event: string;
  status: "requested" | "queued" | "in_progress" | "completed" | "waiting" | "pending";
  conclusion: string | null;
  headBranch: string;
  headSha: string;
  /** the repository the head commit comes from: a fork's for a pull request from a fork */
  headRepoId: number;
  /** GITHUB_REF and GITHUB_SHA of its jobs (for pull_request the test merge commit, refs/pull/N/merge) */
  ref: string;
  sha: string;
  /** the triggering event's webhook payload (GITHUB_EVENT_PATH); none for workflow_dispatch, which the runner builds */
  eventPayload?: Record<string, unknown>;
  actor: User;
  triggeringActor: User;
  inputs: Record<string, string>;
  yaml: string;
  displayTitle: string;
  createdAt: string;
  updatedAt: string;
  runStartedAt: string;
  checkSuiteId: number;
  jobs: Job[];
  cancelRequested: boolean;
  /** The run's own annotations, not a job's: an invalid workflow file's ("Invalid workflow file"), whose run has no jobs. */
  annotations?: CheckAnnotation[];
}

export interface Hook {
  id: number;
  /** App hooks receive events of all the App's installations; repository hooks one repo's */
  targetType: "integration" | "repository";
  targetId: number;
  url: string;
  secret: string | null;
  events: string[];
}

export interface Delivery {
  id: number;
  guid: string;
  hookId: number;
  event: string;
  action: string | null;
  installationId: number | null;
  repositoryId: number | null;
  payload: unknown;
  body: string;
  headers: Record<string, string>;
  deliveredAt: string | null;
  status: "pending" | "ok" | "failed" | "dropped";
  statusCode: number;
  error: string | null;
  redelivery: boolean;
  attempts: number;
  durationMs: number;
}

export class SimState {
  private nextId = 1000;
  users = new Map<string, User>();
  repos = new Map<number, Repo>();
  apps = new Map<number, App>();
  installations = new Map<number, Installation>();
  tokens = new Map<string, Token>();
  issues = new Map<string, Issue>(); // `${repoId}#${number}`
  comments = new Map<number, Comment>();
  reviews: Review[] = [];
  reviewComments: ReviewComment[] = [];
  suites = new Map<number, CheckSuite>();
  checkRuns = new Map<number, CheckRun>();
  statuses: CommitStatus[] = [];
  workflows = new Map<string, WorkflowFile>(); // `${repoId}:${path}`
  runs = new Map<number, WorkflowRun>();
  hooks = new Map<number, Hook>();
  deliveries: Delivery[] = [];
  runCounters = new Map<number, number>(); // per workflow

  id(): number {
    return this.nextId++;
  }

  repoByName(owner: string, name: string): Repo | undefined {
    for (const r of this.repos.values()) {
      if (r.owner.login.toLowerCase() === owner.toLowerCase() && r.name.toLowerCase() === name.toLowerCase()) return r;
    }
    return undefined;
  }

  issue(repoId: number, number: number): Issue | undefined {
    return this.issues.get(`${repoId}#${number}`);
  }

  issuesOf(repoId: number): Issue[] {
    return [...this.issues.values()].filter((i) => i.repoId === repoId).sort((a, b) => a.number - b.number);
  }

  installationsFor(repo: Repo): Installation[] {
    return [...this.installations.values()].filter(
      (i) => i.account.id === repo.owner.id && (i.repositories === "all" || i.repositories.includes(repo.id)),
    );
  }

  /** An issue (or pull request) by its id, the `id` the REST API gives, not its number. */
  issueById(id: number): Issue | undefined {
    for (const i of this.issues.values()) if (i.id === id) return i;
    return undefined;
  }

  userById(id: number): User | undefined {
    for (const u of this.users.values()) if (u.id === id) return u;
    return undefined;
  }
}

export function now(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
}
