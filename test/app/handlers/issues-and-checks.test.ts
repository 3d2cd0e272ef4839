/**
 * The issues handler (a Change Request issue closed by a person) and the check_suite handler
 * (required checks finished: a merge that was waiting goes through, and here completes the run).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Effect } from "../../../src/core/effects.js";
import type { LeafInput } from "../../../src/core/inputs.js";
import { crMarker } from "../../../src/app/render.js";
import {
  branchOf,
  decodedJournal,
  delivery,
  gitRef,
  GitHubMock,
  INTEGRATION,
  INSTALLATION_ID,
  INTEGRATION_SHA,
  JOURNAL_SHA,
  journalView,
  R,
  RUN_ID,
  STATE_BRANCH,
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
    const before = storedRun({ a: [], b: ["a"] }, { config: testConfig({ cr_mode: "review" }), steps: [[escalated]], facts: { crIssues: { "cr-a-1": 12 } } });
    expect(before.journal.pause.changeRequests).toEqual(["cr-a-1"]);

    gh.app();
    gh.token();
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
          labels: [{ id: 1, node_id: "L_1", url: "https://api.github.com/x", name: "forge:change-request", color: "d93f0b", default: false, description: null }],
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

describe("check_suite", () => {
  it("completed: the merge that waited for required checks goes through, the run completes, its final PR opens and the tracker closes", async () => {
    const app = await startApp();
    const ready: LeafInput = {
      kind: "agent.finished",
      taskId: "a",
      attempt: 1,
      exitCode: 0,
      pushedSha: WORK,
      recordSha: RECORD,
      walkthrough: { status: "completed", confidence: 0.9, headSha: WORK, filesChanged: ["src/a.ts"], risks: [], followups: [] },
    };
    const before = storedRun({ a: [] }, { steps: [[ready, { kind: "pr.opened", taskId: "a", attempt: 1, number: 7 }]], facts: { checkRuns: { "a:1": 55 } } });
    // The merge was tried and GitHub answered 405 (checks pending): it stayed in the outbox.
    const waiting: Effect = { key: "merge:a:1", kind: "MergePullRequest", taskId: "a", attempt: 1, branch: branchOf("a", 1), prNumber: 7 };
    before.journal.outbox = [waiting];
    expect(taskOf(before.journal, "a").status).toBe("MERGE_READY");

    gh.app();
    gh.token();
    gh.reply(`GET ${R}/git/matching-refs/heads/forge/`, 200, [gitRef(STATE_BRANCH, "5555555555555555555555555555555555555555"), gitRef(branchOf("a", 1), RECORD)]);
    gh.journal(before);
    const merge = gh.reply(`PUT ${R}/pulls/7/merge`, 200, { sha: MERGE, merged: true, message: "Pull Request successfully merged" });
    const write = gh.writeJournal(200);
    gh.reply(`GET ${R}/pulls?head=acme:${INTEGRATION}&state=all&per_page=10`, 200, []);
    const finalPr = gh.reply(`POST ${R}/pulls`, 201, { number: 20, state: "open", head: { ref: INTEGRATION, sha: MERGE }, base: { ref: "main", sha: INTEGRATION_SHA } });
    const tracker = gh.tracker(3);

    await app.receive(
      delivery("check_suite", {
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
      }),
    );

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

      | Task | Attempts | PR |
      |---|---:|---|
      | \`a\` | 1 | #7 |",
        "head": "forge/mini-c0ffee0/_integration",
        "title": "Forge run mini-c0ffee0: mini",
      }
    `);
    expect(tracker.body).toMatchObject({ state: "closed", title: `Forge run ${RUN_ID}: mini (1/1 merged, completed)` });
    gh.verify();
  });
});

describe("installation", () => {
  it("created: noted in the log, without an API call", async () => {
    const app = await startApp();
    await app.receive(
      delivery("installation", {
        action: "created",
        installation: { id: INSTALLATION_ID, account: user("acme", "Organization"), app_id: 1001, app_slug: "forge", target_type: "Organization", repository_selection: "selected", events: ["push"], permissions: { contents: "write" } },
        repositories: [{ id: 77, node_id: "R_77", name: "widgets", full_name: "acme/widgets", private: false }],
        sender: user("octocat"),
      }),
    );
    expect(gh.calls).toEqual([]);
    gh.verify();
  });
});

