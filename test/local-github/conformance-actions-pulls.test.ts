// Conformance of "Allow GitHub Actions to create and approve pull requests" (Settings → Actions →
// General; `can_approve_pull_request_reviews` of docs.github.com/rest/actions/permissions#set-default-workflow-permissions-for-a-repository,
// off by default since github.blog/changelog/2022-05-03): while it is off, a workflow's GITHUB_TOKEN
// that opens a pull request or approves one is answered 403 "GitHub Actions is not permitted to
// create or approve pull requests." — whatever its `pull-requests: write` — while its other calls,
// a person's and an App installation's go on. Set on by an administrator, the same calls pass.
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACTIONS_MAY_NOT_CREATE_PULLS } from "../../src/local-github/actions-permissions.js";
import { createSim, type Sim } from "../../src/local-github/server.js";
import { appKeys } from "./support/helpers.js";
import { refusedWith } from "./support/rules.js";

const owner = "acme";
const repo = "pulls";
const WORKFLOW = `name: job
on: workflow_dispatch
permissions:
  contents: write
  pull-requests: write
jobs:
  job:
    runs-on: ubuntu-latest
    steps:
      - run: "true"
`;

let sim: Sim;
let admin: Octokit;
let alice: Octokit;
let job: Octokit;
let app: Octokit;

/** A branch one commit ahead of main (by alice). */
async function branch(name: string): Promise<void> {
  const { data: main } = await alice.rest.git.getRef({ owner, repo, ref: "heads/main" });
  await alice.rest.git.createRef({ owner, repo, ref: `refs/heads/${name}`, sha: main.object.sha });
  await alice.rest.repos.createOrUpdateFileContents({
    owner,
    repo,
    path: `${name}.txt`,
    branch: name,
    message: name,
    content: Buffer.from(`${name}\n`).toString("base64"),
  });
}

beforeAll(async () => {
  sim = await createSim({ workflowExecutor: "noop" });
  await sim.control.createRepo({
    owner,
    name: repo,
    files: { "README.md": "# pulls\n", ".github/workflows/job.yml": WORKFLOW },
    collaborators: { alice: "write" },
  });
  admin = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken(owner) });
  alice = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken("alice") });
  const registered = sim.control.registerApp({
    slug: "opener",
    publicKeyPem: appKeys().publicKeyPem,
    webhookUrl: "http://127.0.0.1:9/unused",
    webhookSecret: "s",
    permissions: { contents: "write", pull_requests: "write" },
    events: [],
  });
  app = new Octokit({
    baseUrl: sim.apiUrl,
    auth: sim.control.installationToken(sim.control.install(registered.id, owner, [`${owner}/${repo}`]).id),
  });
  // A job of the workflow, held open while the test uses its GITHUB_TOKEN.
  const token = new Promise<string>((resolve) =>
    sim.onWorkflowDispatch((d) => {
      d.startJob("job", ["run"]);
      resolve(d.token("job"));
    }),
  );
  await admin.rest.actions.createWorkflowDispatch({ owner, repo, workflow_id: "job.yml", ref: "main" });
  job = new Octokit({ baseUrl: sim.apiUrl, auth: await token });
});

afterAll(async () => {
  await sim?.close();
});

describe("GitHub Actions creating and approving pull requests", () => {
  it("off (GitHub's default): the job's token may not open a pull request or approve one; its other calls, people and Apps may", async () => {
    expect((await admin.rest.actions.getGithubActionsDefaultWorkflowPermissionsRepository({ owner, repo })).data).toMatchObject({
      can_approve_pull_request_reviews: false,
    });
    await branch("by-job");
    const opened = job.rest.pulls.create({ owner, repo, head: "by-job", base: "main", title: "from a job" });
    expect(await refusedWith(opened, 403)).toBe(ACTIONS_MAY_NOT_CREATE_PULLS);
    expect(ACTIONS_MAY_NOT_CREATE_PULLS).toBe("GitHub Actions is not permitted to create or approve pull requests.");
    // GitHub's answer names the operation's documentation, as for any refusal.
    const answer = await job.rest.pulls.create({ owner, repo, head: "by-job", base: "main", title: "x" }).catch((e: unknown) => e);
    expect((answer as { response: { data: unknown } }).response.data).toEqual({
      message: ACTIONS_MAY_NOT_CREATE_PULLS,
      documentation_url: "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
      status: "403",
    });
    // Nothing was opened; a person and an App installation open theirs.
    expect((await alice.rest.pulls.list({ owner, repo, head: `${owner}:by-job` })).data).toEqual([]);
    const { data: byApp } = await app.rest.pulls.create({ owner, repo, head: "by-job", base: "main", title: "from an App" });
    await branch("by-alice");
    const { data: byAlice } = await alice.rest.pulls.create({ owner, repo, head: "by-alice", base: "main", title: "from alice" });
    // The job's token may comment on a pull request, review it with a comment, update it — not approve it.
    expect((await job.rest.pulls.update({ owner, repo, pull_number: byApp.number, body: "the job's notes" })).status).toBe(200);
    const comment = await job.rest.pulls.createReview({ owner, repo, pull_number: byAlice.number, event: "COMMENT", body: "looks fine" });
    expect(comment.data.state).toBe("COMMENTED");
    const approve = job.rest.pulls.createReview({ owner, repo, pull_number: byAlice.number, event: "APPROVE" });
    expect(await refusedWith(approve, 403)).toBe(ACTIONS_MAY_NOT_CREATE_PULLS);
    expect((await alice.rest.pulls.listReviews({ owner, repo, pull_number: byAlice.number })).data.map((r) => r.state)).toEqual([
      "COMMENTED",
    ]);
    expect(sim.violations).toEqual([]);
  });

  it("on, set by an administrator: the same token opens and approves", async () => {
    await admin.rest.actions.setGithubActionsDefaultWorkflowPermissionsRepository({ owner, repo, can_approve_pull_request_reviews: true });
    await branch("by-job-2");
    const { data: pr } = await job.rest.pulls.create({ owner, repo, head: "by-job-2", base: "main", title: "from a job" });
    expect(pr.user?.login).toBe("github-actions[bot]");
    await branch("by-alice-2");
    const { data: theirs } = await alice.rest.pulls.create({ owner, repo, head: "by-alice-2", base: "main", title: "from alice" });
    const { data: review } = await job.rest.pulls.createReview({ owner, repo, pull_number: theirs.number, event: "APPROVE" });
    expect(review.state).toBe("APPROVED");
    expect(sim.violations).toEqual([]);
  });
});
