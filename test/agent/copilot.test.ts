// The Copilot CLI adapter in memory: its command line, its tools, its environment, its JSON stream,
// its usage file. The JSON lines are as the real `copilot` 1.0.102 printed them (offline, against the
// scripted model server; test/agent/real/ (its row) runs the binary itself).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  copilotAdapter,
  copilotArgs,
  copilotTools,
  copilotUsage,
  COPILOT_DEFAULT_MODEL,
  CopilotJsonParser,
} from "../../src/agent/adapters/copilot.js";
import { allowedToolsFor } from "../../src/agent/hierarchy.js";
import { detectRateLimit } from "../../src/agent/rate-limit.js";

const SESSION = "/s/session";
const FORGE_ENV = { FORGE_SESSION_DIR: SESSION, FORGE_WALKTHROUGH_PATH: "/s/reports/walkthrough.md" };
const line = (type: string, data: Record<string, unknown>, extra: Record<string, unknown> = {}) => JSON.stringify({ type, data, ...extra });

const temps: string[] = [];
const temp = () => {
  const d = mkdtempSync(path.join(tmpdir(), "forge-copilot-unit-"));
  temps.push(d);
  return d;
};
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

describe("Copilot CLI's command line", () => {
  it("runs headless with JSON output, the kind's tools, the model, its usage file, the report folders and no questions", () => {
    const args = copilotArgs({ model: "claude-opus-4-5", allowedTools: ["Read", "Write", "Bash(git:*)"], cwd: "/w", forgeEnv: FORGE_ENV });
    expect(args).toEqual([
      "--output-format",
      "json",
      "--allow-all-tools",
      "--available-tools=view,create,bash,read_bash,stop_bash,list_bash",
      "--model",
      "claude-opus-4-5",
      "--no-ask-user",
      "--no-auto-update",
      "--disable-client-telemetry",
      "--no-color",
      "--usage-output-file",
      path.join(SESSION, "home", ".copilot", "forge-usage.json"),
      "--add-dir",
      SESSION,
      "--add-dir",
      "/s/reports",
    ]);
  });

  it("takes Forge's default model when none is configured, resumes a session, and never offers no tools at all", () => {
    const args = copilotArgs({ allowedTools: [], cwd: "/w", resumeSession: "55d62d76-effa-4417-881a-b12e54009015" });
    expect(args[args.indexOf("--model") + 1]).toBe(COPILOT_DEFAULT_MODEL);
    expect(args).toContain("--available-tools=view");
    expect(args.at(-1)).toBe("--resume=55d62d76-effa-4417-881a-b12e54009015");
    expect(args[args.indexOf("--usage-output-file") + 1]).toBe(path.join("/w", "home", ".copilot", "forge-usage.json"));
  });

  it("maps Forge's tool names to the CLI's, once each, and offers none of its sub-agents or questions", () => {
    expect(copilotTools(["Read", "LS", "Edit", "MultiEdit", "Glob", "Grep"])).toEqual(["view", "edit", "glob", "grep"]);
    expect(copilotTools(["Bash(npm test:*)", "WebFetch", "Task", "TodoWrite"])).toEqual([
      "bash",
      "read_bash",
      "stop_bash",
      "list_bash",
      "web_fetch",
    ]);
    const type1 = copilotTools(allowedToolsFor("1"));
    expect(type1).toEqual(expect.arrayContaining(["view", "create", "edit", "bash"]));
    for (const own of ["task", "ask_user", "write_bash", "explore_agent"]) expect(type1).not.toContain(own);
  });
});

