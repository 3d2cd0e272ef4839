/**
 * The App under a tight content-creating limit on the local GitHub (../../src/local-github/rate-limits.ts):
 * 10 content-creating requests per window for the App's installation — GitHub's own secondary
 * limit is 80 a minute; here the "minute" is 5 s so the test takes seconds, not minutes. Forge's
 * own pace (80 a minute) does not foresee it, so GitHub says no (403, `retry-after`) again and
 * again; the plan still completes, and nothing is done twice: each task starts and merges once in
 * the journal's events, and each GitHub object the App makes (tracker, pull requests, check runs)
 * exists once.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ForgeEvent } from "../../src/core/schemas/events.js";
import { planFiles } from "../helpers/plan-files.js";
import { OWNER, REPO, startHarness, type Harness } from "./helpers.js";

let h: Harness | undefined;
afterEach(async () => {
  const done = h;
  h = undefined;
  await done?.close();
}, 60_000);

describe("a tight rate limit", () => {
  it("a small plan completes under 10 content-creating requests per window, each effect done once", { timeout: 180_000 }, async () => {
    h = await startHarness(() => ({ kind: "success" }), {
      // The App's installation alone: the scripted runner stands in for the agents' jobs, whose
      // GITHUB_TOKEN has a budget of its own on GitHub and is not what is tested here.
      sim: { rateLimits: { enabled: true, creatingPerMinute: 10, creatingWindowMs: 5_000, appliesTo: ["installation"] } },
    });
    await h.pushFiles(planFiles("tight", { a: [], b: ["a"], c: [] }), "Add plan");
    const j = await h
      .waitFor((x) => x.status === "completed", 90_000)
      .catch((e: Error) => {
        throw new Error(`${e.message}\nrefused: ${JSON.stringify(h!.sim.core.rateLimits.refused)}`);
      });
    expect(j.tasks.map((t) => [t.id, t.status]).sort()).toEqual([
      ["a", "MERGED"],
      ["b", "MERGED"],
      ["c", "MERGED"],
    ]);

    // GitHub did say no: secondary limits answered to the App's installation.
    const refused = h.sim.core.rateLimits.refused.filter((r) => r.key === `installation:${h!.installationId}`);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((r) => r.limit === "secondary")).toBe(true);
    console.log(`rate-limited: ${refused.length} requests of the App refused, ${h.sim.core.rateLimits.refused.length} in all`);

    // Each effect once, in the journal's events…
    const events: ForgeEvent[] = h.decisions.flatMap(({ d }) => d.events);
    const count = (type: string) => {
      const n = new Map<string, number>();
      for (const e of events) {
        if (e.type !== type) continue;
        const k = `${e.taskId}#${(e.data as { attempt?: number }).attempt}`;
        n.set(k, (n.get(k) ?? 0) + 1);
      }
      return n;
    };
    for (const type of ["task.started", "task.merged"]) {
      const n = count(type);
      expect([...n.keys()].length, type).toBe(3);
      expect(
        [...n.values()].every((v) => v === 1),
        `${type} ${JSON.stringify([...n])}`,
      ).toBe(true);
    }
    expect(events.filter((e) => e.type === "run.completed")).toHaveLength(1);
    // …dispatched once each…
    expect(new Set(h.runner.dispatched).size).toBe(h.runner.dispatched.length);
    // …and each object made on GitHub once.
    const repoId = h.sim.core.state.repoByName(OWNER, REPO)!.id;
    const issues = h.sim.core.state.issuesOf(repoId);
    expect(issues.filter((i) => !i.pull && i.labels.includes("forge:run"))).toHaveLength(1);
    const heads = issues.filter((i) => i.pull).map((i) => i.pull!.headRef);
    expect(new Set(heads).size).toBe(heads.length);
    const checks = [...h.sim.core.state.checkRuns.values()].filter((c) => c.appId === h!.appId && c.externalId).map((c) => c.externalId);
    expect(new Set(checks).size).toBe(checks.length);
  });
});
