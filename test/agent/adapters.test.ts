import { describe, expect, it } from "vitest";
import { claudeAdapter, claudeArgs, isPartialChunk, StreamJsonParser } from "../../src/agent/adapters/claude.js";
import { codexArgs, CodexJsonParser } from "../../src/agent/adapters/codex.js";
import { commandAdapter } from "../../src/agent/adapters/command.js";
import { allowedToolsFor, mayCallerSpawn } from "../../src/agent/hierarchy.js";

describe("claude argv", () => {
  it("builds claude -p with the system prompt, tools, turns, stream-json and model", () => {
    const { args, stdin } = claudeArgs({
      prompt: "Do X",
      systemPrompt: "You are Y",
      allowedTools: ["Read", "Write"],
      maxTurns: 7,
      model: "claude-sonnet-4-5",
    });
    expect(args).toEqual([
      "-p",
      "Do X",
      "--append-system-prompt",
      "You are Y",
      "--allowedTools",
      "Read,Write",
      "--max-turns",
      "7",
      "--output-format",
      "stream-json",
      "--verbose",
      "--include-partial-messages",
      "--model",
      "claude-sonnet-4-5",
    ]);
    expect(stdin).toBeUndefined();
  });

  it("sends a prompt too long for one argument on stdin", () => {
    const big = "x".repeat(200_000);
    const { args, stdin } = claudeArgs({ prompt: big, allowedTools: [] });
    expect(args[0]).toBe("-p");
    expect(args).not.toContain(big);
    expect(stdin).toBe(big);
  });

  it("gives Claude its key and endpoint but no GitHub token", () => {
    const inv = claudeAdapter.invocation({
      prompt: "p",
      cwd: "/w",
      allowedTools: [],
      parentEnv: {
        PATH: "/bin",
        ANTHROPIC_API_KEY: "k",
        ANTHROPIC_BASE_URL: "http://x",
        GITHUB_TOKEN: "g",
        OPENAI_API_KEY: "o",
        CLAUDE_CODE_MAX_RETRIES: "1",
      },
      forgeEnv: { FORGE_TRACE_ID: "0123456789abcdef" },
      passEnv: [],
      extraEnv: {},
    });
    expect(inv.command).toBe("claude");
    expect(inv.env).toEqual({
      PATH: "/bin",
      ANTHROPIC_API_KEY: "k",
      ANTHROPIC_BASE_URL: "http://x",
      CLAUDE_CODE_MAX_RETRIES: "1",
      FORGE_TRACE_ID: "0123456789abcdef",
    });
  });

  it("gives a command agent no model key unless asked to", () => {
    const input = {
      prompt: "p",
      cwd: "/w",
      allowedTools: [],
      parentEnv: { PATH: "/bin", ANTHROPIC_API_KEY: "k" },
      forgeEnv: {},
      extraEnv: {},
      command: "/bin/agent",
    };
    expect(commandAdapter.invocation({ ...input, passEnv: [] }).env).toEqual({ PATH: "/bin" });
    expect(commandAdapter.invocation({ ...input, passEnv: ["ANTHROPIC_API_KEY"] }).env).toEqual({ PATH: "/bin", ANTHROPIC_API_KEY: "k" });
    expect(() => commandAdapter.invocation({ ...input, command: undefined, passEnv: [] })).toThrow(/needs a command/);
  });
});

