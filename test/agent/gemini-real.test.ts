// The Gemini CLI adapter with the real CLI (`gemini -p`, @google/gemini-cli), offline, against the
// scripted Gemini API server (src/fake-agents/gemini/): real tool calls (write_file, replace,
// run_shell_command) write real files, the stage sequence ends with a valid walkthrough, progress
// comes from `-o stream-json`; a 429 ends in a backoff and a second run, a daily quota in the time it
// resets, a model that stops streaming in the idle limit.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { geminiTools as geminiToolNames } from "../../src/agent/adapters/gemini.js";
import { allowedToolsFor } from "../../src/agent/hierarchy.js";
import { loadSystemPrompt } from "../../src/agent/prompts.js";
import { spawnAgent } from "../../src/agent/spawn/index.js";
import { runStages } from "../../src/agent/stages/index.js";
import type { ProgressEvent } from "../../src/agent/types.js";
import { completeWalkthrough } from "../../src/agent/walkthrough.js";
import { walkthroughFrontmatterSchema } from "../../src/core/schemas/walkthrough.js";
import {
  geminiBinary,
  geminiTools,
  offlineGeminiEnv,
  startGeminiServer,
  type GeminiServer,
  type GeminiTurn,
  type GeminiTurnRequest,
} from "../../src/fake-agents/gemini/index.js";
import { cleanupTempDirs, forgeCliFromSource, tempDir } from "./helpers.js";

let server: GeminiServer | undefined;
let repo: string;

beforeEach(() => {
  repo = tempDir("forge-gemini-repo-");
  execFileSync("git", ["init", "-q", "-b", "forge/r1/t1/1", repo]);
  execFileSync("git", ["-C", repo, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "base"]);
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  cleanupTempDirs();
});

/** The runner's environment: the runner's own Gemini settings (one try per request), a GitHub token that must not reach the agent. */
function geminiEnv(url: string): Record<string, string> {
  const home = mkdtempSync(path.join(tmpdir(), "forge-gemini-home-"));
  return { ...offlineGeminiEnv(url, home), GITHUB_TOKEN: "ghs_notForAgents0123456789abcdefghij" };
}

const WALKTHROUGH = [
  "---",
  "task_id: t1",
  "run_id: r1",
  "attempt: 1",
  "status: completed",
  "confidence: 0.8",
  "files_changed:",
  "  - path: src/greet.ts",
  "    reason: the greet() function the task asks for",
  "tests:",
  "  - name: node --check",
  "    result: pass",
  "risks: []",
  "followups: []",
  "---",
  "",
  "## Summary",
  "Added greet().",
  "",
  "## Approach",
  "Wrote the module with write_file, then edited the greeting with replace.",
  "",
  "## Issues Encountered",
  "None.",
  "",
  "## Testing",
  "Counted the file's lines.",
  "",
].join("\n");

/** implement writes and edits `file`, verify runs a command, walkthrough writes one; each session's system text goes to `systemTexts`. */
function type1Script(file: string, systemTexts: string[]): (req: GeminiTurnRequest) => GeminiTurn {
  const stageOf = (req: GeminiTurnRequest) => /Stage: \*\*([a-z-]+)\*\*/.exec(req.userText)?.[1] ?? "unknown";
  const walkthroughPathOf = (req: GeminiTurnRequest) => /- Walkthrough: (\S+)/.exec(req.userText)![1]!;
  return (req) => {
    const stage = stageOf(req);
    const k = req.turn;
    if (k === 0) systemTexts.push(req.systemText);
    if (stage === "implement") {
      if (k === 0)
        return {
          thought: "The task wants src/greet.ts.",
          text: "I'll create the module.",
          toolCalls: [geminiTools.writeFile(file, 'export const greet = () => "hello";\n')],
        };
      if (k === 1) return { toolCalls: [geminiTools.replace(file, '"hello"', '"hello from forge"')] };
      return { text: "Implemented.\nFORGE_EXIT=0" };
    }
    if (stage === "verify") {
      if (k === 0)
        return {
          toolCalls: [
            geminiTools.shell(
              'wc -l < src/greet.ts > "$FORGE_SESSION_DIR/lines.txt" && echo "$FORGE_TRACE_ID $FORGE_SPAWN_DEPTH $FORGE_AGENT_TYPE ${GITHUB_TOKEN:-no-github-token}" > "$FORGE_SESSION_DIR/env-check.txt" && echo checked',
            ),
          ],
        };
      return { text: `Verified: ${req.toolOutputs[0]?.output.includes("checked") ? "checked" : "not checked"}\nFORGE_EXIT=0` };
    }
    if (stage === "walkthrough")
      return k === 0
        ? { toolCalls: [geminiTools.writeFile(walkthroughPathOf(req), WALKTHROUGH)] }
        : { text: "Walkthrough written.\nFORGE_EXIT=0" };
    return { text: `unexpected stage ${stage}` };
  };
}

