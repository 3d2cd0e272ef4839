/**
 * The workflow_run and workflow_job handlers: the lifecycle of the agent jobs Forge dispatched.
 * GitHub names the App itself as the sender of these events (the App's token dispatched the run),
 * so they must not be mistaken for the App's own events.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  branchOf,
  decodedJournal,
  delivery,
  GitHubMock,
  INTEGRATION,
  INTEGRATION_SHA,
  JOURNAL_SHA,
  journalView,
  R,
  startApp,
  storedRun,
  taskOf,
  user,
} from "./fixtures.js";

let gh: GitHubMock;
beforeEach(() => {
  gh = new GitHubMock();
});
afterEach(() => gh.close());

const HEAD = "a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0";
/** The sender of a dispatched run's events: the App, whose token dispatched it. */
const appBot = user("forge[bot]", "Bot");

function workflowRun(action: "completed" | "in_progress", conclusion: string | null) {
  return delivery("workflow_run", {
    action,
    workflow_run: {
      id: 5001,
      name: "Forge agent",
      head_branch: branchOf("a", 1),
      head_sha: HEAD,
      event: "workflow_dispatch",
      status: action === "completed" ? "completed" : "in_progress",
      conclusion,
      run_attempt: 1,
      run_number: 1,
      path: ".github/workflows/forge-agent.yml",
      actor: appBot,
      triggering_actor: appBot,
    },
    workflow: { id: 9, name: "Forge agent", path: ".github/workflows/forge-agent.yml", state: "active" },
    sender: appBot,
  });
}

describe("workflow_run", () => {
  it("completed without a result: the branch is read, the attempt is lost, and it is retried", async () => {
    const app = await startApp();
    const before = storedRun({ a: [] });
    expect(taskOf(before.journal, "a")).toMatchObject({ status: "RUNNING", attempt: 1 });

    gh.app();
    gh.token();
    gh.repo();
    gh.config("main");
    gh.journal(before);
    // The job may have pushed a result just before it ended: look at the branch before calling it lost.
    gh.ref(branchOf("a", 1), HEAD);
    gh.reply(`GET ${R}/git/commits/${HEAD}`, 200, { sha: HEAD, message: "forge(a): work in progress", parents: [{ sha: INTEGRATION_SHA, url: "https://api.github.com/x", html_url: "https://github.com/x" }] });
    const write = gh.writeJournal(200);
    // Attempt 1's verdict: a failed check run with a Retry button, on the head of its own branch.
    gh.ref(branchOf("a", 1), HEAD);
    const check = gh.reply(`POST ${R}/check-runs`, 201, { id: 56, name: "forge · a", head_sha: HEAD, status: "completed", conclusion: "failure" });
    // Attempt 2 (no backoff in this run's config).
    gh.ref(INTEGRATION, INTEGRATION_SHA);
    const branch2 = gh.createRef(branchOf("a", 2), INTEGRATION_SHA);
    const dispatch2 = gh.dispatch(5002);
    gh.tracker(3);

    await app.receive(workflowRun("completed", "failure"));

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
          "branch:a:2",
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
    expect(taskOf(after.journal, "a")).toMatchObject({ status: "RUNNING", attempt: 2, retries: 1 });
    expect(check.body).toMatchInlineSnapshot({ completed_at: expect.any(String) }, `
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
          "title": "Attempt 1 failed: the job ended (failure) without a result",
        },
        "status": "completed",
      }
    `);
    expect(branch2.body).toEqual({ ref: `refs/heads/${branchOf("a", 2)}`, sha: INTEGRATION_SHA });
    expect(dispatch2.body).toMatchObject({ ref: branchOf("a", 2), inputs: { task_id: "a", attempt: "2" }, return_run_details: true });
    gh.verify();
  });
});

describe("workflow_job", () => {
  it("in_progress: the attempt is marked started in memory, without a journal write", async () => {
    const app = await startApp();
    const before = storedRun({ a: [] });
    gh.app();
    gh.token();
    gh.repo();
    gh.config("main");
    gh.journal(before);

    await app.receive(
      delivery("workflow_job", {
        action: "in_progress",
        workflow_job: {
          id: 8001,
          run_id: 5001,
          run_attempt: 1,
          head_branch: branchOf("a", 1),
          head_sha: HEAD,
          name: "agent",
          workflow_name: "Forge agent",
          status: "in_progress",
          conclusion: null,
          started_at: "2026-11-22T08:59:00Z",
          labels: ["ubuntu-latest"],
          steps: [],
        },
        sender: appBot,
      }),
    );

    // No heartbeat is worth a write: the fact rides along with the next one.
    expect(gh.routes()).not.toContain(`PUT ${R}/contents/journal.json`);
    const engine = app.forge.runtimes.get("acme/widgets")!.engine;
    const loaded = await engine.state(before.journal.runId);
    expect(taskOf(loaded!.state.journal, "a")).toMatchObject({ status: "RUNNING", startedAt: "2026-11-22T09:00:00.000Z", workflowRunId: 5001 });
    gh.verify();
  });
});
