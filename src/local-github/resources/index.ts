// Builders of GitHub's JSON objects (users, repositories, pulls, checks, runs…) from the
// simulator's state. Every object is checked against GitHub's schema where it is sent, so a
// missing or mistyped field is caught by the validator rather than by Forge in production.
//
// The folder, by subject:
//   index.ts     `Model`, which the rest of the local GitHub calls; each builder lives in a file below
//   ids.ts       node ids, and the object type the builders return
//   accounts.ts  users, Apps, installations
//   repos.ts     repositories, minimal and full
//   issues.ts    issues, pull requests, labels, comments, reactions, reviews
//   commits.ts   git commits, REST commits, refs
//   checks.ts    check suites, check runs, commit statuses
//   actions.ts   workflows, workflow runs, jobs
import type { CommitInfo } from "../git/index.js";
import type {
  App,
  CheckRun,
  CheckSuite,
  Comment,
  CommitStatus,
  Installation,
  Issue,
  Job,
  Label,
  Reaction,
  Repo,
  Review,
  SimState,
  User,
  WorkflowFile,
  WorkflowRun,
} from "../state.js";
import * as accounts from "./accounts.js";
import * as actions from "./actions.js";
import * as checks from "./checks.js";
import * as commits from "./commits.js";
import type { O } from "./ids.js";
import * as issues from "./issues.js";
import * as repos from "./repos.js";

export { nodeId } from "./ids.js";

export class Model {
  constructor(
    readonly state: SimState,
    /** web root, e.g. http://127.0.0.1:4000 */
    readonly web: () => string,
  ) {}

  get api(): string {
    return `${this.web()}/api/v3`;
  }

  user(u: User): O {
    return accounts.user(this, u);
  }

  minimalRepo(r: Repo): O {
    return repos.minimalRepo(this, r);
  }

  repo(r: Repo, opts?: { timestamps?: "unix"; permissionsFor?: User }): O {
    return repos.repo(this, r, opts);
  }

  app(a: App): O {
    return accounts.app(this, a);
  }

  installation(i: Installation): O {
    return accounts.installation(this, i);
  }

  label(repo: Repo, l: Label): O {
    return issues.label(this, repo, l);
  }

  association(repo: Repo, u: User): string {
    return issues.association(repo, u);
  }

  issueReactions = new Map<string, Reaction[]>();

  issue(repo: Repo, i: Issue): O {
    return issues.issue(this, repo, i);
  }

  comment(repo: Repo, c: Comment): O {
    return issues.comment(this, repo, c);
  }

  reaction(r: Reaction): O {
    return issues.reaction(this, r);
  }

  pull(repo: Repo, i: Issue, opts?: { full: boolean; mergeable?: boolean | null; mergeableState?: string }): O {
    return issues.pull(this, repo, i, opts);
  }

  review(repo: Repo, r: Review): O {
    return issues.review(this, repo, r);
  }

  gitUser(id: { name: string; email: string; date: string }): O {
    return commits.gitUser(id);
  }

  gitCommit(repo: Repo, c: CommitInfo): O {
    return commits.gitCommit(this, repo, c);
  }

  commit(repo: Repo, c: CommitInfo): O {
    return commits.commit(this, repo, c);
  }

  userByEmail(email: string): O | null {
    return accounts.userByEmail(this, email);
  }

  ref(repo: Repo, ref: string, sha: string): O {
    return commits.ref(this, repo, ref, sha);
  }

  suite(repo: Repo, s: CheckSuite, prs?: O[]): O {
    return checks.suite(this, repo, s, prs);
  }

  checkRun(repo: Repo, c: CheckRun, prs?: O[]): O {
    return checks.checkRun(this, repo, c, prs);
  }

  checkRunForHook(repo: Repo, c: CheckRun, prs?: O[]): O {
    return checks.checkRunForHook(this, repo, c, prs);
  }

  status(s: CommitStatus): O {
    return checks.status(this, s);
  }

  workflow(repo: Repo, w: WorkflowFile): O {
    return actions.workflow(this, repo, w);
  }

  run(repo: Repo, r: WorkflowRun, headCommit: CommitInfo | null): O {
    return actions.run(this, repo, r, headCommit);
  }

  job(repo: Repo, run: WorkflowRun, j: Job): O {
    return actions.job(this, repo, run, j);
  }

  /** GitHub's error body: `{message, documentation_url}` (+ `status` as a string, as GitHub sends). */
  static error(message: string, status: number, doc = "https://docs.github.com/rest", extra: O = {}): O {
    return { message, documentation_url: doc, status: String(status), ...extra };
  }
}
