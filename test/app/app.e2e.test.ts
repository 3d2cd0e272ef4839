import { afterEach, describe, expect, it } from "vitest";
import { LABELS } from "../../src/core/layout.js";
import { FULL, OWNER, REPO, startHarness, type Harness } from "./helpers.js";

let h: Harness | undefined;
afterEach(async () => {
  const done = h;
  h = undefined;
  await done?.close();
}, 60_000);

/**
 * The repository's own CI, as most repositories have one: on every push (but the run's journal
 * writes) and pull request, task branches included. Its runs are not the agents' jobs.
 */
const CI = `name: CI
on:
  push:
    branches-ignore: ["forge/*/_state"]
  pull_request:
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: test -n "$GITHUB_SHA"
`;

describe("the Forge App on the local GitHub", () => {
  it("runs a plan merged to the default branch to completion: every task MERGED, tracker and final PR", { timeout: 150_000 }, async () => {
    h = await startHarness(() => ({ kind: "success" }), { files: { ".github/workflows/ci.yml": CI } });
    await h.pushDir("examples/plans/semver-lite", ".forge/plans/semver-lite", "Add the semver-lite plan");
    const done = await h.waitFor((j) => j.status === "completed", 140_000);
    expect(done.tasks.every((t) => t.status === "MERGED")).toBe(true);
    await h.sim.idle();
    await h.app.forge.tick();
    const { data: issues } = await h.user.rest.issues.listForRepo({ owner: OWNER, repo: REPO, state: "all", labels: LABELS.tracker });
    expect(issues).toHaveLength(1);
    expect(issues[0]!.body).toContain("```mermaid");
    const { data: pulls } = await h.user.rest.pulls.list({ owner: OWNER, repo: REPO, state: "all", base: "main" });
    expect(pulls.map((p) => p.head.ref)).toContain(`forge/${done.runId}/_integration`);
    // The tracker's last drawing names the final PR, which waits for a person (drawn once the PR is open).
    const finalPr = pulls.find((p) => p.head.ref === `forge/${done.runId}/_integration`)!.number;
    const says = `**Final PR:** #${finalPr}, waiting for a person to review and merge it`;
    const tracker = async () => (await h!.user.rest.issues.get({ owner: OWNER, repo: REPO, issue_number: issues[0]!.number })).data;
    let last = await tracker();
    for (let i = 0; i < 40 && !last.body?.includes(says); i++)
      last = await h.whileWaiting(new Promise((r) => setTimeout(r, 100)).then(tracker));
    expect(last.body).toContain(says);
    expect(last.state).toBe("closed");
    // One dispatch per task: nothing dispatched twice.
    expect(new Set(h.runner.dispatched).size).toBe(h.runner.dispatched.length);
    expect(h.runner.dispatched).toHaveLength(done.tasks.length);
    // The CI ran on every task branch beside the agent's job.
    for (const t of done.tasks) {
      const { data: runs } = await h.user.rest.actions.listWorkflowRunsForRepo({ owner: OWNER, repo: REPO, branch: t.attempt!.branch! });
      expect(runs.workflow_runs.map((r) => r.path)).toEqual(
        expect.arrayContaining([".github/workflows/ci.yml", ".github/workflows/forge-agent.yml"]),
      );
    }
    expect(h.sim.violations).toEqual([]);
    const stats = h.app.forge.runtimes.get(FULL)!.stats;
    console.log(JSON.stringify({ tasks: done.tasks.length, stats }, null, 1));
  });
});
