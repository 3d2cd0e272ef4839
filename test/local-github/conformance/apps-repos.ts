// Conformance: Apps, installations, repositories, contents and the git database — the tests of each `describe` of conformance.test.ts, in its one world.
import { Octokit } from "@octokit/rest";
import { expect, it } from "vitest";
import { appJwt, appKeys } from "../support/helpers.js";
import { owner, repo, status, w } from "./world.js";

/** describe("apps") */
export function apps(): void {
  it("lists installations and an installation's repositories page by page (Link headers), as a restarted App reads them", async () => {
    const k = appKeys();
    const other = w.sim.control.registerApp({
      slug: "forge-pages",
      publicKeyPem: k.publicKeyPem,
      permissions: { contents: "read", metadata: "read" },
      events: [],
    });
    for (const name of ["pages-1", "pages-2", "pages-3"])
      await w.sim.control.createRepo({ owner: "pager", name, files: { "README.md": "# p\n" } });
    const inst = w.sim.control.install(other.id, "pager", "all");
    const app = new Octokit({ baseUrl: w.sim.apiUrl, auth: appJwt(other.id, k.privateKeyPem) });
    const first = await app.rest.apps.listInstallations({ per_page: 1 });
    expect(first.data.map((i) => i.id)).toEqual([inst.id]);
    const token = (await app.rest.apps.createInstallationAccessToken({ installation_id: inst.id })).data.token;
    const asInst = new Octokit({ baseUrl: w.sim.apiUrl, auth: token });
    const page1 = await asInst.rest.apps.listReposAccessibleToInstallation({ per_page: 2 });
    expect(page1.data.total_count).toBe(3);
    expect(page1.data.repositories).toHaveLength(2);
    expect(page1.headers.link).toMatch(/rel="next"/);
    const all = await asInst.paginate(asInst.rest.apps.listReposAccessibleToInstallation, { per_page: 2 });
    expect(all.map((r) => r.full_name).sort()).toEqual(["pager/pages-1", "pager/pages-2", "pager/pages-3"]);
    expect(w.sim.violations).toEqual([]);
  });

  it("authenticated app, installations, repository installation, token", async () => {
    expect((await w.asApp.rest.apps.getAuthenticated()).data?.slug).toBe("forge-conf");
    expect((await w.asApp.rest.apps.listInstallations()).data.map((i) => i.id)).toEqual([w.installationId]);
    expect((await w.asApp.rest.apps.getInstallation({ installation_id: w.installationId })).data.app_id).toBe(w.appId);
    expect((await w.asApp.rest.apps.getRepoInstallation({ owner, repo })).data.id).toBe(w.installationId);
    const scoped = await w.asApp.rest.apps.createInstallationAccessToken({
      installation_id: w.installationId,
      repositories: [repo],
      permissions: { contents: "read" },
    });
    expect(scoped.status).toBe(201);
    expect(scoped.data.permissions).toEqual({ contents: "read" });
    // More than the installation has → 422.
    expect(
      await status(
        w.asApp.rest.apps.createInstallationAccessToken({ installation_id: w.installationId, permissions: { administration: "write" } }),
      ),
    ).toBe(422);
    // A read-only token cannot write: 403 "Resource not accessible by integration".
    const ro = new Octokit({ baseUrl: w.sim.apiUrl, auth: scoped.data.token });
    const err = await ro.rest.git
      .createBlob({ owner, repo, content: "x" })
      .catch((e: { status: number; response: { data: { message: string; documentation_url: string } } }) => e);
    expect((err as { status: number }).status).toBe(403);
    expect((err as { response: { data: { message: string } } }).response.data.message).toBe("Resource not accessible by integration");
    expect((err as { response: { data: { documentation_url: string } } }).response.data.documentation_url).toMatch(
      /^https:\/\/docs\.github\.com\/rest\/git\/blobs/,
    );
    expect((await w.gh.rest.rateLimit.get()).data.rate.limit).toBe(5000);
    const { data: repos } = await w.gh.rest.apps.listReposAccessibleToInstallation();
    expect(repos.repositories.map((r) => r.full_name)).toEqual([`${owner}/${repo}`]);
    expect(await status(w.asApp.rest.apps.listReposAccessibleToInstallation())).toBe(403);
  });

  it("401 for bad credentials, JWT rules, and JWT-only endpoints", async () => {
    const bad = new Octokit({ baseUrl: w.sim.apiUrl, auth: "ghs_nope" });
    expect(await status(bad.rest.repos.get({ owner, repo }))).toBe(401);
    const keys = appKeys();
    const nowSec = Math.floor(Date.now() / 1000);
    const tooLong = new Octokit({
      baseUrl: w.sim.apiUrl,
      auth: appJwt(w.appId, keys.privateKeyPem, { iat: nowSec - 30, exp: nowSec + 900 }),
    });
    expect(await status(tooLong.rest.apps.getAuthenticated())).toBe(401);
    const expired = new Octokit({
      baseUrl: w.sim.apiUrl,
      auth: appJwt(w.appId, keys.privateKeyPem, { iat: nowSec - 700, exp: nowSec - 100 }),
    });
    expect(await status(expired.rest.apps.getAuthenticated())).toBe(401);
    const future = new Octokit({
      baseUrl: w.sim.apiUrl,
      auth: appJwt(w.appId, keys.privateKeyPem, { iat: nowSec + 300, exp: nowSec + 600 }),
    });
    expect(await status(future.rest.apps.getAuthenticated())).toBe(401);
    const unknownApp = new Octokit({ baseUrl: w.sim.apiUrl, auth: appJwt(999999, keys.privateKeyPem) });
    expect(await status(unknownApp.rest.apps.getAuthenticated())).toBe(401);
    // An installation token on a JWT-only endpoint, and a JWT on a repository endpoint.
    expect(await status(w.gh.rest.apps.getAuthenticated())).toBe(401);
    expect(await status(w.asApp.rest.repos.get({ owner, repo }))).toBe(403);
  });
}

