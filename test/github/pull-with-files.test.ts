/**
 * The merge's one read of a pull request — who it is and what it changes — through the real port
 * against the local GitHub's GraphQL (validated against GitHub's schema): the same answer as the
 * REST reads it replaces (`getPullRequest` + `listPullRequestFiles`), for a task's PR, a fork's PR
 * and a PR of more than 100 files (listed through REST past GraphQL's page) — and, in the same
 * call, its requests for changes (what `listReviews` lists of them).
 */
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OctokitPort } from "../../src/github/octokit-port.js";
import { createSim, type Sim } from "../../src/local-github/server.js";
import { TestClock } from "../helpers/clock.js";

let sim: Sim;
/** The local GitHub's clock: its mergeability job is done only once the test moves it. */
const clock = new TestClock();
let gh: Octokit;
let port: OctokitPort;
const owner = "acme";
const repo = "widgets";

async function branchWith(branch: string, files: Record<string, string>, via = gh, o = owner): Promise<void> {
  const main = (await via.rest.git.getRef({ owner: o, repo, ref: "heads/main" })).data.object.sha;
  const base = (await via.rest.git.getCommit({ owner: o, repo, commit_sha: main })).data.tree.sha;
  const tree = await via.rest.git.createTree({
    owner: o,
    repo,
    base_tree: base,
    tree: Object.entries(files).map(([path, content]) => ({ path, mode: "100644" as const, type: "blob" as const, content })),
  });
  const commit = await via.rest.git.createCommit({ owner: o, repo, message: branch, tree: tree.data.sha, parents: [main] });
  await via.rest.git.createRef({ owner: o, repo, ref: `refs/heads/${branch}`, sha: commit.data.sha });
}

beforeAll(async () => {
  sim = await createSim({ workflowExecutor: "noop", clock });
  await sim.control.createRepo({
    owner,
    name: repo,
    files: { "README.md": "# w\n" },
    collaborators: { writer: "write", reviewer: "write" },
  });
  gh = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken("writer") });
  port = new OctokitPort(gh as never, owner, repo);
});
afterAll(async () => {
  await sim?.close();
});

describe("a pull request and its files in one read", () => {
  it("a task's PR: the REST reads' answer, in one GraphQL call; merged, it names its merge commit", async () => {
    await branchWith("forge/r/a/1", { "src/a.ts": "a\n", ".github/workflows/x.yml": "on: push\n" });
    const pr = await gh.rest.pulls.create({ owner, repo, head: "forge/r/a/1", base: "main", title: "a" });
    const before = sim.violations.length;
    const one = await port.getPullRequestWithFiles(pr.data.number);
    expect(one).toEqual({
      ...(await port.getPullRequest(pr.data.number)),
      files: (await port.listPullRequestFiles(pr.data.number)).sort(),
      changeRequests: [],
    });
    expect(one.files.sort()).toEqual([".github/workflows/x.yml", "src/a.ts"]);
    expect(one).toMatchObject({ headRef: "forge/r/a/1", baseRef: "main", fromFork: false, merged: false, state: "open" });
    // While GitHub computes whether it merges, both reads say null (GraphQL's UNKNOWN); then true.
    expect(one.mergeable).toBeNull();
    await clock.advance(60_000);
    expect((await port.getPullRequestWithFiles(pr.data.number)).mergeable).toBe(true);
    expect((await port.getPullRequest(pr.data.number)).mergeable).toBe(true);

    const merged = await gh.rest.pulls.merge({ owner, repo, pull_number: pr.data.number });
    const after = await port.getPullRequestWithFiles(pr.data.number);
    expect(after).toMatchObject({ merged: true, state: "closed", mergeSha: merged.data.sha });
    expect(after.files.sort()).toEqual([".github/workflows/x.yml", "src/a.ts"]);
    expect(sim.violations.slice(before)).toEqual([]);
  });

  it("its requests for changes, as REST lists them: approvals and comments are not among them", async () => {
    await branchWith("forge/r/d/1", { "src/d.ts": "d\n" });
    const pr = await gh.rest.pulls.create({ owner, repo, head: "forge/r/d/1", base: "main", title: "d" });
    // GitHub refuses a request for changes on one's own PR: another writer reviews.
    const reviewer = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken("reviewer") });
    const review = (event: "APPROVE" | "REQUEST_CHANGES" | "COMMENT", body: string) =>
      reviewer.rest.pulls.createReview({ owner, repo, pull_number: pr.data.number, event, body });
    await review("REQUEST_CHANGES", "Export it too.");
    await review("COMMENT", "A thought.");
    await review("APPROVE", "Fine now.");
    await review("REQUEST_CHANGES", "One more thing.");
    const before = sim.violations.length;
    const one = await port.getPullRequestWithFiles(pr.data.number);
    const rest = (await port.listReviews(pr.data.number)).filter((r) => r.state === "CHANGES_REQUESTED");
    expect(one.changeRequests).toEqual(rest);
    expect(one.changeRequests?.map((r) => [r.login, r.body, r.commitId, r.bot])).toEqual([
      ["reviewer", "Export it too.", pr.data.head.sha, false],
      ["reviewer", "One more thing.", pr.data.head.sha, false],
    ]);
    expect(sim.violations.slice(before)).toEqual([]);
  });

  it("a fork's PR from a branch of the task's name is from a fork", async () => {
    await sim.control.fork(`${owner}/${repo}`, "mallory");
    const fork = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken("mallory") });
    await branchWith("forge/r/b/1", { "src/b.ts": "b\n" }, fork, "mallory");
    const pr = await fork.rest.pulls.create({ owner, repo, head: "mallory:forge/r/b/1", base: "main", title: "b" });
    const one = await port.getPullRequestWithFiles(pr.data.number);
    expect(one).toMatchObject({ headRef: "forge/r/b/1", fromFork: true, files: ["src/b.ts"] });
    expect((await port.getPullRequest(pr.data.number)).fromFork).toBe(true);
  });

  it("more than 100 files: every one is listed (through REST past GraphQL's page)", async () => {
    const files = Object.fromEntries(Array.from({ length: 130 }, (_, i) => [`src/many/f${String(i).padStart(3, "0")}.ts`, `${i}\n`]));
    await branchWith("forge/r/c/1", files);
    const pr = await gh.rest.pulls.create({ owner, repo, head: "forge/r/c/1", base: "main", title: "c" });
    const one = await port.getPullRequestWithFiles(pr.data.number);
    expect(one.files.sort()).toEqual(Object.keys(files).sort());
  });
});
