/**
 * `forge demo --agent opencode` and `--agent qwen` end to end: the real CLI in every job, against the
 * scripted Chat Completions server (src/demo/chat-script.ts: the Claude Code script's turns in the
 * CLI's own tools), through the task job's model proxy. Each takes minutes, so it runs only when asked:
 *   FORGE_DEMO_OPENCODE=1 FORGE_DEMO_QWEN=1 npx vitest run test/demo/demo-chat.test.ts
 * Asserts what `--agent gemini` asserts: exit 0, every task MERGED, release's Change Request titled
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

const outs: string[] = [];
afterAll(() => {
  for (const o of outs) rmSync(o, { recursive: true, force: true });
});

/** Each CLI runs only when asked (minutes each): FORGE_DEMO_OPENCODE=1, FORGE_DEMO_QWEN=1. */
const AGENTS = [
  { agent: "opencode", asked: process.env.FORGE_DEMO_OPENCODE === "1" },
  { agent: "qwen", asked: process.env.FORGE_DEMO_QWEN === "1" },
];

describe.each(AGENTS)("forge demo --agent $agent", ({ agent, asked }) => {
  it.skipIf(!asked)(
    "runs the textkit plan to the end with the review iteration and the CI fix",
    async () => {
      const out = mkdtempSync(path.join(tmpdir(), `forge-demo-${agent}-test-`));
      outs.push(out);
      const { code, out: stdout, err } = await runForge(["demo", "--agent", agent, "--json", "--out", out], process.cwd());
      const result = JSON.parse(stdout) as DemoResult;
      expect(code, `${err.slice(-4000)}\n${JSON.stringify(result.problems)}`).toBe(0);
      expect(result).toMatchObject({ ok: true, problems: [], status: "completed", agent });
      expect(result.tasks.filter((t) => t.status !== "MERGED")).toEqual([]);

      const pad = result.tasks.find((t) => t.id === "pad")!;
      expect(pad).toMatchObject({ status: "MERGED", iteration: 1, reviewIterations: 1 });
      const { review, ciFix } = result.feedback;
      expect(review).toMatchObject({ task: "pad", pr: pad.pr, status: "MERGED", iteration: 1, approvalId: expect.any(Number) });
      expect(review!.reply).toMatch(
        /^Done in revision 1: a note at `src\/pad\.js:19`\.\n\nRevision 1 \([0-9a-f]{7}\) changed `src\/pad\.js`\.$/,
      );

      // release's Change Request: its issue's title is the refinery agent's own, with this CLI too.
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