describe("Copilot CLI's invocation", () => {
  it("puts the system prompt in its home's instructions, the prompt on stdin, and keeps GitHub's tokens out", () => {
    const sessionDir = temp();
    const inv = copilotAdapter.invocation({
      prompt: "Do X",
      systemPrompt: "You are Forge's agent.",
      cwd: "/w",
      allowedTools: ["Read"],
      parentEnv: {
        PATH: "/bin",
        GITHUB_TOKEN: "ghs_x",
        COPILOT_GITHUB_TOKEN: "ghs_y",
        GH_TOKEN: "ghs_z",
        COPILOT_PROVIDER_TYPE: "anthropic",
        ANTHROPIC_API_KEY: "sk-ant-real",
        XDG_CACHE_HOME: "/var/cache/forge",
      },
      forgeEnv: { FORGE_SESSION_DIR: sessionDir },
      passEnv: [],
      extraEnv: { COPILOT_PROVIDER_BASE_URL: "http://127.0.0.1:9/", COPILOT_PROVIDER_API_KEY: "session-token" },
    });
    const home = path.join(sessionDir, "home", ".copilot");
    expect(inv.command).toBe("copilot");
    expect(inv.stdin).toBe("Do X");
    expect(inv.args).not.toContain("Do X");
    expect(readFileSync(path.join(home, "copilot-instructions.md"), "utf8")).toBe("You are Forge's agent.\n");
    expect(inv.env).toMatchObject({
      COPILOT_HOME: home,
      COPILOT_AUTO_UPDATE: "false",
      COPILOT_OFFLINE: "true",
      COPILOT_PROVIDER_TYPE: "anthropic",
      COPILOT_PROVIDER_BASE_URL: "http://127.0.0.1:9/",
      COPILOT_PROVIDER_API_KEY: "session-token",
      XDG_CACHE_HOME: "/var/cache/forge",
    });
    for (const name of ["GITHUB_TOKEN", "COPILOT_GITHUB_TOKEN", "GH_TOKEN", "ANTHROPIC_API_KEY"]) expect(inv.env[name]).toBeUndefined();
  });

  it("leaves COPILOT_OFFLINE alone without a provider of its own", () => {
    const inv = copilotAdapter.invocation({
      prompt: "p",
      cwd: temp(),
      allowedTools: [],
      parentEnv: {},
      forgeEnv: {},
      passEnv: [],
      extraEnv: {},
      binary: "/opt/copilot",
    });
    expect(inv.command).toBe("/opt/copilot");
    expect(inv.env.COPILOT_OFFLINE).toBeUndefined();
    expect(Object.keys(inv.env).filter((k) => k.startsWith("FORGE_COPILOT_"))).toEqual([]);
  });

  it("copies the provider to FORGE_COPILOT_* for its shell, where a `forge spawn` session takes it back", () => {
    const provider = {
      COPILOT_PROVIDER_TYPE: "anthropic",
      COPILOT_PROVIDER_BASE_URL: "http://127.0.0.1:9/",
      COPILOT_PROVIDER_API_KEY: "session-token",
    };
    const base = { prompt: "p", allowedTools: [], passEnv: [], extraEnv: {} };
    const parent = copilotAdapter.invocation({
      ...base,
      cwd: mkdtempSync(path.join(tmpdir(), "forge-copilot-unit-")),
      parentEnv: provider,
      forgeEnv: {},
    });
    expect(parent.env).toMatchObject({
      ...provider,
      COPILOT_OFFLINE: "true",
      FORGE_COPILOT_PROVIDER_TYPE: "anthropic",
      FORGE_COPILOT_PROVIDER_BASE_URL: "http://127.0.0.1:9/",
      FORGE_COPILOT_PROVIDER_API_KEY: "session-token",
      FORGE_COPILOT_OFFLINE: "true",
    });
    // The CLI's shell keeps FORGE_* and drops COPILOT_PROVIDER_* and COPILOT_OFFLINE (1.0.102).
    const shell = Object.fromEntries(Object.entries(parent.env).filter(([k]) => !/^COPILOT_(PROVIDER_|OFFLINE)/.test(k)));
    const child = copilotAdapter.invocation({
      ...base,
      cwd: mkdtempSync(path.join(tmpdir(), "forge-copilot-unit-")),
      parentEnv: shell,
      forgeEnv: {},
    });
    expect(child.env).toMatchObject({ ...provider, COPILOT_OFFLINE: "true", FORGE_COPILOT_PROVIDER_API_KEY: "session-token" });
    // A provider of the session's own wins over a copy in the environment it was started from.
    const own = copilotAdapter.invocation({
      ...base,
      cwd: mkdtempSync(path.join(tmpdir(), "forge-copilot-unit-")),
      parentEnv: { ...shell, COPILOT_PROVIDER_BASE_URL: "http://127.0.0.1:10/" },
      forgeEnv: {},
    });
    expect(own.env.COPILOT_PROVIDER_BASE_URL).toBe("http://127.0.0.1:10/");
    expect(own.env.COPILOT_PROVIDER_API_KEY).toBeUndefined();
  });
});

