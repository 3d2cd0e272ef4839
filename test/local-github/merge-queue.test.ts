// The merge queue of the local GitHub (src/local-github/merge-queue.ts), one pull request at a
// time: a ruleset's `merge_queue` rule, GraphQL `enqueuePullRequest` / `dequeuePullRequest`, the
// `gh-readonly-queue/{base}/pr-{n}-{sha}` branch, `merge_group` events, the required checks on the
// group's head, merge or drop — and the workflows that declare `on: merge_group` running on it.
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmittedEvent } from "../../src/local-github/webhooks.js";
import { createSim, type Sim } from "../../src/local-github/server.js";

const owner = "acme";
let sim: Sim;
let admin: Octokit;
const events: EmittedEvent[] = [];

beforeAll(async () => {
  sim = await createSim({ workflowExecutor: "noop", mergeabilityMs: 0 });
  admin = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken(owner) });
  sim.onEvent((e) => events.push(e));
});

afterAll(async () => {
  await sim?.close();
});

async function gql(
  query: string,
  variables: Record<string, unknown>,
): Promise<{ data?: Record<string, unknown>; errors?: Array<{ message: string; type?: string }> }> {
  const res = await fetch(`${sim.url}/api/graphql`, {
    method: "POST",
    headers: { authorization: `bearer ${sim.control.userToken(owner)}`, "content-type": "application/json" },
    body: JSON.stringify({ query, variables }),
  });
  return (await res.json()) as { data?: Record<string, unknown>; errors?: Array<{ message: string }> };
}

const ENQUEUE = `mutation($id: ID!) { enqueuePullRequest(input: { pullRequestId: $id }) { mergeQueueEntry { state position pullRequest { number } } } }`;
const DEQUEUE = `mutation($id: ID!) { dequeuePullRequest(input: { id: $id }) { mergeQueueEntry { pullRequest { number } } } }`;

async function queuedRepo(name: string, files: Record<string, string> = {}): Promise<void> {
  await sim.control.createRepo({ owner, name, files: { "README.md": "# q\n", ...files } });
  await admin.request("POST /repos/{owner}/{repo}/rulesets", {
    owner,
    repo: name,
    name: "queue",
    target: "branch",
    enforcement: "active",
    conditions: { ref_name: { include: ["~DEFAULT_BRANCH"], exclude: [] } },
    rules: [
      {
        type: "merge_queue",
        parameters: {
          check_response_timeout_minutes: 60,
          grouping_strategy: "ALLGREEN",
          max_entries_to_build: 1,
          max_entries_to_merge: 1,
          merge_method: "MERGE",
          min_entries_to_merge: 1,
          min_entries_to_merge_wait_minutes: 0,
        },
      },
      {
        type: "required_status_checks",
        parameters: { strict_required_status_checks_policy: false, required_status_checks: [{ context: "ci" }] },
      },
    ] as never,
  });
}

async function openPull(
  name: string,
  branch: string,
  path: string,
  content: string,
): Promise<{ number: number; nodeId: string; head: string }> {
  const { data: main } = await admin.rest.git.getRef({ owner, repo: name, ref: "heads/main" });
  await admin.rest.git.createRef({ owner, repo: name, ref: `refs/heads/${branch}`, sha: main.object.sha });
  await admin.rest.repos.createOrUpdateFileContents({
    owner,
    repo: name,
    path,
    branch,
    message: `add ${path}`,
    content: Buffer.from(content).toString("base64"),
  });
  const { data: pr } = await admin.rest.pulls.create({ owner, repo: name, head: branch, base: "main", title: `Add ${path}` });
  return { number: pr.number, nodeId: pr.node_id, head: pr.head.sha };
}

const of = (event: string, action: string, repo: string) =>
  events.filter((e) => e.event === event && e.action === action && (e.payload.repository as { name: string }).name === repo);

