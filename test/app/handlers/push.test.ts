/**
 * The push handler, through a real Probot instance with GitHub mocked by nock 14 (./fixtures.ts): a
 * runner's record commit, a plan merged to the default branch, the App's own pushes, a push that
 * drops the cached config.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resultPath } from "../../../src/core/layout.js";
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
  MERGE,
  PLAN_SHA,
  R,
  RECORD,
  RUN_ID,
  startApp,
  storedRun,
  taskOf,
  testConfig,
  user,
  WORK,
  type Delivery,
} from "./fixtures.js";
import { recordMessage, commit, recordPush, result, recordPushMocks } from "./deliveries.js";

let gh: GitHubMock;
beforeEach(() => {
  gh = new GitHubMock();
});
afterEach(() => gh.close());

/** octocat's push of one commit `after` to `branch`, changing `files`. */
function personPush(branch: string, after: string, message: string, files: { added?: string[]; modified?: string[] }): Delivery {
  const c = commit(after, message, files);
  return delivery("push", {
    ref: `refs/heads/${branch}`,
    before: INTEGRATION_SHA,
    after,
    created: false,
    deleted: false,
    forced: false,
    compare: "https://github.com/acme/widgets/compare/x...y",
    commits: [c],
    head_commit: c,
    pusher: { name: "octocat", email: "octocat@example.com" },
    sender: user("octocat"),
  });
}

