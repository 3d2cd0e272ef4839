// The Copilot CLI adapter with the real CLI (`copilot`, @github/copilot), offline, against the
// scripted Anthropic Messages server (src/fake-agents/model-server.ts) as a provider of its own:
// real tool calls (create, edit, bash) write real files, the stage sequence ends with a valid
// walkthrough, progress comes from `--output-format json`, tokens from its usage file; a 429 ends in
// a backoff and a second run, a usage limit in the time it resets, and a resumed attempt continues
// the carried conversation. (Not here yet: a model that stops streaming.)
//
// Copilot CLI's licence is its own: it is not a dependency of Forge. These tests run where it is
// installed — FORGE_COPILOT_BIN names the binary, else `copilot` on PATH — and are reported as
// skipped, with the reason, where it is not.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { copilotTools as copilotToolNames } from "../../src/agent/adapters/copilot.js";
import { AGENT_SESSION_DIR } from "../../src/agent/agent-sessions.js";
import { allowedToolsFor } from "../../src/agent/hierarchy.js";
import { loadSystemPrompt } from "../../src/agent/prompts.js";
import { Masker } from "../../src/agent/secrets.js";
import { spawnAgent } from "../../src/agent/spawn/index.js";
import { runStages } from "../../src/agent/stages/index.js";
import type { ProgressEvent } from "../../src/agent/types.js";
import { completeWalkthrough } from "../../src/agent/walkthrough.js";
import { walkthroughFrontmatterSchema } from "../../src/core/schemas/walkthrough.js";
import { copilotBinary, copilotTools, offlineCopilotEnv } from "../../src/fake-agents/copilot.js";
import { startModelServer, type ModelServer, type ScriptedTurn, type TurnRequest } from "../../src/fake-agents/model-server.js";
import { cleanupTempDirs, tempDir } from "./helpers.js";

const BIN = copilotBinary();
const CACHE = path.join(tmpdir(), "forge-copilot-cache");
let server: ModelServer | undefined;
let repo: string;

beforeEach(() => {
  repo = tempDir("forge-copilot-repo-");
  execFileSync("git", ["init", "-q", "-b", "forge/r1/t1/1", repo]);
  execFileSync("git", ["-C", repo, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "base"]);
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  cleanupTempDirs();
});

/** The runner's environment: a fresh HOME, the CLI's unpacked files shared between tests, a GitHub token that must not reach the agent. */
function copilotEnv(url: string): Record<string, string> {
  mkdirSync(CACHE, { recursive: true });
  const home = mkdtempSync(path.join(tmpdir(), "forge-copilot-home-"));
  return {
    ...offlineCopilotEnv(url, home, CACHE),
    GITHUB_TOKEN: "ghs_notForAgents0123456789abcdefghij",
    COPILOT_GITHUB_TOKEN: "ghs_notForAgentsEither0123456789abcd",
  };
}

/** The text of the conversation's user messages (Forge's prompt is the first). */
function userText(req: TurnRequest): string {
  const first = req.body.messages?.find((m) => m.role === "user");
  const c = first?.content;
  return typeof c === "string" ? c : JSON.stringify(c ?? "");
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
  "Wrote the module with create, then edited the greeting with edit.",
  "",
  "## Issues Encountered",
  "None.",
  "",
  "## Testing",
  "Counted the file's lines.",
  "",
].join("\n");

