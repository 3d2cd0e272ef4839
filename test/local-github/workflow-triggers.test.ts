// The repository's own CI on the local GitHub: a push runs the pushed commit's `on: push`
// workflows (branch and tag filters applied), a pull request runs its test merge commit's
// `on: pull_request` workflows on refs/pull/<n>/merge, a fork's pull request runs them with the fork
// as head repository and a read-only token, and events caused by a workflow's GITHUB_TOKEN start
// nothing. Each run sends the workflow_run / workflow_job webhooks a dispatched run sends.
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimExecutor, type SimExecutor } from "../../src/local-github/runner/sim-executor.js";
import { createSim, type Sim } from "../../src/local-github/server.js";
import { filterMatches, refPasses } from "../../src/local-github/workflows/index.js";
import { appKeys, startReceiver, type ReceivedHook, type Receiver } from "./support/helpers.js";

const CI = `name: CI
on: [push, pull_request]
permissions:
  contents: write
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: echo "event=$GITHUB_EVENT_NAME ref=$GITHUB_REF sha=$GITHUB_SHA head_ref=$GITHUB_HEAD_REF base_ref=$GITHUB_BASE_REF"
      - run: test ! -e FAIL
`;
const MAIN_ONLY = `name: Main only
on:
  push:
    branches: [main]
jobs:
  x:
    runs-on: ubuntu-latest
    steps:
      - run: "true"
`;
const NOT_FORGE = `name: Not on Forge branches
on:
  push:
    branches-ignore: ["forge/**"]
jobs:
  x:
    runs-on: ubuntu-latest
    steps:
      - run: "true"
`;
const TAGS_ONLY = `name: Tags only
on:
  push:
    tags: ["v*"]
jobs:
  x:
    runs-on: ubuntu-latest
    steps:
      - run: "true"
`;
const DISPATCH_ONLY = `name: Dispatch only
on:
  workflow_dispatch:
    inputs:
      branch: { required: true }
permissions:
  contents: write
jobs:
  push-with-the-job-token:
    runs-on: ubuntu-latest
    steps:
      - run: |
          curl -sf -X POST -H "authorization: token \${{ github.token }}" -H "content-type: application/json" \\
            -d "{\\"ref\\":\\"refs/heads/\${{ inputs.branch }}\\",\\"sha\\":\\"$GITHUB_SHA\\"}" "\${{ github.api_url }}/repos/\${{ github.repository }}/git/refs" > /dev/null
`;

const OWNER = "acme";
const REPO = "ci";

let sim: Sim;
let executor: SimExecutor;
let receiver: Receiver;
let octocat: Octokit;
let app: Octokit;

beforeAll(async () => {
  sim = await createSim();
  receiver = await startReceiver("t");
  await sim.control.createRepo({
    owner: OWNER,
    name: REPO,
    files: {
      "README.md": "# ci\n",
      ".github/workflows/ci.yml": CI,
      ".github/workflows/main-only.yml": MAIN_ONLY,
      ".github/workflows/not-forge.yml": NOT_FORGE,
      ".github/workflows/tags-only.yml": TAGS_ONLY,
      ".github/workflows/dispatch-only.yml": DISPATCH_ONLY,
    },
    collaborators: { octocat: "write" },
  });
  const registered = sim.control.registerApp({
    slug: "watcher",
    publicKeyPem: appKeys().publicKeyPem,
    webhookUrl: receiver.url,
    webhookSecret: "t",
    permissions: { actions: "write", contents: "write", pull_requests: "write" },
    events: ["workflow_run", "workflow_job", "pull_request"],
  });
  const inst = sim.control.install(registered.id, OWNER, "all");
  executor = createSimExecutor({ concurrency: 2 });
  sim.onWorkflowDispatch(executor.handler);
  octocat = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken("octocat") });
  app = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.installationToken(inst.id) });
});

afterAll(async () => {
  await sim?.close();
  await receiver?.close();
  executor?.dispose();
});

type Run = { id: number; path: string; event: string; head_branch: string; head_sha: string; conclusion: string | null };
const runOf = (h: ReceivedHook) => h.payload.workflow_run as Run & { head_repository: { id: number } };

/** The completed workflow_run webhooks of runs on `branch`, once `n` of them arrived. */
async function completedRuns(branch: string, n: number): Promise<Array<Run & { head_repository: { id: number } }>> {
  const on = (h: ReceivedHook) => h.event === "workflow_run" && h.action === "completed" && runOf(h).head_branch === branch;
  const deadline = Date.now() + 30_000;
  while (receiver.received.filter(on).length < n) {
    if (Date.now() > deadline) throw new Error(`${receiver.received.filter(on).length} completed runs on ${branch}, not ${n}`);
    await receiver.waitFor(() => receiver.received.filter(on).length >= n, 30_000).catch(() => undefined);
  }
  await sim.idle();
  return receiver.received.filter(on).map(runOf);
}

