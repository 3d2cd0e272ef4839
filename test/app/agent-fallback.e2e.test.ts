/**
 * A plan on several agents, on the local GitHub with the App (docs/executor.md#agent-fallback):
 * task `a` lists claude then codex, the refineries run on gemini (their kind's, in the config), `b`
 * on the config's claude. `a`'s first attempt ends on claude's usage limit: its next attempt goes to
 * codex at once — no pause — and the plan completes. The scripted runner stands in for the agents'
 * jobs (the real CLIs' mixed run is not this test); what is asserted is the App's side: the journal's
 * agent per attempt, the dispatches' `context.agent`, the events and the tracker.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ForgeEvent } from "../../src/core/schemas/events.js";
import { renderTracker } from "../../src/app/render.js";
import { planFiles } from "../helpers/plan-files.js";
import { OWNER, REPO, startHarness, type Harness } from "./helpers.js";

let h: Harness | undefined;
afterEach(async () => {
  const done = h;
  h = undefined;
  await done?.close();
}, 60_000);

describe("a plan on several agents", () => {
  it(
    "falls back from claude to codex after a usage limit without pausing, each attempt's agent in the journal, the dispatch and the tracker",
    { timeout: 180_000 },
    async () => {
      h = await startHarness(
        (taskId, attempt) => (taskId === "a" && attempt === 1 ? { kind: "rate_limited", untilMs: 3_600_000 } : { kind: "success" }),
        {
          config: "retry_backoff: { base_seconds: 0, max_seconds: 0 }\nagent:\n  kinds:\n    refinery: { agent: gemini }\n",
        },
      );
      const files = planFiles("mixed", { a: [], b: [], r: ["a", "b"] });
      const aFile = Object.keys(files).find((f) => f.endsWith("/tasks/a.md"))!;
      files[aFile] = files[aFile]!.replace("estimated_complexity: small\n", "estimated_complexity: small\nagent: [claude, codex]\n");
      await h.pushFiles(files, "Add plan");
      const j = await h.waitFor((x) => x.status === "completed", 120_000);
      expect(j.tasks.map((t) => [t.id, t.status])).toEqual([
        ["a", "MERGED"],
        ["b", "MERGED"],
        ["r", "MERGED"],
      ]);
      const task = (id: string) => j.tasks.find((t) => t.id === id)!;
      expect(task("a").agents).toEqual([
        { attempt: 1, agent: "claude" },
        {
          attempt: 2,
          agent: "codex",
          why: expect.stringMatching(/^after claude: claude stopped by its usage limit until .*; codex takes the next attempt$/),
        },
      ]);
      expect(task("a")).toMatchObject({ retries: 0, fallback: 1 });
      expect(task("b").agents).toEqual([{ attempt: 1, agent: "claude" }]);
      expect(task("r").agents).toEqual([{ attempt: 1, agent: "gemini" }]);

      const events: ForgeEvent[] = h.decisions.flatMap(({ d }) => d.events);
      expect(events.filter((e) => e.type === "run.paused")).toEqual([]);
      expect(events.find((e) => e.type === "task.retried" && e.taskId === "a")?.data).toMatchObject({
        agent: { from: "claude", to: "codex" },
      });

      // The jobs were told their agent: only where it is not the config's claude.
      const context = (key: string) => JSON.parse(h!.runner.inputs.get(key)?.context || "{}") as { agent?: unknown };
      expect(context(`${j.runId}/a/1`).agent).toBeUndefined();
      expect(context(`${j.runId}/a/2`).agent).toMatchObject({ adapter: "codex", switched: { from: "claude" } });
      expect(context(`${j.runId}/r/1`).agent).toEqual({ adapter: "gemini" });

      // The tracker the App renders from the final journal names each task's agents (the issue's own
      // updates are debounced past this test's end on the harness's clock).
      const tracker = renderTracker(j, [], { checkRuns: {} }, { owner: OWNER, repo: REPO, webUrl: h.sim.url }, 0);
      expect(tracker).toMatch(/\| `a` [^\n]*agent claude → codex/);
      expect(tracker).toMatch(/\| `r` [^\n]*agent gemini/);
    },
  );
});
