// Conformance of sub-issues (docs.github.com/rest/issues/sub-issues) and issue dependencies
// (docs.github.com/rest/issues/issue-dependencies) and of their `sub_issues` / `issue_dependencies`
// webhooks, in the conformance world (conformance.test.ts): every answer and payload validated
// against GitHub's descriptions by the simulator, the documented refusals checked here.
import { expect, it } from "vitest";
import { owner, repo, status, w } from "./world.js";

async function newIssue(title: string): Promise<{ id: number; number: number }> {
  const { data } = await w.gh.rest.issues.create({ owner, repo, title });
  return { id: data.id, number: data.number };
}

/** describe("sub-issues") */
export function subIssues(): void {
  it("adds sub-issues by id, lists them in order, reprioritizes, answers the parent, removes; sends sub_issues events", async () => {
    const parent = await newIssue("Epic");
    const a = await newIssue("Part A");
    const b = await newIssue("Part B");
    const c = await newIssue("Part C");
    const base = { owner, repo, issue_number: parent.number };
    // The body names the sub-issue by its id: its number is not an id of any issue here.
    expect(
      await status(w.gh.request("POST /repos/{owner}/{repo}/issues/{issue_number}/sub_issues", { ...base, sub_issue_id: a.number })),
    ).toBe(404);
    for (const s of [a, b, c]) {
      const { status: st, data } = await w.gh.request("POST /repos/{owner}/{repo}/issues/{issue_number}/sub_issues", {
        ...base,
        sub_issue_id: s.id,
      });
      expect(st).toBe(201);
      expect(data.number).toBe(parent.number);
    }
    let { data: list } = await w.gh.request("GET /repos/{owner}/{repo}/issues/{issue_number}/sub_issues", base);
    expect(list.map((i) => i.number)).toEqual([a.number, b.number, c.number]);
    const { data: p } = await w.gh.rest.issues.get(base);
    expect(p.sub_issues_summary).toEqual({ total: 3, completed: 0, percent_completed: 0 });
    // C before A.
    await w.gh.request("PATCH /repos/{owner}/{repo}/issues/{issue_number}/sub_issues/priority", {
      ...base,
      sub_issue_id: c.id,
      before_id: a.id,
    });
    ({ data: list } = await w.gh.request("GET /repos/{owner}/{repo}/issues/{issue_number}/sub_issues", base));
    expect(list.map((i) => i.number)).toEqual([c.number, a.number, b.number]);
    // Neither or both anchors: 422.
    expect(
      await status(w.gh.request("PATCH /repos/{owner}/{repo}/issues/{issue_number}/sub_issues/priority", { ...base, sub_issue_id: c.id })),
    ).toBe(422);
    const { data: up } = await w.gh.request("GET /repos/{owner}/{repo}/issues/{issue_number}/parent", {
      owner,
      repo,
      issue_number: a.number,
    });
    expect(up.number).toBe(parent.number);
    const { data: child } = await w.gh.rest.issues.get({ owner, repo, issue_number: a.number });
    expect(child.parent_issue_url).toMatch(new RegExp(`/issues/${parent.number}$`));
    // One parent: another needs replace_parent; an ancestor cannot become a child.
    const other = await newIssue("Other epic");
    const add = (n: number, id: number, extra: Record<string, unknown> = {}) =>
      w.gh.request("POST /repos/{owner}/{repo}/issues/{issue_number}/sub_issues", {
        owner,
        repo,
        issue_number: n,
        sub_issue_id: id,
        ...extra,
      });
    expect(await status(add(other.number, a.id))).toBe(422);
    expect(await status(add(a.number, parent.id))).toBe(422);
    expect(await status(add(a.number, a.id))).toBe(422);
    expect((await add(other.number, a.id, { replace_parent: true })).status).toBe(201);
    expect(
      await status(w.gh.request("GET /repos/{owner}/{repo}/issues/{issue_number}/parent", { owner, repo, issue_number: parent.number })),
    ).toBe(404);
    // Closing a sub-issue as completed counts in the summary.
    await w.gh.rest.issues.update({ owner, repo, issue_number: b.number, state: "closed" });
    expect((await w.gh.rest.issues.get(base)).data.sub_issues_summary).toEqual({ total: 2, completed: 1, percent_completed: 50 });
    const { data: removed } = await w.gh.request("DELETE /repos/{owner}/{repo}/issues/{issue_number}/sub_issue", {
      ...base,
      sub_issue_id: c.id,
    });
    expect(removed.number).toBe(parent.number);
    expect(
      await status(w.gh.request("DELETE /repos/{owner}/{repo}/issues/{issue_number}/sub_issue", { ...base, sub_issue_id: c.id })),
    ).toBe(404);
    // A reader may not add one (triage at least).
    expect(
      await status(w.reader.request("POST /repos/{owner}/{repo}/issues/{issue_number}/sub_issues", { ...base, sub_issue_id: c.id })),
    ).toBe(403);
    await w.sim.idle();
    const added = await w.receiver.waitFor(
      (h) => h.event === "sub_issues" && h.action === "sub_issue_added" && (h.payload.sub_issue_id as number) === a.id,
    );
    expect((added.payload.parent_issue as { number: number }).number).toBe(parent.number);
    await w.receiver.waitFor(
      (h) => h.event === "sub_issues" && h.action === "parent_issue_added" && (h.payload.parent_issue_id as number) === other.id,
    );
    await w.receiver.waitFor(
      (h) => h.event === "sub_issues" && h.action === "sub_issue_removed" && (h.payload.sub_issue_id as number) === c.id,
    );
    await w.receiver.waitFor(
      (h) => h.event === "sub_issues" && h.action === "parent_issue_removed" && (h.payload.sub_issue_id as number) === a.id,
    );
    expect(w.receiver.received.filter((h) => h.event === "sub_issues" && h.schemaError)).toEqual([]);
  });

  it("refuses a 101st sub-issue and a ninth level (422)", async () => {
    const parent = await newIssue("Wide");
    const add = (n: number, id: number) =>
      w.gh.request("POST /repos/{owner}/{repo}/issues/{issue_number}/sub_issues", { owner, repo, issue_number: n, sub_issue_id: id });
    // 99 children seeded beside the API (100 requests take seconds), the 100th through it.
    const seeded = w.sim.core.state.issue(w.sim.core.state.repoByName(owner, repo)!.id, parent.number)!;
    for (let i = 0; i < 99; i++) {
      const child = await newIssue(`w${i}`);
      (seeded.subIssueIds ??= []).push(child.id);
      w.sim.core.state.issueById(child.id)!.parentId = seeded.id;
    }
    expect((await add(parent.number, (await newIssue("w99")).id)).status).toBe(201);
    expect(await status(add(parent.number, (await newIssue("w100")).id))).toBe(422);
    // A chain of eight levels takes no ninth.
    const chain = [await newIssue("L1")];
    for (let i = 2; i <= 8; i++) {
      const next = await newIssue(`L${i}`);
      expect((await add(chain[chain.length - 1]!.number, next.id)).status).toBe(201);
      chain.push(next);
    }
    expect(await status(add(chain[7]!.number, (await newIssue("L9")).id))).toBe(422);
  });
}

