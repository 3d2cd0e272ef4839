/**
 * Forge under the repository's rules, on the local GitHub over real HTTP with signed webhooks
 * (docs/executor.md#merging-under-the-repositorys-rules): a ruleset that wants a linear history on
 * the integration branch gets squash merges; a required approval Forge cannot give is said on the
 * task's PR (one comment) and on the tracker, and an approval lets the merge through.
 */
import { Octokit } from "@octokit/rest";
import { afterEach, describe, expect, it } from "vitest";
import type { Journal } from "../../src/core/journal.js";
import { LABELS } from "../../src/core/layout.js";
import { planFiles } from "../helpers/plan-files.js";
import { OWNER, REPO, startHarness, type Harness } from "./helpers.js";
import type { Script } from "./scripted-runner.js";

let h: Harness | undefined;
afterEach(async () => {
  const done = h;
  h = undefined;
  await done?.close();
}, 60_000);

const T = { timeout: 120_000 };
const task = (j: Journal, id: string) => j.tasks.find((t) => t.id === id)!;

/** A ruleset on every run's integration branch, created by the repository's owner. */
async function integrationRuleset(g: Harness, rules: Array<{ type: string; parameters?: Record<string, unknown> }>): Promise<void> {
  const admin = new Octokit({ baseUrl: g.sim.apiUrl, auth: g.sim.control.userToken(OWNER) });
  await admin.request("POST /repos/{owner}/{repo}/rulesets", {
    owner: OWNER,
    repo: REPO,
    name: "integration",
    target: "branch",
    enforcement: "active",
    conditions: { ref_name: { include: ["refs/heads/forge/*/_integration"], exclude: [] } },
    rules: rules as never,
  });
}

async function settle(g: Harness): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await g.app.forge.idle();
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Polls until `read` answers something `ok` accepts (the App's comments and tracker are written in the background). */
async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean, tries = 60): Promise<T> {
  let v = await read();
  for (let i = 0; i < tries && !ok(v); i++) {
    await new Promise((r) => setTimeout(r, 250));
    v = await read();
  }
  return v;
}

