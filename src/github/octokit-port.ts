/**
 * The GitHub port over Octokit: with `app-client.ts` (the App's own calls) and `instrument.ts`
 * (request counts and timings), the only code of the App that touches Octokit. Probot's Octokit
 * already carries the throttling and retry plugins (secondary rate limits answered with 403/429 and
 * `retry-after` are waited out; 5xx retried; 4xx except 429 never retried).
 */
import type { ProbotOctokit } from "probot";
import { updatePullBranch, type BranchUpdateResult } from "./branch-update.js";
import { readCiChecks, type CiChecks } from "./ci-checks.js";
import { protectionContexts } from "./required-checks.js";
import { mergePull, readBranchRules, readRulesetName, type BranchRule, type MergeMethod } from "./merge-rules.js";
import { readEndedJobs } from "./rule-refusals.js";
import { mergeQueuePort, type MergeQueuePort } from "./merge-queue.js";
import { webUrlOf } from "./web-url.js";
import {
  ConflictError,
  GitHubError,
  type CheckRunFields,
  type EndedJobs,
  type FileAt,
  type GitHubPort,
  type MergeResult,
  type PullMergeResult,
  type PullRequestInfo,
  type ReviewInfo,
  type WorkflowRunInfo,
} from "./port.js";
import { checkBody, pull, reviewInfo, runInfo, statusOf, wrap } from "./octokit-rest.js";
import {
  changeRequestsOf,
  ISSUE_AS_EDITED,
  PULL_WITH_FILES,
  pullInfo,
  readFilesInBatches,
  type GraphqlBlob,
  type GraphqlPull,
  type IssueAsEdited,
} from "./octokit-graphql.js";

export type Octokit = InstanceType<typeof ProbotOctokit>;
export type { CiChecks };

/** Files `readFiles` asks GitHub's GraphQL for in one query. */
export const READ_FILES_BATCH = 100;

export class OctokitPort implements GitHubPort {
  readonly #octokit: Octokit;
  readonly queue: MergeQueuePort;
  #repositoryInfo: { defaultBranch: string; id: number } | undefined;
  #repositoryId: number | undefined;

  constructor(
    octokit: Octokit,
    readonly owner: string,
    readonly repo: string,
    /** The App's own login (`<slug>[bot]`), asked for when first needed: a marker counts only in what it wrote. */
    private readonly self?: () => Promise<string | undefined>,
    /** GitHub's web root, from the API root the Octokit talks to: where the links Forge writes go (web-url.ts). */
    readonly webUrl: string = webUrlOf(octokit.request?.endpoint?.DEFAULTS?.baseUrl ?? "https://api.github.com"),
  ) {
    this.#octokit = octokit;
    this.queue = mergeQueuePort(octokit, { owner, repo });
  }