/** describe("repositories, contents, git database") */
export function repositories(): void {
  it("repository, branches, commits, contents", async () => {
    const { data: r } = await w.gh.rest.repos.get({ owner, repo });
    expect(r.default_branch).toBe("main");
    expect(r.clone_url).toBe(`${w.sim.url}/${owner}/${repo}.git`);
    expect((await w.gh.rest.repos.listBranches({ owner, repo })).data.map((b) => b.name)).toEqual(["main"]);
    const { data: branch } = await w.gh.rest.repos.getBranch({ owner, repo, branch: "main" });
    const { data: commit } = await w.gh.rest.repos.getCommit({ owner, repo, ref: branch.commit.sha });
    expect(commit.sha).toBe(branch.commit.sha);
    const { data: dir } = await w.gh.rest.repos.getContent({ owner, repo, path: "src" });
    expect(Array.isArray(dir) && dir.map((d) => d.name)).toEqual(["a.txt"]);
    expect(await status(w.gh.rest.repos.getContent({ owner, repo, path: "missing.txt" }))).toBe(404);

    const created = await w.gh.rest.repos.createOrUpdateFileContents({
      owner,
      repo,
      path: "docs/x.md",
      message: "add x",
      content: Buffer.from("x1").toString("base64"),
    });
    expect(created.status).toBe(201);
    // Updating without the blob sha is 422, with a stale sha 409.
    expect(
      await status(w.gh.rest.repos.createOrUpdateFileContents({ owner, repo, path: "docs/x.md", message: "x", content: "eDI=" })),
    ).toBe(422);
    expect(
      await status(
        w.gh.rest.repos.createOrUpdateFileContents({ owner, repo, path: "docs/x.md", message: "x", content: "eDI=", sha: "0".repeat(40) }),
      ),
    ).toBe(409);
    const updated = await w.gh.rest.repos.createOrUpdateFileContents({
      owner,
      repo,
      path: "docs/x.md",
      message: "x2",
      content: "eDI=",
      sha: created.data.content!.sha!,
    });
    expect(updated.status).toBe(200);
    const { data: file } = await w.gh.rest.repos.getContent({ owner, repo, path: "docs/x.md" });
    expect(Buffer.from((file as { content: string }).content, "base64").toString()).toBe("x2");
  });

  it("blobs, trees, commits and refs with fast-forward-only updates", async () => {
    const { data: main } = await w.gh.rest.git.getRef({ owner, repo, ref: "heads/main" });
    const { data: blob } = await w.gh.rest.git.createBlob({
      owner,
      repo,
      content: Buffer.from([0, 1, 2]).toString("base64"),
      encoding: "base64",
    });
    expect((await w.gh.rest.git.getBlob({ owner, repo, file_sha: blob.sha })).data.size).toBe(3);
    const { data: base } = await w.gh.rest.git.getCommit({ owner, repo, commit_sha: main.object.sha });
    const { data: tree } = await w.gh.rest.git.createTree({
      owner,
      repo,
      base_tree: base.tree.sha,
      tree: [
        { path: "bin/data", mode: "100644", type: "blob", sha: blob.sha },
        { path: "src/a.txt", mode: "100644", type: "blob", sha: null },
      ],
    });
    const { data: full } = await w.gh.rest.git.getTree({ owner, repo, tree_sha: tree.sha, recursive: "1" });
    const paths = full.tree.map((t) => t.path);
    expect(paths).toContain("bin/data");
    expect(paths).not.toContain("src/a.txt");
    const { data: c1 } = await w.gh.rest.git.createCommit({ owner, repo, message: "c1", tree: tree.sha, parents: [main.object.sha] });
    expect(await status(w.gh.rest.git.createCommit({ owner, repo, message: "bad", tree: "f".repeat(40), parents: [] }))).toBe(422);

    await w.gh.rest.git.createRef({ owner, repo, ref: "refs/forge/run-1", sha: main.object.sha });
    expect(await status(w.gh.rest.git.createRef({ owner, repo, ref: "refs/forge/run-1", sha: main.object.sha }))).toBe(422);
    // GitHub's answers to a ref it cannot create: taken, in the way of another, or a name git refuses.
    const refusal = (ref: string) =>
      w.gh.rest.git.createRef({ owner, repo, ref, sha: main.object.sha }).then(
        () => "created",
        (e: { status: number; response: { data: { message: string } } }) => `${e.status} ${e.response.data.message}`,
      );
    expect(await refusal("refs/forge/run-1")).toBe("422 Reference already exists");
    expect(await refusal("refs/forge/run-1/a")).toBe("422 Reference update failed");
    for (const bad of ["refs/heads/forge/r/fix..up/1", "refs/heads/forge/r/cache.lock/1", "refs/heads/forge/r/a/1.", "refs/heads/a b"])
      expect(await refusal(bad)).toBe(`422 ${bad} is not a valid ref name.`);
    await w.gh.rest.git.updateRef({ owner, repo, ref: "forge/run-1", sha: c1.sha });
    // A sibling of c1 (same parent) does not descend from the tip: compare-and-swap lost.
    const { data: c2 } = await w.gh.rest.git.createCommit({ owner, repo, message: "c2", tree: tree.sha, parents: [main.object.sha] });
    const lost = await w.gh.rest.git
      .updateRef({ owner, repo, ref: "forge/run-1", sha: c2.sha })
      .catch((e: { status: number; response: { data: { message: string } } }) => e);
    expect((lost as { status: number }).status).toBe(422);
    expect((lost as { response: { data: { message: string } } }).response.data.message).toBe("Update is not a fast forward");
    expect((await w.gh.rest.git.updateRef({ owner, repo, ref: "forge/run-1", sha: c2.sha, force: true })).data.object.sha).toBe(c2.sha);
    expect((await w.gh.rest.git.listMatchingRefs({ owner, repo, ref: "forge/" })).data.map((r) => r.ref)).toEqual(["refs/forge/run-1"]);
    await w.gh.rest.git.deleteRef({ owner, repo, ref: "forge/run-1" });
    expect(await status(w.gh.rest.git.getRef({ owner, repo, ref: "forge/run-1" }))).toBe(404);
    expect(await status(w.gh.rest.git.deleteRef({ owner, repo, ref: "forge/run-1" }))).toBe(422);
  });
}

