// The runner's model proxy is the budget's gate (docs/runner.md#budgets): an agent that holds its
// session token tries to spend without being counted — an answer compressed (Node's fetch and
// Claude Code ask for gzip, br, zstd), the Batches API and other paths the key opens, calls past the
// attempt's cap, the token kept after its session. Each against a real upstream on 127.0.0.1.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { SpendMeter } from "../../action/src/task/spend.js";
import { startModelProxy, type ModelProxy } from "../../src/agent/model-proxy.js";
import { spawnAgent } from "../../src/agent/spawn/index.js";
import { makeWorld, testConfig } from "../action/world.js";
import { commandAgent, runJob } from "../action/job.js";

const KEY = "sk-ant-realKey0123456789abcdef";
const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

const MESSAGE = {
  type: "message",
  model: "claude-x",
  content: [{ type: "text", text: "hi" }],
  usage: { input_tokens: 1200, output_tokens: 300 },
};
const SSE = [
  `event: message_start\ndata: ${JSON.stringify({ type: "message_start", message: { model: "claude-x", usage: { input_tokens: 1000, output_tokens: 1 } } })}\n\n`,
  `event: message_delta\ndata: ${JSON.stringify({ type: "message_delta", usage: { output_tokens: 500 } })}\n\n`,
  `event: message_stop\ndata: {"type":"message_stop"}\n\n`,
].join("");

