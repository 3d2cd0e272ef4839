/**
 * Forge under "Require branches to be up to date before merging", on the local GitHub over real
 * HTTP with signed webhooks (docs/executor.md#merging-under-the-repositorys-rules): when another
 * task's merge leaves a task's PR behind the integration branch, Forge updates its branch
 * (update-branch), the repository's CI runs on the new head, and the task merges — no new attempt,
 * no revision, nothing done twice. A branch whose update conflicts, or a PR GitHub finds not
 * mergeable (read again while GitHub still computes it), is said on the PR and the tracker.
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

/** The repository's CI on the task branches: one job, `ci`, green. */
const CI = `name: ci
on:
  push:
    branches: ["forge/*/a/*", "forge/*/b/*"]
jobs:
  ci:
    runs-on: ubuntu-latest
    steps:
      - run: echo green
`;

/** A job held until the test lets it go. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((r) => (open = r));
  return { wait, open };
}

type Rule = (g: Harness, integrationBranch: string) => Promise<void>;

/** Branch protection on the run's integration branch, by the repository's owner: `ci` required, up to date. */
const strictProtection: Rule = async (g, branch) => {
  const admin = new Octokit({ baseUrl: g.sim.apiUrl, auth: g.sim.control.userToken(OWNER) });
  await admin.rest.repos.updateBranchProtection({
    owner: OWNER,
    repo: REPO,
    branch,
    required_status_checks: { strict: true, contexts: ["ci"] },
    enforce_admins: true,
    required_pull_request_reviews: null,
    restrictions: null,
  });
};

/** A ruleset on every run's integration branch: `ci` required, with the strict policy (up to date). */
const strictRuleset: Rule = async (g) => {
  const admin = new Octokit({ baseUrl: g.sim.apiUrl, auth: g.sim.control.userToken(OWNER) });
  await admin.rest.repos.createRepoRuleset({
    owner: OWNER,
    repo: REPO,
    name: "integration",
    target: "branch",
    enforcement: "active",
    conditions: { ref_name: { include: ["refs/heads/forge/*/_integration"], exclude: [] } },
    rules: [
      {
        type: "required_status_checks",
        parameters: { required_status_checks: [{ context: "ci" }], strict_required_status_checks_policy: true },
      },
    ],
  });
};

/** Polls until `read` answers something `ok` accepts (the App's comments and tracker are written in the background). */
async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean, tries = 60): Promise<T> {
  let v = await read();
  for (let i = 0; i < tries && !ok(v); i++) {
    await new Promise((r) => setTimeout(r, 250));
    v = await read();
  }
  return v;
}

async function comments(g: Harness, pr: number): Promise<string[]> {
  return (await g.user.rest.issues.listComments({ owner: OWNER, repo: REPO, issue_number: pr })).data.map((c) => c.body ?? "");
}

async function trackerBody(g: Harness): Promise<string> {
  const { data: trackers } = await g.user.rest.issues.listForRepo({ owner: OWNER, repo: REPO, state: "all", labels: LABELS.tracker });
  return (await g.user.rest.issues.get({ owner: OWNER, repo: REPO, issue_number: trackers[0]!.number })).data.body ?? "";
}

/**
 * Two tasks, `a` and `b`, each held at its gate; `b` is let go first and merges, then `a` — whose PR
 * is then behind the integration branch.
 */
async function bThenA(
  g: Harness,
  gates: Record<string, { wait: Promise<void>; open: () => void }>,
  rule: Rule | undefined,
): Promise<Journal> {
  await g.pushFiles(planFiles("mini", { a: [], b: [] }), "Add plan");
  const started = await g.waitFor((x) => task(x, "a").status === "RUNNING" && task(x, "b").status === "RUNNING");
  await rule?.(g, started.integrationBranch);
  gates.b!.open();
  await g.waitFor((x) => task(x, "b").status === "MERGED");
  gates.a!.open();
  return started;
}

