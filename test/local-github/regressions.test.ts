// Regressions reported against the local GitHub, each reproduced through plain Octokit in strict
// mode (a response violating GitHub's schema becomes a 500, so the call itself fails).
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSim, type Sim } from "../../src/local-github/server.js";
import { appKeys } from "./support/helpers.js";

const owner = "acme";
const repo = "regress";
const WORKFLOW = `name: noop
on: workflow_dispatch
jobs:
  noop:
    runs-on: ubuntu-latest
    steps:
      - run: "true"
`;

let sim: Sim;
let gh: Octokit;

beforeAll(async () => {
  sim = await createSim({ workflowExecutor: "noop" });
  await sim.control.createRepo({
    owner,
    name: repo,
    files: { "README.md": "# r\n", ".github/workflows/noop.yml": WORKFLOW },
    collaborators: { "dependabot[bot]": "write", "renovate[bot]": "read" },
  });
  const app = sim.control.registerApp({
    slug: "forge-regress",
    publicKeyPem: appKeys().publicKeyPem,
    permissions: { contents: "write", pull_requests: "write", issues: "write", actions: "write" },
    events: [],
  });
  const inst = sim.control.install(app.id, owner, "all");
  gh = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.installationToken(inst.id) });
});

afterAll(async () => {
  await sim?.close();
});

const b64 = (s: string) => Buffer.from(s).toString("base64");

describe("bot logins in URLs", () => {
  it("answers the collaborator permission of a [bot] login with valid user URLs", async () => {
    for (const username of ["dependabot[bot]", "renovate[bot]", "github-actions[bot]", "forge-regress[bot]"]) {
      const { data } = await gh.rest.repos.getCollaboratorPermissionLevel({ owner, repo, username });
      expect(data.user!.login).toBe(username);
      for (const u of [data.user!.html_url, data.user!.url, data.user!.repos_url]) expect(u).not.toMatch(/[[\]]/);
    }
    const { data } = await gh.rest.repos.getCollaboratorPermissionLevel({ owner, repo, username: "dependabot[bot]" });
    expect(data.permission).toBe("write");
    expect(sim.violations).toEqual([]);
  });

  it("writes [bot] users' URLs percent-encoded wherever a login appears", async () => {
    const bot = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken("dependabot[bot]") });
    const { data: issue } = await bot.rest.issues.create({ owner, repo, title: "bump" });
    expect(issue.user!.html_url).not.toMatch(/[[\]]/);
    const { data: comment } = await bot.rest.issues.createComment({ owner, repo, issue_number: issue.number, body: "hi" });
    expect(comment.user!.url).not.toMatch(/[[\]]/);
    expect(sim.violations).toEqual([]);
  });
});

describe("GitHub Actions' commit address", () => {
  it("serves a workflow run whose head commit is authored by 41898282+github-actions[bot]@users.noreply.github.com", async () => {
    const email = "41898282+github-actions[bot]@users.noreply.github.com";
    const { data: put } = await gh.rest.repos.createOrUpdateFileContents({
      owner,
      repo,
      path: "bot.txt",
      message: "from a workflow",
      content: b64("x\n"),
      author: { name: "github-actions[bot]", email },
      committer: { name: "github-actions[bot]", email },
    });
    expect(put.commit.author!.email).toBe(email);
    const { data: commit } = await gh.rest.git.getCommit({ owner, repo, commit_sha: put.commit.sha! });
    expect(commit.author.email).toBe(email);
    const res = await gh.request("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", {
      owner,
      repo,
      workflow_id: "noop.yml",
      ref: "main",
      return_run_details: true,
    });
    const runId = (res.data as unknown as { workflow_run_id: number }).workflow_run_id;
    const { data: run } = await gh.rest.actions.getWorkflowRun({ owner, repo, run_id: runId });
    expect(run.head_sha).toBe(put.commit.sha);
    expect(run.head_commit!.author!.email).toBe(email);
    const { data: runs } = await gh.rest.actions.listWorkflowRunsForRepo({ owner, repo });
    expect(runs.workflow_runs.find((r) => r.id === runId)!.head_commit!.author!.email).toBe(email);
    await sim.idle();
    expect(sim.violations).toEqual([]);
  });

  it("commits made by a workflow's GITHUB_TOKEN carry GitHub's no-reply address of the Actions bot", () => {
    const actions = sim.core.state.users.get("github-actions[bot]")!;
    expect(sim.core.email(actions)).toBe("41898282+github-actions[bot]@users.noreply.github.com");
  });
});

describe("labels GitHub creates on the fly", () => {
  it("lists pull requests carrying a label created by issues/add-labels", async () => {
    await gh.rest.git.createRef({
      owner,
      repo,
      ref: "refs/heads/lab",
      sha: (await gh.rest.git.getRef({ owner, repo, ref: "heads/main" })).data.object.sha,
    });
    await gh.rest.repos.createOrUpdateFileContents({ owner, repo, path: "lab.txt", message: "lab", content: b64("l\n"), branch: "lab" });
    const { data: pr } = await gh.rest.pulls.create({ owner, repo, head: "lab", base: "main", title: "labelled" });
    const { data: added } = await gh.rest.issues.addLabels({ owner, repo, issue_number: pr.number, labels: ["forge:brand-new"] });
    // GitHub gives labels it creates on the fly its default color and no description (null).
    expect(added.find((l) => l.name === "forge:brand-new")).toMatchObject({ color: "ededed", description: null });
    const { data: pulls } = await gh.rest.pulls.list({ owner, repo, state: "open" });
    expect(pulls.find((p) => p.number === pr.number)!.labels.map((l) => l.name)).toContain("forge:brand-new");
    await gh.rest.issues.setLabels({ owner, repo, issue_number: pr.number, labels: ["forge:set-new"] });
    await gh.rest.pulls.get({ owner, repo, pull_number: pr.number });
    const { data: label } = await gh.rest.issues.getLabel({ owner, repo, name: "forge:set-new" });
    expect(label.description).toBeNull();
    await sim.idle();
    expect(sim.violations).toEqual([]);
  });
});

