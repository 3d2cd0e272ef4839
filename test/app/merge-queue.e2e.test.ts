/**
 * Merges the repository's way, on the local GitHub over real HTTP with signed webhooks
 * (docs/executor.md#merge-queue-and-auto-merge): the run's integration branch requires a merge
 * queue whose required check is the repository's own CI, which runs on the merge group
 * (`on: merge_group`). The first group of task a's PR fails it: the queue drops the PR
 * (`dequeued`, `CI_FAILURE`), the failure goes to the task as red CI — a fix revision whose agent
 * reads the group's failing check — and the revised head is enqueued again and merges through the queue.
 */
import { Octokit } from "@octokit/rest";
import { afterEach, describe, expect, it } from "vitest";
import type { Journal } from "../../src/core/journal.js";
import { planFiles } from "../helpers/plan-files.js";
import { FULL, OWNER, REPO, startHarness, type Harness } from "./helpers.js";
import { holdingProxy, type HoldingProxy } from "./holding-proxy.js";
import type { Script } from "./scripted-runner.js";

let h: Harness | undefined;
afterEach(async () => {
  const done = h;
  h = undefined;
  await done?.close();
}, 60_000);

const T = { timeout: 180_000 };
const task = (j: Journal, id: string) => j.tasks.find((t) => t.id === id)!;

/**
 * The repository's CI: on task a's pushes it passes; on a merge group it passes only once a
 * revision has written `a_revision` (the first group is red).
 */
const CI = `name: ci
on:
  push:
    branches: ["forge/*/a/*"]
  merge_group:
    types: [checks_requested]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v5
      - run: |
          if [ "$GITHUB_EVENT_NAME" != "merge_group" ] || grep -q a_revision src/a.ts; then echo "all good"; else echo "the merge group lacks a_revision in src/a.ts"; exit 1; fi
`;

const QUEUE_RULE = {
  type: "merge_queue" as const,
  parameters: {
    check_response_timeout_minutes: 60,
    grouping_strategy: "ALLGREEN" as const,
    max_entries_to_build: 1,
    max_entries_to_merge: 1,
    merge_method: "MERGE" as const,
    min_entries_to_merge: 1,
    min_entries_to_merge_wait_minutes: 0,
  },
};

/** A ruleset on `include` by the repository's owner: a merge queue whose required check is `test` (on the default branch, and an approval). */
async function queueRuleset(g: Harness, include: string[]): Promise<void> {
  const approval = {
    type: "pull_request" as const,
    parameters: {
      required_approving_review_count: 1,
      dismiss_stale_reviews_on_push: false,
      require_code_owner_review: false,
      require_last_push_approval: false,
      required_review_thread_resolution: false,
    },
  };
  const admin = new Octokit({ baseUrl: g.sim.apiUrl, auth: g.sim.control.userToken(OWNER) });
  await admin.rest.repos.createRepoRuleset({
    owner: OWNER,
    repo: REPO,
    name: "queue",
    target: "branch",
    enforcement: "active",
    conditions: { ref_name: { include, exclude: [] } },
    rules: [
      ...(include.includes("~DEFAULT_BRANCH") ? [approval] : []),
      QUEUE_RULE,
      {
        type: "required_status_checks",
        parameters: { required_status_checks: [{ context: "test" }], strict_required_status_checks_policy: false },
      },
    ],
  });
}

/** Deliveries to the App's installation of `event` with `action`. */
function deliveriesToApp(g: Harness, event: string, action: string) {
  return g.sim.control.deliveries({ event, action }).filter((d) => d.installationId === g.installationId);
}

