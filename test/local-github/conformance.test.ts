// Conformance of every implemented operation: each is called through plain @octokit/rest, its
// request and response are validated against GitHub's description by the simulator (strict mode
// turns a violating response into a 500, failing the call), and the documented error statuses
// are checked. The last test proves every implemented operation was exercised with a success.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Octokit } from "@octokit/rest";
import sodium from "libsodium-wrappers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSim, type Sim } from "../../src/local-github/server.js";
import { appJwt, appKeys, startReceiver, type Receiver } from "./support/helpers.js";

const owner = "acme";
const repo = "gadgets";
const WORKFLOW = `name: Forge agent
run-name: forge \${{ inputs.task_id }}/\${{ github.event.inputs.attempt }}
on:
  workflow_dispatch:
    inputs:
      task_id:
        description: task
        required: true
      attempt:
        required: false
        default: "1"
      mode:
        type: choice
        options: [fast, slow]
        default: fast
permissions:
  contents: write
  pull-requests: write
jobs:
  agent:
    runs-on: ubuntu-latest
    steps:
      - run: echo hi
`;

let sim: Sim;
let receiver: Receiver;
let gh: Octokit;
let asApp: Octokit;
let person: Octokit;
let reader: Octokit;
let appId: number;
let installationId: number;

/** Status of a failing Octokit call. */
async function status(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return 200;
  } catch (e) {
    return (e as { status: number }).status;
  }
}

beforeAll(async () => {
  sim = await createSim({ workflowExecutor: "noop" });
  receiver = await startReceiver("hook-secret");
  await sim.control.createRepo({
    owner,
    name: repo,
    files: { "README.md": "# gadgets\n", "src/a.txt": "a\n", ".github/workflows/forge-agent.yml": WORKFLOW },
    collaborators: { alice: "write", rita: "read" },
  });
  const keys = appKeys();
  appId = sim.control.registerApp({
    slug: "forge-conf",
    publicKeyPem: keys.publicKeyPem,
    webhookUrl: receiver.url,
    webhookSecret: "hook-secret",
    permissions: { contents: "write", pull_requests: "write", issues: "write", checks: "write", actions: "write", statuses: "write" },
    events: [
      "push",
      "create",
      "delete",
      "pull_request",
      "pull_request_review",
      "issues",
      "issue_comment",
      "check_run",
      "check_suite",
      "workflow_run",
      "workflow_job",
      "workflow_dispatch",
    ],
  }).id;
  installationId = sim.control.install(appId, owner, [`${owner}/${repo}`]).id;
  asApp = new Octokit({ baseUrl: sim.apiUrl, auth: appJwt(appId, keys.privateKeyPem) });
  const { data } = await asApp.rest.apps.createInstallationAccessToken({ installation_id: installationId });
  gh = new Octokit({ baseUrl: sim.apiUrl, auth: data.token });
  person = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken("alice") });
  reader = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken("rita") });
});

afterAll(async () => {
  await sim?.close();
  await receiver?.close();
});

describe("apps", () => {
  it("lists installations and an installation's repositories page by page (Link headers), as a restarted App reads them", async () => {
    const k = appKeys();
    const other = sim.control.registerApp({
      slug: "forge-pages",
      publicKeyPem: k.publicKeyPem,
      permissions: { contents: "read", metadata: "read" },
      events: [],
    });
    for (const name of ["pages-1", "pages-2", "pages-3"])
      await sim.control.createRepo({ owner: "pager", name, files: { "README.md": "# p\n" } });
    const inst = sim.control.install(other.id, "pager", "all");
    const app = new Octokit({ baseUrl: sim.apiUrl, auth: appJwt(other.id, k.privateKeyPem) });
    const first = await app.rest.apps.listInstallations({ per_page: 1 });
    expect(first.data.map((i) => i.id)).toEqual([inst.id]);
    const token = (await app.rest.apps.createInstallationAccessToken({ installation_id: inst.id })).data.token;
    const asInst = new Octokit({ baseUrl: sim.apiUrl, auth: token });
    const page1 = await asInst.rest.apps.listReposAccessibleToInstallation({ per_page: 2 });
    expect(page1.data.total_count).toBe(3);
    expect(page1.data.repositories).toHaveLength(2);
    expect(page1.headers.link).toMatch(/rel="next"/);
    const all = await asInst.paginate(asInst.rest.apps.listReposAccessibleToInstallation, { per_page: 2 });
    expect(all.map((r) => r.full_name).sort()).toEqual(["pager/pages-1", "pager/pages-2", "pager/pages-3"]);
    expect(sim.violations).toEqual([]);
  });

  it("authenticated app, installations, repository installation, token", async () => {
    expect((await asApp.rest.apps.getAuthenticated()).data?.slug).toBe("forge-conf");
    expect((await asApp.rest.apps.listInstallations()).data.map((i) => i.id)).toEqual([installationId]);
    expect((await asApp.rest.apps.getInstallation({ installation_id: installationId })).data.app_id).toBe(appId);
    expect((await asApp.rest.apps.getRepoInstallation({ owner, repo })).data.id).toBe(installationId);
    const scoped = await asApp.rest.apps.createInstallationAccessToken({
      installation_id: installationId,
      repositories: [repo],
      permissions: { contents: "read" },
    });
    expect(scoped.status).toBe(201);
    expect(scoped.data.permissions).toEqual({ contents: "read" });
    // More than the installation has → 422.
    expect(
      await status(
        asApp.rest.apps.createInstallationAccessToken({ installation_id: installationId, permissions: { administration: "write" } }),
      ),
    ).toBe(422);
    // A read-only token cannot write: 403 "Resource not accessible by integration".
    const ro = new Octokit({ baseUrl: sim.apiUrl, auth: scoped.data.token });
    const err = await ro.rest.git
      .createBlob({ owner, repo, content: "x" })
      .catch((e: { status: number; response: { data: { message: string; documentation_url: string } } }) => e);
    expect((err as { status: number }).status).toBe(403);
    expect((err as { response: { data: { message: string } } }).response.data.message).toBe("Resource not accessible by integration");
    expect((err as { response: { data: { documentation_url: string } } }).response.data.documentation_url).toMatch(
      /^https:\/\/docs\.github\.com\/rest\/git\/blobs/,
    );
    expect((await gh.rest.rateLimit.get()).data.rate.limit).toBe(5000);
    const { data: repos } = await gh.rest.apps.listReposAccessibleToInstallation();
    expect(repos.repositories.map((r) => r.full_name)).toEqual([`${owner}/${repo}`]);
    expect(await status(asApp.rest.apps.listReposAccessibleToInstallation())).toBe(403);
  });

  it("401 for bad credentials, JWT rules, and JWT-only endpoints", async () => {
    const bad = new Octokit({ baseUrl: sim.apiUrl, auth: "ghs_nope" });
    expect(await status(bad.rest.repos.get({ owner, repo }))).toBe(401);
    const keys = appKeys();
    const nowSec = Math.floor(Date.now() / 1000);
    const tooLong = new Octokit({ baseUrl: sim.apiUrl, auth: appJwt(appId, keys.privateKeyPem, { iat: nowSec - 30, exp: nowSec + 900 }) });
    expect(await status(tooLong.rest.apps.getAuthenticated())).toBe(401);
    const expired = new Octokit({ baseUrl: sim.apiUrl, auth: appJwt(appId, keys.privateKeyPem, { iat: nowSec - 700, exp: nowSec - 100 }) });
    expect(await status(expired.rest.apps.getAuthenticated())).toBe(401);
    const future = new Octokit({ baseUrl: sim.apiUrl, auth: appJwt(appId, keys.privateKeyPem, { iat: nowSec + 300, exp: nowSec + 600 }) });
    expect(await status(future.rest.apps.getAuthenticated())).toBe(401);
    const unknownApp = new Octokit({ baseUrl: sim.apiUrl, auth: appJwt(999999, keys.privateKeyPem) });
    expect(await status(unknownApp.rest.apps.getAuthenticated())).toBe(401);
    // An installation token on a JWT-only endpoint, and a JWT on a repository endpoint.
    expect(await status(gh.rest.apps.getAuthenticated())).toBe(401);
    expect(await status(asApp.rest.repos.get({ owner, repo }))).toBe(403);
  });
});