describe("claude stream-json parsing", () => {
  const lines = [
    { type: "system", subtype: "init", model: "claude-sonnet-4-5", session_id: "s-1", tools: ["Bash"] },
    { type: "assistant", message: { id: "m1", model: "claude-sonnet-4-5", content: [{ type: "text", text: "I'll write it." }] } },
    {
      type: "assistant",
      message: { id: "m1", content: [{ type: "tool_use", id: "t1", name: "Write", input: { file_path: "/w/a.ts", content: "x" } }] },
    },
    { type: "user", message: { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "File created" }] } },
    { type: "assistant", message: { id: "m2", content: [{ type: "tool_use", id: "t2", name: "Bash", input: { command: "npm test" } }] } },
    {
      type: "user",
      message: { role: "user", content: [{ type: "tool_result", tool_use_id: "t2", content: "1 failing", is_error: true }] },
    },
    { type: "assistant", message: { id: "m3", content: [{ type: "text", text: "Done.\nFORGE_EXIT=0" }] } },
    {
      type: "result",
      subtype: "success",
      is_error: false,
      num_turns: 3,
      total_cost_usd: 0.0123,
      result: "Done.\nFORGE_EXIT=0",
      session_id: "s-1",
    },
  ];

  it("turns each line into progress events and counts turns by message id", () => {
    const p = new StreamJsonParser();
    const drafts = lines.flatMap((l) => p.stdoutLine(JSON.stringify(l)));
    expect(drafts.map((d) => d.kind)).toEqual(["system", "text", "tool_use", "tool_result", "tool_use", "tool_result", "text", "result"]);
    expect(drafts[2]).toEqual({ kind: "tool_use", tool: "Write", summary: "Write /w/a.ts" });
    expect(drafts[4]).toEqual({ kind: "tool_use", tool: "Bash", summary: "Bash npm test" });
    expect(drafts[5]!.summary).toBe("error: 1 failing");
    expect(p.turns()).toBe(3);
    expect(p.finish(0)).toEqual({
      ok: true,
      result: "Done.\nFORGE_EXIT=0",
      model: "claude-sonnet-4-5",
      turns: 3,
      costUsd: 0.0123,
      sessionId: "s-1",
    });
  });

  it("reports an API error result with its status", () => {
    const p = new StreamJsonParser();
    p.stdoutLine(
      JSON.stringify({
        type: "result",
        subtype: "success",
        is_error: true,
        api_error_status: 429,
        result: "API Error: Request rejected (429) · usage limit reached",
        num_turns: 1,
      }),
    );
    expect(p.finish(1)).toMatchObject({
      ok: false,
      apiErrorStatus: 429,
      errorText: "API Error: Request rejected (429) · usage limit reached",
    });
  });

  it("turns partial-message chunks into a liveness event every few seconds, not one per chunk", () => {
    const p = new StreamJsonParser();
    const chunk = JSON.stringify({
      type: "stream_event",
      event: { type: "content_block_delta", delta: { type: "text_delta", text: "x" } },
    });
    expect(isPartialChunk(chunk)).toBe(true);
    const drafts = Array.from({ length: 50 }, () => p.stdoutLine(chunk)).flat();
    expect(drafts).toEqual([{ kind: "text", summary: "(the model is writing)" }]);
    expect(p.turns()).toBe(0);
  });

  it("keeps plain lines as output", () => {
    const p = new StreamJsonParser();
    expect(p.stdoutLine("hello {not json")).toEqual([{ kind: "output", summary: "hello {not json" }]);
    expect(p.stdoutLine("   ")).toEqual([]);
    expect(p.plainLines).toEqual(["hello {not json"]);
  });
});

describe("a command agent's failure", () => {
  const feed = (out: string[], err: string[]) => {
    const p = commandAdapter.parser();
    for (const l of out) p.stdoutLine(l);
    for (const l of err) p.stderrLine(l);
    return p;
  };

  it("is its own error line on stderr, not its progress lines", () => {
    const p = feed(
      ["writing src/case.js", "running node --test", "Spent $0.05 so far"],
      ["(node) a warning", "Error: camelCase returned 'fooBar'", ""],
    );
    const o = p.finish(1);
    expect(o).toMatchObject({ ok: false, errorText: "Error: camelCase returned 'fooBar'" });
    // The last lines stay the final word for what reads it (a question, a refinement).
    expect(o.result).toBe("writing src/case.js\nrunning node --test\nSpent $0.05 so far");
  });

  it("is its last stdout line when it printed nothing on stderr; a success has no error", () => {
    expect(feed(["merging", "ESCALATE: the release needs an API reference"], []).finish(11).errorText).toBe(
      "ESCALATE: the release needs an API reference",
    );
    expect(feed(["a"], ["b"]).finish(2).errorText).toBe("b");
    expect(feed(["done"], ["Error: only a warning"]).finish(0).errorText).toBeUndefined();
  });
});

