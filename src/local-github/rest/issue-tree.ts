// REST operations of the local GitHub: sub-issues (docs.github.com/rest/issues/sub-issues) and issue
// dependencies (docs.github.com/rest/issues/issue-dependencies), with their `sub_issues` and
// `issue_dependencies` webhooks (docs.github.com/webhooks/webhook-events-and-payloads#sub_issues,
// #issue_dependencies).
//
// - The bodies name issues by their **id** (`sub_issue_id`, `issue_id`, `after_id`, `before_id`), not
//   their number, as the description says ("The id of the sub-issue to add").
// - "You can add up to 100 sub-issues per parent issue and create up to eight levels of nested
//   sub-issues" (docs.github.com/issues/tracking-your-work-with-issues/using-issues/adding-sub-issues);
//   a sub-issue has one parent ("replace_parent … replace the sub-issues current parent issue") and
//   "must belong to the same repository owner as the parent issue". A pull request is neither.
// - Adding one sends `sub_issues.sub_issue_added` (about the parent) and `parent_issue_added` (about
//   the child); removing one the `_removed` pair. A "blocked by" dependency sends
//   `issue_dependencies.blocked_by_added` and `blocking_added` (and `_removed`).
// The answers are the issue of the path (the parent, the blocked issue), its summaries updated; the
// description's examples do not say which, so this is the local GitHub's reading. The refusals'
// texts (422) are the local GitHub's: GitHub's are not published.
import type { Issue, Repo } from "../state.js";
import { now } from "../state.js";
import type { Handler, RestCtx } from "./context.js";
import { emit, invalid, notFound, ok, repoOf } from "./context.js";

export const SUB_ISSUE_LIMIT = 100;
export const SUB_ISSUE_DEPTH = 8;

function issueOf(ctx: RestCtx): Issue {
  const i = ctx.core.state.issue(repoOf(ctx).id, Number(ctx.params.issue_number));
  if (!i || i.pull) throw notFound(ctx);
  return i;
}

/** An issue named by its id in a body: same owner as the repository of the request, not a pull request. */
function issueById(ctx: RestCtx, raw: unknown): { issue: Issue; repo: Repo } {
  const issue = typeof raw === "number" ? ctx.core.state.issueById(raw) : undefined;
  const repo = issue ? ctx.core.state.repos.get(issue.repoId) : undefined;
  if (!issue || !repo || issue.pull || repo.owner.id !== repoOf(ctx).owner.id) throw notFound(ctx);
  return { issue, repo };
}

function repoOfIssue(ctx: RestCtx, i: Issue): Repo {
  return ctx.core.state.repos.get(i.repoId)!;
}

function depth(ctx: RestCtx, i: Issue): number {
  let d = 1;
  for (let p = i.parentId; p !== undefined; p = ctx.core.state.issueById(p)?.parentId) d++;
  return d;
}

function height(ctx: RestCtx, i: Issue): number {
  const subs = (i.subIssueIds ?? []).map((id) => ctx.core.state.issueById(id)).filter((x): x is Issue => !!x);
  return 1 + Math.max(0, ...subs.map((s) => height(ctx, s)));
}

function isAncestor(ctx: RestCtx, maybe: Issue, of: Issue): boolean {
  for (let p = of.parentId; p !== undefined; p = ctx.core.state.issueById(p)?.parentId) if (p === maybe.id) return true;
  return false;
}

/** The organization object webhooks carry for a repository an organisation owns. */
function orgPart(ctx: RestCtx, repo: Repo): Record<string, unknown> {
  if (repo.owner.type !== "Organization") return {};
  const u = ctx.core.model.user(repo.owner);
  const api = `${ctx.core.model.api}/orgs/${repo.owner.login}`;
  return {
    organization: {
      login: repo.owner.login,
      id: repo.owner.id,
      node_id: u.node_id,
      url: api,
      repos_url: `${api}/repos`,
      events_url: `${api}/events`,
      hooks_url: `${api}/hooks`,
      issues_url: `${api}/issues`,
      members_url: `${api}/members{/member}`,
      public_members_url: `${api}/public_members{/member}`,
      avatar_url: u.avatar_url,
      description: null,
    },
  };
}

