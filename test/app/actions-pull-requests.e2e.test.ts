/**
 * Forge where GitHub Actions may not create pull requests — the repository's "Allow GitHub Actions
 * to create and approve pull requests" off, GitHub's default (src/local-github/actions-permissions.ts)
 * — on the local GitHub over real HTTP with signed webhooks. The runner's PR, opened with the job's
 * token, is refused (403); the runner goes on, as the Action does (action/src/task/pull.ts). Forge
 * gets through: the App opens each task's PR once its work is verified — by the merge itself, or,
 * where no merge is about to run (a refinery's upstreams, merge_policy review), at once — saying on
 * it which setting kept the runner from it.
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
const SAID = `"Allow GitHub Actions to create and approve pull requests" is off`;

/** Every pull request of a task branch: who opened it, its state, what it says. */
async function taskPulls(g: Harness) {
  const { data } = await g.user.rest.pulls.list({ owner: OWNER, repo: REPO, state: "all", per_page: 100 });
  return data
    .filter((p) => p.head.ref.split("/").length === 4)
    .map((p) => ({
      number: p.number,
      branch: p.head.ref,
      by: p.user?.login,
      state: p.state,
      merged: p.merged_at !== null,
      body: p.body ?? "",
    }));
}

describe("GitHub Actions may not create pull requests", () => {
  it(
    "the runner's PRs are refused; the App opens each one — a refinery's upstreams' before the refinery reads them — and the plan completes",
    T,
    async () => {
      h = await startHarness((): Script => ({ kind: "success" }), { actionsMayCreatePullRequests: false });
      await h.pushFiles(planFiles("mini", { a: [], b: [], r: ["a", "b"] }), "Add plan");
      const j = await h.waitFor((x) => x.status === "completed");
      expect(j.tasks.map((t) => `${t.id} ${t.status} #${t.attempts}`)).toEqual(["a MERGED #1", "b MERGED #1", "r MERGED #1"]);
      const pulls = await taskPulls(h);
      expect(pulls.map((p) => p.branch).sort()).toEqual(j.tasks.map((t) => t.attempt!.branch).sort());
      for (const p of pulls) {
        expect(p.by, p.branch).toBe("forge[bot]");
        expect(p.body, p.branch).toContain(SAID);
      }
      // r's PR merged, carrying a's and b's (GitHub marks theirs merged too).
      expect(pulls.every((p) => p.merged)).toBe(true);
      expect(h.sim.violations).toEqual([]);
    },
  );

  it(
    "merge_policy review: the App opens the PR as soon as the work is verified, a writer approves it there, and it merges",
    T,
    async () => {
      h = await startHarness((): Script => ({ kind: "success" }), {
        config: "merge_policy: review\n",
        actionsMayCreatePullRequests: false,
      });
      await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
      const ready = await h.waitFor((x) => task(x, "a").status === "MERGE_READY");
      const branch = task(ready, "a").attempt!.branch;
      // No merge is about to run (a person's approval comes first): the App opens the PR by itself.
      const opened = async () => (await taskPulls(h!)).find((p) => p.branch === branch);
      let pr = await opened();
      for (let i = 0; i < 50 && !pr; i++) pr = await h.whileWaiting(new Promise((r) => setTimeout(r, 100)).then(opened));
      expect(pr).toMatchObject({ by: "forge[bot]", state: "open" });
      expect(pr!.body).toContain(SAID);
      const number = pr!.number;
      const writer = new Octokit({ baseUrl: h.sim.apiUrl, auth: h.sim.control.userToken("octocat") });
      await writer.rest.pulls.createReview({ owner: OWNER, repo: REPO, pull_number: number, event: "APPROVE" });
      const j = await h.waitFor((x) => x.status === "completed");
      expect(task(j, "a")).toMatchObject({ status: "MERGED", attempts: 1, attempt: { prNumber: number } });
      expect((await taskPulls(h)).map((p) => p.branch)).toEqual([task(j, "a").attempt!.branch]);
    },
  );
});
