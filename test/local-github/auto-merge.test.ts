// Auto-merge on the local GitHub (src/local-github/auto-merge.ts): GraphQL
// `enablePullRequestAutoMerge` / `disablePullRequestAutoMerge`, the pull request's `auto_merge`,
// `pull_request.auto_merge_enabled` / `auto_merge_disabled`, the merge once the required check
// passes, and GitHub's refusals (not allowed by the repository, already clean).
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmittedEvent } from "../../src/local-github/webhooks.js";
import { createSim, type Sim } from "../../src/local-github/server.js";

const owner = "acme";
let sim: Sim;
let admin: Octokit;
const events: EmittedEvent[] = [];

beforeAll(async () => {
  sim = await createSim({ workflowExecutor: "none", mergeabilityMs: 0 });
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

const ENABLE = `mutation($id: ID!) { enablePullRequestAutoMerge(input: { pullRequestId: $id, mergeMethod: SQUASH }) { pullRequest { autoMergeRequest { mergeMethod enabledBy { login } } } } }`;
const DISABLE = `mutation($id: ID!) { disablePullRequestAutoMerge(input: { pullRequestId: $id }) { pullRequest { autoMergeRequest { mergeMethod } } } }`;

async function openPull(name: string, branch: string): Promise<{ number: number; nodeId: string; head: string }> {
  const { data: main } = await admin.rest.git.getRef({ owner, repo: name, ref: "heads/main" });
  await admin.rest.git.createRef({ owner, repo: name, ref: `refs/heads/${branch}`, sha: main.object.sha });
  await admin.rest.repos.createOrUpdateFileContents({
    owner,
    repo: name,
    path: `${branch}.txt`,
    branch,
    message: branch,
    content: Buffer.from("x\n").toString("base64"),
  });
  const { data: pr } = await admin.rest.pulls.create({ owner, repo: name, head: branch, base: "main", title: branch });
  return { number: pr.number, nodeId: pr.node_id, head: pr.head.sha };
}

describe("auto-merge", () => {
  it("merges once the required check passes; shows auto_merge and sends its events; disabled, it waits", async () => {
    const name = "auto";
    await sim.control.createRepo({ owner, name, files: { "README.md": "# a\n" } });
    const pr = await openPull(name, "feat");
    // The repository must allow it.
    expect((await gql(ENABLE, { id: pr.nodeId })).errors?.[0]).toMatchObject({
      type: "UNPROCESSABLE",
      message: "Pull request Auto merge is not allowed for this repository",
    });
    await admin.request("PATCH /repos/{owner}/{repo}", { owner, repo: name, allow_auto_merge: true });
    // Nothing to wait for: GitHub refuses ("clean status").
    await admin.rest.pulls.get({ owner, repo: name, pull_number: pr.number });
    expect((await gql(ENABLE, { id: pr.nodeId })).errors?.[0]?.message).toBe("Pull request Pull request is in clean status");
    await admin.request("POST /repos/{owner}/{repo}/rulesets", {
      owner,
      repo: name,
      name: "ci",
      target: "branch",
      enforcement: "active",
      conditions: { ref_name: { include: ["~DEFAULT_BRANCH"], exclude: [] } },
      rules: [
        {
          type: "required_status_checks",
          parameters: { strict_required_status_checks_policy: false, required_status_checks: [{ context: "ci" }] },
        },
      ] as never,
    });
    const r = await gql(ENABLE, { id: pr.nodeId });
    expect(r.errors).toBeUndefined();
    expect(r.data).toEqual({
      enablePullRequestAutoMerge: { pullRequest: { autoMergeRequest: { mergeMethod: "SQUASH", enabledBy: { login: owner } } } },
    });
    const { data: waiting } = await admin.rest.pulls.get({ owner, repo: name, pull_number: pr.number });
    expect(waiting.auto_merge).toMatchObject({ merge_method: "squash", enabled_by: { login: owner } });
    // Disabled, a green check merges nothing; enabled again, the next check event merges it.
    expect((await gql(DISABLE, { id: pr.nodeId })).errors).toBeUndefined();
    await admin.rest.repos.createCommitStatus({ owner, repo: name, sha: pr.head, state: "pending", context: "ci" });
    await sim.idle();
    expect((await admin.rest.pulls.get({ owner, repo: name, pull_number: pr.number })).data.auto_merge).toBeNull();
    expect((await gql(ENABLE, { id: pr.nodeId })).errors).toBeUndefined();
    await sim.idle();
    expect((await admin.rest.pulls.get({ owner, repo: name, pull_number: pr.number })).data.merged).toBe(false);
    await admin.rest.repos.createCommitStatus({ owner, repo: name, sha: pr.head, state: "success", context: "ci" });
    await sim.idle();
    const { data: merged } = await admin.rest.pulls.get({ owner, repo: name, pull_number: pr.number });
    expect(merged.merged).toBe(true);
    expect(merged.merged_by?.login).toBe(owner);
    // A squash: one parent.
    const { data: commit } = await admin.rest.git.getCommit({ owner, repo: name, commit_sha: merged.merge_commit_sha! });
    expect(commit.parents).toHaveLength(1);
    const mine = events.filter((e) => (e.payload.repository as { name: string }).name === name && e.event === "pull_request");
    expect(mine.map((e) => e.action)).toEqual(["opened", "auto_merge_enabled", "auto_merge_disabled", "auto_merge_enabled", "closed"]);
    expect(sim.violations.filter((v) => v.kind !== "request")).toEqual([]);
  });
});
