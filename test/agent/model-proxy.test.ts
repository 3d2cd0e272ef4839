// The model API through the runner's proxy: the agent holds a session token and a local URL; the
// model API receives the real key; anything else is refused.
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { agentAccess } from "../../action/src/agent-access.js";
import { startModelProxy, type ModelProxy } from "../../src/agent/model-proxy.js";

const KEY = "sk-ant-realKey0123456789abcdef";
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

async function upstream(): Promise<{ url: string; seen: Array<{ path: string; headers: IncomingHttpHeaders; body: string }> }> {
  const seen: Array<{ path: string; headers: IncomingHttpHeaders; body: string }> = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      seen.push({ path: req.url ?? "", headers: req.headers, body });
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("event: one\ndata: {}\n\n");
      res.end("event: two\ndata: {}\n\n");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  closers.push(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/base`, seen };
}

describe("the model proxy", () => {
  it("puts the real key in place of the session token (x-api-key and Bearer) and streams the answer back", async () => {
    const up = await upstream();
    const proxy: ModelProxy = await startModelProxy({ upstream: up.url, key: KEY });
    closers.push(() => proxy.close());
    const { token } = proxy.openSession();
    expect(token).not.toContain(KEY);
    const a = await fetch(`${proxy.url}/v1/messages`, { method: "POST", headers: { "x-api-key": token }, body: '{"m":1}' });
    expect(await a.text()).toBe("event: one\ndata: {}\n\nevent: two\ndata: {}\n\n");
    const openai = await startModelProxy({ upstream: up.url, key: KEY, api: "openai" });
    closers.push(() => openai.close());
    const b = await fetch(`${openai.url}/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${openai.openSession().token}` },
      body: "{}",
    });
    expect(b.status).toBe(200);
    expect(up.seen.map((s) => s.path)).toEqual(["/base/v1/messages", "/base/responses"]);
    expect(up.seen[0]!.headers["x-api-key"]).toBe(KEY);
    expect(up.seen[0]!.body).toBe('{"m":1}');
    expect(up.seen[1]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(proxy.forwarded() + openai.forwarded()).toBe(2);
  });

  it("refuses a request without the session token, or with another (the key itself included)", async () => {
    const up = await upstream();
    const proxy = await startModelProxy({ upstream: up.url, key: KEY });
    closers.push(() => proxy.close());
    const attempts: Array<Record<string, string>> = [{}, { "x-api-key": "guess" }, { "x-api-key": KEY }, { authorization: "Bearer nope" }];
    for (const headers of attempts) {
      const r = await fetch(`${proxy.url}/v1/messages`, { method: "POST", headers, body: "{}" });
      expect(r.status).toBe(401);
    }
    expect(up.seen).toEqual([]);
  });

  it("the runner gives Claude Code the proxy's URL and token, never the key (from the input or the runner's environment)", async () => {
    const up = await upstream();
    const access = await agentAccess({
      adapter: "claude",
      isolation: "none",
      env: { PATH: "/usr/bin", ANTHROPIC_API_KEY: "sk-ant-fromEnv", ANTHROPIC_BASE_URL: up.url, INPUT_GITHUB_TOKEN: "ghs_x" },
      anthropicApiKey: KEY,
      warn: () => undefined,
    });
    closers.push(() => access.close());
    expect(access.extraEnv.ANTHROPIC_BASE_URL).toBe(access.proxy!.url);
    const session = access.modelSession!();
    expect(Object.keys(session.env)).toEqual(["ANTHROPIC_API_KEY"]);
    expect(JSON.stringify([access.env, access.extraEnv, session.env])).not.toMatch(/sk-ant-|ghs_x/);
    await fetch(`${access.extraEnv.ANTHROPIC_BASE_URL}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": session.env.ANTHROPIC_API_KEY! },
      body: "{}",
    });
    expect(up.seen[0]!.headers["x-api-key"]).toBe(KEY);
  });
});