describe("concurrent contents writes", () => {
  async function casRound(branch: string, path: string, writers: number): Promise<number[]> {
    const { data: cur } = await gh.rest.repos.getContent({ owner, repo, path, ref: branch });
    const sha = (cur as { sha: string }).sha;
    return Promise.all(
      Array.from({ length: writers }, (_, i) =>
        gh.rest.repos
          .createOrUpdateFileContents({
            owner,
            repo,
            path,
            branch,
            sha,
            message: `journal ${i}`,
            content: b64(`entry ${branch} ${i} ${Math.random()}\n`),
          })
          .then(
            (r) => r.status,
            (e: { status?: number; message?: string }) => (e.status === 409 ? 409 : Promise.reject(e)),
          ),
      ),
    );
  }

  it("gives each compare-and-swap on one branch exactly one winner and 409 to the others", async () => {
    await gh.rest.repos.createOrUpdateFileContents({ owner, repo, path: "journal.md", message: "journal", content: b64("start\n") });
    for (let round = 0; round < 4; round++) {
      const statuses = await casRound("main", "journal.md", 8);
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(7);
    }
    await sim.idle();
    expect(sim.violations).toEqual([]);
  });

  it("keeps branches independent under many concurrent writes", async () => {
    const { data: main } = await gh.rest.git.getRef({ owner, repo, ref: "heads/main" });
    const branches = ["c1", "c2", "c3", "c4"];
    await Promise.all(branches.map((b) => gh.rest.git.createRef({ owner, repo, ref: `refs/heads/${b}`, sha: main.object.sha })));
    await gh.rest.repos.createOrUpdateFileContents({ owner, repo, path: "c1.txt", branch: "c1", message: "c1", content: b64("c1\n") });
    const { data: pr } = await gh.rest.pulls.create({ owner, repo, head: "c1", base: "main", title: "c1" });
    const events: Array<{ event: string; action: string | null; payload: Record<string, unknown> }> = [];
    const off = sim.onEvent((e) => events.push(e));
    for (let round = 0; round < 3; round++) {
      const all = await Promise.all(branches.map((b) => casRound(b, "journal.md", 5)));
      for (const statuses of all) {
        expect(statuses.filter((s) => s === 200)).toHaveLength(1);
        expect(statuses.filter((s) => s === 409)).toHaveLength(4);
      }
    }
    off();
    // Each branch's pushes chain (before = the previous after), and so do the PR's synchronize events.
    for (const b of branches) {
      const pushes = events
        .filter((e) => e.event === "push" && e.payload.ref === `refs/heads/${b}`)
        .map((e) => e.payload as { before: string; after: string });
      expect(pushes).toHaveLength(3);
      for (let i = 1; i < pushes.length; i++) expect(pushes[i]!.before).toBe(pushes[i - 1]!.after);
    }
    const syncs = events
      .filter((e) => e.event === "pull_request" && e.action === "synchronize")
      .map((e) => e.payload as { before: string; after: string; number: number });
    expect(syncs.every((e) => e.number === pr.number)).toBe(true);
    expect(syncs).toHaveLength(3);
    for (let i = 1; i < syncs.length; i++) expect(syncs[i]!.before).toBe(syncs[i - 1]!.after);
    await sim.idle();
    expect(sim.violations).toEqual([]);
  });
});

describe("merges racing into one base", () => {
  it('answers the loser 405 "Base branch was modified" as GitHub does — never 409, which means a moved head', async () => {
    const { data: main } = await gh.rest.git.getRef({ owner, repo, ref: "heads/main" });
    const pulls: number[] = [];
    for (let i = 0; i < 6; i++) {
      const branch = `race/${i}`;
      await gh.rest.git.createRef({ owner, repo, ref: `refs/heads/${branch}`, sha: main.object.sha });
      await gh.rest.repos.createOrUpdateFileContents({
        owner,
        repo,
        path: `race/${i}.txt`,
        message: `race ${i}`,
        content: b64(`${i}\n`),
        branch,
      });
      pulls.push((await gh.rest.pulls.create({ owner, repo, head: branch, base: "main", title: `race ${i}` })).data.number);
    }
    const answers = await Promise.all(
      pulls.map((n) =>
        gh.rest.pulls.merge({ owner, repo, pull_number: n, request: { retries: 0 } }).then(
          () => "merged",
          (e: { status: number; message: string }) => `${e.status} ${e.message}`,
        ),
      ),
    );
    for (const a of answers) expect(a).toMatch(/^(merged|405 Base branch was modified\. Review and try the merge again\.)/);
    expect(answers).toContain("merged");
  });
});
