// A resumed attempt's session with the real CLIs, offline, against the scripted model servers
// (docs/executor.md#resuming): the second session is started with the first one's id — Claude Code
// `--resume <id>`, Codex `codex exec resume <id>` — and the model sees the first session's
// conversation in the second one's request: the flag reached the CLI and the CLI resumed.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { spawnAgent } from "../../src/agent/spawn/index.js";
import { offlineClaudeEnv } from "../../src/fake-agents/claude-code.js";
import { startModelServer, type ModelServer, type TurnRequest } from "../../src/fake-agents/model-server.js";
import { codexBinary, offlineCodexEnv, startResponsesServer, type ResponsesServer } from "../../src/fake-agents/responses/index.js";
import { claudeBinary } from "../helpers/claude-code.js";
import { cleanupTempDirs, tempDir } from "./helpers.js";

let claudeServer: ModelServer | undefined;
let codexServer: ResponsesServer | undefined;
let repo: string;

beforeEach(() => {
  repo = tempDir("forge-resume-repo-");
  execFileSync("git", ["init", "-q", "-b", "forge/r1/t1/1", repo]);
  execFileSync("git", ["-C", repo, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "base"]);
});
afterEach(async () => {
  await claudeServer?.close();
  await codexServer?.close();
  claudeServer = codexServer = undefined;
  cleanupTempDirs();
});

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
    const home = mkdtempSync(path.join(tmpdir(), "forge-claude-home-"));
    const env = offlineClaudeEnv(claudeServer.url, home);
    const base = { adapter: "claude" as const, binary: claudeBinary(), cwd: repo, env, forgeCli: false as const, timeoutMs: 90_000 };
    const first = await spawnAgent({ ...base, prompt: "Remember the word PLUM.", sessionDir: path.join(tempDir(), "first") });
    expect(first.exitCode, readFileSync(first.transcriptPath, "utf8")).toBe(0);
    expect(first.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const second = await spawnAgent({
      ...base,
      prompt: "Go on with the verify stage.",
      sessionDir: path.join(tempDir(), "second"),
      resumeSession: first.sessionId!,
    });
    expect(second.exitCode, readFileSync(second.transcriptPath, "utf8")).toBe(0);
    expect(second.result).toContain("Resumed.");
    // The second session's request carries the first one's conversation, then the new prompt.
    const last = seen.at(-1)!;
    expect(last).toContain("Remember the word PLUM.");
    expect(last).toContain("Noted: PLUM.");
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
    const home = mkdtempSync(path.join(tmpdir(), "forge-codex-home-"));
    const env = { ...offlineCodexEnv(codexServer.url, home, {}, { tmpWritable: false }), FORGE_CODEX_SANDBOX: "bypass" };
    const base = { adapter: "codex" as const, binary: codexBinary(), cwd: repo, env, forgeCli: false as const, timeoutMs: 90_000 };
    const first = await spawnAgent({ ...base, prompt: "Remember the word PLUM.", sessionDir: path.join(tempDir(), "first") });
    expect(first.exitCode, readFileSync(first.transcriptPath, "utf8")).toBe(0);
    expect(first.sessionId).toBeTruthy();
    const second = await spawnAgent({
      ...base,
      prompt: "Go on with the verify stage.",
      sessionDir: path.join(tempDir(), "second"),
      resumeSession: first.sessionId!,
    });
    expect(second.exitCode, readFileSync(second.transcriptPath, "utf8")).toBe(0);
    expect(second.result).toContain("Resumed.");
    expect(second.sessionId).toBe(first.sessionId);
    const last = seen.at(-1)!;
    expect(last).toContain("Remember the word PLUM.");
    expect(last).toContain("Go on with the verify stage.");
    expect(seen[0]).not.toContain("Go on with the verify stage.");
  }, 180_000);
});