const TOOL_START = line("tool.execution_start", {
  toolCallId: "toolu_1",
  toolName: "create",
  arguments: { path: "/w/src/greet.ts", file_text: 'export const greet = () => "hello";\n' },
});

describe("Copilot CLI's JSON stream", () => {
  it("reads turns, tool calls by Forge's names, results, the model, the session and the last message", () => {
    const p = new CopilotJsonParser();
    expect(p.stdoutLine(line("session.info", { infoType: "configuration", message: "Disabled tools: task" }, { ephemeral: true }))).toEqual(
      [],
    );
    expect(p.stdoutLine(line("assistant.turn_start", { turnId: "0" }))).toEqual([]);
    expect(p.stdoutLine(line("assistant.message_delta", { deltaContent: "I'll" }, { ephemeral: true }))).toEqual([]);
    expect(
      p.stdoutLine(line("assistant.message", { model: "claude-sonnet-4-5", content: "I'll create the module.", toolRequests: [] })),
    ).toEqual([{ kind: "text", summary: "I'll create the module." }]);
    expect(p.stdoutLine(TOOL_START)).toEqual([{ kind: "tool_use", tool: "Write", summary: "Write /w/src/greet.ts" }]);
    expect(p.busy()).toBe(true);
    const failed = line("tool.execution_complete", {
      toolCallId: "toolu_1",
      success: false,
      error: { message: "Parent directory does not exist", code: "failure" },
    });
    expect(p.stdoutLine(failed)).toEqual([{ kind: "tool_result", summary: "error: Parent directory does not exist" }]);
    expect(p.busy()).toBe(false);
    p.stdoutLine(line("assistant.turn_start", { turnId: "1" }));
    p.stdoutLine(line("tool.execution_start", { toolCallId: "toolu_2", toolName: "bash", arguments: { command: "mkdir -p src" } }));
    expect(p.stdoutLine(line("tool.execution_complete", { toolCallId: "toolu_2", success: true, result: { content: "done" } }))).toEqual([
      { kind: "tool_result", summary: "done" },
    ]);
    p.stdoutLine(line("assistant.turn_start", { turnId: "2" }));
    p.stdoutLine(line("assistant.message", { model: "claude-sonnet-4-5", content: "Implemented.\nFORGE_EXIT=0" }));
    const result = JSON.stringify({
      type: "result",
      sessionId: "55d62d76-effa-4417-881a-b12e54009015",
      exitCode: 0,
      usage: { premiumRequests: 0 },
    });
    expect(p.stdoutLine(result)).toEqual([{ kind: "result", summary: "done: Implemented. FORGE_EXIT=0" }]);
    expect(p.stdoutLine("not json at all")).toEqual([{ kind: "output", summary: "not json at all" }]);
    expect(p.turns()).toBe(3);
    expect(p.finish(0)).toEqual({
      ok: true,
      turns: 3,
      result: "Implemented.\nFORGE_EXIT=0",
      model: "claude-sonnet-4-5",
      sessionId: "55d62d76-effa-4417-881a-b12e54009015",
    });
  });

  it("fails a session that ended without a result, or whose result says it failed", () => {
    const none = new CopilotJsonParser();
    none.stdoutLine(line("assistant.turn_start", { turnId: "0" }));
    expect(none.finish(0)).toMatchObject({ ok: false, errorText: "copilot ended without a result event" });
    const failed = new CopilotJsonParser();
    expect(failed.stdoutLine(JSON.stringify({ type: "result", sessionId: "s", exitCode: 1 }))).toEqual([
      { kind: "result", summary: "error: exit 1" },
    ]);
    expect(failed.finish(0).ok).toBe(false);
  });

  it("reads a 429 it gave up on as a rate limit, with its status", () => {
    const p = new CopilotJsonParser();
    const message =
      "Failed to get response from the AI model; retried 5 times (total retry wait time: 5.00 seconds) (Request-ID req_5e4f5bcefb9fd8a95b7ee72c) Last error: 429 Rate limited";
    const drafts = p.stdoutLine(line("session.error", { errorType: "rate_limit", message, statusCode: 429, providerCallId: "req_5e4f" }));
    expect(drafts).toEqual([{ kind: "stderr", summary: `rate_limit: ${message}` }]);
    p.stdoutLine(JSON.stringify({ type: "result", sessionId: "b62366ca", exitCode: 1 }));
    const out = p.finish(1);
    expect(out).toMatchObject({ ok: false, apiErrorStatus: 429, errorText: message, sessionId: "b62366ca" });
    expect(detectRateLimit(out.errorText!, { status: out.apiErrorStatus ?? null })).toMatchObject({ kind: "rate_limit" });
  });

  it("reads a usage limit with its reset time out of the error's message", () => {
    const p = new CopilotJsonParser();
    const message =
      "Failed to get response from the AI model; retried 5 times (total retry wait time: 5.00 seconds) (Request-ID req_9a9d) Last error: 429 Claude AI usage limit reached, resets at 3pm (America/New_York)";
    p.stdoutLine(line("session.error", { errorType: "rate_limit", message, statusCode: 429 }));
    const out = p.finish(1);
    const limit = detectRateLimit(out.errorText!, { status: out.apiErrorStatus ?? null, now: new Date("2026-11-28T02:00:00Z") });
    expect(limit).toMatchObject({ kind: "usage_limit" });
    expect(limit!.resetAt!.toISOString()).toBe("2026-11-28T20:00:00.000Z");
  });
});

