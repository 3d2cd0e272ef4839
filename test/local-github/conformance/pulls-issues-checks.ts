// Conformance: pull requests, issues, comments, labels, reactions and checks — the tests of each `describe` of conformance.test.ts, in its one world.
import { Octokit } from "@octokit/rest";
import { expect, it } from "vitest";
import { appKeys } from "../support/helpers.js";
import { mergeableOf, owner, repo, status, w } from "./world.js";

/** describe("pull requests") */
export function pullRequests(): void {
  it("create, list with filters, get, update, files, reviews, merge rules", async () => {
    const { data: main } = await w.gh.rest.git.getRef({ owner, repo, ref: "heads/main" });
    await w.gh.rest.git.createRef({ owner, repo, ref: "refs/heads/feat/pr", sha: main.object.sha });
    // No commits between → 422.
    expect(await status(w.gh.rest.pulls.create({ owner, repo, head: "feat/pr", base: "main", title: "t" }))).toBe(422);
    await w.gh.rest.repos.createOrUpdateFileContents({ owner, repo, path: "pr.txt", message: "pr", content: "cHI=", branch: "feat/pr" });
    const { data: pr } = await w.gh.rest.pulls.create({
      owner,
      repo,
      head: `${owner}:feat/pr`,
      base: "main",
      title: "PR",
      body: "body",
      draft: true,
    });
    expect(pr.draft).toBe(true);
    expect(await status(w.gh.rest.pulls.create({ owner, repo, head: "feat/pr", base: "main", title: "dup" }))).toBe(422);
    expect((await w.gh.rest.pulls.list({ owner, repo, head: `${owner}:feat/pr` })).data.map((p) => p.number)).toEqual([pr.number]);
    expect((await w.gh.rest.pulls.list({ owner, repo, base: "int" })).data).toEqual([]);
    expect((await w.gh.rest.pulls.list({ owner, repo, state: "closed" })).data).toEqual([]);
    // GitHub computes mergeability in the background: null at first, the value once its job is done.
    expect(pr.mergeable).toBeNull();
    expect(pr.mergeable_state).toBe("unknown");
    expect(await mergeableOf(pr.number)).toEqual({ mergeable: true, mergeable_state: "draft" });
    const { data: got } = await w.gh.rest.pulls.get({ owner, repo, pull_number: pr.number });
    expect(got.mergeable).toBe(true);
    expect(got.changed_files).toBe(1);
    await w.gh.rest.pulls.update({ owner, repo, pull_number: pr.number, title: "PR (edited)", body: "new body" });
    expect((await w.gh.rest.pulls.listFiles({ owner, repo, pull_number: pr.number })).data.map((f) => f.filename)).toEqual(["pr.txt"]);
    // Draft → 405; ready for review (a person, through the control API) → mergeable.
    expect(await status(w.gh.rest.pulls.merge({ owner, repo, pull_number: pr.number }))).toBe(405);
    await w.sim.control.readyForReview("alice", `${owner}/${repo}`, pr.number);
    // Wrong head sha → 409.
    expect(await status(w.gh.rest.pulls.merge({ owner, repo, pull_number: pr.number, sha: main.object.sha }))).toBe(409);
    const review = await w.person.rest.pulls.createReview({ owner, repo, pull_number: pr.number, event: "APPROVE", body: "lgtm" });
    expect(review.data.state).toBe("APPROVED");
    expect((await w.gh.rest.pulls.listReviews({ owner, repo, pull_number: pr.number })).data).toHaveLength(1);
    // Inline comments on the head's lines; a path or line GitHub cannot place → 422.
    const pull = { owner, repo, pull_number: pr.number };
    const asking = await w.person.rest.pulls.createReview({
      ...pull,
      event: "REQUEST_CHANGES",
      body: "two things",
      comments: [{ path: "pr.txt", line: 1, body: "rename" }],
    });
    expect(asking.data.state).toBe("CHANGES_REQUESTED");
    expect(
      await status(w.person.rest.pulls.createReview({ ...pull, event: "COMMENT", comments: [{ path: "nope.txt", line: 1, body: "x" }] })),
    ).toBe(422);
    expect(
      await status(w.person.rest.pulls.createReview({ ...pull, event: "COMMENT", comments: [{ path: "pr.txt", line: 9, body: "x" }] })),
    ).toBe(422);
    expect((await w.gh.rest.pulls.getReview({ ...pull, review_id: asking.data.id })).data.body).toBe("two things");
    // A request for changes can be dismissed (it no longer counts); a plain comment cannot.
    const comment = await w.person.rest.pulls.createReview({ ...pull, event: "COMMENT", body: "a remark" });
    expect(await status(w.gh.rest.pulls.dismissReview({ ...pull, review_id: comment.data.id, message: "no" }))).toBe(422);
    expect(await status(w.gh.rest.pulls.getReview({ ...pull, review_id: 999_999 }))).toBe(404);
    const { data: inline } = await w.gh.rest.pulls.listCommentsForReview({ ...pull, review_id: asking.data.id });
    expect(inline.map((c) => [c.path, c.body, c.diff_hunk.split("\n").at(-1)])).toEqual([["pr.txt", "rename", "+pr"]]);
    const { data: reply } = await w.gh.rest.pulls.createReplyForReviewComment({ ...pull, comment_id: inline[0]!.id, body: "renamed" });
    expect(reply.in_reply_to_id).toBe(inline[0]!.id);
    expect(await status(w.gh.rest.pulls.createReplyForReviewComment({ ...pull, comment_id: 999_999, body: "x" }))).toBe(404);
    expect((await w.gh.rest.pulls.listReviewComments(pull)).data.map((c) => c.body)).toEqual(["rename", "renamed"]);
    const dismissed = await w.gh.rest.pulls.dismissReview({ ...pull, review_id: asking.data.id, message: "answered" });
    expect(dismissed.data.state).toBe("DISMISSED");
    const { data: requested } = await w.gh.rest.pulls.requestReviewers({ ...pull, reviewers: ["alice"] });
    expect(requested.requested_reviewers?.map((u) => u.login)).toEqual(["alice"]);
    expect(await status(w.gh.rest.pulls.requestReviewers({ ...pull, reviewers: ["nobody-here"] }))).toBe(422);
    await w.person.rest.pulls.createReview({ ...pull, event: "APPROVE" });
    const merged = await w.gh.rest.pulls.merge({ owner, repo, pull_number: pr.number, merge_method: "squash" });
    expect(merged.data.merged).toBe(true);
    // Already merged → 405.
    expect(await status(w.gh.rest.pulls.merge({ owner, repo, pull_number: pr.number }))).toBe(405);

    // A conflicting PR is not mergeable (405); closing and reopening emit events.
    await w.gh.rest.git.createRef({ owner, repo, ref: "refs/heads/feat/conflict", sha: main.object.sha });
    await w.gh.rest.repos.createOrUpdateFileContents({
      owner,
      repo,
      path: "pr.txt",
      message: "other",
      content: "b3RoZXI=",
      branch: "feat/conflict",
    });
    const { data: pr2 } = await w.gh.rest.pulls.create({ owner, repo, head: "feat/conflict", base: "main", title: "conflict" });
    expect(await mergeableOf(pr2.number)).toEqual({ mergeable: false, mergeable_state: "dirty" });
    expect(await status(w.gh.rest.pulls.merge({ owner, repo, pull_number: pr2.number }))).toBe(405);
    // Updating its branch conflicts too (422); a branch behind main without conflict is updated (202).
    expect(await status(w.gh.rest.pulls.updateBranch({ owner, repo, pull_number: pr2.number }))).toBe(422);
    await w.gh.rest.git.createRef({ owner, repo, ref: "refs/heads/feat/behind", sha: main.object.sha });
    const { data: put } = await w.gh.rest.repos.createOrUpdateFileContents({
      owner,
      repo,
      path: "behind.txt",
      message: "behind",
      content: "YmVoaW5k",
      branch: "feat/behind",
    });
    const { data: pr3 } = await w.gh.rest.pulls.create({ owner, repo, head: "feat/behind", base: "main", title: "behind" });
    const updated = await w.gh.rest.pulls.updateBranch({ owner, repo, pull_number: pr3.number, expected_head_sha: put.commit.sha! });
    expect(updated.status).toBe(202);
    expect(updated.data.message).toBe("Updating pull request branch.");
    const { data: after } = await w.gh.rest.pulls.get({ owner, repo, pull_number: pr3.number });
    const { data: mergeCommit } = await w.gh.rest.git.getCommit({ owner, repo, commit_sha: after.head.sha });
    expect(mergeCommit.parents.map((p) => p.sha)).toEqual([put.commit.sha, merged.data.sha]);
    // Nothing left to bring in: 422.
    expect(await status(w.gh.rest.pulls.updateBranch({ owner, repo, pull_number: pr3.number }))).toBe(422);
    await w.gh.rest.pulls.update({ owner, repo, pull_number: pr3.number, state: "closed" });
    await w.gh.rest.pulls.update({ owner, repo, pull_number: pr2.number, state: "closed" });
    await w.gh.rest.pulls.update({ owner, repo, pull_number: pr2.number, state: "open" });

    await w.sim.idle();
    const actions = w.receiver.received.filter((h) => h.event === "pull_request").map((h) => `${h.payload.number as number}:${h.action}`);
    expect(actions).toEqual(
      expect.arrayContaining([
        `${pr.number}:opened`,
        `${pr.number}:edited`,
        `${pr.number}:ready_for_review`,
        `${pr.number}:closed`,
        `${pr2.number}:closed`,
        `${pr2.number}:reopened`,
        `${pr3.number}:synchronize`,
      ]),
    );
    expect(w.receiver.received.some((h) => h.event === "pull_request_review" && h.action === "submitted")).toBe(true);
  });
}

