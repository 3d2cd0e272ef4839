// The "done when" of the local GitHub: plain @octokit/rest creates a branch, commits a file through
// the git database API, opens a pull request and merges it, while a separate receiver gets push
// and pull_request webhooks with valid signatures and schema-valid payloads.
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSim, type Sim } from "../../src/local-github/server.js";
import { appJwt, appKeys, startReceiver, type Receiver } from "./support/helpers.js";

const SECRET = "s3cret";
let sim: Sim;
let receiver: Receiver;
let appId: number;
let installationId: number;

beforeAll(async () => {
  sim = await createSim();
  receiver = await startReceiver(SECRET);
  await sim.control.createRepo({ owner: "acme", name: "widgets", files: { "README.md": "# widgets\n" } });
  const keys = appKeys();
  appId = sim.control.registerApp({
    slug: "forge",
    publicKeyPem: keys.publicKeyPem,
    webhookUrl: receiver.url,
    webhookSecret: SECRET,
    permissions: { contents: "write", pull_requests: "write", issues: "write", checks: "write", actions: "write", statuses: "write" },
    events: [
      "push",
      "create",
      "delete",
      "pull_request",
      "issues",
      "issue_comment",
      "check_run",
      "check_suite",
      "workflow_run",
      "workflow_job",
    ],
  }).id;
  installationId = sim.control.install(appId, "acme", ["acme/widgets"]).id;
});

afterAll(async () => {
  await sim?.close();
  await receiver?.close();
});

describe("plain @octokit/rest against the local GitHub", () => {
  it("branches, commits through the git database, opens and merges a PR, with signed schema-valid webhooks", async () => {
    const asApp = new Octokit({ baseUrl: sim.apiUrl, auth: appJwt(appId, appKeys().privateKeyPem) });
    const { data: inst } = await asApp.rest.apps.getRepoInstallation({ owner: "acme", repo: "widgets" });
    expect(inst.id).toBe(installationId);
    const { data: tok } = await asApp.rest.apps.createInstallationAccessToken({ installation_id: installationId });
    expect(tok.token).toMatch(/^ghs_/);

    const gh = new Octokit({ baseUrl: sim.apiUrl, auth: tok.token });
    const owner = "acme";
    const repo = "widgets";
    const { data: main } = await gh.rest.git.getRef({ owner, repo, ref: "heads/main" });
    await gh.rest.git.createRef({ owner, repo, ref: "refs/heads/feature/one", sha: main.object.sha });

    const { data: base } = await gh.rest.git.getCommit({ owner, repo, commit_sha: main.object.sha });
    const { data: blob } = await gh.rest.git.createBlob({ owner, repo, content: "hello\n", encoding: "utf-8" });
    const { data: tree } = await gh.rest.git.createTree({
      owner,
      repo,
      base_tree: base.tree.sha,
      tree: [{ path: "src/hello.txt", mode: "100644", type: "blob", sha: blob.sha }],
    });
    const { data: commit } = await gh.rest.git.createCommit({
      owner,
      repo,
      message: "Add hello",
      tree: tree.sha,
      parents: [main.object.sha],
    });
    const { data: moved } = await gh.rest.git.updateRef({ owner, repo, ref: "heads/feature/one", sha: commit.sha });
    expect(moved.object.sha).toBe(commit.sha);

    const { data: pr } = await gh.rest.pulls.create({
      owner,
      repo,
      title: "Add hello",
      head: "feature/one",
      base: "main",
      body: "walkthrough",
    });
    expect(pr.number).toBe(1);
    expect(pr.head.sha).toBe(commit.sha);
    const { data: files } = await gh.rest.pulls.listFiles({ owner, repo, pull_number: pr.number });
    expect(files.map((f) => [f.filename, f.status])).toEqual([["src/hello.txt", "added"]]);

    const { data: merged } = await gh.rest.pulls.merge({ owner, repo, pull_number: pr.number, sha: commit.sha });
    expect(merged.merged).toBe(true);
    const { data: after } = await gh.rest.pulls.get({ owner, repo, pull_number: pr.number });
    expect(after.merged).toBe(true);
    expect(after.state).toBe("closed");
    const { data: content } = await gh.rest.repos.getContent({ owner, repo, path: "src/hello.txt" });
    expect(Buffer.from((content as { content: string }).content, "base64").toString()).toBe("hello\n");

    await sim.idle();
    const created = await receiver.waitFor(
      (h) => h.event === "push" && h.payload.ref === "refs/heads/feature/one" && h.payload.created === true,
    );
    const pushed = await receiver.waitFor(
      (h) => h.event === "push" && h.payload.ref === "refs/heads/feature/one" && h.payload.after === commit.sha,
    );
    const opened = await receiver.waitFor((h) => h.event === "pull_request" && h.action === "opened");
    const closed = await receiver.waitFor((h) => h.event === "pull_request" && h.action === "closed");
    const mainPush = await receiver.waitFor((h) => h.event === "push" && h.payload.ref === "refs/heads/main");
    expect((closed.payload.pull_request as { merged: boolean }).merged).toBe(true);
    expect((pushed.payload.commits as Array<{ added: string[] }>)[0]!.added).toEqual(["src/hello.txt"]);
    for (const h of [created, pushed, opened, closed, mainPush]) {
      expect(h.signatureValid).toBe(true);
      expect(h.schemaError).toBeUndefined();
      expect(h.headers["x-github-hook-installation-target-type"]).toBe("integration");
      expect(h.headers["x-github-hook-installation-target-id"]).toBe(String(appId));
      expect(h.headers["x-github-delivery"]).toMatch(/^[0-9a-f-]{36}$/);
      expect((h.payload.installation as { id: number }).id).toBe(installationId);
    }
    expect(receiver.received.every((h) => h.signatureValid && h.schemaError === undefined)).toBe(true);
    expect(sim.violations).toEqual([]);
  });
});
