/**
 * The pull_request handler, through a real Probot instance with GitHub mocked by nock 14
 * (./fixtures.ts): a merge by a person, a journal write that lost its compare-and-swap, effects
 * taken over from a replica whose lease ran out.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { LeafInput } from "../../../src/core/inputs.js";
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
  R,
  RECORD,
  repository,
  RUN_ID,
  startApp,
  ownLeases,
  TEST_REPLICA,
  NOW,
  storedRun,
  taskOf,
  testConfig,
  user,
  WORK,
} from "./fixtures.js";

let gh: GitHubMock;
beforeEach(() => {
  gh = new GitHubMock();
});
afterEach(() => gh.close());

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
});

describe("pull_request: a replica's effects taken over", () => {
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