/** Task a's run through the queue, to its end; `deaf`: the installation has not accepted the Merge queues permission (no `merge_group` webhooks). */
async function throughTheQueue(deaf: boolean): Promise<{ g: Harness; j: Journal }> {
  const g = await startHarness((): Script => ({ kind: "success" }), {
    files: { ".github/workflows/ci.yml": CI },
    // Pushes with a job's GITHUB_TOKEN start no workflow: the runner writes as a person, so CI runs.
    runnerAs: "hubot",
  });
  h = g;
  if (deaf) delete g.sim.core.state.installations.get(g.installationId)!.permissions.merge_queues;
  await queueRuleset(g, ["refs/heads/forge/*/_integration"]);
  await g.pushFiles(planFiles("mini", { a: [] }), "Add plan");
  return { g, j: await g.waitFor((x) => x.status === "completed") };
}

/** What both runs show: one fix revision of the queue's failure, the revised head merged through the queue. */
async function expectMergedThroughQueue(g: Harness, j: Journal): Promise<void> {
  const a = task(j, "a");
  expect(a).toMatchObject({ status: "MERGED", attempts: 1, attempt: { ciFixes: 1, revision: { iteration: 1 } } });
  // The queue dropped the first head for its failing check, then merged the revision's.
  const dequeued = deliveriesToApp(g, "pull_request", "dequeued").map((d) => (d.payload as { reason: string }).reason);
  expect(dequeued).toEqual(["CI_FAILURE", "MERGE"]);
  expect(deliveriesToApp(g, "pull_request", "enqueued")).toHaveLength(2);
  // The fix revision's agent was given the group's failing check, said to be the merge queue's.
  const feedback = (
    JSON.parse(g.runner.inputs.get(`${j.runId}/a/1+1`)!.context!) as {
      feedback: Array<{ source: string; checks?: string[]; details?: string }>;
    }
  ).feedback;
  expect(feedback).toHaveLength(1);
  expect(feedback[0]).toMatchObject({ source: "ci", checks: ["test"] });
  expect(feedback[0]!.details).toContain("Failed in the merge queue");
  expect(feedback[0]!.details).toContain("the merge group lacks a_revision");
  // Two agent jobs in all: the merge groups' CI runs are the repository's, not an agent's.
  expect(g.runner.dispatched).toHaveLength(2);
  // The PR merged by the queue: the integration branch is the group's head, with the revision.
  const { data: pr } = await g.user.rest.pulls.get({ owner: OWNER, repo: REPO, pull_number: a.attempt!.prNumber! });
  expect(pr.merged).toBe(true);
  const { data: tip } = await g.user.rest.repos.getBranch({ owner: OWNER, repo: REPO, branch: j.integrationBranch });
  expect(tip.commit.sha).toBe(pr.merge_commit_sha);
  const { data: file } = await g.user.rest.repos.getContent({ owner: OWNER, repo: REPO, path: "src/a.ts", ref: j.integrationBranch });
  expect(Buffer.from((file as { content: string }).content, "base64").toString()).toContain("a_revision");
  expect(g.sim.violations).toEqual([]);
}

describe("a task's pull request through the integration branch's merge queue", () => {
  it(
    "the first merge group's required check fails: the PR is dropped, the task's fix revision reads the failure, its new head is enqueued again and merges through the queue",
    T,
    async () => {
      const { g, j } = await throughTheQueue(false);
      await expectMergedThroughQueue(g, j);
      const destroyed = deliveriesToApp(g, "merge_group", "destroyed").map((d) => (d.payload as { reason: string }).reason);
      expect(destroyed).toEqual(["dequeued", "merged"]);
    },
  );

  it(
    "without merge_group webhooks (an installation that has not accepted the Merge queues permission) the merge finds the failed group itself",
    T,
    async () => {
      const { g, j } = await throughTheQueue(true);
      expect(deliveriesToApp(g, "merge_group", "checks_requested")).toEqual([]);
      expect(deliveriesToApp(g, "merge_group", "destroyed")).toEqual([]);
      await expectMergedThroughQueue(g, j);
    },
  );
});

