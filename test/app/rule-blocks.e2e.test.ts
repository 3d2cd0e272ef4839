/**
 * Forge says why when a rule of the repository stops it (docs/executor.md#when-a-rule-refuses-a-push
 * and #merging-under-the-repositorys-rules), on the local GitHub over real HTTP with signed webhooks:
 * a job's push refused by a rule (file_path_restriction) stops the task — held, not retried — and
 * its reason (the rule, its ruleset, the branch, what was found, what a person can do) is on the
 * tracker within a minute of the job's end. Once the rule is fixed, `/forge retry` carries on and
 * the plan completes. A merge queue rule refuses nothing: Forge merges through the queue.
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

async function ruleset(g: Harness, body: Record<string, unknown>): Promise<number> {
  const admin = new Octokit({ baseUrl: g.sim.apiUrl, auth: g.sim.control.userToken(OWNER) });
  const { data } = await admin.request("POST /repos/{owner}/{repo}/rulesets", {
    owner: OWNER,
    repo: REPO,
    target: "branch",
    enforcement: "active",
    ...body,
  } as never);
  return (data as { id: number }).id;
}

async function trackerBody(g: Harness): Promise<string> {
  const { data } = await g.user.rest.issues.listForRepo({ owner: OWNER, repo: REPO, state: "all", labels: LABELS.tracker });
  return data[0]?.body ?? "";
}

/** Polls until `read` answers something `ok` accepts (the App's comments and tracker are written in the background). */
async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean, tries = 80): Promise<T> {
  let v = await read();
  for (let i = 0; i < tries && !ok(v); i++) {
    await new Promise((r) => setTimeout(r, 250));
    v = await read();
  }
  return v;
}

describe("a rule of the repository stops Forge, and Forge says why", () => {
  it(
    "a job's push refused by file_path_restriction: the task is held (not retried), the tracker says which rule within a minute; fixed, /forge retry completes the plan",
    T,
    async () => {
      h = await startHarness((_id, attempt): Script =>
        attempt === 1
          ? { kind: "success", files: { "src/a.ts": "export const a = 1;\n", "secrets/key.pem": "KEY\n" } }
          : { kind: "success" },
      );
      const id = await ruleset(h, {
        name: "no secrets on task branches",
        conditions: { ref_name: { include: ["refs/heads/forge/**"], exclude: [] } },
        rules: [{ type: "file_path_restriction", parameters: { restricted_file_paths: ["secrets/**"] } }],
      });
      await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
      // The job ends: its write was refused.
      await h.whileWaiting(
        eventually(
          async () => h!.sim.control.deliveries({ event: "workflow_run", action: "completed" }).length,
          (n) => n > 0,
        ),
      );
      const ended = h.clock.now();
      const held = await h.waitFor((x) => task(x, "a").status === "FAILED");
      const a = task(held, "a");
      expect(a.attempt?.hold).toBe("blocked");
      expect(a.attempts).toBe(1); // not retried by itself
      const why = a.lastError ?? "";
      expect(why).toContain("GitHub refused the push of `forge/");
      expect(why).toContain('the `file_path_restriction` rule of ruleset "no secrets on task branches"');
      expect(why).toContain("Changes to restricted file paths are not allowed.");
      expect(why).toMatch(/`forge\/mini-[0-9a-f]+\/a\/1`/); // the branch
      expect(why).toContain("What a person can do: the task's work has files the rule refuses");
      expect(why).toContain("/forge retry");
      // The tracker says so within a minute of the job's end (its own time, the App's clock).
      const tracker = await h.whileWaiting(
        eventually(
          () => trackerBody(h!),
          (b) => b.includes("held: blocked"),
        ),
      );
      expect(tracker).toContain("GitHub refused the push of");
      expect(h.clock.now() - ended).toBeLessThan(60_000);
      // And a comment (on the tracker: the attempt opened no pull request) names the rule and the retry.
      const issue = (await h.user.rest.issues.listForRepo({ owner: OWNER, repo: REPO, state: "all", labels: LABELS.tracker })).data[0]!;
      const comments = await h.whileWaiting(
        eventually(
          async () =>
            (await h!.user.rest.issues.listComments({ owner: OWNER, repo: REPO, issue_number: issue.number })).data.map(
              (c) => c.body ?? "",
            ),
          (c) => c.some((b) => b.includes("Forge stopped `a`")),
        ),
      );
      expect(comments.find((b) => b.includes("Forge stopped `a`"))).toContain("file_path_restriction");
      // Nothing more happens by itself: no second attempt.
      await h.advance(5 * 60_000);
      expect(h.runner.dispatched.filter((k) => k.includes("/a/"))).toHaveLength(1);

      // The owner lifts the rule; a writer asks Forge to try again.
      const admin = new Octokit({ baseUrl: h.sim.apiUrl, auth: h.sim.control.userToken(OWNER) });
      await admin.rest.repos.deleteRepoRuleset({ owner: OWNER, repo: REPO, ruleset_id: id });
      await h.user.rest.issues.createComment({ owner: OWNER, repo: REPO, issue_number: issue.number, body: "/forge retry a" });
      const j = await h.waitFor((x) => x.status === "completed");
      expect(task(j, "a")).toMatchObject({ status: "MERGED", attempts: 2 });
      expect(h.sim.violations).toEqual([]);
    },
  );

  it(
    "a merge queue rule: no refusal to name any more — Forge enqueues the task's PR and it merges through the queue, with nothing waiting for a person",
    T,
    async () => {
      h = await startHarness((): Script => ({ kind: "success" }));
      await ruleset(h, {
        name: "queue",
        conditions: { ref_name: { include: ["refs/heads/forge/*/_integration"], exclude: [] } },
        rules: [
          {
            type: "merge_queue",
            parameters: {
              check_response_timeout_minutes: 60,
              grouping_strategy: "ALLGREEN",
              max_entries_to_build: 5,
              max_entries_to_merge: 5,
              merge_method: "SQUASH",
              min_entries_to_merge: 1,
              min_entries_to_merge_wait_minutes: 5,
            },
          },
        ],
      });
      await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
      const j = await h.waitFor((x) => x.status === "completed");
      expect(task(j, "a").status).toBe("MERGED");
      expect(task(j, "a").attempt!.revision.waiting).toBeUndefined();
      const pr = task(j, "a").attempt!.prNumber!;
      const dequeued = h.sim.control.deliveries({ event: "pull_request", action: "dequeued" });
      expect(dequeued.map((d) => (d.payload as { reason: string; number: number }).reason)).toContain("MERGE");
      const comments = (await h.user.rest.issues.listComments({ owner: OWNER, repo: REPO, issue_number: pr })).data.map(
        (c) => c.body ?? "",
      );
      expect(comments.filter((b) => b.includes("Forge cannot merge"))).toEqual([]);
      expect(h.sim.violations).toEqual([]);
    },
  );
});
