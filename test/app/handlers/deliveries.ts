/**
 * What more than one handler test file sends or expects: a runner's record commit and its push, the
 * mocks of what the App does with it, the run's tracker, and a task whose retries are exhausted.
 */
import type { LeafInput } from "../../../src/core/inputs.js";
import { resultPath } from "../../../src/core/layout.js";
import type { AgentResult } from "../../../src/core/schemas/agent-result.js";
import {
  branchOf,
  delivery,
  INTEGRATION,
  INTEGRATION_SHA,
  MERGE,
  R,
  RECORD,
  RUN_ID,
  testConfig,
  user,
  WORK,
  type Delivery,
  type GitHubMock,
} from "./fixtures.js";

export function recordMessage(taskId: string, attempt: number, exit: number): string {
  return `forge(${taskId}): record of attempt ${attempt}\n\nForge-Run: ${RUN_ID}\nForge-Task: ${taskId}\nForge-Attempt: ${attempt}\nForge-Agent: claude\nForge-Exit: ${exit}\n`;
}

export function commit(id: string, message: string, files: { added?: string[]; modified?: string[] } = {}) {
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

/** The push of an attempt's work commit and its record commit, by the job's GITHUB_TOKEN. */
export function recordPush(
  taskId = "a",
  attempt = 1,
  sender = user("github-actions[bot]", "Bot"),
  opts: { headListed?: boolean } = {},
): Delivery {
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

export function result(taskId: string, attempt: number): AgentResult {
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
export function recordPushMocks(gh: GitHubMock) {
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
  // No request for changes of the head waits unseen (the PR's number was not recorded: REST lists them).
  gh.reply(`GET ${R}/pulls/7/reviews?per_page=100`, 200, []);
  // The integration branch's rules choose the merge method and, with its protection, the checks
  // they require: none, a merge commit.
  gh.reply(`GET ${R}/rules/branches/${INTEGRATION}?per_page=100`, 200, []);
  gh.reply(`GET ${R}/branches/${INTEGRATION}`, 200, { name: INTEGRATION, protected: false });
  const merge = gh.reply(`PUT ${R}/pulls/7/merge`, 200, { sha: MERGE, merged: true, message: "Pull Request successfully merged" });
  gh.tracker(3);
  // The merge acknowledged: a is MERGED, b is ready.
  const write2 = gh.writeJournal(200, "b10b000000000000000000000000000000000003");
  gh.ref(INTEGRATION, MERGE);
  const branchB = gh.createRef(branchOf("b", 1), MERGE);
  const dispatchB = gh.dispatch(6001);
  return { read, write1, check, merge, write2, branchB, dispatchB };
}

export const oneRetry = testConfig({ max_retries: 1 });
/** Task a failed twice: its retries are exhausted (attempt 2, held). */
export const exhausted: LeafInput[][] = [
  [{ kind: "agent.finished", taskId: "a", attempt: 1, exitCode: 1, error: "tests failed" }],
  [{ kind: "agent.finished", taskId: "a", attempt: 2, exitCode: 1, error: "tests failed again" }],
];

export const TRACKER_BODY = `<!-- forge:run ${RUN_ID} -->\n## Forge run`;
