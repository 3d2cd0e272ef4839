// The Claude Code adapter with the real CLI, offline, against the scripted model server
// (src/fake-agents): real tool calls write real files, the stage sequence ends with a valid
// walkthrough; a model that stops streaming is caught by the idle timeout; the wall clock stops a
// session; 429s and usage limits become backoff or a reset time.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runStages } from "../../src/agent/stages/index.js";
import { spawnAgent } from "../../src/agent/spawn/index.js";
import type { ProgressEvent } from "../../src/agent/types.js";
import { completeWalkthrough } from "../../src/agent/walkthrough.js";
import { walkthroughFrontmatterSchema } from "../../src/core/schemas/walkthrough.js";
import { offlineClaudeEnv } from "../../src/fake-agents/claude-code.js";
import { claudeBinary } from "../helpers/claude-code.js";
import { sseEvents, startModelServer, type ModelServer, type ScriptedTurn, type TurnRequest } from "../../src/fake-agents/model-server.js";
import { cleanupTempDirs, forgeCliFromSource, tempDir } from "./helpers.js";

let server: ModelServer | undefined;
let stallServer: http.Server | undefined;
let repo: string;
let home: string;

beforeEach(() => {
  repo = tempDir("forge-claude-repo-");
  home = mkdtempSync(path.join(tmpdir(), "forge-claude-home-"));
  execFileSync("git", ["init", "-q", "-b", "forge/r1/t1/1", repo]);
  execFileSync("git", ["-C", repo, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "base"]);
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  if (stallServer) {
    stallServer.closeAllConnections();
    await new Promise((r) => stallServer!.close(r));
    stallServer = undefined;
  }
  cleanupTempDirs();
});

/** The first user message of the conversation, as text. */
function firstUserText(req: TurnRequest): string {
  const first = req.body.messages?.[0]?.content;
  if (typeof first === "string") return first;
  return ((first ?? []) as Array<{ type: string; text?: string }>).map((b) => b.text ?? "").join("\n");
}

function claudeEnv(url: string, extra: Record<string, string> = {}) {
  // GITHUB_TOKEN is in the runner's environment; it must not reach the agent.
  return { ...offlineClaudeEnv(url, home, extra), GITHUB_TOKEN: "ghs_notForAgents0123456789abcdefghij" };
}

/** The scripted model of a type-1 sequence: implement writes and edits `file`, verify runs a command, walkthrough writes one. */
function type1Script(file: string): (req: TurnRequest) => ScriptedTurn {
  const stageOf = (req: TurnRequest) => /Stage: \*\*([a-z-]+)\*\*/.exec(firstUserText(req))?.[1] ?? "unknown";
  const walkthroughPathOf = (req: TurnRequest) => /- Walkthrough: (\S+)/.exec(firstUserText(req))![1]!;
  const walkthrough = (req: TurnRequest): ScriptedTurn => ({
    toolCalls: [
      {
        name: "Write",
        input: {
          file_path: walkthroughPathOf(req),
          content: [
            "---",
            "task_id: t1",
            "run_id: r1",
            "attempt: 1",
            "status: completed",
            "confidence: 0.85",
            "files_changed:",
            "  - path: src/greet.ts",
            "    reason: the greet() function the task asks for",
            "tests:",
            "  - name: node --check",
            "    result: pass",
            "risks: []",
            "followups:",
            "  - add a unit test for greet",
            "---",
            "",
            "## Summary",
            "Added greet().",
            "",
            "## Approach",
            "Wrote the module, then edited the greeting.",
            "",
            "## Issues Encountered",
            "None.",
            "",
            "## Testing",
            "Checked the file exists and has one line.",
            "",
          ].join("\n"),
        },
      },
    ],
  });
  const script = (req: TurnRequest): ScriptedTurn => {
    const stage = stageOf(req);
    const k = req.turn;
    if (stage === "implement") {
      if (k === 0)
        return {
          text: "I'll create the module.",
          toolCalls: [{ name: "Write", input: { file_path: file, content: 'export const greet = () => "hello";\n' } }],
        };
      if (k === 1)
        return { toolCalls: [{ name: "Edit", input: { file_path: file, old_string: '"hello"', new_string: '"hello from forge"' } }] };
      return { text: "Implemented.\nFORGE_EXIT=0" };
    }
    if (stage === "verify") {
      if (k === 0) {
        return {
          toolCalls: [
            {
              name: "Bash",
              input: {
                command:
                  'wc -l < src/greet.ts > "$FORGE_SESSION_DIR/lines.txt" && echo "$FORGE_TRACE_ID $FORGE_SPAWN_DEPTH $FORGE_AGENT_TYPE ${GITHUB_TOKEN:-no-github-token}" > "$FORGE_SESSION_DIR/env-check.txt"',
                description: "Verify",
              },
            },
          ],
        };
      }
      return { text: `Verified: ${JSON.stringify(req.toolResults[0]?.content ?? "")}\nFORGE_EXIT=0` };
    }
    if (stage === "walkthrough") return k === 0 ? walkthrough(req) : { text: "Walkthrough written.\nFORGE_EXIT=0" };
    return { text: `unexpected stage ${stage}` };
  };
  return script;
}

