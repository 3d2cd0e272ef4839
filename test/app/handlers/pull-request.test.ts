/**
 * The pull_request handler: a task PR merged by a person moves the task to MERGED and dispatches
 * what it unblocked; a journal write that loses its compare-and-swap is decided again on a fresh
 * read, and the other writer's dispatch is found rather than repeated.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { LeafInput } from "../../../src/core/inputs.js";
import {
  branchOf,
  decodedJournal,
  delivery,
  GitHubMock,
  INTEGRATION,
  JOURNAL_SHA,
  journalView,
  R,
  RUN_ID,
  startApp,
  storedRun,
  taskOf,
  testConfig,
  user,
} from "./fixtures.js";

let gh: GitHubMock;
beforeEach(() => {
  gh = new GitHubMock();
});
afterEach(() => gh.close());

const WORK = "a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0";
const RECORD = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1";
const MERGE = "3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e";

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
const config = testConfig({ merge_policy: "manual" });
const facts = { checkRuns: { "a:1": 55 } };

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
      head: { ref: branchOf("a", 1), sha: RECORD, label: `acme:${branchOf("a", 1)}` },
      base: { ref: INTEGRATION, sha: "1111111111111111111111111111111111111111", label: `acme:${INTEGRATION}` },
      user: user("github-actions[bot]", "Bot"),
    },
    sender: user("octocat"),
  });
}

describe("pull_request", () => {
  it("closed and merged: the task is MERGED and the task it unblocked is dispatched", async () => {
    const app = await startApp();
    const before = storedRun({ a: [], b: ["a"] }, { config, steps: readySteps, facts });
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
    expect(dispatchB.body).toMatchObject({ ref: branchOf("b", 1), inputs: { run_id: RUN_ID, task_id: "b", attempt: "1" }, return_run_details: true });
    expect((tracker.body as { title: string }).title).toBe(`Forge run ${RUN_ID}: mini (1/2 merged)`);
    gh.verify();
  });

  it("a 409 on the journal write: the journal is read again and decided again, and the other writer's dispatch is not repeated", async () => {
    const app = await startApp();
    const before = storedRun({ a: [], b: ["a"] }, { config, steps: readySteps, facts });
    // Another process handled the same merge first: its journal has a MERGED and b's dispatch still
    // in the outbox (acknowledgements ride along with the next write).
    const theirs = storedRun({ a: [], b: ["a"] }, { config, steps: [...readySteps, [merged]], facts, pendingOutbox: true });
    expect(theirs.journal.outbox.map((e) => e.key)).toContain("dispatch:b:1");

    gh.app();
    gh.token();
    gh.repo();
    gh.config("main", "merge_policy: manual\n");
    gh.journal(before);
    const lost = gh.writeJournal(409);
    const reread = gh.journal(theirs, "b10b000000000000000000000000000000000009");
    // Re-deciding the merge on their journal changes nothing: no second write. Their outbox is
    // carried out as a replay: the branch exists (422), and b's workflow run is found, not dispatched again.
    gh.ref(INTEGRATION, MERGE);
    gh.reply(`POST ${R}/git/refs`, 422, { message: "Reference already exists", documentation_url: "https://docs.github.com/rest/git/refs#create-a-reference", status: "422" });
    const runs = gh.reply(`GET ${R}/actions/workflows/forge-agent.yml/runs?branch=${branchOf("b", 1)}&per_page=100`, 200, {
      total_count: 1,
      workflow_runs: [{ id: 6001, head_branch: branchOf("b", 1), status: "queued", conclusion: null, created_at: "2026-11-22T08:59:31Z" }],
    });
    gh.tracker(3);

    await app.receive(mergedDelivery());

    expect(lost.body).toMatchObject({ sha: JOURNAL_SHA });
    expect(reread.call).toBeDefined();
    expect(runs.call?.query).toEqual({ branch: branchOf("b", 1), per_page: "100" });
    expect(gh.routes().filter((r) => r === `PUT ${R}/contents/journal.json`)).toHaveLength(1);
    expect(gh.routes().filter((r) => r.endsWith("/dispatches"))).toEqual([]);
    gh.verify();
  });
});
