// The Octokit implementation of the job's GitHub port, against nock 14 (which intercepts Node's
// fetch, unlike nock 13; nock 15 needs Node 22). Every test ends with no pending mocks.
import nock from "nock";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createOctokitGitHub, GitHubApiError, NoCommitsError } from "../../action/src/github.js";

const API = "https://ghe.example/api/v3";
const gh = createOctokitGitHub({ token: "ghs_port_token", baseUrl: API, owner: "acme", repo: "demo", retries: 0 });

beforeAll(() => nock.disableNetConnect());
afterEach(() => {
  expect(nock.pendingMocks()).toEqual([]);
  nock.cleanAll();
});
afterAll(() => nock.enableNetConnect());

describe("the Octokit GitHub port", () => {
  it("reads a file at a ref, base64-decoded, with the job token", async () => {
    nock(API, { reqheaders: { authorization: "token ghs_port_token" } })
      .get("/repos/acme/demo/contents/journal.json")
      .query({ ref: "forge/r1/_state" })
      .reply(200, { type: "file", encoding: "base64", size: 5, sha: "s1", content: Buffer.from('{"a":1}').toString("base64") });
    expect(await gh.readFile("journal.json", "forge/r1/_state")).toBe('{"a":1}');
  });

  it("falls back to the blob API for files over 1 MB (the contents API sends no content)", async () => {
    nock(API)
      .get("/repos/acme/demo/contents/big.json")
      .query({ ref: "main" })
      .reply(200, { type: "file", encoding: "none", size: 2_000_000, sha: "b1", content: "" });
    nock(API)
      .get("/repos/acme/demo/git/blobs/b1")
      .reply(200, { sha: "b1", size: 3, encoding: "base64", content: Buffer.from("big").toString("base64") });
    expect(await gh.readFile("big.json", "main")).toBe("big");
  });

  it("answers undefined for a missing ref or file, and throws with the status otherwise", async () => {
    nock(API).get("/repos/acme/demo/contents/nope.md").query({ ref: "main" }).reply(404, { message: "Not Found" });
    expect(await gh.readFile("nope.md", "main")).toBeUndefined();
    nock(API)
      .get("/repos/acme/demo/contents/x.md")
      .query({ ref: "main" })
      .reply(403, { message: "Resource not accessible by integration" });
    await expect(gh.readFile("x.md", "main")).rejects.toMatchObject({
      name: "GitHubApiError",
      status: 403,
      message: "reading x.md at main failed: Resource not accessible by integration",
    });
  });

  it("opens a draft PR and recognises GitHub's 'No commits between' refusal", async () => {
    let body: unknown;
    nock(API)
      .post("/repos/acme/demo/pulls", (b) => ((body = b), true))
      .reply(201, { number: 7, node_id: "PR_kw7", html_url: "https://ghe.example/acme/demo/pull/7", draft: true });
    expect(
      await gh.createPull({ head: "forge/r1/t1/1", base: "forge/r1/_integration", title: "forge(t1): T", body: "b", draft: true }),
    ).toEqual({ number: 7, nodeId: "PR_kw7", url: "https://ghe.example/acme/demo/pull/7", draft: true });
    expect(body).toMatchInlineSnapshot(`
      {
        "base": "forge/r1/_integration",
        "body": "b",
        "draft": true,
        "head": "forge/r1/t1/1",
        "maintainer_can_modify": true,
        "title": "forge(t1): T",
      }
    `);
    nock(API)
      .post("/repos/acme/demo/pulls")
      .reply(422, {
        message: "Validation Failed",
        errors: [{ resource: "PullRequest", code: "custom", message: "No commits between forge/r1/_integration and forge/r1/t1/1" }],
      });
    await expect(
      gh.createPull({ head: "forge/r1/t1/1", base: "forge/r1/_integration", title: "t", body: "b", draft: true }),
    ).rejects.toBeInstanceOf(NoCommitsError);
  });

  it("finds the open PR of a branch with the owner-qualified head filter", async () => {
    nock(API)
      .get("/repos/acme/demo/pulls")
      .query({ head: "acme:forge/r1/t1/1", base: "forge/r1/_integration", state: "open", per_page: "10" })
      .reply(200, [
        { number: 3, node_id: "PR_3", html_url: "u", draft: true, head: { ref: "forge/r1/t1/1" }, base: { ref: "forge/r1/_integration" } },
      ]);
    expect(await gh.findOpenPull("forge/r1/t1/1", "forge/r1/_integration")).toEqual({ number: 3, nodeId: "PR_3", url: "u", draft: true });
  });

  it("reads a PR's comments since a time, each with its author as GitHub names it (steering)", async () => {
    nock(API)
      .get("/repos/acme/demo/issues/7/comments")
      .query({ since: "2026-11-26T10:00:00.000Z", per_page: "100" })
      .reply(200, [{ id: 1, user: { login: "forge[bot]" }, body: "<!-- forge:steer {} -->" }]);
    expect(await gh.issueComments!(7, "2026-11-26T10:00:00.000Z")).toEqual([
      { id: 1, author: "forge[bot]", body: "<!-- forge:steer {} -->" },
    ]);
  });

  it("labels a PR through its issue", async () => {
    nock(API)
      .post("/repos/acme/demo/issues/7/labels", { labels: ["forge:task"] })
      .reply(200, [{ name: "forge:task" }]);
    await gh.addLabels(7, ["forge:task"]);
  });

  it("writes the body with REST and marks ready with GraphQL (REST cannot undraft)", async () => {
    nock(API).patch("/repos/acme/demo/pulls/7", { body: "walkthrough" }).reply(200, { number: 7 });
    await gh.updatePull(7, { body: "walkthrough" });
    let query: { query: string; variables: unknown } | undefined;
    // GHES-style servers: Octokit sends GraphQL to /api/graphql, not /api/v3/graphql.
    nock("https://ghe.example")
      .post("/api/graphql", (b) => ((query = b as typeof query), true))
      .reply(200, { data: { markPullRequestReadyForReview: { pullRequest: { isDraft: false } } } });
    await gh.markReadyForReview({ number: 7, nodeId: "PR_kw7", url: "u", draft: true });
    expect(query?.query).toContain("markPullRequestReadyForReview(input: { pullRequestId: $id })");
    expect(query?.variables).toEqual({ id: "PR_kw7" });
    // A PR that is not a draft needs no call.
    await gh.markReadyForReview({ number: 7, nodeId: "PR_kw7", url: "u", draft: false });
  });

  it("retries a 5xx once it may heal, but never a 501 (not implemented)", async () => {
    const retrying = createOctokitGitHub({ token: "t", baseUrl: API, owner: "acme", repo: "demo", retries: 2 });
    nock("https://ghe.example").post("/api/graphql").reply(501, { message: "GraphQL is not implemented" });
    await expect(retrying.markReadyForReview({ number: 1, nodeId: "PR_1", url: "u", draft: true })).rejects.toMatchObject({ status: 501 });
    nock(API).patch("/repos/acme/demo/pulls/2").reply(502, { message: "Bad Gateway" });
    nock(API).patch("/repos/acme/demo/pulls/2").reply(200, { number: 2 });
    await retrying.updatePull(2, { body: "b" });
  });

  it("names the failing call when updating fails", async () => {
    nock(API)
      .patch("/repos/acme/demo/pulls/9")
      .reply(422, { message: "Validation Failed", errors: [{ resource: "PullRequest", field: "body", code: "too_long" }] });
    const err = await gh.updatePull(9, { body: "x" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GitHubApiError);
    expect((err as Error).message).toBe("updating pull request #9 failed: Validation Failed: body too_long");
  });
});