describe("Claude Code adapter with the real CLI", () => {
  it("runs a type-1 stage sequence that writes, edits and runs commands, and ends with a valid walkthrough", async () => {
    const file = path.join(repo, "src", "greet.ts");
    const script = type1Script(file);
    server = await startModelServer({ script: [script, script, script, script] });
    const events: ProgressEvent[] = [];
    const sessionDir = path.join(tempDir("forge-claude-session-"), "session");
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
        adapter: "claude",
        binary: claudeBinary(),
        env: claudeEnv(server.url),
        maxTurns: 10,
        idleTimeoutMs: 60_000,
        forgeCli: false,
      },
      onProgress: (e) => events.push(e),
    });
    const ms = performance.now() - t0;

    expect(out.exitCode, JSON.stringify(out.manifest, null, 2)).toBe(0);
    // Real files, written by the CLI's own tools.
    expect(readFileSync(file, "utf8")).toBe('export const greet = () => "hello from forge";\n');
    const verifyDir = path.join(sessionDir, out.manifest.stages[1]!.session_dirs[0]!);
    expect(readFileSync(path.join(verifyDir, "lines.txt"), "utf8").trim()).toBe("1");
    // The agent saw Forge's trace id, depth and type — and no GitHub token.
    const [trace, depth, type, token] = readFileSync(path.join(verifyDir, "env-check.txt"), "utf8").trim().split(" ");
    expect(trace).toBe(out.manifest.trace_id);
    expect([depth, type, token]).toEqual(["1", "1", "no-github-token"]);
    // The stage manifest (see docs/formats.md#stage-manifest).
    expect(out.manifest.stages.map((s) => [s.name, s.status, s.exit_code, s.attempts])).toEqual([
      ["implement", "success", 0, 1],
      ["verify", "success", 0, 1],
      ["walkthrough", "success", 0, 1],
    ]);
    expect(out.manifest.summary).toEqual({ total: 3, passed: 3, failed: 0, skipped: 0, exit_code: 0 });
    expect(JSON.parse(readFileSync(out.manifestPath, "utf8"))).toEqual(out.manifest);
    expect(out.turns).toBeGreaterThanOrEqual(7);
    expect(out.costUsd).toBeGreaterThan(0);
    expect(out.model).toBeTruthy();
    // Progress came from the stream: tool calls by name, and stage events.
    expect(events.filter((e) => e.kind === "tool_use").map((e) => e.tool)).toEqual(["Write", "Edit", "Bash", "Write"]);
    expect(events.every((e) => e.traceId === out.manifest.trace_id)).toBe(true);
    // Partial-message chunks prove liveness while the model streams, and stay out of the transcript.
    expect(events.some((e) => e.summary === "(the model is writing)")).toBe(true);
    const implementDir = path.join(sessionDir, out.manifest.stages[0]!.session_dirs[0]!);
    expect(readFileSync(path.join(implementDir, "transcript.log"), "utf8")).not.toContain('"type":"stream_event"');

    // The walkthrough, completed with the runner's facts, is valid.
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
      agent: "claude",
      ...(out.model ? { model: out.model } : {}),
      ...(out.turns !== undefined ? { turns: out.turns } : {}),
      ...(out.costUsd !== undefined ? { cost_usd: out.costUsd } : {}),
    });
    expect(done.problems).toEqual([]);
    const fm = walkthroughFrontmatterSchema.parse(done.frontmatter);
    expect(fm).toMatchObject({
      status: "completed",
      confidence: 0.85,
      files_changed: [{ path: "src/greet.ts", reason: "the greet() function the task asks for" }],
      agent: "claude",
    });
    console.log(`real Claude Code, three-stage type-1 sequence: ${ms.toFixed(0)} ms`);
  }, 90_000);

  it("lets a type-2 agent run `forge spawn` from its Bash tool: a type-1 Claude sub-agent works one trace deeper", async () => {
    const childFile = path.join(repo, "child.txt");
    const isChild = (req: TurnRequest) => firstUserText(req).includes("CHILD TASK");
    const script = (req: TurnRequest): ScriptedTurn => {
      if (isChild(req)) {
        return req.turn === 0
          ? { toolCalls: [{ name: "Write", input: { file_path: childFile, content: "written by the sub-agent\n" } }] }
          : { text: "Child done.\nFORGE_EXIT=0" };
      }
      if (req.turn === 0) {
        return {
          toolCalls: [
            {
              name: "Bash",
              input: {
                command: `forge spawn --agent-type 1 --output-format json --name child --max-turns 5 --prompt "CHILD TASK: write child.txt" > "$FORGE_SESSION_DIR/child.json"; forge spawn --agent-type 2 --output-format json --prompt "CHILD TASK: not allowed" > "$FORGE_SESSION_DIR/refused.json"; echo done`,
                description: "Delegate to a type-1 sub-agent",
                timeout: 120000,
              },
            },
          ],
        };
      }
      return { text: "Parent done.\nFORGE_EXIT=0" };
    };
    server = await startModelServer({ script: [script, script, script] });
    const sessionDir = path.join(tempDir(), "parent");
    const r = await spawnAgent({
      adapter: "claude",
      binary: claudeBinary(),
      agentType: "2",
      prompt: "PARENT TASK: delegate the child file",
      cwd: repo,
      sessionDir,
      env: claudeEnv(server.url),
      maxDepth: 2,
      maxTurns: 5,
      forgeCli: forgeCliFromSource(),
    });
    expect(r.exitCode, readFileSync(r.transcriptPath, "utf8")).toBe(0);
    expect(readFileSync(childFile, "utf8")).toBe("written by the sub-agent\n");
    const child = JSON.parse(readFileSync(path.join(sessionDir, "child.json"), "utf8")) as Record<string, unknown>;
    expect(child).toMatchObject({
      status: "success",
      exit_code: 0,
      depth: 2,
      max_depth: 2,
      trace_id: r.traceId,
      agent_type: "1",
      adapter: "claude",
    });
    expect(String(child.session_dir).startsWith(path.join(sessionDir, "sub"))).toBe(true);
    // A type 2 agent may spawn type 1 only.
    expect(JSON.parse(readFileSync(path.join(sessionDir, "refused.json"), "utf8"))).toMatchObject({
      exit_code: 2,
      error: { code: "spawn_not_allowed" },
    });
  }, 90_000);
});

