/**
 * `forge demo --agent mixed` end to end: textkit's tasks on three real agent CLIs at once, each
 * against the scripted model server of its API (src/demo/mixed.ts) — type 1 on `[claude, codex]`,
 * type 2 on Codex, the refineries on Gemini CLI, the Captain on the config's Claude Code — each job's
 * model proxy pointed at its agent's server. `case`'s first attempt gets Claude's usage limit from the
 * Anthropic server, and its next attempt goes to Codex (no pause) and merges. Unlike the one-CLI
 * demos it runs in the release lane without being asked (about 3 to 4 minutes: 3 min 46 s with the
 * machine's 2 cores at a load of 4 to 10); FORGE_DEMO_MIXED=0 skips it:
 *   npx vitest run test/demo/demo-mixed.test.ts
 * Asserts: exit 0, every task MERGED, each kind's tasks on its agent (the journal's agent per
 * attempt), `case` moved from claude to codex by the usage limit — said by the journal, its PR's
 * `## Agent` section and the tracker's row — and the summary naming each task's agents.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { DemoResult } from "../../src/demo/run.js";
import { summary } from "../../src/demo/summary.js";
import { runForge } from "../cli/helpers.js";
import { releaseCrTitle } from "./release-cr.js";

const out = mkdtempSync(path.join(tmpdir(), "forge-demo-mixed-test-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe.skipIf(process.env.FORGE_DEMO_MIXED === "0")("forge demo --agent mixed", () => {
  it(
    "runs textkit on Claude Code, Codex and Gemini CLI, one task moved from Claude Code to Codex by a usage limit",
    async () => {
      const started = Date.now();
      const { code, out: stdout, err } = await runForge(["demo", "--agent", "mixed", "--json", "--out", out], process.cwd());
      const result = JSON.parse(stdout) as DemoResult;
      process.stderr.write(`forge demo --agent mixed: ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
      expect(code, `${err.slice(-4000)}\n${JSON.stringify(result.problems)}`).toBe(0);
      expect(result).toMatchObject({ ok: true, problems: [], status: "completed", agent: "mixed" });
      expect(result.tasks.filter((t) => t.status !== "MERGED")).toEqual([]);

      // Each task's attempts on its kind's agents (the journal's record, through the result).
      const task = (id: string) => result.tasks.find((t) => t.id === id)!;
      const agentsOf = (id: string) => [...new Set(task(id).agents?.map((a) => a.agent))];
      for (const id of ["scaffold", "slugify", "truncate", "words", "pad"]) expect(agentsOf(id), id).toEqual(["claude"]);
      for (const id of ["table", "wrap", "template"]) expect(agentsOf(id), id).toEqual(["codex"]);
      for (const id of ["core", "release"]) expect(agentsOf(id), id).toEqual(["gemini"]);

      // case: attempt 1 stopped by Claude's usage limit (not counted as a retry), attempt 2 on Codex, merged.
      expect(result.usageLimit).toMatchObject({ task: "case", refused: expect.any(Number) });
      expect(result.usageLimit!.refused).toBeGreaterThanOrEqual(1);
      expect(task("case")).toMatchObject({ status: "MERGED", retries: 0 });
      expect(task("case").agents).toEqual([
        { attempt: 1, agent: "claude" },
        {
          attempt: 2,
          agent: "codex",
          why: expect.stringMatching(/^after claude: claude stopped by its usage limit until .*; codex takes the next attempt$/),
        },
      ]);
      expect(task("case").failures[0]).toMatchObject({
        attempt: 1,
        error: expect.stringMatching(/^claude: model usage limit until .*; the next attempt goes to codex$/),
      });
      // No other task changed agent; case's change is in its PR and in the tracker.
      expect(result.agentChanges).toEqual([
        expect.objectContaining({ task: "case", attempt: 2, from: "claude", to: "codex", pr: task("case").pr }),
      ]);
      const change = result.agentChanges![0]!;
      expect(change.why).toMatch(/usage limit/);
      expect(change.prSection).toMatch(
        /^Attempt 2 ran on Codex \(`codex`\) instead of attempt 1's agent, Claude Code \(`claude`\): .*usage limit/,
      );
      expect(change.trackerRow).toMatch(/agent claude → codex/);

      // Every API's scripted server answered conversations, each request through a job's model proxy (the runner's key).
      expect(Object.keys(result.modelServers ?? {})).toEqual([
        "Anthropic Messages (Claude Code)",
        "OpenAI Responses (Codex)",
        "Gemini API (Gemini CLI)",
      ]);
      for (const [server, n] of Object.entries(result.modelServers!)) {
        expect(n.requests, server).toBeGreaterThan(0);
        expect(n.throughProxy, server).toBe(n.requests);
      }

      // The release's Change Request, raised by Gemini CLI and answered by the Captain on Claude Code.
      const title = releaseCrTitle();
      expect(result.changeRequests).toEqual([expect.objectContaining({ emittedBy: "release", status: "applied", title })]);
      expect(result.testsOnIntegration).toMatchObject({ ok: true, fail: 0 });

      // The summary names each task's agents and the change.
      const text = summary(result);
      expect(text).toMatch(/^case +task +MERGED +2 +#\d+ +[\d.]+ s +claude → codex/m);
      expect(text).toMatch(/^table +task +MERGED .* codex\b/m);
      expect(text).toMatch(/^Agent: case's attempt 2 ran on codex, not claude — after claude: claude stopped by its usage limit/m);
      // The JSON written beside the report is the same result.
      expect(JSON.parse(readFileSync(result.jsonPath!, "utf8"))).toMatchObject({ agent: "mixed", usageLimit: { task: "case" } });
    },
    30 * 60_000,
  );
});
