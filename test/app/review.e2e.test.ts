/**
 * The PR feedback loop on the local GitHub, over real HTTP with signed webhooks: merge_policy
 * review, reviews asking for changes and /forge fix revising the same PR, reviews by people without
 * write access, reviews arriving while a revision runs, and the bound on revisions.
 */
import { Octokit } from "@octokit/rest";
import { afterEach, describe, expect, it } from "vitest";
import { TRACKER_DEBOUNCE_MAX_MS } from "../../src/app/effects/index.js";
import type { Journal } from "../../src/core/journal.js";
import { isContentCreating, type RequestTiming } from "../../src/github/instrument.js";
import { LABELS } from "../../src/core/layout.js";
import { planFiles } from "../helpers/plan-files.js";
import { FULL, OWNER, REPO, startHarness, type Harness } from "./helpers.js";
import type { Script } from "./scripted-runner.js";

let h: Harness | undefined;
afterEach(async () => {
  const done = h;
  h = undefined;
  await done?.close();
}, 60_000);

const T = { timeout: 120_000 };
const task = (j: Journal, id: string) => j.tasks.find((t) => t.id === id)!;

/** An Octokit acting as `login` on the local GitHub. */
const as = (g: Harness, login: string) => new Octokit({ baseUrl: g.sim.apiUrl, auth: g.sim.control.userToken(login) });

/** The open PR of a task's branch. */
async function prOf(g: Harness, branch: string): Promise<{ number: number; head: string; body: string }> {
  const { data } = await g.user.rest.pulls.list({ owner: OWNER, repo: REPO, state: "all", head: `${OWNER}:${branch}` });
  const pr = data[0]!;
  return { number: pr.number, head: pr.head.sha, body: pr.body ?? "" };
}

async function review(g: Harness, login: string, pr: number, event: "APPROVE" | "REQUEST_CHANGES", body?: string, commit?: string) {
  return as(g, login).rest.pulls.createReview({
    owner: OWNER,
    repo: REPO,
    pull_number: pr,
    event,
    ...(body ? { body } : {}),
    ...(commit ? { commit_id: commit } : {}),
  });
}

/** Let every webhook land and the App finish, then give the App's background work a moment. */
async function settle(g: Harness): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await g.app.forge.idle();
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("merge_policy: review", () => {
  it("a task PR merges only after a writer approves its head; a reader's approval changes nothing", T, async () => {
    h = await startHarness((): Script => ({ kind: "success" }), { config: "merge_policy: review\n" });
    await h.pushFiles(planFiles("mini", { a: [], b: ["a"] }), "Add plan");
    const ready = await h.waitFor((x) => task(x, "a").status === "MERGE_READY");
    const pr = await prOf(h, task(ready, "a").attempt!.branch!);
    await settle(h);
    expect(task(h.decisions.at(-1)!.d.journal, "a").status).toBe("MERGE_READY");
    // A reader may review; GitHub accepts it, Forge does not act on it.
    await review(h, "reader", pr.number, "APPROVE");
    await settle(h);
    const after = h.decisions.at(-1)!.d.journal;
    expect(task(after, "a").status).toBe("MERGE_READY");
    expect(task(after, "a").attempt?.revision.reviewApprovedHead).toBeUndefined();
    expect(after.outbox.map((e) => e.key)).not.toContain("merge:a:1");
    await review(h, "octocat", pr.number, "APPROVE");
    await h.waitFor((x) => task(x, "a").status === "MERGED");
    const b = await h.waitFor((x) => task(x, "b").status === "MERGE_READY");
    await review(h, "octocat", (await prOf(h, task(b, "b").attempt!.branch!)).number, "APPROVE");
    const j = await h.waitFor((x) => x.status === "completed");
    expect(task(j, "a").attempt?.revision.reviewApprovedHead).toBe(pr.head);
  });
});

