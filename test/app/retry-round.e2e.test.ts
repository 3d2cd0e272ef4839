/**
 * `/forge retry failed` on the run's tracker, on the local GitHub over real HTTP with signed
 * webhooks: from a reader it is refused (a 👎, no reply, nothing retried — the collaborator
 * permission API decides, as for every command); from a writer it retries every failed or exhausted
 * task in one decision (one journal write), the tracker's reply names them and the task left waiting
 * for its answer, and the retried tasks merge.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Journal } from "../../src/core/journal.js";
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

const task = (j: Journal, id: string) => j.tasks.find((t) => t.id === id)!;

async function trackerOf(g: Harness): Promise<number> {
  for (let i = 0; i < 100; i++) {
    await g.app.forge.idle();
    const { data } = await g.user.rest.issues.listForRepo({ owner: OWNER, repo: REPO, state: "all", labels: LABELS.tracker });
    if (data[0]) return data[0].number;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("no tracker issue");
}

async function reactionsOf(g: Harness, commentId: number): Promise<string[]> {
  for (let i = 0; i < 100; i++) {
    await g.app.forge.idle();
    const { data } = await g.user.rest.reactions.listForIssueComment({ owner: OWNER, repo: REPO, comment_id: commentId });
    if (data.length) return data.map((r) => r.content);
    await new Promise((r) => setTimeout(r, 100));
  }
  return [];
}

/** The App's comments on the tracker (its own, not the person's). */
async function appComments(g: Harness, issue: number): Promise<string[]> {
  await g.app.forge.idle();
  const { data } = await g.user.rest.issues.listComments({ owner: OWNER, repo: REPO, issue_number: issue });
  return data.filter((c) => c.user?.type === "Bot").map((c) => c.body ?? "");
}

describe("/forge retry failed", () => {
  it(
    "a reader is refused; a writer's retries every failed task in one journal write, and the reply names them",
    { timeout: 120_000 },
    async () => {
      // a and b fail their first attempt (exit 1, no automatic retry), c asks a question, d merges.
      h = await startHarness(
        (id, attempt): Script =>
          attempt > 1 || id === "d"
            ? { kind: "success" }
            : id === "c"
              ? { kind: "exit", code: 3, question: "Which registry?" }
              : { kind: "exit", code: 1, error: "the package registry answered 503" },
        { config: "max_retries: 0\nretry_backoff: { base_seconds: 0, max_seconds: 0 }\n" },
      );
      await h.pushFiles(planFiles("mini", { a: [], b: [], c: [], d: [] }), "Add plan");
      const failed = await h.waitFor(
        (x) =>
          task(x, "a").attempt?.hold === "exhausted" &&
          task(x, "b").attempt?.hold === "exhausted" &&
          task(x, "c").attempt?.hold === "human" &&
          task(x, "d").status === "MERGED",
      );
      const tracker = await trackerOf(h);
      const dispatched = h.runner.dispatched.length;
      const before = h.decisions.length;

      // A reader: 👎, no reply, nothing decided, nothing dispatched.
      const refused = (await h.sim.control.comment("reader", FULL, tracker, "/forge retry failed")).body as { id: number };
      expect(await reactionsOf(h, refused.id)).toEqual(["-1"]);
      const repliesBefore = (await appComments(h, tracker)).filter((c) => c.includes("Retried"));
      expect(repliesBefore).toEqual([]);
      expect(h.decisions.length).toBe(before);
      expect(h.runner.dispatched.length).toBe(dispatched);
      expect(task(h.decisions.at(-1)!.d.journal, "a").attempt?.hold).toBe("exhausted");

      // A writer: one decision retries a and b; the reply names them, and c waiting for its answer.
      await h.sim.control.comment("octocat", FULL, tracker, "/forge retry failed the registry is back");
      const done = await h.waitFor((x) => task(x, "a").status === "MERGED" && task(x, "b").status === "MERGED");
      const rounds = h.decisions.slice(before).filter((x) => x.d.events.some((e) => e.type === "task.retried"));
      expect(rounds).toHaveLength(1);
      expect(rounds[0]!.d.events.filter((e) => e.type === "task.retried").map((e) => [e.taskId, e.data])).toEqual([
        ["a", expect.objectContaining({ attemptId: 2, manual: true })],
        ["b", expect.objectContaining({ attemptId: 2, manual: true })],
      ]);
      const dispatches = rounds[0]!.d.effects.filter((e) => e.kind === "DispatchAgent");
      expect(dispatches.map((e) => [e.taskId, e.attempt, e.kind === "DispatchAgent" ? e.context : undefined])).toEqual([
        ["a", 2, expect.objectContaining({ answer: "the registry is back" })],
        ["b", 2, expect.objectContaining({ answer: "the registry is back" })],
      ]);
      expect(task(done, "c")).toMatchObject({ status: "FAILED", attempts: 1, attempt: { hold: "human" } });
      expect(task(done, "a").retries).toBe(0);

      let reply: string | undefined;
      for (let i = 0; i < 100 && !reply; i++) {
        reply = (await appComments(h, tracker)).find((c) => c.startsWith("Retried"));
        if (!reply) await new Promise((r) => setTimeout(r, 100));
      }
      expect(reply).toBe(
        [
          "Retried 2 failed tasks: `a`, `b`.",
          "",
          "Not retried, each waiting for a command of its own:",
          "- `c` waits for an answer: `/forge retry c <answer>`",
        ].join("\n"),
      );
      void failed;
    },
  );
});
