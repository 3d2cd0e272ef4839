/**
 * `OctokitPort` on the answers GitHub documents for the calls Forge depends on: the contents API's
 * compare-and-swap, creating a ref that exists, server-side merges, merging a pull request that is
 * not mergeable or whose head moved, and cancelling a run that already finished.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { OctokitPort, type Octokit } from "../../../src/github/octokit-port.js";
import { ConflictError, GitHubError } from "../../../src/github/port.js";
import { contentFile, GitHubMock, INSTALLATION_ID, OWNER, R, REPO, startApp } from "./fixtures.js";

let gh: GitHubMock;
let port: OctokitPort;
beforeEach(async () => {
  gh = new GitHubMock();
  const { probot } = await startApp();
  port = new OctokitPort((await probot.auth(INSTALLATION_ID)) as unknown as Octokit, OWNER, REPO);
  gh.token();
});
// Every test ends with every mock used, every request valid, and nothing unexpected asked.
afterEach(() => {
  try {
    gh.verify();
  } finally {
    gh.close();
  }
});

const SHA = "5555555555555555555555555555555555555555";
const error = (message: string, status: number, doc = "https://docs.github.com/rest") => ({
  message,
  documentation_url: doc,
  status: String(status),
});

describe("OctokitPort", () => {
  it("issueAsEdited: the issue's title, body and lastEditedAt in one GraphQL query", async () => {
    const hit = gh.issueAsEdited(9, { title: "CSV export", body: "As CSV.", lastEditedAt: "2026-11-26T10:00:00Z" });
    expect(await port.issueAsEdited(9)).toEqual({ title: "CSV export", body: "As CSV.", lastEditedAt: "2026-11-26T10:00:00Z" });
    expect(hit.body).toMatchObject({ variables: { owner: OWNER, name: REPO, number: 9 } });
  });

  it("writeFile: a 409 on the contents PUT (the blob moved) is a ConflictError", async () => {
    const put = gh.reply(`PUT ${R}/contents/journal.json`, 409, error("journal.json does not match b10b", 409));
    const write = port.writeFile("forge/r/_state", "journal.json", "{}\n", "forge: journal", "b10b000000000000000000000000000000000001");
    await expect(write).rejects.toBeInstanceOf(ConflictError);
    await expect(write).rejects.toMatchObject({ status: 409, operation: "repos.createOrUpdateFileContents" });
    expect(put.body).toMatchObject({
      branch: "forge/r/_state",
      sha: "b10b000000000000000000000000000000000001",
      content: Buffer.from("{}\n").toString("base64"),
    });
  });

  it("writeFile: a 422 when creating a file someone else created first is a ConflictError too; with a sha it is not", async () => {
    gh.reply(`PUT ${R}/contents/journal.json`, 422, error('Invalid request.\n\n"sha" wasn\'t supplied.', 422));
    await expect(port.writeFile("forge/r/_state", "journal.json", "{}\n", "forge: start")).rejects.toBeInstanceOf(ConflictError);
    gh.reply(`PUT ${R}/contents/journal.json`, 422, error("Invalid request.", 422));
    const other = port.writeFile("forge/r/_state", "journal.json", "{}\n", "forge: journal", "b10b000000000000000000000000000000000001");
    await expect(other).rejects.toBeInstanceOf(GitHubError);
    await expect(other).rejects.not.toBeInstanceOf(ConflictError);
  });

  it("createBranch: 201 is true; 422 'Reference already exists' is false; another 422 fails", async () => {
    gh.reply(`POST ${R}/git/refs`, 201, {
      ref: "refs/heads/x",
      node_id: "REF_1",
      url: "https://api.github.com/x",
      object: { type: "commit", sha: SHA, url: "https://api.github.com/x" },
    });
    await expect(port.createBranch("x", SHA)).resolves.toBe(true);
    gh.reply(`POST ${R}/git/refs`, 422, error("Reference already exists", 422, "https://docs.github.com/rest/git/refs#create-a-reference"));
    await expect(port.createBranch("x", SHA)).resolves.toBe(false);
    // A name GitHub refuses is no branch that exists: the call fails with GitHub's words.
    gh.reply(
      `POST ${R}/git/refs`,
      422,
      error("refs/heads/forge/r/fix..up/1 is not a valid ref name.", 422, "https://docs.github.com/rest/git/refs#create-a-reference"),
    );
    await expect(port.createBranch("forge/r/fix..up/1", SHA)).rejects.toThrow(
      "git.createRef: 422 refs/heads/forge/r/fix..up/1 is not a valid ref name.",
    );
  });

  it("mergeBranch (POST /merges): 201 merged, 204 nothing to merge, 409 conflict", async () => {
    const merged = gh.reply(`POST ${R}/merges`, 201, { sha: SHA, commit: { message: "forge: merge" } });
    await expect(port.mergeBranch("forge/r/r1/1", "forge/r/a/1", "forge: merge a")).resolves.toEqual({ kind: "merged", sha: SHA });
    expect(merged.body).toEqual({ base: "forge/r/r1/1", head: "forge/r/a/1", commit_message: "forge: merge a" });
    gh.reply(`POST ${R}/merges`, 204);
    await expect(port.mergeBranch("forge/r/r1/1", "forge/r/a/1", "again")).resolves.toEqual({ kind: "noop" });
    gh.reply(`POST ${R}/merges`, 409, error("Merge conflict", 409));
    await expect(port.mergeBranch("forge/r/r1/1", "forge/r/b/1", "conflict")).resolves.toEqual({ kind: "conflict" });
  });

  it("mergePullRequest: 405 is not mergeable (with GitHub's reason) or a moved base, 409 means the head moved", async () => {
    gh.reply(`PUT ${R}/pulls/7/merge`, 405, error('Required status check "test" is expected.', 405));
    await expect(port.mergePullRequest(7, { sha: SHA })).resolves.toEqual({
      kind: "not_mergeable",
      message: 'pulls.merge: 405 Required status check "test" is expected.',
    });
    // A concurrent merge moved the base: GitHub answers 405 with this message; it is tried again.
    gh.reply(`PUT ${R}/pulls/7/merge`, 405, error("Base branch was modified. Review and try the merge again.", 405));
    await expect(port.mergePullRequest(7, { sha: SHA })).resolves.toEqual({
      kind: "base_moved",
      message: "pulls.merge: 405 Base branch was modified. Review and try the merge again.",
    });
    const moved = gh.reply(`PUT ${R}/pulls/7/merge`, 409, error("Head branch was modified. Review and try the merge again.", 409));
    await expect(port.mergePullRequest(7, { sha: SHA, title: "forge(a): A" })).resolves.toEqual({ kind: "head_moved" });
    expect(moved.body).toEqual({ sha: SHA, merge_method: "merge", commit_title: "forge(a): A" });
  });

  it("cancelWorkflowRun: 202 cancels; 409 (the run already finished) is not an error", async () => {
    gh.reply(`POST ${R}/actions/runs/5001/cancel`, 202, {});
    await expect(port.cancelWorkflowRun(5001)).resolves.toBeUndefined();
    gh.reply(`POST ${R}/actions/runs/5001/cancel`, 409, error("Cannot cancel a workflow run that is completed.", 409));
    await expect(port.cancelWorkflowRun(5001)).resolves.toBeUndefined();
    gh.reply(`POST ${R}/actions/runs/5002/cancel`, 404, error("Not Found", 404));
    await expect(port.cancelWorkflowRun(5002)).rejects.toMatchObject({ name: "GitHubError", status: 404 });
  });

  it("getWorkflowRun: what tells Forge's jobs from others (workflow file, event, head repository); 404 is null", async () => {
    gh.reply(`GET ${R}/actions/runs/5001`, 200, {
      id: 5001,
      path: ".github/workflows/ci.yml",
      event: "push",
      head_branch: "forge/r/a/1",
      status: "completed",
      conclusion: "failure",
      created_at: "2026-11-22T09:00:00Z",
      head_repository: { id: 77 },
    });
    await expect(port.getWorkflowRun(5001)).resolves.toEqual({
      id: 5001,
      headBranch: "forge/r/a/1",
      status: "completed",
      conclusion: "failure",
      createdAt: "2026-11-22T09:00:00Z",
      event: "push",
      path: ".github/workflows/ci.yml",
      headRepositoryId: 77,
    });
    gh.reply(`GET ${R}/actions/runs/5002`, 404, error("Not Found", 404));
    await expect(port.getWorkflowRun(5002)).resolves.toBeNull();
  });

  it("getPullRequest: a PR whose head repository is not the base's is from a fork", async () => {
    gh.reply(`GET ${R}/pulls/8`, 200, {
      number: 8,
      state: "open",
      head: { ref: "forge/r/a/1", sha: SHA, repo: { id: 99 } },
      base: { ref: "main", sha: SHA, repo: { id: 77 } },
    });
    await expect(port.getPullRequest(8)).resolves.toMatchObject({ number: 8, headRef: "forge/r/a/1", fromFork: true });
    gh.reply(`GET ${R}/pulls/9`, 200, {
      number: 9,
      state: "open",
      head: { ref: "forge/r/a/1", sha: SHA, repo: { id: 77 } },
      base: { ref: "main", sha: SHA, repo: { id: 77 } },
    });
    await expect(port.getPullRequest(9)).resolves.toMatchObject({ number: 9, fromFork: false });
  });

  it("readFile: a file over 1 MB comes without its content (encoding none), so it is read from its blob", async () => {
    // Since May 2022 the contents API answers files of 1–100 MB with `content: ""` and `encoding: "none"`
    // unless asked for the raw media type; a long run's journal grows past 1 MB.
    const journal = JSON.stringify({ version: 1, big: "x".repeat(64) }) + "\n";
    const blob = "b10b000000000000000000000000000000000042";
    gh.reply(`GET ${R}/contents/journal.json?ref=forge/r/_state`, 200, {
      ...contentFile("journal.json", "", blob),
      encoding: "none",
      content: "",
      size: 1_500_000,
    });
    gh.reply(`GET ${R}/git/blobs/${blob}`, 200, {
      sha: blob,
      node_id: "B_1",
      url: `https://api.github.com${R}/git/blobs/${blob}`,
      size: 1_500_000,
      encoding: "base64",
      content: Buffer.from(journal).toString("base64"),
    });
    await expect(port.readFile("journal.json", "forge/r/_state")).resolves.toEqual({ content: journal, blobSha: blob });
  });
});