describe("revisions", () => {
  it("changes requested by a writer revise the same PR and branch; the agent's push answers; approval merges", T, async () => {
    const calls: RequestTiming[] = [];
    h = await startHarness((): Script => ({ kind: "success" }), { config: "merge_policy: review\n", onRequest: (c) => calls.push(c) });
    await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
    const ready = await h.waitFor((x) => task(x, "a").status === "MERGE_READY");
    const branch = task(ready, "a").attempt!.branch!;
    const before = await prOf(h, branch);
    await h.app.forge.idle();
    const t0 = performance.now();
    await review(h, "octocat", before.number, "REQUEST_CHANGES", "Please also export the revision.");
    // The figures of one iteration: review submitted → the agent's answering push on the PR; the App's calls meanwhile.
    let pushedAt = 0;
    for (let i = 0; i < 600 && !pushedAt; i++) {
      if ((await prOf(h, branch)).head !== before.head) pushedAt = performance.now();
      else await new Promise((r) => setTimeout(r, 10));
    }
    const revised = await h.waitFor((x) => task(x, "a").status === "MERGE_READY" && task(x, "a").attempt?.revision.iteration === 1);
    await h.app.forge.idle();
    const mine = calls.filter((c) => c.start >= t0);
    const runnerCalls = h.runner.calls.get(`${revised.runId}/a/1+1`) ?? [];
    console.log(
      `one review iteration, runner side: ${runnerCalls.length} REST calls (content-creating ${runnerCalls.filter((c) => isContentCreating(c.route)).length}): ${runnerCalls.map((c) => c.route.replace(/\/repos\/[^/]+\/[^/]+/, "")).join(", ")}`,
    );
    console.log(
      `one review iteration on the local GitHub: review submitted → answering push ${(pushedAt - t0).toFixed(0)} ms; ` +
        `App API calls ${mine.length} (content-creating ${mine.filter((c) => isContentCreating(c.route)).length}): ${mine.map((c) => c.route.replace(/\/repos\/[^/]+\/[^/]+/, "")).join(", ")}`,
    );
    expect(task(revised, "a")).toMatchObject({ attempts: 1, attempt: { branch, reviewIterations: 1 } });
    expect(h.runner.dispatched).toEqual([`${revised.runId}/a/1`, `${revised.runId}/a/1+1`]);
    const context = JSON.parse(h.runner.inputs.get(`${revised.runId}/a/1+1`)!.context!) as Record<string, unknown>;
    expect(context).toMatchObject({
      iteration: 1,
      prNumber: before.number,
      feedback: [{ source: "review", actor: "octocat", message: "Please also export the revision." }],
    });
    const after = await prOf(h, branch);
    expect(after.number).toBe(before.number);
    expect(after.head).not.toBe(before.head);
    expect(after.body).toContain("## Revision 1");
    // The approval of the old head merges nothing; the new head's does.
    await review(h, "octocat", after.number, "APPROVE", undefined, before.head);
    await settle(h);
    expect(task(h.decisions.at(-1)!.d.journal, "a").status).toBe("MERGE_READY");
    await review(h, "octocat", after.number, "APPROVE");
    const j = await h.waitFor((x) => x.status === "completed");
    expect(task(j, "a")).toMatchObject({ status: "MERGED", attempts: 1, attempt: { revision: { iteration: 1 } } });
  });

  it("a reader's request for changes is ignored; /forge fix by a writer revises", T, async () => {
    h = await startHarness((): Script => ({ kind: "success" }), { config: "merge_policy: review\n" });
    await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
    const ready = await h.waitFor((x) => task(x, "a").status === "MERGE_READY");
    const pr = await prOf(h, task(ready, "a").attempt!.branch!);
    await review(h, "reader", pr.number, "REQUEST_CHANGES", "Delete everything.");
    await settle(h);
    expect(h.runner.dispatched).toHaveLength(1);
    await h.sim.control.comment("octocat", FULL, pr.number, "/forge fix rename the constant");
    const revised = await h.waitFor((x) => task(x, "a").attempt?.revision.iteration === 1 && task(x, "a").status === "MERGE_READY");
    const context = JSON.parse(h.runner.inputs.get(`${revised.runId}/a/1+1`)!.context!) as { feedback: unknown[] };
    expect(context.feedback).toEqual([expect.objectContaining({ source: "command", actor: "octocat", message: "rename the constant" })]);
  });

  it(
    "reviews arriving while a revision runs are folded into the next one; past review.max_iterations the task waits and says why",
    T,
    async () => {
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      h = await startHarness((_id, _attempt, iteration): Script => ({ kind: "success", ...(iteration === 1 ? { gate: held } : {}) }), {
        config: "merge_policy: review\nreview: { max_iterations: 2 }\n",
      });
      await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
      const ready = await h.waitFor((x) => task(x, "a").status === "MERGE_READY");
      const pr = await prOf(h, task(ready, "a").attempt!.branch!);
      await review(h, "octocat", pr.number, "REQUEST_CHANGES", "first");
      await h.waitFor((x) => task(x, "a").attempt?.revision.iteration === 1 && task(x, "a").status === "RUNNING");
      await review(h, "octocat", pr.number, "REQUEST_CHANGES", "second");
      await h.sim.control.comment("octocat", FULL, pr.number, "/forge fix third");
      await h.waitFor((x) => (task(x, "a").attempt?.feedback ?? []).length === 2);
      release();
      const second = await h.waitFor((x) => task(x, "a").attempt?.revision.iteration === 2 && task(x, "a").status === "MERGE_READY");
      const context = JSON.parse(h.runner.inputs.get(`${second.runId}/a/1+2`)!.context!) as { feedback: { message: string }[] };
      expect(context.feedback.map((f) => f.message)).toEqual(["second", "third"]);
      expect(h.runner.dispatched).toHaveLength(3);
      await review(h, "octocat", pr.number, "REQUEST_CHANGES", "fourth");
      const waiting = await h.waitFor((x) => task(x, "a").attempt?.revision.waiting !== undefined);
      expect(task(waiting, "a").attempt?.revision.waiting).toMatch(/2 revisions made \(review.max_iterations: 2\)/);
      expect(h.runner.dispatched).toHaveLength(3);
      // The PR says why, and the tracker shows it.
      let comments: string[] = [];
      for (let i = 0; i < 50 && !comments.some((c) => c.includes("will not revise")); i++) {
        await settle(h);
        comments = (await h.user.rest.issues.listComments({ owner: OWNER, repo: REPO, issue_number: pr.number })).data.map(
          (c) => c.body ?? "",
        );
      }
      expect(comments.join("\n")).toMatch(/will not revise `a` again by itself: 2 revisions made/);
      const { data: trackers } = await h.user.rest.issues.listForRepo({ owner: OWNER, repo: REPO, state: "all", labels: LABELS.tracker });
      // Redrawn after its debounce (a minute at most).
      await h.advance(TRACKER_DEBOUNCE_MAX_MS);
      await h.app.forge.idle();
      const tracker = (await h.user.rest.issues.get({ owner: OWNER, repo: REPO, issue_number: trackers[0]!.number })).data.body ?? "";
      expect(tracker).toContain("waiting for a person: 2 revisions made (review.max_iterations: 2)");
      await review(h, "octocat", pr.number, "APPROVE");
      await h.waitFor((x) => x.status === "completed");
    },
  );
});

