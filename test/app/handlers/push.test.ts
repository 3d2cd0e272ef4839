/**
 * The push handler: a runner's record commit on a task branch, a plan merged to the default
 * branch, a lost compare-and-swap on the journal, the App's own pushes, and redeliveries.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resultPath } from "../../../src/core/layout.js";
import type { AgentResult } from "../../../src/core/schemas/agent-result.js";
import { dagJson, taskFile } from "../../helpers/plan-files.js";
import {
  branchOf,
  decodedJournal,
  delivery,
  GitHubMock,
  INTEGRATION,
  INTEGRATION_SHA,
  JOURNAL_SHA,
  journalView,
  PLAN_SHA,
  R,
  RUN_ID,
  startApp,
  storedRun,
  taskOf,
  user,
  type Delivery,
} from "./fixtures.js";

let gh: GitHubMock;
beforeEach(() => {
  gh = new GitHubMock();
});
afterEach(() => gh.close());

const WORK = "a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0";
const RECORD = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1";

function recordMessage(taskId: string, attempt: number, exit: number): string {
  return `forge(${taskId}): record of attempt ${attempt}\n\nForge-Run: ${RUN_ID}\nForge-Task: ${taskId}\nForge-Attempt: ${attempt}\nForge-Agent: claude\nForge-Exit: ${exit}\n`;
}

function commit(id: string, message: string, files: { added?: string[]; modified?: string[] } = {}) {
  return {
    id,
    tree_id: "7".repeat(40),
    distinct: true,
    message,
    timestamp: "2026-11-22T08:59:00Z",
    url: `https://github.com/acme/widgets/commit/${id}`,
    author: { name: "forge", email: "forge@example.com" },
    committer: { name: "forge", email: "forge@example.com" },
    added: files.added ?? [],
    removed: [],
    modified: files.modified ?? [],
  };
}

/** The push of an attempt's work commit and its record commit, by the job's GITHUB_TOKEN. */
function recordPush(taskId = "a", attempt = 1, sender = user("github-actions[bot]", "Bot")): Delivery {
  const work = commit(WORK, `forge(${taskId}): work`, { added: [`src/${taskId}.ts`] });
  const record = commit(RECORD, recordMessage(taskId, attempt, 0), { added: [resultPath(RUN_ID, taskId, attempt)] });
  return delivery("push", {
    ref: `refs/heads/${branchOf(taskId, attempt)}`,
    before: INTEGRATION_SHA,
    after: RECORD,
    created: false,
    deleted: false,
    forced: false,
    compare: "https://github.com/acme/widgets/compare/x...y",
    commits: [work, record],
    head_commit: record,
    pusher: { name: "github-actions[bot]", email: null },
    sender,
  });
}

function result(taskId: string, attempt: number): AgentResult {
  return {
    version: 1,
    run_id: RUN_ID,
    task_id: taskId,
    attempt,
    exit_code: 0,
    branch: branchOf(taskId, attempt),
    head_sha: WORK,
    walkthrough: {
      task_id: taskId,
      run_id: RUN_ID,
      attempt,
      branch: branchOf(taskId, attempt),
      base_ref: INTEGRATION_SHA,
      head_sha: WORK,
      status: "completed",
      confidence: 0.9,
      time_spent_minutes: 3,
      files_changed: [{ path: `src/${taskId}.ts`, reason: "the task" }],
      tests: [{ name: "unit", result: "pass" }],
      risks: [],
      followups: [],
    },
    started_at: "2026-11-22T08:50:00Z",
    finished_at: "2026-11-22T08:59:00Z",
  };
}

