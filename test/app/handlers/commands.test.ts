/**
 * Commands: `/forge …` comments (issue_comment) and the check run's Retry button (check_run
 * requested_action). Only people with write access are obeyed; readers get a polite refusal, bots
 * are ignored without a single API call, and a redelivered comment is handled once.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HELP } from "../../../src/app/commands.js";
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
  R,
  RUN_ID,
  startApp,
  storedRun,
  taskOf,
  testConfig,
  user,
  type Delivery,
} from "./fixtures.js";

let gh: GitHubMock;
beforeEach(() => {
  gh = new GitHubMock();
});
afterEach(() => gh.close());

const config = testConfig({ max_retries: 1 });
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
        ...(opts.onPr ? { pull_request: { url: `https://api.github.com${R}/pulls/7`, html_url: "https://github.com/acme/widgets/pull/7", diff_url: "https://github.com/acme/widgets/pull/7.diff", patch_url: "https://github.com/acme/widgets/pull/7.patch" } } : {}),
      },
      comment: { id: 4242, body, user: sender, author_association: "MEMBER" },
      sender,
    },
    opts.id,
  );
}

function pullRequest(number: number, branch: string) {
  return { number, state: "open", head: { ref: branch, sha: "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1" }, base: { ref: INTEGRATION, sha: INTEGRATION_SHA } };
}

describe("issue_comment", () => {
  it("/forge retry <task> <message> from a writer on the task PR: eyes first, then a new attempt carrying the message, then +1", async () => {
    const app = await startApp();
    const before = storedRun({ a: [] }, { config, steps: exhausted });
    expect(taskOf(before.journal, "a")).toMatchObject({ status: "FAILED", attempt: 2, hold: "exhausted" });

    gh.app();
    gh.token();
    const eyes = gh.reaction(4242, "eyes");
    gh.permission("octocat", "write");
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

    // Acknowledged before anything else the App asks.
    expect(gh.routes().slice(2, 4)).toEqual([`POST ${R}/issues/comments/4242/reactions`, `GET ${R}/collaborators/octocat/permission`]);
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
    expect(gh.calls[gh.calls.length - 1]).toBe(plusOne.call);
    gh.verify();
  });

  it("a reader is refused politely and nothing changes", async () => {
    const app = await startApp();
    gh.app();
    gh.token();
    gh.reaction(4242, "eyes");
    gh.permission("visitor", "read");
    const reply = gh.comment(3);

    await app.receive(comment("/forge retry a", user("visitor")));

    expect(reply.body).toMatchInlineSnapshot(`
      {
        "body": "@visitor sorry — Forge commands need write access to this repository (you have \`read\`).",
      }
    `);
    // No journal was read or written.
    expect(gh.routes().some((r) => r.includes("/contents/"))).toBe(false);
    gh.verify();
  });

  it("a bot's command is ignored without a single API call", async () => {
    const app = await startApp();
    // The App learns its own name on its first webhook (here, an unrelated one).
    gh.app();
    await app.receive(delivery("issues", { action: "opened", issue: { number: 11, title: "Hi", body: "", state: "open", user: user("octocat"), labels: [] }, sender: user("octocat") }));
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
    gh.reply(`POST ${R}/issues/comments/4242/reactions`, 502, { message: "Server Error" });
    const help = comment("/forge help", user("octocat"), { id: "3f1c9a52-0000-4000-8000-000000000002" });
    await expect(app.receive(help)).rejects.toThrow(/reactions.create: 502/);

    // Someone redelivers it from the App's settings: the same X-GitHub-Delivery, and this time it works.
    gh.reaction(4242, "eyes");
    gh.permission("octocat", "write");
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
    const before = storedRun({ a: [], b: ["a"] }, { config, steps: exhausted });
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
    const before = storedRun({ a: [] }, { config, steps: exhausted, facts: { checkRuns: { "a:2": 56 } } });

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
