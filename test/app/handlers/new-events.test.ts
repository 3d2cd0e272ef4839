/**
 * Events the local GitHub now sends that the Forge App does not act on yet — sub-issues, issue
 * dependencies, the merge queue's `merge_group` and the queue and auto-merge actions of
 * `pull_request` — reach a real Probot with the App loaded and are ignored: no error, no write to GitHub.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GitHubMock, installation, repository, startApp, user } from "./fixtures.js";

let gh: GitHubMock;
beforeEach(() => {
  gh = new GitHubMock();
});
afterEach(() => gh.close());

const issue = (number: number) => ({ id: 9000 + number, number, title: `#${number}`, state: "open" });

describe("events the App ignores", () => {
  it("sub_issues, issue_dependencies, merge_group and pull_request enqueued / dequeued / auto_merge_* are received without error or writes", async () => {
    const app = await startApp();
    const base = { repository: repository(), installation, sender: user("alice") };
    const pull = {
      number: 5,
      head: { ref: "feature", sha: "a".repeat(40), repo: { id: (repository() as { id: number }).id } },
      base: { ref: "main", sha: "b".repeat(40) },
    };
    const group = {
      head_sha: "c".repeat(40),
      head_ref: "refs/heads/gh-readonly-queue/main/pr-5-aaaa",
      base_sha: "b".repeat(40),
      base_ref: "refs/heads/main",
    };
    const deliveries: Array<[string, Record<string, unknown>]> = [
      ["sub_issues", { action: "sub_issue_added", sub_issue_id: 9002, sub_issue: issue(2), parent_issue_id: 9001, parent_issue: issue(1) }],
      [
        "issue_dependencies",
        { action: "blocked_by_added", blocked_issue_id: 9002, blocked_issue: issue(2), blocking_issue_id: 9001, blocking_issue: issue(1) },
      ],
      ["merge_group", { action: "checks_requested", merge_group: group }],
      ["merge_group", { action: "destroyed", reason: "dequeued", merge_group: group }],
      ["pull_request", { action: "enqueued", number: 5, pull_request: pull }],
      ["pull_request", { action: "dequeued", reason: "CI_FAILURE", number: 5, pull_request: pull }],
      ["pull_request", { action: "auto_merge_enabled", number: 5, pull_request: pull }],
    ];
    for (const [name, payload] of deliveries)
      await expect(
        app.probot.receive({ id: `d-${name}-${String(payload.action)}`, name, payload: { ...base, ...payload } } as never),
      ).resolves.toBeUndefined();
    expect(gh.calls.filter((c) => !/^GET /.test(c.route))).toEqual([]);
  });
});
