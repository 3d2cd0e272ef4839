// The agent CLI's conversation carried between jobs (src/agent/agent-sessions.ts): only the one
// conversation file, masked line by line, put back where each CLI looks for it; and nothing of an
// agent session's own home in the record the job publishes (action/src/task/files.ts).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { copyForRecord, inAgentHome } from "../../action/src/task/files.js";
import { AGENT_SESSION_DIR, carrySession, claudeProjectDir, restoreSession, scrubSession } from "../../src/agent/agent-sessions.js";
import { Masker } from "../../src/agent/secrets.js";

const dirs: string[] = [];
const temp = () => {
  const d = mkdtempSync(path.join(tmpdir(), "forge-sessions-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const ID = "5a1f3c2e-0000-4000-8000-000000000001";
const SECRET = "proxy-session-token-0123456789";

function masker(): Masker {
  const m = new Masker();
  m.add(SECRET);
  return m;
}

describe("carrying a conversation", () => {
  it("masks registered secrets and token shapes line by line, and drops what is not JSON", () => {
    const text = [
      JSON.stringify({ type: "user", message: { content: `key ${SECRET} and ghp_0123456789abcdefghijklmnopqrstuvwxyzAB` } }),
      "not json",
      "",
      JSON.stringify({ type: "assistant", message: { content: "fine" } }),
    ].join("\n");
    const out = scrubSession(text, masker());
    expect(out).not.toContain(SECRET);
    expect(out).not.toContain("ghp_0123456789");
    expect(
      out
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { type: string })
        .map((l) => l.type),
    ).toEqual(["user", "assistant"]);
  });

  it("carries Claude Code's conversation file alone out of its home, and puts it back in another home's project folder", async () => {
    const home = temp();
    const cwd = "/work/repo";
    const project = path.join(home, ".claude", "projects", claudeProjectDir(cwd));
    mkdirSync(project, { recursive: true });
    writeFileSync(path.join(project, `${ID}.jsonl`), `${JSON.stringify({ type: "user", message: { content: `hello ${SECRET}` } })}\n`);
    writeFileSync(path.join(home, ".claude.json"), JSON.stringify({ customApiKeyResponses: { approved: [SECRET.slice(-20)] } }));
    const sessionDir = temp();
    const carried = await carrySession("claude", { HOME: home }, ID, sessionDir, masker());
    expect(readdirSync(path.join(sessionDir, AGENT_SESSION_DIR))).toEqual([`claude-${ID}.jsonl`]);
    expect(readFileSync(carried.file!, "utf8")).toContain('"hello ***"');
    const other = temp();
    const dest = await restoreSession("claude", readFileSync(carried.file!), path.basename(carried.file!), { HOME: other }, cwd, ID);
    expect(dest).toBe(path.join(other, ".claude", "projects", "-work-repo", `${ID}.jsonl`));
    // CLAUDE_CONFIG_DIR wins over HOME, as Claude Code reads it.
    expect(
      await restoreSession("claude", Buffer.from("{}\n"), "x", { HOME: other, CLAUDE_CONFIG_DIR: path.join(other, "cfg") }, cwd, ID),
    ).toBe(path.join(other, "cfg", "projects", "-work-repo", `${ID}.jsonl`));
  });

  it("carries Codex's rollout and puts it back under the sessions folder of its date; refuses an id that is no file name", async () => {
    const codexHome = temp();
    const name = `rollout-2026-11-27T19-30-26-${ID}.jsonl`;
    mkdirSync(path.join(codexHome, "sessions", "2026", "11", "27"), { recursive: true });
    writeFileSync(path.join(codexHome, "sessions", "2026", "11", "27", name), `${JSON.stringify({ type: "session_meta" })}\n`);
    const sessionDir = temp();
    const carried = await carrySession("codex", { CODEX_HOME: codexHome }, ID, sessionDir, masker());
    expect(path.basename(carried.file!)).toBe(`codex-${name}`);
    const other = temp();
    expect(await restoreSession("codex", readFileSync(carried.file!), path.basename(carried.file!), { CODEX_HOME: other }, "/w", ID)).toBe(
      path.join(other, "sessions", "2026", "11", "27", name),
    );
    expect(await carrySession("codex", { CODEX_HOME: codexHome }, "../../etc/passwd", sessionDir, masker())).toEqual({
      why: "the CLI left no conversation file",
    });
    expect(await restoreSession("claude", Buffer.from("{}"), "x", { HOME: other }, "/w", "../x")).toBeUndefined();
  });
});

describe("carrying a conversation of Qwen Code and opencode", () => {
  it("carries Qwen Code's chat file out of its QWEN_HOME and puts it back in another home's project folder", async () => {
    const qwenHome = temp();
    const cwd = "/work/repo";
    const chats = path.join(qwenHome, "projects", "-work-repo", "chats");
    mkdirSync(chats, { recursive: true });
    writeFileSync(path.join(chats, `${ID}.jsonl`), `${JSON.stringify({ type: "user", message: { parts: [{ text: `hi ${SECRET}` }] } })}\n`);
    writeFileSync(path.join(qwenHome, "settings.json"), JSON.stringify({ security: { auth: { apiKey: SECRET } } }));
    const sessionDir = temp();
    const carried = await carrySession("qwen", { QWEN_HOME: qwenHome }, ID, sessionDir, masker());
    expect(readdirSync(path.join(sessionDir, AGENT_SESSION_DIR))).toEqual([`qwen-${ID}.jsonl`]);
    expect(readFileSync(carried.file!, "utf8")).toContain('"hi ***"');
    const other = temp();
    expect(await restoreSession("qwen", readFileSync(carried.file!), path.basename(carried.file!), { QWEN_HOME: other }, cwd, ID)).toBe(
      path.join(other, "projects", "-work-repo", "chats", `${ID}.jsonl`),
    );
  });

  it("carries nothing of opencode, whose conversations are in a database: the attempt says why", async () => {
    const home = temp();
    expect(await carrySession("opencode", { HOME: home }, "ses_abc", temp(), masker())).toEqual({
      why: "the CLI left no conversation file",
    });
    expect(await restoreSession("opencode", Buffer.from("{}"), "x", { HOME: home }, "/w", "ses_abc")).toBeUndefined();
  });
});

describe("the record of a session folder", () => {
  it("leaves out every agent session's own home and temp folder, and keeps a carried conversation whole", async () => {
    const from = temp();
    const stage = path.join(from, "agent", "stages", "01-implement");
    mkdirSync(path.join(stage, "home", ".claude"), { recursive: true });
    mkdirSync(path.join(stage, "tmp"), { recursive: true });
    mkdirSync(path.join(stage, AGENT_SESSION_DIR), { recursive: true });
    writeFileSync(path.join(stage, "transcript.log"), "t\n");
    writeFileSync(path.join(stage, "home", ".claude.json"), "{}");
    writeFileSync(path.join(stage, "tmp", "x"), "x");
    const big = `${JSON.stringify({ text: "x".repeat(1_500_000) })}\n`;
    writeFileSync(path.join(stage, AGENT_SESSION_DIR, `claude-${ID}.jsonl`), big);
    // A folder named home elsewhere (the agent's own files) is kept.
    mkdirSync(path.join(from, "home"), { recursive: true });
    writeFileSync(path.join(from, "home", "notes.md"), "kept\n");
    expect(inAgentHome(from, "agent/stages/01-implement/home/.claude.json")).toBe(true);
    expect(inAgentHome(from, "home/notes.md")).toBe(false);
    const to = temp();
    await copyForRecord(from, to);
    const listed = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? listed(path.join(dir, e.name)) : [path.relative(to, path.join(dir, e.name))],
      );
    expect(listed(to).sort()).toEqual([
      "agent/stages/01-implement/agent-session/claude-" + ID + ".jsonl",
      "agent/stages/01-implement/transcript.log",
      "home/notes.md",
    ]);
    expect(readFileSync(path.join(to, "agent/stages/01-implement/agent-session", `claude-${ID}.jsonl`), "utf8")).toBe(big);
  });
});