describe("repositories, contents, git database", () => {
  it("repository, branches, commits, contents", async () => {
    const { data: r } = await gh.rest.repos.get({ owner, repo });
    expect(r.default_branch).toBe("main");
    expect(r.clone_url).toBe(`${sim.url}/${owner}/${repo}.git`);
    expect((await gh.rest.repos.listBranches({ owner, repo })).data.map((b) => b.name)).toEqual(["main"]);
    const { data: branch } = await gh.rest.repos.getBranch({ owner, repo, branch: "main" });
    const { data: commit } = await gh.rest.repos.getCommit({ owner, repo, ref: branch.commit.sha });
    expect(commit.sha).toBe(branch.commit.sha);
    const { data: dir } = await gh.rest.repos.getContent({ owner, repo, path: "src" });
    expect(Array.isArray(dir) && dir.map((d) => d.name)).toEqual(["a.txt"]);
    expect(await status(gh.rest.repos.getContent({ owner, repo, path: "missing.txt" }))).toBe(404);

    const created = await gh.rest.repos.createOrUpdateFileContents({
      owner,
      repo,
      path: "docs/x.md",
      message: "add x",
      content: Buffer.from("x1").toString("base64"),
    });
    expect(created.status).toBe(201);
    // Updating without the blob sha is 422, with a stale sha 409.
    expect(await status(gh.rest.repos.createOrUpdateFileContents({ owner, repo, path: "docs/x.md", message: "x", content: "eDI=" }))).toBe(
      422,
    );
    expect(
      await status(
        gh.rest.repos.createOrUpdateFileContents({ owner, repo, path: "docs/x.md", message: "x", content: "eDI=", sha: "0".repeat(40) }),
      ),
    ).toBe(409);
    const updated = await gh.rest.repos.createOrUpdateFileContents({
      owner,
      repo,
      path: "docs/x.md",
      message: "x2",
      content: "eDI=",
      sha: created.data.content!.sha!,
    });
    expect(updated.status).toBe(200);
    const { data: file } = await gh.rest.repos.getContent({ owner, repo, path: "docs/x.md" });
    expect(Buffer.from((file as { content: string }).content, "base64").toString()).toBe("x2");
  });

  it("blobs, trees, commits and refs with fast-forward-only updates", async () => {
    const { data: main } = await gh.rest.git.getRef({ owner, repo, ref: "heads/main" });
    const { data: blob } = await gh.rest.git.createBlob({
      owner,
      repo,
      content: Buffer.from([0, 1, 2]).toString("base64"),
      encoding: "base64",
    });
    expect((await gh.rest.git.getBlob({ owner, repo, file_sha: blob.sha })).data.size).toBe(3);
    const { data: base } = await gh.rest.git.getCommit({ owner, repo, commit_sha: main.object.sha });
    const { data: tree } = await gh.rest.git.createTree({
      owner,
      repo,
      base_tree: base.tree.sha,
      tree: [
        { path: "bin/data", mode: "100644", type: "blob", sha: blob.sha },
        { path: "src/a.txt", mode: "100644", type: "blob", sha: null },
      ],
    });
    const { data: full } = await gh.rest.git.getTree({ owner, repo, tree_sha: tree.sha, recursive: "1" });
    const paths = full.tree.map((t) => t.path);
    expect(paths).toContain("bin/data");
    expect(paths).not.toContain("src/a.txt");
    const { data: c1 } = await gh.rest.git.createCommit({ owner, repo, message: "c1", tree: tree.sha, parents: [main.object.sha] });
    expect(await status(gh.rest.git.createCommit({ owner, repo, message: "bad", tree: "f".repeat(40), parents: [] }))).toBe(422);

    await gh.rest.git.createRef({ owner, repo, ref: "refs/forge/run-1", sha: main.object.sha });
    expect(await status(gh.rest.git.createRef({ owner, repo, ref: "refs/forge/run-1", sha: main.object.sha }))).toBe(422);
    // GitHub's answers to a ref it cannot create: taken, in the way of another, or a name git refuses.
    const refusal = (ref: string) =>
      gh.rest.git.createRef({ owner, repo, ref, sha: main.object.sha }).then(
        () => "created",
        (e: { status: number; response: { data: { message: string } } }) => `${e.status} ${e.response.data.message}`,
      );
    expect(await refusal("refs/forge/run-1")).toBe("422 Reference already exists");
    expect(await refusal("refs/forge/run-1/a")).toBe("422 Reference update failed");
    for (const bad of ["refs/heads/forge/r/fix..up/1", "refs/heads/forge/r/cache.lock/1", "refs/heads/forge/r/a/1.", "refs/heads/a b"])
      expect(await refusal(bad)).toBe(`422 ${bad} is not a valid ref name.`);
    await gh.rest.git.updateRef({ owner, repo, ref: "forge/run-1", sha: c1.sha });
    // A sibling of c1 (same parent) does not descend from the tip: compare-and-swap lost.
    const { data: c2 } = await gh.rest.git.createCommit({ owner, repo, message: "c2", tree: tree.sha, parents: [main.object.sha] });
    const lost = await gh.rest.git
      .updateRef({ owner, repo, ref: "forge/run-1", sha: c2.sha })
      .catch((e: { status: number; response: { data: { message: string } } }) => e);
    expect((lost as { status: number }).status).toBe(422);
    expect((lost as { response: { data: { message: string } } }).response.data.message).toBe("Update is not a fast forward");
    expect((await gh.rest.git.updateRef({ owner, repo, ref: "forge/run-1", sha: c2.sha, force: true })).data.object.sha).toBe(c2.sha);
    expect((await gh.rest.git.listMatchingRefs({ owner, repo, ref: "forge/" })).data.map((r) => r.ref)).toEqual(["refs/forge/run-1"]);
    await gh.rest.git.deleteRef({ owner, repo, ref: "forge/run-1" });
    expect(await status(gh.rest.git.getRef({ owner, repo, ref: "forge/run-1" }))).toBe(404);
    expect(await status(gh.rest.git.deleteRef({ owner, repo, ref: "forge/run-1" }))).toBe(422);
  });

  it("server-side merges (201/204/409) and compare", async () => {
    const { data: main } = await gh.rest.git.getRef({ owner, repo, ref: "heads/main" });
    const commitFile = async (parent: string, path: string, content: string, msg: string) => {
      const { data: p } = await gh.rest.git.getCommit({ owner, repo, commit_sha: parent });
      const { data: t } = await gh.rest.git.createTree({
        owner,
        repo,
        base_tree: p.tree.sha,
        tree: [{ path, mode: "100644", type: "blob", content }],
      });
      return (await gh.rest.git.createCommit({ owner, repo, message: msg, tree: t.sha, parents: [parent] })).data.sha;
    };
    const left = await commitFile(main.object.sha, "conflict.txt", "left\n", "left");
    const right = await commitFile(main.object.sha, "conflict.txt", "right\n", "right");
    const other = await commitFile(main.object.sha, "other.txt", "o\n", "other");
    await gh.rest.git.createRef({ owner, repo, ref: "refs/heads/int", sha: left });
    await gh.rest.git.createRef({ owner, repo, ref: "refs/heads/right", sha: right });
    await gh.rest.git.createRef({ owner, repo, ref: "refs/heads/other", sha: other });
    const merged = await gh.rest.repos.merge({ owner, repo, base: "int", head: "other" });
    expect(merged.status).toBe(201);
    expect(merged.data.parents.map((p) => p.sha)).toEqual([left, other]);
    expect((await gh.rest.repos.merge({ owner, repo, base: "int", head: "other" })).status).toBe(204);
    expect(await status(gh.rest.repos.merge({ owner, repo, base: "int", head: "right" }))).toBe(409);
    expect(await status(gh.rest.repos.merge({ owner, repo, base: "nope", head: "right" }))).toBe(404);
    const { data: cmp } = await gh.rest.repos.compareCommits({ owner, repo, base: "main", head: "int" });
    expect(cmp.status).toBe("ahead");
    expect(cmp.ahead_by).toBe(3);
    expect(cmp.files?.map((f) => f.filename).sort()).toEqual(["conflict.txt", "other.txt"]);
    const { data: div } = await gh.rest.repos.compareCommits({ owner, repo, base: "right", head: "int" });
    expect(div.status).toBe("diverged");
  });

  it("collaborator permission and commit statuses", async () => {
    const perm = await gh.rest.repos.getCollaboratorPermissionLevel({ owner, repo, username: "alice" });
    expect(perm.data.permission).toBe("write");
    expect((await gh.rest.repos.getCollaboratorPermissionLevel({ owner, repo, username: "rita" })).data.permission).toBe("read");
    expect((await gh.rest.repos.getCollaboratorPermissionLevel({ owner, repo, username: "acme" })).data.permission).toBe("admin");
    const { data: main } = await gh.rest.git.getRef({ owner, repo, ref: "heads/main" });
    const sha = main.object.sha;
    await gh.rest.repos.createCommitStatus({ owner, repo, sha, state: "pending", context: "forge/a" });
    await gh.rest.repos.createCommitStatus({ owner, repo, sha, state: "success", context: "forge/a" });
    await gh.rest.repos.createCommitStatus({ owner, repo, sha, state: "success", context: "forge/b", target_url: "http://example.test/x" });
    const { data: combined } = await gh.rest.repos.getCombinedStatusForRef({ owner, repo, ref: "main" });
    expect(combined.state).toBe("success");
    expect(combined.total_count).toBe(2);
    const statuses = await gh.rest.repos.listCommitStatusesForRef({ owner, repo, ref: sha, per_page: 2 });
    expect(statuses.data).toHaveLength(2);
    expect(statuses.headers.link).toContain('rel="next"');
    const all = await gh.paginate(gh.rest.repos.listCommitStatusesForRef, { owner, repo, ref: sha, per_page: 2 });
    expect(all).toHaveLength(3);
  });
});