type Seen = { method: string; path: string; headers: IncomingHttpHeaders };
/** The model API: gzip when the request accepts it (as api.anthropic.com does), or always (`encode: "always"`), or zstd. */
async function upstream(encode: "accepted" | "always" | "zstd" = "accepted"): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      seen.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers });
      const stream = (req.url ?? "").includes("stream");
      const body = Buffer.from(stream ? SSE : JSON.stringify(MESSAGE));
      const type = stream ? "text/event-stream" : "application/json";
      const gzip = encode === "always" || (encode === "accepted" && /gzip/.test(String(req.headers["accept-encoding"] ?? "")));
      if (encode === "zstd") res.writeHead(200, { "content-type": type, "content-encoding": "zstd" }).end(body);
      else if (gzip) res.writeHead(200, { "content-type": type, "content-encoding": "gzip" }).end(gzipSync(body));
      else res.writeHead(200, { "content-type": type }).end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  closers.push(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

async function proxyTo(url: string, api: "anthropic" | "openai" | "chat" = "anthropic"): Promise<ModelProxy> {
  const proxy = await startModelProxy({ upstream: url, key: KEY, api });
  closers.push(() => proxy.close());
  return proxy;
}

const post = (proxy: ModelProxy, token: string, p: string, headers: Record<string, string> = {}) =>
  fetch(`${proxy.url}${p}`, {
    method: "POST",
    headers: { "x-api-key": token, "content-type": "application/json", ...headers },
    body: "{}",
  });

describe("the model proxy meters every answer, whatever its encoding", () => {
  it("counts a gzip answer: asked for by the agent (fetch's default), or sent by a server that encodes anyway", async () => {
    for (const encode of ["accepted", "always"] as const) {
      const up = await upstream(encode);
      const proxy = await proxyTo(up.url);
      const { token } = proxy.openSession();
      const a = await post(proxy, token, "/v1/messages");
      expect((await a.json()) as unknown).toEqual(MESSAGE);
      const b = await post(proxy, token, "/v1/messages?stream=1", { "accept-encoding": "gzip, deflate, br, zstd" });
      expect(await b.text()).toBe(SSE);
      const u = proxy.usage();
      expect({ encode, requests: u.requests, input: u.inputTokens, output: u.outputTokens }).toEqual({
        encode,
        requests: 2,
        input: 2200,
        output: 800,
      });
    }
  });

  it("refuses an answer in an encoding it cannot read (it never reaches the agent unmetered)", async () => {
    const up = await upstream("zstd");
    const proxy = await proxyTo(up.url);
    const r = await post(proxy, proxy.openSession().token, "/v1/messages");
    expect(r.status).toBe(502);
    expect(((await r.json()) as { error: { message: string } }).error.message).toMatch(/encoding the proxy cannot meter \(zstd\)/);
  });
});

describe("the model proxy forwards only the endpoints a session needs", () => {
  it("refuses the Batches API, files, models and unknown paths with a JSON error: nothing reaches the model API with the key", async () => {
    const up = await upstream();
    const proxy = await proxyTo(up.url);
    const { token } = proxy.openSession();
    const tries: Array<[string, string]> = [
      ["POST", "/v1/messages/batches"],
      ["GET", "/v1/messages/batches/msgbatch_1/results"],
      ["POST", "/v1/messages/../messages/batches"],
      ["POST", "/v1/messages/%2e%2e/messages/batches"],
      ["POST", "//evil.example/v1/messages"],
      ["POST", "/v1/files"],
      ["GET", "/v1/models"],
      ["GET", "/v1/messages"],
      ["POST", "/v1/organizations/api_keys"],
      ["POST", "/anything"],
    ];
    for (const [method, p] of tries) {
      const r = await fetch(`${proxy.url}${p}`, { method, headers: { "x-api-key": token }, ...(method === "POST" ? { body: "{}" } : {}) });
      expect({ method, p, status: r.status }).toEqual({ method, p, status: 404 });
      const body = (await r.json()) as { type: string; error: { type: string; message: string } };
      expect(body).toMatchObject({ type: "error", error: { type: "not_found_error" } });
      expect(body.error.message).toMatch(/serves only POST \/v1\/messages/);
    }
    expect(up.seen).toEqual([]);
    // What a session needs still goes through (Claude Code's query string kept).
    expect((await post(proxy, token, "/v1/messages?beta=true")).status).toBe(200);
    expect((await post(proxy, token, "/v1/messages/count_tokens")).status).toBe(200);
    expect(up.seen.map((s) => `${s.method} ${s.path}`)).toEqual(["POST /v1/messages?beta=true", "POST /v1/messages/count_tokens"]);
    expect(up.seen.every((s) => s.headers["x-api-key"] === KEY && s.headers["accept-encoding"] === "identity")).toBe(true);
  });

  it("for Codex: the Responses API and the model list only, in OpenAI's error shape otherwise", async () => {
    const up = await upstream();
    const proxy = await proxyTo(`${up.url}/v1`, "openai");
    const auth = { authorization: `Bearer ${proxy.openSession().token}` };
    for (const p of ["/batches", "/files", "/chat/completions", "/v1/responses", "/responses/resp_1"]) {
      const r = await fetch(`${proxy.url}${p}`, { method: "POST", headers: auth, body: "{}" });
      expect({ p, status: r.status }).toEqual({ p, status: 404 });
      expect((await r.json()) as unknown).toMatchObject({ error: { type: "not_found_error" } });
    }
    expect(up.seen).toEqual([]);
    expect((await fetch(`${proxy.url}/responses`, { method: "POST", headers: auth, body: "{}" })).status).toBe(200);
    expect((await fetch(`${proxy.url}/models`, { headers: auth })).status).toBe(200);
    expect(up.seen.map((s) => `${s.method} ${s.path}`)).toEqual(["POST /v1/responses", "GET /v1/models"]);
  });
});

describe("the model proxy for opencode and Qwen Code", () => {
  it("serves Chat Completions and the model list only: Codex's Responses API is refused too", async () => {
    const up = await upstream();
    const proxy = await proxyTo(`${up.url}/v1`, "chat");
    const auth = { authorization: `Bearer ${proxy.openSession().token}` };
    for (const p of ["/responses", "/responses/compact", "/batches", "/completions", "/v1/chat/completions"]) {
      const r = await fetch(`${proxy.url}${p}`, { method: "POST", headers: auth, body: "{}" });
      expect({ p, status: r.status }).toEqual({ p, status: 404 });
      expect((await r.json()) as unknown).toMatchObject({ error: { type: "not_found_error" } });
    }
    expect(up.seen).toEqual([]);
    expect((await fetch(`${proxy.url}/chat/completions`, { method: "POST", headers: auth, body: "{}" })).status).toBe(200);
    expect(up.seen.map((s) => `${s.method} ${s.path}`)).toEqual(["POST /v1/chat/completions"]);
  });
});

describe("the model proxy refuses calls once the attempt's cap is reached", () => {
  it("answers an Anthropic-shaped 400 (not a rate limit: nothing retries) and sends nothing upstream", async () => {
    const up = await upstream();
    const proxy = await proxyTo(up.url);
    const dir = mkdtempSync(path.join(tmpdir(), "forge-proxy-cap-"));
    closers.push(() => rmSync(dir, { recursive: true, force: true }));
    // The runner's meter, reading the proxy: 1,500 tokens per answer against a cap of 2,000.
    const meter = new SpendMeter(path.join(dir, "spend.json"), {}, undefined, proxy.usage);
    proxy.gate(() => meter.refusal({ tokens: 2_000 }));
    const { token } = proxy.openSession();
    expect((await post(proxy, token, "/v1/messages")).status).toBe(200);
    expect((await post(proxy, token, "/v1/messages")).status).toBe(200);
    const refused = await post(proxy, token, "/v1/messages");
    expect(refused.status).toBe(400);
    const body = (await refused.json()) as { type: string; error: { type: string; message: string } };
    expect(body).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    expect(body.error.message).toMatch(/budget is spent \(3000 of 2000 tokens\)/);
    expect(body.error.message).not.toMatch(/rate.?limit|429|usage limit|quota/i);
    expect(up.seen).toHaveLength(2);
  });

  it("the task job gives the proxy the attempt's cap: past it, the gate refuses", async () => {
    const w = makeWorld();
    closers.push(() => w.cleanup());
    const up = await upstream();
    const proxy = await proxyTo(up.url);
    // The agent reports $0.60 of spend and waits; the runner stops it past the $0.50 cap.
    const script = `printf '{"cost_usd": 0.6}' > "$FORGE_SPEND_FILE"; sleep 1`;
    await runJob(w, commandAgent(w, script), {
      config: testConfig({ heartbeat_interval_seconds: 0.2, stale_threshold_seconds: 5 }),
      input: { context: { budget: { usd: 0.5 } } },
      deps: { modelUsage: proxy.usage, modelGate: proxy.gate },
    });
    const r = await post(proxy, proxy.openSession().token, "/v1/messages");
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: { message: string } }).error.message).toMatch(/budget is spent \(\$0\.60 of \$0\.50\)/);
    expect(up.seen).toEqual([]);
  });
});

