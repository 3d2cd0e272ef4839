/**
 * The workflow_run and workflow_job handlers (the jobs the App dispatched), through a real Probot
 * instance with GitHub mocked by nock 14 (./fixtures.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { JOB_END_GRACE_MS } from "../../../src/app/context.js";
import { LABELS } from "../../../src/core/layout.js";
import {
  branchOf,
  decodedJournal,
  delivery,
  GitHubMock,
  INTEGRATION_SHA,
  JOURNAL_SHA,
  journalView,
  R,
  repository,
  RUN_ID,
  startApp,
  storedRun,
  taskOf,
  user,
  WORK,
} from "./fixtures.js";
import { recordPush, recordPushMocks, TRACKER_BODY } from "./deliveries.js";

let gh: GitHubMock;
beforeEach(() => {
  gh = new GitHubMock();
});
afterEach(() => gh.close());

/** The sender of a dispatched run's events: the App, whose token dispatched it. */
const appBot = user("forge[bot]", "Bot");

function workflowRun(action: "completed" | "in_progress", conclusion: string | null) {
  return delivery("workflow_run", {
    action,
    workflow_run: {
      id: 5001,
      name: "Forge agent",
      head_branch: branchOf("a", 1),
      head_sha: WORK,
      event: "workflow_dispatch",
      status: action === "completed" ? "completed" : "in_progress",
      conclusion,
      run_attempt: 1,
      run_number: 1,
      path: ".github/workflows/forge-agent.yml",
      actor: appBot,
      triggering_actor: appBot,
      head_repository: repository(),
    },
    workflow: { id: 9, name: "Forge agent", path: ".github/workflows/forge-agent.yml", state: "active" },
    sender: appBot,
  });
}

/** The jobs of run 5001: one job whose "Run Forge" step is `step` when the job ended. */
function jobsOfRun(step: "completed" | "in_progress") {
  return gh.reply(`GET ${R}/actions/runs/5001/jobs?per_page=100`, 200, {
    total_count: 1,
    jobs: [
      {
        id: 8001,
        run_id: 5001,
        name: "agent",
        status: "completed",
        conclusion: "failure",
        head_sha: WORK,
        steps: [
          { name: "Set up job", status: "completed", conclusion: "success", number: 1 },
          { name: "Run Forge", status: step, conclusion: step === "completed" ? "failure" : null, number: 2 },
        ],
      },
    ],
  });
}

/** The failed job's annotations (its `core.setFailed`): no rule of the repository refused its push here. */
function failureAnnotations() {
  return gh.reply(`GET ${R}/check-runs/8001/annotations?per_page=50`, 200, [
    {
      path: ".github",
      blob_href: "https://github.com/acme/widgets/blob/x/.github",
      start_line: 1,
      end_line: 1,
      start_column: null,
      end_column: null,
      annotation_level: "failure",
      title: null,
      message: "Attempt 1 of a ended with exit 1 (failure): the agent failed",
      raw_details: null,
    },
  ]);
}

