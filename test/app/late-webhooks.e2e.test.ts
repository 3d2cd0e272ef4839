/**
 * Webhooks in the tail GitHub's deliveries have (src/local-github/latency/README.md: one in twenty a
 * minute or more late, up to 160 s): with every delivery 150 s late, the App's reconciler finds what
 * the runner did — its job ended, its result pushed, its PR — before the webhooks saying so arrive,
 * the plan completes, and the late webhooks, when they come, change nothing. On the harness's test
 * clock the minutes cost no real time.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Journal } from "../../src/core/journal.js";
import { LATENCY_CLASSES, type LatencyProfile } from "../../src/local-github/latency/profile.js";
import { planFiles } from "../helpers/plan-files.js";
import { startHarness, type Harness } from "./helpers.js";
import type { Script } from "./scripted-runner.js";

let h: Harness | undefined;
afterEach(async () => {
  const done = h;
  h = undefined;
  await done?.close();
}, 60_000);

/** Nothing delayed but webhooks, each 150 s late (the github profile's tail, at its worst but one). */
const LATE: LatencyProfile = {
  ...(Object.fromEntries(LATENCY_CLASSES.map((c) => [c, { medianMs: 0, p95Ms: 0 }])) as LatencyProfile),
  webhook: { medianMs: 150_000, p95Ms: 150_000 },
};

describe("webhooks 150 s late", () => {
  it(
    "the reconciler finds each result before its webhooks arrive; the plan completes once, and the late webhooks change nothing",
    { timeout: 180_000 },
    async () => {
      h = await startHarness((): Script => ({ kind: "success" }), { sim: { latency: { profile: LATE } }, reconcileEveryMs: 10_000 });
      const realStart = Date.now();
      const clockStart = h.clock.now();
      await h.pushFiles(planFiles("late", { a: [], b: ["a"] }), "Add plan");
      // Each task's result is seen while the push that carried it is still on its way to the App.
      const pushesOf = (branch: string) =>
        h!.sim.control
          .deliveries({ event: "push" })
          .filter((d) => d.installationId === h!.installationId && (d.payload as { ref: string }).ref === `refs/heads/${branch}`);
      const ahead: string[] = [];
      for (const id of ["a", "b"]) {
        const ready = await h.waitFor((j) => ["MERGE_READY", "MERGED"].includes(j.tasks.find((t) => t.id === id)!.status));
        const branch = ready.tasks.find((t) => t.id === id)!.attempt!.branch;
        const pushes = pushesOf(branch);
        expect(pushes.length).toBeGreaterThan(0);
        if (pushes.every((d) => d.status === "pending")) ahead.push(id);
      }
      expect(ahead).toEqual(["a", "b"]);
      const done = await h.waitFor((j) => j.status === "completed");
      expect(done.tasks.map((t) => [t.id, t.status, t.attempts])).toEqual([
        ["a", "MERGED", 1],
        ["b", "MERGED", 1],
      ]);
      // The late webhooks arrive (every one of them, delivered), and nothing changes.
      const decided = h.decisions.length;
      await h.whileWaiting(h.sim.idle());
      await h.advance(200_000);
      await h.whileWaiting(h.app.forge.idle());
      const late = h.sim.control.deliveries().filter((d) => d.installationId === h!.installationId);
      expect(late.filter((d) => d.status !== "ok")).toEqual([]);
      const after = h.decisions.slice(decided);
      expect(after.flatMap((d) => d.d.events).filter((e) => e.type.startsWith("task."))).toEqual([]);
      expect(after.every((d) => (d.d.journal as Journal).status === "completed")).toBe(true);
      expect(h.runner.dispatched).toHaveLength(2);
      expect(h.sim.violations).toEqual([]);
      // Minutes of the clock, seconds of real time.
      expect(h.clock.now() - clockStart).toBeGreaterThan(300_000);
      expect(Date.now() - realStart).toBeLessThan(120_000);
    },
  );
});
