/**
 * The port's issue-tree calls over Octokit: sub-issues and "blocked by" dependencies
 * (docs.github.com/rest/issues/sub-issues, /rest/issues/issue-dependencies), and a plan's files as one
 * commit (docs.github.com/rest/git/trees, /rest/git/commits, /rest/git/refs). A subclass, so the
 * port's main file keeps to its size.
 */
import type { ProbotOctokit } from "probot";
import { OctokitPort } from "./octokit-port.js";
import { wrap } from "./octokit-rest.js";
import type { LinkedIssue } from "./port.js";

type Octokit = InstanceType<typeof ProbotOctokit>;

/** An issue of a sub-issue or dependency list, as GitHub sends it (`issue` in the description). */
interface IssueJson {
  id: number;
  number: number;
  title: string;
  body?: string | null;
  state: string;
  labels?: (string | { name?: string })[];
  repository_url?: string;
}

export class OctokitIssuesPort extends OctokitPort {
  readonly #o: Octokit;

  constructor(octokit: Octokit, owner: string, repo: string, self?: () => Promise<string | undefined>, webUrl?: string) {
    super(octokit, owner, repo, self, ...(webUrl !== undefined ? [webUrl] : []));
    this.#o = octokit;
  }

  #linked(i: IssueJson): LinkedIssue {
    // `repository_url` ends with /repos/{owner}/{repo}; GitHub's names are case-insensitive.
    const tail = `/repos/${this.owner}/${this.repo}`.toLowerCase();
    return {
      id: i.id,
      number: i.number,
      title: i.title,
      body: i.body ?? "",
      state: i.state === "closed" ? "closed" : "open",
      labels: (i.labels ?? []).map((l) => (typeof l === "string" ? l : (l.name ?? ""))),
      sameRepo: (i.repository_url ?? "").toLowerCase().endsWith(tail),
    };
  }

  async #list(route: string, operation: string, issue: number): Promise<LinkedIssue[]> {
    try {
      const { data } = await this.#o.request(route, { owner: this.owner, repo: this.repo, issue_number: issue, per_page: 100 });
      return (data as IssueJson[]).map((i) => this.#linked(i));
    } catch (e) {
      throw wrap(operation, e);
    }
  }

  subIssues(issue: number): Promise<LinkedIssue[]> {
    return this.#list("GET /repos/{owner}/{repo}/issues/{issue_number}/sub_issues", "issues.listSubIssues", issue);
  }

  blockedBy(issue: number): Promise<LinkedIssue[]> {
    return this.#list("GET /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by", "issues.listDependenciesBlockedBy", issue);
  }

  async commitFiles(
    branch: string,
    from: string,
    files: ReadonlyMap<string, string>,
    message: string,
  ): Promise<{ created: boolean; sha: string }> {
    const r = { owner: this.owner, repo: this.repo };
    let op = "git.getCommit";
    try {
      const base = (await this.#o.rest.git.getCommit({ ...r, commit_sha: from })).data.tree.sha;
      op = "git.createTree";
      const tree = [...files].map(([path, content]) => ({ path, mode: "100644" as const, type: "blob" as const, content }));
      const { data: t } = await this.#o.rest.git.createTree({ ...r, base_tree: base, tree });
      op = "git.createCommit";
      const { data: c } = await this.#o.rest.git.createCommit({ ...r, message, tree: t.sha, parents: [from] });
      return { created: await this.createBranch(branch, c.sha), sha: c.sha };
    } catch (e) {
      throw wrap(op, e);
    }
  }
}
