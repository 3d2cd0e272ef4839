/**
 * Only Forge's own jobs are facts about Forge's jobs. A branch name proves nothing: the repository's
 * CI runs on every task branch, a person may start another workflow (or the agent workflow again)
 * there, and a fork may name its branch like a task's. The App on the local GitHub, over signed
 * webhooks, must leave each attempt with its own job: same run id, not failed, not dispatched again,
 * its PR number its own — and the plan check of a fork's PR reads a bounded amount.
 */
import { Octokit } from "@octokit/rest";
import { afterEach, describe, expect, it } from "vitest";
import type { RequestTiming } from "../../src/github/instrument.js";
import type { Journal } from "../../src/core/journal.js";
import { PLAN_CHECK_LIMITS, PLAN_CHECK_NAME } from "../../src/app/plan-check.js";
import { AGENT_WORKFLOW, FULL, OWNER, REPO, startHarness, type Harness } from "../app/helpers.js";
import type { Script } from "../app/scripted-runner.js";
import { dagJson, planFiles, taskFile } from "../helpers/plan-files.js";

let h: Harness | undefined;
/** Agents held at work: let go before the harness closes, whatever the test did. */
const held: (() => void)[] = [];
afterEach(async () => {
  const done = h;
  h = undefined;
  for (const release of held.splice(0)) release();
  await done?.close();
}, 60_000);

const T = { timeout: 120_000 };

/** The repository's CI: on every push and pull request, failing on task b's branches. */
const CI = `name: CI
on: [push, pull_request]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: |
          case "$GITHUB_REF_NAME" in
            */b/*) echo "the tests fail on this branch"; exit 1 ;;
          esac
`;
/** Another workflow a person can start anywhere; it fails. */
const OTHER = `name: Other
on: workflow_dispatch
jobs:
  other:
    runs-on: ubuntu-latest
    steps:
      - run: exit 1
`;

function deferred(): { promise: Promise<void>; release: () => void } {
  let release!: () => void;
  const promise = new Promise<void>((r) => (release = r));
  return { promise, release };
}

const task = (j: Journal, id: string) => j.tasks.find((t) => t.id === id)!;
const branchOf = (runId: string, taskId: string, attempt: number) => `forge/${runId}/${taskId}/${attempt}`;

/** The run's journal as the App holds it, once every webhook so far has been handled. */
async function journalNow(g: Harness, runId: string): Promise<Journal> {
  await g.sim.idle();
  await g.app.forge.idle();
  return (await g.app.forge.runtimes.get(FULL)!.engine.state(runId))!.state.journal;
}

type RunRow = { id: number; path: string; event: string; status: string | null; conclusion: string | null; head_branch: string | null };

