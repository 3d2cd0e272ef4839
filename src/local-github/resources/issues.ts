// Issues and pull requests as the local GitHub sends them: labels, reactions, comments, the author's
// association, pull requests (with and without their full fields), reviews.
import type { Comment, Issue, Label, Reaction, Repo, Review, User } from "../state.js";
import { nodeId, type O } from "./ids.js";
import type { Model } from "./index.js";

export function label(model: Model, repo: Repo, l: Label): O {
  return {
    id: l.id,
    node_id: nodeId("Label", l.id),
    url: `${model.api}/repos/${repo.owner.login}/${repo.name}/labels/${encodeURIComponent(l.name)}`,
    name: l.name,
    description: l.description,
    color: l.color,
    default: l.default,
  };
}

function reactionRollup(url: string, reactions: Reaction[]): O {
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
export function association(repo: Repo, u: User): string {
  if (u.id === repo.owner.id) return "OWNER";
  const role = repo.collaborators.get(u.login);
  if (role) return "COLLABORATOR";
  return "NONE";
}

export function issue(model: Model, repo: Repo, i: Issue): O {
  const u = `${model.api}/repos/${repo.owner.login}/${repo.name}/issues/${i.number}`;
  const out: O = {
    id: i.id,
    node_id: nodeId(i.pull ? "PullRequest" : "Issue", i.id),
    url: u,
    repository_url: `${model.api}/repos/${repo.owner.login}/${repo.name}`,
    labels_url: `${u}/labels{/name}`,
    comments_url: `${u}/comments`,
    events_url: `${u}/events`,
    html_url: `${model.web()}/${repo.owner.login}/${repo.name}/${i.pull ? "pull" : "issues"}/${i.number}`,
    number: i.number,
    state: i.state,
    state_reason: i.stateReason,
    title: i.title,
    body: i.body,
    user: model.user(i.user),
    labels: i.labels
      .map((n) => repo.labels.get(n))
      .filter((l): l is Label => !!l)
      .map((l) => model.label(repo, l)),
    assignee: i.assignees[0] ? model.user(i.assignees[0]) : null,
    assignees: i.assignees.map((a) => model.user(a)),
    milestone: null,
    locked: i.locked,
    active_lock_reason: null,
    comments: i.comments,
    closed_at: i.closedAt,
    created_at: i.createdAt,
    updated_at: i.updatedAt,
    closed_by: i.closedBy ? model.user(i.closedBy) : null,
    author_association: model.association(repo, i.user),
    reactions: reactionRollup(`${u}/reactions`, model.issueReactions.get(`${repo.id}#${i.number}`) ?? []),
    timeline_url: `${u}/timeline`,
    performed_via_github_app: null,
  };
  if (!i.pull) Object.assign(out, treeFields(model, repo, i));
  if (i.pull) {
    const p = `${model.web()}/${repo.owner.login}/${repo.name}/pull/${i.number}`;
    out.pull_request = {
      url: `${model.api}/repos/${repo.owner.login}/${repo.name}/pulls/${i.number}`,
      html_url: p,
      diff_url: `${p}.diff`,
      patch_url: `${p}.patch`,
      merged_at: i.pull.mergedAt,
    };
    out.draft = i.pull.draft;
  }
  return out;
}

/**
 * Sub-issues and dependencies as an issue shows them (docs.github.com/rest/issues/sub-issues,
 * docs.github.com/rest/issues/issue-dependencies): `sub_issues_summary` (closed as completed counts),
 * `parent_issue_url`, `issue_dependencies_summary` (`blocked_by` counts the open blockers).
 */
function treeFields(model: Model, repo: Repo, i: Issue): O {
  const subs = (i.subIssueIds ?? []).map((id) => model.state.issueById(id)).filter((x): x is Issue => !!x);
  const done = subs.filter((s) => s.state === "closed" && s.stateReason !== "not_planned").length;
  const parent = i.parentId !== undefined ? model.state.issueById(i.parentId) : undefined;
  const parentRepo = parent ? model.state.repos.get(parent.repoId) : undefined;
  const blockers = (i.blockedByIds ?? []).map((id) => model.state.issueById(id)).filter((x): x is Issue => !!x);
  const blocking = [...model.state.issues.values()].filter((x) => x.blockedByIds?.includes(i.id));
  return {
    sub_issues_summary: {
      total: subs.length,
      completed: done,
      percent_completed: subs.length ? Math.floor((done * 100) / subs.length) : 0,
    },
    parent_issue_url:
      parent && parentRepo ? `${model.api}/repos/${parentRepo.owner.login}/${parentRepo.name}/issues/${parent.number}` : null,
    issue_dependencies_summary: {
      blocked_by: blockers.filter((b) => b.state === "open").length,
      blocking: blocking.filter((b) => b.state === "open").length,
      total_blocked_by: blockers.length,
      total_blocking: blocking.length,
    },
  };
}

export function comment(model: Model, repo: Repo, c: Comment): O {
  const u = `${model.api}/repos/${repo.owner.login}/${repo.name}/issues/comments/${c.id}`;
  const issue = model.state.issue(repo.id, c.issueNumber)!;
  return {
    id: c.id,
    node_id: nodeId("IssueComment", c.id),
    url: u,
    html_url: `${model.web()}/${repo.owner.login}/${repo.name}/${issue.pull ? "pull" : "issues"}/${c.issueNumber}#issuecomment-${c.id}`,
    body: c.body,
    user: model.user(c.user),
    created_at: c.createdAt,
    updated_at: c.updatedAt,
    issue_url: `${model.api}/repos/${repo.owner.login}/${repo.name}/issues/${c.issueNumber}`,
    author_association: model.association(repo, c.user),
    performed_via_github_app: c.viaAppId ? model.app(model.state.apps.get(c.viaAppId)!) : null,
    reactions: reactionRollup(`${u}/reactions`, c.reactions),
  };
}

export function reaction(model: Model, r: Reaction): O {
  return { id: r.id, node_id: nodeId("Reaction", r.id), user: model.user(r.user), content: r.content, created_at: r.createdAt };
}

function prRef(model: Model, repo: Repo, ref: string, sha: string): O {
  return { label: `${repo.owner.login}:${ref}`, ref, sha, user: model.user(repo.owner), repo: model.repo(repo) };
}

/** Pull request; `full` adds the fields only GET/create/update return (and webhooks carry). */
export function pull(
  model: Model,
  repo: Repo,
  i: Issue,
  opts: { full: boolean; mergeable?: boolean | null; mergeableState?: string } = { full: true },
): O {
  const p = i.pull!;
  const base = `${model.api}/repos/${repo.owner.login}/${repo.name}`;
  const u = `${base}/pulls/${i.number}`;
  const html = `${model.web()}/${repo.owner.login}/${repo.name}/pull/${i.number}`;
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
    user: model.user(i.user),
    body: i.body,
    labels: i.labels
      .map((n) => repo.labels.get(n))
      .filter((l): l is Label => !!l)
      .map((l) => model.label(repo, l)),
    milestone: null,
    active_lock_reason: null,
    created_at: i.createdAt,
    updated_at: i.updatedAt,
    closed_at: i.closedAt,
    merged_at: p.mergedAt,
    merge_commit_sha: p.mergeCommitSha,
    assignee: i.assignees[0] ? model.user(i.assignees[0]) : null,
    assignees: i.assignees.map((a) => model.user(a)),
    requested_reviewers: (p.requestedReviewers ?? []).flatMap((login) => {
      const u = model.state.users.get(login);
      return u ? [model.user(u)] : [];
    }),
    requested_teams: [],
    head: prRef(model, p.headRepoId !== undefined ? (model.state.repos.get(p.headRepoId) ?? repo) : repo, p.headRef, p.headSha),
    base: prRef(model, repo, p.baseRef, p.baseSha),
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
    author_association: model.association(repo, i.user),
    auto_merge: p.autoMerge
      ? {
          enabled_by: model.user(p.autoMerge.who.actor),
          merge_method: p.autoMerge.method,
          commit_title: p.autoMerge.commitTitle ?? "",
          commit_message: p.autoMerge.commitMessage ?? "",
        }
      : null,
    draft: p.draft,
  };
  if (opts.full) {
    const mergeable = opts.mergeable === undefined ? null : opts.mergeable;
    Object.assign(out, {
      merged: p.merged,
      mergeable: p.merged || i.state === "closed" ? null : mergeable,
      rebaseable: p.merged || i.state === "closed" ? null : mergeable,
      // The state GitHub's job computed (../mergeability.ts), else what the mergeable value alone says.
      mergeable_state:
        p.merged || i.state === "closed"
          ? "unknown"
          : (opts.mergeableState ?? (mergeable === false ? "dirty" : mergeable === true ? (p.draft ? "draft" : "clean") : "unknown")),
      merged_by: p.mergedBy ? model.user(p.mergedBy) : null,
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

export function review(model: Model, repo: Repo, r: Review): O {
  const html = `${model.web()}/${repo.owner.login}/${repo.name}/pull/${r.number}`;
  return {
    id: r.id,
    node_id: nodeId("PullRequestReview", r.id),
    user: model.user(r.user),
    body: r.body,
    state: r.state,
    html_url: `${html}#pullrequestreview-${r.id}`,
    pull_request_url: `${model.api}/repos/${repo.owner.login}/${repo.name}/pulls/${r.number}`,
    _links: {
      html: { href: `${html}#pullrequestreview-${r.id}` },
      pull_request: { href: `${model.api}/repos/${repo.owner.login}/${repo.name}/pulls/${r.number}` },
    },
    submitted_at: r.submittedAt,
    commit_id: r.commitId,
    author_association: model.association(repo, r.user),
  };
}
