/**
 * `forge demo --agent gemini` end to end: the real Gemini CLI in every job, against the scripted
 * Gemini API server (src/demo/gemini-script.ts: the Claude Code script's turns in Gemini CLI's
 * tools), through the task job's model proxy. It takes minutes, so it runs only when asked:
 *   FORGE_DEMO_GEMINI=1 npx vitest run test/demo/demo-gemini.test.ts
 * Asserts what `--agent claude` asserts: exit 0, every task MERGED, release's Change Request titled
 * in the agent's own words, pad's review answered by a revision and approved, truncate's red
 * required check fixed by a revision.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { DemoResult } from "../../src/demo/run.js";
import { runForge } from "../cli/helpers.js";
import { releaseCrTitle } from "./release-cr.js";

const out = mkdtempSync(path.join(tmpdir(), "forge-demo-gemini-test-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe.skipIf(process.env.FORGE_DEMO_GEMINI !== "1")("forge demo --agent gemini", () => {
  it(
    "runs the textkit plan to the end with the review iteration and the CI fix",
    async () => {
      const { code, out: stdout, err } = await runForge(["demo", "--agent", "gemini", "--json", "--out", out], process.cwd());
      const result = JSON.parse(stdout) as DemoResult;
      expect(code, `${err.slice(-4000)}\n${JSON.stringify(result.problems)}`).toBe(0);
      expect(result).toMatchObject({ ok: true, problems: [], status: "completed", agent: "gemini" });
      expect(result.tasks.filter((t) => t.status !== "MERGED")).toEqual([]);

      const pad = result.tasks.find((t) => t.id === "pad")!;
      expect(pad).toMatchObject({ status: "MERGED", iteration: 1, reviewIterations: 1 });
      const { review, ciFix } = result.feedback;
      expect(review).toMatchObject({ task: "pad", pr: pad.pr, status: "MERGED", iteration: 1, approvalId: expect.any(Number) });
      expect(review!.reply).toMatch(
        /^Done in revision 1: a note at `src\/pad\.js:19`\.\n\nRevision 1 \([0-9a-f]{7}\) changed `src\/pad\.js`\.$/,
      );

      // release's Change Request: its issue's title is the refinery agent's own, with Gemini CLI too.
      const title = releaseCrTitle();
      expect(result.changeRequests).toEqual([
        expect.objectContaining({ emittedBy: "release", status: "applied", title, issueTitle: title }),
      ]);

      const truncate = result.tasks.find((t) => t.id === "truncate")!;
      expect(truncate).toMatchObject({ status: "MERGED", iteration: 1, ciFixes: 1 });
      expect(ciFix).toMatchObject({ task: "truncate", failedCheck: "check", iteration: 1, status: "MERGED" });
      const red = ciFix!.conclusions.findIndex((c) => c.endsWith(" failure"));
      expect(red, JSON.stringify(ciFix)).toBeGreaterThanOrEqual(0);
      expect(ciFix!.conclusions.at(-1), JSON.stringify(ciFix)).toMatch(/ success$/);
      expect(err).toMatch(/truncate +MERGE_READY → RUNNING/);
      expect(result.testsOnIntegration).toMatchObject({ ok: true, fail: 0 });
    },
    30 * 60_000,
  );
});
