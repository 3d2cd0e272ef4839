/**
 * Checks as GitHub sends them to every App that reads them (src/local-github/domain/check-events.ts),
 * on the local GitHub over real HTTP with signed webhooks (docs/executor.md#iterations):
 * - a red CI reaches the App several times — its workflow run, its check suite, its check runs — and
 *   is answered once: one fix revision, and a late redelivery of any of them changes nothing;
 * - another App (a CI service's) reports a check the integration branch's rules require: red, it
 *   starts the same fix revision a red Actions CI does, bounded by `ci_fix.max_attempts`, its output
 *   given to the agent as CI output; green, it lets the merge go. A check no rule and no config
 *   requires changes nothing. A check name is shown escaped.
 */
import { Octokit } from "@octokit/rest";
import { afterEach, describe, expect, it } from "vitest";
import type { Journal } from "../../src/core/journal.js";
import type { CiApp } from "../../src/local-github/ci-app.js";
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
const last = (g: Harness) => g.decisions.at(-1)!.d.journal;

/** The repository's own CI on task a's branches: it passes once a revision has written `a_revision`. */
const CI = `name: ci
on:
  push:
    branches: ["forge/*/a/*"]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v5
      - run: |
          if grep -q a_revision src/a.ts; then echo "all good"; else echo "expected a_revision in src/a.ts"; exit 1; fi
`;

/** Lets the App handle what is on its way: webhooks, their reads, the effects they start. */
async function settle(g: Harness): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await g.sim.idle();
    await g.app.forge.idle();
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Deliveries to the App's installation of `event` with `action`, by what they are about. */
function deliveriesToApp(g: Harness, event: string, action: string) {
  return g.sim.control.deliveries({ event, action }).filter((d) => d.installationId === g.installationId);
}

/** A ruleset on every run's integration branch, by the repository's owner. */
async function integrationRuleset(g: Harness, checks: Array<{ context: string; integration_id?: number }>): Promise<void> {
  const admin = new Octokit({ baseUrl: g.sim.apiUrl, auth: g.sim.control.userToken(OWNER) });
  await admin.rest.repos.createRepoRuleset({
    owner: OWNER,
    repo: REPO,
    name: "integration checks",
    target: "branch",
    enforcement: "active",
    conditions: { ref_name: { include: ["refs/heads/forge/*/_integration"], exclude: [] } },
    rules: [
      { type: "required_status_checks", parameters: { required_status_checks: checks, strict_required_status_checks_policy: false } },
    ],
  });
}

/** The head of task a's PR now. */
async function headOf(g: Harness, j: Journal): Promise<string> {
  const { data } = await g.user.rest.pulls.list({
    owner: OWNER,
    repo: REPO,
    head: `${OWNER}:${task(j, "a").attempt!.branch}`,
    state: "all",
  });
  return data[0]!.head.sha;
}

/** What the revision's job was given as feedback (the dispatch's context input). */
async function feedbackOf(g: Harness, runId: string): Promise<Array<{ source: string; checks?: string[]; details?: string }>> {
  for (let i = 0; i < 100 && !g.runner.inputs.has(`${runId}/a/1+1`); i++) await new Promise((r) => setTimeout(r, 100));
  return (
    JSON.parse(g.runner.inputs.get(`${runId}/a/1+1`)!.context!) as {
      feedback: Array<{ source: string; checks?: string[]; details?: string }>;
    }
  ).feedback;
}