describe("the session token dies with the session", () => {
  it("a token kept by the agent is refused (401) once its session ended, and every token once the proxy closed", async () => {
    const up = await upstream();
    const proxy = await proxyTo(up.url);
    const dir = mkdtempSync(path.join(tmpdir(), "forge-proxy-session-"));
    closers.push(() => rmSync(dir, { recursive: true, force: true }));
    // An agent session (the runner's spawn with the proxy's per-session credentials) calls the model
    // and writes its token down for later.
    const kept = path.join(dir, "kept-token");
    const script = `require("node:fs").writeFileSync(${JSON.stringify(kept)}, process.env.ANTHROPIC_API_KEY);
      fetch(process.env.ANTHROPIC_BASE_URL + "/v1/messages", { method: "POST", headers: { "x-api-key": process.env.ANTHROPIC_API_KEY }, body: "{}" })
        .then((r) => console.log("STATUS=" + r.status + "\\nFORGE_EXIT=0"));`;
    const session = () => ({
      adapter: "command" as const,
      command: process.execPath,
      args: ["-e", script],
      prompt: "call the model",
      cwd: dir,
      sessionDir: path.join(dir, `session-${Math.random()}`),
      env: { PATH: process.env.PATH },
      extraEnv: { ANTHROPIC_BASE_URL: proxy.url },
      modelSession: () => {
        const s = proxy.openSession();
        return { env: { ANTHROPIC_API_KEY: s.token }, end: s.end };
      },
      forgeCli: false as const,
    });
    const first = await spawnAgent(session());
    expect(first.exitCode).toBe(0);
    expect(readFileSync(first.transcriptPath, "utf8")).toContain("STATUS=200");
    const token = readFileSync(kept, "utf8");
    expect(token).toMatch(/^forge-session-/);
    // After the session: refused, in the API's shape, and nothing goes upstream.
    const after = await post(proxy, token, "/v1/messages");
    expect(after.status).toBe(401);
    expect((await after.json()) as unknown).toMatchObject({ type: "error", error: { type: "authentication_error" } });
    // The next session has a token of its own; the first stays dead.
    expect((await spawnAgent(session())).exitCode).toBe(0);
    expect(readFileSync(kept, "utf8")).not.toBe(token);
    expect((await post(proxy, token, "/v1/messages")).status).toBe(401);
    expect(up.seen).toHaveLength(2);
    // A session still open when the proxy closes: its token dies with the proxy.
    const open = proxy.openSession();
    expect((await post(proxy, open.token, "/v1/messages")).status).toBe(200);
    await proxy.close();
    await expect(post(proxy, open.token, "/v1/messages")).rejects.toThrow();
  });
});