/** The repository's own CI on task a's branches: it passes once a revision has written `a_revision`, or never. */
const ci = (pass: "revised" | "never") => `name: ci
on:
  push:
    branches: ["forge/*/a/*"]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v5
      - run: |
          if ${pass === "revised" ? "grep -q a_revision src/a.ts" : "false"}; then echo "all good"; else echo "expected a_revision in src/a.ts"; echo "::error file=src/a.ts,line=1::a must export its revision"; exit 1; fi
`;

describe("red CI", () => {
  it("the repository's on: push CI runs on the runner's pushes only when it pushes with a token other than the job's", T, async () => {
    const green = `name: ci\non:\n  push:\n    branches: ["forge/*/a/*"]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo green\n`;
    /** Who pushed, for each CI run GitHub started on task a's branches — but the App's own (it creates the branch, and its token starts workflows). */
    const ciRuns = async (g: Harness) =>
      (await g.user.rest.actions.listWorkflowRunsForRepo({ owner: OWNER, repo: REPO, event: "push", per_page: 100 })).data.workflow_runs
        .filter((r) => r.path === ".github/workflows/ci.yml" && /^forge\/[^/]+\/a\//.test(r.head_branch ?? ""))
        .map((r) => r.actor?.login)
        .filter((login) => login !== "forge[bot]");
    // The job's own GITHUB_TOKEN (the default github-token of the Action): its pushes start no workflow.
    h = await startHarness((): Script => ({ kind: "success" }), { files: { ".github/workflows/ci.yml": green } });
    await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
    await h.waitFor((x) => x.status === "completed");
    await settle(h);
    expect(await ciRuns(h)).toEqual([]);
    await h.close();
    // A person's token (as a GitHub App installation token or a fine-grained PAT would be): CI runs on its pushes.
    h = await startHarness((): Script => ({ kind: "success" }), { files: { ".github/workflows/ci.yml": green }, runnerAs: "hubot" });
    await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
    await h.waitFor((x) => x.status === "completed");
    await settle(h);
    const runs = await ciRuns(h);
    expect(runs.length).toBeGreaterThan(0);
    expect(new Set(runs)).toEqual(new Set(["hubot"]));
  });

  it("a failing required check starts a fix revision with its name, annotation and log; green, the PR merges", T, async () => {
    h = await startHarness((): Script => ({ kind: "success" }), {
      config: "required_checks: [test]\n",
      files: { ".github/workflows/ci.yml": ci("revised") },
      // Pushes with a job's GITHUB_TOKEN start no workflow: the runner writes as a person, so CI runs.
      runnerAs: "hubot",
    });
    await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
    const fixing = await h.waitFor((x) => task(x, "a").attempt?.revision.iteration === 1);
    expect(task(fixing, "a")).toMatchObject({ attempts: 1, attempt: { ciFixes: 1 } });
    for (let i = 0; i < 100 && !h.runner.inputs.has(`${fixing.runId}/a/1+1`); i++) await new Promise((r) => setTimeout(r, 100));
    const context = JSON.parse(h.runner.inputs.get(`${fixing.runId}/a/1+1`)!.context!) as {
      feedback: { source: string; checks: string[]; details: string }[];
    };
    expect(context.feedback).toHaveLength(1);
    expect(context.feedback[0]).toMatchObject({ source: "ci", checks: ["test"] });
    expect(context.feedback[0]!.details).toContain("src/a.ts:1 failure: a must export its revision");
    expect(context.feedback[0]!.details).toContain("expected a_revision in src/a.ts");
    const j = await h.waitFor((x) => x.status === "completed");
    expect(task(j, "a")).toMatchObject({ status: "MERGED", attempt: { revision: { iteration: 1 } } });
    expect(h.runner.dispatched).toHaveLength(2);
  });

  it("past ci_fix.max_attempts the task waits for a person, its failing checks on the PR and the tracker", T, async () => {
    h = await startHarness((): Script => ({ kind: "success" }), {
      config: "required_checks: [test]\nci_fix: { max_attempts: 1 }\n",
      files: { ".github/workflows/ci.yml": ci("never") },
      runnerAs: "hubot",
    });
    await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
    const waiting = await h.waitFor((x) => task(x, "a").attempt?.revision.waiting !== undefined);
    expect(task(waiting, "a")).toMatchObject({ status: "MERGE_READY", attempt: { ciFixes: 1, revision: { iteration: 1 } } });
    expect(task(waiting, "a").attempt?.revision.waiting).toBe(
      "required checks still fail after 1 fix revision (ci_fix.max_attempts: 1): test",
    );
    expect(h.runner.dispatched).toHaveLength(2);
    await settle(h);
    const pr = await prOf(h, task(waiting, "a").attempt!.branch!);
    const comments = (await h.user.rest.issues.listComments({ owner: OWNER, repo: REPO, issue_number: pr.number })).data.map(
      (c) => c.body ?? "",
    );
    expect(comments.join("\n")).toContain("required checks still fail after 1 fix revision");
    expect(task(h.decisions.at(-1)!.d.journal, "a").status).toBe("MERGE_READY");
  });
});

/** A commit status on a commit, as a CI service (Jenkins, CircleCI) reports it with a writer's token. */
async function status(g: Harness, sha: string, context: string, state: "pending" | "success" | "failure" | "error", description?: string) {
  await as(g, "hubot").rest.repos.createCommitStatus({
    owner: OWNER,
    repo: REPO,
    sha,
    context,
    state,
    ...(description ? { description } : {}),
  });
}

describe("commit statuses", () => {
  it(
    "a failing required status on the PR's head starts a fix revision with its description; other contexts do not; green, it merges",
    T,
    async () => {
      h = await startHarness((): Script => ({ kind: "success" }), { config: "required_checks: [ci/jenkins]\n" });
      await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
      const ready = await h.waitFor((x) => task(x, "a").status === "MERGE_READY");
      const head = (await prOf(h, task(ready, "a").attempt!.branch!)).head;
      // The merge waits for ci/jenkins, which has not reported: the PR stays open.
      await settle(h);
      expect(task(h.decisions.at(-1)!.d.journal, "a").status).toBe("MERGE_READY");
      // A context the config does not require, and one named like Forge's own, fail: nothing starts.
      await status(h, head, "ci/lint", "failure", "lint is red");
      await status(h, head, "forge · a", "failure", "not CI");
      await settle(h);
      const still = task(h.decisions.at(-1)!.d.journal, "a");
      expect(still.status).toBe("MERGE_READY");
      expect(still.attempt?.revision.iteration).toBe(0);
      expect(h.runner.dispatched).toHaveLength(1);
      // The required one fails: a fix revision with what the CI service said.
      await status(h, head, "ci/jenkins", "error", "3 tests failed on build 41");
      const fixing = await h.waitFor((x) => task(x, "a").attempt?.revision.iteration === 1);
      expect(task(fixing, "a")).toMatchObject({ attempts: 1, attempt: { ciFixes: 1 } });
      for (let i = 0; i < 100 && !h.runner.inputs.has(`${fixing.runId}/a/1+1`); i++) await new Promise((r) => setTimeout(r, 100));
      const context = JSON.parse(h.runner.inputs.get(`${fixing.runId}/a/1+1`)!.context!) as {
        feedback: { source: string; checks: string[]; details: string }[];
      };
      expect(context.feedback).toEqual([expect.objectContaining({ source: "ci", checks: ["ci/jenkins"] })]);
      expect(context.feedback[0]!.details).toContain("3 tests failed on build 41");
      expect(context.feedback[0]!.details).not.toContain("lint is red");
      // The revision's head goes green: it merges.
      const revised = await h.waitFor((x) => task(x, "a").status === "MERGE_READY" && task(x, "a").attempt?.revision.iteration === 1);
      const newHead = (await prOf(h, task(revised, "a").attempt!.branch!)).head;
      expect(newHead).not.toBe(head);
      await status(h, newHead, "ci/jenkins", "success");
      const j = await h.waitFor((x) => x.status === "completed");
      expect(task(j, "a")).toMatchObject({ status: "MERGED", attempt: { ciFixes: 1, revision: { iteration: 1 } } });
      expect(h.runner.dispatched).toHaveLength(2);
    },
  );
});

describe("dismissed approvals", () => {
  it("under merge_policy review, dismissing the approval withdraws the merge it requested; a new approval merges", T, async () => {
    h = await startHarness((): Script => ({ kind: "success" }), { config: "merge_policy: review\nrequired_checks: [ci/jenkins]\n" });
    await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
    const ready = await h.waitFor((x) => task(x, "a").status === "MERGE_READY");
    const pr = await prOf(h, task(ready, "a").attempt!.branch!);
    // Approved, but ci/jenkins is still pending: the merge is requested and waits.
    await status(h, pr.head, "ci/jenkins", "pending");
    const { data: approval } = await review(h, "octocat", pr.number, "APPROVE");
    const approvedJ = await h.waitFor((x) => task(x, "a").attempt?.revision.reviewApprovedHead === pr.head);
    expect(approvedJ.outbox.map((e) => e.key)).toContain("merge:a:1");
    await as(h, "octocat").rest.pulls.dismissReview({
      owner: OWNER,
      repo: REPO,
      pull_number: pr.number,
      review_id: approval.id,
      message: "Approved too early: the migration needs another look.",
    });
    const withdrawn = await h.waitFor((x) => task(x, "a").attempt?.revision.reviewApprovedHead === undefined);
    expect(task(withdrawn, "a").status).toBe("MERGE_READY");
    expect(withdrawn.outbox.map((e) => e.key)).not.toContain("merge:a:1");
    // CI goes green: without an approval nothing merges.
    await status(h, pr.head, "ci/jenkins", "success");
    await settle(h);
    expect(task(h.decisions.at(-1)!.d.journal, "a").status).toBe("MERGE_READY");
    expect((await h.user.rest.pulls.get({ owner: OWNER, repo: REPO, pull_number: pr.number })).data.merged).toBe(false);
    await review(h, "octocat", pr.number, "APPROVE");
    const j = await h.waitFor((x) => x.status === "completed");
    expect(task(j, "a")).toMatchObject({ status: "MERGED", attempt: { revision: { reviewApprovedHead: pr.head } } });
  });

  it("a dismissed review changes nothing while another writer's approval of the head stands", T, async () => {
    h = await startHarness((): Script => ({ kind: "success" }), { config: "merge_policy: review\nrequired_checks: [ci/jenkins]\n" });
    await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
    const ready = await h.waitFor((x) => task(x, "a").status === "MERGE_READY");
    const pr = await prOf(h, task(ready, "a").attempt!.branch!);
    const { data: first } = await review(h, "octocat", pr.number, "APPROVE");
    await review(h, "hubot", pr.number, "APPROVE");
    await h.waitFor((x) => task(x, "a").attempt?.revision.reviewApprovedHead === pr.head);
    await as(h, "octocat").rest.pulls.dismissReview({
      owner: OWNER,
      repo: REPO,
      pull_number: pr.number,
      review_id: first.id,
      message: "mine was early",
    });
    await settle(h);
    const j = h.decisions.at(-1)!.d.journal;
    expect(task(j, "a").attempt?.revision.reviewApprovedHead).toBe(pr.head);
    expect(j.outbox.map((e) => e.key)).toContain("merge:a:1");
    await status(h, pr.head, "ci/jenkins", "success");
    const done = await h.waitFor((x) => x.status === "completed");
    expect(task(done, "a").status).toBe("MERGED");
  });
});

describe("steering", () => {
  it("/forge steer naming a running task on the tracker is kept for its job; a reader's is not", T, async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    h = await startHarness((): Script => ({ kind: "success", gate: held }));
    await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
    await h.waitFor((x) => task(x, "a").status === "RUNNING");
    // The scripted runner opens its PR once released: here the command names the task on the tracker.
    let tracker: number | undefined;
    for (let i = 0; i < 100 && tracker === undefined; i++) {
      await h.app.forge.idle();
      tracker = (await h.user.rest.issues.listForRepo({ owner: OWNER, repo: REPO, labels: LABELS.tracker })).data[0]?.number;
      if (tracker === undefined) await new Promise((r) => setTimeout(r, 100));
    }
    await h.sim.control.comment("reader", FULL, tracker!, "/forge steer a delete the tests");
    await h.sim.control.comment("octocat", FULL, tracker!, "/forge steer a use the v2 API");
    const steered = await h.waitFor((x) => (task(x, "a").attempt?.steering ?? []).length > 0);
    expect(task(steered, "a").attempt!.steering!.map((m) => [m.id, m.actor, m.message])).toEqual([[1, "octocat", "use the v2 API"]]);
    release();
    const j = await h.waitFor((x) => x.status === "completed");
    expect(task(j, "a").status).toBe("MERGED");
  });
});
