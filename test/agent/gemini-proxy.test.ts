// The runner's model proxy speaking the Gemini API (for Gemini CLI): the session token arrives in
// `x-goog-api-key` and leaves as the real key; only a model's generate and count calls go upstream;
// the usage of every answer, streamed or not, is read from its `usageMetadata`. Against the scripted
// Gemini server on 127.0.0.1.
import { afterEach, describe, expect, it } from "vitest";
import { agentAccess } from "../../action/src/agent-access.js";
import { startModelProxy, type ModelProxy } from "../../src/agent/model-proxy.js";
import { priceUsage } from "../../src/agent/model-usage.js";
import { startGeminiServer, type GeminiServer } from "../../src/fake-agents/gemini/index.js";

const KEY = "AIzaSy-realGeminiKey0123456789";
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

async function serverAndProxy(): Promise<{ server: GeminiServer; proxy: ModelProxy; token: string }> {
  const server = await startGeminiServer({
    script: [{ thought: "plan", text: "Hello from the scripted Gemini model, in pieces." }, { text: "second" }],
    chunkSize: 8,
  });
  closers.push(() => server.close());
  const proxy = await startModelProxy({ upstream: server.url, key: KEY, api: "gemini" });
  closers.push(() => proxy.close());
  return { server, proxy, token: proxy.openSession().token };
}

const turn = (text: string) =>
  JSON.stringify({ contents: [{ role: "user", parts: [{ text }] }], tools: [{ functionDeclarations: [{ name: "run_shell_command" }] }] });

describe("the model proxy for Gemini CLI", () => {
  it("puts the real key in x-goog-api-key, streams the answer back untouched and meters usageMetadata", async () => {
    const { server, proxy, token } = await serverAndProxy();
    const r = await fetch(`${proxy.url}/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse`, {
      method: "POST",
      headers: { "x-goog-api-key": token, "content-type": "application/json" },
      body: turn("hi"),
    });
    expect(r.status).toBe(200);
    const text = await r.text();
    const chunks = text
      .split("\r\n\r\n")
      .filter(Boolean)
      .map((c) => JSON.parse(c.replace(/^data: /, "")) as { usageMetadata?: Record<string, number> });
    // Text in pieces: the proxy passed every chunk; the usage is in the last.
    expect(chunks.length).toBeGreaterThan(3);
    const usage = chunks.at(-1)!.usageMetadata!;
    expect(server.requests[0]!.headers["x-goog-api-key"]).toBe(KEY);
    expect(server.requests[0]!.path).toBe("/v1beta/models/gemini-2.5-pro:streamGenerateContent");
    // Not streamed: one JSON body.
    const whole = await fetch(`${proxy.url}/v1beta/models/gemini-2.5-pro:generateContent`, {
      method: "POST",
      headers: { "x-goog-api-key": token },
      body: turn("again"),
    });
    const body = (await whole.json()) as { usageMetadata: Record<string, number> };
    const metered = proxy.usage();
    expect(metered.requests).toBe(2);
    // Thinking tokens are output.
    expect(metered.byModel["gemini-2.5-pro"]).toEqual({
      inputTokens: usage.promptTokenCount! + body.usageMetadata.promptTokenCount!,
      outputTokens:
        usage.candidatesTokenCount! +
        usage.thoughtsTokenCount! +
        body.usageMetadata.candidatesTokenCount! +
        body.usageMetadata.thoughtsTokenCount!,
      cacheCreationTokens: 0,
      cacheReadTokens: 0,
    });
    expect(priceUsage(metered, { "gemini-2.5-pro": { input_per_mtok: 1.25, output_per_mtok: 10 } })).toBeGreaterThan(0);
  });

  it("refuses other tokens, the key itself, and every path but a model's generate and count calls, in the Gemini API's error shape", async () => {
    const { server, proxy, token } = await serverAndProxy();
    const attempts: Array<Record<string, string>> = [
      {},
      { "x-goog-api-key": "guess" },
      { "x-goog-api-key": KEY },
      { authorization: `Bearer ${KEY}` },
    ];
    for (const headers of attempts) {
      const r = await fetch(`${proxy.url}/v1beta/models/gemini-2.5-pro:generateContent`, { method: "POST", headers, body: "{}" });
      expect(r.status).toBe(401);
      expect((await r.json()) as unknown).toMatchObject({ error: { code: 401, status: "UNAUTHENTICATED" } });
    }
    for (const p of [
      "/v1beta/models/gemini-2.5-pro:batchGenerateContent",
      "/v1beta/files",
      "/v1beta/cachedContents",
      "/v1beta/models/a/b:generateContent",
      "/v1beta/models/..:generateContent",
      "/v1beta/tunedModels/x:generateContent",
      "/v1/models/gemini-2.5-pro:generateContent",
    ]) {
      const r = await fetch(`${proxy.url}${p}`, { method: "POST", headers: { "x-goog-api-key": token }, body: "{}" });
      expect({ p, status: r.status }).toEqual({ p, status: 404 });
      expect((await r.json()) as unknown).toMatchObject({ error: { code: 404, status: "NOT_FOUND" } });
    }
    expect(server.requests).toEqual([]);
    const count = await fetch(`${proxy.url}/v1beta/models/gemini-2.5-flash:countTokens`, {
      method: "POST",
      headers: { "x-goog-api-key": token },
      body: turn("count me"),
    });
    expect(count.status).toBe(200);
    expect(server.requests.map((r) => r.kind)).toEqual(["count"]);
  });

  it("the runner gives Gemini CLI the proxy's URL and a session token as GEMINI_API_KEY, never the key", async () => {
    const { server } = await serverAndProxy();
    const access = await agentAccess({
      adapter: "gemini",
      isolation: "none",
      env: { PATH: "/usr/bin", GEMINI_API_KEY: "AIza-fromEnv", GOOGLE_API_KEY: "AIza-other", GOOGLE_GEMINI_BASE_URL: server.url },
      geminiApiKey: KEY,
      warn: () => undefined,
    });
    closers.push(() => access.close());
    expect(access.extraEnv.GOOGLE_GEMINI_BASE_URL).toBe(access.proxy!.url);
    const session = access.modelSession!();
    expect(Object.keys(session.env)).toEqual(["GEMINI_API_KEY"]);
    expect(JSON.stringify([access.env, access.extraEnv, session.env])).not.toMatch(/AIza/);
    const r = await fetch(`${access.extraEnv.GOOGLE_GEMINI_BASE_URL}/v1beta/models/gemini-2.5-pro:generateContent`, {
      method: "POST",
      headers: { "x-goog-api-key": session.env.GEMINI_API_KEY! },
      body: turn("hi"),
    });
    expect(r.status).toBe(200);
    expect(server.requests[0]!.headers["x-goog-api-key"]).toBe(KEY);
    session.end();
    const after = await fetch(`${access.extraEnv.GOOGLE_GEMINI_BASE_URL}/v1beta/models/gemini-2.5-pro:generateContent`, {
      method: "POST",
      headers: { "x-goog-api-key": session.env.GEMINI_API_KEY! },
      body: turn("hi"),
    });
    expect(after.status).toBe(401);
  });
});