describe("pull requests", () => {
  it("create, list with filters, get, update, files, reviews, merge rules", async () => {
    const { data: main } = await gh.rest.git.getRef({ owner, repo, ref: "heads/main" });
    await gh.rest.git.createRef({ owner, repo, ref: "refs/heads/feat/pr", sha: main.object.sha });
    // No commits between → 422.
    expect(await status(gh.rest.pulls.create({ owner, repo, head: "feat/pr", base: "main", title: "t" }))).toBe(422);
    await gh.rest.repos.createOrUpdateFileContents({ owner, repo, path: "pr.txt", message: "pr", content: "cHI=", branch: "feat/pr" });
    const { data: pr } = await gh.rest.pulls.create({
      owner,
      repo,
      head: `${owner}:feat/pr`,
      base: "main",
      title: "PR",
      body: "body",
      draft: true,
    });
    expect(pr.draft).toBe(true);
    expect(await status(gh.rest.pulls.create({ owner, repo, head: "feat/pr", base: "main", title: "dup" }))).toBe(422);
    expect((await gh.rest.pulls.list({ owner, repo, head: `${owner}:feat/pr` })).data.map((p) => p.number)).toEqual([pr.number]);
    expect((await gh.rest.pulls.list({ owner, repo, base: "int" })).data).toEqual([]);
    expect((await gh.rest.pulls.list({ owner, repo, state: "closed" })).data).toEqual([]);
    const { data: got } = await gh.rest.pulls.get({ owner, repo, pull_number: pr.number });
    expect(got.mergeable).toBe(true);
    expect(got.changed_files).toBe(1);
    await gh.rest.pulls.update({ owner, repo, pull_number: pr.number, title: "PR (edited)", body: "new body" });
    expect((await gh.rest.pulls.listFiles({ owner, repo, pull_number: pr.number })).data.map((f) => f.filename)).toEqual(["pr.txt"]);
    // Draft → 405; ready for review (a person, through the control API) → mergeable.
    expect(await status(gh.rest.pulls.merge({ owner, repo, pull_number: pr.number }))).toBe(405);
    await sim.control.readyForReview("alice", `${owner}/${repo}`, pr.number);
    // Wrong head sha → 409.
    expect(await status(gh.rest.pulls.merge({ owner, repo, pull_number: pr.number, sha: main.object.sha }))).toBe(409);
    const review = await person.rest.pulls.createReview({ owner, repo, pull_number: pr.number, event: "APPROVE", body: "lgtm" });
    expect(review.data.state).toBe("APPROVED");
    expect((await gh.rest.pulls.listReviews({ owner, repo, pull_number: pr.number })).data).toHaveLength(1);
    // Inline comments on the head's lines; a path or line GitHub cannot place → 422.
    const pull = { owner, repo, pull_number: pr.number };
    const asking = await person.rest.pulls.createReview({
      ...pull,
      event: "REQUEST_CHANGES",
      body: "two things",
      comments: [{ path: "pr.txt", line: 1, body: "rename" }],
    });
    expect(asking.data.state).toBe("CHANGES_REQUESTED");
    expect(
      await status(person.rest.pulls.createReview({ ...pull, event: "COMMENT", comments: [{ path: "nope.txt", line: 1, body: "x" }] })),
    ).toBe(422);
    expect(
      await status(person.rest.pulls.createReview({ ...pull, event: "COMMENT", comments: [{ path: "pr.txt", line: 9, body: "x" }] })),
    ).toBe(422);
    expect((await gh.rest.pulls.getReview({ ...pull, review_id: asking.data.id })).data.body).toBe("two things");
    // A request for changes can be dismissed (it no longer counts); a plain comment cannot.
    const comment = await person.rest.pulls.createReview({ ...pull, event: "COMMENT", body: "a remark" });
    expect(await status(gh.rest.pulls.dismissReview({ ...pull, review_id: comment.data.id, message: "no" }))).toBe(422);
    expect(await status(gh.rest.pulls.getReview({ ...pull, review_id: 999_999 }))).toBe(404);
    const { data: inline } = await gh.rest.pulls.listCommentsForReview({ ...pull, review_id: asking.data.id });
    expect(inline.map((c) => [c.path, c.body, c.diff_hunk.split("\n").at(-1)])).toEqual([["pr.txt", "rename", "+pr"]]);
    const { data: reply } = await gh.rest.pulls.createReplyForReviewComment({ ...pull, comment_id: inline[0]!.id, body: "renamed" });
    expect(reply.in_reply_to_id).toBe(inline[0]!.id);
    expect(await status(gh.rest.pulls.createReplyForReviewComment({ ...pull, comment_id: 999_999, body: "x" }))).toBe(404);
    expect((await gh.rest.pulls.listReviewComments(pull)).data.map((c) => c.body)).toEqual(["rename", "renamed"]);
    const dismissed = await gh.rest.pulls.dismissReview({ ...pull, review_id: asking.data.id, message: "answered" });
    expect(dismissed.data.state).toBe("DISMISSED");
    const { data: requested } = await gh.rest.pulls.requestReviewers({ ...pull, reviewers: ["alice"] });
    expect(requested.requested_reviewers?.map((u) => u.login)).toEqual(["alice"]);
    expect(await status(gh.rest.pulls.requestReviewers({ ...pull, reviewers: ["nobody-here"] }))).toBe(422);
    await person.rest.pulls.createReview({ ...pull, event: "APPROVE" });
    const merged = await gh.rest.pulls.merge({ owner, repo, pull_number: pr.number, merge_method: "squash" });
    expect(merged.data.merged).toBe(true);
    // Already merged → 405.
    expect(await status(gh.rest.pulls.merge({ owner, repo, pull_number: pr.number }))).toBe(405);

    // A conflicting PR is not mergeable (405); closing and reopening emit events.
    await gh.rest.git.createRef({ owner, repo, ref: "refs/heads/feat/conflict", sha: main.object.sha });
    await gh.rest.repos.createOrUpdateFileContents({
      owner,
      repo,
      path: "pr.txt",
      message: "other",
      content: "b3RoZXI=",
      branch: "feat/conflict",
    });
    const { data: pr2 } = await gh.rest.pulls.create({ owner, repo, head: "feat/conflict", base: "main", title: "conflict" });
    expect((await gh.rest.pulls.get({ owner, repo, pull_number: pr2.number })).data.mergeable).toBe(false);
    expect(await status(gh.rest.pulls.merge({ owner, repo, pull_number: pr2.number }))).toBe(405);
    await gh.rest.pulls.update({ owner, repo, pull_number: pr2.number, state: "closed" });
    await gh.rest.pulls.update({ owner, repo, pull_number: pr2.number, state: "open" });

    await sim.idle();
    const actions = receiver.received.filter((h) => h.event === "pull_request").map((h) => `${h.payload.number as number}:${h.action}`);
    expect(actions).toEqual(
      expect.arrayContaining([
        `${pr.number}:opened`,
        `${pr.number}:edited`,
        `${pr.number}:ready_for_review`,
        `${pr.number}:closed`,
        `${pr2.number}:closed`,
        `${pr2.number}:reopened`,
      ]),
    );
    expect(receiver.received.some((h) => h.event === "pull_request_review" && h.action === "submitted")).toBe(true);
  });
});

describe("issues, comments, labels, reactions", () => {
  it("works as GitHub documents", async () => {
    const { data: issue } = await gh.rest.issues.create({
      owner,
      repo,
      title: "Change request",
      body: "cr",
      labels: ["forge:change-request"],
    });
    expect(issue.labels.map((l) => (typeof l === "string" ? l : l.name))).toEqual(["forge:change-request"]);
    expect(await status(gh.rest.issues.create({ owner, repo, title: "big", body: "x".repeat(65537) }))).toBe(422);
    expect((await gh.rest.issues.get({ owner, repo, issue_number: issue.number })).data.title).toBe("Change request");
    await gh.rest.issues.update({ owner, repo, issue_number: issue.number, title: "CR 1" });
    const { data: list } = await gh.rest.issues.listForRepo({ owner, repo, labels: "forge:change-request" });
    expect(list.map((i) => i.number)).toEqual([issue.number]);
    await gh.rest.issues.createLabel({ owner, repo, name: "forge:run", color: "00ff00" });
    expect(await status(gh.rest.issues.createLabel({ owner, repo, name: "forge:run" }))).toBe(422);
    expect((await gh.rest.issues.getLabel({ owner, repo, name: "forge:run" })).data.color).toBe("00ff00");
    expect((await gh.rest.issues.listLabelsForRepo({ owner, repo })).data.length).toBeGreaterThanOrEqual(2);
    await gh.rest.issues.addLabels({ owner, repo, issue_number: issue.number, labels: ["forge:run"] });
    await gh.rest.issues.removeLabel({ owner, repo, issue_number: issue.number, name: "forge:change-request" });
    expect(await status(gh.rest.issues.removeLabel({ owner, repo, issue_number: issue.number, name: "nope" }))).toBe(404);
    expect((await gh.rest.issues.listLabelsOnIssue({ owner, repo, issue_number: issue.number })).data.map((l) => l.name)).toEqual([
      "forge:run",
    ]);
    await gh.rest.issues.setLabels({ owner, repo, issue_number: issue.number, labels: ["a", "b"] });

    const c = await sim.control.comment("alice", `${owner}/${repo}`, issue.number, "/forge approve");
    expect(c.status).toBe(201);
    const commentId = (c.body as { id: number }).id;
    const { data: mine } = await gh.rest.issues.createComment({ owner, repo, issue_number: issue.number, body: "tracker" });
    expect(mine.performed_via_github_app?.id).toBe(appId);
    await gh.rest.issues.updateComment({ owner, repo, comment_id: mine.id, body: "tracker v2" });
    expect((await gh.rest.issues.getComment({ owner, repo, comment_id: mine.id })).data.body).toBe("tracker v2");
    expect((await gh.rest.issues.listComments({ owner, repo, issue_number: issue.number })).data).toHaveLength(2);
    const r1 = await gh.rest.reactions.createForIssueComment({ owner, repo, comment_id: commentId, content: "eyes" });
    expect(r1.status).toBe(201);
    expect((await gh.rest.reactions.createForIssueComment({ owner, repo, comment_id: commentId, content: "eyes" })).status).toBe(200);
    expect((await gh.rest.reactions.listForIssueComment({ owner, repo, comment_id: commentId })).data).toHaveLength(1);
    expect((await gh.rest.reactions.createForIssue({ owner, repo, issue_number: issue.number, content: "rocket" })).status).toBe(201);
    await gh.rest.issues.deleteComment({ owner, repo, comment_id: mine.id });
    await gh.rest.issues.update({ owner, repo, issue_number: issue.number, state: "closed", state_reason: "not_planned" });

    // A read-only person cannot edit someone else's issue state; a stranger cannot see a 404 repo path.
    expect(await status(reader.rest.issues.update({ owner, repo, issue_number: issue.number, state: "open" }))).toBe(403);
    await sim.idle();
    const kinds = receiver.received.filter((h) => h.event === "issues" || h.event === "issue_comment").map((h) => `${h.event}.${h.action}`);
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
    const bot = await sim.control.comment("dependabot[bot]", `${owner}/${repo}`, issue.number, "bump");
    expect(bot.status).toBe(201);
    expect((bot.body as { user: { type: string; html_url: string } }).user).toMatchObject({
      type: "Bot",
      html_url: `${sim.url}/apps/dependabot`,
    });
    const fromAlice = receiver.received.find(
      (h) => h.event === "issue_comment" && (h.payload.comment as { body: string }).body === "/forge approve",
    );
    expect((fromAlice?.payload.sender as { login: string }).login).toBe("alice");
  });
});