describe("a red CI that reaches the App by several webhooks", () => {
  it(
    "its workflow run, check suite and check run all arrive; one fix revision answers them, and redelivering them changes nothing",
    T,
    async () => {
      h = await startHarness((): Script => ({ kind: "success" }), {
        config: "required_checks: [test]\n",
        files: { ".github/workflows/ci.yml": CI },
        // Pushes with a job's GITHUB_TOKEN start no workflow: the runner writes as a person, so CI runs.
        runnerAs: "hubot",
      });
      await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
      const fixing = await h.waitFor((x) => task(x, "a").attempt?.revision.iteration === 1);
      const red = task(fixing, "a").attempt!.answeredHeads![0]!;
      const j = await h.waitFor((x) => x.status === "completed");
      await settle(h);
      // The red head's CI reached the App three ways, each delivered.
      const about = (sha: string) => (d: { payload: unknown }) => JSON.stringify(d.payload).includes(sha);
      const runs = deliveriesToApp(h, "workflow_run", "completed").filter(about(red));
      const suites = deliveriesToApp(h, "check_suite", "completed").filter(about(red));
      const checkRuns = deliveriesToApp(h, "check_run", "completed").filter(about(red));
      expect(
        runs.map((d) => [(d.payload as { workflow_run: { path: string; conclusion: string } }).workflow_run.path, d.status]),
      ).toContainEqual([".github/workflows/ci.yml", "ok"]);
      expect(
        suites.map((d) => [(d.payload as { check_suite: { app: { slug: string }; conclusion: string } }).check_suite.app.slug, d.status]),
      ).toContainEqual(["github-actions", "ok"]);
      expect(
        checkRuns.map((d) => [(d.payload as { check_run: { name: string; conclusion: string } }).check_run.name, d.status]),
      ).toContainEqual(["test", "ok"]);
      // Answered once: one CI feedback, one revision, two dispatches in all.
      const events = () => h!.decisions.flatMap((d) => d.d.events).filter((e) => e.taskId === "a");
      expect(events().filter((e) => e.type === "task.feedback" && e.data.source === "ci")).toHaveLength(1);
      expect(events().filter((e) => e.type === "task.revising")).toHaveLength(1);
      expect(task(j, "a")).toMatchObject({ status: "MERGED", attempt: { ciFixes: 1, revision: { iteration: 1 } } });
      expect(h.runner.dispatched).toHaveLength(2);
      // Late copies of all three (GitHub's redelivery, with the same GUID) change nothing.
      const before = events().length;
      for (const d of [...runs, ...suites, ...checkRuns]) h.sim.control.redeliver(d.id);
      await settle(h);
      expect(
        events()
          .slice(before)
          .filter((e) => e.type === "task.feedback" || e.type === "task.revising"),
      ).toEqual([]);
      expect(h.runner.dispatched).toHaveLength(2);
      expect(h.sim.violations).toEqual([]);
    },
  );
});

