// A resumed attempt's session with the real CLIs, offline, against the scripted model servers
// (docs/executor.md#resuming): the first session's conversation is carried out of its home, masked
// (src/agent/agent-sessions.ts); the second session, in another home as on another machine, is
// started with the first one's id — Claude Code `--resume <id>`, Codex `codex exec resume <id>`,
// Gemini CLI `-r <id>` —
// and the carried file put back: the model sees the first conversation in the second one's request,
// so the flag reached the CLI and the CLI resumed, and the token of the first prompt is not in it.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AGENT_SESSION_DIR } from "../../src/agent/agent-sessions.js";
import { Masker } from "../../src/agent/secrets.js";
import { spawnAgent } from "../../src/agent/spawn/index.js";
import { offlineClaudeEnv } from "../../src/fake-agents/claude-code.js";
import { startModelServer, type ModelServer, type TurnRequest } from "../../src/fake-agents/model-server.js";
import { codexBinary, offlineCodexEnv, startResponsesServer, type ResponsesServer } from "../../src/fake-agents/responses/index.js";
import { geminiBinary, offlineGeminiEnv, startGeminiServer, type GeminiServer } from "../../src/fake-agents/gemini/index.js";
import { claudeBinary } from "../helpers/claude-code.js";
import { cleanupTempDirs, tempDir } from "./helpers.js";

let claudeServer: ModelServer | undefined;
let codexServer: ResponsesServer | undefined;
let geminiServer: GeminiServer | undefined;
let repo: string;

beforeEach(() => {
  repo = tempDir("forge-resume-repo-");
  execFileSync("git", ["init", "-q", "-b", "forge/r1/t1/1", repo]);
  execFileSync("git", ["-C", repo, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "base"]);
});
afterEach(async () => {
  await claudeServer?.close();
  await codexServer?.close();
  await geminiServer?.close();
  claudeServer = codexServer = geminiServer = undefined;
  cleanupTempDirs();
});

/** A token shape in the first prompt: no copy of the conversation that leaves the job may hold it. */
const TOKEN = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
const PROMPT = `Remember the word PLUM. (The job's token is ${TOKEN}.)`;
const masker = () => new Masker();

/**
 * The conversation the session left in its folder's agent-session/: one file, masked — nothing else
 * of the CLI's home (its settings, its key approvals) is carried.
 */
function carriedOf(sessionDir: string, adapter: string, id: string): string {
  const files = readdirSync(path.join(sessionDir, AGENT_SESSION_DIR));
  expect(files).toHaveLength(1);
  expect(files[0]).toMatch(new RegExp(`^${adapter}-.*${id}\\.jsonl$`));
  const file = path.join(sessionDir, AGENT_SESSION_DIR, files[0]!);
  const text = readFileSync(file, "utf8");
  expect(text).toContain("Remember the word PLUM.");
  expect(text).not.toContain(TOKEN);
  for (const line of text.trim().split("\n")) expect(() => JSON.parse(line) as unknown).not.toThrow();
  return file;
}

/** Every text of a Messages request's conversation, user and assistant. */
function conversationText(req: TurnRequest): string {
  return (req.body.messages ?? [])
    .map((m) =>
      typeof m.content === "string" ? m.content : ((m.content ?? []) as Array<{ text?: string }>).map((b) => b.text ?? "").join("\n"),
    )
    .join("\n");
}