describe("checks", () => {
  it("runs and suites: create, update, rerequest, requested_action, creator-only updates", async () => {
    const { data: main } = await gh.rest.git.getRef({ owner, repo, ref: "heads/main" });
    const sha = main.object.sha;
    const { data: run } = await gh.rest.checks.create({
      owner,
      repo,
      name: "forge · t1",
      head_sha: sha,
      status: "in_progress",
      external_id: "run-1/t1/1",
      actions: [{ label: "Retry", description: "Retry the task", identifier: "retry" }],
    });
    expect(run.status).toBe("in_progress");
    expect(await status(gh.rest.checks.create({ owner, repo, name: "x", head_sha: "f".repeat(40) }))).toBe(422);
    // Without external_id, GitHub reports "" (webhooks require a string).
    const { data: plain } = await gh.rest.checks.create({ owner, repo, name: "plain", head_sha: sha, conclusion: "success" });
    expect(plain.external_id).toBe("");
    // People cannot write checks: Checks API writes are for GitHub Apps only.
    expect(await status(person.rest.checks.create({ owner, repo, name: "x", head_sha: sha }))).toBe(403);
    const { data: done } = await gh.rest.checks.update({
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
    const { data: notes } = await gh.rest.checks.listAnnotations({ owner, repo, check_run_id: run.id });
    expect(notes.map((a) => [a.path, a.start_line, a.annotation_level, a.message])).toEqual([["src/a.txt", 1, "failure", "a is wrong"]]);
    expect((await gh.rest.checks.get({ owner, repo, check_run_id: run.id })).data.conclusion).toBe("failure");
    const { data: forRef } = await gh.rest.checks.listForRef({ owner, repo, ref: sha, check_name: "forge · t1" });
    expect(forRef.total_count).toBe(1);
    const { data: suites } = await gh.rest.checks.listSuitesForRef({ owner, repo, ref: sha, app_id: appId });
    expect(suites.total_count).toBe(1);
    const suiteId = suites.check_suites[0]!.id;
    expect((await gh.rest.checks.getSuite({ owner, repo, check_suite_id: suiteId })).data.conclusion).toBe("failure");
    expect((await gh.rest.checks.listForSuite({ owner, repo, check_suite_id: suiteId })).data.total_count).toBe(2);
    expect((await gh.rest.checks.createSuite({ owner, repo, head_sha: sha })).status).toBe(200);
    await person.rest.checks.rerequestRun({ owner, repo, check_run_id: run.id });
    await person.rest.checks.rerequestSuite({ owner, repo, check_suite_id: suiteId });
    await sim.control.requestAction("alice", `${owner}/${repo}`, run.id, "retry");

    // Another App cannot update this App's check run.
    const other = sim.control.registerApp({
      slug: "other",
      publicKeyPem: appKeys().publicKeyPem,
      permissions: { checks: "write" },
      events: [],
    });
    const otherInst = sim.control.install(other.id, owner, [`${owner}/${repo}`]);
    const otherKit = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.installationToken(otherInst.id) });
    expect(await status(otherKit.rest.checks.update({ owner, repo, check_run_id: run.id, status: "in_progress" }))).toBe(403);

    await sim.idle();
    const kinds = receiver.received.filter((h) => h.event.startsWith("check_")).map((h) => `${h.event}.${h.action}`);
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
    const ra = receiver.received.find((h) => h.action === "requested_action");
    expect((ra?.payload.requested_action as { identifier: string }).identifier).toBe("retry");
  });
});