describe("push", () => {
  it("a record commit: result.json read, journal written with the read blob sha, the PR merged, the next task dispatched", async () => {
    const app = await startApp();
    const before = storedRun({ a: [], b: ["a"] });
    expect(taskOf(before.journal, "a")).toMatchObject({ status: "RUNNING", attempt: 1 });

    gh.app();
    gh.token();
    gh.repo();
    gh.config("main");
    const read = gh.file(resultPath(RUN_ID, "a", 1), RECORD, JSON.stringify(result("a", 1)));
    gh.journal(before);
    const write1 = gh.writeJournal(200, "b10b000000000000000000000000000000000002");
    // The decision's effects: the check run, the merge of the attempt's PR, the tracker.
    const check = gh.reply(`POST ${R}/check-runs`, 201, { id: 55, name: "forge · a", head_sha: RECORD, status: "completed", conclusion: "success" });
    gh.reply(`GET ${R}/pulls?head=acme:${branchOf("a", 1)}&state=all&per_page=10`, 200, [{ number: 7, state: "open", head: { ref: branchOf("a", 1), sha: RECORD }, base: { ref: INTEGRATION } }]);
    const merge = gh.reply(`PUT ${R}/pulls/7/merge`, 200, { sha: "3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e", merged: true, message: "Pull Request successfully merged" });
    gh.tracker(3);
    // The merge acknowledged: a is MERGED, b is ready.
    const write2 = gh.writeJournal(200, "b10b000000000000000000000000000000000003");
    gh.ref(INTEGRATION, "3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e");
    const branchB = gh.createRef(branchOf("b", 1), "3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e");
    const dispatchB = gh.dispatch(6001);

    await app.receive(recordPush());

    expect(gh.routes().indexOf(`GET ${R}/contents/${resultPath(RUN_ID, "a", 1)}`)).toBeLessThan(gh.routes().indexOf(`PUT ${R}/contents/journal.json`));
    expect(read.call?.query).toEqual({ ref: RECORD });
    // Compare-and-swap: the write names the blob it read, then the blob the first write made.
    expect(write1.body).toMatchObject({ branch: `forge/${RUN_ID}/_state`, sha: JOURNAL_SHA });
    expect(write2.body).toMatchObject({ branch: `forge/${RUN_ID}/_state`, sha: "b10b000000000000000000000000000000000002" });
    const j1 = decodedJournal(write1);
    expect(journalView(j1, before)).toMatchInlineSnapshot(`
      {
        "events": [
          "task.completed a",
          "task.merge_ready a",
        ],
        "outbox": [
          "check:a:1",
          "merge:a:1",
          "tracker",
        ],
        "seq": 5,
        "status": "running",
        "tasks": [
          "a MERGE_READY #1",
          "b PENDING #0",
        ],
      }
    `);
    expect(taskOf(j1.journal, "a")).toMatchObject({ pushedSha: WORK, recordSha: RECORD, walkthroughSha: WORK, confidence: 0.9 });
    expect(merge.body).toMatchInlineSnapshot(`
      {
        "commit_title": "forge(a): Task a",
        "merge_method": "merge",
        "sha": "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1",
      }
    `);
    expect(check.body).toMatchInlineSnapshot({ completed_at: expect.any(String) }, `
      {
        "completed_at": Any<String>,
        "conclusion": "success",
        "external_id": "mini-c0ffee0/a/1",
        "head_sha": "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1",
        "name": "forge · a",
        "output": {
          "summary": "**Task** \`a\` · attempt 1 · run \`mini-c0ffee0\`

      Confidence: 0.9
      Files changed: \`src/a.ts\`

      Run tracker: #3",
          "title": "Attempt 1 ready to merge",
        },
        "status": "completed",
      }
    `);
    expect(journalView(decodedJournal(write2), j1)).toMatchInlineSnapshot(`
      {
        "events": [
          "task.merged a",
          "task.scheduled b",
          "task.started b",
        ],
        "outbox": [
          "check:a:1",
          "check:b:1",
          "branch:b:1",
          "dispatch:b:1",
          "tracker",
        ],
        "seq": 8,
        "status": "running",
        "tasks": [
          "a MERGED #1",
          "b RUNNING #1",
        ],
      }
    `);
    expect(branchB.body).toEqual({ ref: `refs/heads/${branchOf("b", 1)}`, sha: "3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e" });
    expect(dispatchB.body).toMatchInlineSnapshot(`
      {
        "inputs": {
          "attempt": "1",
          "run_id": "mini-c0ffee0",
          "task_id": "b",
        },
        "ref": "forge/mini-c0ffee0/b/1",
        "return_run_details": true,
      }
    `);
    gh.verify();
  });

  it("the plan merged to the default branch starts a run: config and plan read at the commit, integration and state branches, journal, first dispatch, tracker", async () => {
    const app = await startApp();
    const config = "merge_policy: manual\n";
    const plan = { "plan.md": "# mini\n\nA test plan.\n", "dag.json": dagJson("mini", { a: [], b: ["a"] }), "tasks/a.md": taskFile("a", []), "tasks/b.md": taskFile("b", ["a"]) };
    const root = ".forge/plans/mini";

    gh.app();
    gh.token();
    gh.reply(`GET ${R}/git/matching-refs/heads/forge/`, 200, []);
    gh.repo();
    gh.config("main", config);
    // The run's config and plan are read at the pushed commit, not at whatever main is later.
    gh.config(PLAN_SHA, config);
    gh.dir(root, PLAN_SHA, [
      { name: "plan.md", type: "file" },
      { name: "dag.json", type: "file" },
      { name: "tasks", type: "dir" },
    ]);
    gh.dir(`${root}/tasks`, PLAN_SHA, [
      { name: "a.md", type: "file" },
      { name: "b.md", type: "file" },
    ]);
    for (const [name, content] of Object.entries(plan)) gh.file(`${root}/${name}`, PLAN_SHA, content);
    const integration = gh.createRef(INTEGRATION, PLAN_SHA);
    gh.missing("journal.json", `forge/${RUN_ID}/_state`);
    const state = gh.createRef(`forge/${RUN_ID}/_state`, PLAN_SHA);
    const journal = gh.writeJournal(201);
    gh.ref(INTEGRATION, PLAN_SHA);
    const branchA = gh.createRef(branchOf("a", 1), PLAN_SHA);
    const dispatchA = gh.dispatch(6001);
    const tracker = gh.reply(`POST ${R}/issues`, 201, { number: 3, title: "Forge run", state: "open", labels: [] });

    await app.receive(
      delivery("push", {
        ref: "refs/heads/main",
        before: INTEGRATION_SHA,
        after: PLAN_SHA,
        created: false,
        deleted: false,
        forced: false,
        compare: "https://github.com/acme/widgets/compare/x...y",
        commits: [commit(PLAN_SHA, "Add the mini plan", { added: Object.keys(plan).map((f) => `${root}/${f}`) })],
        head_commit: commit(PLAN_SHA, "Add the mini plan", { added: Object.keys(plan).map((f) => `${root}/${f}`) }),
        pusher: { name: "octocat", email: "octocat@example.com" },
        sender: user("octocat"),
      }),
    );

    expect(integration.body).toEqual({ ref: `refs/heads/${INTEGRATION}`, sha: PLAN_SHA });
    expect(state.body).toEqual({ ref: `refs/heads/forge/${RUN_ID}/_state`, sha: PLAN_SHA });
    // The first journal creates the file: no blob sha to compare with.
    expect(journal.body).toMatchObject({ branch: `forge/${RUN_ID}/_state`, message: `forge: start run ${RUN_ID}` });
    expect(journal.body).not.toHaveProperty("sha");
    const stored = decodedJournal(journal);
    expect(stored.config.merge_policy).toBe("manual");
    expect(stored.facts.planSha).toBe(PLAN_SHA);
    expect(journalView(stored)).toMatchInlineSnapshot(`
      {
        "events": [
          "run.started",
          "task.scheduled a",
          "task.started a",
        ],
        "outbox": [
          "check:a:1",
          "branch:a:1",
          "dispatch:a:1",
          "tracker",
        ],
        "seq": 3,
        "status": "running",
        "tasks": [
          "a RUNNING #1",
          "b PENDING #0",
        ],
      }
    `);
    expect(branchA.body).toEqual({ ref: `refs/heads/${branchOf("a", 1)}`, sha: PLAN_SHA });
    expect(dispatchA.body).toMatchInlineSnapshot(`
      {
        "inputs": {
          "attempt": "1",
          "run_id": "mini-c0ffee0",
          "task_id": "a",
        },
        "ref": "forge/mini-c0ffee0/a/1",
        "return_run_details": true,
      }
    `);
    expect(tracker.body).toMatchObject({ title: `Forge run ${RUN_ID}: mini (0/2 merged)`, labels: ["forge:run"] });
    expect((tracker.body as { body: string }).body).toContain(`<!-- forge:run ${RUN_ID} -->`);
    // The branch exists before its agent is dispatched.
    expect(gh.routes().indexOf(`POST ${R}/actions/workflows/forge-agent.yml/dispatches`)).toBeGreaterThan(gh.calls.indexOf(branchA.call!));
    expect(app.forge.runtimes.get("acme/widgets")?.runs.get(RUN_ID)).toEqual({ planId: "mini", status: "running" });
    gh.verify();
  });

  it("the App's own pushes are ignored: nothing but learning its own name", async () => {
    const app = await startApp();
    gh.app();
    await app.receive(recordPush("a", 1, user("forge[bot]", "Bot")));
    expect(gh.routes()).toEqual(["GET /app"]);
    gh.verify();
  });
});