describe("another App's checks", () => {
  /** A harness with a CI service's App installed beside Forge, and a plan of one task started. */
  async function withCiApp(opts: { config?: string } = {}): Promise<{ g: Harness; ci: CiApp }> {
    const g = await startHarness((): Script => ({ kind: "success" }), opts.config ? { config: opts.config } : {});
    const ci = g.sim.control.ciApp({ account: OWNER, slug: "circle", repositories: [FULL] });
    return { g, ci };
  }

  it(
    "red and required by the integration branch's ruleset: the fix revision takes its output; green on the new head, the PR merges",
    T,
    async () => {
      const { g, ci } = await withCiApp();
      h = g;
      await integrationRuleset(g, [{ context: "circle: build", integration_id: ci.id }]);
      await g.pushFiles(planFiles("mini", { a: [] }), "Add plan");
      const ready = await g.waitFor((x) => task(x, "a").status === "MERGE_READY");
      const head = await headOf(g, ready);
      // Not reported yet: the merge waits for it a moment (its App may not have heard of the push).
      await settle(g);
      expect(task(last(g), "a")).toMatchObject({ status: "MERGE_READY" });
      expect(task(last(g), "a").attempt?.revision.waiting).toBeUndefined();
      // The CI service runs, then fails, with a title, a summary and an annotation.
      const id = await ci.checkRun(FULL, head, "circle: build", { status: "in_progress" });
      await ci.updateCheckRun(FULL, id, {
        conclusion: "failure",
        title: "2 tests failed",
        summary: "expected a_revision in src/a.ts",
        annotations: [{ path: "src/a.ts", start_line: 1, end_line: 1, annotation_level: "failure", message: "a must export its revision" }],
      });
      const fixing = await g.waitFor((x) => task(x, "a").attempt?.revision.iteration === 1);
      expect(task(fixing, "a")).toMatchObject({ attempts: 1, attempt: { ciFixes: 1 } });
      const feedback = await feedbackOf(g, fixing.runId);
      expect(feedback).toEqual([expect.objectContaining({ source: "ci", checks: ["circle: build"] })]);
      expect(feedback[0]!.details).toContain("2 tests failed");
      expect(feedback[0]!.details).toContain("src/a.ts:1 failure: a must export its revision");
      // The revision's head: the CI service goes green, and the PR merges.
      const revised = await g.waitFor((x) => task(x, "a").status === "MERGE_READY" && task(x, "a").attempt?.revision.iteration === 1);
      const newHead = await headOf(g, revised);
      expect(newHead).not.toBe(head);
      await ci.checkRun(FULL, newHead, "circle: build", { conclusion: "success", title: "all green", summary: "ok" });
      const j = await g.waitFor((x) => x.status === "completed");
      expect(task(j, "a")).toMatchObject({ status: "MERGED", attempt: { ciFixes: 1, revision: { iteration: 1 } } });
      expect(g.runner.dispatched).toHaveLength(2);
      expect(g.sim.violations).toEqual([]);
    },
  );

  it(
    "required by the rules but never reported: within a minute the task says which check GitHub expects, on its PR and the tracker",
    T,
    async () => {
      const { g, ci } = await withCiApp();
      h = g;
      await integrationRuleset(g, [{ context: "circle: build", integration_id: ci.id }]);
      await g.pushFiles(planFiles("mini", { a: [] }), "Add plan");
      await g.waitFor((x) => task(x, "a").status === "MERGE_READY");
      const readyAt = g.clock.now();
      const blocked = await g.waitFor((x) => task(x, "a").attempt?.revision.waiting !== undefined);
      expect(g.clock.now() - readyAt).toBeLessThan(60_000);
      expect(g.clock.now() - readyAt).toBeGreaterThanOrEqual(45_000);
      expect(task(blocked, "a").attempt?.revision.waiting).toContain('required status check "circle: build"');
      // The PR says so (the tracker draws `waiting`: tracker.test.ts).
      const pr = task(blocked, "a").attempt!.prNumber!;
      const said = async () =>
        (await g.user.rest.issues.listComments({ owner: OWNER, repo: REPO, issue_number: pr })).data.some((c) =>
          (c.body ?? "").includes('Forge cannot merge `a` yet: required status check "circle: build"'),
        );
      let onPr = await said();
      for (let i = 0; i < 40 && !onPr; i++) onPr = await g.whileWaiting(new Promise((r) => setTimeout(r, 100)).then(said));
      expect(onPr).toBe(true);
      // It reports at last, green: the merge goes through.
      await ci.checkRun(FULL, await headOf(g, blocked), "circle: build", { conclusion: "success", title: "ok", summary: "green" });
      const j = await g.waitFor((x) => x.status === "completed");
      expect(task(j, "a")).toMatchObject({ status: "MERGED" });
      expect(task(j, "a").attempt?.revision.waiting).toBeUndefined();
      // The comment no longer says Forge cannot merge it: the same comment, updated, says it merged.
      const forgeComments = async () =>
        (await g.user.rest.issues.listComments({ owner: OWNER, repo: REPO, issue_number: pr })).data
          .map((c) => c.body ?? "")
          .filter((b) => b.includes("<!-- forge:comment"));
      let now = await forgeComments();
      for (let i = 0; i < 40 && now.some((b) => b.includes("Forge cannot merge")); i++)
        now = await g.whileWaiting(new Promise((r) => setTimeout(r, 100)).then(forgeComments));
      expect(now).toEqual([
        expect.stringContaining(`\`a\` is merged (${task(j, "a").attempt!.mergeSha!.slice(0, 7)}): GitHub no longer refuses it`),
      ]);
    },
  );

  it("a red status required by the rules starts fix revisions up to ci_fix.max_attempts, then the task waits and says why", T, async () => {
    const { g, ci } = await withCiApp({ config: "ci_fix: { max_attempts: 1 }\n" });
    h = g;
    const name = "circle: [lint](https://evil.example)";
    await integrationRuleset(g, [{ context: name }]);
    await g.pushFiles(planFiles("mini", { a: [] }), "Add plan");
    const ready = await g.waitFor((x) => task(x, "a").status === "MERGE_READY");
    await ci.status(FULL, await headOf(g, ready), name, "failure", { description: "lint is red" });
    const revised = await g.waitFor((x) => task(x, "a").status === "MERGE_READY" && task(x, "a").attempt?.revision.iteration === 1);
    await ci.status(FULL, await headOf(g, revised), name, "error", { description: "still red" });
    const waiting = await g.waitFor((x) => task(x, "a").attempt?.revision.waiting !== undefined);
    // The name is the reporter's text: escaped, it links nowhere.
    expect(task(waiting, "a").attempt?.revision.waiting).toBe(
      "required checks still fail after 1 fix revision (ci_fix.max_attempts: 1): circle: \\[lint\\](https://evil.example)",
    );
    expect(task(waiting, "a")).toMatchObject({ status: "MERGE_READY", attempt: { ciFixes: 1 } });
    expect(g.runner.dispatched).toHaveLength(2);
  });

  it("a red check that no rule and no config requires changes nothing: the PR merges", T, async () => {
    const { g, ci } = await withCiApp();
    h = g;
    await g.pushFiles(planFiles("mini", { a: [] }), "Add plan");
    const ready = await g.waitFor((x) => task(x, "a").status === "MERGE_READY" || x.status === "completed");
    // Reported on the head (the merge may already have gone: nothing waits for this check).
    await ci.checkRun(FULL, await headOf(g, ready), "circle: optional", { conclusion: "failure", title: "flaky", summary: "ignored" });
    const j = await g.waitFor((x) => x.status === "completed");
    expect(task(j, "a")).toMatchObject({ status: "MERGED", attempt: { revision: { iteration: 0 } } });
    expect(task(j, "a").attempt?.ciFixes).toBeUndefined();
    expect(g.runner.dispatched).toHaveLength(1);
  });
});
