// Every agent CLI with its real binary against the scripted server of its API (rows.ts), the model
// answering 429: a rate limit the CLI gives up on ends in Forge's backoff and a second run that
// succeeds; a usage limit (a quota) in a pause until it resets — past the job's deadline, so Forge
// does not wait for it but reports the time.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { spawnAgent } from "../../../src/agent/spawn/index.js";
import type { ProgressEvent } from "../../../src/agent/types.js";
import { baseSpawn, runnerEnv, skipReason, skipTitle, tempDir, timed, transcriptOf, useWorld } from "./harness.js";
import { ROWS } from "./rows.js";

const world = useWorld();

describe.each(ROWS)("$adapter with the real CLI: rate and usage limits", (row) => {
  it.skipIf(skipReason(row, "backoff") !== undefined)(
    skipTitle(row, "backoff", "backs off when the model answers 429 past the CLI's own tries, and succeeds on the next run"),
    async () => {
      const { backoff } = row;
      const server = (world.server = await row.api.serve(
        [{ toolCalls: [row.tools.shell("echo after-the-limit > done.txt")] }, { text: "Done after the limit.\nFORGE_EXIT=0" }],
        backoff.errors,
      ));
      const waits: number[] = [];
      const events: ProgressEvent[] = [];
      const t0 = performance.now();
      const r = await spawnAgent({
        ...baseSpawn(row, world, runnerEnv(row, server.url, backoff.env)),
        agentType: "1",
        prompt: "Write done.txt",
        sessionDir: path.join(tempDir(), "s"),
        deadline: Date.now() + 3_600_000,
        forgeCli: false,
        random: () => 0,
        sleep: async (ms) => {
          waits.push(ms);
          // The limit ends while Forge waits.
          if (backoff.clearOnSleep) server.clearErrors();
        },
        onProgress: (e) => events.push(e),
      });
      timed(row, "backoff", performance.now() - t0);
      expect(r, transcriptOf(r).slice(-3000)).toMatchObject({
        exitCode: 0,
        rateLimitRetries: 1,
        result: "Done after the limit.\nFORGE_EXIT=0",
        ...backoff.result,
      });
      // Backoff, not a reset time: the first wait of the exponential series.
      if (backoff.wait !== undefined) expect(waits).toEqual([backoff.wait]);
      else expect(waits).toHaveLength(1);
      expect(readFileSync(path.join(world.repo, "done.txt"), "utf8")).toBe("after-the-limit\n");
      const statuses = server.turns().map((t) => t.status);
      if (backoff.statuses) expect(statuses).toEqual(backoff.statuses);
      else {
        expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(1);
        expect(statuses.slice(-2)).toEqual([200, 200]);
      }
      // The first run's failure is in its transcript as the CLI reported it.
      if (backoff.transcript) expect(transcriptOf(r)).toMatch(backoff.transcript);
      if (backoff.rateLimitEvent)
        expect(events.filter((e) => e.kind === "rate_limit").map((e) => e.summary)).toEqual([
          expect.stringMatching(backoff.rateLimitEvent),
        ]);
    },
    row.backoff.testMs,
  );

  it.skipIf(skipReason(row, "usage") !== undefined)(
    skipTitle(row, "usage", "turns a usage limit into a pause until it resets, past the job's deadline"),
    async () => {
      const { usage } = row;
      const server = (world.server = await row.api.serve([{ text: "never reached" }], usage.errors));
      const before = Date.now();
      const r = await spawnAgent({
        ...baseSpawn(row, world, runnerEnv(row, server.url, usage.env)),
        agentType: "1",
        prompt: "Anything",
        sessionDir: path.join(tempDir(), "s"),
        deadline: Date.now() + 60_000,
        forgeCli: false,
        random: () => 0,
        sleep: () => Promise.reject(new Error("a limit past the deadline must not be waited for")),
      });
      timed(row, "usage", Date.now() - before);
      expect(r, transcriptOf(r).slice(-3000)).toMatchObject({ exitCode: 1, error: { code: "rate_limited" } });
      if (usage.message) expect(r.error?.message).toMatch(usage.message);
      usage.reset(new Date(r.rateLimitedUntil!), before);
      const statuses = server.turns().map((t) => t.status);
      if (usage.statuses) expect(statuses).toEqual(usage.statuses);
      else expect(statuses.every((s) => s === 429)).toBe(true);
      expect(statuses.length).toBeGreaterThan(0);
      expect(existsSync(path.join(world.repo, "src"))).toBe(false);
    },
    row.usage.testMs,
  );
});