function subIssueEvents(ctx: RestCtx, parent: Issue, child: Issue, added: boolean): void {
  const m = ctx.core.model;
  const pr = repoOfIssue(ctx, parent);
  const cr = repoOfIssue(ctx, child);
  const verb = added ? "added" : "removed";
  const common = { sub_issue_id: child.id, sub_issue: m.issue(cr, child), parent_issue_id: parent.id, parent_issue: m.issue(pr, parent) };
  emit(ctx, "sub_issues", `sub_issue_${verb}`, { ...common, sub_issue_repo: m.repo(cr), ...orgPart(ctx, pr) });
  emit(ctx, "sub_issues", `parent_issue_${verb}`, { ...common, parent_issue_repo: m.repo(pr), ...orgPart(ctx, cr) });
}

function dependencyEvents(ctx: RestCtx, blocked: Issue, blocking: Issue, added: boolean): void {
  const m = ctx.core.model;
  const br = repoOfIssue(ctx, blocked);
  const gr = repoOfIssue(ctx, blocking);
  const verb = added ? "added" : "removed";
  const common = {
    blocked_issue_id: blocked.id,
    blocked_issue: m.issue(br, blocked),
    blocking_issue_id: blocking.id,
    blocking_issue: m.issue(gr, blocking),
  };
  emit(ctx, "issue_dependencies", `blocked_by_${verb}`, { ...common, blocking_issue_repo: m.repo(gr), ...orgPart(ctx, br) });
  emit(ctx, "issue_dependencies", `blocking_${verb}`, { ...common, blocked_issue_repo: m.repo(br), ...orgPart(ctx, gr) });
}

function subIssues(ctx: RestCtx, parent: Issue): Issue[] {
  return (parent.subIssueIds ?? []).map((id) => ctx.core.state.issueById(id)).filter((x): x is Issue => !!x);
}

function touch(...issues: Issue[]): void {
  const t = now();
  for (const i of issues) i.updatedAt = t;
}

/** Removes `child` from its parent's list; the parent, if it had one. */
function detach(ctx: RestCtx, child: Issue): Issue | undefined {
  const old = child.parentId !== undefined ? ctx.core.state.issueById(child.parentId) : undefined;
  if (old) old.subIssueIds = (old.subIssueIds ?? []).filter((id) => id !== child.id);
  delete child.parentId;
  return old;
}

const tooMany = (ctx: RestCtx, message: string) =>
  invalid(ctx, "Validation Failed", [{ resource: "Issue", code: "custom", field: "sub_issue_id", message }]);