/** describe("repositories: merges, compare, permissions, statuses") */
export function repositoryMerges(): void {
  it("server-side merges (201/204/409) and compare", async () => {
    const { data: main } = await w.gh.rest.git.getRef({ owner, repo, ref: "heads/main" });
    const commitFile = async (parent: string, path: string, content: string, msg: string) => {
      const { data: p } = await w.gh.rest.git.getCommit({ owner, repo, commit_sha: parent });
      const { data: t } = await w.gh.rest.git.createTree({
        owner,
        repo,
        base_tree: p.tree.sha,
        tree: [{ path, mode: "100644", type: "blob", content }],
      });
      return (await w.gh.rest.git.createCommit({ owner, repo, message: msg, tree: t.sha, parents: [parent] })).data.sha;
    };
    const left = await commitFile(main.object.sha, "conflict.txt", "left\n", "left");
    const right = await commitFile(main.object.sha, "conflict.txt", "right\n", "right");
    const other = await commitFile(main.object.sha, "other.txt", "o\n", "other");
    await w.gh.rest.git.createRef({ owner, repo, ref: "refs/heads/int", sha: left });
    await w.gh.rest.git.createRef({ owner, repo, ref: "refs/heads/right", sha: right });
    await w.gh.rest.git.createRef({ owner, repo, ref: "refs/heads/other", sha: other });
    const merged = await w.gh.rest.repos.merge({ owner, repo, base: "int", head: "other" });
    expect(merged.status).toBe(201);
    expect(merged.data.parents.map((p) => p.sha)).toEqual([left, other]);
    expect((await w.gh.rest.repos.merge({ owner, repo, base: "int", head: "other" })).status).toBe(204);
    expect(await status(w.gh.rest.repos.merge({ owner, repo, base: "int", head: "right" }))).toBe(409);
    expect(await status(w.gh.rest.repos.merge({ owner, repo, base: "nope", head: "right" }))).toBe(404);
    const { data: cmp } = await w.gh.rest.repos.compareCommits({ owner, repo, base: "main", head: "int" });
    expect(cmp.status).toBe("ahead");
    expect(cmp.ahead_by).toBe(3);
    expect(cmp.files?.map((f) => f.filename).sort()).toEqual(["conflict.txt", "other.txt"]);
    const { data: div } = await w.gh.rest.repos.compareCommits({ owner, repo, base: "right", head: "int" });
    expect(div.status).toBe("diverged");
  });

  it("collaborator permission and commit statuses", async () => {
    const perm = await w.gh.rest.repos.getCollaboratorPermissionLevel({ owner, repo, username: "alice" });
    expect(perm.data.permission).toBe("write");
    expect((await w.gh.rest.repos.getCollaboratorPermissionLevel({ owner, repo, username: "rita" })).data.permission).toBe("read");
    expect((await w.gh.rest.repos.getCollaboratorPermissionLevel({ owner, repo, username: "acme" })).data.permission).toBe("admin");
    const { data: main } = await w.gh.rest.git.getRef({ owner, repo, ref: "heads/main" });
    const sha = main.object.sha;
    await w.gh.rest.repos.createCommitStatus({ owner, repo, sha, state: "pending", context: "forge/a" });
    await w.gh.rest.repos.createCommitStatus({ owner, repo, sha, state: "success", context: "forge/a" });
    await w.gh.rest.repos.createCommitStatus({
      owner,
      repo,
      sha,
      state: "success",
      context: "forge/b",
      target_url: "http://example.test/x",
    });
    const { data: combined } = await w.gh.rest.repos.getCombinedStatusForRef({ owner, repo, ref: "main" });
    expect(combined.state).toBe("success");
    expect(combined.total_count).toBe(2);
    const statuses = await w.gh.rest.repos.listCommitStatusesForRef({ owner, repo, ref: sha, per_page: 2 });
    expect(statuses.data).toHaveLength(2);
    expect(statuses.headers.link).toContain('rel="next"');
    const all = await w.gh.paginate(w.gh.rest.repos.listCommitStatusesForRef, { owner, repo, ref: sha, per_page: 2 });
    expect(all).toHaveLength(3);
  });
}
