import { afterEach, describe, expect, it } from "vitest";
import { codexTools, lastToolOutputs, startResponsesServer, turnOf, type ResponsesServer } from "../../src/fake-agents/responses/index.js";

let server: ResponsesServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const tools = [
  { type: "function", name: "exec_command" },
  { type: "custom", name: "apply_patch" },
];

async function post(body: unknown, path = "/responses"): Promise<Response> {
  return fetch(`${server!.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer dummy" },
    body: JSON.stringify(body),
  });
}

/** Split an SSE body into frames, checking each is `event: X\ndata: {json}` with data.type === X and growing sequence numbers. */
function parseSse(text: string): Array<{ event: string; data: Record<string, unknown> }> {
  expect(text.endsWith("\n\n")).toBe(true);
  const frames = text
    .split("\n\n")
    .filter((f) => f !== "")
    .map((frame) => {
      const lines = frame.split("\n");
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(/^event: response\.[a-z_.]+$/);
      const event = lines[0]!.slice("event: ".length);
      const data = JSON.parse(lines[1]!.slice("data: ".length)) as Record<string, unknown>;
      expect(data.type).toBe(event);
      return { event, data };
    });
  expect(frames.map((f) => f.data.sequence_number)).toEqual(frames.map((_, i) => i));
  return frames;
}

const user = (text: string) => ({ type: "message", role: "user", content: [{ type: "input_text", text }] });

describe("scripted Responses server", () => {
  it("streams reasoning, text, a function call and a custom tool call as the Responses API does", async () => {
    const patch = codexTools.addFile("/tmp/x/a.txt", "line one\nline two\n");
    server = await startResponsesServer({
      script: [{ reasoning: "Thinking it over.", text: "Writing the file now.", toolCalls: [codexTools.exec("ls -la", "/tmp/x"), patch] }],
      chunkSize: 7,
    });
    const res = await post({ model: "gpt-test", stream: true, tools, input: [user("go")] });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const frames = parseSse(await res.text());
    expect(frames[0]!.event).toBe("response.created");
    expect(frames.at(-1)!.event).toBe("response.completed");
    const added = frames.filter((f) => f.event === "response.output_item.added").map((f) => f.data.item as Record<string, unknown>);
    expect(added.map((i) => i.type)).toEqual(["reasoning", "message", "function_call", "custom_tool_call"]);
    const done = frames.filter((f) => f.event === "response.output_item.done").map((f) => f.data.item as Record<string, unknown>);
    // Deltas reassemble to what output_item.done carries.
    const join = (event: string, key = "delta") =>
      frames
        .filter((f) => f.event === event)
        .map((f) => f.data[key] as string)
        .join("");
    expect(join("response.reasoning_summary_text.delta")).toBe("Thinking it over.");
    expect(join("response.output_text.delta")).toBe("Writing the file now.");
    expect(frames.filter((f) => f.event === "response.output_text.delta").length).toBeGreaterThan(2);
    expect(JSON.parse(join("response.function_call_arguments.delta"))).toEqual({ cmd: "ls -la", workdir: "/tmp/x" });
    expect(done[2]).toMatchObject({
      type: "function_call",
      name: "exec_command",
      call_id: "call_forge_0_0",
      arguments: JSON.stringify({ cmd: "ls -la", workdir: "/tmp/x" }),
    });
    expect(join("response.custom_tool_call_input.delta")).toBe(patch.input);
    expect(done[3]).toMatchObject({
      type: "custom_tool_call",
      name: "apply_patch",
      call_id: "call_forge_0_1",
      input: "*** Begin Patch\n*** Add File: /tmp/x/a.txt\n+line one\n+line two\n*** End Patch\n",
    });
    // Each item opens before its deltas and closes after them, in output order.
    for (const [index, item] of done.entries()) {
      const at = (event: string) => frames.findIndex((f) => f.event === event && f.data.output_index === index);
      expect(at("response.output_item.added")).toBeLessThan(at("response.output_item.done"));
      if (index > 0)
        expect(frames.findIndex((f) => f.event === "response.output_item.done" && f.data.output_index === index - 1)).toBeLessThan(
          at("response.output_item.added"),
        );
      expect(typeof item.id).toBe("string");
    }
    const completed = frames.at(-1)!.data.response as {
      status: string;
      model: string;
      output: unknown[];
      usage: { input_tokens: number; output_tokens: number; total_tokens: number };
    };
    expect(completed).toMatchObject({ status: "completed", model: "gpt-test" });
    expect(completed.output).toEqual(done);
    expect(completed.usage.input_tokens).toBeGreaterThan(0);
    expect(completed.usage.total_tokens).toBe(completed.usage.input_tokens + completed.usage.output_tokens);
  });

  it("picks the turn from the call ids in the conversation, so a retry gets the same turn", async () => {
    const seen: Array<{ turn: number; outputs: string[] }> = [];
    server = await startResponsesServer({
      script: [
        { toolCalls: [codexTools.exec("echo one"), codexTools.exec("echo two")] },
        (req) => {
          seen.push({ turn: req.turn, outputs: req.toolOutputs.map((o) => `${o.call_id}=${o.output}`) });
          return { text: "done" };
        },
      ],
    });
    const first = await (await post({ tools, input: [user("go")] })).json();
    expect(first).toMatchObject({
      object: "response",
      status: "completed",
      output: [
        { type: "function_call", call_id: "call_forge_0_0" },
        { type: "function_call", call_id: "call_forge_0_1" },
      ],
    });
    const calls = (first as { output: Array<Record<string, unknown>> }).output;
    // Calls and outputs interleaved, as a client may send them.
    const history = [
      user("go"),
      calls[0],
      { type: "function_call_output", call_id: "call_forge_0_0", output: "one" },
      calls[1],
      { type: "function_call_output", call_id: "call_forge_0_1", output: "two" },
    ];
    expect(turnOf({ input: history as Array<Record<string, unknown>> })).toBe(1);
    expect(lastToolOutputs({ input: history as Array<Record<string, unknown>> }).map((o) => o.output)).toEqual(["one", "two"]);
    for (let i = 0; i < 2; i++)
      expect(await (await post({ tools, input: history })).json()).toMatchObject({
        output: [{ type: "message", content: [{ type: "output_text", text: "done" }] }],
      });
    expect(seen).toEqual([
      { turn: 1, outputs: ["call_forge_0_0=one", "call_forge_0_1=two"] },
      { turn: 1, outputs: ["call_forge_0_0=one", "call_forge_0_1=two"] },
    ]);
    expect(server.turns().map((t) => t.turn)).toEqual([0, 1, 1]);
    expect(server.exhausted()).toBe(false);
    await post({ tools, input: [...history, { type: "message", role: "assistant", id: "msg_forge_1_ab", content: [] }] });
    expect(server.exhausted()).toBe(true);
  });
});

describe("scripted Responses server: refusals, errors and stalls", () => {
  it("refuses a tool call without output, answers injected errors in the API's shape, and 404s unknown paths", async () => {
    server = await startResponsesServer({
      script: [{ text: "hi" }],
      errors: [{ status: 429, retryAfter: 2, message: "Rate limit reached. Please try again in 2s." }],
    });
    const limited = await post({ tools, input: [user("go")] });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("2");
    expect(await limited.json()).toEqual({
      error: { message: "Rate limit reached. Please try again in 2s.", type: "requests", param: null, code: "rate_limit_exceeded" },
    });
    const orphan = await post({
      tools,
      input: [user("go"), { type: "function_call", call_id: "call_x", name: "exec_command", arguments: "{}" }],
    });
    expect(orphan.status).toBe(400);
    expect(((await orphan.json()) as { error: { message: string } }).error.message).toContain("call_x");
    expect((await post({ tools, input: [user("go")] })).status).toBe(200);
    const side = await post({ input: [user("title?")] });
    expect(await side.json()).toMatchObject({ output: [{ type: "message", content: [{ text: "Forge" }] }] });
    expect((await post({ input: [] }, "/chat/completions")).status).toBe(404);
    const models = await fetch(`${server.url}/models`);
    expect(((await models.json()) as { data: Array<{ id: string }> }).data[0]!.id).toBe("gpt-5.5");
    expect(server.requests.map((r) => [r.kind, r.status])).toEqual([
      ["main", 429],
      ["main", 400],
      ["main", 200],
      ["side", 200],
      ["other", 404],
      ["models", 200],
    ]);
  });

  it("stalls a turn after its opening events, leaving the stream open", async () => {
    server = await startResponsesServer({ script: [{ text: "never finished", stall: true }] });
    const ctrl = new AbortController();
    const res = await fetch(`${server.url}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ stream: true, tools, input: [user("go")] }),
      signal: ctrl.signal,
    });
    const reader = res.body!.getReader();
    let text = "";
    while ((text.match(/\n\n/g) ?? []).length < 4) text += new TextDecoder().decode((await reader.read()).value);
    expect(parseSse(text).map((f) => f.event)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
    ]);
    // Nothing more arrives: the next read is still pending after the server had ample time to send.
    const next = reader.read().then(() => "more");
    expect(await Promise.race([next, new Promise((r) => setTimeout(() => r("nothing"), 300))])).toBe("nothing");
    ctrl.abort();
    await next.catch(() => undefined);
  });
});