describe("actions", () => {
  it("concurrent dispatches of a workflow seen for the first time share its id", async () => {
    const quiet = await createSim();
    try {
      await quiet.control.createRepo({ owner, name: repo, files: { ".github/workflows/forge-agent.yml": WORKFLOW } });
      const kit = new Octokit({ baseUrl: quiet.apiUrl, auth: quiet.control.userToken(owner) });
      const answers = await Promise.all(
        [1, 2, 3].map((n) =>
          kit.request("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", {
            owner,
            repo,
            workflow_id: "forge-agent.yml",
            ref: "main",
            inputs: { task_id: `t${n}` },
            return_run_details: true,
          }),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
      const { data } = await kit.rest.actions.listWorkflowRunsForRepo({ owner, repo });
      expect(new Set(data.workflow_runs.map((r) => r.workflow_id)).size).toBe(1);
      expect(quiet.violations).toEqual([]);
    } finally {
      await quiet.close();
    }
  });

  it("workflow_dispatch with and without run details, inputs validated, runs, jobs, logs, cancel", async () => {
    const { data: wfs } = await gh.rest.actions.listRepoWorkflows({ owner, repo });
    expect(wfs.workflows.map((w) => w.path)).toEqual([".github/workflows/forge-agent.yml"]);
    const wf = wfs.workflows[0]!;
    expect((await gh.rest.actions.getWorkflow({ owner, repo, workflow_id: "forge-agent.yml" })).data.id).toBe(wf.id);

    const plain = await gh.rest.actions.createWorkflowDispatch({
      owner,
      repo,
      workflow_id: "forge-agent.yml",
      ref: "main",
      inputs: { task_id: "t1" },
    });
    expect(plain.status).toBe(204);
    const detailed = await gh.request("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", {
      owner,
      repo,
      workflow_id: wf.id,
      ref: "main",
      inputs: { task_id: "t2", mode: "slow" },
      return_run_details: true,
    });
    expect(detailed.status).toBe(200);
    const details = detailed.data as unknown as { workflow_run_id: number; run_url: string; html_url: string };
    expect(details.run_url).toBe(`${sim.apiUrl}/repos/${owner}/${repo}/actions/runs/${details.workflow_run_id}`);

    expect(
      await status(
        gh.rest.actions.createWorkflowDispatch({
          owner,
          repo,
          workflow_id: "forge-agent.yml",
          ref: "main",
          inputs: { task_id: "t", bogus: "x" },
        }),
      ),
    ).toBe(422);
    expect(
      await status(gh.rest.actions.createWorkflowDispatch({ owner, repo, workflow_id: "forge-agent.yml", ref: "main", inputs: {} })),
    ).toBe(422);
    expect(
      await status(
        gh.rest.actions.createWorkflowDispatch({
          owner,
          repo,
          workflow_id: "forge-agent.yml",
          ref: "main",
          inputs: { task_id: "t", mode: "medium" },
        }),
      ),
    ).toBe(422);
    expect(
      await status(
        gh.rest.actions.createWorkflowDispatch({
          owner,
          repo,
          workflow_id: "forge-agent.yml",
          ref: "no-such-branch",
          inputs: { task_id: "t" },
        }),
      ),
    ).toBe(422);
    expect(await status(gh.rest.actions.createWorkflowDispatch({ owner, repo, workflow_id: "nope.yml", ref: "main" }))).toBe(404);

    await sim.idle();
    const { data: run } = await gh.rest.actions.getWorkflowRun({ owner, repo, run_id: details.workflow_run_id });
    expect(run.status).toBe("completed");
    expect(run.conclusion).toBe("success");
    expect(run.event).toBe("workflow_dispatch");
    expect(run.display_title).toBe("forge t2/1");
    const { data: runs } = await gh.rest.actions.listWorkflowRuns({ owner, repo, workflow_id: "forge-agent.yml", status: "success" });
    expect(runs.total_count).toBe(2);
    expect((await gh.rest.actions.listWorkflowRunsForRepo({ owner, repo, event: "workflow_dispatch" })).data.total_count).toBe(2);
    const { data: jobs } = await gh.rest.actions.listJobsForWorkflowRun({ owner, repo, run_id: run.id });
    expect(jobs.jobs.map((j) => [j.name, j.conclusion])).toEqual([["agent", "success"]]);
    expect((await gh.rest.actions.getJobForWorkflowRun({ owner, repo, job_id: jobs.jobs[0]!.id })).data.run_id).toBe(run.id);
    const jobLog = await gh.rest.actions.downloadJobLogsForWorkflowRun({ owner, repo, job_id: jobs.jobs[0]!.id });
    expect(String(jobLog.data)).toContain("noop executor");
    const zip = await gh.rest.actions.downloadWorkflowRunLogs({ owner, repo, run_id: run.id });
    expect(
      Buffer.from(zip.data as ArrayBuffer)
        .subarray(0, 2)
        .toString(),
    ).toBe("PK");
    // Cancelling a completed run is 409.
    expect(await status(gh.rest.actions.cancelWorkflowRun({ owner, repo, run_id: run.id }))).toBe(409);

    // A registered executor drives the run and sees the cancel through its AbortSignal.
    let token = "";
    sim.onWorkflowDispatch(async (d) => {
      token = d.token("agent");
      d.startJob("agent", ["checkout", "agent"]);
      d.step("agent", 1, "in_progress");
      d.log("agent", "working\n");
      await new Promise<void>((r) => d.signal.addEventListener("abort", () => r()));
      d.step("agent", 1, "completed", "cancelled");
      d.completeJob("agent", "cancelled");
      d.complete();
    });
    const res = await gh.request("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", {
      owner,
      repo,
      workflow_id: wf.id,
      ref: "main",
      inputs: { task_id: "t3" },
      return_run_details: true,
    });
    const runId = (res.data as unknown as { workflow_run_id: number }).workflow_run_id;
    for (let i = 0; i < 100 && (await gh.rest.actions.getWorkflowRun({ owner, repo, run_id: runId })).data.status !== "in_progress"; i++)
      await new Promise((r) => setTimeout(r, 10));
    // The GITHUB_TOKEN carries the workflow's permissions (contents: write, pull-requests: write).
    const wfKit = new Octokit({ baseUrl: sim.apiUrl, auth: token });
    expect((await wfKit.rest.repos.get({ owner, repo })).status).toBe(200);
    expect(await status(wfKit.rest.issues.create({ owner, repo, title: "no issues permission" }))).toBe(403);
    expect((await gh.rest.actions.cancelWorkflowRun({ owner, repo, run_id: runId })).status).toBe(202);
    for (let i = 0; i < 100 && (await gh.rest.actions.getWorkflowRun({ owner, repo, run_id: runId })).data.status !== "completed"; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect((await gh.rest.actions.getWorkflowRun({ owner, repo, run_id: runId })).data.conclusion).toBe("cancelled");
    // The token dies with the run.
    expect(await status(wfKit.rest.repos.get({ owner, repo }))).toBe(401);
    sim.onWorkflowDispatch(undefined);
    await sim.idle();

    const kinds = receiver.received.filter((h) => h.event.startsWith("workflow")).map((h) => `${h.event}.${h.action}`);
    expect(kinds).toEqual(
      expect.arrayContaining([
        "workflow_dispatch.null",
        "workflow_run.requested",
        "workflow_run.in_progress",
        "workflow_run.completed",
        "workflow_job.queued",
        "workflow_job.in_progress",
        "workflow_job.completed",
      ]),
    );
  });

  it("cancels a queued run when no executor runs it", async () => {
    const quiet = await createSim();
    try {
      await quiet.control.createRepo({ owner, name: repo, files: { ".github/workflows/forge-agent.yml": WORKFLOW } });
      const kit = new Octokit({ baseUrl: quiet.apiUrl, auth: quiet.control.userToken(owner) });
      const res = await kit.request("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", {
        owner,
        repo,
        workflow_id: "forge-agent.yml",
        ref: "main",
        inputs: { task_id: "t" },
        return_run_details: true,
      });
      const runId = (res.data as unknown as { workflow_run_id: number }).workflow_run_id;
      expect((await kit.rest.actions.getWorkflowRun({ owner, repo, run_id: runId })).data.status).toBe("queued");
      expect((await kit.rest.actions.cancelWorkflowRun({ owner, repo, run_id: runId })).status).toBe(202);
      expect((await kit.rest.actions.getWorkflowRun({ owner, repo, run_id: runId })).data.conclusion).toBe("cancelled");
      expect(quiet.violations).toEqual([]);
    } finally {
      await quiet.close();
    }
  });
});

describe("not implemented and not found", () => {
  it("answers 501 naming the operationId, 404 for unknown paths", async () => {
    const err = await gh.rest.repos
      .listWebhooks({ owner, repo })
      .catch((e: { status: number; response: { data: { message: string; documentation_url: string } } }) => e);
    expect((err as { status: number }).status).toBe(501);
    expect((err as { response: { data: { message: string } } }).response.data.message).toContain("repos/list-webhooks");
    expect((err as { response: { data: { documentation_url: string } } }).response.data.documentation_url).toMatch(
      /^https:\/\/docs\.github\.com\//,
    );
    expect(await status(gh.request("GET /definitely/not/github"))).toBe(404);
    // GraphQL (GHES: /api/graphql) needs authentication.
    const gql = await fetch(`${sim.url}/api/graphql`, { method: "POST", body: JSON.stringify({ query: "{ viewer { login } }" }) });
    expect(gql.status).toBe(401);
    expect(await status(gh.rest.repos.get({ owner, repo: "missing" }))).toBe(404);
  });
});

describe("rulesets", () => {
  it("an admin's ruleset is listed, read and applied to branches by pattern; writes it forbids are refused to everyone but its bypass actors", async () => {
    const admin = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken(owner) });
    const body = {
      owner,
      repo,
      name: "guarded",
      target: "branch" as const,
      enforcement: "active" as const,
      conditions: { ref_name: { include: ["refs/heads/guarded/*"], exclude: ["refs/heads/guarded/open"] } },
      rules: [
        { type: "creation" as const },
        { type: "update" as const },
        { type: "deletion" as const },
        { type: "non_fast_forward" as const },
      ],
      bypass_actors: [{ actor_id: appId, actor_type: "Integration" as const, bypass_mode: "always" as const }],
    };
    // Creating a ruleset is an administrator's (or the Administration permission's) business.
    expect(await status(person.rest.repos.createRepoRuleset({ ...body, name: "mine" }))).toBe(403);
    const { data: set } = await admin.rest.repos.createRepoRuleset(body);
    expect(await status(admin.rest.repos.createRepoRuleset(body))).toBe(422); // names are unique
    expect((await person.rest.repos.getRepoRulesets({ owner, repo })).data.map((r) => r.name)).toEqual(["guarded"]);
    expect((await person.rest.repos.getRepoRuleset({ owner, repo, ruleset_id: set.id })).data.rules?.length).toBe(4);
    const rules = async (branch: string) => (await gh.rest.repos.getBranchRules({ owner, repo, branch })).data.map((r) => r.type);
    expect(await rules("guarded/a")).toEqual(["creation", "update", "deletion", "non_fast_forward"]);
    expect(await rules("guarded/open")).toEqual([]);
    expect(await rules("guarded/a/b")).toEqual([]); // `*` stops at a slash
    expect(await rules("main")).toEqual([]);

    const { data: main } = await gh.rest.git.getRef({ owner, repo, ref: "heads/main" });
    const sha = main.object.sha;
    // The App is on the bypass list: it creates and moves a guarded branch.
    await gh.rest.git.createRef({ owner, repo, ref: "refs/heads/guarded/a", sha });
    const refused = async (p: Promise<unknown>): Promise<string> => {
      try {
        await p;
      } catch (e) {
        const err = e as { status: number; response?: { data?: { message?: string } } };
        expect(err.status).toBe(422);
        return err.response?.data?.message ?? "";
      }
      throw new Error("the write went through");
    };
    expect(await refused(person.rest.git.createRef({ owner, repo, ref: "refs/heads/guarded/b", sha }))).toContain(
      "Cannot create ref due to creations being restricted.",
    );
    expect(await refused(person.rest.git.deleteRef({ owner, repo, ref: "heads/guarded/a" }))).toContain(
      "Cannot delete this protected ref.",
    );
    expect(
      await refused(
        person.rest.repos.createOrUpdateFileContents({ owner, repo, path: "g.txt", branch: "guarded/a", message: "g", content: "Zw==" }),
      ),
    ).toContain("Cannot update this protected ref.");
    await person.rest.git.createRef({ owner, repo, ref: "refs/heads/ahead-g", sha });
    await person.rest.repos.createOrUpdateFileContents({ owner, repo, path: "g.txt", branch: "ahead-g", message: "g", content: "Zw==" });
    expect(await refused(person.rest.repos.merge({ owner, repo, base: "guarded/a", head: "ahead-g" }))).toContain(
      "Repository rule violations found",
    );
    // An excluded branch is free.
    await person.rest.git.createRef({ owner, repo, ref: "refs/heads/guarded/open", sha });
    await gh.rest.git.deleteRef({ owner, repo, ref: "heads/guarded/a" });
    await person.rest.git.deleteRef({ owner, repo, ref: "heads/guarded/open" });
    await person.rest.git.deleteRef({ owner, repo, ref: "heads/ahead-g" });
  });
});

// ---------------------------------------------------------------- Actions permissions, secrets, branch protection

/** A git command against the simulator, asynchronous (the server answering it runs in this process). */
function gitIn(cwd: string, args: string[], token?: string): Promise<string> {
  const auth = token ? ["-c", `http.extraheader=AUTHORIZATION: basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`] : [];
  return new Promise((resolve, reject) =>
    execFile(
      "git",
      [...auth, ...args],
      {
        cwd,
        encoding: "utf8",
        env: {
          ...process.env,
          GIT_TERMINAL_PROMPT: "0",
          GIT_CONFIG_NOSYSTEM: "1",
          HOME: cwd,
          GIT_AUTHOR_NAME: "Agent",
          GIT_AUTHOR_EMAIL: "agent@forge.invalid",
          GIT_COMMITTER_NAME: "Agent",
          GIT_COMMITTER_EMAIL: "agent@forge.invalid",
        },
      },
      (err, stdout, stderr) => (err ? reject(Object.assign(err, { stderr })) : resolve(stdout)),
    ),
  );
}

/** The stderr of a git command that must fail. */
async function gitRefused(cwd: string, args: string[], token: string): Promise<string> {
  try {
    await gitIn(cwd, args, token);
  } catch (e) {
    return String((e as { stderr: string }).stderr);
  }
  throw new Error(`git ${args.join(" ")} succeeded`);
}

/** The message of a failing Octokit call, checking its status. */
async function refusedWith(p: Promise<unknown>, expected: number): Promise<string> {
  try {
    await p;
  } catch (e) {
    const err = e as { status: number; response?: { data?: { message?: string } } };
    expect(err.status).toBe(expected);
    return err.response?.data?.message ?? "";
  }
  throw new Error("the call went through");
}

/** An App with the Administration and Secrets permissions, installed on the owner's repositories (Forge's doctor reads these). */
let doctors = 0;
async function doctorApp(permissions: Record<string, "read" | "write">): Promise<Octokit> {
  const k = appKeys();
  const id = sim.control.registerApp({
    slug: `forge-doctor-${++doctors}`,
    publicKeyPem: k.publicKeyPem,
    permissions,
    events: [],
  }).id;
  const inst = sim.control.install(id, owner, "all");
  return new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.installationToken(inst.id) });
}