describe("push", () => {
  it("a record commit: result.json read, journal written with the read blob sha, the PR merged, the next task dispatched", async () => {
    const app = await startApp();
    const before = storedRun({ a: [], b: ["a"] });
    expect(taskOf(before.journal, "a")).toMatchObject({ status: "RUNNING", attempts: 1 });

    gh.app();
    gh.token();
    gh.repo();
    gh.config("main");
    gh.journal(before);
    const { read, write1, check, merge, write2, branchB, dispatchB } = recordPushMocks(gh);

    await app.receive(recordPush());

    expect(gh.routes().indexOf(`GET ${R}/contents/${resultPath(RUN_ID, "a", 1)}`)).toBeLessThan(
      gh.routes().indexOf(`PUT ${R}/contents/journal.json`),
    );
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
    expect(taskOf(j1.journal, "a")).toMatchInlineSnapshot(`
      {
        "agentMs": 540000,
        "agents": [
          {
            "agent": "claude",
            "attempt": 1,
          },
        ],
        "attempt": {
          "agent": "claude",
          "branch": "forge/mini-c0ffee0/a/1",
          "recordSha": "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1",
          "revision": {
            "dispatchedAt": "2026-11-22T08:59:00.000Z",
            "iteration": 0,
            "pushedSha": "a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0",
            "walkthroughSha": "a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0",
            "workflowRunId": 5001,
          },
        },
        "attempts": 1,
        "blockers": 0,
        "confidence": 0.9,
        "filesChanged": [
          "src/a.ts",
        ],
        "id": "a",
        "retries": 0,
        "status": "MERGE_READY",
        "walkthroughStatus": "completed",
      }
    `);
    expect(merge.body).toMatchInlineSnapshot(`
      {
        "commit_title": "forge(a): Task a",
        "merge_method": "merge",
        "sha": "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1",
      }
    `);
    expect(check.body).toMatchInlineSnapshot(
      { completed_at: expect.any(String) },
      `
      {
        "completed_at": Any<String>,
        "conclusion": "success",
        "details_url": "https://github.com/acme/widgets/actions/runs/5001",
        "external_id": "mini-c0ffee0/a/1",
        "head_sha": "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1",
        "name": "forge · a",
        "output": {
          "summary": "**Task** \`a\` · attempt 1 · run \`mini-c0ffee0\`

      Confidence: 0.9
      Files changed: \`src/a.ts\`
      Execution report: [execution-report.md](https://github.com/acme/widgets/blob/a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1/.forge/runs/mini-c0ffee0/a/1/execution-report.md)

      Run tracker: #3",
          "title": "Attempt 1 ready to merge",
        },
        "status": "completed",
      }
    `,
    );
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
    expect(branchB.body).toEqual({ ref: `refs/heads/${branchOf("b", 1)}`, sha: MERGE });
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
});

describe("push: the plan merged to the default branch", () => {
  it("the plan merged to the default branch starts a run: config and plan read at the commit, integration and state branches, journal, first dispatch, tracker", async () => {
    const app = await startApp();
    const config = "merge_policy: manual\n";
    const plan = {
      "plan.md": "# mini\n\nA test plan.\n",
      "dag.json": dagJson("mini", { a: [], b: ["a"] }),
      "tasks/a.md": taskFile("a", []),
      "tasks/b.md": taskFile("b", ["a"]),
    };
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
    // The plan's files in one query.
    gh.filesAt(PLAN_SHA, Object.fromEntries(Object.entries(plan).map(([name, content]) => [`${root}/${name}`, content])));
    const integration = gh.createRef(INTEGRATION, PLAN_SHA);
    // The state branch is protected by a ruleset (README, "Protect the state branches"): no warning.
    const rules = gh.reply(`GET ${R}/rules/branches/forge/${RUN_ID}/_state?per_page=100`, 200, [
      { type: "creation", ruleset_source_type: "Repository", ruleset_source: "acme/widgets", ruleset_id: 1 },
      { type: "update", ruleset_source_type: "Repository", ruleset_source: "acme/widgets", ruleset_id: 1 },
      { type: "deletion", ruleset_source_type: "Repository", ruleset_source: "acme/widgets", ruleset_id: 1 },
    ]);
    gh.missing("journal.json", `forge/${RUN_ID}/_state`);
    const state = gh.createRef(`forge/${RUN_ID}/_state`, PLAN_SHA);
    // The journal's freshness anchor: the run's one check run, on the commit the run starts from.
    const anchor = gh.reply(`POST ${R}/check-runs`, 201, {
      id: 90,
      name: "Forge journal",
      head_sha: PLAN_SHA,
      status: "completed",
      conclusion: "neutral",
    });
    const journal = gh.writeJournal(201);
    gh.ref(INTEGRATION, PLAN_SHA);
    const branchA = gh.createRef(branchOf("a", 1), PLAN_SHA);
    const dispatchA = gh.dispatch(6001);
    const tracker = gh.reply(`POST ${R}/issues`, 201, { number: 3, title: "Forge run", state: "open", labels: [] });

    await app.receive(personPush("main", PLAN_SHA, "Add the mini plan", { added: Object.keys(plan).map((f) => `${root}/${f}`) }));

    expect(integration.body).toEqual({ ref: `refs/heads/${INTEGRATION}`, sha: PLAN_SHA });
    expect(state.body).toEqual({ ref: `refs/heads/forge/${RUN_ID}/_state`, sha: PLAN_SHA });
    // The first journal creates the file: no blob sha to compare with.
    expect(journal.body).toMatchObject({ branch: `forge/${RUN_ID}/_state`, message: `forge: start run ${RUN_ID}` });
    expect(journal.body).not.toHaveProperty("sha");
    const stored = decodedJournal(journal);
    expect(stored.config.merge_policy).toBe("manual");
    expect(stored.facts.planSha).toBe(PLAN_SHA);
    expect(rules.call).toBeDefined();
    expect(stored.facts.stateBranchWarning).toBeUndefined();
    expect(anchor.body).toMatchObject({ name: "Forge journal", head_sha: PLAN_SHA, external_id: `forge-journal:${RUN_ID}` });
    expect(stored.facts.anchorCheckRunId).toBe(90);
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
});

describe("push: long pushes, a result that is not JSON, the App's own pushes, the config", () => {
  it("a record commit the payload does not list (a long push): its message and parent are read from GitHub", async () => {
    const app = await startApp();
    const before = storedRun({ a: [] }, { config: testConfig({ merge_policy: "manual" }) });
    gh.app();
    gh.token();
    gh.repo();
    gh.config("main");
    const read = gh.reply(`GET ${R}/git/commits/${RECORD}`, 200, {
      sha: RECORD,
      message: recordMessage("a", 1, 0),
      parents: [
        { sha: WORK, url: `https://api.github.com${R}/git/commits/${WORK}`, html_url: `https://github.com/acme/widgets/commit/${WORK}` },
      ],
    });
    gh.file(resultPath(RUN_ID, "a", 1), RECORD, JSON.stringify(result("a", 1)));
    gh.journal(before);
    const write = gh.writeJournal(200);
    gh.reply(`POST ${R}/check-runs`, 201, { id: 55, name: "forge · a", head_sha: RECORD, status: "completed", conclusion: "success" });
    gh.tracker(3);
    // merge_policy manual and no PR heard of yet: the App looks for the attempt's PR (the runner's,
    // its webhook late) rather than leave a person nothing to merge.
    const found = gh.reply(`GET ${R}/pulls?head=acme:${branchOf("a", 1)}&state=all&per_page=10`, 200, [
      { number: 7, state: "open", head: { ref: branchOf("a", 1), sha: RECORD }, base: { ref: INTEGRATION, sha: INTEGRATION_SHA } },
    ]);

    await app.receive(recordPush("a", 1, undefined, { headListed: false }));

    expect(read.call).toBeDefined();
    expect(found.call).toBeDefined();
    // The parent read from GitHub is the pushed work the MERGE_READY gate compares with the walkthrough.
    expect(taskOf(decodedJournal(write).journal, "a")).toMatchObject({
      status: "MERGE_READY",
      attempt: { recordSha: RECORD, revision: { pushedSha: WORK } },
    });
    gh.verify();
  });

  it("a record commit whose result.json is not JSON: the attempt fails with the reason in its check run, and is retried", async () => {
    const app = await startApp();
    const before = storedRun({ a: [] });
    gh.app();
    gh.token();
    gh.repo();
    gh.config("main");
    gh.file(resultPath(RUN_ID, "a", 1), RECORD, "{ not json");
    gh.journal(before);
    const write = gh.writeJournal(200);
    gh.ref(branchOf("a", 1), RECORD);
    const check = gh.reply(`POST ${R}/check-runs`, 201, {
      id: 57,
      name: "forge · a",
      head_sha: RECORD,
      status: "completed",
      conclusion: "failure",
    });
    gh.ref(INTEGRATION, INTEGRATION_SHA);
    gh.createRef(branchOf("a", 2), INTEGRATION_SHA);
    gh.dispatch(5002);
    gh.tracker(3);

    await app.receive(recordPush());

    const after = decodedJournal(write);
    expect(after.journal.tasks[0]).toMatchObject({ status: "RUNNING", attempts: 2, retries: 1 });
    expect(after.events.tail.find((e) => e.type === "task.failed")?.data).toMatchObject({
      error: expect.stringMatching(/^\.forge\/runs\/mini-c0ffee0\/a\/1\/result\.json is not JSON: /),
      retryable: true,
    });
    // People see why on the attempt's own commit.
    expect(check.body).toMatchObject({
      head_sha: RECORD,
      conclusion: "failure",
      output: { title: expect.stringContaining("result.json is not JSON") },
    });
    gh.verify();
  });

  it("the App's own pushes are ignored: nothing but learning its own name", async () => {
    const app = await startApp();
    gh.app();
    await app.receive(recordPush("a", 1, user("forge[bot]", "Bot")));
    expect(gh.routes()).toEqual(["GET /app"]);
    gh.verify();
  });

  it("a push to the default branch drops the cached config: the next webhook reads `.github/forge.yml` again", async () => {
    const app = await startApp();
    const featurePush = () => personPush("feature/x", WORK, "work", { modified: ["src/x.ts"] });
    gh.app();
    gh.token();
    gh.repo();
    // A branch that is no attempt's: the config (its branch template) says so.
    gh.config("main");
    await app.receive(featurePush());
    // Within the config's lifetime, the same answer without a read.
    await app.receive(featurePush());
    expect(gh.routes().filter((r) => r.includes("forge.yml"))).toHaveLength(1);
    // Someone pushes to main (the config may have changed): touching no plan, it costs no call…
    await app.receive(personPush("main", PLAN_SHA, "Use manual merges", { modified: [".github/forge.yml"] }));
    // …and the next webhook that needs the config reads it again.
    gh.config("main", "merge_policy: manual\n");
    await app.receive(featurePush());
    expect(gh.routes().filter((r) => r.includes("forge.yml"))).toHaveLength(2);
    gh.verify();
  });
});