describe("merging under the integration branch's rules", () => {
  it("required_linear_history: every task PR is squashed, one commit per task, and the plan completes", T, async () => {
    h = await startHarness((): Script => ({ kind: "success" }));
    await integrationRuleset(h, [{ type: "required_linear_history" }]);
    await h.pushFiles(planFiles("mini", { a: [], b: ["a"], c: ["a"] }), "Add plan");
    const j = await h.waitFor((x) => x.status === "completed");
    expect(j.tasks.map((t) => t.status)).toEqual(["MERGED", "MERGED", "MERGED"]);
    // The integration branch's history is linear: one squash commit per task, none of them a merge.
    const { data: tip } = await h.user.rest.repos.getBranch({ owner: OWNER, repo: REPO, branch: j.integrationBranch });
    const squashed: string[] = [];
    for (let sha = tip.commit.sha, i = 0; i < j.tasks.length; i++) {
      const { data: c } = await h.user.rest.git.getCommit({ owner: OWNER, repo: REPO, commit_sha: sha });
      expect(c.parents).toHaveLength(1);
      squashed.push(c.message.split("\n")[0]!);
      sha = c.parents[0]!.sha;
    }
    for (const t of j.tasks) expect(squashed.some((m) => m.includes(`forge(${t.id})`))).toBe(true);
    // Each task's merge is one of those squash commits.
    const { data: all } = await h.user.rest.repos.compareCommits({ owner: OWNER, repo: REPO, base: "main", head: tip.commit.sha });
    expect(all.commits.filter((c) => c.parents.length > 1)).toEqual([]);
    // No task waited for a person.
    expect(j.tasks.every((t) => t.attempt?.revision.waiting === undefined)).toBe(true);
  });

  it(
    "a required approval blocks the merge: the PR (one comment) and the tracker say which rule and branch; an approval merges it",
    T,
    async () => {
      h = await startHarness((): Script => ({ kind: "success" }));
      await integrationRuleset(h, [
        {
          type: "pull_request",
          parameters: {
            required_approving_review_count: 1,
            dismiss_stale_reviews_on_push: false,
            require_code_owner_review: false,
            require_last_push_approval: false,
            required_review_thread_resolution: false,
          },
        },
      ]);
      await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
      const blocked = await h.waitFor((x) => task(x, "a").attempt?.revision.waiting !== undefined);
      const a = task(blocked, "a");
      expect(a.status).toBe("MERGE_READY");
      expect(a.attempt!.revision.waiting).toContain("required approvals on `forge/");
      expect(a.attempt!.revision.waiting).toContain("/_integration`");
      expect(a.attempt!.revision.waiting).toContain("A person with write access approves the pull request");
      const pr = a.attempt!.prNumber!;
      // The PR says why — once, however often the merge is tried again (other facts arrive meanwhile).
      const comments = async () =>
        (await h!.user.rest.issues.listComments({ owner: OWNER, repo: REPO, issue_number: pr })).data
          .map((c) => c.body ?? "")
          .filter((b) => b.includes("Forge cannot merge"));
      expect((await h.whileWaiting(eventually(comments, (c) => c.length > 0))).join("\n")).toContain("required approvals on `forge/");
      await h.app.forge.tick();
      await settle(h);
      expect(await comments()).toHaveLength(1);
      // The tracker shows it.
      const { data: trackers } = await h.user.rest.issues.listForRepo({ owner: OWNER, repo: REPO, state: "all", labels: LABELS.tracker });
      // Redrawn after its debounce: the test clock skips ahead to it while the App is quiet.
      const tracker = await h.whileWaiting(
        eventually(
          async () => (await h!.user.rest.issues.get({ owner: OWNER, repo: REPO, issue_number: trackers[0]!.number })).data.body ?? "",
          (b) => b.includes("GitHub refuses the merge"),
        ),
      );
      expect(tracker).toContain("waiting for a person: GitHub refuses the merge: required approvals on `forge/");
      // A writer approves the head: the merge goes through and the run completes.
      await new Octokit({ baseUrl: h.sim.apiUrl, auth: h.sim.control.userToken("octocat") }).rest.pulls.createReview({
        owner: OWNER,
        repo: REPO,
        pull_number: pr,
        event: "APPROVE",
      });
      const j = await h.waitFor((x) => x.status === "completed");
      expect(task(j, "a")).toMatchObject({ status: "MERGED" });
      expect(task(j, "a").attempt?.revision.waiting).toBeUndefined();
    },
  );

  it("/forge retry after the rule is lifted merges a blocked task", T, async () => {
    h = await startHarness((): Script => ({ kind: "success" }));
    await integrationRuleset(h, [
      {
        type: "required_status_checks",
        parameters: { required_status_checks: [{ context: "external-ci" }], strict_required_status_checks_policy: false },
      },
    ]);
    await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
    const blocked = await h.waitFor((x) => task(x, "a").attempt?.revision.waiting !== undefined);
    expect(task(blocked, "a").attempt?.revision.waiting).toContain('required status check "external-ci"');
    expect(task(blocked, "a").attempt?.revision.waiting).toContain("Forge does not run or wait for it");
    // The owner lifts the rule; a writer asks Forge to try again.
    const admin = new Octokit({ baseUrl: h.sim.apiUrl, auth: h.sim.control.userToken(OWNER) });
    const { data: sets } = await admin.rest.repos.getRepoRulesets({ owner: OWNER, repo: REPO });
    await admin.rest.repos.deleteRepoRuleset({ owner: OWNER, repo: REPO, ruleset_id: sets[0]!.id });
    await h.user.rest.issues.createComment({
      owner: OWNER,
      repo: REPO,
      issue_number: task(blocked, "a").attempt!.prNumber!,
      body: "/forge retry a",
    });
    const j = await h.waitFor((x) => x.status === "completed");
    expect(task(j, "a").status).toBe("MERGED");
  });
});