describe("resuming the agent CLI's session", () => {
  it("Claude Code: --resume <id> continues the first session's conversation", async () => {
    const seen: string[] = [];
    const reply = (text: string) => (req: TurnRequest) => {
      seen.push(conversationText(req));
      return { text };
    };
    claudeServer = await startModelServer({ script: [reply("Noted: PLUM.\nFORGE_EXIT=0"), reply("Resumed.\nFORGE_EXIT=0")] });
    // Two jobs, two machines: the second session's home has nothing of the first's but the carried conversation.
    const [home1, home2] = [mkdtempSync(path.join(tmpdir(), "forge-claude-home-")), mkdtempSync(path.join(tmpdir(), "forge-claude-home-"))];
    const base = { adapter: "claude" as const, binary: claudeBinary(), cwd: repo, forgeCli: false as const, timeoutMs: 90_000 };
    const firstDir = path.join(tempDir(), "first");
    const first = await spawnAgent({
      ...base,
      env: offlineClaudeEnv(claudeServer.url, home1),
      prompt: PROMPT,
      sessionDir: firstDir,
      masker: masker(),
    });
    expect(first.exitCode, readFileSync(first.transcriptPath, "utf8")).toBe(0);
    expect(first.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const carried = carriedOf(firstDir, "claude", first.sessionId!);
    const second = await spawnAgent({
      ...base,
      env: offlineClaudeEnv(claudeServer.url, home2),
      prompt: "Go on with the verify stage.",
      sessionDir: path.join(tempDir(), "second"),
      resumeSession: first.sessionId!,
      resumeFile: { path: carried, root: firstDir },
    });
    expect(second.exitCode, readFileSync(second.transcriptPath, "utf8")).toBe(0);
    expect(second.result).toContain("Resumed.");
    // The second session's request carries the first one's conversation, then the new prompt.
    const last = seen.at(-1)!;
    expect(last).toContain("Remember the word PLUM.");
    expect(last).toContain("Noted: PLUM.");
    // …masked on its way: the token in the first prompt never left the first job.
    expect(last).not.toContain(TOKEN);
    expect(last).toContain("(The job's token is ***.)");
    expect(last).toContain("Go on with the verify stage.");
    expect(last.indexOf("Remember the word PLUM.")).toBeLessThan(last.indexOf("Go on with the verify stage."));
    // A fresh session (no --resume) starts from nothing.
    expect(seen[0]).not.toContain("Go on with the verify stage.");
  }, 180_000);

  it("Codex: codex exec resume <id> continues the first thread", async () => {
    const seen: string[] = [];
    codexServer = await startResponsesServer({
      script: [
        (req) => (seen.push(req.userText), { text: "Noted: PLUM.\nFORGE_EXIT=0" }),
        (req) => (seen.push(req.userText), { text: "Resumed.\nFORGE_EXIT=0" }),
      ],
    });
    const envOf = (home: string) => ({
      ...offlineCodexEnv(codexServer!.url, home, {}, { tmpWritable: false }),
      FORGE_CODEX_SANDBOX: "bypass",
    });
    const [home1, home2] = [mkdtempSync(path.join(tmpdir(), "forge-codex-home-")), mkdtempSync(path.join(tmpdir(), "forge-codex-home-"))];
    const base = { adapter: "codex" as const, binary: codexBinary(), cwd: repo, forgeCli: false as const, timeoutMs: 90_000 };
    const firstDir = path.join(tempDir(), "first");
    const first = await spawnAgent({ ...base, env: envOf(home1), prompt: PROMPT, sessionDir: firstDir, masker: masker() });
    expect(first.exitCode, readFileSync(first.transcriptPath, "utf8")).toBe(0);
    expect(first.sessionId).toBeTruthy();
    const carried = carriedOf(firstDir, "codex", first.sessionId!);
    const second = await spawnAgent({
      ...base,
      env: envOf(home2),
      prompt: "Go on with the verify stage.",
      sessionDir: path.join(tempDir(), "second"),
      resumeSession: first.sessionId!,
      resumeFile: { path: carried, root: firstDir },
    });
    expect(second.exitCode, readFileSync(second.transcriptPath, "utf8")).toBe(0);
    expect(second.result).toContain("Resumed.");
    expect(second.sessionId).toBe(first.sessionId);
    const last = seen.at(-1)!;
    expect(last).toContain("Remember the word PLUM.");
    expect(last).not.toContain(TOKEN);
    expect(last).toContain("Go on with the verify stage.");
    expect(seen[0]).not.toContain("Go on with the verify stage.");
  }, 180_000);

  it("Gemini CLI: -r <id> continues the first session, its file put back in the new session's own CLI home", async () => {
    const seen: string[] = [];
    const texts = (req: { body: { contents?: Array<{ parts?: Array<{ text?: string }> }> } }) =>
      (req.body.contents ?? []).flatMap((c) => (c.parts ?? []).map((p) => p.text ?? "")).join("\n");
    geminiServer = await startGeminiServer({
      script: [
        (req) => (
          seen.push(texts(req)),
          { text: req.userText.includes("Go on") ? "Resumed.\nFORGE_EXIT=0" : "Noted: PLUM.\nFORGE_EXIT=0" }
        ),
      ],
    });
    const [home1, home2] = [mkdtempSync(path.join(tmpdir(), "forge-gemini-home-")), mkdtempSync(path.join(tmpdir(), "forge-gemini-home-"))];
    const base = { adapter: "gemini" as const, binary: geminiBinary(), cwd: repo, forgeCli: false as const, timeoutMs: 90_000 };
    const firstDir = path.join(tempDir(), "first");
    const first = await spawnAgent({
      ...base,
      env: offlineGeminiEnv(geminiServer.url, home1),
      prompt: PROMPT,
      sessionDir: firstDir,
      masker: masker(),
    });
    expect(first.exitCode, readFileSync(first.transcriptPath, "utf8")).toBe(0);
    expect(first.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const carried = carriedOf(firstDir, "gemini", first.sessionId!);
    const second = await spawnAgent({
      ...base,
      env: offlineGeminiEnv(geminiServer.url, home2),
      prompt: "Go on with the verify stage.",
      sessionDir: path.join(tempDir(), "second"),
      resumeSession: first.sessionId!,
      resumeFile: { path: carried, root: firstDir },
    });
    expect(second.exitCode, readFileSync(second.transcriptPath, "utf8")).toBe(0);
    expect(second.result).toContain("Resumed.");
    expect(second.sessionId).toBe(first.sessionId);
    const last = seen.at(-1)!;
    expect(last).toContain("Remember the word PLUM.");
    expect(last).toContain("Noted: PLUM.");
    expect(last).not.toContain(TOKEN);
    expect(last).toContain("Go on with the verify stage.");
    expect(last.indexOf("Remember the word PLUM.")).toBeLessThan(last.indexOf("Go on with the verify stage."));
    expect(seen[0]).not.toContain("Go on with the verify stage.");
  }, 180_000);
});