/** The completed runs on `branch` once `pred` holds of them. */
async function runsOn(g: Harness, branch: string, pred: (runs: RunRow[]) => boolean): Promise<RunRow[]> {
  for (let i = 0; i < 300; i++) {
    const { data } = await g.user.rest.actions.listWorkflowRunsForRepo({ owner: OWNER, repo: REPO, branch });
    const done = data.workflow_runs.filter((r) => r.status === "completed") as RunRow[];
    if (pred(done)) return done;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the runs on ${branch} never got there`);
}

/** A run of the plan {a, b} (or `spec`) whose agents wait at work until released. */
async function heldRun(
  files: Record<string, string>,
  spec: Record<string, string[]> = { a: [], b: [] },
  script: (taskId: string, attempt: number) => Script | undefined = () => undefined,
): Promise<{ g: Harness; runId: string; release: () => void }> {
  const gate = deferred();
  held.push(gate.release);
  const g = (h = await startHarness((id, attempt) => script(id, attempt) ?? { kind: "success", gate: gate.promise }, { files }));
  await g.pushFiles(planFiles("mini", spec), "Add plan");
  const running = await g.waitFor((j) => j.tasks.every((t) => t.status === "RUNNING"));
  // Each dispatch's run id, from the dispatch's answer.
  for (let i = 0; i < 300; i++) {
    if ((await journalNow(g, running.runId)).tasks.every((t) => t.attempt?.revision.workflowRunId !== undefined)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return { g, runId: running.runId, release: gate.release };
}

/** Every task attempt 1 as dispatched: RUNNING, with the run id of its own dispatch. */
function expectUntouched(g: Harness, j: Journal, ids: string[]): void {
  for (const id of ids)
    expect(task(j, id)).toMatchObject({
      status: "RUNNING",
      attempts: 1,
      attempt: { revision: { workflowRunId: g.runner.runIds.get(`${j.runId}/${id}/1`) } },
    });
}

async function finishes(g: Harness, runId: string, ids: string[]): Promise<void> {
  const done = await g.waitFor((j) => j.status === "completed", 90_000);
  expect(done.tasks.map((t) => [t.id, t.status, t.attempts])).toEqual(ids.map((id) => [id, "MERGED", 1]));
  expect(g.runner.dispatched.filter((d) => ids.some((id) => d.startsWith(`${runId}/${id}/`))).sort()).toEqual(
    ids.map((id) => `${runId}/${id}/1`),
  );
  expect(g.sim.violations).toEqual([]);
}

describe("a workflow run on a task branch counts only when it is the attempt's own job", () => {
  it(
    "the repository's CI runs on every task branch, passing and failing: each attempt keeps its job, none fails, none is dispatched again",
    T,
    async () => {
      const { g, runId, release } = await heldRun({ ".github/workflows/ci.yml": CI });
      // The App created each branch with its own token, so GitHub ran the CI there while the agents work.
      const a = await runsOn(g, branchOf(runId, "a", 1), (r) => r.some((x) => x.path === ".github/workflows/ci.yml"));
      const b = await runsOn(g, branchOf(runId, "b", 1), (r) => r.some((x) => x.path === ".github/workflows/ci.yml"));
      expect(a.filter((x) => x.path.endsWith("ci.yml")).map((x) => [x.event, x.conclusion])).toEqual([["push", "success"]]);
      expect(b.filter((x) => x.path.endsWith("ci.yml")).map((x) => [x.event, x.conclusion])).toEqual([["push", "failure"]]);
      expectUntouched(g, await journalNow(g, runId), ["a", "b"]);
      release();
      await finishes(g, runId, ["a", "b"]);
    },
  );

  it("a run of another workflow, or of the agent workflow started by a push, on a task branch is ignored", T, async () => {
    // The agent workflow also runs on pushes to Forge's branches: those runs are not dispatches.
    const agentAlsoOnPush = AGENT_WORKFLOW.replace("on:\n", 'on:\n  push:\n    branches: ["forge/**"]\n');
    expect(agentAlsoOnPush).not.toBe(AGENT_WORKFLOW);
    const { g, runId, release } = await heldRun(
      { ".github/workflows/forge-agent.yml": agentAlsoOnPush, ".github/workflows/other.yml": OTHER },
      { a: [] },
    );
    const branch = branchOf(runId, "a", 1);
    await g.user.rest.actions.createWorkflowDispatch({ owner: OWNER, repo: REPO, workflow_id: "other.yml", ref: branch });
    const runs = await runsOn(g, branch, (r) => r.some((x) => x.path.endsWith("other.yml")) && r.some((x) => x.event === "push"));
    expect(runs.map((x) => [x.path, x.event, x.conclusion]).sort()).toEqual([
      [".github/workflows/forge-agent.yml", "push", "success"],
      [".github/workflows/other.yml", "workflow_dispatch", "failure"],
    ]);
    expectUntouched(g, await journalNow(g, runId), ["a"]);
    release();
    await finishes(g, runId, ["a"]);
  });

  it("another run of the agent workflow on the attempt's branch, not the recorded one, is ignored", T, async () => {
    // Whatever the intruding run says it is, its job ends at once without a result.
    const { g, runId, release } = await heldRun({}, { a: [] }, (id) => (id === "intruder" ? { kind: "lost" } : undefined));
    const branch = branchOf(runId, "a", 1);
    const recorded = task(await journalNow(g, runId), "a").attempt?.revision.workflowRunId;
    await g.user.rest.actions.createWorkflowDispatch({
      owner: OWNER,
      repo: REPO,
      workflow_id: "forge-agent.yml",
      ref: branch,
      inputs: { run_id: runId, task_id: "intruder", attempt: "1" },
    });
    const runs = await runsOn(g, branch, (r) => r.some((x) => x.id !== recorded));
    expect(runs.map((x) => [x.path, x.event, x.conclusion])).toEqual([
      [".github/workflows/forge-agent.yml", "workflow_dispatch", "failure"],
    ]);
    expect(runs[0]!.id).not.toBe(recorded);
    expectUntouched(g, await journalNow(g, runId), ["a"]);
    release();
    await finishes(g, runId, ["a"]);
  });
});

describe("a pull request from a fork is never a task's", () => {
  it(
    "a fork's PR from a branch named like a task's, synchronized and even merged, neither re-points the task's PR nor moves its attempt",
    T,
    async () => {
      const { g, runId, release } = await heldRun({ ".github/workflows/ci.yml": CI }, { a: [] });
      const branch = branchOf(runId, "a", 1);
      const fork = await g.sim.control.fork(FULL, "mallory");
      const mallory = new Octokit({ baseUrl: g.sim.apiUrl, auth: g.sim.control.userToken("mallory") });
      const main = (await mallory.rest.git.getRef({ owner: "mallory", repo: REPO, ref: "heads/main" })).data.object.sha;
      await mallory.rest.git.createRef({ owner: "mallory", repo: REPO, ref: `refs/heads/${branch}`, sha: main });
      await commitOn(mallory, "mallory", branch, { "src/mallory.ts": "export const m = 1;\n" }, "not the agent's work");
      const { data: pr } = await mallory.rest.pulls.create({
        owner: OWNER,
        repo: REPO,
        head: `mallory:${branch}`,
        base: "main",
        title: "a",
      });
      expect(pr.head.repo?.id).toBe(fork.id);
      await commitOn(mallory, "mallory", branch, { "src/mallory.ts": "export const m = 2;\n" }, "synchronize");
      // Its CI ran too, under the task branch's name, from the fork.
      await runsOn(g, branch, (r) => r.some((x) => x.event === "pull_request"));
      let j = await journalNow(g, runId);
      expectUntouched(g, j, ["a"]);
      expect(task(j, "a").attempt?.prNumber).toBeUndefined();
      // A maintainer merges it: still not the task's PR.
      expect((await g.sim.control.merge("octocat", FULL, pr.number)).status).toBe(200);
      j = await journalNow(g, runId);
      expectUntouched(g, j, ["a"]);
      expect(task(j, "a").attempt?.prNumber).toBeUndefined();
      expect(task(j, "a").attempt?.mergeSha).toBeUndefined();

      release();
      await finishes(g, runId, ["a"]);
      const done = await journalNow(g, runId);
      const { data: own } = await g.user.rest.pulls.list({ owner: OWNER, repo: REPO, head: `${OWNER}:${branch}`, state: "all" });
      expect(own).toHaveLength(1);
      expect(task(done, "a").attempt?.prNumber).toBe(own[0]!.number);
      expect(own[0]!.number).not.toBe(pr.number);
    },
  );

  it("a fork's plan PR beyond the plan check's limits fails its check as too large, unread; a small one is checked", T, async () => {
    const calls: RequestTiming[] = [];
    const g = (h = await startHarness(() => ({ kind: "success" }), { onRequest: (c) => calls.push(c) }));
    await g.sim.control.fork(FULL, "mallory");
    const mallory = new Octokit({ baseUrl: g.sim.apiUrl, auth: g.sim.control.userToken("mallory") });
    const main = (await mallory.rest.git.getRef({ owner: "mallory", repo: REPO, ref: "heads/main" })).data.object.sha;

    const huge: Record<string, string> = { ".forge/plans/huge/plan.md": "# huge\n", ".forge/plans/huge/dag.json": dagJson("huge", {}) };
    for (let i = 0; i <= PLAN_CHECK_LIMITS.files; i++) huge[`.forge/plans/huge/tasks/t${i}.md`] = taskFile(`t${i}`, []);
    await mallory.rest.git.createRef({ owner: "mallory", repo: REPO, ref: "refs/heads/huge", sha: main });
    const hugeHead = await commitOn(mallory, "mallory", "huge", huge, "a plan too large to check");
    calls.length = 0;
    await mallory.rest.pulls.create({ owner: OWNER, repo: REPO, head: "mallory:huge", base: "main", title: "Huge plan" });
    const check = await planCheck(g, hugeHead);
    expect(check).toMatchObject({ conclusion: "failure", output: { title: "Too large to check" } });
    expect(check.output.summary).toContain(`more than ${PLAN_CHECK_LIMITS.files} files`);
    // Listed, not read: no task file's content was asked for.
    expect(calls.filter((c) => /\/contents\/.*tasks(%2F|\/)t\d+\.md/.test(c.route))).toEqual([]);

    await mallory.rest.git.createRef({ owner: "mallory", repo: REPO, ref: "refs/heads/small", sha: main });
    const smallHead = await commitOn(mallory, "mallory", "small", planFiles("small", { a: [], b: ["a"] }), "a small plan");
    await mallory.rest.pulls.create({ owner: OWNER, repo: REPO, head: "mallory:small", base: "main", title: "Small plan" });
    expect(await planCheck(g, smallHead)).toMatchObject({ conclusion: "success", output: { title: "The plan is valid" } });
    expect(g.sim.violations).toEqual([]);
  });
});

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

/** The `forge · plan` check run on `sha`, once the App has made it. */
async function planCheck(
  g: Harness,
  sha: string,
): Promise<{ conclusion: string | null; output: { title: string | null; summary: string | null } }> {
  for (let i = 0; i < 200; i++) {
    await g.sim.idle();
    await g.app.forge.idle();
    const { data } = await g.user.rest.checks.listForRef({ owner: OWNER, repo: REPO, ref: sha });
    const run = data.check_runs.find((c) => c.name === PLAN_CHECK_NAME);
    if (run) return run;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no ${PLAN_CHECK_NAME} check run on ${sha}`);
}
