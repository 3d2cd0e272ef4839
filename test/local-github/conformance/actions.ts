// Conformance: Actions (dispatch, runs, jobs, logs), what is not implemented, rulesets — the tests of each `describe` of conformance.test.ts, in its one world.
import { Octokit } from "@octokit/rest";
import { expect, it } from "vitest";
import { createSim } from "../../../src/local-github/server.js";
import { owner, repo, status, w, WORKFLOW } from "./world.js";

/** describe("actions") */
export function actions(): void {
  it("concurrent dispatches of a workflow seen for the first time share its id", async () => {
    const quiet = await createSim();
    try {
      await quiet.control.createRepo({ owner, name: repo, files: { ".github/workflows/forge-agent.yml": WORKFLOW } });
      const kit = new Octokit({ baseUrl: quiet.apiUrl, auth: quiet.control.userToken(owner) });
      const answers = await Promise.all(
        [1, 2, 3].map((n) =>
          kit.request("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", {
            owner,
            repo,
            workflow_id: "forge-agent.yml",
            ref: "main",
            inputs: { task_id: `t${n}` },
            return_run_details: true,
          }),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
      const { data } = await kit.rest.actions.listWorkflowRunsForRepo({ owner, repo });
      expect(new Set(data.workflow_runs.map((r) => r.workflow_id)).size).toBe(1);
      expect(quiet.violations).toEqual([]);
    } finally {
      await quiet.close();
    }
  });
}

/** describe("actions: dispatch, runs, jobs, logs") */
export function actionsRuns(): void {
  it("workflow_dispatch with and without run details, inputs validated, runs, jobs, logs, cancel", async () => {
    const { data: wfs } = await w.gh.rest.actions.listRepoWorkflows({ owner, repo });
    expect(wfs.workflows.map((w) => w.path)).toEqual([".github/workflows/forge-agent.yml"]);
    const wf = wfs.workflows[0]!;
    expect((await w.gh.rest.actions.getWorkflow({ owner, repo, workflow_id: "forge-agent.yml" })).data.id).toBe(wf.id);

    const plain = await w.gh.rest.actions.createWorkflowDispatch({
      owner,
      repo,
      workflow_id: "forge-agent.yml",
      ref: "main",
      inputs: { task_id: "t1" },
    });
    expect(plain.status).toBe(204);
    const detailed = await w.gh.request("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", {
      owner,
      repo,
      workflow_id: wf.id,
      ref: "main",
      inputs: { task_id: "t2", mode: "slow" },
      return_run_details: true,
    });
    expect(detailed.status).toBe(200);
    const details = detailed.data as unknown as { workflow_run_id: number; run_url: string; html_url: string };
    expect(details.run_url).toBe(`${w.sim.apiUrl}/repos/${owner}/${repo}/actions/runs/${details.workflow_run_id}`);

    expect(
      await status(
        w.gh.rest.actions.createWorkflowDispatch({
          owner,
          repo,
          workflow_id: "forge-agent.yml",
          ref: "main",
          inputs: { task_id: "t", bogus: "x" },
        }),
      ),
    ).toBe(422);
    expect(
      await status(w.gh.rest.actions.createWorkflowDispatch({ owner, repo, workflow_id: "forge-agent.yml", ref: "main", inputs: {} })),
    ).toBe(422);
    expect(
      await status(
        w.gh.rest.actions.createWorkflowDispatch({
          owner,
          repo,
          workflow_id: "forge-agent.yml",
          ref: "main",
          inputs: { task_id: "t", mode: "medium" },
        }),
      ),
    ).toBe(422);
    expect(
      await status(
        w.gh.rest.actions.createWorkflowDispatch({
          owner,
          repo,
          workflow_id: "forge-agent.yml",
          ref: "no-such-branch",
          inputs: { task_id: "t" },
        }),
      ),
    ).toBe(422);
    expect(await status(w.gh.rest.actions.createWorkflowDispatch({ owner, repo, workflow_id: "nope.yml", ref: "main" }))).toBe(404);

    await w.sim.idle();
    const { data: run } = await w.gh.rest.actions.getWorkflowRun({ owner, repo, run_id: details.workflow_run_id });
    expect(run.status).toBe("completed");
    expect(run.conclusion).toBe("success");
    expect(run.event).toBe("workflow_dispatch");
    expect(run.display_title).toBe("forge t2/1");
    const { data: runs } = await w.gh.rest.actions.listWorkflowRuns({ owner, repo, workflow_id: "forge-agent.yml", status: "success" });
    expect(runs.total_count).toBe(2);
    expect((await w.gh.rest.actions.listWorkflowRunsForRepo({ owner, repo, event: "workflow_dispatch" })).data.total_count).toBe(2);
    const { data: jobs } = await w.gh.rest.actions.listJobsForWorkflowRun({ owner, repo, run_id: run.id });
    expect(jobs.jobs.map((j) => [j.name, j.conclusion])).toEqual([["agent", "success"]]);
    expect((await w.gh.rest.actions.getJobForWorkflowRun({ owner, repo, job_id: jobs.jobs[0]!.id })).data.run_id).toBe(run.id);
    const jobLog = await w.gh.rest.actions.downloadJobLogsForWorkflowRun({ owner, repo, job_id: jobs.jobs[0]!.id });
    expect(String(jobLog.data)).toContain("noop executor");
    const zip = await w.gh.rest.actions.downloadWorkflowRunLogs({ owner, repo, run_id: run.id });
    expect(
      Buffer.from(zip.data as ArrayBuffer)
        .subarray(0, 2)
        .toString(),
    ).toBe("PK");
    // Cancelling a completed run is 409.
    expect(await status(w.gh.rest.actions.cancelWorkflowRun({ owner, repo, run_id: run.id }))).toBe(409);

    // A registered executor drives the run and sees the cancel through its AbortSignal.
    let token = "";
    w.sim.onWorkflowDispatch(async (d) => {
      token = d.token("agent");
      d.startJob("agent", ["checkout", "agent"]);
      d.step("agent", 1, "in_progress");
      d.log("agent", "working\n");
      await new Promise<void>((r) => d.signal.addEventListener("abort", () => r()));
      d.step("agent", 1, "completed", "cancelled");
      d.completeJob("agent", "cancelled");
      d.complete();
    });
    const res = await w.gh.request("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", {
      owner,
      repo,
      workflow_id: wf.id,
      ref: "main",
      inputs: { task_id: "t3" },
      return_run_details: true,
    });
    const runId = (res.data as unknown as { workflow_run_id: number }).workflow_run_id;
    for (let i = 0; i < 100 && (await w.gh.rest.actions.getWorkflowRun({ owner, repo, run_id: runId })).data.status !== "in_progress"; i++)
      await new Promise((r) => setTimeout(r, 10));
    // The GITHUB_TOKEN carries the workflow's permissions (contents: write, pull-requests: write).
    const wfKit = new Octokit({ baseUrl: w.sim.apiUrl, auth: token });
    expect((await wfKit.rest.repos.get({ owner, repo })).status).toBe(200);
    expect(await status(wfKit.rest.issues.create({ owner, repo, title: "no issues permission" }))).toBe(403);
    expect((await w.gh.rest.actions.cancelWorkflowRun({ owner, repo, run_id: runId })).status).toBe(202);
    for (let i = 0; i < 100 && (await w.gh.rest.actions.getWorkflowRun({ owner, repo, run_id: runId })).data.status !== "completed"; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect((await w.gh.rest.actions.getWorkflowRun({ owner, repo, run_id: runId })).data.conclusion).toBe("cancelled");
    // The token dies with the run.
    expect(await status(wfKit.rest.repos.get({ owner, repo }))).toBe(401);
    w.sim.onWorkflowDispatch(undefined);
    await w.sim.idle();

    const kinds = w.receiver.received.filter((h) => h.event.startsWith("workflow")).map((h) => `${h.event}.${h.action}`);
    expect(kinds).toEqual(
      expect.arrayContaining([
        "workflow_dispatch.null",
        "workflow_run.requested",
        "workflow_run.in_progress",
        "workflow_run.completed",
        "workflow_job.queued",
        "workflow_job.in_progress",
        "workflow_job.completed",
      ]),
    );
  });
}

/** describe("actions: a queued run") */
export function actionsQueued(): void {
  it("cancels a queued run when no executor runs it", async () => {
    const quiet = await createSim();
    try {
      await quiet.control.createRepo({ owner, name: repo, files: { ".github/workflows/forge-agent.yml": WORKFLOW } });
      const kit = new Octokit({ baseUrl: quiet.apiUrl, auth: quiet.control.userToken(owner) });
      const res = await kit.request("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", {
        owner,
        repo,
        workflow_id: "forge-agent.yml",
        ref: "main",
        inputs: { task_id: "t" },
        return_run_details: true,
      });
      const runId = (res.data as unknown as { workflow_run_id: number }).workflow_run_id;
      expect((await kit.rest.actions.getWorkflowRun({ owner, repo, run_id: runId })).data.status).toBe("queued");
      expect((await kit.rest.actions.cancelWorkflowRun({ owner, repo, run_id: runId })).status).toBe(202);
      expect((await kit.rest.actions.getWorkflowRun({ owner, repo, run_id: runId })).data.conclusion).toBe("cancelled");
      expect(quiet.violations).toEqual([]);
    } finally {
      await quiet.close();
    }
  });
}

/** describe("not implemented and not found") */
export function notImplemented(): void {
  it("answers 501 naming the operationId, 404 for unknown paths", async () => {
    const err = await w.gh.rest.repos
      .listWebhooks({ owner, repo })
      .catch((e: { status: number; response: { data: { message: string; documentation_url: string } } }) => e);
    expect((err as { status: number }).status).toBe(501);
    expect((err as { response: { data: { message: string } } }).response.data.message).toContain("repos/list-webhooks");
    expect((err as { response: { data: { documentation_url: string } } }).response.data.documentation_url).toMatch(
      /^https:\/\/docs\.github\.com\//,
    );
    expect(await status(w.gh.request("GET /definitely/not/github"))).toBe(404);
    // GraphQL (GHES: /api/graphql) needs authentication.
    const gql = await fetch(`${w.sim.url}/api/graphql`, { method: "POST", body: JSON.stringify({ query: "{ viewer { login } }" }) });
    expect(gql.status).toBe(401);
    expect(await status(w.gh.rest.repos.get({ owner, repo: "missing" }))).toBe(404);
  });
}

/** describe("rulesets") */
export function rulesets(): void {
  it("an admin's ruleset is listed, read and applied to branches by pattern; writes it forbids are refused to everyone but its bypass actors", async () => {
    const admin = new Octokit({ baseUrl: w.sim.apiUrl, auth: w.sim.control.userToken(owner) });
    const body = {
      owner,
      repo,
      name: "guarded",
      target: "branch" as const,
      enforcement: "active" as const,
      conditions: { ref_name: { include: ["refs/heads/guarded/*"], exclude: ["refs/heads/guarded/open"] } },
      rules: [
        { type: "creation" as const },
        { type: "update" as const },
        { type: "deletion" as const },
        { type: "non_fast_forward" as const },
      ],
      bypass_actors: [{ actor_id: w.appId, actor_type: "Integration" as const, bypass_mode: "always" as const }],
    };
    // Creating a ruleset is an administrator's (or the Administration permission's) business.
    expect(await status(w.person.rest.repos.createRepoRuleset({ ...body, name: "mine" }))).toBe(403);
    const { data: set } = await admin.rest.repos.createRepoRuleset(body);
    expect(await status(admin.rest.repos.createRepoRuleset(body))).toBe(422); // names are unique
    expect((await w.person.rest.repos.getRepoRulesets({ owner, repo })).data.map((r) => r.name)).toEqual(["guarded"]);
    expect((await w.person.rest.repos.getRepoRuleset({ owner, repo, ruleset_id: set.id })).data.rules?.length).toBe(4);
    const rules = async (branch: string) => (await w.gh.rest.repos.getBranchRules({ owner, repo, branch })).data.map((r) => r.type);
    expect(await rules("guarded/a")).toEqual(["creation", "update", "deletion", "non_fast_forward"]);
    expect(await rules("guarded/open")).toEqual([]);
    expect(await rules("guarded/a/b")).toEqual([]); // `*` stops at a slash
    expect(await rules("main")).toEqual([]);

    const { data: main } = await w.gh.rest.git.getRef({ owner, repo, ref: "heads/main" });
    const sha = main.object.sha;
    // The App is on the bypass list: it creates and moves a guarded branch.
    await w.gh.rest.git.createRef({ owner, repo, ref: "refs/heads/guarded/a", sha });
    const refused = async (p: Promise<unknown>, expected = 422): Promise<string> => {
      try {
        await p;
      } catch (e) {
        const err = e as { status: number; response?: { data?: { message?: string } } };
        expect(err.status).toBe(expected);
        return err.response?.data?.message ?? "";
      }
      throw new Error("the write went through");
    };
    expect(await refused(w.person.rest.git.createRef({ owner, repo, ref: "refs/heads/guarded/b", sha }))).toContain(
      "Cannot create ref due to creations being restricted.",
    );
    expect(await refused(w.person.rest.git.deleteRef({ owner, repo, ref: "heads/guarded/a" }))).toContain(
      "Cannot delete this protected ref.",
    );
    expect(
      await refused(
        w.person.rest.repos.createOrUpdateFileContents({ owner, repo, path: "g.txt", branch: "guarded/a", message: "g", content: "Zw==" }),
        409, // the contents API's answer to a rule violation (its description: 409, repository-rule-violation-error)
      ),
    ).toContain("Cannot update this protected ref.");
    await w.person.rest.git.createRef({ owner, repo, ref: "refs/heads/ahead-g", sha });
    await w.person.rest.repos.createOrUpdateFileContents({ owner, repo, path: "g.txt", branch: "ahead-g", message: "g", content: "Zw==" });
    expect(await refused(w.person.rest.repos.merge({ owner, repo, base: "guarded/a", head: "ahead-g" }))).toContain(
      "Repository rule violations found",
    );
    // An excluded branch is free.
    await w.person.rest.git.createRef({ owner, repo, ref: "refs/heads/guarded/open", sha });
    await w.gh.rest.git.deleteRef({ owner, repo, ref: "heads/guarded/a" });
    await w.person.rest.git.deleteRef({ owner, repo, ref: "heads/guarded/open" });
    await w.person.rest.git.deleteRef({ owner, repo, ref: "heads/ahead-g" });
    // Updated (what the body leaves out is kept) and deleted by an administrator (conformance-rules.test.ts has more).
    const { data: off } = await admin.rest.repos.updateRepoRuleset({ owner, repo, ruleset_id: set.id, enforcement: "disabled" });
    expect([off.enforcement, off.rules?.length]).toEqual(["disabled", 4]);
    expect(await rules("guarded/a")).toEqual([]);
    expect((await admin.rest.repos.deleteRepoRuleset({ owner, repo, ruleset_id: set.id })).status).toBe(204);
    expect((await w.person.rest.repos.getRepoRulesets({ owner, repo })).data).toEqual([]);
  });
}
