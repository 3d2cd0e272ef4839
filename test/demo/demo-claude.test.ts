/**
 * `forge demo --agent claude` end to end: the real Claude Code CLI in every job, against the scripted
 * model server (src/demo/claude-script.ts). It takes minutes, so it runs only when asked:
 *   FORGE_DEMO_CLAUDE=1 npx vitest run test/demo/demo-claude.test.ts
 * Asserts what the demo promises with that agent too: exit 0, every task MERGED, release's Change
 * Request titled in the agent's own words, and the PR feedback loop — pad's review answered by a revision (the note, the reply in the comment's thread) and
 * approved; truncate's first head red on the project's required check, its fix revision green.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { DemoResult } from "../../src/demo/run.js";
import { runForge } from "../cli/helpers.js";
import { releaseCrTitle } from "./release-cr.js";

const out = mkdtempSync(path.join(tmpdir(), "forge-demo-claude-test-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe.skipIf(process.env.FORGE_DEMO_CLAUDE !== "1")("forge demo --agent claude", () => {
  it(
    "runs the textkit plan to the end with the review iteration and the CI fix",
    async () => {
      const { code, out: stdout, err } = await runForge(["demo", "--agent", "claude", "--json", "--out", out], process.cwd());
      const result = JSON.parse(stdout) as DemoResult;
      expect(code, `${err.slice(-4000)}\n${JSON.stringify(result.problems)}`).toBe(0);
      expect(result).toMatchObject({ ok: true, problems: [], status: "completed", agent: "claude" });
      expect(result.tasks.filter((t) => t.status !== "MERGED")).toEqual([]);

      const pad = result.tasks.find((t) => t.id === "pad")!;
      expect(pad).toMatchObject({ status: "MERGED", iteration: 1, reviewIterations: 1 });
      const { review, ciFix } = result.feedback;
      expect(review).toMatchObject({ task: "pad", pr: pad.pr, status: "MERGED", iteration: 1, approvalId: expect.any(Number) });
      expect(review!.reply).toMatch(
        /^Done in revision 1: a note at `src\/pad\.js:19`\.\n\nRevision 1 \([0-9a-f]{7}\) changed `src\/pad\.js`\.$/,
      );

      // release's Change Request: its issue's title is the refinery agent's own, with the real CLI too.
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
