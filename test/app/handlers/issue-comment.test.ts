/**
 * The issue_comment handler, through a real Probot instance with GitHub mocked by nock 14
 * (./fixtures.ts): the commands, who may give them, their acknowledgement, redeliveries.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HELP } from "../../../src/app/commands.js";
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
import { oneRetry, exhausted, TRACKER_BODY } from "./deliveries.js";

let gh: GitHubMock;
beforeEach(() => {
  gh = new GitHubMock();
});
afterEach(() => gh.close());

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
    expect(taskOf(before.journal, "a")).toMatchObject({ status: "FAILED", attempts: 2, attempt: { hold: "exhausted" } });

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
        // GitHub counts the issue's sub-issues in the payload: none, so the App asks no more (no issue tree).
        issue: {
          number: 9,
          title: "CSV export",
          body,
          state: "open",
          user: user("octocat"),
          labels: [],
          sub_issues_summary: { total: 0, completed: 0, percent_completed: 0 },
        },
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
    // A payload without the count of sub-issues: the App asks, and there are none (no issue tree).
    gh.reply(`GET ${R}/issues/9/sub_issues?per_page=100`, 200, []);
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
});

describe("issue_comment: readers, bots, help, redeliveries, status", () => {
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
    // GitHub is having a bad minute: who asks cannot be read, and the delivery fails (no background
    // work here). (A refused acknowledgement alone does not fail it: the command goes on.)
    gh.reply(`GET ${R}/collaborators/octocat/permission`, 502, { message: "Server Error" });
    const help = comment("/forge help", user("octocat"), { id: "3f1c9a52-0000-4000-8000-000000000002" });
    await expect(app.receive(help)).rejects.toThrow(/502/);

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

describe("issue_comment under GitHub's limits", () => {
  it("an acknowledgement GitHub refuses for its secondary rate limit does not lose the command: the retry is decided and written once the wait is over", async () => {
    const app = await startApp();
    const before = storedRun({ a: [] }, { config: oneRetry, steps: exhausted });
    gh.app();
    gh.token();
    gh.permission("octocat", "write");
    const limited = gh.reply(
      `POST ${R}/issues/comments/4242/reactions`,
      403,
      { message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again." },
      { "retry-after": "60" },
    );
    gh.reply(`GET ${R}/pulls/7`, 200, pullRequest(7, branchOf("a", 2)));
    gh.repo();
    gh.config("main");
    gh.journal(before);
    const write = gh.writeJournal(200);
    gh.ref(INTEGRATION, INTEGRATION_SHA);
    gh.createRef(branchOf("a", 3), INTEGRATION_SHA);
    gh.dispatch(5003);
    gh.tracker(3);
    const plusOne = gh.reaction(4242, "+1");

    // The installation's requests wait out GitHub's minute (on the App's clock, skipped here).
    const start = app.clock.now();
    await app.clock.whileWaiting(app.receive(comment("/forge retry a", user("octocat"), { onPr: true })), () => true);

    expect(limited.call).toBeDefined();
    expect(journalView(decodedJournal(write), before).tasks).toEqual(["a RUNNING #3"]);
    expect(plusOne.body).toEqual({ content: "+1" });
    expect(app.clock.now() - start).toBeGreaterThanOrEqual(60_000);
    gh.verify();
  });
});