/** A run of task a whose config sets its final PR to auto-merge; the repository allows auto-merge and runs its CI on PRs and merge groups. */
async function autoMergeRun(opts: Parameters<typeof startHarness>[1] = {}): Promise<Harness> {
  const g = await startHarness((): Script => ({ kind: "success" }), {
    config: "final_pr:\n  auto_merge: true\n",
    files: {
      ".github/workflows/ci.yml":
        "name: ci\non: [pull_request, merge_group]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ok\n",
    },
    ...opts,
  });
  h = g;
  const admin = new Octokit({ baseUrl: g.sim.apiUrl, auth: g.sim.control.userToken(OWNER) });
  await admin.rest.repos.update({ owner: OWNER, repo: REPO, allow_auto_merge: true });
  await g.pushFiles(planFiles("mini", { a: [] }), "Add plan");
  return g;
}

/** Polls `read` (every 100 ms of real time) until it answers something. */
async function until<T>(g: Harness, read: () => Promise<T | undefined>): Promise<T> {
  return g.whileWaiting(
    (async () => {
      for (;;) {
        const got = await read();
        if (got !== undefined) return got;
        await new Promise((r) => setTimeout(r, 100));
      }
    })(),
  );
}

/** The run's final PR once GitHub lists it (the App may not have recorded it yet). */
const finalPrOf = (g: Harness, j: Journal) =>
  until(g, async () => (await g.user.rest.pulls.list({ owner: OWNER, repo: REPO, head: `${OWNER}:${j.integrationBranch}` })).data[0]);

/** A writer (octocat) approves the final PR. */
const approve = (g: Harness, number: number) =>
  g.user.rest.pulls.createReview({ owner: OWNER, repo: REPO, pull_number: number, event: "APPROVE" });

/**
 * What every case shows once the final PR was approved: Forge set it to auto-merge, once; it merged
 * into main through the queue; the run's facts say so (the reconciler looks at it no more).
 */
async function expectAutoMerged(g: Harness, j: Journal, number: number): Promise<void> {
  const merged = await until(g, async () => {
    const { data } = await g.user.rest.pulls.get({ owner: OWNER, repo: REPO, pull_number: number });
    return data.merged ? data : undefined;
  });
  expect(deliveriesToApp(g, "pull_request", "auto_merge_enabled")).toHaveLength(1);
  // The queue marks the PR merged, then destroys its group: the group's event comes after.
  await g.whileWaiting(g.sim.idle());
  expect(deliveriesToApp(g, "merge_group", "destroyed").map((d) => (d.payload as { reason: string }).reason)).toEqual(["merged"]);
  const { data: main } = await g.user.rest.repos.getBranch({ owner: OWNER, repo: REPO, branch: "main" });
  expect(main.commit.sha).toBe(merged.merge_commit_sha);
  await g.whileWaiting(g.app.forge.idle());
  const facts = (await g.app.forge.runtimes.get(FULL)!.engine.state(j.runId))!.state.facts;
  expect(facts).toMatchObject({ finalPr: number, finalAutoMerge: { pr: number, outcome: "enabled" } });
  expect(g.sim.violations).toEqual([]);
}

