// REST operations of the local GitHub: check runs and check suites (docs.github.com/rest/checks).
import { HttpError } from "../auth.js";
import * as git from "../git/index.js";
import type { CheckRun, Repo } from "../state.js";
import { now, queuedCheckRun } from "../state.js";
import { completeSuite, emitCheckRun } from "../domain/check-events.js";
import type { Handler, RestCtx, Result } from "./context.js";
import { commitish, emit, invalid, notFound, ok, repoOf, str } from "./context.js";

/**
 * docs.github.com/rest/checks: "Write permission for the Checks API is only available to GitHub
 * Apps"; a check run can only be updated by the App that created it; `rerequested` and
 * `requested_action` are sent only to that App.
 */
function checkApp(ctx: RestCtx): number {
  const appId = ctx.token?.appId;
  if (ctx.token?.kind === "workflow") return ctx.token.appId!;
  if (!appId) throw new HttpError(403, "You must authenticate via a GitHub App.", ctx.doc);
  return appId;
}

function runOf(ctx: RestCtx): CheckRun {
  const repo = repoOf(ctx);
  const r = ctx.core.state.checkRuns.get(Number(ctx.params.check_run_id));
  if (!r || r.repoId !== repo.id) throw notFound(ctx);
  return r;
}

function applyRunFields(ctx: RestCtx, run: CheckRun, b: Record<string, unknown>): void {
  if (str(b, "name")) run.name = str(b, "name")!;
  if ("details_url" in b) run.detailsUrl = (b.details_url as string | null) ?? null;
  if ("external_id" in b) run.externalId = (b.external_id as string | null) ?? null;
  if (str(b, "started_at")) run.startedAt = str(b, "started_at")!;
  if (str(b, "status")) run.status = str(b, "status") as CheckRun["status"];
  if (b.output) {
    const o = b.output as Record<string, unknown>;
    const added = Array.isArray(o.annotations) ? (o.annotations as Array<Record<string, unknown>>) : [];
    const annotations = added.length;
    run.annotations = [
      ...(run.annotations ?? []),
      ...added.map((a) => ({
        path: String(a.path ?? ""),
        startLine: Number(a.start_line ?? 1),
        endLine: Number(a.end_line ?? a.start_line ?? 1),
        level: (a.annotation_level as "notice" | "warning" | "failure") ?? "notice",
        message: String(a.message ?? ""),
        title: typeof a.title === "string" ? a.title : null,
      })),
    ];
    run.output = {
      title: (o.title as string) ?? run.output.title,
      summary: (o.summary as string) ?? run.output.summary,
      text: (o.text as string) ?? run.output.text,
      annotations_count: run.output.annotations_count + annotations,
    };
  }
  if (Array.isArray(b.actions)) run.actions = b.actions as CheckRun["actions"];
  // "Providing conclusion will automatically set the status parameter to completed."
  if (str(b, "conclusion")) {
    run.conclusion = str(b, "conclusion")!;
    run.status = "completed";
  }
  if (run.status === "completed") {
    run.completedAt = str(b, "completed_at") ?? run.completedAt ?? now();
    if (!run.conclusion) throw invalid(ctx, 'Invalid request.\n\nNo subschema in "anyOf" matched.\n"conclusion" wasn\'t supplied.');
  }
  if (run.status === "in_progress" && !run.startedAt) run.startedAt = now();
}

/**
 * The webhooks a check run's change sends (domain/check-events.ts: to every App that may read
 * checks): `created`, `completed`, and the suite's `completed` once every run of it has completed.
 */
async function afterRunChange(ctx: RestCtx, run: CheckRun, wasCompleted: boolean, created: boolean): Promise<void> {
  const repo = repoOf(ctx);
  const who = { sender: ctx.actor, causedByWorkflowRun: ctx.token?.workflowRunId };
  if (created) emitCheckRun(ctx.core, repo, run, "created", who);
  const suite = ctx.core.state.suites.get(run.suiteId)!;
  if (run.status === "completed" && !wasCompleted) {
    emitCheckRun(ctx.core, repo, run, "completed", who);
    const runs = [...ctx.core.state.checkRuns.values()].filter((r) => r.suiteId === suite.id);
    if (runs.every((r) => r.status === "completed")) await completeSuite(ctx.core, repo, suite, who);
  } else if (run.status !== "completed") {
    if (suite.status === "queued" && run.status === "in_progress") suite.status = "in_progress";
  }
}