/** implement writes and edits `file`, verify runs a command, walkthrough writes one; each session's system text goes to `systems`. */
function type1Script(file: string, systems: string[]): (req: TurnRequest) => ScriptedTurn {
  return (req) => {
    const text = userText(req);
    const stage = /Stage: \*\*([a-z-]+)\*\*/.exec(text)?.[1] ?? "unknown";
    const k = req.turn;
    if (k === 0) systems.push(JSON.stringify(req.body.system ?? ""));
    if (stage === "implement") {
      // `create` makes no folders ("Parent directory does not exist"): the shell makes src/ first.
      if (k === 0) return { text: "I'll make the folder.", toolCalls: [copilotTools.bash(`mkdir -p '${path.dirname(file)}'`)] };
      if (k === 1)
        return { text: "I'll create the module.", toolCalls: [copilotTools.create(file, 'export const greet = () => "hello";\n')] };
      if (k === 2) return { toolCalls: [copilotTools.edit(file, '"hello"', '"hello from forge"')] };
      return { text: "Implemented.\nFORGE_EXIT=0" };
    }
    if (stage === "verify") {
      if (k === 0)
        return {
          toolCalls: [
            copilotTools.bash(
              'wc -l < src/greet.ts > "$FORGE_SESSION_DIR/lines.txt" && echo "$FORGE_TRACE_ID $FORGE_SPAWN_DEPTH $FORGE_AGENT_TYPE ${GITHUB_TOKEN:-no-github-token} ${COPILOT_GITHUB_TOKEN:-no-copilot-token}" > "$FORGE_SESSION_DIR/env-check.txt" && echo checked',
            ),
          ],
        };
      return { text: `Verified: ${JSON.stringify(req.toolResults).includes("checked") ? "checked" : "not checked"}\nFORGE_EXIT=0` };
    }
    if (stage === "walkthrough") {
      const walkthrough = /- Walkthrough: ([^\s\\"]+)/.exec(text)![1]!;
      // Forge left a template there, and `create` refuses a file that exists: the shell writes it.
      const write = copilotTools.bash(`cat > '${walkthrough}' <<'FORGE_EOF'\n${WALKTHROUGH}FORGE_EOF`);
      return k === 0 ? { toolCalls: [write] } : { text: "Walkthrough written.\nFORGE_EXIT=0" };
    }
    return { text: `unexpected stage ${stage}` };
  };
}

const why =
  "Copilot CLI is not installed: set FORGE_COPILOT_BIN to its binary, or put `copilot` on PATH (npm i -g @github/copilot@1.0.102)";
if (!BIN) {
  console.warn(`copilot-real: skipped — ${why}`);
  it.skip(`Copilot CLI adapter with the real CLI — ${why}`, () => undefined);
}

describe.runIf(BIN)("Copilot CLI adapter with the real CLI", () => {
  it("runs a type-1 stage sequence whose tool calls write, edit and run commands, and ends with a valid walkthrough", async () => {
    const file = path.join(repo, "src", "greet.ts");
    const systems: string[] = [];
    const script = type1Script(file, systems);
    server = await startModelServer({ script: [script, script, script, script] });
    const events: ProgressEvent[] = [];
    const sessionDir = path.join(tempDir("forge-copilot-session-"), "session");
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
        adapter: "copilot",
        binary: BIN!,
        model: "claude-sonnet-4-5",
        env: copilotEnv(server.url),
        idleTimeoutMs: 60_000,
        forgeCli: false,
      },
      onProgress: (e) => events.push(e),
    });
    const ms = performance.now() - t0;
    const transcripts = out.manifest.stages
      .flatMap((s) => s.session_dirs.map((d) => readFileSync(path.join(sessionDir, d, "transcript.log"), "utf8")))
      .join("\n");
    expect(out.exitCode, `${JSON.stringify(out.manifest.stages)}\n${transcripts.slice(-1500)}`).toBe(0);

    // Real files, written by the CLI's own tools.
    expect(readFileSync(file, "utf8")).toBe('export const greet = () => "hello from forge";\n');
    const verifyDir = path.join(sessionDir, out.manifest.stages[1]!.session_dirs[0]!);
    expect(readFileSync(path.join(verifyDir, "lines.txt"), "utf8").trim()).toBe("1");
    const [trace, depth, type, token, copilotToken] = readFileSync(path.join(verifyDir, "env-check.txt"), "utf8").trim().split(" ");
    expect(trace).toBe(out.manifest.trace_id);
    expect([depth, type, token, copilotToken]).toEqual(["1", "1", "no-github-token", "no-copilot-token"]);
    expect(out.manifest.stages.map((s) => [s.name, s.status, s.exit_code, s.attempts])).toEqual([
      ["implement", "success", 0, 1],
      ["verify", "success", 0, 1],
      ["walkthrough", "success", 0, 1],
    ]);
    // Model responses: 4 + 2 + 2.
    expect(out.turns).toBe(8);
    expect(out.model).toBe("claude-sonnet-4-5");

    // What reached the model: the model, the key in x-api-key, Forge's system prompt (through the
    // home's copilot-instructions.md), the tools of a type-1 agent and none of its own sub-agents.
    const main = server.turns();
    expect(main).toHaveLength(8);
    expect(main.every((t) => t.status === 200 && t.body?.model === "claude-sonnet-4-5")).toBe(true);
    expect(main[0]!.headers["x-api-key"]).toBe("sk-ant-forge-sim-dummy");
    const line = (await loadSystemPrompt("1")).text
      .split("\n")
      .find((l) => l.trim().length > 40 && !/["\\]/.test(l))!
      .trim();
    expect(systems).toHaveLength(3);
    for (const text of systems) expect(text).toContain(line);
    const declared = (main[0]!.body!.tools ?? []).map((t) => t.name).sort();
    expect(declared).toEqual(
      copilotToolNames(allowedToolsFor("1"))
        .filter((t) => t !== "web_fetch")
        .sort(),
    );
    expect(declared).not.toContain("task");
    expect(server.exhausted()).toBe(false);

    // Progress came from the JSON stream: tool calls by Forge's names, results, tokens from the usage file.
    expect(events.filter((e) => e.kind === "tool_use").map((e) => e.tool)).toEqual(["Bash", "Write", "Edit", "Bash", "Bash"]);
    expect(events.filter((e) => e.kind === "result").map((r) => /^done: (\w+)/.exec(r.summary)?.[1])).toEqual([
      "Implemented",
      "Verified",
      "Walkthrough",
    ]);
    const usage = events.filter((e) => e.tokens);
    expect(usage).toHaveLength(3);
    const billed = main.reduce((n, t) => n + (t.tokens?.output ?? 0), 0);
    expect(usage.reduce((n, e) => n + e.tokens!.output, 0)).toBe(billed);
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
      agent: "copilot",
      ...(out.model ? { model: out.model } : {}),
      ...(out.turns !== undefined ? { turns: out.turns } : {}),
    });
    expect(done.problems).toEqual([]);
    expect(walkthroughFrontmatterSchema.parse(done.frontmatter)).toMatchObject({
      status: "completed",
      agent: "copilot",
      model: "claude-sonnet-4-5",
    });
    console.log(`real Copilot CLI, three-stage type-1 sequence: ${ms.toFixed(0)} ms`);
  }, 240_000);
});