describe("Gemini CLI adapter with the real CLI", () => {
  it("runs a type-1 stage sequence whose tool calls write, edit and run commands, and ends with a valid walkthrough", async () => {
    const file = path.join(repo, "src", "greet.ts");
    const systemTexts: string[] = [];
    const script = type1Script(file, systemTexts);
    server = await startGeminiServer({ script: [script, script, script, script] });
    const events: ProgressEvent[] = [];
    const sessionDir = path.join(tempDir("forge-gemini-session-"), "session");
    const t0 = performance.now();
    const out = await runStages({
      agentType: "1",
      taskContext: {
        runId: "r1",
        taskId: "t1",
        attempt: 1,
        title: "Greet",
        task: "---\nid: t1\n---\n## Description\nCreate src/greet.ts exporting greet().",
        testCommand: "node --check src/greet.ts",
      },
      workdir: repo,
      sessionDir,
      spawn: {
        adapter: "gemini",
        binary: geminiBinary(),
        model: "gemini-2.5-flash",
        env: geminiEnv(server.url),
        idleTimeoutMs: 60_000,
        forgeCli: false,
      },
      onProgress: (e) => events.push(e),
    });
    const ms = performance.now() - t0;
    const transcripts = out.manifest.stages
      .flatMap((s) => s.session_dirs.map((d) => readFileSync(path.join(sessionDir, d, "transcript.log"), "utf8")))
      .join("\n");
    expect(out.exitCode, transcripts).toBe(0);

    // Real files, written by the CLI's own tools.
    expect(readFileSync(file, "utf8")).toBe('export const greet = () => "hello from forge";\n');
    const verifyDir = path.join(sessionDir, out.manifest.stages[1]!.session_dirs[0]!);
    expect(readFileSync(path.join(verifyDir, "lines.txt"), "utf8").trim()).toBe("1");
    const [trace, depth, type, token] = readFileSync(path.join(verifyDir, "env-check.txt"), "utf8").trim().split(" ");
    expect(trace).toBe(out.manifest.trace_id);
    expect([depth, type, token]).toEqual(["1", "1", "no-github-token"]);
    expect(out.manifest.stages.map((s) => [s.name, s.status, s.exit_code, s.attempts])).toEqual([
      ["implement", "success", 0, 1],
      ["verify", "success", 0, 1],
      ["walkthrough", "success", 0, 1],
    ]);
    // Model responses: 3 + 2 + 2.
    expect(out.turns).toBe(7);
    expect(out.model).toBe("gemini-2.5-flash");

    // What reached the model: -m, the key in x-goog-api-key, Forge's system prompt in the system
    // instruction (through the session home's GEMINI.md), the tools of a type-1 agent and no other agent tool.
    const main = server.turns();
    expect(main).toHaveLength(7);
    expect(main.every((t) => t.status === 200 && t.path === "/v1beta/models/gemini-2.5-flash:streamGenerateContent")).toBe(true);
    expect(main[0]!.headers["x-goog-api-key"]).toBe("forge-sim-dummy-key");
    expect(server.requests.filter((r) => r.kind === "main" || r.kind === "side").map((r) => r.kind)).not.toContain("side");
    const systemPrompt = (await loadSystemPrompt("1")).text;
    const line = systemPrompt
      .split("\n")
      .find((l) => l.trim().length > 40)!
      .trim();
    expect(systemTexts).toHaveLength(3);
    for (const text of systemTexts) expect(text).toContain(line);
    const declared = main[0]!.body!.tools!.flatMap((t) => (t.functionDeclarations ?? []).map((f) => f.name));
    for (const name of geminiToolNames(allowedToolsFor("1"))) if (name !== "read_many_files") expect(declared).toContain(name);
    expect(declared).not.toContain("invoke_agent");
    expect(declared).not.toContain("google_web_search");
    expect(server.exhausted()).toBe(false);
    // The CLI's home is the session's: its settings were written there.
    const home = path.join(sessionDir, out.manifest.stages[0]!.session_dirs[0]!, "home", ".gemini");
    expect(JSON.parse(readFileSync(path.join(home, "settings.json"), "utf8"))).toMatchObject({
      security: { auth: { selectedType: "gemini-api-key" } },
      general: { maxAttempts: 1 },
    });

    // Progress came from stream-json: tool calls by Forge's names, results with tokens, per stage.
    expect(events.filter((e) => e.kind === "tool_use").map((e) => e.tool)).toEqual(["Write", "Edit", "Bash", "Write"]);
    const results = events.filter((e) => e.kind === "result");
    expect(results.map((r) => /^done \(\d+ input, \d+ output tokens\): (\w+)/.exec(r.summary)?.[1])).toEqual([
      "Implemented",
      "Verified",
      "Walkthrough",
    ]);
    expect(events.every((e) => e.traceId === out.manifest.trace_id)).toBe(true);

    expect(out.walkthroughPath).toBe(path.join(sessionDir, "walkthrough.md"));
    const head = execFileSync("git", ["-C", repo, "rev-parse", "HEAD"], { encoding: "utf8" }).trim();
    const done = completeWalkthrough(readFileSync(out.walkthroughPath!, "utf8"), {
      task_id: "t1",
      run_id: "r1",
      attempt: 1,
      branch: "forge/r1/t1/1",
      base_ref: "forge/r1/_integration",
      head_sha: head,
      time_spent_minutes: ms / 60_000,
      files_changed: ["src/greet.ts"],
      agent: "gemini",
      ...(out.model ? { model: out.model } : {}),
      ...(out.turns !== undefined ? { turns: out.turns } : {}),
    });
    expect(done.problems).toEqual([]);
    expect(walkthroughFrontmatterSchema.parse(done.frontmatter)).toMatchObject({
      status: "completed",
      files_changed: [{ path: "src/greet.ts", reason: "the greet() function the task asks for" }],
      agent: "gemini",
      model: "gemini-2.5-flash",
    });
    console.log(`real Gemini CLI, three-stage type-1 sequence: ${ms.toFixed(0)} ms`);
  }, 180_000);
});

