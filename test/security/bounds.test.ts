/**
 * Trust I, item 5: bounded input everywhere. What comes from outside — a webhook's body, an issue's
 * or an agent's text, a message that travels to the job — costs Forge time and memory in proportion
 * to a bound it sets, never to what the sender chose.
 */
import { spawn } from "node:child_process";
import { request } from "node:http";
import path from "node:path";
import { sign } from "@octokit/webhooks-methods";
import { afterEach, describe, expect, it } from "vitest";
import { WEBHOOK_BODY_LIMIT } from "../../src/app/webhook-body.js";
import { startHarness, type Harness } from "../app/helpers.js";
import { ADVERSARIAL, MB, type Reader } from "./fixtures/adversarial.js";

const FIXTURES = path.join(import.meta.dirname, "fixtures");

/** Runs the timing fixture in a process of its own, killed after `limitMs`: a super-linear reader never returns. */
async function timeReaders(limitMs: number): Promise<Record<string, number>> {
  const child = spawn(process.execPath, ["--import", import.meta.resolve("tsx"), path.join(FIXTURES, "time-untrusted-text.ts")], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), limitMs);
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  clearTimeout(timer);
  if (code !== 0) {
    const last = err.trim().split("\n").pop();
    throw new Error(`the readers did not finish within ${limitMs / 1000} s (exit ${code}); still reading: ${last}`);
  }
  return JSON.parse(out) as Record<string, number>;
}

/** Milliseconds each reader may take over one megabyte (a super-linear one takes hours). */
const BUDGET_MS: Record<Reader, number> = {
  sanitize: 100,
  sanitizeUncut: 2_000,
  mask: 100,
  frontMatter: 1_000,
  walkthrough: 1_000,
  command: 100,
};

describe("untrusted text is read in time linear in its length", () => {
  it("reads a megabyte of each pattern's worst case within budget: sanitized in under 100 ms", { timeout: 150_000 }, async () => {
    for (const cases of Object.values(ADVERSARIAL)) for (const text of Object.values(cases)) expect(text.length).toBeGreaterThanOrEqual(MB);
    const times = await timeReaders(120_000);
    const slow = Object.entries(times).filter(([key, ms]) => ms > BUDGET_MS[key.split(":")[0] as Reader]);
    expect(slow, `over budget: ${JSON.stringify(slow)}`).toEqual([]);
    expect(Object.keys(times)).toHaveLength(Object.values(ADVERSARIAL).reduce((n, cases) => n + Object.keys(cases).length, 0));
  });
});

// ---------------------------------------------------------------- webhook bodies

let h: Harness | undefined;
afterEach(async () => {
  const done = h;
  h = undefined;
  await done?.close();
}, 60_000);

/** The secret test/app/helpers.ts registers the App's webhook with. */
const SECRET = "forge-webhook-secret";

const webhookHeaders = (event: string, signature: string) => ({
  "content-type": "application/json",
  "x-github-event": event,
  "x-github-delivery": `delivery-${Math.random()}`,
  "x-hub-signature-256": signature,
});

interface Sent {
  status: number | undefined;
  body: string;
  /** Bytes the client managed to write before the server answered or cut the connection. */
  written: number;
  /** The most the test process's resident memory grew by while the body was being sent. */
  peakGrowth: number;
}

/**
 * POSTs `total` bytes to the App's webhook URL, streamed from one reused 64 KiB buffer (the test
 * allocates nothing per chunk), with `Content-Length` when `declare` is set, chunked otherwise.
 * Stops writing as soon as the App answers or cuts the connection.
 */
function stream(url: string, total: number, declare: boolean): Promise<Sent> {
  const chunk = Buffer.alloc(64 * 1024, "x");
  const base = process.memoryUsage().rss;
  let peak = base;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
  return new Promise((resolve) => {
    let written = 0;
    let stopped = false;
    let status: number | undefined;
    let body = "";
    const done = () => {
      if (stopped) return;
      stopped = true;
      clearInterval(sampler);
      peak = Math.max(peak, process.memoryUsage().rss);
      resolve({ status, body, written, peakGrowth: peak - base });
    };
    const req = request(url, {
      method: "POST",
      headers: { ...webhookHeaders("push", "sha256=" + "0".repeat(64)), ...(declare ? { "content-length": String(total) } : {}) },
    });
    req.on("response", (res) => {
      status = res.statusCode;
      res.on("data", (d: Buffer) => (body += d.toString()));
      res.on("end", done);
      res.on("error", done);
    });
    req.on("error", () => setTimeout(done, 50));
    req.on("close", () => setTimeout(done, 50));
    const pump = () => {
      while (!stopped && status === undefined && written < total) {
        const n = Math.min(chunk.length, total - written);
        written += n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return void req.once("drain", pump);
      }
      if (written >= total) req.end();
    };
    pump();
  });
}

describe("a webhook's body is bounded before it is buffered", () => {
  it("refuses a body whose Content-Length is over GitHub's 25 MB cap with 413, before reading it", { timeout: 60_000 }, async () => {
    h = await startHarness(() => ({ kind: "success" }));
    const sent = await stream(h.app.webhookUrl, 400 * 1024 * 1024, true);
    expect(sent.status).toBe(413);
    expect(sent.body).toMatch(/Payload Too Large/);
    // Answered long before the body could have been read: at most what sits in socket buffers was written.
    expect(sent.written).toBeLessThan(WEBHOOK_BODY_LIMIT);
    expect(sent.peakGrowth).toBeLessThan(100 * 1024 * 1024);
  });

  it(
    "refuses a streamed body without a Content-Length once it passes the cap; memory does not grow by the body's size",
    { timeout: 120_000 },
    async () => {
      h = await startHarness(() => ({ kind: "success" }));
      const total = 256 * 1024 * 1024;
      const sent = await stream(h.app.webhookUrl, total, false);
      expect(sent.status).toBe(413);
      // The App stopped taking the body soon after the cap, not at its end.
      expect(sent.written).toBeGreaterThan(WEBHOOK_BODY_LIMIT);
      expect(sent.written).toBeLessThan(total);
      expect(sent.peakGrowth, `resident memory grew by ${(sent.peakGrowth / 2 ** 20).toFixed(0)} MiB`).toBeLessThan(100 * 1024 * 1024);

      // A signed webhook within the cap is still handled.
      const payload = JSON.stringify({ zen: "Keep it logically awesome.", hook_id: 1 });
      const res = await fetch(h.app.webhookUrl, {
        method: "POST",
        headers: webhookHeaders("ping", await sign(SECRET, payload)),
        body: payload,
      });
      expect(res.status).toBe(200);
      expect(h.sim.violations).toEqual([]);
    },
  );
});