async function commitOn(gh: Octokit, owner: string, branch: string, files: Record<string, string>, message: string): Promise<string> {
  const { data: ref } = await gh.rest.git.getRef({ owner, repo: REPO, ref: `heads/${branch}` });
  const { data: parent } = await gh.rest.git.getCommit({ owner, repo: REPO, commit_sha: ref.object.sha });
  const { data: tree } = await gh.rest.git.createTree({
    owner,
    repo: REPO,
    base_tree: parent.tree.sha,
    tree: Object.entries(files).map(([path, content]) => ({ path, mode: "100644" as const, type: "blob" as const, content })),
  });
  const { data: commit } = await gh.rest.git.createCommit({ owner, repo: REPO, message, tree: tree.sha, parents: [ref.object.sha] });
  await gh.rest.git.updateRef({ owner, repo: REPO, ref: `heads/${branch}`, sha: commit.sha });
  return commit.sha;
}

async function mainHead(): Promise<string> {
  return (await octocat.rest.git.getRef({ owner: OWNER, repo: REPO, ref: "heads/main" })).data.object.sha;
}

async function jobLog(runId: number): Promise<string> {
  const { data } = await octocat.rest.actions.listJobsForWorkflowRun({ owner: OWNER, repo: REPO, run_id: runId });
  return data.jobs.map((j) => sim.control.logsOfJob(j.id) ?? "").join("\n");
}

describe("filter patterns", () => {
  it("follow GitHub's cheat sheet: * stops at /, ** does not, ! excludes what came before, order matters", () => {
    expect(filterMatches(["forge/*"], "forge/run")).toBe(true);
    expect(filterMatches(["forge/*"], "forge/run/a/1")).toBe(false);
    expect(filterMatches(["forge/**"], "forge/run/a/1")).toBe(true);
    expect(filterMatches(["forge/**", "!forge/*/_state"], "forge/run/_state")).toBe(false);
    expect(filterMatches(["!forge/*/_state", "forge/**"], "forge/run/_state")).toBe(true);
    expect(filterMatches(["v[0-9]*"], "v1.2")).toBe(true);
    expect(refPasses({ branches: ["main"] }, "tag", "v1")).toBe(false);
    expect(refPasses({ tags: ["v*"] }, "branch", "main")).toBe(false);
    expect(refPasses({ "branches-ignore": ["forge/**"] }, "branch", "forge/r/a/1")).toBe(false);
    expect(refPasses(null, "tag", "v1")).toBe(true);
  });
});