/** describe("issues, comments, labels, reactions") */
export function issues(): void {
  it("works as GitHub documents", async () => {
    const { data: issue } = await w.gh.rest.issues.create({
      owner,
      repo,
      title: "Change request",
      body: "cr",
      labels: ["forge:change-request"],
    });
    expect(issue.labels.map((l) => (typeof l === "string" ? l : l.name))).toEqual(["forge:change-request"]);
    expect(await status(w.gh.rest.issues.create({ owner, repo, title: "big", body: "x".repeat(65537) }))).toBe(422);
    expect((await w.gh.rest.issues.get({ owner, repo, issue_number: issue.number })).data.title).toBe("Change request");
    await w.gh.rest.issues.update({ owner, repo, issue_number: issue.number, title: "CR 1" });
    const { data: list } = await w.gh.rest.issues.listForRepo({ owner, repo, labels: "forge:change-request" });
    expect(list.map((i) => i.number)).toEqual([issue.number]);
    await w.gh.rest.issues.createLabel({ owner, repo, name: "forge:run", color: "00ff00" });
    expect(await status(w.gh.rest.issues.createLabel({ owner, repo, name: "forge:run" }))).toBe(422);
    expect((await w.gh.rest.issues.getLabel({ owner, repo, name: "forge:run" })).data.color).toBe("00ff00");
    expect((await w.gh.rest.issues.listLabelsForRepo({ owner, repo })).data.length).toBeGreaterThanOrEqual(2);
    await w.gh.rest.issues.addLabels({ owner, repo, issue_number: issue.number, labels: ["forge:run"] });
    await w.gh.rest.issues.removeLabel({ owner, repo, issue_number: issue.number, name: "forge:change-request" });
    expect(await status(w.gh.rest.issues.removeLabel({ owner, repo, issue_number: issue.number, name: "nope" }))).toBe(404);
    expect((await w.gh.rest.issues.listLabelsOnIssue({ owner, repo, issue_number: issue.number })).data.map((l) => l.name)).toEqual([
      "forge:run",
    ]);
    await w.gh.rest.issues.setLabels({ owner, repo, issue_number: issue.number, labels: ["a", "b"] });

    const c = await w.sim.control.comment("alice", `${owner}/${repo}`, issue.number, "/forge approve");
    expect(c.status).toBe(201);
    const commentId = (c.body as { id: number }).id;
    const { data: mine } = await w.gh.rest.issues.createComment({ owner, repo, issue_number: issue.number, body: "tracker" });
    expect(mine.performed_via_github_app?.id).toBe(w.appId);
    await w.gh.rest.issues.updateComment({ owner, repo, comment_id: mine.id, body: "tracker v2" });
    expect((await w.gh.rest.issues.getComment({ owner, repo, comment_id: mine.id })).data.body).toBe("tracker v2");
    expect((await w.gh.rest.issues.listComments({ owner, repo, issue_number: issue.number })).data).toHaveLength(2);
    const r1 = await w.gh.rest.reactions.createForIssueComment({ owner, repo, comment_id: commentId, content: "eyes" });
    expect(r1.status).toBe(201);
    expect((await w.gh.rest.reactions.createForIssueComment({ owner, repo, comment_id: commentId, content: "eyes" })).status).toBe(200);
    expect((await w.gh.rest.reactions.listForIssueComment({ owner, repo, comment_id: commentId })).data).toHaveLength(1);
    expect((await w.gh.rest.reactions.createForIssue({ owner, repo, issue_number: issue.number, content: "rocket" })).status).toBe(201);
    await w.gh.rest.issues.deleteComment({ owner, repo, comment_id: mine.id });
    await w.gh.rest.issues.update({ owner, repo, issue_number: issue.number, state: "closed", state_reason: "not_planned" });

    // A read-only person cannot edit someone else's issue state; a stranger cannot see a 404 repo path.
    expect(await status(w.reader.rest.issues.update({ owner, repo, issue_number: issue.number, state: "open" }))).toBe(403);
    await w.sim.idle();
    const kinds = w.receiver.received
      .filter((h) => h.event === "issues" || h.event === "issue_comment")
      .map((h) => `${h.event}.${h.action}`);
    expect(kinds).toEqual(
      expect.arrayContaining([
        "issues.opened",
        "issues.edited",
        "issues.labeled",
        "issues.unlabeled",
        "issues.closed",
        "issue_comment.created",
        "issue_comment.edited",
        "issue_comment.deleted",
      ]),
    );
    // A bot account (login "…[bot]") is a Bot with URL-safe links.
    const bot = await w.sim.control.comment("dependabot[bot]", `${owner}/${repo}`, issue.number, "bump");
    expect(bot.status).toBe(201);
    expect((bot.body as { user: { type: string; html_url: string } }).user).toMatchObject({
      type: "Bot",
      html_url: `${w.sim.url}/apps/dependabot`,
    });
    const fromAlice = w.receiver.received.find(
      (h) => h.event === "issue_comment" && (h.payload.comment as { body: string }).body === "/forge approve",
    );
    expect((fromAlice?.payload.sender as { login: string }).login).toBe("alice");
  });
}

