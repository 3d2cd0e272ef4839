/**
 * `forge demo --agent copilot` end to end: the real GitHub Copilot CLI in every job — the tasks, the
 * refinery and the Captain — bring-your-own-key against the scripted Anthropic Messages server
 * (src/demo/copilot-script.ts: the Claude Code script's turns in Copilot CLI's tools), through each
 * job's model proxy. Copilot CLI's licence keeps it out of Forge's dependencies: this runs where it
 * is installed (FORGE_COPILOT_BIN names its binary, else `copilot` on PATH) and is reported as
 * skipped, with the reason, where it is not:
 *   FORGE_COPILOT_BIN=…/node_modules/.bin/copilot npx vitest run test/demo/demo-copilot.test.ts
 * Asserts what `--agent claude` asserts: exit 0, every task MERGED, release's Change Request titled
 * in the agent's own words and answered by the Captain's overlay, pad's review answered by a
 * revision and approved, truncate's red required check fixed by a revision.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { DemoResult } from "../../src/demo/run.js";
import { copilotBinary } from "../../src/fake-agents/copilot.js";
import { runForge } from "../cli/helpers.js";
import { releaseCrTitle } from "./release-cr.js";

const out = mkdtempSync(path.join(tmpdir(), "forge-demo-copilot-test-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

const BIN = copilotBinary();
const why =
  "GitHub Copilot CLI is not installed: set FORGE_COPILOT_BIN to its binary, or put `copilot` on PATH (npm i -g @github/copilot@1.0.102)";
if (!BIN) {
  console.warn(`demo-copilot: skipped — ${why}`);
  it.skip(`forge demo --agent copilot — ${why}`, () => undefined);
}

describe.runIf(BIN)("forge demo --agent copilot", () => {
  it(
    "runs the textkit plan to the end with the review iteration, the CI fix and the Captain's overlay",
    async () => {
      const { code, out: stdout, err } = await runForge(["demo", "--agent", "copilot", "--json", "--out", out], process.cwd());
      const result = JSON.parse(stdout) as DemoResult;
      expect(code, `${err.slice(-4000)}\n${JSON.stringify(result.problems)}`).toBe(0);
      expect(result).toMatchObject({ ok: true, problems: [], status: "completed", agent: "copilot" });
      expect(result.tasks.filter((t) => t.status !== "MERGED")).toEqual([]);
      expect(err).toMatch(/agent: the real GitHub Copilot CLI/);
      // Every job's Copilot CLI reached the scripted server through its job's model proxy, and only so.
      const served = result.modelServers?.["Anthropic Messages (Copilot CLI)"];
      expect(served?.requests, JSON.stringify(result.modelServers)).toBeGreaterThan(result.jobs.action);
      expect(served?.throughProxy).toBe(served?.requests);

      const pad = result.tasks.find((t) => t.id === "pad")!;
      expect(pad).toMatchObject({ status: "MERGED", iteration: 1, reviewIterations: 1 });
      const { review, ciFix } = result.feedback;
      expect(review).toMatchObject({ task: "pad", pr: pad.pr, status: "MERGED", iteration: 1, approvalId: expect.any(Number) });
      expect(review!.reply).toMatch(
        /^Done in revision 1: a note at `src\/pad\.js:19`\.\n\nRevision 1 \([0-9a-f]{7}\) changed `src\/pad\.js`\.$/,
      );

      // release's Change Request: its issue's title is the refinery agent's own, with Copilot CLI too;
      // the Captain (Copilot CLI as well) answered it with an overlay the person merged.
      const title = releaseCrTitle();
      expect(result.changeRequests).toEqual([
        expect.objectContaining({ emittedBy: "release", status: "applied", title, issueTitle: title }),
      ]);
      expect(result.jobs.captain).toBeGreaterThanOrEqual(1);
      expect(result.overlayPrs.filter((p) => p.merged)).toHaveLength(1);

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