  /** Whom a marker is looked for from: the App's own login, or anyone when it is not known. */
  async #author(): Promise<(user: { login?: string } | null | undefined) => boolean> {
    const self = await this.self?.();
    return (user) => self === undefined || user?.login === self;
  }

  get #r() {
    return { owner: this.owner, repo: this.repo };
  }

  async #call<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      throw wrap(operation, e);
    }
  }

  async #repository(): Promise<{ defaultBranch: string; id: number }> {
    this.#repositoryInfo ??= await this.#call("repos.get", async () => {
      const { data } = await this.#octokit.rest.repos.get(this.#r);
      return { defaultBranch: data.default_branch, id: data.id };
    });
    return this.#repositoryInfo;
  }

  async defaultBranch(): Promise<string> {
    return (await this.#repository()).defaultBranch;
  }

  async repositoryId(): Promise<number> {
    return this.#repositoryId ?? (this.#repositoryId = (await this.#repository()).id);
  }

  knowRepositoryId = (id: number): void => void (this.#repositoryId = id);

  async branchHead(branch: string): Promise<string | null> {
    try {
      return (await this.#octokit.rest.git.getRef({ ...this.#r, ref: `heads/${branch}` })).data.object.sha;
    } catch (e) {
      if (statusOf(e) === 404) return null;
      throw wrap("git.getRef", e);
    }
  }

  async createBranch(branch: string, sha: string): Promise<boolean> {
    try {
      await this.#octokit.rest.git.createRef({ ...this.#r, ref: `refs/heads/${branch}`, sha });
      return true;
    } catch (e) {
      // "Reference already exists" is a 422: the branch is there, which is what was wanted. Other 422s
      // ("… is not a valid ref name.", "Reference update failed" when a branch is in its way) mean
      // there is no such branch, and never will be: they fail with GitHub's words.
      const message = (e as { response?: { data?: { message?: string } } }).response?.data?.message ?? "";
      if (statusOf(e) === 422 && /already exists/i.test(message)) return false;
      throw wrap("git.createRef", e);
    }
  }

  async deleteBranch(branch: string): Promise<void> {
    try {
      await this.#octokit.rest.git.deleteRef({ ...this.#r, ref: `heads/${branch}` });
    } catch (e) {
      if (statusOf(e) === 422 || statusOf(e) === 404) return;
      throw wrap("git.deleteRef", e);
    }
  }

  async listBranches(prefix: string): Promise<{ name: string; sha: string }[]> {
    return this.#call("git.listMatchingRefs", async () => {
      const refs = await this.#octokit.paginate(this.#octokit.rest.git.listMatchingRefs, {
        ...this.#r,
        ref: `heads/${prefix}`,
        per_page: 100,
      });
      return refs.map((r) => ({ name: r.ref.replace(/^refs\/heads\//, ""), sha: r.object.sha }));
    });
  }

  async mergeBranch(base: string, head: string, message: string): Promise<MergeResult> {
    try {
      const res = await this.#octokit.rest.repos.merge({ ...this.#r, base, head, commit_message: message });
      // 201 merged; 204 "nothing to merge" (base already contains head).
      if ((res.status as number) === 204) return { kind: "noop" };
      return { kind: "merged", sha: res.data.sha };
    } catch (e) {
      // 409 is "Merge conflict", unless a rule refused (a merge commit under a linear history).
      if (statusOf(e) === 409 && !/rule|protected|merge commits/i.test(wrap("repos.merge", e).message)) return { kind: "conflict" };
      throw wrap("repos.merge", e);
    }
  }

  async compareCommits(base: string, head: string): Promise<"ahead" | "behind" | "identical" | "diverged"> {
    return this.#call("repos.compareCommits", async () => {
      // One commit per page: only the status is read, not the commit list or the files.
      const { data } = await this.#octokit.rest.repos.compareCommits({ ...this.#r, base, head, per_page: 1 });
      return data.status;
    });
  }

  async commit(sha: string): Promise<{ sha: string; message: string; parents: string[] }> {
    return this.#call("git.getCommit", async () => {
      const { data } = await this.#octokit.rest.git.getCommit({ ...this.#r, commit_sha: sha });
      return { sha: data.sha, message: data.message, parents: data.parents.map((p) => p.sha) };
    });
  }

  async readFile(path: string, ref: string): Promise<FileAt | null> {
    try {
      const { data } = await this.#octokit.rest.repos.getContent({ ...this.#r, path, ref });
      if (Array.isArray(data) || data.type !== "file") return null;
      // Files of 1–100 MB come without their content (`encoding: "none"`) unless the raw media type is
      // asked for (GitHub changelog, 2022-05-03); the blob API serves them base64-encoded up to 100 MB.
      // A long run's journal grows past 1 MB.
      const base64 =
        data.encoding === "none" ? (await this.#octokit.rest.git.getBlob({ ...this.#r, file_sha: data.sha })).data.content : data.content;
      return { content: Buffer.from(base64, "base64").toString("utf8"), blobSha: data.sha };
    } catch (e) {
      if (statusOf(e) === 404) return null;
      throw wrap("repos.getContent", e);
    }
  }

  async readFiles(paths: readonly string[], ref: string): Promise<Map<string, FileAt | null>> {
    return readFilesInBatches(
      this.owner,
      this.repo,
      ref,
      paths,
      READ_FILES_BATCH,
      (query, vars) =>
        this.#call("graphql repository.object", () => this.#octokit.graphql<{ repository: Record<string, GraphqlBlob> }>(query, vars)),
      (path) => this.readFile(path, ref),
    );
  }

  async listDirectory(path: string, ref: string): Promise<{ name: string; path: string; type: "file" | "dir"; size: number }[]> {
    try {
      const { data } = await this.#octokit.rest.repos.getContent({ ...this.#r, path, ref });
      if (!Array.isArray(data)) return [];
      return data
        .filter((d) => d.type === "file" || d.type === "dir")
        .map((d) => ({ name: d.name, path: d.path, type: d.type as "file" | "dir", size: d.size }));
    } catch (e) {
      if (statusOf(e) === 404) return [];
      throw wrap("repos.getContent", e);
    }
  }

  async writeFile(
    branch: string,
    path: string,
    content: string,
    message: string,
    expectedBlobSha?: string,
  ): Promise<{ blobSha: string; commitSha: string }> {
    try {
      const { data } = await this.#octokit.rest.repos.createOrUpdateFileContents({
        ...this.#r,
        branch,
        path,
        message,
        content: Buffer.from(content, "utf8").toString("base64"),
        ...(expectedBlobSha ? { sha: expectedBlobSha } : {}),
      });
      return { blobSha: data.content?.sha ?? "", commitSha: data.commit.sha ?? "" };
    } catch (e) {
      // The contents API is a compare-and-swap on the file's blob sha: 409 when it moved, and 422
      // when `sha` is missing for a file that now exists (someone created it first). A 409 of the
      // repository's rules ("Repository rule violations found") is no race: reading again changes nothing.
      const status = statusOf(e);
      const ruled = /rule violations/i.test((e as { message?: string }).message ?? "");
      if ((status === 409 && !ruled) || (status === 422 && !expectedBlobSha))
        throw new ConflictError("repos.createOrUpdateFileContents", `${path} on ${branch} changed since it was read`);
      throw wrap("repos.createOrUpdateFileContents", e);
    }
  }

  async dispatchWorkflow(workflow: string, ref: string, inputs: Record<string, string>): Promise<{ workflowRunId?: number }> {
    return this.#call("actions.createWorkflowDispatch", async () => {
      // Since February 2026 `return_run_details: true` answers 200 with the new run's id instead of 204.
      const res = await this.#octokit.request("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", {
        ...this.#r,
        workflow_id: workflow,
        ref,
        inputs,
        return_run_details: true,
        // Not retried here: a 5xx may come after GitHub created the run, and a second dispatch would
        // start the same attempt twice. The caller looks for the run on the branch before trying again.
        request: { retries: 0 },
      } as never);
      const data = (res as { data?: { workflow_run_id?: number } }).data;
      return data && typeof data.workflow_run_id === "number" ? { workflowRunId: data.workflow_run_id } : {};
    });
  }

  async listWorkflowRuns(workflow: string, filter: { branch?: string; createdAfter?: string }): Promise<WorkflowRunInfo[]> {
    return this.#call("actions.listWorkflowRuns", async () => {
      const { data } = await this.#octokit.rest.actions.listWorkflowRuns({
        ...this.#r,
        workflow_id: workflow,
        per_page: 100,
        ...(filter.branch ? { branch: filter.branch } : {}),
      });
      // Filtered here rather than with `created=>=…`: the REST description types that parameter as a
      // plain date-time, so a range would not validate against it.
      const after = filter.createdAfter ? Date.parse(filter.createdAfter) : 0;
      // Runs listed by their workflow's file name are that file's, whether or not they say (GitHub Enterprise Server's do not).
      const file = /^\d+$/.test(workflow) ? undefined : workflow.startsWith(".github/") ? workflow : `.github/workflows/${workflow}`;
      return data.workflow_runs
        .filter((r) => Date.parse(r.created_at) >= after)
        .map((r) => ({ ...runInfo(r), ...(r.path ? {} : { path: file }) }));
    });
  }

  async getWorkflowRun(id: number): Promise<WorkflowRunInfo | null> {
    try {
      return runInfo((await this.#octokit.rest.actions.getWorkflowRun({ ...this.#r, run_id: id })).data);
    } catch (e) {
      if (statusOf(e) === 404) return null;
      throw wrap("actions.getWorkflowRun", e);
    }
  }

  endedJobs(runId: number): Promise<EndedJobs> {
    return readEndedJobs(this.#octokit, this.#r, runId);
  }

  async cancelWorkflowRun(id: number): Promise<void> {
    try {
      await this.#octokit.rest.actions.cancelWorkflowRun({ ...this.#r, run_id: id });
    } catch (e) {
      if (statusOf(e) === 409) return; // the run already finished: nothing left to cancel
      throw wrap("actions.cancelWorkflowRun", e);
    }
  }

  async createCheckRun(fields: CheckRunFields): Promise<number> {
    const body = checkBody(fields) as { name: string; head_sha: string };
    return this.#call("checks.create", async () => (await this.#octokit.rest.checks.create({ ...this.#r, ...body })).data.id);
  }

  async ciChecks(headSha: string, names: readonly string[]): Promise<CiChecks> {
    return this.#call("checks.listForRef", () => readCiChecks(this.#octokit, this.#r, headSha, names));
  }

  async findCheckRun(headSha: string, name: string, externalId: string): Promise<number | null> {
    return (await this.listCheckRuns(headSha, name)).find((c) => c.externalId === externalId)?.id ?? null;
  }

  async listCheckRuns(headSha: string, name: string): Promise<{ id: number; externalId: string | null; summary: string | null }[]> {
    return this.#call("checks.listForRef", async () => {
      const query = { ...this.#r, ref: headSha, check_name: name, filter: "all" as const, per_page: 100 };
      const { data } = await this.#octokit.rest.checks.listForRef(query);
      return data.check_runs.map((c) => ({ id: c.id, externalId: c.external_id ?? null, summary: c.output?.summary ?? null }));
    });
  }

  async updateCheckRun(id: number, fields: Partial<CheckRunFields>): Promise<void> {
    await this.#call("checks.update", () => this.#octokit.rest.checks.update({ ...this.#r, check_run_id: id, ...checkBody(fields) }));
  }

  async findPullRequest(head: string, state: "open" | "closed" | "all" = "all"): Promise<PullRequestInfo | null> {
    return this.#call("pulls.list", async () => {
      const { data } = await this.#octokit.rest.pulls.list({ ...this.#r, head: `${this.owner}:${head}`, state, per_page: 10 });
      const first = data[0];
      return first ? pull(first) : null;
    });
  }

  async getPullRequest(number: number): Promise<PullRequestInfo> {
    return this.#call("pulls.get", async () => pull((await this.#octokit.rest.pulls.get({ ...this.#r, pull_number: number })).data));
  }

  async getPullRequestWithFiles(number: number): Promise<PullRequestInfo & { files: string[]; changeRequests: ReviewInfo[] }> {
    const data = await this.#call("graphql pullRequest", () =>
      this.#octokit.graphql<{ repository: { pullRequest: GraphqlPull | null } | null }>(PULL_WITH_FILES, {
        owner: this.#r.owner,
        name: this.#r.repo,
        number,
      }),
    );
    const p = data.repository?.pullRequest;
    if (!p) throw new GitHubError(`pull request #${number} not found`, 404, "graphql pullRequest");
    const info = pullInfo(p);
    // GraphQL names a renamed file by its new path only: REST lists its old one too.
    const nodes = p.files?.nodes ?? [];
    const files =
      p.files?.pageInfo.hasNextPage || nodes.some((f) => f.changeType === "RENAMED")
        ? await this.listPullRequestFiles(number)
        : nodes.map((f) => f.path);
    return { ...info, files, changeRequests: changeRequestsOf(p) };
  }

  async createPullRequest(fields: { head: string; base: string; title: string; body: string; draft?: boolean }): Promise<PullRequestInfo> {
    return this.#call("pulls.create", async () => pull((await this.#octokit.rest.pulls.create({ ...this.#r, ...fields })).data));
  }

  async updatePullRequest(number: number, fields: { title?: string; body?: string; state?: "open" | "closed" }): Promise<void> {
    await this.#call("pulls.update", () => this.#octokit.rest.pulls.update({ ...this.#r, pull_number: number, ...fields }));
  }

  async listPullRequestFiles(number: number): Promise<string[]> {
    return this.#call("pulls.listFiles", async () => {
      const files = await this.#octokit.paginate(this.#octokit.rest.pulls.listFiles, { ...this.#r, pull_number: number, per_page: 100 });
      return files.flatMap((f) => (f.previous_filename ? [f.filename, f.previous_filename] : [f.filename]));
    });
  }

  mergePullRequest(number: number, fields: { sha?: string; method?: MergeMethod; title?: string }): Promise<PullMergeResult> {
    return mergePull(this.#octokit, this.owner, this.repo, number, fields);
  }

  updatePullRequestBranch(number: number, expectedHeadSha: string): Promise<BranchUpdateResult> {
    return updatePullBranch(this.#octokit, this.owner, this.repo, number, expectedHeadSha);
  }

  branchRules(branch: string): Promise<BranchRule[]> {
    return readBranchRules(this.#octokit, this.owner, this.repo, branch);
  }

  rulesetName(id: number): Promise<string> {
    return readRulesetName(this.#octokit, this.owner, this.repo, id);
  }

  async protectionChecks(branch: string): Promise<string[]> {
    // A branch that does not exist (yet) has no protection of its own.
    return this.#call("repos.getBranch", async () => {
      try {
        return protectionContexts((await this.#octokit.rest.repos.getBranch({ ...this.#r, branch })).data);
      } catch (e) {
        if (statusOf(e) === 404) return [];
        throw e;
      }
    });
  }

  async findIssue(label: string, marker: string): Promise<number | null> {
    const mine = await this.#author();
    return this.#call("issues.listForRepo", async () => {
      const { data } = await this.#octokit.rest.issues.listForRepo({
        ...this.#r,
        labels: label,
        state: "all",
        sort: "created",
        direction: "desc",
        per_page: 100,
      });
      return data.find((i) => !i.pull_request && mine(i.user) && (i.body ?? "").includes(marker))?.number ?? null;
    });
  }

  async createIssue(fields: { title: string; body: string; labels?: string[] }): Promise<number> {
    return this.#call("issues.create", async () => (await this.#octokit.rest.issues.create({ ...this.#r, ...fields })).data.number);
  }

  async updateIssue(
    number: number,
    fields: { title?: string; body?: string; state?: "open" | "closed"; labels?: string[] },
  ): Promise<void> {
    await this.#call("issues.update", () => this.#octokit.rest.issues.update({ ...this.#r, issue_number: number, ...fields }));
  }

  async getIssue(number: number) {
    return this.#call("issues.get", async () => {
      const { data } = await this.#octokit.rest.issues.get({ ...this.#r, issue_number: number });
      return {
        number: data.number,
        title: data.title,
        body: data.body ?? "",
        state: data.state === "open" ? ("open" as const) : ("closed" as const),
        labels: data.labels.map((l) => (typeof l === "string" ? l : (l.name ?? ""))),
        isPullRequest: !!data.pull_request,
        ...(data.closed_by?.login ? { closedBy: data.closed_by.login } : {}),
      };
    });
  }

  async issueAsEdited(number: number): Promise<{ title: string; body: string; lastEditedAt: string | null }> {
    const data = await this.#call("graphql issue", () =>
      this.#octokit.graphql<IssueAsEdited>(ISSUE_AS_EDITED, { owner: this.#r.owner, name: this.#r.repo, number }),
    );
    const issue = data.repository?.issue;
    if (!issue) throw new GitHubError(`issue #${number} not found`, 404, "graphql issue");
    return issue;
  }

  async findComment(issue: number, marker: string): Promise<number | null> {
    const mine = await this.#author();
    return this.#call("issues.listComments", async () => {
      const all = await this.#octokit.paginate(this.#octokit.rest.issues.listComments, { ...this.#r, issue_number: issue, per_page: 100 });
      return all.find((c) => mine(c.user) && (c.body ?? "").includes(marker))?.id ?? null;
    });
  }

  async createComment(issue: number, body: string): Promise<number> {
    return this.#call(
      "issues.createComment",
      async () => (await this.#octokit.rest.issues.createComment({ ...this.#r, issue_number: issue, body })).data.id,
    );
  }

  async updateComment(id: number, body: string): Promise<void> {
    await this.#call("issues.updateComment", () => this.#octokit.rest.issues.updateComment({ ...this.#r, comment_id: id, body }));
  }

  async addReaction(
    target: { commentId: number } | { issue: number },
    content: "+1" | "-1" | "eyes" | "rocket" | "confused",
  ): Promise<void> {
    await this.#call("reactions.create", () =>
      "commentId" in target
        ? this.#octokit.rest.reactions.createForIssueComment({ ...this.#r, comment_id: target.commentId, content })
        : this.#octokit.rest.reactions.createForIssue({ ...this.#r, issue_number: target.issue, content }),
    );
  }

  async listReviews(number: number): Promise<ReviewInfo[]> {
    return this.#call("pulls.listReviews", async () => {
      const { data } = await this.#octokit.rest.pulls.listReviews({ ...this.#r, pull_number: number, per_page: 100 });
      return data.map(reviewInfo);
    });
  }

  async permission(user: string): Promise<string> {
    try {
      const { data } = await this.#octokit.rest.repos.getCollaboratorPermissionLevel({ ...this.#r, username: user });
      return data.permission;
    } catch (e) {
      if (statusOf(e) === 404) return "none";
      throw wrap("repos.getCollaboratorPermissionLevel", e);
    }
  }
}
