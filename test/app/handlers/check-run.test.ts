/**
 * The check_run handler, through a real Probot instance with GitHub mocked by nock 14
 * (./fixtures.ts): the check run's Retry button.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  branchOf,
  decodedJournal,
  delivery,
  GitHubMock,
  INTEGRATION,
  INTEGRATION_SHA,
  journalView,
  RUN_ID,
  startApp,
  storedRun,
  user,
} from "./fixtures.js";
import { oneRetry, exhausted } from "./deliveries.js";

let gh: GitHubMock;
beforeEach(() => {
  gh = new GitHubMock();
});
afterEach(() => gh.close());

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