/** Polls a run until it completes (a refused run completes right after the dispatch answered). */
async function completedRun(kit: Octokit, name: string, runId: number): Promise<{ conclusion: string | null }> {
  for (let i = 0; i < 200; i++) {
    const { data } = await kit.rest.actions.getWorkflowRun({ owner, repo: name, run_id: runId });
    if (data.status === "completed") return data;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`run ${runId} did not complete`);
}

describe("actions permissions", () => {
  const CI = `name: CI
on: [push, workflow_dispatch]
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: other/tool@v1
      - uses: acme/own-action@v2
      - uses: ./local-action
      - run: echo built
`;

  it("GET/PUT by administrators (a person with admin, an App with administration); disabled Actions runs nothing and refuses dispatches", async () => {
    await sim.control.createRepo({
      owner,
      name: "ci-off",
      files: { ".github/workflows/ci.yml": CI },
      collaborators: { alice: "write", rita: "read" },
    });
    const admin = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken(owner) });
    const p = { owner, repo: "ci-off" };
    expect((await admin.rest.actions.getGithubActionsPermissionsRepository(p)).data).toMatchObject({
      enabled: true,
      allowed_actions: "all",
    });
    // Writers, readers and an App without the Administration permission may not read them.
    expect(await refusedWith(person.rest.actions.getGithubActionsPermissionsRepository(p), 403)).toBe(
      "Must have admin rights to Repository.",
    );
    expect(await status(reader.rest.actions.getGithubActionsPermissionsRepository(p))).toBe(403);
    expect(await refusedWith(gh.rest.actions.getGithubActionsPermissionsRepository({ owner, repo }), 403)).toBe(
      "Resource not accessible by integration",
    );
    const doctorRead = await doctorApp({ administration: "read" });
    expect((await doctorRead.rest.actions.getGithubActionsPermissionsRepository(p)).data.enabled).toBe(true);
    expect(await status(doctorRead.rest.actions.setGithubActionsPermissionsRepository({ ...p, enabled: false }))).toBe(403);
    const doctor = await doctorApp({ administration: "write" });
    expect((await doctor.rest.actions.setGithubActionsPermissionsRepository({ ...p, enabled: false })).status).toBe(204);
    expect((await admin.rest.actions.getGithubActionsPermissionsRepository(p)).data).toEqual({ enabled: false });

    // A push (a real one, over Git) starts nothing; a dispatch is refused as GitHub refuses it.
    const work = mkdtempSync(join(tmpdir(), "forge-conf-ci-off-"));
    try {
      const token = sim.control.userToken("alice");
      await gitIn(work, ["clone", "-q", `${sim.gitUrl}/${owner}/ci-off.git`, "w"], token);
      const dir = join(work, "w");
      await gitIn(dir, ["commit", "-q", "--allow-empty", "-m", "nothing runs"]);
      await gitIn(dir, ["push", "-q", "origin", "HEAD:main"], token);
      await sim.idle();
      expect((await admin.rest.actions.listWorkflowRunsForRepo(p)).data.total_count).toBe(0);
      expect(await refusedWith(admin.rest.actions.createWorkflowDispatch({ ...p, workflow_id: "ci.yml", ref: "main" }), 422)).toBe(
        "Actions has been disabled for this repository.",
      );
      // Enabled again, the next push runs its workflow.
      await admin.rest.actions.setGithubActionsPermissionsRepository({ ...p, enabled: true, allowed_actions: "all" });
      await gitIn(dir, ["commit", "-q", "--allow-empty", "-m", "this one runs"]);
      await gitIn(dir, ["push", "-q", "origin", "HEAD:main"], token);
      await sim.idle();
      const runs = (await admin.rest.actions.listWorkflowRunsForRepo(p)).data.workflow_runs;
      expect(runs.map((r) => [r.event, r.display_title])).toEqual([["push", "this one runs"]]);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });

  it("local_only and selected: a run using an action the policy does not allow fails at the start of its job, naming the action", async () => {
    await sim.control.createRepo({ owner, name: "ci-policy", files: { ".github/workflows/ci.yml": CI } });
    const admin = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken(owner) });
    const p = { owner, repo: "ci-policy" };
    const dispatchAndWait = async (): Promise<{ conclusion: string | null; log: string }> => {
      const res = await admin.request("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", {
        ...p,
        workflow_id: "ci.yml",
        ref: "main",
        return_run_details: true,
      });
      const runId = (res.data as unknown as { workflow_run_id: number }).workflow_run_id;
      const run = await completedRun(admin, "ci-policy", runId);
      const { data: jobs } = await admin.rest.actions.listJobsForWorkflowRun({ ...p, run_id: runId });
      return { conclusion: run.conclusion, log: jobs.jobs.map((j) => sim.control.logsOfJob(j.id) ?? "").join("") };
    };

    await admin.rest.actions.setGithubActionsPermissionsRepository({ ...p, enabled: true, allowed_actions: "local_only" });
    expect((await admin.rest.actions.getGithubActionsPermissionsRepository(p)).data).toMatchObject({ allowed_actions: "local_only" });
    // The selected-actions lists are for the "selected" policy only.
    expect(await status(admin.rest.actions.getAllowedActionsRepository(p))).toBe(409);
    const local = await dispatchAndWait();
    expect(local.conclusion).toBe("startup_failure");
    expect(local.log).toContain(
      "##[error]The actions actions/checkout@v4, other/tool@v1 are not allowed in acme/ci-policy because all actions must be from a repository owned by acme.",
    );
    expect(local.log).not.toContain("noop executor");

    await admin.rest.actions.setGithubActionsPermissionsRepository({ ...p, enabled: true, allowed_actions: "selected" });
    const perms = (await admin.rest.actions.getGithubActionsPermissionsRepository(p)).data;
    expect(perms.selected_actions_url).toBe(`${sim.apiUrl}/repos/${owner}/ci-policy/actions/permissions/selected-actions`);
    await admin.rest.actions.setAllowedActionsRepository({
      ...p,
      github_owned_allowed: true,
      verified_allowed: false,
      patterns_allowed: [],
    });
    expect((await admin.rest.actions.getAllowedActionsRepository(p)).data).toEqual({
      github_owned_allowed: true,
      verified_allowed: false,
      patterns_allowed: [],
    });
    const selected = await dispatchAndWait();
    expect(selected.conclusion).toBe("startup_failure");
    expect(selected.log).toContain(
      "The action other/tool@v1 is not allowed in acme/ci-policy because all actions must be from a repository owned by acme or created by GitHub.",
    );
    expect(await status(person.rest.actions.setAllowedActionsRepository({ ...p, patterns_allowed: ["other/*"] }))).toBe(403);
    await admin.rest.actions.setAllowedActionsRepository({ ...p, github_owned_allowed: true, patterns_allowed: ["other/tool@*"] });
    const allowed = await dispatchAndWait();
    expect(allowed.conclusion).toBe("success");
    expect(allowed.log).toContain("noop executor");
    expect(sim.violations.filter((v) => v.kind !== "request")).toEqual([]);
  });
});

