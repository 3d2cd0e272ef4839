// REST operations of the local GitHub: GitHub Actions workflows, their runs and jobs, dispatch,
// cancel and log downloads (docs.github.com/rest/actions).
import { HttpError } from "../auth.js";
import type { SimCore } from "../domain/index.js";
import * as git from "../git/index.js";
import type { Handler, RestCtx, Result } from "../rest/index.js";
import type { Job, Repo, WorkflowRun } from "../state.js";
import { dispatch } from "./dispatch.js";
import type { WorkflowFiles } from "./files.js";
import type { WorkflowRuns } from "./runs.js";

export function actionsApiHandlers(core: SimCore, files: WorkflowFiles, workflowRuns: WorkflowRuns): Record<string, Handler> {
  const runOf = (ctx: RestCtx): WorkflowRun => {
    const r = core.state.runs.get(Number(ctx.params.run_id));
    if (!r || r.repoId !== ctx.repo?.id) throw new HttpError(404, "Not Found", ctx.doc);
    return r;
  };
  const jobOf = (ctx: RestCtx): { run: WorkflowRun; job: Job } => {
    for (const run of core.state.runs.values()) {
      if (run.repoId !== ctx.repo?.id) continue;
      const job = run.jobs.find((j) => j.id === Number(ctx.params.job_id));
      if (job) return { run, job };
    }
    throw new HttpError(404, "Not Found", ctx.doc);
  };
  const runJson = async (repo: Repo, r: WorkflowRun) => core.model.run(repo, r, await git.readCommit(repo.gitDir, r.headSha));
  const listRuns = async (ctx: RestCtx, wfId?: number): Promise<Result> => {
    const repo = ctx.repo!;
    const q = ctx.query;
    let runs = [...core.state.runs.values()].filter((r) => r.repoId === repo.id && (wfId === undefined || r.workflowId === wfId));
    if (q.get("actor")) runs = runs.filter((r) => r.actor.login === q.get("actor"));
    if (q.get("branch")) runs = runs.filter((r) => r.headBranch === q.get("branch"));
    if (q.get("event")) runs = runs.filter((r) => r.event === q.get("event"));
    if (q.get("head_sha")) runs = runs.filter((r) => r.headSha === q.get("head_sha"));
    // `status` accepts statuses and conclusions alike.
    if (q.get("status")) runs = runs.filter((r) => r.status === q.get("status") || r.conclusion === q.get("status"));
    runs.sort((a, b) => b.id - a.id);
    const page = ctx.page(runs);
    return { status: 200, body: { total_count: runs.length, workflow_runs: await Promise.all(page.map((r) => runJson(repo, r))) } };
  };
  return {
    "actions/list-repo-workflows": async (ctx) => {
      const repo = ctx.repo!;
      const all = await files.list(repo);
      return { status: 200, body: { total_count: all.length, workflows: ctx.page(all).map((w) => core.model.workflow(repo, w)) } };
    },
    "actions/get-workflow": async (ctx) => ({
      status: 200,
      body: core.model.workflow(ctx.repo!, await files.find(ctx, ctx.repo!, ctx.params.workflow_id!)),
    }),
    "actions/create-workflow-dispatch": async (ctx) => {
      const repo = ctx.repo!;
      const wf = await files.find(ctx, repo, ctx.params.workflow_id!);
      const run = await dispatch(workflowRuns, ctx, repo, wf, ctx.body ?? {});
      if (ctx.body?.return_run_details === true) {
        const json = core.model.run(repo, run, null);
        return { status: 200, body: { workflow_run_id: run.id, run_url: json.url, html_url: json.html_url } };
      }
      return { status: 204 };
    },
    "actions/list-workflow-runs": async (ctx) => listRuns(ctx, (await files.find(ctx, ctx.repo!, ctx.params.workflow_id!)).id),
    "actions/list-workflow-runs-for-repo": async (ctx) => listRuns(ctx),
    "actions/get-workflow-run": async (ctx) => ({ status: 200, body: await runJson(ctx.repo!, runOf(ctx)) }),
    "actions/cancel-workflow-run": async (ctx) => {
      workflowRuns.cancel(ctx, runOf(ctx));
      return { status: 202, body: {} };
    },
    "actions/list-jobs-for-workflow-run": async (ctx) => {
      const run = runOf(ctx);
      return {
        status: 200,
        body: { total_count: run.jobs.length, jobs: ctx.page(run.jobs).map((j) => core.model.job(ctx.repo!, run, j)) },
      };
    },
    "actions/get-job-for-workflow-run": async (ctx) => {
      const { run, job } = jobOf(ctx);
      return { status: 200, body: core.model.job(ctx.repo!, run, job) };
    },
    // Both log downloads answer 302 with a short-lived URL (docs: "Download workflow run logs").
    "actions/download-workflow-run-logs": async (ctx) => {
      const run = runOf(ctx);
      return { status: 302, headers: { location: `${core.baseUrl}/_sim/logs/runs/${run.id}.zip` } };
    },
    "actions/download-job-logs-for-workflow-run": async (ctx) => {
      const { job } = jobOf(ctx);
      return { status: 302, headers: { location: `${core.baseUrl}/_sim/logs/jobs/${job.id}.txt` } };
    },
  };
}
