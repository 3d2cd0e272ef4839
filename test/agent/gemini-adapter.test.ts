// The Gemini CLI adapter without the CLI: its command line, the session's CLI home (settings over
// the runner's, the system prompt as GEMINI.md, the tools of the agent's kind) and its stream-json
// read into progress and an outcome. test/agent/real/ (its row) runs the real CLI.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { inAgentHome, removeAgentHomes } from "../../action/src/task/files.js";
import { geminiAdapter, geminiArgs, GeminiStreamParser, geminiTools } from "../../src/agent/adapters/gemini.js";
import { allowedToolsFor } from "../../src/agent/hierarchy.js";

const line = (o: Record<string, unknown>) => JSON.stringify(o);

const temps: string[] = [];
const temp = (prefix: string) => {
  const d = mkdtempSync(path.join(tmpdir(), prefix));
  temps.push(d);
  return d;
};
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

describe("the Gemini CLI adapter", () => {
  it("runs gemini -p headless with yolo approvals, stream-json, a concrete model, the session's folders and -r on resume", () => {
    const { args, stdin } = geminiArgs({
      prompt: "Do X",
      model: "gemini-2.5-flash",
      cwd: "/w/repo",
      forgeEnv: { FORGE_SESSION_DIR: "/s/one", FORGE_WALKTHROUGH_PATH: "/s/one/walkthrough.md", FORGE_QUESTION_FILE: "/r/q.md" },
      resumeSession: "0b4c5d6e-1111-2222-3333-444455556666",
    });
    expect(args).toEqual([
      "-p",
      "Do X",
      "--approval-mode",
      "yolo",
      "--skip-trust",
      "-o",
      "stream-json",
      "-m",
      "gemini-2.5-flash",
      "--include-directories",
      "/s/one",
      "--include-directories",
      "/r",
      "-r",
      "0b4c5d6e-1111-2222-3333-444455556666",
    ]);
    expect(stdin).toBeUndefined();
    // No model: the CLI's default model, never its `auto` router.
    expect(geminiArgs({ prompt: "x", cwd: "/w" }).args).toContain("gemini-2.5-pro");
    // A prompt over one argument's limit goes on stdin.
    const long = geminiArgs({ prompt: "y".repeat(200_000), cwd: "/w" });
    expect(long.stdin).toHaveLength(200_000);
    expect(long.args[1]!.length).toBeLessThan(100);
  });

  it("writes the session's CLI home: the runner's settings under Forge's, the kind's tools, the system prompt as GEMINI.md; no model key of the host", () => {
    const runnerHome = temp("forge-gemini-runner-");
    mkdirSync(path.join(runnerHome, ".gemini"));
    writeFileSync(
      path.join(runnerHome, ".gemini", "settings.json"),
      JSON.stringify({ general: { maxAttempts: 2 }, security: { auth: { selectedType: "oauth-personal" } }, ui: { theme: "x" } }),
    );
    const sessionDir = temp("forge-gemini-session-");
    const inv = geminiAdapter.invocation({
      prompt: "Do X",
      systemPrompt: "You are a type 3 agent.",
      cwd: "/w",
      allowedTools: allowedToolsFor("sentinel-auditor"),
      parentEnv: { PATH: "/bin", GEMINI_CLI_HOME: runnerHome, GEMINI_API_KEY: "tok", GITHUB_TOKEN: "ghs_x", ANTHROPIC_API_KEY: "sk" },
      forgeEnv: { FORGE_SESSION_DIR: sessionDir },
      passEnv: [],
      extraEnv: {},
    });
    const home = path.join(sessionDir, "home");
    expect(inv.env).toMatchObject({ GEMINI_CLI_HOME: home, GEMINI_API_KEY: "tok", GEMINI_CLI_NO_RELAUNCH: "true" });
    expect(inv.env.GITHUB_TOKEN).toBeUndefined();
    expect(inv.env.ANTHROPIC_API_KEY).toBeUndefined();
    const settings = JSON.parse(readFileSync(path.join(home, ".gemini", "settings.json"), "utf8")) as {
      general: { maxAttempts: number };
      ui: unknown;
      security: { auth: { selectedType: string } };
      tools: { core: string[]; exclude: string[] };
    };
    expect(settings.general.maxAttempts).toBe(2);
    expect(settings.ui).toEqual({ theme: "x" });
    expect(settings.security.auth.selectedType).toBe("gemini-api-key");
    // A reviewer: no replace (Edit), and never the CLI's own sub-agents.
    expect(settings.tools.core).toEqual(geminiTools(allowedToolsFor("sentinel-auditor")));
    expect(settings.tools.core).not.toContain("replace");
    expect(settings.tools.core).toContain("run_shell_command");
    expect(settings.tools.exclude).toContain("invoke_agent");
    expect(readFileSync(path.join(home, ".gemini", "GEMINI.md"), "utf8")).toBe("You are a type 3 agent.\n");
    // The session's own HOME: none of it (settings, GEMINI.md, the raw conversation) goes into the published record.
    writeFileSync(path.join(sessionDir, "transcript.log"), "");
    expect(inAgentHome(sessionDir, path.join("home", ".gemini", "GEMINI.md"))).toBe(true);
    expect(inAgentHome(sessionDir, path.join("home", ".gemini", "tmp", "w", "chats", "session-x.jsonl"))).toBe(true);
  });

  it("reads stream-json: turns, tool calls by Forge's names, busy while a tool runs, the final text, tokens and the session", () => {
    const p = new GeminiStreamParser();
    const drafts = [
      line({ type: "init", session_id: "s-1", model: "gemini-2.5-pro" }),
      line({ type: "message", role: "user", content: "Do X" }),
      line({ type: "message", role: "assistant", content: "I'll ", delta: true }),
      line({ type: "message", role: "assistant", content: "write.", delta: true }),
      line({ type: "tool_use", tool_name: "write_file", tool_id: "t1", parameters: { file_path: "/w/a.txt", content: "x" } }),
      line({ type: "tool_use", tool_name: "run_shell_command", tool_id: "t2", parameters: { command: "ls" } }),
    ].flatMap((l) => p.stdoutLine(l));
    expect(p.busy()).toBe(true);
    drafts.push(...p.stdoutLine(line({ type: "tool_result", tool_id: "t1", status: "success" })));
    drafts.push(...p.stdoutLine(line({ type: "tool_result", tool_id: "t2", status: "error", error: { message: "boom" } })));
    expect(p.busy()).toBe(false);
    drafts.push(...p.stdoutLine(line({ type: "message", role: "assistant", content: "Done.\nFORGE_EXIT=0", delta: true })));
    drafts.push(
      ...p.stdoutLine(
        line({ type: "result", status: "success", stats: { input_tokens: 1200, output_tokens: 80, models: { "gemini-2.5-pro": {} } } }),
      ),
    );
    expect(drafts.map((d) => [d.kind, d.tool ?? "", d.summary])).toEqual([
      ["system", "", "session started (model gemini-2.5-pro)"],
      ["text", "", "I'll write."],
      ["tool_use", "Write", "write_file /w/a.txt"],
      ["tool_use", "Bash", "run_shell_command ls"],
      ["tool_result", "", ""],
      ["tool_result", "", "error: boom"],
      ["text", "", "Done. FORGE_EXIT=0"],
      ["result", "", "done (1200 input, 80 output tokens): Done. FORGE_EXIT=0"],
    ]);
    expect(drafts.at(-1)!.tokens).toEqual({ input: 1200, output: 80 });
    expect(p.finish(0)).toEqual({ ok: true, turns: 2, result: "Done.\nFORGE_EXIT=0", model: "gemini-2.5-pro", sessionId: "s-1" });
  });

  it("reads a 429 the CLI gave up on (exit 173) as the API's 429, with the API's message", () => {
    const p = new GeminiStreamParser();
    p.stdoutLine(line({ type: "init", session_id: "s-2", model: "gemini-2.5-pro" }));
    p.stdoutLine(
      line({
        type: "result",
        status: "error",
        error: { type: "unknown", message: "[API Error: Resource has been exhausted (e.g. check quota).]" },
        stats: {},
      }),
    );
    expect(p.finish(173)).toMatchObject({
      ok: false,
      apiErrorStatus: 429,
      errorText: "[API Error: Resource has been exhausted (e.g. check quota).]",
      sessionId: "s-2",
    });
    // A success without a result event is not one.
    expect(new GeminiStreamParser().finish(0)).toMatchObject({ ok: false, errorText: "gemini ended without a result event" });
  });
});

describe("the session's agent homes at the end of a job", () => {
  it("the job removes every agent session's HOME and TMPDIR at its end, and nothing else of the session folder", async () => {
    const root = temp("forge-gemini-session-");
    const sub = path.join(root, "agent", "stages", "01-implement");
    for (const f of [
      "events.ndjson",
      "home/.gemini/settings.json",
      "tmp/scratch",
      "agent/stages/01-implement/transcript.log",
      "agent/stages/01-implement/home/.copilot/session-state/s/events.jsonl",
      "agent/stages/01-implement/tmp/x",
      "agent/notes/home/kept.md",
    ]) {
      mkdirSync(path.dirname(path.join(root, f)), { recursive: true });
      writeFileSync(path.join(root, f), "x");
    }
    expect(await removeAgentHomes(root)).toEqual([]);
    for (const gone of ["home", "tmp", path.join(sub, "home"), path.join(sub, "tmp")])
      expect(existsSync(path.resolve(root, gone))).toBe(false);
    for (const kept of ["events.ndjson", path.join(sub, "transcript.log"), "agent/notes/home/kept.md"])
      expect(existsSync(path.resolve(root, kept))).toBe(true);
  });
});