describe("workflow_run", () => {
  it("completed before the push of its result: the push is given a moment, and the branch is never read", async () => {
    const app = await startApp({ jobEndGraceMs: JOB_END_GRACE_MS });
    const before = storedRun({ a: [], b: ["a"] });
    gh.app();
    gh.token();
    gh.repo();
    gh.config("main");
    gh.journal(before);
    const { write1 } = recordPushMocks(gh);

    // GitHub delivers in no order: the job's completion first, then the push of its record commit.
    // Both payloads are built (and checked against GitHub's schema, slow the first time in a
    // process) before the first is delivered, so the grace measures only the App's handling.
    const ended = workflowRun("completed", "success");
    const push = recordPush();
    await app.receive(ended);
    await app.receive(push);
    await app.clock.advance(JOB_END_GRACE_MS);
    await app.forge.idle();

    // Reading the branch (its head, the commit) would have told what the push then did.
    expect(
      gh.routes().filter((r) => r.includes(`/git/ref/heads/${encodeURIComponent(branchOf("a", 1))}`) || r.includes("/git/commits/")),
    ).toEqual([]);
    expect(journalView(decodedJournal(write1), before).events).toEqual(["task.completed a", "task.merge_ready a"]);
    gh.verify();
  });

  it.each([
    ["at once (serverless)", 0, false],
    ["after the grace given to the push", JOB_END_GRACE_MS, false],
    // GitHub Enterprise Server's `workflow_run` has no `path`: the delivery's `workflow` names the file.
    ["at once, from a workflow_run without `path` (GitHub Enterprise Server)", 0, true],
  ])("completed without a result: the branch is read %s, the attempt is lost, and it is retried", async (_when, jobEndGraceMs, ghes) => {
    const app = await startApp({ jobEndGraceMs });
    const before = storedRun({ a: [] });
    expect(taskOf(before.journal, "a")).toMatchObject({ status: "RUNNING", attempts: 1 });

    gh.app();
    gh.token();
    gh.repo();
    gh.config("main");
    gh.journal(before);
    // The job may have pushed a result just before it ended: look at the branch before calling it lost.
    gh.ref(branchOf("a", 1), WORK);
    gh.reply(`GET ${R}/git/commits/${WORK}`, 200, {
      sha: WORK,
      message: "forge(a): work in progress",
      parents: [{ sha: INTEGRATION_SHA, url: "https://api.github.com/x", html_url: "https://github.com/x" }],
    });
    // Every step of the job finished: it ran to its end without a result (FAILED, not a lost runner).
    jobsOfRun("completed");
    failureAnnotations();
    const write = gh.writeJournal(200);
    // Attempt 1's verdict: a failed check run with a Retry button, on the head of its own branch.
    gh.ref(branchOf("a", 1), WORK);
    const check = gh.reply(`POST ${R}/check-runs`, 201, {
      id: 56,
      name: "forge · a",
      head_sha: WORK,
      status: "completed",
      conclusion: "failure",
    });
    // Attempt 2 (no backoff in this run's config) resumes attempt 1's work: on its branch, which is
    // not cut again (docs/executor.md#resuming).
    const dispatch2 = gh.dispatch(5002);
    gh.tracker(3);

    const ended = workflowRun("completed", "failure");
    if (ghes) delete (ended.payload as { workflow_run: { path?: string } }).workflow_run.path;
    await app.receive(ended);
    if (jobEndGraceMs > 0) {
      // Nothing is read while the push may still come…
      expect(gh.routes().some((r) => r.includes("/git/commits/"))).toBe(false);
      await app.clock.advance(JOB_END_GRACE_MS - 1);
      expect(gh.routes().some((r) => r.includes("/git/commits/"))).toBe(false);
      // …then the branch is, and the attempt's fate decided.
      await app.clock.advance(1);
      await app.forge.idle();
      expect(gh.routes()).toContain(`POST ${R}/actions/workflows/forge-agent.yml/dispatches`);
    }

    expect(write.body).toMatchObject({ sha: JOURNAL_SHA });
    const after = decodedJournal(write);
    expect(journalView(after, before)).toMatchInlineSnapshot(`
      {
        "events": [
          "task.failed a",
          "task.retried a",
          "task.scheduled a",
          "task.started a",
        ],
        "outbox": [
          "check:a:1",
          "check:a:2",
          "dispatch:a:2",
          "tracker",
        ],
        "seq": 7,
        "status": "running",
        "tasks": [
          "a RUNNING #2",
        ],
      }
    `);
    expect(taskOf(after.journal, "a")).toMatchObject({ status: "RUNNING", attempts: 2, retries: 1 });
    expect(check.body).toMatchInlineSnapshot(
      { completed_at: expect.any(String) },
      `
      {
        "actions": [
          {
            "description": "Retry a with a new attempt",
            "identifier": "retry",
            "label": "Retry",
          },
        ],
        "completed_at": Any<String>,
        "conclusion": "failure",
        "external_id": "mini-c0ffee0/a/1",
        "head_sha": "a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0",
        "name": "forge · a",
        "output": {
          "summary": "**Task** \`a\` · attempt 1 · run \`mini-c0ffee0\`


      Run tracker: #3",
          "title": "Attempt 1 failed: the job ended (failure) at the step "Run Forge" without a result",
        },
        "status": "completed",
      }
    `,
    );
    expect(taskOf(after.journal, "a").attempt).toMatchObject({ branch: branchOf("a", 1), resumed: { reason: "lost", fromAttempt: 1 } });
    expect(dispatch2.body).toMatchObject({ ref: branchOf("a", 1), inputs: { task_id: "a", attempt: "2" }, return_run_details: true });
    expect(JSON.parse((dispatch2.body as { inputs: { context: string } }).inputs.context)).toMatchObject({
      resume: { fromAttempt: 1, reason: "lost" },
    });
    gh.verify();
  });
});

