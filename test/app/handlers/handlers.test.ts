/**
 * The App's webhook handlers, each through a real Probot instance with GitHub mocked by nock 14:
 * push (a runner's record commit, a plan merged to the default branch, the App's own pushes),
 * pull_request (a merge by a person, a journal write that lost its compare-and-swap),
 * workflow_run and workflow_job (the jobs the App dispatched), issue_comment commands and the
 * check run's Retry button (who may give them, acknowledgement, redeliveries), issues (a Change
 * Request closed), check_suite (a waiting merge completing the run) and installation.
 *
 * One file on purpose: the descriptions' validators are compiled once per process, which is most of
 * the suite's time.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { HELP } from "../../../src/app/commands.js";
import { JOB_END_GRACE_MS } from "../../../src/app/context.js";
import { crMarker } from "../../../src/app/render.js";
import type { Effect } from "../../../src/core/effects.js";
import type { LeafInput } from "../../../src/core/inputs.js";
import { LABELS, resultPath } from "../../../src/core/layout.js";
import type { AgentResult } from "../../../src/core/schemas/agent-result.js";
import { dagJson, taskFile } from "../../helpers/plan-files.js";
import {
  branchOf,
  decodedJournal,
  delivery,
  GitHubMock,
  gitRef,
  finishedReady,
  INSTALLATION_ID,
  INTEGRATION,
  INTEGRATION_SHA,
  JOURNAL_SHA,
  journalView,
  MERGE,
  PLAN_SHA,
  R,
  RECORD,
  repository,
  RUN_ID,
  startApp,
  ownLeases,
  TEST_REPLICA,
  NOW,
  STATE_BRANCH,
  storedRun,
  taskOf,
  testConfig,
  user,
  WORK,
  type Delivery,
} from "./fixtures.js";

let gh: GitHubMock;
beforeEach(() => {
  gh = new GitHubMock();
});
afterEach(() => gh.close());

// ---------------------------------------------------------------- push

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

/** The push of an attempt's work commit and its record commit, by the job's GITHUB_TOKEN. */
function recordPush(taskId = "a", attempt = 1, sender = user("github-actions[bot]", "Bot"), opts: { headListed?: boolean } = {}): Delivery {
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
    // A long push lists only its first commits: then the head commit is not among them.
    commits: opts.headListed === false ? [work] : [work, record],
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

/** What the App does with a's record commit (merge_policy auto): result read, check run, merge, b dispatched. */
function recordPushMocks() {
  const read = gh.file(resultPath(RUN_ID, "a", 1), RECORD, JSON.stringify(result("a", 1)));
  const write1 = gh.writeJournal(200, "b10b000000000000000000000000000000000002");
  // The decision's effects: the check run, the merge of the attempt's PR, the tracker.
  const check = gh.reply(`POST ${R}/check-runs`, 201, {
    id: 55,
    name: "forge · a",
    head_sha: RECORD,
    status: "completed",
    conclusion: "success",
  });
  gh.reply(`GET ${R}/pulls?head=acme:${branchOf("a", 1)}&state=all&per_page=10`, 200, [
    { number: 7, state: "open", head: { ref: branchOf("a", 1), sha: RECORD }, base: { ref: INTEGRATION } },
  ]);
  // What the PR changes, as GitHub lists it: nothing protected.
  gh.reply(`GET ${R}/pulls/7/files?per_page=100`, 200, [{ filename: "src/a.ts", status: "added" }]);
  const merge = gh.reply(`PUT ${R}/pulls/7/merge`, 200, { sha: MERGE, merged: true, message: "Pull Request successfully merged" });
  gh.tracker(3);
  // The merge acknowledged: a is MERGED, b is ready.
  const write2 = gh.writeJournal(200, "b10b000000000000000000000000000000000003");
  gh.ref(INTEGRATION, MERGE);
  const branchB = gh.createRef(branchOf("b", 1), MERGE);
  const dispatchB = gh.dispatch(6001);
  return { read, write1, check, merge, write2, branchB, dispatchB };
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
    gh.journal(before);
    const { read, write1, check, merge, write2, branchB, dispatchB } = recordPushMocks();

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
        "attempt": 1,
        "blockers": 0,
        "branch": "forge/mini-c0ffee0/a/1",
        "confidence": 0.9,
        "dispatchedAt": "2026-11-22T08:59:00.000Z",
        "dispatchedAttempt": 1,
        "filesChanged": [
          "src/a.ts",
        ],
        "id": "a",
        "pushedSha": "a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0",
        "recordSha": "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1",
        "retries": 0,
        "status": "MERGE_READY",
        "walkthroughSha": "a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0",
        "walkthroughStatus": "completed",
        "workflowRunId": 5001,
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

    await app.receive(recordPush("a", 1, undefined, { headListed: false }));

    expect(read.call).toBeDefined();
    // The parent read from GitHub is the pushed work the MERGE_READY gate compares with the walkthrough.
    expect(taskOf(decodedJournal(write).journal, "a")).toMatchObject({ status: "MERGE_READY", pushedSha: WORK, recordSha: RECORD });
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
    expect(after.journal.tasks[0]).toMatchObject({ status: "RUNNING", attempt: 2, retries: 1 });
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

// ---------------------------------------------------------------- pull_request

/** Task a done and verified (MERGE_READY, PR #7), waiting for a person to merge it. */
const readySteps: LeafInput[][] = [
  [
    {
      kind: "agent.finished",
      taskId: "a",
      attempt: 1,
      exitCode: 0,
      pushedSha: WORK,
      recordSha: RECORD,
      walkthrough: { status: "completed", confidence: 0.9, headSha: WORK, filesChanged: ["src/a.ts"], risks: [], followups: [] },
    },
    { kind: "pr.opened", taskId: "a", attempt: 1, number: 7 },
  ],
];
const merged: LeafInput = { kind: "pr.merged", taskId: "a", attempt: 1, number: 7, mergeSha: MERGE };
const manual = testConfig({ merge_policy: "manual" });
const checkRunA1 = { checkRuns: { "a:1": 55 } };

function mergedDelivery() {
  return delivery("pull_request", {
    action: "closed",
    number: 7,
    pull_request: {
      number: 7,
      state: "closed",
      title: "forge(a): Task a",
      merged: true,
      merged_at: "2026-11-22T08:59:30Z",
      merge_commit_sha: MERGE,
      draft: false,
      head: { ref: branchOf("a", 1), sha: RECORD, label: `acme:${branchOf("a", 1)}`, repo: repository() },
      base: { ref: INTEGRATION, sha: "1111111111111111111111111111111111111111", label: `acme:${INTEGRATION}` },
      user: user("github-actions[bot]", "Bot"),
    },
    sender: user("octocat"),
  });
}

describe("pull_request", () => {
  it("closed and merged: the task is MERGED and the task it unblocked is dispatched", async () => {
    const app = await startApp();
    const before = storedRun({ a: [], b: ["a"] }, { config: manual, steps: readySteps, facts: checkRunA1 });
    expect(taskOf(before.journal, "a")).toMatchObject({ status: "MERGE_READY", prNumber: 7 });

    gh.app();
    gh.token();
    gh.repo();
    gh.config("main", "merge_policy: manual\n");
    gh.journal(before);
    const write = gh.writeJournal(200);
    // The check run of attempt 1 already says success: MERGED changes nothing there.
    gh.ref(INTEGRATION, MERGE);
    const branchB = gh.createRef(branchOf("b", 1), MERGE);
    const dispatchB = gh.dispatch(6001);
    const tracker = gh.tracker(3);

    await app.receive(mergedDelivery());

    expect(write.body).toMatchObject({ sha: JOURNAL_SHA });
    const after = decodedJournal(write);
    expect(taskOf(after.journal, "a")).toMatchObject({ status: "MERGED", mergeSha: MERGE });
    expect(journalView(after, before)).toMatchInlineSnapshot(`
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
    expect(dispatchB.body).toMatchObject({
      ref: branchOf("b", 1),
      inputs: { run_id: RUN_ID, task_id: "b", attempt: "1" },
      return_run_details: true,
    });
    expect((tracker.body as { title: string }).title).toBe(`Forge run ${RUN_ID}: mini (1/2 merged)`);
    gh.verify();
  });

  it("a 409 on the journal write: the journal is read again and decided again; the other writer's effects are its own to carry out", async () => {
    const app = await startApp();
    const before = storedRun({ a: [], b: ["a"] }, { config: manual, steps: readySteps, facts: checkRunA1 });
    // Another live replica handled the same merge first: its journal has a MERGED and b's dispatch
    // still in the outbox, leased to it.
    const theirs = storedRun(
      { a: [], b: ["a"] },
      { config: manual, steps: [...readySteps, [merged]], facts: checkRunA1, pendingOutbox: true },
    );
    theirs.leases = ownLeases(theirs, "replica-2");
    expect(theirs.journal.outbox.map((e) => e.key)).toContain("dispatch:b:1");

    gh.app();
    gh.token();
    gh.repo();
    gh.config("main", "merge_policy: manual\n");
    gh.journal(before);
    const lost = gh.writeJournal(409);
    const reread = gh.journal(theirs, "b10b000000000000000000000000000000000009");
    // b's branch would be cut from the integration head, read beside the write (a read changes nothing).
    const head = gh.ref(INTEGRATION, INTEGRATION_SHA);

    await app.receive(mergedDelivery());

    // Re-deciding the merge on their journal changes nothing (no second write), and nothing of their
    // outbox is carried out here: no branch, no dispatch, no lookup, no tracker write.
    expect(lost.body).toMatchObject({ sha: JOURNAL_SHA });
    expect(reread.call).toBeDefined();
    await vi.waitFor(() => expect(head.call).toBeDefined());
    expect(gh.routes().filter((r) => r === `PUT ${R}/contents/journal.json`)).toHaveLength(1);
    expect(
      gh
        .routes()
        .filter((r) => r.endsWith("/dispatches") || r.includes("/runs") || r === `POST ${R}/git/refs` || r.startsWith(`PATCH ${R}/issues`)),
    ).toEqual([]);
    gh.verify();
  });

  it("effects of a replica whose lease ran out are taken over with a compare-and-swap write, then replayed: found, not done twice", async () => {
    const app = await startApp();
    // The replica that decided b's dispatch died before carrying it out; its lease ran out a second ago.
    const theirs = storedRun(
      { a: [], b: ["a"] },
      { config: manual, steps: [...readySteps, [merged]], facts: checkRunA1, pendingOutbox: true },
    );
    theirs.leases = ownLeases(theirs, "replica-2", NOW - 1_000);

    gh.app();
    gh.token();
    gh.repo();
    gh.config("main", "merge_policy: manual\n");
    gh.journal(theirs);
    const claim = gh.writeJournal(200);
    gh.ref(INTEGRATION, MERGE);
    gh.reply(`POST ${R}/git/refs`, 422, {
      message: "Reference already exists",
      documentation_url: "https://docs.github.com/rest/git/refs#create-a-reference",
      status: "422",
    });
    const runs = gh.reply(`GET ${R}/actions/workflows/forge-agent.yml/runs?branch=${branchOf("b", 1)}&per_page=100`, 200, {
      total_count: 1,
      workflow_runs: [
        // The repository's own CI on the branch is not the dispatch; Forge's run is.
        {
          id: 6000,
          head_branch: branchOf("b", 1),
          status: "completed",
          conclusion: "success",
          created_at: "2026-11-22T08:59:35Z",
          event: "push",
          head_repository: repository(),
        },
        {
          id: 6001,
          head_branch: branchOf("b", 1),
          status: "queued",
          conclusion: null,
          created_at: "2026-11-22T08:59:31Z",
          event: "workflow_dispatch",
          head_repository: repository(),
        },
      ],
    });
    gh.tracker(3);

    await app.receive(mergedDelivery());

    const claimed = decodedJournal(claim);
    for (const key of theirs.journal.outbox.map((e) => e.key))
      expect(claimed.leases[key]).toEqual({ owner: TEST_REPLICA, until: new Date(NOW + 20_000).toISOString() });
    expect(runs.call?.query).toEqual({ branch: branchOf("b", 1), per_page: "100" });
    expect(gh.routes().filter((r) => r.endsWith("/dispatches"))).toEqual([]);
    // The replay found Forge's own run, not the CI run that is newer on the same branch.
    const held = await [...app.forge.runtimes.values()][0]!.engine.state(RUN_ID);
    expect(taskOf(held!.state.journal, "b").workflowRunId).toBe(6001);
    gh.verify();
  });
});

// ---------------------------------------------------------------- workflow_run, workflow_job

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

describe("workflow_run", () => {
  it("completed before the push of its result: the push is given a moment, and the branch is never read", async () => {
    const app = await startApp({ jobEndGraceMs: JOB_END_GRACE_MS });
    const before = storedRun({ a: [], b: ["a"] });
    gh.app();
    gh.token();
    gh.repo();
    gh.config("main");
    gh.journal(before);
    const { write1 } = recordPushMocks();

    // GitHub delivers in no order: the job's completion first, then the push of its record commit.
    await app.receive(workflowRun("completed", "success"));
    await app.receive(recordPush());
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
    ["at once (serverless)", 0],
    ["after the grace given to the push", JOB_END_GRACE_MS],
  ])("completed without a result: the branch is read %s, the attempt is lost, and it is retried", async (_when, jobEndGraceMs) => {
    const app = await startApp({ jobEndGraceMs });
    const before = storedRun({ a: [] });
    expect(taskOf(before.journal, "a")).toMatchObject({ status: "RUNNING", attempt: 1 });

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
    // Attempt 2 (no backoff in this run's config).
    gh.ref(INTEGRATION, INTEGRATION_SHA);
    const branch2 = gh.createRef(branchOf("a", 2), INTEGRATION_SHA);
    const dispatch2 = gh.dispatch(5002);
    gh.tracker(3);

    await app.receive(workflowRun("completed", "failure"));
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
          "title": "Attempt 1 failed: the job ended (failure) without a result",
        },
        "status": "completed",
      }
    `,
    );
    expect(branch2.body).toEqual({ ref: `refs/heads/${branchOf("a", 2)}`, sha: INTEGRATION_SHA });
    expect(dispatch2.body).toMatchObject({ ref: branchOf("a", 2), inputs: { task_id: "a", attempt: "2" }, return_run_details: true });
    gh.verify();
  });

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
    gh.ref(INTEGRATION, INTEGRATION_SHA);
    gh.createRef(branchOf("a", 2), INTEGRATION_SHA);
    const dispatch2 = gh.dispatch(5002);
    gh.tracker(3);

    await app.receive(workflowRun("completed", "failure"));

    expect(jobs.call).toBeDefined();
    const after = decodedJournal(write);
    expect(journalView(after, before).events).toEqual(["task.stale a", "task.retried a", "task.scheduled a", "task.started a"]);
    expect(taskOf(after.journal, "a")).toMatchObject({ status: "RUNNING", attempt: 2, retries: 1 });
    expect(check.body).toMatchObject({ conclusion: "timed_out", external_id: `${RUN_ID}/a/1` });
    expect(dispatch2.body).toMatchObject({ ref: branchOf("a", 2), inputs: { task_id: "a", attempt: "2" } });
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
      startedAt: "2026-11-22T09:00:00.000Z",
      workflowRunId: 5001,
    });
    gh.verify();
  });

  it("in_progress before the attempt's run id is known: the job is left alone, without a call (its workflow_run tells, with what it takes to check it)", async () => {
    const app = await startApp();
    const before = storedRun({ a: [] });
    delete taskOf(before.journal, "a").workflowRunId;
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
    expect(after.workflowRunId).toBeUndefined();
    expect(after.startedAt).toBeUndefined();
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

// ---------------------------------------------------------------- commands

const oneRetry = testConfig({ max_retries: 1 });
/** Task a failed twice: its retries are exhausted (attempt 2, held). */
const exhausted: LeafInput[][] = [
  [{ kind: "agent.finished", taskId: "a", attempt: 1, exitCode: 1, error: "tests failed" }],
  [{ kind: "agent.finished", taskId: "a", attempt: 2, exitCode: 1, error: "tests failed again" }],
];

const TRACKER_BODY = `<!-- forge:run ${RUN_ID} -->\n## Forge run`;

/** A comment on the task PR #7 (`onPr`) or on the run's tracker issue #3. */
function comment(body: string, sender = user("octocat"), opts: { onPr?: boolean; id?: string } = {}): Delivery {
  const number = opts.onPr ? 7 : 3;
  return delivery(
    "issue_comment",
    {
      action: "created",
      issue: {
        number,
        title: opts.onPr ? "forge(a): Task a" : `Forge run ${RUN_ID}`,
        body: opts.onPr ? "The walkthrough." : TRACKER_BODY,
        state: "open",
        user: user("forge[bot]", "Bot"),
        labels: [],
        ...(opts.onPr
          ? {
              pull_request: {
                url: `https://api.github.com${R}/pulls/7`,
                html_url: "https://github.com/acme/widgets/pull/7",
                diff_url: "https://github.com/acme/widgets/pull/7.diff",
                patch_url: "https://github.com/acme/widgets/pull/7.patch",
              },
            }
          : {}),
      },
      comment: { id: 4242, body, user: sender, author_association: "MEMBER" },
      sender,
    },
    opts.id,
  );
}

function pullRequest(number: number, branch: string) {
  return {
    number,
    state: "open",
    head: { ref: branch, sha: "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1" },
    base: { ref: INTEGRATION, sha: INTEGRATION_SHA },
  };
}

describe("issue_comment", () => {
  it("/forge retry <task> <message> from a writer on the task PR: the permission, eyes, then a new attempt carrying the message, +1 once it is written", async () => {
    const app = await startApp();
    const before = storedRun({ a: [] }, { config: oneRetry, steps: exhausted });
    expect(taskOf(before.journal, "a")).toMatchObject({ status: "FAILED", attempt: 2, hold: "exhausted" });

    gh.app();
    gh.token();
    gh.permission("octocat", "write");
    const eyes = gh.reaction(4242, "eyes");
    gh.reply(`GET ${R}/pulls/7`, 200, pullRequest(7, branchOf("a", 2)));
    gh.repo();
    gh.config("main");
    gh.journal(before);
    const write = gh.writeJournal(200);
    gh.ref(INTEGRATION, INTEGRATION_SHA);
    gh.createRef(branchOf("a", 3), INTEGRATION_SHA);
    const dispatch = gh.dispatch(5003);
    gh.tracker(3);
    const plusOne = gh.reaction(4242, "+1");

    await app.receive(comment("/forge retry a use the v2 client\nand keep the old one", user("octocat"), { onPr: true }));

    // Acknowledged as soon as the App knows who asks, before anything else.
    expect(gh.routes().slice(2, 4)).toEqual([`GET ${R}/collaborators/octocat/permission`, `POST ${R}/issues/comments/4242/reactions`]);
    expect(eyes.body).toEqual({ content: "eyes" });
    expect(write.body).toMatchObject({ sha: JOURNAL_SHA });
    expect(journalView(decodedJournal(write), before)).toMatchInlineSnapshot(`
      {
        "events": [
          "task.retried a",
          "task.scheduled a",
          "task.started a",
        ],
        "outbox": [
          "check:a:3",
          "branch:a:3",
          "dispatch:a:3",
          "tracker",
        ],
        "seq": 12,
        "status": "running",
        "tasks": [
          "a RUNNING #3",
        ],
      }
    `);
    expect(dispatch.body).toMatchInlineSnapshot(`
      {
        "inputs": {
          "attempt": "3",
          "context": "{"answer":"use the v2 client\\nand keep the old one"}",
          "run_id": "mini-c0ffee0",
          "task_id": "a",
        },
        "ref": "forge/mini-c0ffee0/a/3",
        "return_run_details": true,
      }
    `);
    expect(plusOne.body).toEqual({ content: "+1" });
    // The +1 says the retry is decided and written; the effects it asked for go on meanwhile.
    expect(gh.calls.indexOf(plusOne.call!)).toBeGreaterThan(gh.calls.indexOf(write.call!));
    gh.verify();
  });

  it("/forge plan on an issue: a plan Captain is dispatched on forge/_plan-<issue> with the issue's title and text", async () => {
    const app = await startApp();
    gh.app();
    gh.token();
    gh.reaction(4242, "eyes");
    gh.permission("octocat", "write");
    gh.repo();
    gh.config("main");
    // No Captain at work on the branch yet.
    gh.reply(`GET ${R}/actions/workflows/forge-agent.yml/runs?branch=${encodeURIComponent("forge/_plan-9")}&per_page=100`, 200, {
      total_count: 0,
      workflow_runs: [],
    });
    const body = "Export the report as CSV.\n\nOne `toCsv(rows)` function with tests.";
    // The issue as it is now: not edited since it was opened.
    gh.issueAsEdited(9, { title: "CSV export", body, lastEditedAt: null });
    const said = gh.comment(9);
    gh.ref("main", PLAN_SHA);
    const branch = gh.createRef("forge/_plan-9", PLAN_SHA);
    const dispatch = gh.dispatch(6100);

    await app.receive(
      delivery("issue_comment", {
        action: "created",
        issue: { number: 9, title: "CSV export", body, state: "open", user: user("octocat"), labels: [] },
        comment: { id: 4242, body: "/forge plan", user: user("octocat"), author_association: "MEMBER" },
        sender: user("octocat"),
      }),
    );

    expect(said.body).toMatchObject({ body: expect.stringContaining("Captain agent will write a plan") });
    expect(branch.body).toEqual({ ref: "refs/heads/forge/_plan-9", sha: PLAN_SHA });
    expect(dispatch.body).toEqual({
      ref: "forge/_plan-9",
      inputs: {
        run_id: "_plan-9",
        task_id: "_captain-plan-9",
        attempt: "1",
        context: JSON.stringify({ issue: 9, title: "CSV export", body }),
      },
      return_run_details: true,
    });
    gh.verify();
  });

  it("/forge plan again while the issue's Captain works: it says so, and no second Captain is dispatched", async () => {
    const app = await startApp();
    gh.app();
    gh.token();
    gh.reaction(4242, "eyes");
    gh.permission("octocat", "write");
    gh.repo();
    gh.config("main");
    gh.reply(`GET ${R}/actions/workflows/forge-agent.yml/runs?branch=${encodeURIComponent("forge/_plan-9")}&per_page=100`, 200, {
      total_count: 1,
      workflow_runs: [{ id: 6100, head_branch: "forge/_plan-9", status: "in_progress", conclusion: null, event: "workflow_dispatch" }],
    });
    gh.issueAsEdited(9, { title: "CSV export", body: "x", lastEditedAt: "2026-01-01T00:00:00Z" });
    const said = gh.comment(9);

    await app.receive(
      delivery("issue_comment", {
        action: "created",
        issue: { number: 9, title: "CSV export", body: "x", state: "open", user: user("octocat"), labels: [] },
        comment: { id: 4242, body: "/forge plan", user: user("octocat"), author_association: "MEMBER" },
        sender: user("octocat"),
      }),
    );

    expect(said.body).toMatchObject({ body: expect.stringContaining("already writing a plan") });
    expect(gh.routes().some((r) => r.includes("/dispatches") || r.includes("/git/refs"))).toBe(false);
    gh.verify();
  });

  it("a reader gets a 👎 on the comment, no reply, and nothing changes", async () => {
    const app = await startApp();
    gh.app();
    gh.token();
    gh.permission("visitor", "read");
    const refused = gh.reaction(4242, "-1");

    await app.receive(comment("/forge retry a", user("visitor")));

    expect(refused.body).toEqual({ content: "-1" });
    // No comment, and no journal read or written.
    expect(gh.routes().filter((r) => r.startsWith("POST") && !r.endsWith("/access_tokens"))).toEqual([
      `POST ${R}/issues/comments/4242/reactions`,
    ]);
    expect(gh.routes().some((r) => r.includes("/contents/"))).toBe(false);
    gh.verify();
  });

  it("a bot's command is ignored without a single API call", async () => {
    const app = await startApp();
    // The App learns its own name on its first webhook (here, an unrelated one).
    gh.app();
    await app.receive(
      delivery("issues", {
        action: "opened",
        issue: { number: 11, title: "Hi", body: "", state: "open", user: user("octocat"), labels: [] },
        sender: user("octocat"),
      }),
    );
    const calls = gh.calls.length;

    await app.receive(comment("/forge retry a", user("renovate[bot]", "Bot")));

    expect(gh.calls.length).toBe(calls);
    gh.verify();
  });

  it("/forge help answers with the command table; a redelivery of the same comment is handled once", async () => {
    const app = await startApp();
    gh.app();
    gh.token();
    gh.reaction(4242, "eyes");
    gh.permission("octocat", "admin");
    const reply = gh.comment(3);

    const help = comment("/forge help", user("octocat"), { id: "3f1c9a52-0000-4000-8000-000000000001" });
    await app.receive(help);
    // A redelivery (by hand or through the API) reuses X-GitHub-Delivery.
    await app.receive(help);

    expect((reply.body as { body: string }).body).toBe(HELP);
    expect(gh.routes().filter((r) => r.endsWith("/comments"))).toHaveLength(1);
    gh.verify();
  });

  it("a delivery whose handling failed is handled again when it is redelivered with the same id", async () => {
    const app = await startApp();
    gh.app();
    gh.token();
    // GitHub is having a bad minute: the acknowledgement fails, and so does the delivery (no background work here).
    gh.permission("octocat", "write");
    gh.reply(`POST ${R}/issues/comments/4242/reactions`, 502, { message: "Server Error" });
    const help = comment("/forge help", user("octocat"), { id: "3f1c9a52-0000-4000-8000-000000000002" });
    await expect(app.receive(help)).rejects.toThrow(/reactions.create: 502/);

    // Someone redelivers it from the App's settings: the same X-GitHub-Delivery, and this time it works.
    gh.permission("octocat", "write");
    gh.reaction(4242, "eyes");
    const reply = gh.comment(3);
    await app.receive(help);

    expect((reply.body as { body: string }).body).toBe(HELP);
    gh.verify();
  });

  it("an unknown command gets the help, naming the word it did not know", async () => {
    const app = await startApp();
    gh.app();
    gh.token();
    gh.reaction(4242, "eyes");
    gh.permission("octocat", "write");
    const reply = gh.comment(3);

    await app.receive(comment("/forge frobnicate a", user("octocat")));

    expect((reply.body as { body: string }).body).toBe(`Unknown command \`frobnicate\`.\n\n${HELP}`);
    gh.verify();
  });

  it("/forge status on the tracker replies with the run's state", async () => {
    const app = await startApp();
    const before = storedRun({ a: [], b: ["a"] }, { config: oneRetry, steps: exhausted });
    gh.app();
    gh.token();
    gh.reaction(4242, "eyes");
    gh.permission("octocat", "write");
    gh.journal(before);
    const reply = gh.comment(3);

    await app.receive(comment("/forge status", user("octocat")));

    expect((reply.body as { body: string }).body).toMatchInlineSnapshot(`
      "Run \`mini-c0ffee0\`: **running**, 0/2 merged.

      | Task | Status | Attempt |
      |---|---|---:|
      | \`a\` | FAILED (exhausted) | 2 |
      | \`b\` | PENDING | 0 |"
    `);
    // Status changes nothing: no write, and no +1 (the reply is the answer).
    expect(gh.routes()).not.toContain(`PUT ${R}/contents/journal.json`);
    gh.verify();
  });
});

describe("check_run", () => {
  it("requested_action retry from a writer: the exhausted task gets a new attempt", async () => {
    const app = await startApp();
    const before = storedRun({ a: [] }, { config: oneRetry, steps: exhausted, facts: { checkRuns: { "a:2": 56 } } });

    gh.app();
    gh.token();
    gh.permission("octocat", "maintain");
    gh.journal(before);
    const write = gh.writeJournal(200);
    gh.ref(INTEGRATION, INTEGRATION_SHA);
    gh.createRef(branchOf("a", 3), INTEGRATION_SHA);
    const dispatch = gh.dispatch(5003);
    gh.tracker(3);

    await app.receive(
      delivery("check_run", {
        action: "requested_action",
        requested_action: { identifier: "retry" },
        check_run: {
          id: 56,
          name: "forge · a",
          head_sha: "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1",
          external_id: `${RUN_ID}/a/2`,
          status: "completed",
          conclusion: "failure",
          app: { id: 1001, slug: "forge", name: "Forge", owner: user("acme", "Organization") },
          pull_requests: [],
        },
        sender: user("octocat"),
      }),
    );

    expect(journalView(decodedJournal(write), before)).toMatchInlineSnapshot(`
      {
        "events": [
          "task.retried a",
          "task.scheduled a",
          "task.started a",
        ],
        "outbox": [
          "check:a:3",
          "branch:a:3",
          "dispatch:a:3",
          "tracker",
        ],
        "seq": 12,
        "status": "running",
        "tasks": [
          "a RUNNING #3",
        ],
      }
    `);
    expect(dispatch.body).toMatchObject({ ref: branchOf("a", 3), inputs: { task_id: "a", attempt: "3" } });
    expect(dispatch.body).not.toHaveProperty("inputs.context");
    gh.verify();
  });
});

// ---------------------------------------------------------------- issues, check_suite, installation

describe("issues", () => {
  it("a Change Request issue closed: the CR is rejected, the run resumes and the escalated task retries with the verdict", async () => {
    const app = await startApp();
    const escalated: LeafInput = {
      kind: "agent.finished",
      taskId: "a",
      attempt: 1,
      exitCode: 11,
      error: "the API the plan names does not exist",
      changeRequest: { title: "Use the v2 API", reason: "the API the plan names does not exist", affectedTasks: ["a"] },
    };
    const before = storedRun(
      { a: [], b: ["a"] },
      { config: testConfig({ cr_mode: "review" }), steps: [[escalated]], crIssues: { "cr-a-1": 12 } },
    );
    expect(before.journal.pause.changeRequests).toEqual(["cr-a-1"]);

    gh.app();
    gh.token();
    // Closing rejects the CR: only a person with write access may.
    gh.permission("octocat", "write");
    gh.journal(before);
    const write = gh.writeJournal(200);
    gh.ref(INTEGRATION, INTEGRATION_SHA);
    gh.createRef(branchOf("a", 2), INTEGRATION_SHA);
    const dispatch = gh.dispatch(5002);
    gh.tracker(3);

    await app.receive(
      delivery("issues", {
        action: "closed",
        issue: {
          number: 12,
          title: "Change Request: Use the v2 API",
          body: `${crMarker(RUN_ID, "cr-a-1")}\n\`\`\`yaml\nid: cr-a-1\n\`\`\``,
          state: "closed",
          state_reason: "not_planned",
          user: user("forge[bot]", "Bot"),
          labels: [
            {
              id: 1,
              node_id: "L_1",
              url: "https://api.github.com/x",
              name: "forge:change-request",
              color: "d93f0b",
              default: false,
              description: null,
            },
          ],
        },
        sender: user("octocat"),
      }),
    );

    expect(write.body).toMatchObject({ sha: JOURNAL_SHA });
    const after = decodedJournal(write);
    expect(after.journal.changeRequests[0]).toMatchObject({ id: "cr-a-1", status: "rejected" });
    expect(after.journal.pause.changeRequests).toEqual([]);
    expect(journalView(after, before)).toMatchInlineSnapshot(`
      {
        "events": [
          "cr.resolved a",
          "task.retried a",
          "run.resumed",
          "task.scheduled a",
          "task.started a",
        ],
        "outbox": [
          "check:a:2",
          "branch:a:2",
          "dispatch:a:2",
          "tracker",
        ],
        "seq": 11,
        "status": "running",
        "tasks": [
          "a RUNNING #2",
          "b PENDING #0",
        ],
      }
    `);
    expect(dispatch.body).toMatchInlineSnapshot(`
      {
        "inputs": {
          "attempt": "2",
          "context": "{"answer":"Change Request cr-a-1 was rejected; complete the task within the current plan."}",
          "run_id": "mini-c0ffee0",
          "task_id": "a",
        },
        "ref": "forge/mini-c0ffee0/a/2",
        "return_run_details": true,
      }
    `);
    gh.verify();
  });

  it("an issue closed without the Change Request label is none of Forge's business", async () => {
    const app = await startApp();
    gh.app();
    await app.receive(
      delivery("issues", {
        action: "closed",
        issue: { number: 13, title: "Typo", body: crMarker(RUN_ID, "cr-a-1"), state: "closed", user: user("octocat"), labels: [] },
        sender: user("octocat"),
      }),
    );
    expect(gh.routes()).toEqual(["GET /app"]);
    gh.verify();
  });
});

/** GitHub Actions' check suite on a's record commit finished green. */
function checkSuiteCompleted() {
  return delivery("check_suite", {
    action: "completed",
    check_suite: {
      id: 77,
      head_branch: branchOf("a", 1),
      head_sha: RECORD,
      status: "completed",
      conclusion: "success",
      pull_requests: [],
      app: { id: 15368, slug: "github-actions", name: "GitHub Actions", owner: user("github", "Organization") },
    },
    sender: user("github-actions[bot]", "Bot"),
  });
}

describe("check_suite", () => {
  it("completed: the merge that waited for required checks goes through, the run completes, its final PR opens and the tracker closes", async () => {
    const app = await startApp();
    const ready = finishedReady();
    const before = storedRun(
      { a: [] },
      { steps: [[ready, { kind: "pr.opened", taskId: "a", attempt: 1, number: 7 }]], facts: { checkRuns: { "a:1": 55 } } },
    );
    // The merge was tried and GitHub answered 405 (checks pending): it stayed in the outbox.
    const waiting: Effect = { key: "merge:a:1", kind: "MergePullRequest", taskId: "a", attempt: 1, branch: branchOf("a", 1), prNumber: 7 };
    before.journal.outbox = [waiting];
    expect(taskOf(before.journal, "a").status).toBe("MERGE_READY");

    gh.app();
    gh.token();
    gh.reply(`GET ${R}/git/matching-refs/heads/forge/`, 200, [
      gitRef(STATE_BRANCH, "5555555555555555555555555555555555555555"),
      gitRef(branchOf("a", 1), RECORD),
    ]);
    gh.journal(before);
    // Read just before merging, with what it changes: the PR is still the task's own (head the
    // attempt's branch, base the integration branch), and it changes nothing protected.
    gh.pullWithFiles(7, branchOf("a", 1), ["src/a.ts"]);
    const merge = gh.reply(`PUT ${R}/pulls/7/merge`, 200, { sha: MERGE, merged: true, message: "Pull Request successfully merged" });
    const write = gh.writeJournal(200);
    gh.reply(`GET ${R}/pulls?head=acme:${INTEGRATION}&state=all&per_page=10`, 200, []);
    const finalPr = gh.reply(`POST ${R}/pulls`, 201, {
      number: 20,
      state: "open",
      head: { ref: INTEGRATION, sha: MERGE },
      base: { ref: "main", sha: INTEGRATION_SHA },
    });
    const tracker = gh.tracker(3);

    await app.receive(checkSuiteCompleted());

    expect(merge.body).toMatchObject({ sha: RECORD, merge_method: "merge" });
    expect(journalView(decodedJournal(write), before)).toMatchInlineSnapshot(`
      {
        "events": [
          "task.merged a",
          "run.completed",
        ],
        "outbox": [
          "check:a:1",
          "final-pr",
          "tracker",
        ],
        "seq": 7,
        "status": "completed",
        "tasks": [
          "a MERGED #1",
        ],
      }
    `);
    expect(finalPr.body).toMatchInlineSnapshot(`
      {
        "base": "main",
        "body": "<!-- forge:run mini-c0ffee0 -->
      Forge run \`mini-c0ffee0\` of plan \`mini\` is complete: 1 tasks merged into \`forge/mini-c0ffee0/_integration\`.

      Run tracker: #3

      | Outcome | |
      |---|---:|
      | Tasks merged | 1 of 1 |
      | Merged with no person involved | 1 |
      | Retries | 0 |
      | Review iterations · CI iterations | 0 · 0 |
      | Spend | not reported |
      | Spend per merged task | not reported |
      | Time to first PR ready | 30.0 s |
      | Merge → next dispatch, median · p95 (0) | — · — |
      | Agent time · waiting time | 0.0 s · 1.0 min (0 % agent) |

      | Task | Attempts | Spend | PR |
      |---|---:|---:|---|
      | \`a\` | 1 |  | #7 |",
        "head": "forge/mini-c0ffee0/_integration",
        "title": "Forge run mini-c0ffee0: mini",
      }
    `);
    expect(tracker.body).toMatchObject({ state: "closed", title: `Forge run ${RUN_ID}: mini (1/1 merged, completed)` });
    gh.verify();
  });
});

describe("a restart between a check run and the journal write that records it", () => {
  it("the replayed verdict finds the check run GitHub already has instead of making a second one", async () => {
    const app = await startApp();
    const ready = finishedReady();
    // The previous process created check run 55 and died before its id reached the journal: the
    // verdict is still pending, and so is the merge that waited for required checks.
    const before = storedRun({ a: [] }, { steps: [[ready, { kind: "pr.opened", taskId: "a", attempt: 1, number: 7 }]] });
    expect(taskOf(before.journal, "a").status).toBe("MERGE_READY");
    const verdict: Effect = {
      key: "check:a:1",
      kind: "UpsertCheckRun",
      taskId: "a",
      attempt: 1,
      status: "MERGE_READY",
      summary: "a: ready to merge",
    };
    const waiting: Effect = { key: "merge:a:1", kind: "MergePullRequest", taskId: "a", attempt: 1, branch: branchOf("a", 1), prNumber: 7 };
    before.journal.outbox = [verdict, waiting];
    expect(before.facts.checkRuns).toEqual({});

    gh.app();
    gh.token();
    gh.reply(`GET ${R}/git/matching-refs/heads/forge/`, 200, [
      gitRef(STATE_BRANCH, "5555555555555555555555555555555555555555"),
      gitRef(branchOf("a", 1), RECORD),
    ]);
    gh.journal(before);
    const lookup = gh.reply(
      `GET ${R}/commits/${RECORD}/check-runs?check_name=${encodeURIComponent("forge · a")}&filter=all&per_page=100`,
      200,
      {
        total_count: 2,
        check_runs: [
          { id: 54, name: "forge · a", head_sha: RECORD, external_id: "other-run/a/1", status: "completed", conclusion: "failure" },
          { id: 55, name: "forge · a", head_sha: RECORD, external_id: `${RUN_ID}/a/1`, status: "completed", conclusion: "success" },
        ],
      },
    );
    const update = gh.reply(`PATCH ${R}/check-runs/55`, 200, {
      id: 55,
      name: "forge · a",
      head_sha: RECORD,
      status: "completed",
      conclusion: "success",
    });
    // The PR and what it changes, in one read: the task's own, nothing protected.
    gh.pullWithFiles(7, branchOf("a", 1), ["src/a.ts"]);
    gh.reply(`PUT ${R}/pulls/7/merge`, 200, { sha: MERGE, merged: true, message: "Pull Request successfully merged" });
    const write = gh.writeJournal(200);
    gh.reply(`GET ${R}/pulls?head=acme:${INTEGRATION}&state=all&per_page=10`, 200, []);
    gh.reply(`POST ${R}/pulls`, 201, {
      number: 20,
      state: "open",
      head: { ref: INTEGRATION, sha: MERGE },
      base: { ref: "main", sha: INTEGRATION_SHA },
    });
    gh.tracker(3);

    await app.receive(checkSuiteCompleted());

    expect(lookup.call).toBeDefined();
    expect(update.body).toMatchObject({ conclusion: "success", external_id: `${RUN_ID}/a/1` });
    expect(gh.routes().filter((r) => r === `POST ${R}/check-runs`)).toEqual([]);
    expect(decodedJournal(write).facts.checkRuns).toEqual({ "a:1": 55 });
    gh.verify();
  });
});

describe("installation", () => {
  it("created: noted in the log, without an API call", async () => {
    const app = await startApp();
    await app.receive(
      delivery("installation", {
        action: "created",
        installation: {
          id: INSTALLATION_ID,
          account: user("acme", "Organization"),
          app_id: 1001,
          app_slug: "forge",
          target_type: "Organization",
          repository_selection: "selected",
          events: ["push"],
          permissions: { contents: "write" },
        },
        repositories: [{ id: 77, node_id: "R_77", name: "widgets", full_name: "acme/widgets", private: false }],
        sender: user("octocat"),
      }),
    );
    expect(gh.calls).toEqual([]);
    gh.verify();
  });
});