/** describe("checks") */
export function checks(): void {
  it("runs and suites: create, update, rerequest, requested_action, creator-only updates", async () => {
    const { data: main } = await w.gh.rest.git.getRef({ owner, repo, ref: "heads/main" });
    const sha = main.object.sha;
    const { data: run } = await w.gh.rest.checks.create({
      owner,
      repo,
      name: "forge · t1",
      head_sha: sha,
      status: "in_progress",
      external_id: "run-1/t1/1",
      actions: [{ label: "Retry", description: "Retry the task", identifier: "retry" }],
    });
    expect(run.status).toBe("in_progress");
    expect(await status(w.gh.rest.checks.create({ owner, repo, name: "x", head_sha: "f".repeat(40) }))).toBe(422);
    // Without external_id, GitHub reports "" (webhooks require a string).
    const { data: plain } = await w.gh.rest.checks.create({ owner, repo, name: "plain", head_sha: sha, conclusion: "success" });
    expect(plain.external_id).toBe("");
    // People cannot write checks: Checks API writes are for GitHub Apps only.
    expect(await status(w.person.rest.checks.create({ owner, repo, name: "x", head_sha: sha }))).toBe(403);
    const { data: done } = await w.gh.rest.checks.update({
      owner,
      repo,
      check_run_id: run.id,
      conclusion: "failure",
      output: {
        title: "failed",
        summary: "exit 1",
        annotations: [{ path: "src/a.txt", start_line: 1, end_line: 1, annotation_level: "failure", message: "a is wrong" }],
      },
    });
    expect(done.status).toBe("completed");
    expect(done.output.annotations_count).toBe(1);
    const { data: notes } = await w.gh.rest.checks.listAnnotations({ owner, repo, check_run_id: run.id });
    expect(notes.map((a) => [a.path, a.start_line, a.annotation_level, a.message])).toEqual([["src/a.txt", 1, "failure", "a is wrong"]]);
    expect((await w.gh.rest.checks.get({ owner, repo, check_run_id: run.id })).data.conclusion).toBe("failure");
    const { data: forRef } = await w.gh.rest.checks.listForRef({ owner, repo, ref: sha, check_name: "forge · t1" });
    expect(forRef.total_count).toBe(1);
    const { data: suites } = await w.gh.rest.checks.listSuitesForRef({ owner, repo, ref: sha, app_id: w.appId });
    expect(suites.total_count).toBe(1);
    const suiteId = suites.check_suites[0]!.id;
    expect((await w.gh.rest.checks.getSuite({ owner, repo, check_suite_id: suiteId })).data.conclusion).toBe("failure");
    expect((await w.gh.rest.checks.listForSuite({ owner, repo, check_suite_id: suiteId })).data.total_count).toBe(2);
    expect((await w.gh.rest.checks.createSuite({ owner, repo, head_sha: sha })).status).toBe(200);
    await w.person.rest.checks.rerequestRun({ owner, repo, check_run_id: run.id });
    await w.person.rest.checks.rerequestSuite({ owner, repo, check_suite_id: suiteId });
    await w.sim.control.requestAction("alice", `${owner}/${repo}`, run.id, "retry");

    // Another App cannot update this App's check run.
    const other = w.sim.control.registerApp({
      slug: "other",
      publicKeyPem: appKeys().publicKeyPem,
      permissions: { checks: "write" },
      events: [],
    });
    const otherInst = w.sim.control.install(other.id, owner, [`${owner}/${repo}`]);
    const otherKit = new Octokit({ baseUrl: w.sim.apiUrl, auth: w.sim.control.installationToken(otherInst.id) });
    expect(await status(otherKit.rest.checks.update({ owner, repo, check_run_id: run.id, status: "in_progress" }))).toBe(403);

    await w.sim.idle();
    const kinds = w.receiver.received.filter((h) => h.event.startsWith("check_")).map((h) => `${h.event}.${h.action}`);
    expect(kinds).toEqual(
      expect.arrayContaining([
        "check_run.created",
        "check_run.completed",
        "check_run.rerequested",
        "check_run.requested_action",
        "check_suite.completed",
        "check_suite.rerequested",
      ]),
    );
    const ra = w.receiver.received.find((h) => h.action === "requested_action");
    expect((ra?.payload.requested_action as { identifier: string }).identifier).toBe("retry");
  });
}