describe("Claude Code adapter with the real CLI: stalls, time limits, usage limits", () => {
  it("kills a session whose model stops streaming (idle), keeping the file it already wrote", async () => {
    const written = path.join(repo, "partial.txt");
    let requests = 0;
    stallServer = http.createServer((req, res) => {
      let raw = "";
      req.on("data", (c: Buffer) => (raw += c.toString()));
      req.on("end", () => {
        if (req.method === "HEAD") return void res.writeHead(200).end();
        const body = JSON.parse(raw || "{}") as { tools?: unknown[]; messages?: Array<{ role: string }>; model?: string };
        const assistants = (body.messages ?? []).filter((m) => m.role === "assistant").length;
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        const isMain = Array.isArray(body.tools) && body.tools.length > 0;
        if (isMain) requests++;
        const turn: ScriptedTurn = !isMain
          ? { text: '{"title":"stall"}' }
          : { text: "Writing.", toolCalls: [{ name: "Write", input: { file_path: written, content: "partial work\n" } }] };
        const events = sseEvents(turn, body.model ?? "claude-sonnet-4-5", 10);
        // The second main turn starts a message and then never sends another byte.
        const send = isMain && assistants > 0 ? events.slice(0, 2) : events;
        for (const e of send) res.write(`event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`);
        if (send === events) res.end();
      });
    });
    await new Promise<void>((r) => stallServer!.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(stallServer.address() as AddressInfo).port}`;
    const events: ProgressEvent[] = [];
    // Long enough for the CLI to start and write on a busy machine; a stall is still told apart from slowness.
    const idleMs = 10_000;
    const r = await spawnAgent({
      adapter: "claude",
      binary: claudeBinary(),
      agentType: "1",
      prompt: "Write partial.txt",
      cwd: repo,
      sessionDir: path.join(tempDir(), "s"),
      env: claudeEnv(url),
      idleTimeoutMs: idleMs,
      timeoutMs: 60_000,
      forgeCli: false,
      onProgress: (e) => events.push({ ...e, at: new Date().toISOString() }),
    });
    expect(r).toMatchObject({ exitCode: 21, status: "timeout", timedOut: "idle", error: { code: "idle_timeout" } });
    expect(readFileSync(written, "utf8")).toBe("partial work\n");
    expect(requests).toBeGreaterThanOrEqual(2);
    const lastOutput = Date.parse(events.filter((e) => e.kind !== "exit").at(-1)!.at);
    const detected = Date.parse(r.finishedAt) - lastOutput;
    expect(detected).toBeGreaterThanOrEqual(idleMs - 100);
    expect(detected).toBeLessThan(idleMs + 5_000);
    console.log(`stall detected ${detected} ms after the agent's last output (idle limit ${idleMs} ms); session ${r.durationMs} ms`);
  }, 60_000);

  it("stops a session at the wall-clock limit", async () => {
    stallServer = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        if (req.method === "HEAD") return void res.writeHead(200).end();
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(": keep-alive\n\n"); // and nothing more
      });
    });
    await new Promise<void>((r) => stallServer!.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(stallServer.address() as AddressInfo).port}`;
    const r = await spawnAgent({
      adapter: "claude",
      binary: claudeBinary(),
      prompt: "anything",
      cwd: repo,
      sessionDir: path.join(tempDir(), "s"),
      env: claudeEnv(url),
      timeoutMs: 2_500,
      idleTimeoutMs: 60_000,
      forgeCli: false,
    });
    expect(r).toMatchObject({ exitCode: 21, timedOut: "wall", error: { code: "timeout" } });
    expect(r.durationMs).toBeGreaterThanOrEqual(2_500);
    expect(r.durationMs).toBeLessThan(8_000);
  }, 30_000);

  it("turns a persistent usage limit into the reset time, and backs off through a passing 429", async () => {
    server = await startModelServer({
      script: [{ text: "never reached" }],
      errors: [{ status: 429, retryAfter: 0, count: 100, message: "Claude AI usage limit reached, resets at 3pm (America/New_York)" }],
    });
    const limited = await spawnAgent({
      adapter: "claude",
      binary: claudeBinary(),
      prompt: "anything",
      cwd: repo,
      sessionDir: path.join(tempDir(), "s1"),
      env: claudeEnv(server.url, { CLAUDE_CODE_MAX_RETRIES: "1" }),
      deadline: Date.now() + 60_000,
      forgeCli: false,
      sleep: () => Promise.reject(new Error("a limit past the deadline must not be waited for")),
    });
    expect(limited).toMatchObject({ exitCode: 1, error: { code: "rate_limited" } });
    const ny = new Intl.DateTimeFormat("en-US", {
      timeZone: "America/New_York",
      hour: "numeric",
      minute: "numeric",
      hourCycle: "h23",
    }).format(new Date(limited.rateLimitedUntil!));
    expect(ny).toBe("15:00");
    expect(existsSync(path.join(repo, "src"))).toBe(false);
    await server.close();

    // Three 429s: the CLI retries once and gives up; Forge backs off and runs it again; it succeeds.
    server = await startModelServer({
      script: [{ text: "Done after the limit.\nFORGE_EXIT=0" }],
      errors: [{ status: 429, retryAfter: 0, count: 3 }],
    });
    const waits: number[] = [];
    const ok = await spawnAgent({
      adapter: "claude",
      binary: claudeBinary(),
      prompt: "anything",
      cwd: repo,
      sessionDir: path.join(tempDir(), "s2"),
      env: claudeEnv(server.url, { CLAUDE_CODE_MAX_RETRIES: "1" }),
      deadline: Date.now() + 3_600_000,
      forgeCli: false,
      random: () => 0,
      sleep: async (ms) => void waits.push(ms),
    });
    expect(ok).toMatchObject({ exitCode: 0, rateLimitRetries: 1, result: "Done after the limit.\nFORGE_EXIT=0" });
    expect(waits).toEqual([5_000]);
    expect(server.turns().map((t) => t.status)).toEqual([429, 429, 429, 200]);
  }, 60_000);
});
