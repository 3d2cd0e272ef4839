// The runner's model proxy speaking Chat Completions (for opencode and Qwen Code): the session token
// arrives as a bearer token and leaves as the real key; the streamed answer comes back untouched and
// its usage is read from the last chunk (`stream_options.include_usage`); a 429 comes back as the
// API sent it. Against the scripted Chat Completions server on 127.0.0.1. And the two CLIs' output
// parsers on the lines their real binaries print.
import { afterEach, describe, expect, it } from "vitest";
import { agentAccess } from "../../action/src/agent-access.js";
import { opencodeArgs, OpencodeJsonParser } from "../../src/agent/adapters/opencode.js";
import { qwenExcludedTools, QwenStreamParser } from "../../src/agent/adapters/qwen.js";
import { allowedToolsFor } from "../../src/agent/hierarchy.js";
import { startModelProxy } from "../../src/agent/model-proxy.js";
import { detectRateLimit } from "../../src/agent/rate-limit.js";
import { startChatServer } from "../../src/fake-agents/chat/index.js";

const KEY = "sk-proj-realOpenAiKey0123456789abcdef";
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

const body = (stream: boolean) =>
  JSON.stringify({
    model: "forge-coder",
    stream,
    ...(stream ? { stream_options: { include_usage: true } } : {}),
    messages: [{ role: "user", content: "hi" }],
    tools: [{ type: "function", function: { name: "bash" } }],
  });

describe("the model proxy for Chat Completions", () => {
  it("puts the real key in place of the token, streams the chunks back and meters the usage chunk and a whole answer", async () => {
    const server = await startChatServer({ script: [{ text: "Hello from the scripted model, in pieces." }], chunkSize: 8 });
    closers.push(() => server.close());
    const proxy = await startModelProxy({ upstream: server.url, key: KEY, api: "chat" });
    closers.push(() => proxy.close());
    const token = proxy.openSession().token;
    const r = await fetch(`${proxy.url}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body(true),
    });
    expect(r.status).toBe(200);
    const events = (await r.text()).split("\n\n").filter(Boolean);
    expect(events.at(-1)).toBe("data: [DONE]");
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.replace(/^data: /, "")) as { usage?: Record<string, number> | null });
    expect(chunks.length).toBeGreaterThan(4);
    const usage = chunks.at(-1)!.usage!;
    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    const whole = await fetch(`${proxy.url}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
      body: body(false),
    });
    const answer = (await whole.json()) as { usage: Record<string, number> };
    expect(proxy.usage()).toMatchObject({
      requests: 2,
      inputTokens: usage.prompt_tokens! + answer.usage.prompt_tokens!,
      outputTokens: usage.completion_tokens! + answer.usage.completion_tokens!,
    });
    expect(Object.keys(proxy.usage().byModel)).toEqual(["forge-coder"]);
  });

  it("passes a 429 back as the API sent it, and serves the OpenAI proxy to opencode and Qwen Code", async () => {
    const server = await startChatServer({
      script: [{ text: "x" }],
      errors: [{ status: 429, code: "insufficient_quota", message: "You exceeded your current quota." }],
    });
    closers.push(() => server.close());
    for (const adapter of ["opencode", "qwen"] as const) {
      const access = await agentAccess({
        adapter,
        isolation: "none",
        env: { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.url },
        warn: () => undefined,
      });
      closers.push(() => access.close());
      expect(access.extraEnv.OPENAI_BASE_URL).toBe(access.proxy!.url);
      expect(access.env.OPENAI_API_KEY).toBeUndefined();
      const session = access.modelSession!();
      expect(Object.keys(session.env)).toEqual(["OPENAI_API_KEY"]);
      if (adapter === "opencode") {
        const r = await fetch(`${access.proxy!.url}/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${session.env.OPENAI_API_KEY}` },
          body: body(true),
        });
        expect(r.status).toBe(429);
        expect(((await r.json()) as { error: { code: string } }).error.code).toBe("insufficient_quota");
      }
    }
  });
});