export const issueTreeHandlers: Record<string, Handler> = {
  "issues/list-sub-issues": async (ctx) => {
    const parent = issueOf(ctx);
    return ok(ctx.page(subIssues(ctx, parent).map((s) => ctx.core.model.issue(repoOfIssue(ctx, s), s))));
  },
  "issues/get-parent": async (ctx) => {
    const child = issueOf(ctx);
    const parent = child.parentId !== undefined ? ctx.core.state.issueById(child.parentId) : undefined;
    if (!parent) throw notFound(ctx);
    return ok(ctx.core.model.issue(repoOfIssue(ctx, parent), parent));
  },
  "issues/add-sub-issue": async (ctx) => {
    const parent = issueOf(ctx);
    const { issue: child } = issueById(ctx, ctx.body?.sub_issue_id);
    if (child.id === parent.id || isAncestor(ctx, child, parent)) throw tooMany(ctx, "An issue cannot be its own ancestor.");
    if (child.parentId === parent.id) throw tooMany(ctx, "The issue is already a sub-issue of this issue.");
    if (child.parentId !== undefined && ctx.body?.replace_parent !== true)
      throw tooMany(ctx, "The issue already has a parent issue; set replace_parent to move it.");
    if ((parent.subIssueIds ?? []).length >= SUB_ISSUE_LIMIT)
      throw tooMany(ctx, `An issue can have at most ${SUB_ISSUE_LIMIT} sub-issues.`);
    if (depth(ctx, parent) + height(ctx, child) > SUB_ISSUE_DEPTH)
      throw tooMany(ctx, `Sub-issues can be nested at most ${SUB_ISSUE_DEPTH} levels deep.`);
    const old = detach(ctx, child);
    if (old) {
      touch(old);
      subIssueEvents(ctx, old, child, false);
    }
    child.parentId = parent.id;
    (parent.subIssueIds ??= []).push(child.id);
    touch(parent, child);
    subIssueEvents(ctx, parent, child, true);
    return ok(ctx.core.model.issue(repoOfIssue(ctx, parent), parent), 201);
  },
  "issues/remove-sub-issue": async (ctx) => {
    const parent = issueOf(ctx);
    const { issue: child } = issueById(ctx, ctx.body?.sub_issue_id);
    if (child.parentId !== parent.id) throw notFound(ctx);
    detach(ctx, child);
    touch(parent, child);
    subIssueEvents(ctx, parent, child, false);
    return ok(ctx.core.model.issue(repoOfIssue(ctx, parent), parent));
  },
  "issues/reprioritize-sub-issue": async (ctx) => {
    const parent = issueOf(ctx);
    const b = ctx.body ?? {};
    const list = parent.subIssueIds ?? [];
    const id = b.sub_issue_id as number;
    const anchor = (b.after_id ?? b.before_id) as number | undefined;
    const simple = (message: string) => invalid(ctx, message);
    if (!list.includes(id)) throw notFound(ctx);
    if ((b.after_id === undefined) === (b.before_id === undefined)) throw simple("Either after_id or before_id must be given.");
    if (anchor === id || !list.includes(anchor!)) throw simple("The anchor must be another sub-issue of this issue.");
    const rest = list.filter((x) => x !== id);
    const at = rest.indexOf(anchor!) + (b.after_id !== undefined ? 1 : 0);
    rest.splice(at, 0, id);
    parent.subIssueIds = rest;
    touch(parent);
    return ok(ctx.core.model.issue(repoOfIssue(ctx, parent), parent));
  },
  "issues/list-dependencies-blocked-by": async (ctx) => {
    const issue = issueOf(ctx);
    const list = (issue.blockedByIds ?? []).map((id) => ctx.core.state.issueById(id)).filter((x): x is Issue => !!x);
    return ok(ctx.page(list.map((b) => ctx.core.model.issue(repoOfIssue(ctx, b), b))));
  },
  "issues/list-dependencies-blocking": async (ctx) => {
    const issue = issueOf(ctx);
    const list = [...ctx.core.state.issues.values()].filter((x) => x.blockedByIds?.includes(issue.id)).sort((a, b) => a.id - b.id);
    return ok(ctx.page(list.map((b) => ctx.core.model.issue(repoOfIssue(ctx, b), b))));
  },
  "issues/add-blocked-by-dependency": async (ctx) => {
    const blocked = issueOf(ctx);
    const { issue: blocking } = issueById(ctx, ctx.body?.issue_id);
    const fail = (message: string) =>
      invalid(ctx, "Validation Failed", [{ resource: "Issue", code: "custom", field: "issue_id", message }]);
    if (blocking.id === blocked.id) throw fail("An issue cannot block itself.");
    if (blocked.blockedByIds?.includes(blocking.id)) throw fail("The issue is already blocked by this issue.");
    if (blocking.blockedByIds?.includes(blocked.id)) throw fail("The issues would block each other.");
    (blocked.blockedByIds ??= []).push(blocking.id);
    touch(blocked, blocking);
    dependencyEvents(ctx, blocked, blocking, true);
    return ok(ctx.core.model.issue(repoOfIssue(ctx, blocked), blocked), 201);
  },
  "issues/remove-dependency-blocked-by": async (ctx) => {
    const blocked = issueOf(ctx);
    const blocking = ctx.core.state.issueById(Number(ctx.params.issue_id));
    if (!blocking || !blocked.blockedByIds?.includes(blocking.id)) throw notFound(ctx);
    blocked.blockedByIds = blocked.blockedByIds.filter((id) => id !== blocking.id);
    touch(blocked, blocking);
    dependencyEvents(ctx, blocked, blocking, false);
    // The description answers the issue the dependency was removed from.
    return ok(ctx.core.model.issue(repoOfIssue(ctx, blocked), blocked));
  },
};