describe("the run's final pull request with final_pr.auto_merge", () => {
  it(
    "a writer approves it: Forge sets it to auto-merge, and it merges into the base through the base's merge queue once its group's check passes",
    T,
    async () => {
      const g = await autoMergeRun();
      const j = await g.waitFor((x) => x.status === "completed");
      // The base wants an approval and the merge queue (set once the run is done: the plan merged freely).
      await queueRuleset(g, ["~DEFAULT_BRANCH"]);
      // Approved as soon as GitHub lists it: the App may have recorded it already, or not yet.
      const final = await finalPrOf(g, j);
      // Nothing is set before a person approves.
      expect(deliveriesToApp(g, "pull_request", "auto_merge_enabled")).toEqual([]);
      await approve(g, final.number);
      await expectAutoMerged(g, j, final.number);
    },
  );

  it(
    "approved between GitHub opening it and the App recording it (the review's webhook finds no final PR yet): Forge finds the approval once it records the PR",
    T,
    async () => {
      let proxy: HoldingProxy | undefined;
      const g = await autoMergeRun({
        appApiUrl: async (sim) => {
          proxy = await holdingProxy(sim.url);
          return `${proxy.url}/api/v3`;
        },
      });
      const closeProxy = () => proxy?.close();
      try {
        // GitHub's answer to the App's opening of the final PR is held: the PR is open, the App does not know it.
        const held = proxy!.hold((method, path) => method === "POST" && path === `/api/v3/repos/${FULL}/pulls`);
        const j = await g.waitFor((x) => x.status === "completed");
        await queueRuleset(g, ["~DEFAULT_BRANCH"]);
        await held.arrived;
        const final = await finalPrOf(g, j);
        await approve(g, final.number);
        // The review's webhook reaches the App (and is handled: the final PR is no run's yet) before the App learns the PR's number.
        await until(g, async () =>
          deliveriesToApp(g, "pull_request_review", "submitted").some((d) => d.status === "ok") ? true : undefined,
        );
        await new Promise((r) => setTimeout(r, 200));
        const facts = (await g.app.forge.runtimes.get(FULL)!.engine.state(j.runId))!.state.facts;
        expect(facts.finalPr).toBeUndefined();
        expect(deliveriesToApp(g, "pull_request", "auto_merge_enabled")).toEqual([]);
        held.release();
        await expectAutoMerged(g, j, final.number);
      } finally {
        // After the App (closed in afterEach) would be too late for its last calls: closed once the case is done.
        await h?.close();
        h = undefined;
        await closeProxy();
      }
    },
  );

  it.each([
    ["its journal holds the final PR (a pass of the reconciler wrote it)", true],
    ["its journal does not hold the final PR yet (an effect's outcome is written with the run's next write)", false],
  ])(
    "approved while the App is down (the review's webhook is lost), %s: the restarted App's reconciler finds the approval, sets auto-merge, and looks no more",
    async (_, written) => {
      const g = await autoMergeRun();
      const j = await g.waitFor((x) => x.status === "completed");
      await queueRuleset(g, ["~DEFAULT_BRANCH"]);
      const final = await finalPrOf(g, j);
      // The App recorded its final PR (and found no approval then).
      await until(g, async () => (await g.app.forge.runtimes.get(FULL)!.engine.state(j.runId))!.state.facts.finalPr);
      await g.whileWaiting(g.app.forge.idle());
      if (written) await g.whileWaiting(g.app.forge.tick());
      // Down: the review's webhook fails, and GitHub does not send it again.
      g.sim.control.appUnreachableFor(3_600_000);
      await approve(g, final.number);
      await until(g, async () => (g.sim.control.deliveries({ event: "pull_request_review", status: "failed" }).length ? true : undefined));
      expect(deliveriesToApp(g, "pull_request", "auto_merge_enabled")).toEqual([]);
      // Restarted: a new process knows nothing of the run but its journal (where the final PR's
      // effect may still be pending, its lease the gone process's).
      g.sim.control.resetFaults();
      g.app.forge.runtimes.get(FULL)!.engine.stop();
      g.app.forge.runtimes.delete(FULL);
      // The reconciler's passes, a minute apart (FORGE_RECONCILE_SECONDS).
      await g.whileWaiting(g.app.forge.tick());
      if (!written) {
        await g.advance(60_000);
        await g.whileWaiting(g.app.forge.tick());
      }
      await expectAutoMerged(g, j, final.number);
      // Settled: the next passes read nothing of it.
      const stats = g.app.forge.runtimes.get(FULL)!.stats;
      const looks = () => stats.byRoute[`GET /repos/{owner}/{repo}/pulls/{pull_number}`] ?? 0;
      const before = looks();
      for (let pass = 0; pass < 3; pass++) {
        await g.advance(3_600_000);
        await g.whileWaiting(g.app.forge.tick());
      }
      expect(looks()).toBe(before);
    },
    T.timeout,
  );
});