describe("actions secrets", () => {
  it("sealed with the repository's public key, stored by name, listed without values; admins and the Secrets permission only", async () => {
    await sim.control.createRepo({
      owner,
      name: "vault",
      files: { "README.md": "# vault\n" },
      collaborators: { alice: "write", rita: "read" },
    });
    const p = { owner, repo: "vault" };
    const admin = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken(owner) });
    const doctor = await doctorApp({ secrets: "write" });
    // "Anyone with read access to the repository can use this endpoint."
    const { data: key } = await reader.rest.actions.getRepoPublicKey(p);
    expect(key.key_id).toMatch(/^\d+$/);
    expect(Buffer.from(key.key, "base64")).toHaveLength(32);
    await sodium.ready;
    const seal = (value: string) =>
      sodium.to_base64(
        sodium.crypto_box_seal(sodium.from_string(value), sodium.from_base64(key.key, sodium.base64_variants.ORIGINAL)),
        sodium.base64_variants.ORIGINAL,
      );

    const put = await doctor.rest.actions.createOrUpdateRepoSecret({
      ...p,
      secret_name: "model_key",
      encrypted_value: seal("sk-1"),
      key_id: key.key_id,
    });
    expect(put.status).toBe(201);
    const again = await admin.rest.actions.createOrUpdateRepoSecret({
      ...p,
      secret_name: "MODEL_KEY",
      encrypted_value: seal("sk-2"),
      key_id: key.key_id,
    });
    expect(again.status).toBe(204);
    // A value not sealed with the current key is refused.
    expect(
      await refusedWith(
        admin.rest.actions.createOrUpdateRepoSecret({ ...p, secret_name: "OTHER", encrypted_value: seal("x"), key_id: "1" }),
        422,
      ),
    ).toBe("Bad request - validation failed due to an improperly encrypted secret");
    expect(
      await status(
        admin.rest.actions.createOrUpdateRepoSecret({
          ...p,
          secret_name: "OTHER",
          encrypted_value: Buffer.from("plain").toString("base64"),
          key_id: key.key_id,
        }),
      ),
    ).toBe(422);
    expect(
      await status(
        admin.rest.actions.createOrUpdateRepoSecret({ ...p, secret_name: "GITHUB_X", encrypted_value: seal("x"), key_id: key.key_id }),
      ),
    ).toBe(422);
    sim.control.setSecret(`${owner}/vault`, "Seeded", "by-the-test");

    const { data: list } = await doctor.rest.actions.listRepoSecrets(p);
    expect(list.total_count).toBe(2);
    expect(list.secrets.map((s) => s.name)).toEqual(["MODEL_KEY", "SEEDED"]);
    const { data: one } = await admin.rest.actions.getRepoSecret({ ...p, secret_name: "model_key" });
    expect(Object.keys(one).sort()).toEqual(["created_at", "name", "updated_at"]);
    expect(JSON.stringify(list)).not.toContain("sk-2");
    // The value really is stored (what runs get as secrets.*).
    expect(sim.core.state.repoByName(owner, "vault")!.secrets!.byName.get("MODEL_KEY")!.value).toBe("sk-2");

    // A writer is not an administrator; an App needs the Secrets permission (read to list, write to set).
    expect(await refusedWith(person.rest.actions.listRepoSecrets(p), 403)).toBe("Must have admin rights to Repository.");
    expect(await refusedWith(gh.rest.actions.listRepoSecrets({ owner, repo }), 403)).toBe("Resource not accessible by integration");
    const readOnly = await doctorApp({ secrets: "read" });
    expect((await readOnly.rest.actions.getRepoSecret({ ...p, secret_name: "SEEDED" })).status).toBe(200);
    expect(await status(readOnly.rest.actions.deleteRepoSecret({ ...p, secret_name: "SEEDED" }))).toBe(403);

    expect((await doctor.rest.actions.deleteRepoSecret({ ...p, secret_name: "seeded" })).status).toBe(204);
    expect(await status(admin.rest.actions.getRepoSecret({ ...p, secret_name: "SEEDED" }))).toBe(404);
    expect(await status(admin.rest.actions.deleteRepoSecret({ ...p, secret_name: "SEEDED" }))).toBe(404);
  });

  it("stored secrets reach the repository's workflow runs", async () => {
    const own = await createSim();
    try {
      await own.control.createRepo({
        owner,
        name: "vault",
        files: { ".github/workflows/ci.yml": "on: workflow_dispatch\njobs:\n  a:\n    runs-on: x\n    steps:\n      - run: echo\n" },
      });
      const seen: Array<Record<string, string>> = [];
      own.onWorkflowDispatch((d) => {
        seen.push(d.secrets);
        d.complete("success");
      });
      const kit = new Octokit({ baseUrl: own.apiUrl, auth: own.control.userToken(owner) });
      const { data: key } = await kit.rest.actions.getRepoPublicKey({ owner, repo: "vault" });
      await sodium.ready;
      const sealed = sodium.to_base64(
        sodium.crypto_box_seal(sodium.from_string("from-rest"), sodium.from_base64(key.key, sodium.base64_variants.ORIGINAL)),
        sodium.base64_variants.ORIGINAL,
      );
      await kit.rest.actions.createOrUpdateRepoSecret({
        owner,
        repo: "vault",
        secret_name: "API_TOKEN",
        encrypted_value: sealed,
        key_id: key.key_id,
      });
      own.control.setSecret(`${owner}/vault`, "SEEDED", "from-control");
      await kit.rest.actions.createWorkflowDispatch({ owner, repo: "vault", workflow_id: "ci.yml", ref: "main" });
      for (let i = 0; i < 100 && !seen.length; i++) await new Promise((r) => setTimeout(r, 10));
      expect(seen).toEqual([{ API_TOKEN: "from-rest", SEEDED: "from-control" }]);
      expect(own.violations).toEqual([]);
    } finally {
      await own.close();
    }
  });
});