describe("a task PR behind the integration branch, under strict protection", () => {
  it.each([
    ["branch protection's strict required status checks", strictProtection],
    ["a ruleset's strict_required_status_checks_policy", strictRuleset],
  ] as const)(
    "%s: Forge updates the branch, CI runs on the new head, and the task merges — no new attempt or revision, one update",
    T,
    async (_, rule) => {
      const gates = { a: gate(), b: gate() };
      const requests: string[] = [];
      h = await startHarness((id): Script => ({ kind: "success", gate: gates[id as "a" | "b"].wait }), {
        config: "required_checks: [ci]\n",
        files: { ".github/workflows/ci.yml": CI },
        // The agents push as a person: their pushes start the repository's CI (a job's GITHUB_TOKEN would not).
        runnerAs: "hubot",
        onRequest: (call) => requests.push(`${call.route} ${call.status ?? ""}`),
      });
      await bThenA(h, gates, rule);
      const j = await h.waitFor((x) => x.status === "completed");
      const a = task(j, "a");
      expect(j.tasks.map((t) => `${t.id} ${t.status} #${t.attempts}`)).toEqual(["a MERGED #1", "b MERGED #1"]);
      // No new attempt, no revision: two jobs in all.
      expect(a.attempt?.revision.iteration).toBe(0);
      expect(h.runner.dispatched).toHaveLength(2);
      expect(a.attempt?.revision.waiting).toBeUndefined();
      // One update of a's branch, asked by the App from the record commit: the integration branch merged in by the App.
      expect(requests.filter((r) => /update-branch/.test(r))).toEqual([expect.stringMatching(/ 202$/)]);
      const updated = a.attempt!.branchUpdate!;
      expect(updated.over).toBe(a.attempt!.recordSha);
      const { data: merge } = await h.user.rest.git.getCommit({ owner: OWNER, repo: REPO, commit_sha: updated.head! });
      expect(merge.parents[0]!.sha).toBe(a.attempt!.recordSha);
      expect(merge.parents[1]!.sha).toBe(task(j, "b").attempt!.mergeSha);
      expect(merge.author.name).toBe("forge[bot]");
      // That head is what merged: the PR's head when it merged, and the repository's CI ran green on it.
      const { data: pr } = await h.user.rest.pulls.get({ owner: OWNER, repo: REPO, pull_number: a.attempt!.prNumber! });
      expect(pr.merged).toBe(true);
      expect(pr.head.sha).toBe(updated.head);
      const { data: runs } = await h.user.rest.actions.listWorkflowRunsForRepo({ owner: OWNER, repo: REPO, head_sha: updated.head! });
      expect(runs.workflow_runs.map((r) => [r.path, r.event, r.conclusion])).toEqual([[".github/workflows/ci.yml", "push", "success"]]);
      // Said once in the log; nothing on the PR asks a person for anything.
      const events = h.decisions.filter((d) => d.runId === j.runId).flatMap((d) => d.d.events);
      expect(events.filter((e) => e.type === "task.branch_updated").map((e) => e.data)).toEqual([
        { attempt: 1, from: a.attempt!.recordSha, headSha: updated.head },
      ]);
      expect(events.filter((e) => e.type === "task.merge_blocked")).toEqual([]);
      expect((await comments(h, a.attempt!.prNumber!)).filter((c) => c.includes("Forge cannot merge"))).toEqual([]);
    },
  );

  it("a branch whose update conflicts waits for a person: the PR (one comment) and the tracker say so and what to do", T, async () => {
    const gates = { a: gate(), b: gate() };
    h = await startHarness(
      (id): Script => ({
        kind: "success",
        gate: gates[id as "a" | "b"].wait,
        files: { "src/shared.ts": `export const owner = "${id}";\n` },
      }),
      {
        config: "required_checks: [ci]\n",
        files: { ".github/workflows/ci.yml": CI, "src/shared.ts": "export const owner = 0;\n" },
        runnerAs: "hubot",
      },
    );
    await bThenA(h, gates, strictProtection);
    const blocked = await h.waitFor((x) => task(x, "a").attempt?.revision.waiting !== undefined);
    const a = task(blocked, "a");
    expect(a.status).toBe("MERGE_READY");
    expect(a.attempt!.revision.waiting).toContain(
      `GitHub refuses the merge: \`${a.attempt!.branch}\` conflicts with \`${blocked.integrationBranch}\``,
    );
    expect(a.attempt!.revision.waiting).toContain("merge conflict between base and head");
    expect(a.attempt!.revision.waiting).toContain("/forge fix a");
    expect(a.attempt!.branchUpdate).toBeUndefined();
    const said = await h.whileWaiting(
      eventually(
        async () => (await comments(h!, a.attempt!.prNumber!)).filter((c) => c.includes("Forge cannot merge")),
        (c) => c.length > 0,
      ),
    );
    expect(said).toHaveLength(1);
    expect(said[0]).toContain("conflicts with");
    const tracker = await h.whileWaiting(
      eventually(
        () => trackerBody(h!),
        (b) => b.includes("conflicts with"),
      ),
    );
    expect(tracker).toContain("waiting for a person: GitHub refuses the merge:");
    expect(h.runner.dispatched).toHaveLength(2);
  });
});

describe("a task PR that conflicts, without protection", () => {
  it("GitHub's mergeable is null first: Forge reads it again, and only a computed false is a conflict it says", T, async () => {
    const gates = { a: gate(), b: gate() };
    // GitHub's job takes a minute here: a Forge that took null for false would block at once.
    const JOB_MS = 60_000;
    h = await startHarness(
      (id): Script => ({
        kind: "success",
        gate: gates[id as "a" | "b"].wait,
        files: { "src/shared.ts": `export const owner = "${id}";\n` },
      }),
      { files: { "src/shared.ts": "export const owner = 0;\n" }, sim: { mergeabilityMs: JOB_MS } },
    );
    // Every answer GitHub gives about a's PR's mergeability, in order.
    const answers: Array<boolean | null> = [];
    const mergeability = h.sim.core.mergeability;
    const read = mergeability.read.bind(mergeability);
    mergeability.read = async (repo, issue) => {
      const v = await read(repo, issue);
      if (issue.pull?.headRef.includes("/a/")) answers.push(v);
      return v;
    };
    const started = await bThenA(h, gates, undefined);
    const released = h.clock.now();
    const blocked = await h.waitFor((x) => task(x, "a").attempt?.revision.waiting !== undefined);
    const waiting = task(blocked, "a").attempt!.revision.waiting!;
    expect(waiting).toContain(`conflicts with \`${started.integrationBranch}\``);
    expect(waiting).toContain("Pull Request is not mergeable");
    // While GitHub computed it, Forge read null again and again and waited; only the computed false blocked the merge.
    expect(h.clock.now() - released).toBeGreaterThanOrEqual(JOB_MS);
    expect(answers.filter((v) => v === null).length).toBeGreaterThan(2);
    expect(answers.at(-1)).toBe(false);
    expect(answers.indexOf(false)).toBeGreaterThan(answers.lastIndexOf(null));
    expect(task(blocked, "a").status).toBe("MERGE_READY");
    expect(h.runner.dispatched).toHaveLength(2);
  });
});