describe.runIf(BIN)("Copilot CLI adapter with the real CLI: rate and usage limits", () => {
  it("turns a persistent usage limit into the reset time, and backs off through a 429 it gave up on", async () => {
    // The CLI tries a 429 six times (five retries, a second apart when the server asks for no wait) before it gives up.
    server = await startModelServer({
      script: [{ text: "never reached" }],
      errors: [{ status: 429, retryAfter: 0, count: 100, message: "Claude AI usage limit reached, resets at 3pm (America/New_York)" }],
    });
    const limited = await spawnAgent({
      adapter: "copilot",
      binary: BIN!,
      prompt: "anything",
      cwd: repo,
      sessionDir: path.join(tempDir("forge-copilot-session-"), "s1"),
      env: copilotEnv(server.url),
      deadline: Date.now() + 60_000,
      forgeCli: false,
      sleep: () => Promise.reject(new Error("a limit past the deadline must not be waited for")),
    });
    expect(limited).toMatchObject({ exitCode: 1, error: { code: "rate_limited" } });
    const ny = new Intl.DateTimeFormat("en-US", { timeZone: "America/New_York", hour: "numeric", minute: "numeric", hourCycle: "h23" });
    expect(ny.format(new Date(limited.rateLimitedUntil!))).toBe("15:00");
    expect(server.turns().map((t) => t.status)).toEqual([429, 429, 429, 429, 429, 429]);
    expect(existsSync(path.join(repo, "src"))).toBe(false);
    await server.close();

    // Six 429s: the CLI gives up; Forge backs off and runs it again; it succeeds.
    server = await startModelServer({
      script: [{ text: "Done after the limit.\nFORGE_EXIT=0" }],
      errors: [{ status: 429, retryAfter: 0, count: 6 }],
    });
    const waits: number[] = [];
    const events: ProgressEvent[] = [];
    const ok = await spawnAgent({
      adapter: "copilot",
      binary: BIN!,
      prompt: "anything",
      cwd: repo,
      sessionDir: path.join(tempDir("forge-copilot-session-"), "s2"),
      env: copilotEnv(server.url),
      deadline: Date.now() + 3_600_000,
      forgeCli: false,
      random: () => 0,
      sleep: async (ms) => void waits.push(ms),
      onProgress: (e) => events.push(e),
    });
    expect(ok).toMatchObject({
      exitCode: 0,
      rateLimitRetries: 1,
      result: "Done after the limit.\nFORGE_EXIT=0",
      model: "claude-sonnet-4-5",
    });
    expect(waits).toEqual([5_000]);
    expect(server.turns().map((t) => t.status)).toEqual([429, 429, 429, 429, 429, 429, 200]);
    expect(events.filter((e) => e.kind === "rate_limit").map((e) => e.summary)).toEqual([expect.stringMatching(/^rate_limit: .*429/)]);
  }, 90_000);
});

