/**
 * The App's refineries on the local GitHub, over real HTTP with signed webhooks: a conflicted
 * upstream left to the refinery's agent, a refinery head that lacks an upstream, a dispatch that
 * fails after the refinery's branch was prepared (the other flows: flows.e2e.test.ts).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Journal } from "../../src/core/journal.js";
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

describe("Forge App flows: refineries", () => {
  it(
    "a refinery merge with a conflict: the conflicted upstream is left to the refinery's agent, whose merge brings both tasks in",
    T,
    async () => {
      // a and b rewrite the same line of src/shared.ts; r refines both.
      const shared = "src/shared.ts";
      h = await startHarness(
        (id): Script =>
          id === "a" || id === "b" ? { kind: "success", files: { [shared]: `export const owner = "${id}";\n` } } : { kind: "success" },
        { files: { [shared]: 'export const owner = "nobody";\n' } },
      );
      await h.pushFiles(planFiles("mini", { a: [], b: [], r: ["a", "b"] }), "Add plan");
      const j = await h.waitFor((x) => x.status === "completed");
      expect(j.tasks.map((t) => `${t.id} ${t.status} #${t.attempt}`)).toEqual(["a MERGED #1", "b MERGED #1", "r MERGED #1"]);
      const merged = h.decisions.flatMap((d) => d.d.events).filter((e) => e.type === "task.merged");
      expect(merged.filter((e) => e.taskId === "a" || e.taskId === "b").map((e) => (e.data as { by: string }).by)).toEqual([
        "refinery",
        "refinery",
      ]);
      // The App merged one upstream branch server-side; the other conflicted and r's dispatch named exactly it.
      const [a, b, r] = ["a", "b", "r"].map((id) => task(j, id));
      const inputs = h.runner.inputs.get(`${j.runId}/r/1`)!;
      const { conflicts } = JSON.parse(inputs.context ?? "{}") as { conflicts?: string[] };
      expect(conflicts).toHaveLength(1);
      expect([a!.branch, b!.branch]).toContain(conflicts![0]);
      const [clean, conflicted] = conflicts![0] === b!.branch ? [a!, b!] : [b!, a!];
      // r's history: the App's merge of the clean upstream, then the agent's merge commit of the conflicted one.
      const history = new Map<string, { message: string; parents: string[] }>();
      for (const queue = [r!.recordSha!]; queue.length;) {
        const sha = queue.pop()!;
        if (history.has(sha)) continue;
        const { data } = await h.user.rest.git.getCommit({ owner: OWNER, repo: REPO, commit_sha: sha });
        history.set(sha, { message: data.message, parents: data.parents.map((p) => p.sha) });
        queue.push(...data.parents.map((p) => p.sha));
      }
      const merges = [...history.values()].filter((c) => c.parents.length === 2);
      const appMerge = merges.find((c) => c.message.startsWith(`forge: merge ${clean.branch} into ${r!.branch}`));
      expect(appMerge?.parents, "the App's merge of the clean upstream").toContain(clean.recordSha);
      const agentMerge = merges.find((c) => c.message.startsWith(`Merge ${conflicted.branch} into ${r!.branch}`));
      expect(agentMerge?.parents ?? [], "r's agent's merge of the conflicted upstream").toContain(conflicted.recordSha);
      // The integration branch holds both tasks' lines, as the person reads it.
      const { data: file } = await h.user.rest.repos.getContent({ owner: OWNER, repo: REPO, path: shared, ref: j.integrationBranch });
      const content = Buffer.from((file as { content: string }).content, "base64").toString("utf8");
      expect(content).toContain('export const owner = "a";');
      expect(content).toContain('export const owner = "b";');
      expect(content).not.toContain("nobody");
      // No (task, attempt) was dispatched twice.
      expect(new Set(h.runner.dispatched).size).toBe(h.runner.dispatched.length);
      expect(h.runner.dispatched.map((d) => d.split("/").slice(1).join("/")).sort()).toEqual(["a/1", "b/1", "r/1"]);
    },
  );

  it(
    "a refinery whose head lacks a conflicted upstream fails (its upstream is not marked MERGED) and its retry brings both tasks in",
    T,
    async () => {
      // a and b rewrite the same line; r's first agent leaves the conflicted upstream unmerged, its second merges it.
      const shared = "src/shared.ts";
      h = await startHarness(
        (id, attempt): Script =>
          id === "a" || id === "b"
            ? { kind: "success", files: { [shared]: `export const owner = "${id}";\n` } }
            : { kind: "success", mergeConflicts: attempt !== 1 },
        { files: { [shared]: 'export const owner = "nobody";\n' }, config: "retry_backoff: { base_seconds: 0, max_seconds: 0 }\n" },
      );
      await h.pushFiles(planFiles("mini", { a: [], b: [], r: ["a", "b"] }), "Add plan");
      const j = await h.waitFor((x) => x.status === "completed");
      expect(j.tasks.map((t) => `${t.id} ${t.status} #${t.attempt}`)).toEqual(["a MERGED #1", "b MERGED #1", "r MERGED #2"]);
      const events = h.decisions.flatMap((d) => d.d.events);
      // Attempt 1 named the upstream its head lacked; nothing was marked MERGED by it.
      const conflicts1 = (JSON.parse(h.runner.inputs.get(`${j.runId}/r/1`)!.context ?? "{}") as { conflicts?: string[] }).conflicts ?? [];
      expect(conflicts1).toHaveLength(1);
      const lacking = [task(j, "a")!, task(j, "b")!].find((t) => t.branch === conflicts1[0])!;
      const failed = events.filter((e) => e.type === "task.failed" && e.taskId === "r");
      expect(failed.map((e) => e.data as { attemptId: number; error: string; retryable: boolean })).toEqual([
        {
          agentId: expect.any(String),
          attemptId: 1,
          exitCode: 0,
          retryable: true,
          error: `r's head does not contain ${lacking.id}'s work (branch ${lacking.branch})`,
        },
      ]);
      const mergedEvents = events.filter((e) => e.type === "task.merged");
      expect(
        mergedEvents
          .map((e) => `${e.taskId} ${(e.data as { attempt: number; by: string }).by} #${(e.data as { attempt: number }).attempt}`)
          .sort(),
      ).toEqual(["a refinery #1", "b refinery #1", "r direct #2"]);
      // Attempt 1's verdict is a failure on its PR's head.
      const { data: checks } = await h.user.rest.checks.listForRef({ owner: OWNER, repo: REPO, ref: `forge/${j.runId}/r/1` });
      expect(checks.check_runs.find((c) => c.name === "forge · r")).toMatchObject({ conclusion: "failure" });
      // The integration branch holds both tasks' lines.
      const { data: file } = await h.user.rest.repos.getContent({ owner: OWNER, repo: REPO, path: shared, ref: j.integrationBranch });
      const content = Buffer.from((file as { content: string }).content, "base64").toString("utf8");
      expect(content).toContain('export const owner = "a";');
      expect(content).toContain('export const owner = "b";');
      expect(h.runner.dispatched.map((d) => d.split("/").slice(1).join("/")).sort()).toEqual(["a/1", "b/1", "r/1", "r/2"]);
    },
  );
});

describe("Forge App flows: refineries, a dispatch that fails", () => {
  it(
    "a refinery's dispatch that fails after its branch was prepared is tried again with the conflicts kept in the journal",
    T,
    async () => {
      const shared = "src/shared.ts";
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      h = await startHarness(
        (id): Script =>
          id === "a" || id === "b"
            ? { kind: "success", gate, files: { [shared]: `export const owner = "${id}";\n` } }
            : { kind: "success" },
        {
          files: { [shared]: 'export const owner = "nobody";\n' },
        },
      );
      await h.pushFiles(planFiles("mini", { a: [], b: [], r: ["a", "b"] }), "Add plan");
      await h.waitFor((x) => task(x, "a").status === "RUNNING" && task(x, "b").status === "RUNNING");
      await h.app.forge.idle();
      expect(h.runner.dispatched.map((d) => d.split("/").slice(1).join("/")).sort()).toEqual(["a/1", "b/1"]);
      // From here every workflow dispatch fails (after the App's own retries): r's will be the first.
      h.sim.control.faults({ apiErrorRate: 1, apiOperations: ["actions/create-workflow-dispatch"] });
      release();
      const running = await h.waitFor((x) => task(x, "r").status === "RUNNING");
      await h.runner.idle();
      await h.app.forge.idle();
      expect(h.sim.control.core.faults.log.some((l) => l.startsWith("api actions/create-workflow-dispatch 5"))).toBe(true);
      expect(h.runner.dispatched.some((d) => d.endsWith("/r/1"))).toBe(false);
      // The branch was prepared (its acknowledgement is in the journal), the dispatch is still owed.
      const state = (await h.app.forge.runtimes.get(FULL)!.engine.state(running.runId))!.state.journal;
      expect(state.outbox.map((e) => e.key)).toContain("dispatch:r:1");
      expect(state.outbox.map((e) => e.key)).not.toContain("branch:r:1");
      expect(task(state, "r").context?.conflicts).toHaveLength(1);
      // GitHub recovers; the reconciler's tick carries out the owed dispatch, conflicts and all.
      h.sim.control.faults({ apiErrorRate: 0, apiOperations: [] });
      await h.app.forge.tick();
      const { conflicts } = JSON.parse(h.runner.inputs.get(`${running.runId}/r/1`)?.context ?? "{}") as { conflicts?: string[] };
      expect(conflicts).toEqual(task(state, "r").context?.conflicts);
      expect([task(state, "a")!.branch, task(state, "b")!.branch]).toContain(conflicts?.[0]);
      const j = await h.waitFor((x) => x.status === "completed");
      expect(j.tasks.map((t) => `${t.id} ${t.status} #${t.attempt}`)).toEqual(["a MERGED #1", "b MERGED #1", "r MERGED #1"]);
      const { data: file } = await h.user.rest.repos.getContent({ owner: OWNER, repo: REPO, path: shared, ref: j.integrationBranch });
      const content = Buffer.from((file as { content: string }).content, "base64").toString("utf8");
      expect(content).toContain('export const owner = "a";');
      expect(content).toContain('export const owner = "b";');
      expect(h.runner.dispatched.map((d) => d.split("/").slice(1).join("/")).sort()).toEqual(["a/1", "b/1", "r/1"]);
    },
  );
});