/** A usage file as 1.0.102 writes it (abridged: the same figures repeat per agent and provider). */
const USAGE = {
  totalPremiumRequestCost: 0,
  sessionStartTime: "2026-11-28T02:02:54.142Z",
  modelMetrics: {
    "claude-sonnet-4-5": {
      requests: { count: 2, cost: 0 },
      usage: { inputTokens: 3688, outputTokens: 10, cacheReadTokens: 200, cacheWriteTokens: 12 },
    },
    "claude-haiku-4-5": { requests: { count: 1, cost: 0 }, usage: { inputTokens: 100, outputTokens: 5 } },
  },
  agentMetrics: { main: { modelMetrics: { "claude-sonnet-4-5": { usage: { inputTokens: 3688, outputTokens: 10 } } } } },
};

describe("Copilot CLI's usage file", () => {
  it("sums the tokens of every model, cache reads and writes as input, and reports them once the process ended", () => {
    const file = path.join(temp(), "forge-usage.json");
    const p = new CopilotJsonParser(file);
    expect(p.afterExit()).toEqual([]);
    writeFileSync(file, JSON.stringify(USAGE));
    expect(copilotUsage(file)).toEqual({ input: 3688 + 200 + 12 + 100, output: 15, model: "claude-sonnet-4-5" });
    expect(p.afterExit()).toEqual([
      { kind: "system", summary: "usage: 4000 input, 15 output tokens", tokens: { input: 4000, output: 15 } },
    ]);
    // No model line in the stream: the usage file names it.
    expect(p.finish(0).model).toBe("claude-sonnet-4-5");
  });

  it("is nothing when the file is missing, not JSON, or has no tokens", () => {
    const dir = temp();
    expect(copilotUsage(undefined)).toBeUndefined();
    expect(copilotUsage(path.join(dir, "none.json"))).toBeUndefined();
    writeFileSync(path.join(dir, "bad.json"), "{ not json");
    expect(copilotUsage(path.join(dir, "bad.json"))).toBeUndefined();
    writeFileSync(path.join(dir, "empty.json"), JSON.stringify({ modelMetrics: {} }));
    expect(new CopilotJsonParser(path.join(dir, "empty.json")).afterExit()).toEqual([]);
  });

  it("finds the usage file the invocation named", () => {
    const sessionDir = temp();
    const inv = copilotAdapter.invocation({
      prompt: "p",
      cwd: "/w",
      allowedTools: [],
      parentEnv: {},
      forgeEnv: { FORGE_SESSION_DIR: sessionDir },
      passEnv: [],
      extraEnv: {},
    });
    const parser = copilotAdapter.parser(inv) as CopilotJsonParser;
    expect(parser.usageFile).toBe(path.join(sessionDir, "home", ".copilot", "forge-usage.json"));
  });
});