describe("branch protection", () => {
  it("admins protect a branch; direct pushes and ref updates are refused, a PR merges once approved and its checks passed", async () => {
    await sim.control.createRepo({
      owner,
      name: "guarded",
      files: { "README.md": "# guarded\n" },
      collaborators: { alice: "write", bob: "write", rita: "read" },
    });
    const p = { owner, repo: "guarded", branch: "main" };
    const admin = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken(owner) });
    const bob = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken("bob") });
    expect(await refusedWith(admin.rest.repos.getBranchProtection(p), 404)).toBe("Branch not protected");
    expect(await status(admin.rest.repos.getBranchProtection({ ...p, branch: "nope" }))).toBe(404);
    const body = {
      ...p,
      required_status_checks: { strict: false, contexts: ["ci"] },
      enforce_admins: true,
      required_pull_request_reviews: { required_approving_review_count: 1, dismiss_stale_reviews: true },
      restrictions: null,
    };
    // Administrators only: a writer, a reader, an App without Administration (write to protect).
    expect(await refusedWith(person.rest.repos.updateBranchProtection(body), 403)).toBe("Must have admin rights to Repository.");
    expect(await status(reader.rest.repos.getBranchProtection(p))).toBe(403);
    expect(await refusedWith(gh.rest.repos.getBranchProtection({ owner, repo, branch: "main" }), 403)).toBe(
      "Resource not accessible by integration",
    );
    expect(await status((await doctorApp({ administration: "read" })).rest.repos.updateBranchProtection(body))).toBe(403);
    // Restrictions are for organization repositories.
    expect(
      await refusedWith(admin.rest.repos.updateBranchProtection({ ...body, restrictions: { users: ["alice"], teams: [] } }), 422),
    ).toBe("Only organization repositories can have users and team restrictions");

    const { data: set } = await admin.rest.repos.updateBranchProtection(body);
    expect(set.required_pull_request_reviews?.required_approving_review_count).toBe(1);
    expect(set.enforce_admins?.enabled).toBe(true);
    const { data: got } = await (await doctorApp({ administration: "read" })).rest.repos.getBranchProtection(p);
    expect(got.required_status_checks?.contexts).toEqual(["ci"]);
    expect(got.required_status_checks?.checks).toEqual([{ context: "ci", app_id: null }]);
    expect(got.allow_force_pushes?.enabled).toBe(false);
    expect(got.allow_deletions?.enabled).toBe(false);
    expect((await person.rest.repos.getBranch(p)).data.protected).toBe(true);
    expect((await person.rest.repos.listBranches({ owner, repo: "guarded" })).data.map((b) => [b.name, b.protected])).toEqual([
      ["main", true],
    ]);

    const work = mkdtempSync(join(tmpdir(), "forge-conf-guarded-"));
    try {
      const aliceToken = sim.control.userToken("alice");
      await gitIn(work, ["clone", "-q", `${sim.gitUrl}/${owner}/guarded.git`, "w"], aliceToken);
      const dir = join(work, "w");
      const mainBefore = (await gitIn(dir, ["rev-parse", "HEAD"])).trim();
      await gitIn(dir, ["commit", "-q", "--allow-empty", "-m", "straight to main"]);
      const refused = await gitRefused(dir, ["push", "-q", "origin", "HEAD:main"], aliceToken);
      expect(refused).toContain("GH006: Protected branch update failed for refs/heads/main.");
      expect(refused).toContain("Changes must be made through a pull request.");
      expect((await admin.rest.repos.getBranch(p)).data.commit.sha).toBe(mainBefore);
      // Through the refs API: 422; an administrator is held to it too under enforce_admins.
      await gitIn(dir, ["push", "-q", "origin", "HEAD:feature"], aliceToken);
      const feature = (await gitIn(dir, ["rev-parse", "HEAD"])).trim();
      expect(await refusedWith(person.rest.git.updateRef({ owner, repo: "guarded", ref: "heads/main", sha: feature }), 422)).toContain(
        "Changes must be made through a pull request.",
      );
      expect(await status(admin.rest.git.updateRef({ owner, repo: "guarded", ref: "heads/main", sha: feature }))).toBe(422);
      expect(await status(admin.rest.git.deleteRef({ owner, repo: "guarded", ref: "heads/main" }))).toBe(422);

      // The pull request: approvals from writers, then the required check.
      const { data: pr } = await person.rest.pulls.create({ owner, repo: "guarded", head: "feature", base: "main", title: "Feature" });
      const merge = () => person.rest.pulls.merge({ owner, repo: "guarded", pull_number: pr.number });
      expect(await refusedWith(merge(), 405)).toBe("At least 1 approving review is required by reviewers with write access.");
      await reader.rest.pulls.createReview({ owner, repo: "guarded", pull_number: pr.number, event: "APPROVE" });
      expect(await refusedWith(merge(), 405)).toBe("At least 1 approving review is required by reviewers with write access.");
      await bob.rest.pulls.createReview({ owner, repo: "guarded", pull_number: pr.number, event: "APPROVE" });
      expect(await refusedWith(merge(), 405)).toBe('Required status check "ci" is expected.');
      const checker = await doctorApp({ checks: "write" });
      await checker.rest.checks.create({
        owner,
        repo: "guarded",
        name: "ci",
        head_sha: feature,
        status: "completed",
        conclusion: "failure",
      });
      expect(await refusedWith(merge(), 405)).toBe('Required status check "ci" is failing.');
      await checker.rest.checks.create({
        owner,
        repo: "guarded",
        name: "ci",
        head_sha: feature,
        status: "completed",
        conclusion: "success",
      });
      expect((await merge()).data.merged).toBe(true);

      // Without enforce_admins, administrators are exempt; force pushes and deletions stay refused to the others.
      await admin.rest.repos.updateBranchProtection({ ...body, enforce_admins: false });
      await gitIn(dir, ["fetch", "-q", "origin"], aliceToken);
      await gitIn(dir, ["reset", "-q", "--hard", "origin/main"]);
      await gitIn(dir, ["commit", "-q", "--allow-empty", "-m", "admin fix"]);
      await gitIn(dir, ["push", "-q", "origin", "HEAD:main"], sim.control.userToken(owner));
      await admin.rest.repos.updateBranchProtection({
        ...p,
        branch: "feature",
        required_status_checks: null,
        enforce_admins: null,
        required_pull_request_reviews: null,
        restrictions: null,
      });
      await gitIn(dir, ["commit", "-q", "--allow-empty", "-m", "fast-forward is fine"]);
      await gitIn(dir, ["push", "-q", "origin", "HEAD:feature", "--force"], aliceToken);
      await gitIn(dir, ["reset", "-q", "--hard", "HEAD~2"]);
      await gitIn(dir, ["commit", "-q", "--allow-empty", "-m", "rewritten"]);
      const forced = await gitRefused(dir, ["push", "-q", "--force", "origin", "HEAD:feature"], aliceToken);
      expect(forced).toContain("GH006: Protected branch update failed for refs/heads/feature.");
      expect(forced).toContain("Cannot force-push to this protected branch");
      expect(await gitRefused(dir, ["push", "-q", "origin", "--delete", "feature"], aliceToken)).toContain(
        "Cannot delete this protected branch",
      );
    } finally {
      rmSync(work, { recursive: true, force: true });
    }

    expect((await admin.rest.repos.deleteBranchProtection(p)).status).toBe(204);
    expect(await status(admin.rest.repos.getBranchProtection(p))).toBe(404);
    expect((await admin.rest.repos.getBranch(p)).data.protected).toBe(false);
    expect(sim.violations.filter((v) => v.kind !== "request")).toEqual([]);
  });
});

describe("apps from a manifest", () => {
  it("the setup page's form → GitHub's create page → redirect with code and state → conversion gives id, key and secret, once", async () => {
    const manifest = {
      name: "Forge Setup Test",
      url: "https://forge.example",
      redirect_url: "http://127.0.0.1:9/setup/done",
      hook_attributes: { url: receiver.url },
      public: false,
      default_permissions: { contents: "write", issues: "write", metadata: "read" },
      default_events: ["push", "issues"],
    };
    const form = new URLSearchParams({ manifest: JSON.stringify(manifest) });
    const shown = await fetch(`${sim.url}/settings/apps/new?state=s-123`, { method: "POST", body: form });
    expect(shown.status).toBe(200);
    const html = await shown.text();
    expect(html).toContain('id="create"');
    expect(html).toContain('value="Forge Setup Test"');
    // The person names the App and creates it: back to the redirect URL with the code and the state.
    const confirm = new URLSearchParams({ manifest: JSON.stringify(manifest), state: "s-123", name: "Forge Setup Test", login: owner });
    const created = await fetch(`${sim.url}/settings/apps/new/confirm`, { method: "POST", body: confirm, redirect: "manual" });
    expect(created.status).toBe(302);
    const back = new URL(created.headers.get("location")!);
    expect(`${back.origin}${back.pathname}`).toBe("http://127.0.0.1:9/setup/done");
    expect(back.searchParams.get("state")).toBe("s-123");
    const code = back.searchParams.get("code")!;
    expect(code).toMatch(/^[0-9a-f]{40}$/);

    // The conversion needs no authentication; its answer is validated against GitHub's description.
    const anon = new Octokit({ baseUrl: sim.apiUrl });
    const { data: app } = await anon.rest.apps.createFromManifest({ code });
    expect(app.slug).toBe("forge-setup-test");
    expect((app.owner as { login?: string } | null)?.login).toBe(owner);
    expect(app.permissions).toMatchObject({ contents: "write", issues: "write" });
    expect(app.events).toEqual(["push", "issues"]);
    expect(app.webhook_secret).toMatch(/^[0-9a-f]{40}$/);
    expect(app.pem).toContain("BEGIN RSA PRIVATE KEY");
    // The key it handed out signs the App's JWT.
    const asNew = new Octokit({ baseUrl: sim.apiUrl, auth: appJwt(app.id, app.pem) });
    expect((await asNew.rest.apps.getAuthenticated()).data!.slug).toBe("forge-setup-test");
    // A code works once.
    expect(await status(anon.rest.apps.createFromManifest({ code }))).toBe(404);
    // A form without a manifest, or with one that is not JSON, is refused on the page.
    expect((await fetch(`${sim.url}/settings/apps/new`, { method: "POST", body: new URLSearchParams({ manifest: "{" }) })).status).toBe(
      422,
    );
  });
});

describe("coverage", () => {
  it("every implemented operation answered a success at least once, with no schema violation", async () => {
    await sim.idle();
    const ok = new Set([...sim.core.served].filter((s) => /\s(2\d\d|302)$/.test(s)).map((s) => s.split(" ")[0]));
    const missing = sim.operations.filter((op) => !ok.has(op));
    expect(missing).toEqual([]);
    // Deliberately invalid requests (the 422 checks above) are the only request violations.
    expect(sim.violations.filter((v) => v.kind !== "request")).toEqual([]);
    expect(receiver.received.every((h) => h.signatureValid)).toBe(true);
    expect(receiver.received.filter((h) => h.schemaError)).toEqual([]);
  });
});

describe("installation lifecycle", () => {
  it("adds repositories (installation_repositories.added) and uninstalls (installation.deleted, tokens revoked)", async () => {
    await sim.control.createRepo({ owner, name: "later", files: { "x.txt": "x\n" } });
    expect(await status(gh.rest.repos.get({ owner, repo: "later" }))).toBe(404);
    sim.control.addInstallationRepositories(installationId, [`${owner}/later`]);
    const { data: tok } = await asApp.rest.apps.createInstallationAccessToken({ installation_id: installationId });
    const fresh = new Octokit({ baseUrl: sim.apiUrl, auth: tok.token });
    expect((await fresh.rest.repos.get({ owner, repo: "later" })).status).toBe(200);
    sim.control.uninstall(installationId);
    expect(await status(fresh.rest.repos.get({ owner, repo: "later" }))).toBe(401);
    await sim.idle();
    const added = await receiver.waitFor((h) => h.event === "installation_repositories" && h.action === "added");
    expect((added.payload.repositories_added as Array<{ full_name: string }>).map((r) => r.full_name)).toEqual([`${owner}/later`]);
    await receiver.waitFor((h) => h.event === "installation" && h.action === "deleted");
    expect(receiver.received.filter((h) => h.event.startsWith("installation")).every((h) => h.signatureValid && !h.schemaError)).toBe(true);
    expect(sim.violations.filter((v) => v.kind !== "request")).toEqual([]);
  });
});
