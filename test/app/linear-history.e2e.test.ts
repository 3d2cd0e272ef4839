/**
 * Forge where every branch must keep a linear history, on the local GitHub over real HTTP with
 * signed webhooks (docs/executor.md#merging-under-the-repositorys-rules): a ruleset with
 * `required_linear_history` on `~ALL` refuses every merge commit — the App's server-side merges of a
 * refinery's upstreams included. The refinery's branch is prepared without one (its job squashes
 * each upstream, one commit each), it is verified by the runner's record of those squashes, every
 * pull request is squashed, and the final pull request merges by rebase.
 */
import { Octokit } from "@octokit/rest";
import { afterEach, describe, expect, it } from "vitest";
import type { Journal } from "../../src/core/journal.js";
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

/** A ruleset wanting a linear history on every branch, created by the repository's owner. */
async function linearEverywhere(g: Harness): Promise<Octokit> {
  const admin = new Octokit({ baseUrl: g.sim.apiUrl, auth: g.sim.control.userToken(OWNER) });
  await admin.request("POST /repos/{owner}/{repo}/rulesets", {
    owner: OWNER,
    repo: REPO,
    name: "linear everywhere",
    target: "branch",
    enforcement: "active",
    conditions: { ref_name: { include: ["~ALL"], exclude: [] } },
    rules: [{ type: "required_linear_history" }],
  });
  return admin;
}

/** Every commit reachable from `sha` that is not on main before the run: message and parents. */
async function historyOf(g: Harness, sha: string, stop: string): Promise<Map<string, { message: string; parents: string[] }>> {
  const seen = new Map<string, { message: string; parents: string[] }>();
  for (const queue = [sha]; queue.length;) {
    const at = queue.pop()!;
    if (seen.has(at) || at === stop) continue;
    const { data } = await g.user.rest.git.getCommit({ owner: OWNER, repo: REPO, commit_sha: at });
    seen.set(at, { message: data.message, parents: data.parents.map((p) => p.sha) });
    queue.push(...data.parents.map((p) => p.sha));
  }
  return seen;
}

