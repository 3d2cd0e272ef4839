// Every agent CLI with its real binary, offline, against the scripted server of its API (rows.ts): a
// type-1 stage sequence whose tool calls write, edit and run a command, and that ends with a valid
// walkthrough; progress comes from the CLI's own output, Forge's system prompt and the task reach the
// model as Forge wrote them, the agent's shell sees Forge's variables and no token of the runner's.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadSystemPrompt } from "../../../src/agent/prompts.js";
import { runStages } from "../../../src/agent/stages/index.js";
import type { ProgressEvent } from "../../../src/agent/types.js";
import { completeWalkthrough } from "../../../src/agent/walkthrough.js";
import { walkthroughFrontmatterSchema } from "../../../src/core/schemas/walkthrough.js";
import { bin, GREET, runnerEnv, skipReason, skipTitle, TASK, telltaleLine, tempDir, timed, type1Script, useWorld } from "./harness.js";
import { ROWS } from "./rows.js";

const world = useWorld();

describe.each(ROWS)("$adapter with the real CLI", (row) => {
  const title = skipTitle(
    row,
    "type1",
    "runs a type-1 stage sequence that writes, edits and runs a command, and ends with a valid walkthrough",
  );
  it.skipIf(skipReason(row, "type1") !== undefined)(
    title,
    async () => {
      const file = path.join(world.repo, "src", "greet.ts");
      // A place outside the checkout, the session folder and /tmp's reach of a sandbox (Codex's).
      const elsewhere = tempDir("forge-real-elsewhere-");
      const systemTexts: string[] = [];
      const prompts: string[] = [];
      const script = type1Script(row, file, elsewhere, systemTexts, prompts);
      const server = (world.server = await row.api.serve([script, script, script, script, script]));
      const events: ProgressEvent[] = [];
      const sessionDir = path.join(tempDir("forge-real-session-"), "session");
      const t0 = performance.now();
      const out = await runStages({
        agentType: "1",
        taskContext: { runId: "r1", taskId: "t1", attempt: 1, title: "Greet", task: TASK, testCommand: "node --check src/greet.ts" },
        workdir: world.repo,
        sessionDir,
        spawn: {
          adapter: row.adapter,
          binary: bin(row),
          ...(row.model ? { model: row.model } : {}),
          ...(row.type1.maxTurns ? { maxTurns: row.type1.maxTurns } : {}),
          env: runnerEnv(row, server.url),
          idleTimeoutMs: 90_000,
          forgeCli: false,
        },
        onProgress: (e) => events.push(e),
      });
      const ms = performance.now() - t0;
      const transcripts = out.manifest.stages
        .flatMap((s) => s.session_dirs.map((d) => readFileSync(path.join(sessionDir, d, "transcript.log"), "utf8")))
        .join("\n");
      expect(out.exitCode, `${JSON.stringify(out.manifest.stages)}\n${transcripts.slice(-3000)}`).toBe(0);

      // Real files, written by the CLI's own tools.
      expect(readFileSync(file, "utf8")).toBe(GREET);
      const verifyDir = path.join(sessionDir, out.manifest.stages[1]!.session_dirs[0]!);
      expect(readFileSync(path.join(verifyDir, "lines.txt"), "utf8").trim()).toBe("1");
      // The agent's shell saw Forge's trace id, depth and type — and none of the runner's tokens.
      const [trace, ...rest] = readFileSync(path.join(verifyDir, "env-check.txt"), "utf8").trim().split(" ");
      expect(trace).toBe(out.manifest.trace_id);
      expect(rest).toEqual(["1", "1", "no-github-token", "no-copilot-token"]);
      // The stage manifest (see docs/formats.md#stage-manifest).
      expect(out.manifest.stages.map((s) => [s.name, s.status, s.exit_code, s.attempts])).toEqual([
        ["implement", "success", 0, 1],
        ["verify", "success", 0, 1],
        ["walkthrough", "success", 0, 1],
      ]);
      expect(out.manifest.summary).toEqual({ total: 3, passed: 3, failed: 0, skipped: 0, exit_code: 0 });
      expect(JSON.parse(readFileSync(out.manifestPath, "utf8"))).toEqual(out.manifest);
      const { turns } = row.type1;
      if (typeof turns === "number") expect(out.turns).toBe(turns);
      else expect(out.turns).toBeGreaterThanOrEqual(turns.min);
      if (row.model) expect(out.model).toBe(row.model);
      else expect(out.model).toBeTruthy();

      // What reached the model: Forge's system prompt in each session, the prompt as Forge wrote it
      // (the task's front matter still YAML, its quotes not escaped).
      const main = server.turns();
      if (row.type1.requests !== undefined) expect(main).toHaveLength(row.type1.requests);
      expect(main.every((t) => t.status === 200)).toBe(true);
      const line = telltaleLine((await loadSystemPrompt("1")).text);
      expect(systemTexts).toHaveLength(3);
      for (const text of systemTexts) expect(text).toContain(line);
      expect(prompts).toHaveLength(3);
      for (const text of prompts) expect(text).toContain(TASK);
      expect(server.exhausted()).toBe(false);

      // Progress came from the CLI's own output: tool calls by Forge's names, one result per stage.
      expect(events.filter((e) => e.kind === "tool_use").map((e) => e.tool)).toEqual(row.type1.tools);
      if (row.type1.resultPattern) {
        const results = events.filter((e) => e.kind === "result");
        expect(results.map((r) => row.type1.resultPattern!.exec(r.summary)?.[1])).toEqual(["Implemented", "Verified", "Walkthrough"]);
      }
      expect(events.every((e) => e.traceId === out.manifest.trace_id)).toBe(true);
      await row.type1.check?.({ row, out, elsewhere, repo: world.repo, file, sessionDir, server, events, systemTexts, ms });

      // The walkthrough, completed with the runner's facts, is valid.
      expect(out.walkthroughPath).toBe(path.join(sessionDir, "walkthrough.md"));
      const head = execFileSync("git", ["-C", world.repo, "rev-parse", "HEAD"], { encoding: "utf8" }).trim();
      const done = completeWalkthrough(readFileSync(out.walkthroughPath!, "utf8"), {
        task_id: "t1",
        run_id: "r1",
        attempt: 1,
        branch: "forge/r1/t1/1",
        base_ref: "forge/r1/_integration",
        head_sha: head,
        time_spent_minutes: ms / 60_000,
        files_changed: ["src/greet.ts"],
        agent: row.adapter,
        ...(out.model ? { model: out.model } : {}),
        ...(out.turns !== undefined ? { turns: out.turns } : {}),
        ...(out.costUsd !== undefined ? { cost_usd: out.costUsd } : {}),
      });
      expect(done.problems).toEqual([]);
      expect(walkthroughFrontmatterSchema.parse(done.frontmatter)).toMatchObject({
        status: "completed",
        confidence: 0.85,
        files_changed: [{ path: "src/greet.ts", reason: "the greet() function the task asks for" }],
        agent: row.adapter,
        ...(row.model ? { model: row.model } : {}),
      });
      timed(row, "type1", ms);
    },
    row.type1.timeoutMs,
  );
});