/** describe("issue dependencies") */
export function issueDependencies(): void {
  it("adds and lists blocked-by and blocking by id, removes by issue_id; sends issue_dependencies events", async () => {
    const build = await newIssue("Build");
    const test = await newIssue("Test");
    const base = { owner, repo, issue_number: test.number };
    const { status: st, data } = await w.gh.request("POST /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by", {
      ...base,
      issue_id: build.id,
    });
    expect(st).toBe(201);
    expect(data.number).toBe(test.number);
    expect(data.issue_dependencies_summary).toEqual({ blocked_by: 1, blocking: 0, total_blocked_by: 1, total_blocking: 0 });
    const { data: by } = await w.gh.request("GET /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by", base);
    expect(by.map((i) => i.number)).toEqual([build.number]);
    const { data: blocking } = await w.gh.request("GET /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocking", {
      owner,
      repo,
      issue_number: build.number,
    });
    expect(blocking.map((i) => i.number)).toEqual([test.number]);
    // Twice, itself, or the other way round: 422.
    const add = (n: number, id: number) =>
      w.gh.request("POST /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by", {
        owner,
        repo,
        issue_number: n,
        issue_id: id,
      });
    expect(await status(add(test.number, build.id))).toBe(422);
    expect(await status(add(test.number, test.id))).toBe(422);
    expect(await status(add(build.number, test.id))).toBe(422);
    // A closed blocker no longer blocks.
    await w.gh.rest.issues.update({ owner, repo, issue_number: build.number, state: "closed" });
    expect((await w.gh.rest.issues.get(base)).data.issue_dependencies_summary).toEqual({
      blocked_by: 0,
      blocking: 0,
      total_blocked_by: 1,
      total_blocking: 0,
    });
    const del = () =>
      w.gh.request("DELETE /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by/{issue_id}", {
        ...base,
        issue_id: build.id,
      });
    expect((await del()).status).toBe(200);
    expect(await status(del())).toBe(404);
    await w.sim.idle();
    const added = await w.receiver.waitFor((h) => h.event === "issue_dependencies" && h.action === "blocked_by_added");
    expect(added.payload.blocked_issue_id).toBe(test.id);
    expect(added.payload.blocking_issue_id).toBe(build.id);
    await w.receiver.waitFor((h) => h.event === "issue_dependencies" && h.action === "blocking_added");
    await w.receiver.waitFor((h) => h.event === "issue_dependencies" && h.action === "blocked_by_removed");
    await w.receiver.waitFor((h) => h.event === "issue_dependencies" && h.action === "blocking_removed");
    expect(w.receiver.received.filter((h) => h.event === "issue_dependencies" && h.schemaError)).toEqual([]);
  });
}

