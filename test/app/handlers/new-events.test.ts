/**
 * Events the local GitHub sends that the Forge App does not act on — the auto-merge actions of
 * `pull_request` — reach a real Probot with the App loaded and are ignored: no error, no write to
 * GitHub. Sub-issues and issue dependencies are read against the runs that show on issues
 * (src/app/issue-events.ts): with none, nothing is written. (The merge queue's `merge_group` and
 * `pull_request` enqueued / dequeued are acted on: test/app/merge-queue.e2e.test.ts; the tree's
 * changes on a running run's issues: test/app/issue-tree.e2e.test.ts.)
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GitHubMock, installation, R, repository, startApp, user } from "./fixtures.js";

let gh: GitHubMock;
beforeEach(() => {
  gh = new GitHubMock();
});
afterEach(() => gh.close());

const issue = (number: number) => ({ id: 9000 + number, number, title: `#${number}`, state: "open" });

describe("events the App ignores", () => {
  it("sub_issues, issue_dependencies and pull_request auto_merge_* are received without error or writes", async () => {
    const app = await startApp();
    // The tree's events look for the runs that show on issues: there are none.
    gh.app();
    gh.token();
    gh.reply(`GET ${R}/git/matching-refs/heads/forge/`, 200, []);
    const base = { repository: repository(), installation, sender: user("alice") };
    const pull = {
      number: 5,
      head: { ref: "feature", sha: "a".repeat(40), repo: { id: (repository() as { id: number }).id } },
      base: { ref: "main", sha: "b".repeat(40) },
    };
    const deliveries: Array<[string, Record<string, unknown>]> = [
      ["sub_issues", { action: "sub_issue_added", sub_issue_id: 9002, sub_issue: issue(2), parent_issue_id: 9001, parent_issue: issue(1) }],
      [
        "issue_dependencies",
        { action: "blocked_by_added", blocked_issue_id: 9002, blocked_issue: issue(2), blocking_issue_id: 9001, blocking_issue: issue(1) },
      ],
      ["pull_request", { action: "auto_merge_enabled", number: 5, pull_request: pull }],
    ];
    for (const [name, payload] of deliveries)
      await expect(
        app.probot.receive({ id: `d-${name}-${String(payload.action)}`, name, payload: { ...base, ...payload } } as never),
      ).resolves.toBeUndefined();
    // An installation token is no write to the repository.
    expect(gh.calls.filter((c) => !/^GET /.test(c.route) && !c.route.endsWith("/access_tokens"))).toEqual([]);
    gh.verify();
  });
});