describe("merge queue", () => {
  it("a failing required check on the group drops the pull request; a fixed push re-enqueued merges", async () => {
    const name = "queue-status";
    await queuedRepo(name);
    const pr = await openPull(name, "feat", "a.txt", "a\n");
    // A direct merge is refused: only the queue merges.
    await expect(admin.rest.pulls.merge({ owner, repo: name, pull_number: pr.number })).rejects.toMatchObject({ status: 405 });
    // Not before its required check passed on its head.
    let r = await gql(ENQUEUE, { id: pr.nodeId });
    expect(r.errors?.[0]?.message).toContain('Required status check "ci" is expected.');
    await admin.rest.repos.createCommitStatus({ owner, repo: name, sha: pr.head, state: "success", context: "ci" });
    r = await gql(ENQUEUE, { id: pr.nodeId });
    expect(r.errors).toBeUndefined();
    expect(r.data?.enqueuePullRequest).toMatchObject({ mergeQueueEntry: { pullRequest: { number: pr.number } } });
    await sim.idle();
    expect(of("pull_request", "enqueued", name)).toHaveLength(1);
    const [requested] = of("merge_group", "checks_requested", name);
    const group = requested!.payload.merge_group as { head_sha: string; head_ref: string; base_sha: string; base_ref: string };
    expect(group.head_ref).toBe(`refs/heads/gh-readonly-queue/main/pr-${pr.number}-${pr.head}`);
    expect(group.base_ref).toBe("refs/heads/main");
    const { data: branch } = await admin.rest.repos.getBranch({ owner, repo: name, branch: group.head_ref.replace("refs/heads/", "") });
    expect(branch.commit.sha).toBe(group.head_sha);
    expect(branch.commit.parents.map((p) => p.sha)).toEqual([group.base_sha, pr.head]);
    // The check fails on the group: dropped, the branch deleted, main unmoved.
    await admin.rest.repos.createCommitStatus({ owner, repo: name, sha: group.head_sha, state: "failure", context: "ci" });
    await sim.idle();
    expect(of("merge_group", "destroyed", name).map((e) => e.payload.reason)).toEqual(["dequeued"]);
    expect(of("pull_request", "dequeued", name).map((e) => e.payload.reason)).toEqual(["CI_FAILURE"]);
    await expect(
      admin.rest.repos.getBranch({ owner, repo: name, branch: group.head_ref.replace("refs/heads/", "") }),
    ).rejects.toMatchObject({ status: 404 });
    expect((await admin.rest.pulls.get({ owner, repo: name, pull_number: pr.number })).data.merged).toBe(false);
    expect((await admin.rest.git.getRef({ owner, repo: name, ref: "heads/main" })).data.object.sha).toBe(group.base_sha);
    // The fix: a new commit on the branch, green on its head, enqueued again; green on the group: merged.
    const { data: fix } = await admin.rest.repos.createOrUpdateFileContents({
      owner,
      repo: name,
      path: "b.txt",
      branch: "feat",
      message: "fix",
      content: Buffer.from("b\n").toString("base64"),
    });
    await admin.rest.repos.createCommitStatus({ owner, repo: name, sha: fix.commit.sha!, state: "success", context: "ci" });
    expect((await gql(ENQUEUE, { id: pr.nodeId })).errors).toBeUndefined();
    await sim.idle();
    const second = of("merge_group", "checks_requested", name)[1]!.payload.merge_group as { head_sha: string; head_ref: string };
    expect(second.head_ref).toBe(`refs/heads/gh-readonly-queue/main/pr-${pr.number}-${fix.commit.sha}`);
    await admin.rest.repos.createCommitStatus({ owner, repo: name, sha: second.head_sha, state: "success", context: "ci" });
    await sim.idle();
    const { data: merged } = await admin.rest.pulls.get({ owner, repo: name, pull_number: pr.number });
    expect(merged.merged).toBe(true);
    expect(merged.merge_commit_sha).toBe(second.head_sha);
    expect((await admin.rest.git.getRef({ owner, repo: name, ref: "heads/main" })).data.object.sha).toBe(second.head_sha);
    expect(of("merge_group", "destroyed", name).map((e) => e.payload.reason)).toEqual(["dequeued", "merged"]);
    expect(of("pull_request", "dequeued", name).map((e) => e.payload.reason)).toEqual(["CI_FAILURE", "MERGE"]);
    expect(of("pull_request", "closed", name)).toHaveLength(1);
    expect(sim.violations.filter((v) => v.kind !== "request")).toEqual([]);
  });

  it("runs the workflows that declare merge_group on the group's branch; their check merges it", async () => {
    const name = "queue-actions";
    const ci = "name: CI\non: [pull_request, merge_group]\njobs:\n  ci:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ok\n";
    await queuedRepo(name, { ".github/workflows/ci.yml": ci });
    const pr = await openPull(name, "feat", "a.txt", "a\n");
    await sim.idle();
    expect((await gql(ENQUEUE, { id: pr.nodeId })).errors).toBeUndefined();
    await sim.idle();
    const { data: runs } = await admin.rest.actions.listWorkflowRunsForRepo({ owner, repo: name, event: "merge_group" });
    expect(runs.workflow_runs).toHaveLength(1);
    expect(runs.workflow_runs[0]!.head_branch).toMatch(new RegExp(`^gh-readonly-queue/main/pr-${pr.number}-`));
    const { data: merged } = await admin.rest.pulls.get({ owner, repo: name, pull_number: pr.number });
    expect(merged.merged).toBe(true);
    expect(merged.merge_commit_sha).toBe(runs.workflow_runs[0]!.head_sha);
    expect(sim.violations.filter((v) => v.kind !== "request")).toEqual([]);
  });

  it("dequeuePullRequest takes it out by hand (MANUAL); a branch without the rule has no queue", async () => {
    const name = "queue-manual";
    await queuedRepo(name);
    const pr = await openPull(name, "feat", "a.txt", "a\n");
    await admin.rest.repos.createCommitStatus({ owner, repo: name, sha: pr.head, state: "success", context: "ci" });
    expect((await gql(ENQUEUE, { id: pr.nodeId })).errors).toBeUndefined();
    await sim.idle();
    const q = await gql(
      `query { repository(owner: "${owner}", name: "${name}") { pullRequest(number: ${pr.number}) { isInMergeQueue mergeQueueEntry { state } } } }`,
      {},
    );
    expect(q.data).toEqual({ repository: { pullRequest: { isInMergeQueue: true, mergeQueueEntry: { state: "AWAITING_CHECKS" } } } });
    expect((await gql(DEQUEUE, { id: pr.nodeId })).errors).toBeUndefined();
    await sim.idle();
    expect(of("pull_request", "dequeued", name).map((e) => e.payload.reason)).toEqual(["MANUAL"]);
    expect(of("merge_group", "destroyed", name).map((e) => e.payload.reason)).toEqual(["dequeued"]);
    await sim.control.createRepo({ owner, name: "plain", files: { "README.md": "# p\n" } });
    const plain = await openPull("plain", "feat", "a.txt", "a\n");
    expect((await gql(ENQUEUE, { id: plain.nodeId })).errors?.[0]).toMatchObject({
      type: "UNPROCESSABLE",
      message: "Merge queue is not enabled for the main branch.",
    });
  });
});