describe("a linear history required on every branch", () => {
  it(
    "a refinery of two conflicting upstreams is prepared by squashes, verified by the runner's record, and the plan completes without one merge commit",
    T,
    async () => {
      // a and b rewrite the same line of src/shared.ts (the squash of the second conflicts); r refines both.
      const shared = "src/shared.ts";
      h = await startHarness(
        (id): Script =>
          id === "a" || id === "b" ? { kind: "success", files: { [shared]: `export const owner = "${id}";\n` } } : { kind: "success" },
        { files: { [shared]: 'export const owner = "nobody";\n' } },
      );
      const admin = await linearEverywhere(h);
      // Every server-side merge is counted (the fault log notes each call of the operations named).
      h.sim.control.faults({ apiErrorRate: 1e-12, apiOperations: ["repos/merge"] });
      const { data: main0 } = await h.user.rest.repos.getBranch({ owner: OWNER, repo: REPO, branch: "main" });
      await h.pushFiles(planFiles("mini", { a: [], b: [], r: ["a", "b"] }), "Add plan");
      const j = await h.waitFor((x) => x.status === "completed");
      expect(j.tasks.map((t) => `${t.id} ${t.status} #${t.attempts}`)).toEqual(["a MERGED #1", "b MERGED #1", "r MERGED #1"]);
      const [a, b, r] = ["a", "b", "r"].map((id) => task(j, id)!);
      // The App merged nothing into r's branch: its dispatch named both upstreams to squash, each at its verified head.
      const context = JSON.parse(h.runner.inputs.get(`${j.runId}/r/1`)!.context ?? "{}") as {
        conflicts?: string[];
        squash?: { branch: string; head: string }[];
      };
      expect(context.conflicts).toBeUndefined();
      expect(context.squash).toEqual([
        { branch: a!.attempt!.branch, head: a!.attempt!.recordSha },
        { branch: b!.attempt!.branch, head: b!.attempt!.recordSha },
      ]);
      expect(r!.attempt!.squash).toEqual(context.squash);
      // The branch's rules were read: the App tried no merge it would have had refused.
      expect(h.sim.control.core.faults.log.filter((l) => l.startsWith("api repos/merge"))).toEqual([]);
      // r was verified: both upstreams counted contained, and marked MERGED by its merge.
      expect(r!.attempt!.contained).toEqual(["a", "b"]);
      const merged = h.decisions.flatMap((d) => d.d.events).filter((e) => e.type === "task.merged");
      expect(merged.map((e) => `${e.taskId} ${(e.data as { by: string }).by}`).sort()).toEqual(["a refinery", "b refinery", "r direct"]);
      // r's branch: one squash commit per upstream, none of them a merge commit, nor anything else on it.
      const rHistory = await historyOf(h, r!.attempt!.recordSha!, main0.commit.sha);
      expect([...rHistory.values()].filter((c) => c.parents.length > 1)).toEqual([]);
      const squashes = [...rHistory.values()].filter((c) => c.message.startsWith("forge: squash "));
      expect(squashes.map((c) => c.message.split("\n")[0]).sort()).toEqual(
        [
          `forge: squash ${a!.attempt!.branch} at ${a!.attempt!.recordSha}`,
          `forge: squash ${b!.attempt!.branch} at ${b!.attempt!.recordSha}`,
        ].sort(),
      );
      // The upstreams' own commits never reached r's branch: their content did.
      expect(rHistory.has(a!.attempt!.recordSha!)).toBe(false);
      expect(rHistory.has(b!.attempt!.recordSha!)).toBe(false);
      // The integration branch: one squash commit, r's, holding both tasks' lines.
      const { data: tip } = await h.user.rest.repos.getBranch({ owner: OWNER, repo: REPO, branch: j.integrationBranch });
      const integration = await historyOf(h, tip.commit.sha, main0.commit.sha);
      expect([...integration.values()].filter((c) => c.parents.length > 1)).toEqual([]);
      expect([...integration.values()].map((c) => c.message.split("\n")[0]!).filter((m) => m.startsWith("forge("))).toEqual([
        expect.stringContaining("forge(r)"),
      ]);
      const { data: file } = await h.user.rest.repos.getContent({ owner: OWNER, repo: REPO, path: shared, ref: j.integrationBranch });
      const content = Buffer.from((file as { content: string }).content, "base64").toString("utf8");
      expect(content).toContain('export const owner = "a";');
      expect(content).toContain('export const owner = "b";');
      // Nothing was done twice.
      expect(h.runner.dispatched.map((d) => d.split("/").slice(1).join("/")).sort()).toEqual(["a/1", "b/1", "r/1"]);
      expect(j.tasks.every((t) => t.attempt?.revision.waiting === undefined)).toBe(true);
      // The final PR: its body says how the base wants it merged; a merge commit is refused, a rebase lands one commit per task.
      const { data: finals } = await h.user.rest.pulls.list({
        owner: OWNER,
        repo: REPO,
        head: `${OWNER}:${j.integrationBranch}`,
        state: "all",
      });
      const final = finals[0]!;
      expect(final.body).toContain("keep a linear history");
      await expect(
        admin.rest.pulls.merge({ owner: OWNER, repo: REPO, pull_number: final.number, merge_method: "merge" }),
      ).rejects.toMatchObject({
        status: 405,
      });
      await admin.rest.pulls.merge({ owner: OWNER, repo: REPO, pull_number: final.number, merge_method: "rebase" });
      const { data: main1 } = await h.user.rest.repos.getBranch({ owner: OWNER, repo: REPO, branch: "main" });
      const landed = await historyOf(h, main1.commit.sha, main0.commit.sha);
      expect([...landed.values()].filter((c) => c.parents.length > 1)).toEqual([]);
      expect([...landed.values()].some((c) => c.message.startsWith("forge(r)"))).toBe(true);
    },
  );

  it("rules the App cannot read: the merge GitHub refuses turns the refinery's preparation to squashes", T, async () => {
    h = await startHarness((): Script => ({ kind: "success" }));
    await linearEverywhere(h);
    // The rules answer 500 (after the App's retries): the App learns the branch's wish from the
    // refusal of the first server-side merge — wantsLinearHistory said no, yet r's upstreams are squashed.
    h.sim.control.faults({ apiErrorRate: 1, apiOperations: ["repos/get-branch-rules"] });
    await h.pushFiles(planFiles("mini", { a: [], b: [], r: ["a", "b"] }), "Add plan");
    const j = await h.waitFor((x) => x.status === "completed");
    expect(j.tasks.map((t) => `${t.id} ${t.status} #${t.attempts}`)).toEqual(["a MERGED #1", "b MERGED #1", "r MERGED #1"]);
    const log = h.sim.control.core.faults.log;
    expect(log.some((l) => l.startsWith("api repos/get-branch-rules 5"))).toBe(true);
    const [a, b, r] = ["a", "b", "r"].map((id) => task(j, id)!);
    expect(r!.attempt!.squash).toEqual([
      { branch: a!.attempt!.branch, head: a!.attempt!.recordSha },
      { branch: b!.attempt!.branch, head: b!.attempt!.recordSha },
    ]);
    expect(r!.attempt!.contained).toEqual(["a", "b"]);
    const { data: tip } = await h.user.rest.repos.getBranch({ owner: OWNER, repo: REPO, branch: j.integrationBranch });
    const { data: all } = await h.user.rest.repos.compareCommits({ owner: OWNER, repo: REPO, base: "main", head: tip.commit.sha });
    expect(all.commits.filter((c) => c.parents.length > 1)).toEqual([]);
    expect(h.runner.dispatched.map((d) => d.split("/").slice(1).join("/")).sort()).toEqual(["a/1", "b/1", "r/1"]);
  });
});