describe("workflows started by push and pull_request", () => {
  it("a push to a branch runs the pushed commit's push workflows that match it, passing or failing, as runs of their own", async () => {
    await octocat.rest.git.createRef({ owner: OWNER, repo: REPO, ref: "refs/heads/forge/r1/a/1", sha: await mainHead() });
    const first = await completedRuns("forge/r1/a/1", 1);
    // ci.yml only: main-only.yml and not-forge.yml filter the branch out, tags-only.yml wants tags.
    expect(first.map((r) => [r.path, r.event, r.conclusion])).toEqual([[".github/workflows/ci.yml", "push", "success"]]);
    expect(first[0]!.head_sha).toBe(await mainHead());

    const failing = await commitOn(octocat, OWNER, "forge/r1/a/1", { FAIL: "the CI step fails on this\n" }, "break the CI");
    const both = await completedRuns("forge/r1/a/1", 2);
    const second = both.find((r) => r.head_sha === failing)!;
    expect(second).toMatchObject({ path: ".github/workflows/ci.yml", event: "push", conclusion: "failure" });
    expect(second.id).not.toBe(first[0]!.id);
    expect(await jobLog(second.id)).toContain(`event=push ref=refs/heads/forge/r1/a/1 sha=${failing}`);

    // The runs are listed by the API like dispatched runs, with their event.
    const { data } = await octocat.rest.actions.listWorkflowRunsForRepo({ owner: OWNER, repo: REPO, branch: "forge/r1/a/1" });
    expect(data.workflow_runs.map((r) => [r.event, r.path, r.conclusion])).toEqual([
      ["push", ".github/workflows/ci.yml", "failure"],
      ["push", ".github/workflows/ci.yml", "success"],
    ]);
    // Each run sends what a dispatched run sends: requested, in_progress, completed and its job's events.
    for (const id of [first[0]!.id, second.id]) {
      const of = receiver.received.filter(
        (h) =>
          (h.event === "workflow_run" && runOf(h).id === id) ||
          (h.event === "workflow_job" && (h.payload.workflow_job as { run_id: number }).run_id === id),
      );
      expect(of.map((h) => `${h.event}.${h.action}`).sort()).toEqual([
        "workflow_job.completed",
        "workflow_job.in_progress",
        "workflow_job.queued",
        "workflow_run.completed",
        "workflow_run.in_progress",
        "workflow_run.requested",
      ]);
    }
  });

  it("a push to main runs the workflows whose branch filters take main", async () => {
    const before = receiver.received.length;
    const sha = await commitOn(octocat, OWNER, "main", { "notes.md": "n\n" }, "notes");
    const runs = await completedRuns("main", 3);
    expect(runs.map((r) => r.path).sort()).toEqual([
      ".github/workflows/ci.yml",
      ".github/workflows/main-only.yml",
      ".github/workflows/not-forge.yml",
    ]);
    expect(runs.every((r) => r.head_sha === sha && r.event === "push")).toBe(true);
    expect(receiver.received.slice(before).some((h) => h.event === "workflow_run" && runOf(h).path.endsWith("tags-only.yml"))).toBe(false);
  });

  it("a pull request runs its pull_request workflows on refs/pull/<n>/merge, the head branch and sha as the run's head", async () => {
    await octocat.rest.git.createRef({ owner: OWNER, repo: REPO, ref: "refs/heads/feature", sha: await mainHead() });
    const head = await commitOn(octocat, OWNER, "feature", { "feature.md": "f\n" }, "a feature");
    // The two pushes ran ci.yml and not-forge.yml each.
    expect((await completedRuns("feature", 4)).map((r) => r.event)).toEqual(["push", "push", "push", "push"]);
    const { data: pr } = await octocat.rest.pulls.create({ owner: OWNER, repo: REPO, head: "feature", base: "main", title: "Feature" });
    const runs = (await completedRuns("feature", 5)).filter((r) => r.event === "pull_request");
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ path: ".github/workflows/ci.yml", head_branch: "feature", head_sha: head, conclusion: "success" });
    const merge = (await octocat.rest.git.getRef({ owner: OWNER, repo: REPO, ref: `pull/${pr.number}/merge` })).data.object.sha;
    const { data: mergeCommit } = await octocat.rest.git.getCommit({ owner: OWNER, repo: REPO, commit_sha: merge });
    expect(mergeCommit.parents.map((p) => p.sha)).toEqual([await mainHead(), head]);
    expect(await jobLog(runs[0]!.id)).toContain(
      `event=pull_request ref=refs/pull/${pr.number}/merge sha=${merge} head_ref=feature base_ref=main`,
    );
  });

  it("pushes made with a workflow's GITHUB_TOKEN start no workflows; the App's do", async () => {
    await app.rest.actions.createWorkflowDispatch({
      owner: OWNER,
      repo: REPO,
      workflow_id: "dispatch-only.yml",
      ref: "main",
      inputs: { branch: "made-by-a-job" },
    });
    const dispatched = await completedRuns("main", 4);
    expect(dispatched.find((r) => r.event === "workflow_dispatch")).toMatchObject({ conclusion: "success" });
    expect((await octocat.rest.git.getRef({ owner: OWNER, repo: REPO, ref: "heads/made-by-a-job" })).data.object.sha).toBe(
      await mainHead(),
    );
    await app.rest.git.createRef({ owner: OWNER, repo: REPO, ref: "refs/heads/made-by-the-app", sha: await mainHead() });
    expect((await completedRuns("made-by-the-app", 2)).map((r) => `${r.event} ${r.path}`).sort()).toEqual([
      "push .github/workflows/ci.yml",
      "push .github/workflows/not-forge.yml",
    ]);
    const { data } = await octocat.rest.actions.listWorkflowRunsForRepo({ owner: OWNER, repo: REPO, branch: "made-by-a-job" });
    expect(data.total_count).toBe(0);
  });

  it("a fork's pull request runs the base's pull_request workflows with the fork as head repository and a read-only token; the fork runs nothing", async () => {
    const fork = await sim.control.fork(`${OWNER}/${REPO}`, "mallory");
    const mallory = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken("mallory") });
    await mallory.rest.git.createRef({ owner: "mallory", repo: REPO, ref: "refs/heads/forge/r1/a/1", sha: await mainHead() });
    const head = await commitOn(mallory, "mallory", "forge/r1/a/1", { "evil.md": "x\n" }, "from the fork");
    const { data: pr } = await mallory.rest.pulls.create({
      owner: OWNER,
      repo: REPO,
      head: "mallory:forge/r1/a/1",
      base: "main",
      title: "Hi",
    });
    expect(pr.head).toMatchObject({ ref: "forge/r1/a/1", sha: head, label: "mallory:forge/r1/a/1", repo: { id: fork.id, fork: true } });
    const opened = await receiver.waitFor((h) => h.event === "pull_request" && h.action === "opened" && h.payload.number === pr.number);
    expect((opened.payload.pull_request as { head: { repo: { id: number } } }).head.repo.id).toBe(fork.id);
    const runs = (await completedRuns("forge/r1/a/1", 3)).filter((r) => r.event === "pull_request");
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({
      path: ".github/workflows/ci.yml",
      head_sha: head,
      head_repository: { id: fork.id },
      conclusion: "success",
    });
    // Its job's token could only read (the same workflow's push runs got contents: write).
    const tokenOf = (runId: number) =>
      [...sim.core.state.tokens.values()].filter((t) => t.workflowRunId === runId).map((t) => t.permissions);
    expect(tokenOf(runs[0]!.id)).toEqual([{ contents: "read", metadata: "read" }]);
    const pushRun = (await completedRuns("forge/r1/a/1", 3)).find((r) => r.event === "push")!;
    expect(tokenOf(pushRun.id)).toEqual([{ contents: "write", metadata: "read" }]);
    // The base repository's own branch of that name is another branch, with its own PRs.
    const { data: own } = await octocat.rest.pulls.list({ owner: OWNER, repo: REPO, head: `${OWNER}:forge/r1/a/1`, state: "all" });
    expect(own).toEqual([]);
    const { data: theirs } = await octocat.rest.pulls.list({ owner: OWNER, repo: REPO, head: "mallory:forge/r1/a/1" });
    expect(theirs.map((p) => p.number)).toEqual([pr.number]);
    // The fork's pushes ran nothing in the fork.
    expect(await mallory.rest.actions.listWorkflowRunsForRepo({ owner: "mallory", repo: REPO }).then((r) => r.data.total_count)).toBe(0);

    // A push to the fork's branch synchronizes the PR in the base repository, and runs its CI again.
    const next = await commitOn(mallory, "mallory", "forge/r1/a/1", { FAIL: "x\n" }, "again");
    await receiver.waitFor((h) => h.event === "pull_request" && h.action === "synchronize" && h.payload.number === pr.number);
    const again = (await completedRuns("forge/r1/a/1", 4)).filter((r) => r.event === "pull_request" && r.head_sha === next);
    expect(again.map((r) => r.conclusion)).toEqual(["failure"]);
  });

  it("every payload was valid and signed", () => {
    expect(receiver.received.filter((h) => !h.signatureValid || h.schemaError).map((h) => [h.event, h.action, h.schemaError])).toEqual([]);
    expect(sim.violations).toEqual([]);
  });
});