export const checkHandlers: Record<string, Handler> = {
  "checks/create": async (ctx) => {
    const repo = repoOf(ctx);
    const appId = checkApp(ctx);
    const b = ctx.body!;
    const headSha = str(b, "head_sha")!;
    if ((await git.objectType(repo.gitDir, headSha)) !== "commit") throw invalid(ctx, `No commit found for SHA: ${headSha}`);
    const branch = [...(await git.listRefs(repo.gitDir, "refs/heads/"))].find(([, s]) => s === headSha)?.[0].slice(11) ?? null;
    const suite = ctx.core.ensureSuite(repo, appId, headSha, branch);
    if (suite.status === "completed") {
      suite.status = "in_progress";
      suite.conclusion = null;
    }
    const run = queuedCheckRun({ id: ctx.core.state.id(), repoId: repo.id, suiteId: suite.id, appId, name: str(b, "name")!, headSha });
    applyRunFields(ctx, run, b);
    ctx.core.state.checkRuns.set(run.id, run);
    await afterRunChange(ctx, run, false, true);
    return ok(ctx.core.model.checkRun(repo, run, ctx.core.prsFor(repo, headSha)), 201);
  },
  "checks/update": async (ctx) => {
    const repo = repoOf(ctx);
    const run = runOf(ctx);
    const appId = checkApp(ctx);
    if (run.appId !== appId)
      throw new HttpError(403, `Invalid app_id \`${appId}\` - check run can only be modified by the GitHub App that created it.`, ctx.doc);
    const was = run.status === "completed";
    applyRunFields(ctx, run, ctx.body ?? {});
    await afterRunChange(ctx, run, was, false);
    return ok(ctx.core.model.checkRun(repo, run, ctx.core.prsFor(repo, run.headSha)));
  },
  // docs.github.com/rest/checks/runs#list-check-run-annotations
  "checks/list-annotations": async (ctx) => {
    const repo = repoOf(ctx);
    const run = ctx.core.state.checkRuns.get(Number(ctx.params.check_run_id));
    if (!run || run.repoId !== repo.id) throw notFound(ctx);
    const blob = `${ctx.core.model.web()}/${repo.owner.login}/${repo.name}/blob/${run.headSha}`;
    return ok(
      ctx.page(
        (run.annotations ?? []).map((a) => ({
          path: a.path,
          blob_href: `${blob}/${a.path}`,
          start_line: a.startLine,
          end_line: a.endLine,
          start_column: null,
          end_column: null,
          annotation_level: a.level,
          title: a.title,
          message: a.message,
          raw_details: null,
        })),
      ),
    );
  },
  "checks/get": async (ctx) => {
    const repo = repoOf(ctx);
    const run = runOf(ctx);
    return ok(ctx.core.model.checkRun(repo, run, ctx.core.prsFor(repo, run.headSha)));
  },
  "checks/list-for-ref": async (ctx) => {
    const repo = repoOf(ctx);
    const sha = await commitish(repo, ctx.params.ref!);
    if (!sha) throw invalid(ctx, `No commit found for SHA: ${ctx.params.ref}`);
    return listRuns(ctx, repo, (r) => r.headSha === sha);
  },
  "checks/list-for-suite": async (ctx) => {
    const repo = repoOf(ctx);
    const id = Number(ctx.params.check_suite_id);
    if (!ctx.core.state.suites.get(id)) throw notFound(ctx);
    return listRuns(ctx, repo, (r) => r.suiteId === id);
  },
  "checks/rerequest-run": async (ctx) => {
    const repo = repoOf(ctx);
    const run = runOf(ctx);
    if (run.status !== "completed") throw new HttpError(403, "This check run is not rerequestable", ctx.doc);
    emit(
      ctx,
      "check_run",
      "rerequested",
      { check_run: ctx.core.model.checkRunForHook(repo, run, ctx.core.prsFor(repo, run.headSha)) },
      run.appId,
    );
    return ok({}, 201);
  },
  "checks/create-suite": async (ctx) => {
    const repo = repoOf(ctx);
    const appId = checkApp(ctx);
    const headSha = str(ctx.body, "head_sha")!;
    if ((await git.objectType(repo.gitDir, headSha)) !== "commit") throw invalid(ctx, `No commit found for SHA: ${headSha}`);
    const existed = [...ctx.core.state.suites.values()].some((s) => s.repoId === repo.id && s.appId === appId && s.headSha === headSha);
    const suite = ctx.core.ensureSuite(repo, appId, headSha, null);
    return ok(
      { ...ctx.core.model.suite(repo, suite, ctx.core.prsFor(repo, headSha)), head_commit: await ctx.core.headCommit(repo, headSha) },
      existed ? 200 : 201,
    );
  },
  "checks/get-suite": async (ctx) => {
    const repo = repoOf(ctx);
    const s = ctx.core.state.suites.get(Number(ctx.params.check_suite_id));
    if (!s || s.repoId !== repo.id) throw notFound(ctx);
    return ok({
      ...ctx.core.model.suite(repo, s, ctx.core.prsFor(repo, s.headSha)),
      head_commit: await ctx.core.headCommit(repo, s.headSha),
    });
  },
  "checks/rerequest-suite": async (ctx) => {
    const repo = repoOf(ctx);
    const s = ctx.core.state.suites.get(Number(ctx.params.check_suite_id));
    if (!s || s.repoId !== repo.id) throw notFound(ctx);
    emit(
      ctx,
      "check_suite",
      "rerequested",
      {
        check_suite: {
          ...ctx.core.model.suite(repo, s, ctx.core.prsFor(repo, s.headSha)),
          head_commit: await ctx.core.headCommit(repo, s.headSha),
        },
      },
      s.appId,
    );
    return ok({}, 201);
  },
  "checks/list-suites-for-ref": async (ctx) => {
    const repo = repoOf(ctx);
    const sha = await commitish(repo, ctx.params.ref!);
    if (!sha) throw invalid(ctx, `No commit found for SHA: ${ctx.params.ref}`);
    const appId = ctx.query.get("app_id");
    const list = [...ctx.core.state.suites.values()].filter(
      (s) => s.repoId === repo.id && s.headSha === sha && (!appId || String(s.appId) === appId),
    );
    const page = ctx.page(list);
    return ok({
      total_count: list.length,
      check_suites: await Promise.all(
        page.map(async (s) => ({
          ...ctx.core.model.suite(repo, s, ctx.core.prsFor(repo, s.headSha)),
          head_commit: await ctx.core.headCommit(repo, s.headSha),
        })),
      ),
    });
  },
};

function listRuns(ctx: RestCtx, repo: Repo, pred: (r: CheckRun) => boolean): Result {
  const name = ctx.query.get("check_name");
  const status = ctx.query.get("status");
  const appId = ctx.query.get("app_id");
  const filter = ctx.query.get("filter") ?? "latest";
  let list = [...ctx.core.state.checkRuns.values()].filter((r) => r.repoId === repo.id && pred(r));
  if (name) list = list.filter((r) => r.name === name);
  if (status) list = list.filter((r) => r.status === status);
  if (appId) list = list.filter((r) => String(r.appId) === appId);
  list.sort((a, b) => b.id - a.id);
  // filter=latest keeps the most recent run per name (and App).
  if (filter === "latest") {
    const seen = new Set<string>();
    list = list.filter((r) => !seen.has(`${r.appId}:${r.name}`) && seen.add(`${r.appId}:${r.name}`));
  }
  const page = ctx.page(list);
  return ok({ total_count: list.length, check_runs: page.map((r) => ctx.core.model.checkRun(repo, r, ctx.core.prsFor(repo, r.headSha))) });
}
