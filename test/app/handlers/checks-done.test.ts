/**
 * The check_suite (and status) handler, through a real Probot instance with GitHub mocked by nock 14
 * (./fixtures.ts): a waiting merge completing the run, and a check run replayed after a restart.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Effect } from "../../../src/core/effects.js";
import {
  branchOf,
  decodedJournal,
  delivery,
  GitHubMock,
  gitRef,
  finishedReady,
  INTEGRATION,
  INTEGRATION_SHA,
  journalView,
  MERGE,
  R,
  RECORD,
  RUN_ID,
  startApp,
  STATE_BRANCH,
  storedRun,
  taskOf,
  user,
} from "./fixtures.js";

let gh: GitHubMock;
beforeEach(() => {
  gh = new GitHubMock();
});
afterEach(() => gh.close());

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
    // The integration branch's rules choose the merge method and, with its protection, the checks
    // they require: none, a merge commit.
    gh.reply(`GET ${R}/rules/branches/${INTEGRATION}?per_page=100`, 200, []);
    gh.reply(`GET ${R}/branches/${INTEGRATION}`, 200, { name: INTEGRATION, protected: false });
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
    // The integration branch's rules choose the merge method and, with its protection, the checks
    // they require: none, a merge commit.
    gh.reply(`GET ${R}/rules/branches/${INTEGRATION}?per_page=100`, 200, []);
    gh.reply(`GET ${R}/branches/${INTEGRATION}`, 200, { name: INTEGRATION, protected: false });
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