describe("without the runner", () => {
  it("the noop executor completes triggered runs successfully; with no executor they stay queued", async () => {
    for (const executor of ["noop", "none"] as const) {
      const s = await createSim({ workflowExecutor: executor });
      try {
        await s.control.createRepo({ owner: OWNER, name: REPO, files: { ".github/workflows/ci.yml": CI } });
        const gh = new Octokit({ baseUrl: s.apiUrl, auth: s.control.userToken(OWNER) });
        const sha = (await gh.rest.git.getRef({ owner: OWNER, repo: REPO, ref: "heads/main" })).data.object.sha;
        await gh.rest.git.createRef({ owner: OWNER, repo: REPO, ref: "refs/heads/topic", sha });
        await s.idle();
        for (let i = 0; i < 50 && executor === "noop"; i++) {
          const { data } = await gh.rest.actions.listWorkflowRunsForRepo({ owner: OWNER, repo: REPO, branch: "topic" });
          if (data.workflow_runs[0]?.status === "completed") break;
          await new Promise((r) => setTimeout(r, 20));
        }
        const { data } = await gh.rest.actions.listWorkflowRunsForRepo({ owner: OWNER, repo: REPO, branch: "topic" });
        expect(data.workflow_runs.map((r) => [r.event, r.status, r.conclusion])).toEqual([
          executor === "noop" ? ["push", "completed", "success"] : ["push", "queued", null],
        ]);
        expect(s.violations).toEqual([]);
      } finally {
        await s.close();
      }
    }
  });
});
