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
import { resolveDispatchContext } from "../../action/src/dispatch-context.js";
import type { JobGitHub } from "../../action/src/github.js";
import { dispatchContextSchema } from "../../action/src/inputs.js";
import { BodyBudget, WEBHOOK_BODY_LIMIT, WEBHOOK_BUFFER_DEFAULT } from "../../src/app/webhook-body.js";
import { DISPATCH_LIMITS, splitDispatchContext } from "../../src/core/dispatch-inputs.js";
import type { Journal } from "../../src/core/journal.js";
import { stateBranch } from "../../src/core/layout.js";
import { FULL, OWNER, REPO, startHarness, type Harness } from "../app/helpers.js";
import type { Script } from "../app/scripted-runner.js";
import { planFiles } from "../helpers/plan-files.js";
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
  /** The answer's Retry-After header. */
  retryAfter?: string | undefined;
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
    let retryAfter: string | undefined;
    let body = "";
    const done = () => {
      if (stopped) return;
      stopped = true;
      clearInterval(sampler);
      peak = Math.max(peak, process.memoryUsage().rss);
      resolve({ status, body, retryAfter, written, peakGrowth: peak - base });
    };
    const req = request(url, {
      method: "POST",
      headers: { ...webhookHeaders("push", "sha256=" + "0".repeat(64)), ...(declare ? { "content-length": String(total) } : {}) },
    });
    req.on("response", (res) => {
      status = res.statusCode;
      retryAfter = res.headers["retry-after"];
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

describe("the webhook bodies in flight together are bounded", () => {
  it(
    "20 concurrent unsigned bodies just under the cap: what is held stays under the server's budget, the excess gets 503 with Retry-After",
    { timeout: 180_000 },
    async () => {
      h = await startHarness(() => ({ kind: "success" }));
      const each = 25_000_000;
      // Half declare their length, half stream it chunked; none carries a valid signature.
      const sent = await Promise.all(Array.from({ length: 20 }, (_, i) => stream(h!.app.webhookUrl, each, i % 2 === 0)));
      const busy = sent.filter((s) => s.status === 503);
      expect(busy.length, JSON.stringify(sent.map((s) => s.status))).toBeGreaterThan(0);
      for (const s of busy) expect(s.retryAfter).toMatch(/^\d+$/);
      // Those that fit were read and refused for their signature; a streamed body refused mid-way
      // may see its connection cut before it reads the 503.
      for (const s of sent) expect([400, 503, undefined], JSON.stringify(s.status)).toContain(s.status);
      const growth = Math.max(...sent.map((s) => s.peakGrowth));
      expect(growth, `resident memory grew by ${(growth / 2 ** 20).toFixed(0)} MiB`).toBeLessThan(4 * WEBHOOK_BUFFER_DEFAULT);
      // What the server held at once never passed its budget.
      const budget = h.app.webhookBodies;
      expect(budget.limit).toBe(WEBHOOK_BUFFER_DEFAULT);
      expect(budget.peak).toBeLessThanOrEqual(budget.limit);
      expect(budget.peak).toBeGreaterThan(0);
      // Everything is given back: a signed webhook is handled afterwards.
      expect(budget.used).toBe(0);
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

  it("a budget takes what fits and is given back what a finished request held", () => {
    const budget = new BodyBudget(10);
    expect(budget.take(6)).toBe(true);
    expect(budget.take(6)).toBe(false);
    budget.give(6);
    expect(budget.take(10)).toBe(true);
    expect(budget.peak).toBe(10);
  });
});

// ---------------------------------------------------------------- dispatch inputs

const task = (j: Journal, id: string) => j.tasks.find((t) => t.id === id)!;
const NO_BACKOFF = "retry_backoff: { base_seconds: 0, max_seconds: 0 }\n";

/** A long text JSON lengthens: quotes, backslashes and control characters are escaped. */
const longText = (n: number) => `Fix the parser.\n${'Quote "this", C:\\path, bell \u0007. '.repeat(Math.ceil(n / 36))}`.slice(0, n);

/** The job's view of the repository (what the action's port reads), over the user's token on the local GitHub. */
function jobGitHub(g: Harness): JobGitHub {
  return {
    async readFile(path: string, ref: string) {
      try {
        const { data } = await g.user.rest.repos.getContent({ owner: OWNER, repo: REPO, path, ref });
        return Buffer.from((data as { content: string }).content, "base64").toString("utf8");
      } catch {
        return undefined;
      }
    },
  } as unknown as JobGitHub;
}

/** The inputs of an attempt's dispatch, checked against GitHub's limits, and its context as the job resolves it. */
async function dispatchedContext(g: Harness, runId: string, taskId: string, attempt: number) {
  const inputs = g.runner.inputs.get(`${runId}/${taskId}/${attempt}`);
  expect(inputs, `no dispatch of ${taskId} attempt ${attempt}`).toBeDefined();
  expect(JSON.stringify(inputs).length).toBeLessThanOrEqual(DISPATCH_LIMITS.characters);
  expect(Object.keys(inputs!).length).toBeLessThanOrEqual(DISPATCH_LIMITS.inputs);
  const context = dispatchContextSchema.parse(JSON.parse(inputs!.context!));
  return { context, resolved: await resolveDispatchContext(context, runId, jobGitHub(g)) };
}

describe("dispatch inputs stay within GitHub's limits", () => {
  it("moves only what does not fit: a short context stays inline, a long one's largest fields go to the file", () => {
    const base = { run_id: "r1", task_id: "a", attempt: "2" };
    const short = { refinement: "Add a test.", conflicts: ["forge/r1/b/1"] };
    expect(splitDispatchContext(base, short, "dispatch/a/2.json")).toEqual({ inline: short });
    const long = { refinement: longText(70_000), answer: "Yes.", conflicts: ["forge/r1/b/1"] };
    expect(splitDispatchContext(base, long, "dispatch/a/2.json")).toEqual({
      inline: { answer: "Yes.", conflicts: ["forge/r1/b/1"] },
      spilled: { refinement: long.refinement },
    });
  });

  it("the local GitHub refuses a dispatch over 25 inputs or 65,535 characters of inputs, as GitHub does", { timeout: 60_000 }, async () => {
    h = await startHarness(() => ({ kind: "never_start" }));
    const dispatch = (inputs: Record<string, string>) =>
      h!.user.rest.actions.createWorkflowDispatch({ owner: OWNER, repo: REPO, workflow_id: "forge-agent.yml", ref: "main", inputs }).then(
        () => 204,
        (e: { status: number; message: string }) => ({ status: e.status, message: e.message }),
      );
    const many = Object.fromEntries(Array.from({ length: 26 }, (_, i) => [`input_${i}`, "x"]));
    expect(await dispatch(many)).toMatchObject({
      status: 422,
      message: expect.stringMatching(/inputs must NOT have more than 25 properties/),
    });
    const long = { run_id: "r", task_id: "a", attempt: "1", context: "x".repeat(DISPATCH_LIMITS.characters) };
    expect(await dispatch(long)).toMatchObject({ status: 422, message: expect.stringMatching(/inputs are too large/) });
    expect(await dispatch({ run_id: "r", task_id: "a", attempt: "1", context: "x".repeat(60_000) })).toBe(204);
    expect(h.runner.dispatched).toEqual(["r/a/1"]);
  });

  it(
    "a refinement longer than the limit reaches the next attempt by reference: a file on the state branch",
    { timeout: 120_000 },
    async () => {
      const refinement = longText(100_000);
      h = await startHarness(
        (id, attempt): Script =>
          attempt === 1 ? { kind: "exit", code: 10, error: "the quality gate failed", refinement } : { kind: "success" },
        { config: NO_BACKOFF },
      );
      await h.pushFiles(planFiles("mini", { a: [], b: ["a"] }), "Add plan");
      // Every later dispatch of the task goes through: the run completes.
      const j = await h.waitFor((x) => x.status === "completed");
      expect(task(j, "a").attempts).toBe(2);
      const { context, resolved } = await dispatchedContext(h, j.runId, "a", 2);
      expect(context.refinement).toBeUndefined();
      expect(context.file).toEqual({ path: "dispatch/a/2.json", sha: expect.stringMatching(/^[0-9a-f]{40}$/) });
      expect(resolved.refinement).toBe(refinement);
      expect(resolved.file).toBeUndefined();
      // The file is the run's, on its state branch.
      const { data } = await h.user.rest.repos.getContent({
        owner: OWNER,
        repo: REPO,
        path: context.file!.path,
        ref: stateBranch(j.runId),
      });
      expect((data as { sha: string }).sha).toBe(context.file!.sha);
      expect(h.sim.violations).toEqual([]);
    },
  );

  it("a /forge retry message that JSON makes longer than the limit reaches the next attempt whole", { timeout: 120_000 }, async () => {
    h = await startHarness(
      (id, attempt): Script => (attempt === 1 ? { kind: "exit", code: 3, question: "Which database?" } : { kind: "success" }),
      { config: NO_BACKOFF },
    );
    await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
    const asked = await h.waitFor((x) => task(x, "a").attempt?.hold === "human");
    const { data: trackers } = await h.user.rest.issues.listForRepo({ owner: OWNER, repo: REPO, labels: "forge:run", state: "all" });
    // Within GitHub's 65,536 characters of a comment, but over the dispatch limit once escaped.
    const answer = `Use PostgreSQL 16.\n${"\u0007".repeat(60_000)}`;
    expect(JSON.stringify(answer).length).toBeGreaterThan(DISPATCH_LIMITS.characters);
    await h.sim.control.comment("octocat", FULL, trackers[0]!.number, `/forge retry a ${answer}`);
    const j = await h.waitFor((x) => x.status === "completed");
    const { resolved } = await dispatchedContext(h, asked.runId, "a", 2);
    expect(resolved.answer).toBe(answer);
    expect(task(j, "a").attempts).toBe(2);
  });

  it(
    "/forge plan cuts an issue's text to fit the dispatch, saying so (a plan Captain has no state branch)",
    { timeout: 60_000 },
    async () => {
      h = await startHarness(() => ({ kind: "never_start" }));
      // 20,000 control characters: JSON spells each as six.
      const { data: issue } = await h.user.rest.issues.create({
        owner: OWNER,
        repo: REPO,
        title: "Plan this",
        body: "\u0007".repeat(20_000),
      });
      await h.sim.control.comment("octocat", FULL, issue.number, "/forge plan");
      for (let i = 0; i < 100 && !h.runner.dispatched.length; i++) {
        await h.app.forge.idle();
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(h.runner.dispatched).toEqual([`_plan-${issue.number}/_captain-plan-${issue.number}/1`]);
      const inputs = h.runner.inputs.get(h.runner.dispatched[0]!)!;
      expect(JSON.stringify(inputs).length).toBeLessThanOrEqual(DISPATCH_LIMITS.characters);
      const context = dispatchContextSchema.parse(JSON.parse(inputs.context!));
      expect(context.body).toMatch(/\[… cut at \d+ of 20000 characters to fit GitHub's limit on dispatch inputs\]$/);
      expect(context).toMatchObject({ issue: issue.number, title: "Plan this" });
    },
  );
});
