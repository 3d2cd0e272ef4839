// REST operations of the local GitHub: issues, comments, labels and reactions
// (docs.github.com/rest/issues, docs.github.com/rest/reactions).
import { HttpError } from "../auth.js";
import type { Comment, Issue, Label, Reaction, Repo, User } from "../state.js";
import { now } from "../state.js";
import type { Handler, RestCtx, Result } from "./context.js";
import { checkBodyLength, emit, invalid, newIssue, notFound, ok, repoOf, setIssueState, str } from "./context.js";

function issueOf(ctx: RestCtx, n = ctx.params.issue_number): Issue {
  const repo = repoOf(ctx);
  const i = ctx.core.state.issue(repo.id, Number(n));
  if (!i) throw notFound(ctx);
  return i;
}

/** Issue events on a PR are pull_request events (labeled/unlabeled), issues events otherwise. */
async function emitIssueEvent(ctx: RestCtx, issue: Issue, action: string, extra: Record<string, unknown> = {}): Promise<void> {
  const repo = repoOf(ctx);
  if (issue.pull) {
    if (["labeled", "unlabeled", "edited", "closed", "reopened"].includes(action)) {
      emit(ctx, "pull_request", action, { number: issue.number, pull_request: await ctx.core.pullPayload(repo, issue), ...extra });
    }
    return;
  }
  emit(ctx, "issues", action, { issue: ctx.core.model.issue(repo, issue), ...extra });
}

function ensureLabel(ctx: RestCtx, repo: Repo, name: string): Label {
  let l = repo.labels.get(name);
  if (!l) {
    l = { id: ctx.core.state.id(), name, color: "ededed", description: null, default: false };
    repo.labels.set(name, l);
  }
  return l;
}

async function addLabels(ctx: RestCtx, issue: Issue, names: string[]): Promise<void> {
  const repo = repoOf(ctx);
  for (const n of names) {
    if (issue.labels.includes(n)) continue;
    const l = ensureLabel(ctx, repo, n);
    issue.labels.push(n);
    issue.updatedAt = now();
    await emitIssueEvent(ctx, issue, "labeled", { label: ctx.core.model.label(repo, l) });
  }
}

async function removeLabel(ctx: RestCtx, issue: Issue, name: string): Promise<void> {
  const repo = repoOf(ctx);
  issue.labels = issue.labels.filter((x) => x !== name);
  issue.updatedAt = now();
  const l = repo.labels.get(name);
  await emitIssueEvent(ctx, issue, "unlabeled", l ? { label: ctx.core.model.label(repo, l) } : {});
}

function labelNames(body: Record<string, unknown> | undefined): string[] {
  const raw = (body?.labels ?? []) as Array<string | { name: string }>;
  return raw.map((l) => (typeof l === "string" ? l : l.name));
}