/** Every text of a Messages request's conversation, user and assistant. */
function conversationText(req: TurnRequest): string {
  return (req.body.messages ?? [])
    .map((m) =>
      typeof m.content === "string" ? m.content : ((m.content ?? []) as Array<{ text?: string }>).map((b) => b.text ?? "").join("\n"),
    )
    .join("\n");
}

describe.runIf(BIN)("Copilot CLI adapter with the real CLI: a resumed attempt", () => {
  it("--resume=<id> continues the first session, its events.jsonl carried masked and put back in another home", async () => {
    const token = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
    const seen: string[] = [];
    const reply = (text: string) => (req: TurnRequest) => {
      seen.push(conversationText(req));
      return { text };
    };
    server = await startModelServer({ script: [reply("Noted: PLUM.\nFORGE_EXIT=0"), reply("Resumed.\nFORGE_EXIT=0")] });
    const base = { adapter: "copilot" as const, binary: BIN!, cwd: repo, forgeCli: false as const, timeoutMs: 90_000 };
    const firstDir = path.join(tempDir("forge-copilot-session-"), "first");
    const first = await spawnAgent({
      ...base,
      env: copilotEnv(server.url),
      prompt: `Remember the word PLUM. (The job's token is ${token}.)`,
      sessionDir: firstDir,
      masker: new Masker(),
    });
    expect(first.exitCode, readFileSync(first.transcriptPath, "utf8").slice(-1500)).toBe(0);
    expect(first.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    // One file carried, the conversation's events, masked.
    expect(readdirSync(path.join(firstDir, AGENT_SESSION_DIR))).toEqual([`copilot-${first.sessionId}.jsonl`]);
    const carried = path.join(firstDir, AGENT_SESSION_DIR, `copilot-${first.sessionId}.jsonl`);
    const text = readFileSync(carried, "utf8");
    expect(text).toContain("Remember the word PLUM.");
    expect(text).not.toContain(token);

    // Another job: another home (the session folder's), nothing of the first but the carried file.
    const second = await spawnAgent({
      ...base,
      env: copilotEnv(server.url),
      prompt: "Go on with the verify stage.",
      sessionDir: path.join(tempDir("forge-copilot-session-"), "second"),
      resumeSession: first.sessionId!,
      resumeFile: { path: carried, root: firstDir },
    });
    expect(second.exitCode, readFileSync(second.transcriptPath, "utf8").slice(-1500)).toBe(0);
    expect(second.result).toContain("Resumed.");
    const last = seen.at(-1)!;
    expect(last).toContain("Remember the word PLUM.");
    expect(last).toContain("Noted: PLUM.");
    expect(last).not.toContain(token);
    expect(last.indexOf("Remember the word PLUM.")).toBeLessThan(last.indexOf("Go on with the verify stage."));
    expect(seen[0]).not.toContain("Go on with the verify stage.");
  }, 120_000);
});