describe("the output of opencode and Qwen Code", () => {
  it("reads opencode's steps: turns, the last text, tokens and cost, the session id; an error event's status", () => {
    const p = new OpencodeJsonParser();
    const line = (o: object) => p.stdoutLine(JSON.stringify({ sessionID: "ses_1", ...o }));
    line({ type: "step_start", part: {} });
    const tool = line({
      type: "tool_use",
      part: { tool: "write", state: { status: "completed", input: { filePath: "/r/a.ts" }, output: "Wrote file successfully." } },
    });
    expect(tool.map((d) => [d.kind, d.tool ?? d.summary])).toEqual([
      ["tool_use", "Write"],
      ["tool_result", "Wrote file successfully."],
    ]);
    line({
      type: "step_finish",
      part: { reason: "tool-calls", tokens: { input: 100, output: 10, reasoning: 5, cache: { read: 20, write: 0 } }, cost: 0.01 },
    });
    line({ type: "step_start", part: {} });
    line({ type: "text", part: { text: "Done.\nFORGE_EXIT=0" } });
    const end = line({
      type: "step_finish",
      part: { reason: "stop", tokens: { input: 130, output: 3, reasoning: 0, cache: { read: 0, write: 0 } }, cost: 0.02 },
    });
    expect(end[0]).toMatchObject({ kind: "result", tokens: { input: 250, output: 18 }, costUsd: 0.03 });
    expect(p.finish(0)).toMatchObject({ ok: true, turns: 2, result: "Done.\nFORGE_EXIT=0", sessionId: "ses_1", costUsd: 0.03 });

    const q = new OpencodeJsonParser();
    q.stdoutLine(
      JSON.stringify({
        type: "error",
        sessionID: "ses_2",
        error: { name: "APIError", data: { message: "Rate limit reached for requests", statusCode: 429 } },
      }),
    );
    const failed = q.finish(1);
    expect(failed).toMatchObject({ ok: false, apiErrorStatus: 429, sessionId: "ses_2" });
    expect(detectRateLimit(failed.errorText!, { status: failed.apiErrorStatus ?? null })?.kind).toBe("rate_limit");
    // A session cut short (no final step) is no success.
    const r = new OpencodeJsonParser();
    r.stdoutLine(JSON.stringify({ type: "step_start", part: {} }));
    expect(r.finish(0)).toMatchObject({ ok: false, errorText: "opencode ended without finishing its last step" });
  });

  it("reads Qwen Code's stream-json as Claude Code's, its tools named as Forge names them, the result's usage as tokens", () => {
    const p = new QwenStreamParser();
    p.stdoutLine(JSON.stringify({ type: "system", subtype: "init", session_id: "q1", model: "qwen3-coder-plus" }));
    const use = p.stdoutLine(
      JSON.stringify({
        type: "assistant",
        message: { id: "m1", content: [{ type: "tool_use", id: "c1", name: "run_shell_command", input: { command: "ls" } }] },
      }),
    );
    expect(use[0]).toMatchObject({ kind: "tool_use", tool: "Bash" });
    const result = p.stdoutLine(
      JSON.stringify({
        type: "result",
        subtype: "success",
        is_error: false,
        num_turns: 2,
        result: "ok",
        session_id: "q1",
        usage: { input_tokens: 900, output_tokens: 40 },
      }),
    );
    expect(result[0]).toMatchObject({ kind: "result", tokens: { input: 900, output: 40 } });
    expect(p.finish(0)).toMatchObject({ ok: true, turns: 2, sessionId: "q1", model: "qwen3-coder-plus", result: "ok" });
  });

  it("gives opencode its prompt on stdin: a message argument with a space would reach the model quoted", () => {
    const prompt = '---\nid: t1\ntitle: "Greet: say hello"\n---\nWrite it.';
    const { args, stdin } = opencodeArgs({ prompt, model: "m", resumeSession: "ses_1" });
    expect(stdin).toBe(prompt);
    expect(args).toEqual(["run", "--format", "json", "--pure", "-m", "forge/m", "-s", "ses_1"]);
  });

  it("never excludes a Qwen Code rule that would take an allowed tool with it (`edit` covers write_file)", () => {
    // A sentinel may Write (its audit report), not Edit: excluding `edit` would deny write_file too.
    const sentinel = qwenExcludedTools(allowedToolsFor("sentinel"));
    expect(sentinel).not.toContain("edit");
    expect(sentinel).not.toContain("write_file");
    expect(sentinel).toEqual(expect.arrayContaining(["notebook_edit", "todo_write", "web_fetch", "agent"]));
    const type1 = qwenExcludedTools(allowedToolsFor("1"));
    expect(type1).not.toEqual(expect.arrayContaining(["edit"]));
    expect(type1).toEqual(expect.arrayContaining(["web_fetch", "agent"]));
  });
});