describe("Gemini CLI adapter with the real CLI: sub-agents, stalls, rate limits, quotas", () => {
  it("lets a type-2 agent run `forge spawn` from its shell: a type-1 Gemini sub-agent works one trace deeper", async () => {
    const childFile = path.join(repo, "child.txt");
    const script = (req: GeminiTurnRequest): GeminiTurn => {
      if (req.userText.includes("CHILD TASK"))
        return req.turn === 0
          ? { toolCalls: [geminiTools.writeFile(childFile, "written by the sub-agent\n")] }
          : { text: "Child done.\nFORGE_EXIT=0" };
      if (req.turn === 0)
        return {
          toolCalls: [
            geminiTools.shell(
              'forge spawn --agent-type 1 --output-format json --name child --prompt "CHILD TASK: write child.txt" > "$FORGE_SESSION_DIR/child.json"; ' +
                'forge spawn --agent-type 2 --output-format json --prompt "CHILD TASK: not allowed" > "$FORGE_SESSION_DIR/refused.json"; echo done',
            ),
          ],
        };
      return { text: "Parent done.\nFORGE_EXIT=0" };
    };
    server = await startGeminiServer({ script: [script, script, script] });
    const sessionDir = path.join(tempDir("forge-gemini-session-"), "parent");
    const r = await spawnAgent({
      adapter: "gemini",
      binary: geminiBinary(),
      agentType: "2",
      prompt: "PARENT TASK: delegate the child file",
      cwd: repo,
      sessionDir,
      env: geminiEnv(server.url),
      maxDepth: 2,
      forgeCli: forgeCliFromSource(),
    });
    expect(r.exitCode, readFileSync(r.transcriptPath, "utf8")).toBe(0);
    expect(readFileSync(childFile, "utf8")).toBe("written by the sub-agent\n");
    const child = JSON.parse(readFileSync(path.join(sessionDir, "child.json"), "utf8")) as Record<string, unknown>;
    expect(child).toMatchObject({ status: "success", exit_code: 0, depth: 2, trace_id: r.traceId, agent_type: "1", adapter: "gemini" });
    // The sub-agent ran in its own CLI home, under its own session directory.
    expect(existsSync(path.join(String(child.session_dir), "home", ".gemini", "settings.json"))).toBe(true);
    expect(JSON.parse(readFileSync(path.join(sessionDir, "refused.json"), "utf8"))).toMatchObject({
      exit_code: 2,
      error: { code: "spawn_not_allowed" },
    });
  }, 180_000);

  it("kills a session whose model stops streaming (idle), keeping the file it already wrote", async () => {
    const written = path.join(repo, "partial.txt");
    server = await startGeminiServer({
      script: [
        { text: "Writing.", toolCalls: [geminiTools.writeFile(written, "partial work\n")] },
        { text: "never finished", stall: true },
      ],
    });
    const events: ProgressEvent[] = [];
    // Long enough for the CLI to start and write on a busy machine (it starts in about 4 s idle); a stall is still told apart.
    const idleMs = 15_000;
    const r = await spawnAgent({
      adapter: "gemini",
      binary: geminiBinary(),
      agentType: "1",
      prompt: "Write partial.txt",
      cwd: repo,
      sessionDir: path.join(tempDir(), "s"),
      env: geminiEnv(server.url),
      idleTimeoutMs: idleMs,
      timeoutMs: 90_000,
      forgeCli: false,
      onProgress: (e) => events.push({ ...e, at: new Date().toISOString() }),
    });
    expect(r).toMatchObject({ exitCode: 21, status: "timeout", timedOut: "idle", error: { code: "idle_timeout" } });
    expect(readFileSync(written, "utf8")).toBe("partial work\n");
    expect(server.turns().map((t) => t.turn)).toEqual([0, 1]);
    const lastOutput = Date.parse(events.filter((e) => e.kind !== "exit").at(-1)!.at);
    expect(Date.parse(r.finishedAt) - lastOutput).toBeGreaterThanOrEqual(idleMs - 100);
  }, 90_000);

  it("backs off when the model answers 429 past the CLI's own tries (exit 173), and succeeds on the next run", async () => {
    server = await startGeminiServer({
      script: [{ toolCalls: [geminiTools.shell("echo after-the-limit > done.txt")] }, { text: "Done after the limit.\nFORGE_EXIT=0" }],
      errors: [{ status: 429, count: 1, message: "Resource has been exhausted (e.g. check quota)." }],
    });
    const waits: number[] = [];
    const r = await spawnAgent({
      adapter: "gemini",
      binary: geminiBinary(),
      agentType: "1",
      prompt: "Write done.txt",
      cwd: repo,
      sessionDir: path.join(tempDir(), "s"),
      env: geminiEnv(server.url),
      deadline: Date.now() + 3_600_000,
      forgeCli: false,
      random: () => 0,
      sleep: async (ms) => void waits.push(ms),
    });
    expect(r, readFileSync(r.transcriptPath, "utf8")).toMatchObject({
      exitCode: 0,
      rateLimitRetries: 1,
      result: "Done after the limit.\nFORGE_EXIT=0",
    });
    // Backoff, not a reset time: the first wait of the exponential series.
    expect(waits).toEqual([5_000]);
    expect(readFileSync(path.join(repo, "done.txt"), "utf8")).toBe("after-the-limit\n");
    expect(server.turns().map((t) => t.status)).toEqual([429, 200, 200]);
    expect(readFileSync(r.transcriptPath, "utf8")).toMatch(/Resource has been exhausted/);
  }, 90_000);

  it("turns a daily quota into a pause until it resets (midnight Pacific), past the job's deadline", async () => {
    server = await startGeminiServer({
      script: [{ text: "never reached" }],
      errors: [{ status: 429, count: 5, message: "Quota exceeded for quota metric 'Generate Content API requests per day' and limit: 0" }],
    });
    const before = new Date();
    const r = await spawnAgent({
      adapter: "gemini",
      binary: geminiBinary(),
      agentType: "1",
      prompt: "Anything",
      cwd: repo,
      sessionDir: path.join(tempDir(), "s"),
      env: geminiEnv(server.url),
      deadline: Date.now() + 60_000,
      forgeCli: false,
      random: () => 0,
      sleep: async () => {
        throw new Error("must not wait past the deadline");
      },
    });
    expect(r, readFileSync(r.transcriptPath, "utf8")).toMatchObject({ exitCode: 1, error: { code: "rate_limited" } });
    // "limit: 0" is terminal for the CLI: one request, no retry of its own.
    expect(server.turns().map((t) => t.status)).toEqual([429]);
    const until = new Date(r.rateLimitedUntil!);
    const pacific = new Intl.DateTimeFormat("en-US", {
      timeZone: "America/Los_Angeles",
      hour: "numeric",
      minute: "numeric",
      hourCycle: "h23",
    }).format(until);
    expect(pacific).toBe("00:00");
    expect(until.getTime() - before.getTime()).toBeGreaterThan(0);
    expect(until.getTime() - before.getTime()).toBeLessThanOrEqual(25 * 3_600_000);
  }, 90_000);
});