export const issueHandlers: Record<string, Handler> = {
  // docs.github.com/rest/issues/issues
  "issues/create": async (ctx) => {
    const repo = repoOf(ctx);
    const b = ctx.body!;
    const title = b.title === undefined ? "" : String(b.title);
    if (!title) throw invalid(ctx, "Validation Failed", [{ resource: "Issue", field: "title", code: "missing_field" }]);
    checkBodyLength(ctx, "Issue", str(b, "body"));
    const issue = newIssue(ctx, repo, title, str(b, "body") ?? null);
    for (const n of labelNames(b)) {
      ensureLabel(ctx, repo, n);
      issue.labels.push(n);
    }
    for (const a of (b.assignees as string[] | undefined) ?? []) {
      const u = ctx.core.state.users.get(a);
      if (u) issue.assignees.push(u);
    }
    emit(ctx, "issues", "opened", { issue: ctx.core.model.issue(repo, issue) });
    return ok(ctx.core.model.issue(repo, issue), 201);
  },
  "issues/get": async (ctx) => ok(ctx.core.model.issue(repoOf(ctx), issueOf(ctx))),
  "issues/update": async (ctx) => {
    const repo = repoOf(ctx);
    const issue = issueOf(ctx);
    const b = ctx.body ?? {};
    // Its author may edit its title and body, and close or reopen it, with read access; anyone else
    // needs triage to close, reopen and label it, and write access for another's title or body.
    // Labels and assignees from someone without triage are dropped silently, as on GitHub.
    const author = ctx.token?.kind === "user" && issue.user.id === ctx.actor.id;
    const triage = roleAtLeastTriage(ctx);
    if (!author && !triage) throw new HttpError(403, "Must have triage access to repository", ctx.doc);
    if (!triage) {
      delete b.labels;
      delete b.assignees;
    }
    if (("title" in b || "body" in b) && ctx.token?.kind === "user" && !author && !roleAtLeastWrite(ctx))
      throw new HttpError(403, "Must have push access to repository", ctx.doc);
    checkBodyLength(ctx, "Issue", str(b, "body"));
    const changes: Record<string, unknown> = {};
    if (typeof b.title === "string" && b.title !== issue.title) {
      changes.title = { from: issue.title };
      issue.title = b.title;
    }
    if ("body" in b && b.body !== issue.body) {
      changes.body = { from: issue.body ?? "" };
      issue.body = (b.body as string | null) ?? null;
      // GitHub records each edit of the body as a user content edit, the latest as `lastEditedAt` (GraphQL).
      issue.lastEditedAt = now();
    }
    if (Object.keys(changes).length) {
      issue.updatedAt = now();
      await emitIssueEvent(ctx, issue, "edited", { changes });
    }
    if (Array.isArray(b.assignees))
      issue.assignees = (b.assignees as string[]).map((a) => ctx.core.state.users.get(a)).filter((u): u is User => !!u);
    if (Array.isArray(b.labels)) {
      const want = labelNames(b);
      for (const old of [...issue.labels]) if (!want.includes(old)) await removeLabel(ctx, issue, old);
      await addLabels(ctx, issue, want);
    }
    const state = str(b, "state");
    if (state && state !== issue.state) {
      if (issue.pull?.merged)
        throw invalid(ctx, "Validation Failed", [
          { resource: "Issue", code: "custom", message: "Cannot change state of a merged pull request" },
        ]);
      setIssueState(ctx, issue, state as "open" | "closed", str(b, "state_reason") ?? null);
      await emitIssueEvent(ctx, issue, state === "closed" ? "closed" : "reopened");
    }
    return ok(ctx.core.model.issue(repo, issue));
  },
  "issues/list-for-repo": async (ctx) => {
    const repo = repoOf(ctx);
    const state = ctx.query.get("state") ?? "open";
    const labels = ctx.query.get("labels")?.split(",").filter(Boolean) ?? [];
    const creator = ctx.query.get("creator");
    const since = ctx.query.get("since");
    let list = ctx.core.state.issuesOf(repo.id).filter((i) => state === "all" || i.state === state);
    list = list.filter((i) => labels.every((l) => i.labels.includes(l)));
    if (creator) list = list.filter((i) => i.user.login === creator);
    if (since) list = list.filter((i) => i.updatedAt >= since);
    const sort = ctx.query.get("sort") ?? "created";
    const dir = ctx.query.get("direction") ?? "desc";
    const key = (i: Issue) =>
      (sort === "updated" ? i.updatedAt : sort === "comments" ? String(i.comments).padStart(9, "0") : i.createdAt) +
      String(i.number).padStart(9, "0");
    list.sort((a, b) => (dir === "asc" ? key(a).localeCompare(key(b)) : key(b).localeCompare(key(a))));
    return ok(ctx.page(list).map((i) => ctx.core.model.issue(repo, i)));
  },

  // docs.github.com/rest/issues/comments
  "issues/create-comment": async (ctx) => {
    const repo = repoOf(ctx);
    const issue = issueOf(ctx);
    const body = str(ctx.body, "body")!;
    checkBodyLength(ctx, "IssueComment", body);
    if (issue.locked && roleAtLeastWrite(ctx) === false)
      throw new HttpError(403, "Unable to create comment because issue is locked.", ctx.doc);
    const t = now();
    const c: Comment = {
      id: ctx.core.state.id(),
      repoId: repo.id,
      issueNumber: issue.number,
      body,
      user: ctx.actor,
      createdAt: t,
      updatedAt: t,
      viaAppId: ctx.token?.appId,
      reactions: [],
    };
    ctx.core.state.comments.set(c.id, c);
    issue.comments++;
    issue.updatedAt = t;
    emit(ctx, "issue_comment", "created", { issue: ctx.core.model.issue(repo, issue), comment: ctx.core.model.comment(repo, c) });
    return ok(ctx.core.model.comment(repo, c), 201);
  },
  "issues/list-comments": async (ctx) => {
    const repo = repoOf(ctx);
    const issue = issueOf(ctx);
    const since = ctx.query.get("since");
    const list = [...ctx.core.state.comments.values()].filter(
      (c) => c.repoId === repo.id && c.issueNumber === issue.number && (!since || c.updatedAt >= since),
    );
    return ok(ctx.page(list).map((c) => ctx.core.model.comment(repo, c)));
  },
  "issues/get-comment": async (ctx) => ok(ctx.core.model.comment(repoOf(ctx), commentOf(ctx))),
  "issues/update-comment": async (ctx) => {
    const repo = repoOf(ctx);
    const c = commentOf(ctx);
    const body = str(ctx.body, "body")!;
    checkBodyLength(ctx, "IssueComment", body);
    if (ctx.token?.kind === "user" && c.user.id !== ctx.actor.id && !roleAtLeastWrite(ctx))
      throw new HttpError(403, "Must have admin rights to Repository.", ctx.doc);
    const from = c.body;
    c.body = body;
    c.updatedAt = now();
    const issue = ctx.core.state.issue(repo.id, c.issueNumber)!;
    if (from !== body)
      emit(ctx, "issue_comment", "edited", {
        changes: { body: { from } },
        issue: ctx.core.model.issue(repo, issue),
        comment: ctx.core.model.comment(repo, c),
      });
    return ok(ctx.core.model.comment(repo, c));
  },
  "issues/delete-comment": async (ctx) => {
    const repo = repoOf(ctx);
    const c = commentOf(ctx);
    ctx.core.state.comments.delete(c.id);
    const issue = ctx.core.state.issue(repo.id, c.issueNumber)!;
    issue.comments--;
    emit(ctx, "issue_comment", "deleted", { issue: ctx.core.model.issue(repo, issue), comment: ctx.core.model.comment(repo, c) });
    return { status: 204 };
  },

  // docs.github.com/rest/issues/labels — adding an unknown label creates it.
  "issues/add-labels": async (ctx) => {
    const repo = repoOf(ctx);
    const issue = issueOf(ctx);
    await addLabels(ctx, issue, labelNames(ctx.body));
    return ok(issue.labels.map((n) => ctx.core.model.label(repo, repo.labels.get(n)!)));
  },
  "issues/set-labels": async (ctx) => {
    const repo = repoOf(ctx);
    const issue = issueOf(ctx);
    const want = labelNames(ctx.body);
    for (const old of [...issue.labels]) if (!want.includes(old)) await removeLabel(ctx, issue, old);
    await addLabels(ctx, issue, want);
    return ok(issue.labels.map((n) => ctx.core.model.label(repo, repo.labels.get(n)!)));
  },
  "issues/remove-label": async (ctx) => {
    const repo = repoOf(ctx);
    const issue = issueOf(ctx);
    if (!issue.labels.includes(ctx.params.name!)) throw new HttpError(404, "Label does not exist", ctx.doc);
    await removeLabel(ctx, issue, ctx.params.name!);
    return ok(issue.labels.map((n) => ctx.core.model.label(repo, repo.labels.get(n)!)));
  },
  "issues/list-labels-on-issue": async (ctx) => {
    const repo = repoOf(ctx);
    return ok(ctx.page(issueOf(ctx).labels.map((n) => ctx.core.model.label(repo, repo.labels.get(n)!))));
  },
  "issues/create-label": async (ctx) => {
    const repo = repoOf(ctx);
    const name = str(ctx.body, "name")!;
    if (repo.labels.has(name)) throw invalid(ctx, "Validation Failed", [{ resource: "Label", code: "already_exists", field: "name" }]);
    // Recorded from GitHub (@octokit/fixtures "errors"): a color that is not 6 hex digits is invalid.
    const color = str(ctx.body, "color");
    if (color !== undefined && !/^#?[0-9a-fA-F]{6}$/.test(color))
      throw invalid(ctx, "Validation Failed", [{ resource: "Label", code: "invalid", field: "color" }]);
    const l: Label = {
      id: ctx.core.state.id(),
      name,
      color: (str(ctx.body, "color") ?? "ededed").replace(/^#/, ""),
      description: str(ctx.body, "description") ?? null,
      default: false,
    };
    repo.labels.set(name, l);
    return ok(ctx.core.model.label(repo, l), 201);
  },
  "issues/get-label": async (ctx) => {
    const repo = repoOf(ctx);
    const l = repo.labels.get(ctx.params.name!);
    if (!l) throw notFound(ctx);
    return ok(ctx.core.model.label(repo, l));
  },
  "issues/list-labels-for-repo": async (ctx) => {
    const repo = repoOf(ctx);
    return ok(ctx.page([...repo.labels.values()].map((l) => ctx.core.model.label(repo, l))));
  },

  // docs.github.com/rest/reactions: 201 when created, 200 when the same reaction already exists.
  "reactions/create-for-issue": async (ctx) => {
    const repo = repoOf(ctx);
    const issue = issueOf(ctx);
    const key = `${repo.id}#${issue.number}`;
    const list = ctx.core.model.issueReactions.get(key) ?? [];
    ctx.core.model.issueReactions.set(key, list);
    return react(ctx, list);
  },
  "reactions/create-for-issue-comment": async (ctx) => react(ctx, commentOf(ctx).reactions),
  "reactions/list-for-issue-comment": async (ctx) => {
    const content = ctx.query.get("content");
    return ok(
      ctx.page(
        commentOf(ctx)
          .reactions.filter((r) => !content || r.content === content)
          .map((r) => ctx.core.model.reaction(r)),
      ),
    );
  },
};

function roleAtLeastTriage(ctx: RestCtx): boolean {
  if (ctx.token?.kind !== "user") return true;
  const repo = repoOf(ctx);
  const role = ctx.actor.id === repo.owner.id ? "admin" : repo.collaborators.get(ctx.actor.login);
  return role === "triage" || role === "write" || role === "maintain" || role === "admin";
}

function roleAtLeastWrite(ctx: RestCtx): boolean {
  if (ctx.token?.kind !== "user") return true;
  const repo = repoOf(ctx);
  const role = ctx.actor.id === repo.owner.id ? "admin" : repo.collaborators.get(ctx.actor.login);
  return role === "write" || role === "maintain" || role === "admin";
}

function commentOf(ctx: RestCtx): Comment {
  const repo = repoOf(ctx);
  const c = ctx.core.state.comments.get(Number(ctx.params.comment_id));
  if (!c || c.repoId !== repo.id) throw notFound(ctx);
  return c;
}

async function react(ctx: RestCtx, list: Reaction[]): Promise<Result> {
  const content = str(ctx.body, "content")!;
  const existing = list.find((r) => r.user.id === ctx.actor.id && r.content === content);
  if (existing) return ok(ctx.core.model.reaction(existing), 200);
  const r: Reaction = { id: ctx.core.state.id(), user: ctx.actor, content, createdAt: now() };
  list.push(r);
  return ok(ctx.core.model.reaction(r), 201);
}
