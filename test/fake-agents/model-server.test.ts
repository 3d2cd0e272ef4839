import { afterEach, describe, expect, it } from "vitest";
import { startModelServer, type ModelServer } from "../../src/fake-agents/model-server.js";

let server: ModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const tools = [{ name: "Write" }, { name: "Bash" }];

async function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${server!.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "dummy", "anthropic-version": "2023-06-01" },
    body: JSON.stringify(body),
  });
}

/** Split an SSE body into frames, checking each is `event: X\ndata: {json}` with data.type === X. */
function parseSse(text: string): Array<{ event: string; data: Record<string, unknown> }> {
  expect(text.endsWith("\n\n")).toBe(true);
  return text
    .split("\n\n")
    .filter((f) => f !== "")
    .map((frame) => {
      const lines = frame.split("\n");
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(/^event: [a-z_]+$/);
      expect(lines[1]).toMatch(/^data: \{/);
      const event = lines[0]!.slice("event: ".length);
      const data = JSON.parse(lines[1]!.slice("data: ".length)) as Record<string, unknown>;
      expect(data.type).toBe(event);
      return { event, data };
    });
}

describe("scripted model server: Messages API framing", () => {
  it("streams text and tool_use blocks as SSE, with input_json_delta that reassembles to the input", async () => {
    const input = { file_path: "/tmp/x/hello.txt", content: "a fairly long content string to force several chunks\n" };
    server = await startModelServer({
      script: [{ text: "Writing it now.", toolCalls: [{ name: "Write", input, id: "toolu_1" }] }],
      chunkSize: 10,
    });
    const res = await post("/v1/messages?beta=true", {
      model: "claude-test-1",
      max_tokens: 100,
      stream: true,
      tools,
      messages: [{ role: "user", content: "go" }],
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const frames = parseSse(await res.text());
    const names = frames.map((f) => f.event);
    expect(names[0]).toBe("message_start");
    expect(names.slice(-2)).toEqual(["message_delta", "message_stop"]);
    expect((frames[0]!.data.message as { model: string; role: string }).model).toBe("claude-test-1");
    // Block 0: text
    const starts = frames.filter((f) => f.event === "content_block_start");
    expect(starts.map((f) => (f.data.content_block as { type: string }).type)).toEqual(["text", "tool_use"]);
    expect(starts[1]!.data.content_block).toEqual({ type: "tool_use", id: "toolu_1", name: "Write", input: {} });
    const deltas = (index: number) =>
      frames.filter((f) => f.event === "content_block_delta" && f.data.index === index).map((f) => f.data.delta as Record<string, string>);
    expect(
      deltas(0)
        .map((d) => d.text)
        .join(""),
    ).toBe("Writing it now.");
    expect(deltas(1).every((d) => d.type === "input_json_delta")).toBe(true);
    expect(deltas(1).length).toBeGreaterThan(3);
    expect(
      JSON.parse(
        deltas(1)
          .map((d) => d.partial_json)
          .join(""),
      ),
    ).toEqual(input);
    // Each block opens before its deltas and closes after them.
    for (const index of [0, 1]) {
      const at = frames.map((f, i) => ({ f, i })).filter(({ f }) => f.data.index === index);
      expect(at[0]!.f.event).toBe("content_block_start");
      expect(at[at.length - 1]!.f.event).toBe("content_block_stop");
    }
    const messageDelta = frames.find((f) => f.event === "message_delta")!.data;
    expect((messageDelta.delta as { stop_reason: string }).stop_reason).toBe("tool_use");
    expect((messageDelta.usage as { output_tokens: number }).output_tokens).toBeGreaterThan(0);
  });

  it("answers non-streamed requests with one JSON message, and count_tokens", async () => {
    server = await startModelServer({ script: [{ text: "plain answer" }] });
    const res = await post("/v1/messages", { model: "m", max_tokens: 10, tools, messages: [{ role: "user", content: "hi" }] });
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      type: "message",
      role: "assistant",
      model: "m",
      content: [{ type: "text", text: "plain answer" }],
      stop_reason: "end_turn",
    });
    const count = await post("/v1/messages/count_tokens", { model: "m", messages: [{ role: "user", content: "hello world" }] });
    expect(((await count.json()) as { input_tokens: number }).input_tokens).toBeGreaterThan(0);
    expect(server.requests.map((r) => r.kind)).toEqual(["main", "count_tokens"]);
  });

  it("advances by the conversation: tool_results reach a script function, retries get the same turn, side requests don't move it", async () => {
    const seen: unknown[] = [];
    server = await startModelServer({
      script: [
        { toolCalls: [{ name: "Bash", input: { command: "echo hi" }, id: "toolu_a" }] },
        (req) => {
          seen.push(req.toolResults);
          return { text: `got ${String(req.toolResults[0]?.content)}` };
        },
      ],
    });
    const first = [{ role: "user", content: "go" }];
    const r0 = (await (await post("/v1/messages", { tools, messages: first })).json()) as { content: unknown[] };
    const second = [
      ...first,
      { role: "assistant", content: r0.content },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_a", content: "hi" }] },
    ];
    const side = (await (
      await post("/v1/messages", { system: 'Return JSON with a single "title" field', messages: [{ role: "user", content: "x" }] })
    ).json()) as { content: Array<{ text: string }> };
    expect(JSON.parse(side.content[0]!.text)).toEqual({ title: "Forge scripted session" });
    const a = (await (await post("/v1/messages", { tools, messages: second })).json()) as { content: Array<{ text: string }> };
    const b = (await (await post("/v1/messages", { tools, messages: second })).json()) as { content: Array<{ text: string }> };
    expect(a.content[0]!.text).toBe("got hi");
    expect(b.content[0]!.text).toBe("got hi");
    expect(seen).toEqual([[{ tool_use_id: "toolu_a", content: "hi" }], [{ tool_use_id: "toolu_a", content: "hi" }]]);
    expect(server.turns().map((r) => r.turn)).toEqual([0, 1, 1]);
    expect(server.requests.filter((r) => r.kind === "side")).toHaveLength(1);
    expect(server.exhausted()).toBe(false);
    await post("/v1/messages", { tools, messages: [...second, { role: "assistant", content: "x" }, { role: "user", content: "more" }] });
    expect(server.exhausted()).toBe(true);
  });

  it("answers 429 and 529 with retry-after in the API's error shape, then serves the script", async () => {
    server = await startModelServer({ script: [{ text: "ok" }], errors: [{ status: 429, retryAfter: 7 }] });
    server.failNext({ status: 529 });
    const req = { tools, messages: [{ role: "user", content: "go" }] };
    const r1 = await post("/v1/messages", req);
    expect(r1.status).toBe(429);
    expect(r1.headers.get("retry-after")).toBe("7");
    expect(await r1.json()).toEqual({ type: "error", error: { type: "rate_limit_error", message: "Rate limited" } });
    const r2 = await post("/v1/messages", req);
    expect(r2.status).toBe(529);
    expect(((await r2.json()) as { error: { type: string } }).error.type).toBe("overloaded_error");
    const r3 = await post("/v1/messages", req);
    expect(r3.status).toBe(200);
    expect(server.requests.map((r) => r.status)).toEqual([429, 529, 200]);
  });
});

describe("scripted model server: errors per conversation, the API's own refusals", () => {
  it("answers a turn's error to its conversation only, again on a retry, while other conversations go on", async () => {
    const message = "Claude AI usage limit reached, resets at 08:00 (UTC)";
    server = await startModelServer({
      script: [
        (req) =>
          JSON.stringify(req.body.messages).includes("limited") ? { error: { status: 429, retryAfter: 0, message } } : { text: "ok" },
      ],
    });
    const limited = { tools, messages: [{ role: "user", content: "the limited task" }] };
    const r1 = await post("/v1/messages", limited);
    expect(r1.status).toBe(429);
    expect(r1.headers.get("retry-after")).toBe("0");
    expect(await r1.json()).toEqual({ type: "error", error: { type: "rate_limit_error", message } });
    expect((await post("/v1/messages", { tools, messages: [{ role: "user", content: "another task" }] })).status).toBe(200);
    expect((await post("/v1/messages", limited)).status).toBe(429);
    expect(server.requests.map((r) => r.status)).toEqual([429, 200, 429]);
  });

  it("refuses a conversation whose tool_use has no tool_result after it, as the API does", async () => {
    server = await startModelServer({ script: [{ text: "x" }, { text: "y" }] });
    const res = await post("/v1/messages", {
      tools,
      messages: [
        { role: "user", content: "go" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_z", name: "Bash", input: {} }] },
        { role: "user", content: "no result here" },
      ],
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { type: string; message: string } };
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).toMatch(/tool_use.* ids were found without .*tool_result.* blocks immediately after: toolu_z/);
  });

  it("answers unknown endpoints 404 and records them", async () => {
    server = await startModelServer({ script: [] });
    const res = await fetch(`${server.url}/v1/models`);
    expect(res.status).toBe(404);
    expect(server.requests[0]).toMatchObject({ method: "GET", path: "/v1/models", kind: "other", status: 404 });
  });
});