describe("workflow_run: a runner gone", () => {
  it("completed with a step still running (its runner went away): the attempt is STALE, not FAILED, and it is retried", async () => {
    const app = await startApp();
    const before = storedRun({ a: [] });
    gh.app();
    gh.token();
    gh.repo();
    gh.config("main");
    gh.journal(before);
    gh.ref(branchOf("a", 1), WORK);
    gh.reply(`GET ${R}/git/commits/${WORK}`, 200, {
      sha: WORK,
      message: "forge(a): work in progress",
      parents: [{ sha: INTEGRATION_SHA, url: "https://api.github.com/x", html_url: "https://github.com/x" }],
    });
    const jobs = jobsOfRun("in_progress");
    const write = gh.writeJournal(200);
    // The lost attempt's job is cancelled (a no-op on a finished run), its verdict posted, attempt 2 dispatched.
    gh.reply(`POST ${R}/actions/runs/5001/cancel`, 409, {
      message: "Cannot cancel a workflow run that is completed.",
      documentation_url: "https://docs.github.com/rest/actions/workflow-runs#cancel-a-workflow-run",
      status: "409",
    });
    gh.ref(branchOf("a", 1), WORK);
    const check = gh.reply(`POST ${R}/check-runs`, 201, {
      id: 57,
      name: "forge · a",
      head_sha: WORK,
      status: "completed",
      conclusion: "timed_out",
    });
    // Attempt 2 resumes on attempt 1's branch: no branch is cut.
    const dispatch2 = gh.dispatch(5002);
    gh.tracker(3);

    await app.receive(workflowRun("completed", "failure"));

    expect(jobs.call).toBeDefined();
    const after = decodedJournal(write);
    expect(journalView(after, before).events).toEqual(["task.stale a", "task.retried a", "task.scheduled a", "task.started a"]);
    expect(taskOf(after.journal, "a")).toMatchObject({ status: "RUNNING", attempts: 2, retries: 1 });
    expect(check.body).toMatchObject({ conclusion: "timed_out", external_id: `${RUN_ID}/a/1` });
    expect(dispatch2.body).toMatchObject({ ref: branchOf("a", 1), inputs: { task_id: "a", attempt: "2" } });
    gh.verify();
  });
});

/** a's job started. */
function jobInProgress() {
  return delivery("workflow_job", {
    action: "in_progress",
    workflow_job: {
      id: 8001,
      run_id: 5001,
      run_attempt: 1,
      head_branch: branchOf("a", 1),
      head_sha: WORK,
      name: "agent",
      workflow_name: "Forge agent",
      status: "in_progress",
      conclusion: null,
      started_at: "2026-11-22T08:59:00Z",
      labels: ["ubuntu-latest"],
      steps: [],
    },
    sender: appBot,
  });
}