describe("codex", () => {
  it("builds codex exec --json with the prompt on stdin and the sandbox from the tools", () => {
    expect(codexArgs({ cwd: "/w", allowedTools: ["Read", "Edit"], model: "gpt-5-codex", systemPrompt: 'Be "careful"' })).toEqual([
      "exec",
      "--json",
      "--skip-git-repo-check",
      "--cd",
      "/w",
      "-c",
      "allow_login_shell=false",
      "--sandbox",
      "workspace-write",
      "-c",
      'approval_policy="never"',
      "-c",
      "sandbox_workspace_write.network_access=true",
      "--model",
      "gpt-5-codex",
      "-c",
      'developer_instructions="Be \\"careful\\""',
      "-",
    ]);
    expect(codexArgs({ cwd: "/w", allowedTools: ["Read", "Grep"] })).toContain("read-only");
  });

  it("parses exec --json events", () => {
    const p = new CodexJsonParser();
    const events = [
      { type: "thread.started", thread_id: "th1" },
      { type: "turn.started" },
      { type: "item.started", item: { type: "command_execution", command: "ls" } },
      { type: "item.completed", item: { type: "command_execution", command: "ls", exit_code: 0, aggregated_output: "a" } },
      { type: "item.completed", item: { type: "file_change", changes: [{ path: "a.ts", kind: "add" }] } },
      { type: "item.completed", item: { type: "agent_message", text: "ok" } },
      { type: "turn.completed", usage: { input_tokens: 1, output_tokens: 1 } },
    ];
    const drafts = events.flatMap((e) => p.stdoutLine(JSON.stringify(e)));
    expect(drafts.map((d) => d.kind)).toEqual(["system", "system", "tool_use", "tool_result", "tool_use", "text", "result"]);
    expect(p.finish(0)).toEqual({ ok: true, turns: 1, result: "ok", sessionId: "th1" });
    const failed = new CodexJsonParser();
    failed.stdoutLine(JSON.stringify({ type: "turn.failed", error: { message: "429 Too Many Requests" } }));
    expect(failed.finish(1)).toMatchObject({ ok: false, errorText: "429 Too Many Requests" });
  });
});

describe("hierarchy and tools", () => {
  it("lets 2 spawn 1, 3 spawn 1 and 2, a refinery spawn 1–3, and nobody else anything", () => {
    expect(mayCallerSpawn("2", "1")).toBe(true);
    expect(mayCallerSpawn("2", "2")).toBe(false);
    expect(mayCallerSpawn("3", "2")).toBe(true);
    expect(mayCallerSpawn("3", "3")).toBe(false);
    expect(mayCallerSpawn("refinery", "3")).toBe(true);
    expect(mayCallerSpawn("refinery", "refinery")).toBe(false);
    expect(mayCallerSpawn("1", "1")).toBe(false);
    expect(mayCallerSpawn("captain", "1")).toBe(false);
  });

  it("never gives Claude's own sub-agent tool, and gives reviewers no Edit", () => {
    for (const kind of ["1", "2", "3", "refinery", "captain"] as const) {
      expect(allowedToolsFor(kind)).toEqual(expect.arrayContaining(["Read", "Write", "Edit", "Bash"]));
      expect(allowedToolsFor(kind)).not.toContain("Task");
      expect(allowedToolsFor(kind)).not.toContain("Agent");
    }
    expect(allowedToolsFor("sentinel-auditor")).not.toContain("Edit");
  });
});

describe("resuming an agent session (docs/executor.md#resuming)", () => {
  const ID = "5a1f3c2e-0000-4000-8000-000000000001";

  it("Claude Code gets --resume <id>; a fresh session gets none", () => {
    const { args } = claudeArgs({ prompt: "Go on.", allowedTools: ["Read"], resumeSession: ID });
    expect(args.slice(0, 4)).toEqual(["-p", "Go on.", "--resume", ID]);
    expect(claudeArgs({ prompt: "Go on.", allowedTools: ["Read"] }).args).not.toContain("--resume");
    // A prompt on stdin resumes the same way.
    expect(claudeArgs({ prompt: "x".repeat(200_000), allowedTools: [], resumeSession: ID }).args.slice(0, 3)).toEqual([
      "-p",
      "--resume",
      ID,
    ]);
  });

  it("Codex runs `codex exec <its options> resume <id> -`: the options before the subcommand, the prompt on stdin", () => {
    const args = codexArgs({ cwd: "/w", allowedTools: ["Read", "Edit"], model: "gpt-5-codex", resumeSession: ID });
    expect(args[0]).toBe("exec");
    expect(args.slice(-3)).toEqual(["resume", ID, "-"]);
    expect(args.indexOf("--model")).toBeLessThan(args.indexOf("resume"));
    expect(args.indexOf("--json")).toBeLessThan(args.indexOf("resume"));
    expect(codexArgs({ cwd: "/w", allowedTools: ["Read"] })).not.toContain("resume");
  });

  it("a command agent is told the session in FORGE_RESUME_SESSION", () => {
    const base = { prompt: "p", cwd: "/w", allowedTools: [], parentEnv: {}, forgeEnv: {}, passEnv: [], extraEnv: {}, command: "agent" };
    expect(commandAdapter.invocation({ ...base, resumeSession: ID }).env.FORGE_RESUME_SESSION).toBe(ID);
    expect(commandAdapter.invocation(base).env.FORGE_RESUME_SESSION).toBeUndefined();
  });
});
