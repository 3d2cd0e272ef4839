// Repositories as the local GitHub sends them: minimal (check suites, installation lists) and full,
// with every URL template GitHub includes.
import { repoSettingsOf } from "../repo-settings.js";
import type { Repo, User } from "../state.js";
import { nodeId, type O } from "./ids.js";
import type { Model } from "./index.js";

function repoUrls(model: Model, r: Repo): O {
  const full = `${r.owner.login}/${r.name}`;
  const u = `${model.api}/repos/${full}`;
  return {
    url: u,
    html_url: `${model.web()}/${full}`,
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
export function minimalRepo(model: Model, r: Repo): O {
  return {
    id: r.id,
    node_id: nodeId("Repository", r.id),
    name: r.name,
    full_name: `${r.owner.login}/${r.name}`,
    private: r.private,
    owner: model.user(r.owner),
    description: r.description,
    fork: r.forkOf !== undefined,
    ...repoUrls(model, r),
  };
}

/**
 * Full repository. `timestamps: "unix"` reproduces the push payload, where GitHub sends
 * created_at/pushed_at as integers (webhook-push schema allows integer or date-time).
 */
export function repo(model: Model, r: Repo, opts: { timestamps?: "unix"; permissionsFor?: User } = {}): O {
  const full = `${r.owner.login}/${r.name}`;
  const unix = (iso: string) => Math.floor(Date.parse(iso) / 1000);
  const openIssues = [...model.state.issues.values()].filter((i) => i.repoId === r.id && i.state === "open").length;
  const settings = repoSettingsOf(r);
  const out: O = {
    ...model.minimalRepo(r),
    created_at: opts.timestamps === "unix" ? unix(r.createdAt) : r.createdAt,
    updated_at: r.updatedAt,
    pushed_at: opts.timestamps === "unix" ? unix(r.pushedAt) : r.pushedAt,
    git_url: `${model.web().replace(/^https?:/, "git:")}/${full}.git`,
    ssh_url: `git@${new URL(model.web()).host}:${full}.git`,
    clone_url: `${model.web()}/${full}.git`,
    svn_url: `${model.web()}/${full}`,
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
    allow_squash_merge: settings.allowSquashMerge,
    allow_merge_commit: settings.allowMergeCommit,
    allow_rebase_merge: settings.allowRebaseMerge,
    allow_auto_merge: settings.allowAutoMerge,
    delete_branch_on_merge: settings.deleteBranchOnMerge,
    allow_update_branch: settings.allowUpdateBranch,
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