describe("workflow_job", () => {
  it("in_progress: the attempt is marked started in memory, without a journal write", async () => {
    const app = await startApp();
    const before = storedRun({ a: [] });
    gh.app();
    gh.token();
    gh.repo();
    gh.config("main");
    gh.journal(before);

    await app.receive(jobInProgress());

    // No heartbeat is worth a write: the fact rides along with the next one.
    expect(gh.routes()).not.toContain(`PUT ${R}/contents/journal.json`);
    const engine = app.forge.runtimes.get("acme/widgets")!.engine;
    const loaded = await engine.state(before.journal.runId);
    expect(taskOf(loaded!.state.journal, "a")).toMatchObject({
      status: "RUNNING",
      attempt: { revision: { startedAt: "2026-11-22T09:00:00.000Z", workflowRunId: 5001 } },
    });
    gh.verify();
  });

  it("in_progress before the attempt's run id is known: the job is left alone, without a call (its workflow_run tells, with what it takes to check it)", async () => {
    const app = await startApp();
    const before = storedRun({ a: [] });
    delete taskOf(before.journal, "a").attempt?.revision.workflowRunId;
    gh.app();
    gh.token();
    gh.repo();
    gh.config("main");
    gh.journal(before);
    const jobOf = (runId: number) => {
      const d = jobInProgress();
      (d.payload as { workflow_job: { run_id: number; id: number } }).workflow_job.run_id = runId;
      (d.payload as { workflow_job: { run_id: number; id: number } }).workflow_job.id = runId + 3000;
      return d;
    };
    const engine = () => app.forge.runtimes.get("acme/widgets")!.engine;

    // The repository's CI on the task's branch, or the agent's own job: neither is read nor counted yet.
    await app.receive(jobOf(7001));
    await app.receive(jobOf(5001));
    expect(gh.routes().filter((r) => r.includes("/actions/runs/"))).toEqual([]);
    const after = taskOf((await engine().state(before.journal.runId))!.state.journal, "a");
    expect(after.attempt?.revision.workflowRunId).toBeUndefined();
    expect(after.attempt?.revision.startedAt).toBeUndefined();
    gh.verify();
  });

  it("a tracker opened by a process that died before recording it is found by its marker, not opened twice", async () => {
    const app = await startApp();
    // The run's first tracker write is still pending in the stored outbox, and the journal knows no tracker.
    const before = storedRun({ a: [] }, { facts: { trackerIssue: undefined, trackerUpdatedAt: undefined } });
    expect(before.facts.trackerIssue).toBeUndefined();
    before.journal.outbox = [{ key: "tracker", kind: "UpdateTracker" }];
    gh.app();
    gh.token();
    gh.repo();
    gh.config("main");
    gh.journal(before);
    const lookup = gh.reply(
      `GET ${R}/issues?labels=${encodeURIComponent(LABELS.tracker)}&state=all&sort=created&direction=desc&per_page=100`,
      200,
      [
        {
          number: 2,
          title: "Forge run other",
          body: "<!-- forge:run other-run -->",
          state: "open",
          labels: [{ name: LABELS.tracker }],
          user: user("forge[bot]", "Bot"),
        },
        // Someone else's issue with the run's marker (a copy of the tracker's text) is not the tracker.
        {
          number: 4,
          title: `Forge run ${RUN_ID}`,
          body: TRACKER_BODY,
          state: "open",
          labels: [{ name: LABELS.tracker }],
          user: user("octocat"),
        },
        {
          number: 3,
          title: `Forge run ${RUN_ID}`,
          body: TRACKER_BODY,
          state: "open",
          labels: [{ name: LABELS.tracker }],
          user: user("forge[bot]", "Bot"),
        },
      ],
    );
    const update = gh.tracker(3);

    await app.receive(jobInProgress());

    expect(lookup.call).toBeDefined();
    expect(update.body).toMatchObject({ title: `Forge run ${RUN_ID}: mini (0/1 merged)` });
    expect(gh.routes().filter((r) => r === `POST ${R}/issues`)).toEqual([]);
    const loaded = await app.forge.runtimes.get("acme/widgets")!.engine.state(before.journal.runId);
    expect(loaded!.state.facts.trackerIssue).toBe(3);
    gh.verify();
  });
});
