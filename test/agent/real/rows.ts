// The table of the real-CLI suite: one row per agent CLI — its binary, the scripted server of its
// API, its offline environment, its tools, the figures each case expects of it, and the cases it
// cannot do with the reason. Every case (harness.ts) runs for every row.
import { existsSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "vitest";
import { offlineChatEnv, opencodeBinary, qwenBinary } from "../../../src/fake-agents/chat/index.js";
import { offlineClaudeEnv } from "../../../src/fake-agents/claude-code.js";
import { copilotBinary, copilotTools, offlineCopilotEnv } from "../../../src/fake-agents/copilot.js";
import { geminiBinary, offlineGeminiEnv } from "../../../src/fake-agents/gemini/index.js";
import { codexBinary, offlineCodexEnv } from "../../../src/fake-agents/responses/index.js";
import { claudeBinary } from "../../helpers/claude-code.js";
import { anthropic, chat, gemini, responses, TOOLS, type LimitError } from "./apis.js";
import { chatType1, claudeType1, codexSandboxed, codexType1, copilotType1, geminiType1 } from "./checks.js";
import type { Row } from "./harness.js";

/** Wall-clock hour and minute of `date` in `timeZone`, e.g. "15:00". */
export function clockIn(date: Date, timeZone: string): string {
  return new Intl.DateTimeFormat("en-US", { timeZone, hour: "numeric", minute: "numeric", hourCycle: "h23" }).format(date);
}

const CLAUDE_USAGE: LimitError = {
  status: 429,
  retryAfter: 0,
  count: 100,
  message: "Claude AI usage limit reached, resets at 3pm (America/New_York)",
};
const OPENAI_QUOTA = "You exceeded your current quota, please check your plan and billing details.";
/** A usage limit with no reset time is assumed to last an hour. */
const anHour = (until: Date, before: number) => {
  expect(until.getTime() - before).toBeGreaterThan(3_500_000);
  expect(until.getTime() - before).toBeLessThanOrEqual(3_700_000);
};

const claude: Row = {
  adapter: "claude",
  binary: claudeBinary,
  api: anthropic,
  tools: TOOLS.claude,
  env: (url, home, extra) => offlineClaudeEnv(url, home, extra),
  cannot: {},
  type1: { tools: ["Write", "Edit", "Bash", "Write"], turns: { min: 7 }, maxTurns: 10, timeoutMs: 90_000, check: claudeType1 },
  idle: { idleMs: 10_000, timeoutMs: 60_000, testMs: 60_000, quietToTheEnd: true, detectWithinMs: 5_000 },
  // Three 429s: the CLI retries once and gives up; Forge backs off and runs it again.
  backoff: {
    errors: [{ status: 429, retryAfter: 0, count: 3 }],
    env: { CLAUDE_CODE_MAX_RETRIES: "1" },
    statuses: [429, 429, 429, 200, 200],
    wait: 5_000,
    testMs: 60_000,
  },
  usage: {
    errors: [CLAUDE_USAGE],
    env: { CLAUDE_CODE_MAX_RETRIES: "1" },
    reset: (until) => expect(clockIn(until, "America/New_York")).toBe("15:00"),
    testMs: 60_000,
  },
  spawn: {
    shell: (command) => ({ name: "Bash", input: { command, description: "Delegate to a type-1 sub-agent", timeout: 120000 } }),
    childArgs: "--max-turns 5",
    maxTurns: 5,
  },
  resume: { idPattern: /^[0-9a-f-]{36}$/, sameId: false, assistantSeen: true },
};

const codex: Row = {
  adapter: "codex",
  binary: codexBinary,
  api: responses,
  tools: TOOLS.codex,
  model: "gpt-5.5",
  env: (url, home, extra) => ({
    ...offlineCodexEnv(url, home, extra, { tmpWritable: false }),
    FORGE_CODEX_SANDBOX: codexSandboxed() ? "workspace-write" : "bypass",
  }),
  cannot: {},
  type1: {
    verifyExtra: (elsewhere) => `echo outside > ${elsewhere}/escaped.txt 2>/dev/null && echo escaped || echo refused`,
    // One `codex exec` is one Codex turn; apply_patch adds and updates files.
    tools: ["Edit", "Edit", "Bash", "Edit"],
    turns: 3,
    requests: 7,
    resultPattern: /^turn completed \(\d+ input, \d+ output tokens\): (\w+)/,
    timeoutMs: 120_000,
    check: codexType1,
  },
  idle: { idleMs: 10_000, timeoutMs: 60_000, testMs: 60_000, quietToTheEnd: true },
  // No retries inside Codex (request_max_retries = 0): its run ends at the first 429.
  backoff: {
    errors: [{ status: 429, count: 1, message: "Rate limit reached for requests. Please try again in 1s." }],
    statuses: [429, 200, 200],
    transcript: /429 Too Many Requests/,
    testMs: 60_000,
  },
  usage: {
    // The API says why in its code: Codex prints "Quota exceeded." for insufficient_quota.
    errors: [{ status: 429, count: 100, code: "insufficient_quota", message: OPENAI_QUOTA }],
    statuses: [429],
    message: /^usage_limit until/,
    reset: anHour,
    testMs: 60_000,
  },
  // exec_command yields after yield_time_ms; the sub-agent must be done by then.
  spawn: { shell: (cmd) => ({ name: "exec_command", arguments: { cmd, yield_time_ms: 30_000 } }) },
  resume: { sameId: true, assistantSeen: false },
};

const geminiRow: Row = {
  adapter: "gemini",
  binary: geminiBinary,
  api: gemini,
  tools: TOOLS.gemini,
  model: "gemini-2.5-flash",
  env: (url, home) => offlineGeminiEnv(url, home),
  cannot: {},
  type1: {
    tools: ["Write", "Edit", "Bash", "Write"],
    turns: 7,
    requests: 7,
    resultPattern: /^done \(\d+ input, \d+ output tokens\): (\w+)/,
    timeoutMs: 180_000,
    check: geminiType1,
  },
  // It starts in about 4 s idle: the limit leaves room for a busy machine.
  idle: { idleMs: 15_000, timeoutMs: 90_000, testMs: 90_000, quietToTheEnd: true },
  // Backoff, not a reset time: the first wait of the exponential series (exit 173).
  backoff: {
    errors: [{ status: 429, count: 1, message: "Resource has been exhausted (e.g. check quota)." }],
    statuses: [429, 200, 200],
    wait: 5_000,
    transcript: /Resource has been exhausted/,
    testMs: 90_000,
  },
  // "limit: 0" is terminal for the CLI: one request, no retry of its own; a daily quota resets at midnight Pacific.
  usage: {
    errors: [{ status: 429, count: 5, message: "Quota exceeded for quota metric 'Generate Content API requests per day' and limit: 0" }],
    statuses: [429],
    reset: (until, before) => {
      expect(clockIn(until, "America/Los_Angeles")).toBe("00:00");
      expect(until.getTime() - before).toBeGreaterThan(0);
      expect(until.getTime() - before).toBeLessThanOrEqual(25 * 3_600_000);
    },
    testMs: 90_000,
  },
  // The sub-agent runs in its own CLI home, under its own session directory.
  spawn: { check: (child) => expect(existsSync(path.join(String(child.session_dir), "home", ".gemini", "settings.json"))).toBe(true) },
  resume: { idPattern: /^[0-9a-f-]{36}$/, sameId: true, assistantSeen: true },
};

/** opencode and Qwen Code: Chat Completions; a 429 they retry past the test's patience, so the limit ends while Forge waits. */
const chatLimits = {
  backoff: {
    errors: [{ status: 429 as const, count: 1000, retryAfter: 1, message: "Rate limit reached for requests" }],
    clearOnSleep: true,
    wait: 5_000,
    testMs: 200_000,
  },
  usage: {
    errors: [{ status: 429 as const, count: 1000, retryAfter: 1, code: "insufficient_quota", message: OPENAI_QUOTA }],
    message: /^usage_limit until/,
    reset: anHour,
    testMs: 200_000,
  },
  // opencode prints nothing until its first model call ends: its start on a busy machine must fit in.
  idle: { idleMs: 45_000, timeoutMs: 120_000, testMs: 200_000, quietToTheEnd: false },
};

const chatType1Base = { tools: ["Write", "Edit", "Bash", "Write"], turns: 7, requests: 7, timeoutMs: 300_000 };

const opencode: Row = {
  adapter: "opencode",
  binary: opencodeBinary,
  api: chat,
  tools: TOOLS.opencode,
  // Not a gpt-* id: opencode gives those apply_patch in place of write and edit.
  model: "forge-coder",
  env: (url, home, extra) => offlineChatEnv(url, home, extra),
  cannot: {
    resume:
      "opencode keeps its conversations in a SQLite database Forge does not carry: a resumed opencode attempt starts its session afresh",
  },
  type1: { ...chatType1Base, check: chatType1(["task", "question", "websearch"]) },
  ...chatLimits,
  spawn: {},
  resume: { sameId: false, assistantSeen: true },
};

const qwen: Row = {
  adapter: "qwen",
  binary: qwenBinary,
  api: chat,
  tools: TOOLS.qwen,
  model: "qwen3-coder-plus",
  env: (url, home, extra) => offlineChatEnv(url, home, extra),
  cannot: {},
  type1: { ...chatType1Base, check: chatType1(["agent", "web_search"]) },
  ...chatLimits,
  spawn: {},
  resume: { sameId: true, assistantSeen: true },
};

/** Where Copilot CLI unpacks itself, shared between the tests. */
const COPILOT_CACHE = path.join(tmpdir(), "forge-copilot-cache");

const copilot: Row = {
  adapter: "copilot",
  binary: () => copilotBinary(),
  missing: "Copilot CLI is not installed: set FORGE_COPILOT_BIN to its binary, or put `copilot` on PATH (npm i -g @github/copilot@1.0.102)",
  api: anthropic,
  tools: TOOLS.copilot,
  model: "claude-sonnet-4-5",
  env: (url, home, extra) => {
    mkdirSync(COPILOT_CACHE, { recursive: true });
    return offlineCopilotEnv(url, home, COPILOT_CACHE, extra);
  },
  cannot: {},
  type1: {
    // `create` makes no folders ("Parent directory does not exist"): the shell makes src/ first.
    prelude: (file) => [{ text: "I'll make the folder.", toolCalls: [copilotTools.bash(`mkdir -p '${path.dirname(file)}'`)] }],
    // Forge left a template there, and `create` refuses a file that exists: the shell writes it.
    overwrite: (file, content) => copilotTools.bash(`cat > '${file}' <<'FORGE_EOF'\n${content}FORGE_EOF`),
    tools: ["Bash", "Write", "Edit", "Bash", "Bash"],
    turns: 8,
    requests: 8,
    resultPattern: /^done: (\w+)/,
    timeoutMs: 240_000,
    check: copilotType1,
  },
  idle: { idleMs: 30_000, timeoutMs: 120_000, testMs: 200_000, quietToTheEnd: false },
  // The CLI tries a 429 six times (five retries, a second apart when the server asks for no wait) before it gives up.
  backoff: {
    errors: [{ status: 429, retryAfter: 0, count: 6 }],
    statuses: [429, 429, 429, 429, 429, 429, 200, 200],
    wait: 5_000,
    result: { model: "claude-sonnet-4-5" },
    rateLimitEvent: /^rate_limit: .*429/,
    testMs: 120_000,
  },
  usage: {
    errors: [CLAUDE_USAGE],
    statuses: [429, 429, 429, 429, 429, 429],
    reset: (until) => expect(clockIn(until, "America/New_York")).toBe("15:00"),
    testMs: 90_000,
  },
  spawn: {},
  resume: { idPattern: /^[0-9a-f-]{36}$/, sameId: false, assistantSeen: true, carried: (id) => `copilot-${id}.jsonl` },
};

export const ROWS: Row[] = [claude, codex, geminiRow, opencode, qwen, copilot];
