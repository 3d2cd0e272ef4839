// Builders of GitHub's JSON objects (users, repositories, pulls, checks, runs…) from the
// simulator's state. Every object is checked against GitHub's schema where it is sent, so a
// missing or mistyped field is caught by the validator rather than by Forge in production.
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
} from "./state.js";
import type { CommitInfo } from "./git/index.js";

type O = Record<string, unknown>;

/** Node ids are opaque base64 strings on GitHub; any stable unique string will do. */
export function nodeId(kind: string, id: number | string): string {
  return Buffer.from(`${kind}:${id}`).toString("base64").replace(/=+$/, "");
}

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
    // Logins like "dependabot[bot]" must be escaped to make valid URIs.
    const api = `${this.api}/users/${encodeURIComponent(u.login)}`;
    const slug = encodeURIComponent(u.type === "Bot" ? u.login.replace(/\[bot\]$/, "") : u.login);
    return {
      login: u.login,
      id: u.id,
      node_id: nodeId(u.type, u.id),
      avatar_url: `${this.web()}/avatars/u/${u.id}`,
      gravatar_id: "",
      url: api,
      html_url: u.type === "Bot" ? `${this.web()}/apps/${slug}` : `${this.web()}/${slug}`,
      followers_url: `${api}/followers`,
      following_url: `${api}/following{/other_user}`,
      gists_url: `${api}/gists{/gist_id}`,
      starred_url: `${api}/starred{/owner}{/repo}`,
      subscriptions_url: `${api}/subscriptions`,
      organizations_url: `${api}/orgs`,
      repos_url: `${api}/repos`,
      events_url: `${api}/events{/privacy}`,
      received_events_url: `${api}/received_events`,
      type: u.type,
      user_view_type: "public",
      site_admin: false,
    };
  }

  private repoUrls(r: Repo): O {
    const full = `${r.owner.login}/${r.name}`;
    const u = `${this.api}/repos/${full}`;
    return {
      url: u,
      html_url: `${this.web()}/${full}`,
      forks_url: `${u}/forks`,
      keys_url: `${u}/keys{/key_id}`,
      collaborators_url: `${u}/collaborators{/collaborator}`,
      teams_url: `${u}/teams`,
      hooks_url: `${u}/hooks`,
      issue_events_url: `${u}/issues/events{/number}`,
      events_url: `${u}/events`,
      assignees_url: `${u}/assignees{/user}`,
      branches_url: `${u}/branches{/branch}`,
      tags_url: `${u}/tags`,
      blobs_url: `${u}/git/blobs{/sha}`,
      git_tags_url: `${u}/git/tags{/sha}`,
      git_refs_url: `${u}/git/refs{/sha}`,
      trees_url: `${u}/git/trees{/sha}`,
      statuses_url: `${u}/statuses/{sha}`,
      languages_url: `${u}/languages`,
      stargazers_url: `${u}/stargazers`,
      contributors_url: `${u}/contributors`,
      subscribers_url: `${u}/subscribers`,
      subscription_url: `${u}/subscription`,
      commits_url: `${u}/commits{/sha}`,
      git_commits_url: `${u}/git/commits{/sha}`,
      comments_url: `${u}/comments{/number}`,
      issue_comment_url: `${u}/issues/comments{/number}`,
      contents_url: `${u}/contents/{+path}`,
      compare_url: `${u}/compare/{base}...{head}`,
      merges_url: `${u}/merges`,
      archive_url: `${u}/{archive_format}{/ref}`,
      downloads_url: `${u}/downloads`,
      issues_url: `${u}/issues{/number}`,
      pulls_url: `${u}/pulls{/number}`,
      milestones_url: `${u}/milestones{/number}`,
      notifications_url: `${u}/notifications{?since,all,participating}`,
      labels_url: `${u}/labels{/name}`,
      releases_url: `${u}/releases{/id}`,
      deployments_url: `${u}/deployments`,
    };
  }

  /** Minimal repository (check suites, installation repository lists). */
  minimalRepo(r: Repo): O {
    return {
      id: r.id,
      node_id: nodeId("Repository", r.id),
      name: r.name,
      full_name: `${r.owner.login}/${r.name}`,
      private: r.private,
      owner: this.user(r.owner),
      description: r.description,
      fork: r.forkOf !== undefined,
      ...this.repoUrls(r),
    };
  }

  /**
   * Full repository. `timestamps: "unix"` reproduces the push payload, where GitHub sends
   * created_at/pushed_at as integers (webhook-push schema allows integer or date-time).
   */
  repo(r: Repo, opts: { timestamps?: "unix"; permissionsFor?: User } = {}): O {
    const full = `${r.owner.login}/${r.name}`;
    const unix = (iso: string) => Math.floor(Date.parse(iso) / 1000);
    const openIssues = [...this.state.issues.values()].filter((i) => i.repoId === r.id && i.state === "open").length;
    const out: O = {
      ...this.minimalRepo(r),
      created_at: opts.timestamps === "unix" ? unix(r.createdAt) : r.createdAt,
      updated_at: r.updatedAt,
      pushed_at: opts.timestamps === "unix" ? unix(r.pushedAt) : r.pushedAt,
      git_url: `${this.web().replace(/^https?:/, "git:")}/${full}.git`,
      ssh_url: `git@${new URL(this.web()).host}:${full}.git`,
      clone_url: `${this.web()}/${full}.git`,
      svn_url: `${this.web()}/${full}`,
      mirror_url: null,
      homepage: null,
      size: 0,
      stargazers_count: 0,
      watchers_count: 0,
      language: null,
      has_issues: true,
      has_projects: false,
      has_downloads: true,
      has_wiki: false,
      has_pages: false,
      has_discussions: false,
      forks_count: 0,
      archived: false,
      disabled: false,
      open_issues_count: openIssues,
      license: null,
      allow_forking: true,
      is_template: false,
      web_commit_signoff_required: false,
      topics: [],
      visibility: r.private ? "private" : "public",
      forks: 0,
      open_issues: openIssues,
      watchers: 0,
      default_branch: r.defaultBranch,
      allow_squash_merge: true,
      allow_merge_commit: true,
      allow_rebase_merge: true,
      allow_auto_merge: false,
      delete_branch_on_merge: false,
      allow_update_branch: false,
      use_squash_pr_title_as_default: false,
      squash_merge_commit_title: "COMMIT_OR_PR_TITLE",
      squash_merge_commit_message: "COMMIT_MESSAGES",
      merge_commit_title: "MERGE_MESSAGE",
      merge_commit_message: "PR_TITLE",
      network_count: 0,
      subscribers_count: 0,
    };
    if (opts.permissionsFor) {
      const role = r.collaborators.get(opts.permissionsFor.login);
      const rank = ["read", "triage", "write", "maintain", "admin"].indexOf(role ?? "read");
      out.permissions = { admin: rank >= 4, maintain: rank >= 3, push: rank >= 2, triage: rank >= 1, pull: true };
    }
    return out;
  }

  app(a: App): O {
    return {
      id: a.id,
      slug: a.slug,
      client_id: a.clientId,
      node_id: nodeId("Integration", a.id),
      owner: this.user(a.owner),
      name: a.name,
      description: null,
      external_url: `${this.web()}/apps/${a.slug}`,
      html_url: `${this.web()}/apps/${a.slug}`,
      created_at: a.createdAt,
      updated_at: a.createdAt,
      permissions: { ...a.permissions },
      events: [...a.events],
      installations_count: [...this.state.installations.values()].filter((i) => i.appId === a.id).length,
    };
  }

  installation(i: Installation): O {
    const app = this.state.apps.get(i.appId)!;
    return {
      id: i.id,
      account: this.user(i.account),
      repository_selection: i.repositories === "all" ? "all" : "selected",
      access_tokens_url: `${this.api}/app/installations/${i.id}/access_tokens`,
      repositories_url: `${this.api}/installation/repositories`,
      html_url: `${this.web()}/settings/installations/${i.id}`,
      app_id: i.appId,
      client_id: app.clientId,
      app_slug: app.slug,
      target_id: i.account.id,
      target_type: i.account.type === "Organization" ? "Organization" : "User",
      permissions: { ...i.permissions },
      events: [...i.events],
      created_at: i.createdAt,
      updated_at: i.updatedAt,
      single_file_name: null,
      has_multiple_single_files: false,
      single_file_paths: [],
      suspended_by: null,
      suspended_at: null,
    };
  }

  label(repo: Repo, l: Label): O {
    return {
      id: l.id,
      node_id: nodeId("Label", l.id),
      url: `${this.api}/repos/${repo.owner.login}/${repo.name}/labels/${encodeURIComponent(l.name)}`,
      name: l.name,
      description: l.description,
      color: l.color,
      default: l.default,
    };
  }

  private reactionRollup(url: string, reactions: Reaction[]): O {
    const count = (c: string) => reactions.filter((r) => r.content === c).length;
    return {
      url,
      total_count: reactions.length,
      "+1": count("+1"),
      "-1": count("-1"),
      laugh: count("laugh"),
      confused: count("confused"),
      heart: count("heart"),
      hooray: count("hooray"),
      eyes: count("eyes"),
      rocket: count("rocket"),
    };
  }

  /** How the author relates to the repository, as GitHub reports it. */
  association(repo: Repo, u: User): string {
    if (u.id === repo.owner.id) return "OWNER";
    const role = repo.collaborators.get(u.login);
    if (role) return "COLLABORATOR";
    return "NONE";
  }

  issueReactions = new Map<string, Reaction[]>();

  issue(repo: Repo, i: Issue): O {
    const u = `${this.api}/repos/${repo.owner.login}/${repo.name}/issues/${i.number}`;
    const out: O = {
      id: i.id,
      node_id: nodeId(i.pull ? "PullRequest" : "Issue", i.id),
      url: u,
      repository_url: `${this.api}/repos/${repo.owner.login}/${repo.name}`,
      labels_url: `${u}/labels{/name}`,
      comments_url: `${u}/comments`,
      events_url: `${u}/events`,
      html_url: `${this.web()}/${repo.owner.login}/${repo.name}/${i.pull ? "pull" : "issues"}/${i.number}`,
      number: i.number,
      state: i.state,
      state_reason: i.stateReason,
      title: i.title,
      body: i.body,
      user: this.user(i.user),
      labels: i.labels
        .map((n) => repo.labels.get(n))
        .filter((l): l is Label => !!l)
        .map((l) => this.label(repo, l)),
      assignee: i.assignees[0] ? this.user(i.assignees[0]) : null,
      assignees: i.assignees.map((a) => this.user(a)),
      milestone: null,
      locked: i.locked,
      active_lock_reason: null,
      comments: i.comments,
      closed_at: i.closedAt,
      created_at: i.createdAt,
      updated_at: i.updatedAt,
      closed_by: i.closedBy ? this.user(i.closedBy) : null,
      author_association: this.association(repo, i.user),
      reactions: this.reactionRollup(`${u}/reactions`, this.issueReactions.get(`${repo.id}#${i.number}`) ?? []),
      timeline_url: `${u}/timeline`,
      performed_via_github_app: null,
    };
    if (i.pull) {
      const p = `${this.web()}/${repo.owner.login}/${repo.name}/pull/${i.number}`;
      out.pull_request = {
        url: `${this.api}/repos/${repo.owner.login}/${repo.name}/pulls/${i.number}`,
        html_url: p,
        diff_url: `${p}.diff`,
        patch_url: `${p}.patch`,
        merged_at: i.pull.mergedAt,
      };
      out.draft = i.pull.draft;
    }
    return out;
  }

  comment(repo: Repo, c: Comment): O {
    const u = `${this.api}/repos/${repo.owner.login}/${repo.name}/issues/comments/${c.id}`;
    const issue = this.state.issue(repo.id, c.issueNumber)!;
    return {
      id: c.id,
      node_id: nodeId("IssueComment", c.id),
      url: u,
      html_url: `${this.web()}/${repo.owner.login}/${repo.name}/${issue.pull ? "pull" : "issues"}/${c.issueNumber}#issuecomment-${c.id}`,
      body: c.body,
      user: this.user(c.user),
      created_at: c.createdAt,
      updated_at: c.updatedAt,
      issue_url: `${this.api}/repos/${repo.owner.login}/${repo.name}/issues/${c.issueNumber}`,
      author_association: this.association(repo, c.user),
      performed_via_github_app: c.viaAppId ? this.app(this.state.apps.get(c.viaAppId)!) : null,
      reactions: this.reactionRollup(`${u}/reactions`, c.reactions),
    };
  }

  reaction(r: Reaction): O {
    return { id: r.id, node_id: nodeId("Reaction", r.id), user: this.user(r.user), content: r.content, created_at: r.createdAt };
  }

  private prRef(repo: Repo, ref: string, sha: string): O {
    return { label: `${repo.owner.login}:${ref}`, ref, sha, user: this.user(repo.owner), repo: this.repo(repo) };
  }

  /** Pull request; `full` adds the fields only GET/create/update return (and webhooks carry). */
  pull(repo: Repo, i: Issue, opts: { full: boolean; mergeable?: boolean | null } = { full: true }): O {
    const p = i.pull!;
    const base = `${this.api}/repos/${repo.owner.login}/${repo.name}`;
    const u = `${base}/pulls/${i.number}`;
    const html = `${this.web()}/${repo.owner.login}/${repo.name}/pull/${i.number}`;
    const issueUrl = `${base}/issues/${i.number}`;
    const out: O = {
      url: u,
      id: i.id,
      node_id: nodeId("PullRequest", i.id),
      html_url: html,
      diff_url: `${html}.diff`,
      patch_url: `${html}.patch`,
      issue_url: issueUrl,
      commits_url: `${u}/commits`,
      review_comments_url: `${u}/comments`,
      review_comment_url: `${base}/pulls/comments{/number}`,
      comments_url: `${issueUrl}/comments`,
      statuses_url: `${base}/statuses/${p.headSha}`,
      number: i.number,
      state: i.state,
      locked: i.locked,
      title: i.title,
      user: this.user(i.user),
      body: i.body,
      labels: i.labels
        .map((n) => repo.labels.get(n))
        .filter((l): l is Label => !!l)
        .map((l) => this.label(repo, l)),
      milestone: null,
      active_lock_reason: null,
      created_at: i.createdAt,
      updated_at: i.updatedAt,
      closed_at: i.closedAt,
      merged_at: p.mergedAt,
      merge_commit_sha: p.mergeCommitSha,
      assignee: i.assignees[0] ? this.user(i.assignees[0]) : null,
      assignees: i.assignees.map((a) => this.user(a)),
      requested_reviewers: (p.requestedReviewers ?? []).flatMap((login) => {
        const u = this.state.users.get(login);
        return u ? [this.user(u)] : [];
      }),
      requested_teams: [],
      head: this.prRef(p.headRepoId !== undefined ? (this.state.repos.get(p.headRepoId) ?? repo) : repo, p.headRef, p.headSha),
      base: this.prRef(repo, p.baseRef, p.baseSha),
      _links: {
        self: { href: u },
        html: { href: html },
        issue: { href: issueUrl },
        comments: { href: `${issueUrl}/comments` },
        review_comments: { href: `${u}/comments` },
        review_comment: { href: `${base}/pulls/comments{/number}` },
        commits: { href: `${u}/commits` },
        statuses: { href: `${base}/statuses/${p.headSha}` },
      },
      author_association: this.association(repo, i.user),
      auto_merge: null,
      draft: p.draft,
    };
    if (opts.full) {
      const mergeable = opts.mergeable === undefined ? null : opts.mergeable;
      Object.assign(out, {
        merged: p.merged,
        mergeable: p.merged || i.state === "closed" ? null : mergeable,
        rebaseable: p.merged || i.state === "closed" ? null : mergeable,
        mergeable_state:
          p.merged || i.state === "closed"
            ? "unknown"
            : mergeable === false
              ? "dirty"
              : mergeable === true
                ? p.draft
                  ? "draft"
                  : "clean"
                : "unknown",
        merged_by: p.mergedBy ? this.user(p.mergedBy) : null,
        comments: i.comments,
        review_comments: 0,
        maintainer_can_modify: p.maintainerCanModify,
        commits: 0,
        additions: 0,
        deletions: 0,
        changed_files: 0,
      });
    }
    return out;
  }

  review(repo: Repo, r: Review): O {
    const html = `${this.web()}/${repo.owner.login}/${repo.name}/pull/${r.number}`;
    return {
      id: r.id,
      node_id: nodeId("PullRequestReview", r.id),
      user: this.user(r.user),
      body: r.body,
      state: r.state,
      html_url: `${html}#pullrequestreview-${r.id}`,
      pull_request_url: `${this.api}/repos/${repo.owner.login}/${repo.name}/pulls/${r.number}`,
      _links: {
        html: { href: `${html}#pullrequestreview-${r.id}` },
        pull_request: { href: `${this.api}/repos/${repo.owner.login}/${repo.name}/pulls/${r.number}` },
      },
      submitted_at: r.submittedAt,
      commit_id: r.commitId,
      author_association: this.association(repo, r.user),
    };
  }

  gitUser(id: { name: string; email: string; date: string }): O {
    return { name: id.name, email: id.email, date: id.date };
  }

  gitCommit(repo: Repo, c: CommitInfo): O {
    const base = `${this.api}/repos/${repo.owner.login}/${repo.name}`;
    return {
      sha: c.sha,
      node_id: nodeId("Commit", c.sha),
      url: `${base}/git/commits/${c.sha}`,
      html_url: `${this.web()}/${repo.owner.login}/${repo.name}/commit/${c.sha}`,
      author: this.gitUser(c.author),
      committer: this.gitUser(c.committer),
      tree: { sha: c.tree, url: `${base}/git/trees/${c.tree}` },
      message: c.message.replace(/\n$/, ""),
      parents: c.parents.map((p) => ({
        sha: p,
        url: `${base}/git/commits/${p}`,
        html_url: `${this.web()}/${repo.owner.login}/${repo.name}/commit/${p}`,
      })),
      verification: { verified: false, reason: "unsigned", signature: null, payload: null, verified_at: null },
    };
  }

  /** The REST "commit" object (repos/get-commit, compare). */
  commit(repo: Repo, c: CommitInfo): O {
    const base = `${this.api}/repos/${repo.owner.login}/${repo.name}`;
    return {
      url: `${base}/commits/${c.sha}`,
      sha: c.sha,
      node_id: nodeId("Commit", c.sha),
      html_url: `${this.web()}/${repo.owner.login}/${repo.name}/commit/${c.sha}`,
      comments_url: `${base}/commits/${c.sha}/comments`,
      commit: {
        url: `${base}/git/commits/${c.sha}`,
        author: this.gitUser(c.author),
        committer: this.gitUser(c.committer),
        message: c.message.replace(/\n$/, ""),
        comment_count: 0,
        tree: { sha: c.tree, url: `${base}/git/trees/${c.tree}` },
        verification: { verified: false, reason: "unsigned", signature: null, payload: null, verified_at: null },
      },
      author: this.userByEmail(c.author.email),
      committer: this.userByEmail(c.committer.email),
      parents: c.parents.map((p) => ({
        sha: p,
        url: `${base}/commits/${p}`,
        html_url: `${this.web()}/${repo.owner.login}/${repo.name}/commit/${p}`,
      })),
    };
  }

  /** GitHub links a commit to an account by email; the simulator uses `<login>@users.noreply…`. */
  userByEmail(email: string): O | null {
    const m = /^(\d+)\+[^@]+@users\.noreply\./.exec(email);
    const u = m ? this.state.userById(Number(m[1])) : undefined;
    return u ? this.user(u) : null;
  }

  ref(repo: Repo, ref: string, sha: string): O {
    const base = `${this.api}/repos/${repo.owner.login}/${repo.name}`;
    return {
      ref,
      node_id: nodeId("Ref", `${repo.id}:${ref}`),
      url: `${base}/git/${ref}`,
      object: { sha, type: "commit", url: `${base}/git/commits/${sha}` },
    };
  }

  suite(repo: Repo, s: CheckSuite, prs: O[] = []): O {
    const app = this.state.apps.get(s.appId);
    const runs = [...this.state.checkRuns.values()].filter((r) => r.suiteId === s.id);
    return {
      id: s.id,
      node_id: nodeId("CheckSuite", s.id),
      head_branch: s.headBranch,
      head_sha: s.headSha,
      status: s.status,
      conclusion: s.conclusion,
      url: `${this.api}/repos/${repo.owner.login}/${repo.name}/check-suites/${s.id}`,
      before: s.before,
      after: s.after,
      pull_requests: prs,
      app: app ? this.app(app) : null,
      repository: this.minimalRepo(repo),
      created_at: s.createdAt,
      updated_at: s.updatedAt,
      head_commit: null,
      latest_check_runs_count: runs.length,
      check_runs_url: `${this.api}/repos/${repo.owner.login}/${repo.name}/check-suites/${s.id}/check-runs`,
      rerequestable: true,
      runs_rerequestable: true,
    };
  }

  checkRun(repo: Repo, c: CheckRun, prs: O[] = []): O {
    const app = this.state.apps.get(c.appId);
    const suite = this.state.suites.get(c.suiteId)!;
    const u = `${this.api}/repos/${repo.owner.login}/${repo.name}/check-runs/${c.id}`;
    return {
      id: c.id,
      head_sha: c.headSha,
      node_id: nodeId("CheckRun", c.id),
      // GitHub reports a check run created without external_id as "" (the webhook schema requires a string).
      external_id: c.externalId ?? "",
      url: u,
      html_url: `${this.web()}/${repo.owner.login}/${repo.name}/runs/${c.id}`,
      // "If the integrator does not provide this, then the homepage of the GitHub app is used."
      details_url: c.detailsUrl ?? (app ? `${this.web()}/apps/${app.slug}` : null),
      status: c.status,
      conclusion: c.conclusion,
      started_at: c.startedAt,
      completed_at: c.completedAt,
      output: { ...c.output, annotations_url: `${u}/annotations` },
      name: c.name,
      check_suite: { id: suite.id },
      app: app ? this.app(app) : null,
      pull_requests: prs,
    };
  }

  /** check_run in webhooks carries a fuller check_suite. */
  checkRunForHook(repo: Repo, c: CheckRun, prs: O[] = []): O {
    const out = this.checkRun(repo, c, prs);
    const s = this.state.suites.get(c.suiteId)!;
    const app = this.state.apps.get(s.appId);
    out.check_suite = {
      id: s.id,
      node_id: nodeId("CheckSuite", s.id),
      head_branch: s.headBranch,
      head_sha: s.headSha,
      status: s.status,
      conclusion: s.conclusion,
      url: `${this.api}/repos/${repo.owner.login}/${repo.name}/check-suites/${s.id}`,
      before: s.before,
      after: s.after,
      pull_requests: prs,
      app: app ? this.app(app) : undefined,
      repository: this.minimalRepo(repo),
      created_at: s.createdAt,
      updated_at: s.updatedAt,
    };
    if (!app) delete (out.check_suite as O).app;
    return out;
  }

  status(s: CommitStatus): O {
    const repo = this.state.repos.get(s.repoId)!;
    return {
      url: `${this.api}/repos/${repo.owner.login}/${repo.name}/statuses/${s.sha}`,
      avatar_url: `${this.web()}/avatars/u/${s.creator.id}`,
      id: s.id,
      node_id: nodeId("StatusContext", s.id),
      state: s.state,
      description: s.description,
      target_url: s.targetUrl,
      context: s.context,
      created_at: s.createdAt,
      updated_at: s.updatedAt,
      creator: this.user(s.creator),
    };
  }

  workflow(repo: Repo, w: WorkflowFile): O {
    return {
      id: w.id,
      node_id: nodeId("Workflow", w.id),
      name: w.name,
      path: w.path,
      state: "active",
      created_at: w.createdAt,
      updated_at: w.createdAt,
      url: `${this.api}/repos/${repo.owner.login}/${repo.name}/actions/workflows/${w.id}`,
      html_url: `${this.web()}/${repo.owner.login}/${repo.name}/blob/${repo.defaultBranch}/${w.path}`,
      badge_url: `${this.web()}/${repo.owner.login}/${repo.name}/workflows/${encodeURIComponent(w.name)}/badge.svg`,
    };
  }

  run(repo: Repo, r: WorkflowRun, headCommit: CommitInfo | null): O {
    const u = `${this.api}/repos/${repo.owner.login}/${repo.name}/actions/runs/${r.id}`;
    return {
      id: r.id,
      name: r.name,
      node_id: nodeId("WorkflowRun", r.id),
      check_suite_id: r.checkSuiteId,
      check_suite_node_id: nodeId("CheckSuite", r.checkSuiteId),
      head_branch: r.headBranch,
      head_sha: r.headSha,
      path: r.path,
      display_title: r.displayTitle,
      run_number: r.runNumber,
      run_attempt: r.runAttempt,
      event: r.event,
      status: r.status,
      conclusion: r.conclusion,
      workflow_id: r.workflowId,
      url: u,
      html_url: `${this.web()}/${repo.owner.login}/${repo.name}/actions/runs/${r.id}`,
      pull_requests: [],
      created_at: r.createdAt,
      updated_at: r.updatedAt,
      run_started_at: r.runStartedAt,
      actor: this.user(r.actor),
      triggering_actor: this.user(r.triggeringActor),
      jobs_url: `${u}/jobs`,
      logs_url: `${u}/logs`,
      check_suite_url: `${this.api}/repos/${repo.owner.login}/${repo.name}/check-suites/${r.checkSuiteId}`,
      artifacts_url: `${u}/artifacts`,
      cancel_url: `${u}/cancel`,
      rerun_url: `${u}/rerun`,
      previous_attempt_url: null,
      workflow_url: `${this.api}/repos/${repo.owner.login}/${repo.name}/actions/workflows/${r.workflowId}`,
      head_commit: headCommit
        ? {
            id: headCommit.sha,
            tree_id: headCommit.tree,
            message: headCommit.message.replace(/\n$/, ""),
            timestamp: headCommit.committer.date,
            author: { name: headCommit.author.name, email: headCommit.author.email },
            committer: { name: headCommit.committer.name, email: headCommit.committer.email },
          }
        : null,
      repository: this.minimalRepo(repo),
      head_repository: this.minimalRepo(this.state.repos.get(r.headRepoId) ?? repo),
      referenced_workflows: [],
    };
  }

  job(repo: Repo, run: WorkflowRun, j: Job): O {
    const base = `${this.api}/repos/${repo.owner.login}/${repo.name}`;
    return {
      id: j.id,
      run_id: run.id,
      run_url: `${base}/actions/runs/${run.id}`,
      run_attempt: run.runAttempt,
      node_id: nodeId("CheckRun", j.id),
      head_sha: run.headSha,
      url: `${base}/actions/jobs/${j.id}`,
      html_url: `${this.web()}/${repo.owner.login}/${repo.name}/actions/runs/${run.id}/job/${j.id}`,
      status: j.status,
      conclusion: j.conclusion,
      created_at: j.createdAt,
      started_at: j.startedAt,
      completed_at: j.completedAt,
      name: j.name,
      steps: j.steps.map((s) => ({ ...s })),
      check_run_url: `${base}/check-runs/${j.checkRunId}`,
      labels: ["ubuntu-latest"],
      runner_id: j.status === "queued" ? null : 1,
      runner_name: j.status === "queued" ? null : "forge-sim-runner",
      runner_group_id: j.status === "queued" ? null : 1,
      runner_group_name: j.status === "queued" ? null : "Default",
      workflow_name: run.name,
      head_branch: run.headBranch,
    };
  }

  /** GitHub's error body: `{message, documentation_url}` (+ `status` as a string, as GitHub sends). */
  static error(message: string, status: number, doc = "https://docs.github.com/rest", extra: O = {}): O {
    return { message, documentation_url: doc, status: String(status), ...extra };
  }
}
