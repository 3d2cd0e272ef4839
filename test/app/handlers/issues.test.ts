/**
 * The issues handler, through a real Probot instance with GitHub mocked by nock 14 (./fixtures.ts):
 * a Change Request closed, and an issue that is none of Forge's business.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { crMarker } from "../../../src/app/render.js";
import type { LeafInput } from "../../../src/core/inputs.js";
import {
  branchOf,
  decodedJournal,
  delivery,
  GitHubMock,
  INTEGRATION,
  INTEGRATION_SHA,
  JOURNAL_SHA,
  R,
  journalView,
  RUN_ID,
  startApp,
  storedRun,
  testConfig,
  user,
} from "./fixtures.js";

let gh: GitHubMock;
beforeEach(() => {
  gh = new GitHubMock();
});
afterEach(() => gh.close());

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

  it("an issue closed without the Change Request label, on which no run shows, is none of Forge's business", async () => {
    const app = await startApp();
    gh.app();
    // Whether a run shows on the issue (src/app/issue-events.ts): the runs are read; none does.
    gh.token();
    gh.reply(`GET ${R}/git/matching-refs/heads/forge/`, 200, []);
    await app.receive(
      delivery("issues", {
        action: "closed",
        issue: { number: 13, title: "Typo", body: crMarker(RUN_ID, "cr-a-1"), state: "closed", user: user("octocat"), labels: [] },
        sender: user("octocat"),
      }),
    );
    expect(gh.routes().filter((r) => !r.startsWith("GET ") && !r.endsWith("/access_tokens"))).toEqual([]);
    gh.verify();
  });
});