async function pullOn(branch: string, draft = false): Promise<{ number: number; head: string }> {
  const { data: main } = await w.gh.rest.git.getRef({ owner, repo, ref: "heads/main" });
  await w.gh.rest.git.createRef({ owner, repo, ref: `refs/heads/${branch}`, sha: main.object.sha });
  await w.gh.rest.repos.createOrUpdateFileContents({
    owner,
    repo,
    path: `${branch}.txt`,
    branch,
    message: branch,
    content: Buffer.from("x\n").toString("base64"),
  });
  const { data: pr } = await w.gh.rest.pulls.create({ owner, repo, head: branch, base: "main", title: branch, draft });
  return { number: pr.number, head: pr.head.sha };
}

/** describe("asynchronous merge") */
export function asyncMerge(): void {
  it("PUT merge-async answers 202 pending with a uuid, 409 the same uuid while pending, then GET by uuid reads merged", async () => {
    const pr = await pullOn("async/one");
    const put = () =>
      w.gh.request("PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge-async", {
        owner,
        repo,
        pull_number: pr.number,
        merge_method: "squash",
      });
    const first = await put();
    expect(first.status).toBe(202);
    expect(first.data).toMatchObject({
      status: "pending",
      details: { merge_method: "squash", merge_action: "default", expected_head_sha: pr.head },
    });
    const uuid = (first.data.details as { uuid: string }).uuid;
    const again = await put().catch((e: { status: number; response: { data: unknown } }) => e);
    // Either still pending (409, the same uuid) or already merged (200): GitHub merges in the background.
    if ((again as { status: number }).status === 409)
      expect((again as { response: { data: { details: { uuid: string } } } }).response.data.details.uuid).toBe(uuid);
    await w.sim.idle();
    const { data: result } = await w.gh.request("GET /repos/{owner}/{repo}/pulls/{pull_number}/merge-async/{uuid}", {
      owner,
      repo,
      pull_number: pr.number,
      uuid,
    });
    expect(result.status).toBe("merged");
    const { data: pull } = await w.gh.rest.pulls.get({ owner, repo, pull_number: pr.number });
    expect(pull.merged).toBe(true);
    expect((result.details as { sha: string }).sha).toBe(pull.merge_commit_sha);
    // Merged already: 200 with the merge commit.
    const done = await put();
    expect(done.status).toBe(200);
    expect(done.data).toEqual({ status: "merged", details: { message: "Pull Request successfully merged", sha: pull.merge_commit_sha } });
    expect(
      await status(
        w.gh.request("GET /repos/{owner}/{repo}/pulls/{pull_number}/merge-async/{uuid}", {
          owner,
          repo,
          pull_number: pr.number,
          uuid: "no-such-uuid",
        }),
      ),
    ).toBe(404);
  });

  it("a draft is refused at once (400 failed); a head moved before the merge runs makes the result failed", async () => {
    const draft = await pullOn("async/draft", true);
    const refused = await w.gh
      .request("PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge-async", { owner, repo, pull_number: draft.number })
      .catch((e: { status: number; response: { data: unknown } }) => e);
    expect((refused as { status: number }).status).toBe(400);
    expect((refused as { response: { data: unknown } }).response.data).toEqual({
      status: "failed",
      details: { message: "Pull Request is still a draft" },
    });
    const pr = await pullOn("async/stale");
    const { data } = await w.gh.request("PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge-async", {
      owner,
      repo,
      pull_number: pr.number,
      sha: "0".repeat(40),
    });
    await w.sim.idle();
    const uuid = (data.details as { uuid: string }).uuid;
    const { data: result } = await w.gh.request("GET /repos/{owner}/{repo}/pulls/{pull_number}/merge-async/{uuid}", {
      owner,
      repo,
      pull_number: pr.number,
      uuid,
    });
    expect(result).toEqual({ status: "failed", details: { message: "Head branch was modified. Review and try the merge again." } });
    expect((await w.gh.rest.pulls.get({ owner, repo, pull_number: pr.number })).data.merged).toBe(false);
  });
}
