// The local GitHub's latency profiles (src/local-github/latency/): sampled delays follow the
// configured medians and p95s and are the same for the same seed; under the "github" profile a
// REST call, a webhook delivery and a job's start are delayed, and without a profile they are not —
// on the local GitHub's clock, a test clock here, which skips the delays instead of waiting them out.
import { Octokit } from "@octokit/rest";
import { afterEach, describe, expect, it } from "vitest";
import {
  GITHUB_PROFILE,
  LATENCY_CLASSES,
  Latency,
  type LatencyClass,
  type LatencySettings,
} from "../../src/local-github/latency/profile.js";
import { createSim, type Sim } from "../../src/local-github/server.js";
import { TestClock } from "../helpers/clock.js";
import { appKeys, startReceiver, type Receiver, type ReceivedHook } from "./support/helpers.js";

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(q * (s.length - 1))]!;
}

describe("latency profile: sampling", () => {
  it("draws each class around its configured median and p95", () => {
    const latency = new Latency({ profile: "github", seed: 1 });
    for (const cls of LATENCY_CLASSES) {
      // A class with a tail is a mixture: its figures are the next test's.
      if (GITHUB_PROFILE[cls].tail) continue;
      const xs = Array.from({ length: 20_000 }, () => latency.sample(cls));
      const { medianMs, p95Ms } = GITHUB_PROFILE[cls];
      expect(quantile(xs, 0.5) / medianMs, `${cls} median`).toBeGreaterThan(0.95);
      expect(quantile(xs, 0.5) / medianMs, `${cls} median`).toBeLessThan(1.05);
      expect(quantile(xs, 0.95) / p95Ms, `${cls} p95`).toBeGreaterThan(0.93);
      expect(quantile(xs, 0.95) / p95Ms, `${cls} p95`).toBeLessThan(1.07);
      expect(Math.max(...xs), `${cls} cut at 4 × p95`).toBeLessThanOrEqual(4 * p95Ms);
      expect(Math.min(...xs), cls).toBeGreaterThan(0);
    }
  });

  it("delays webhooks as measured: p50 2 s, p90 3 s, p95 about a minute, p99 about two, none past 160 s (latency/README.md)", () => {
    for (const seed of [1, 2, 3]) {
      const latency = new Latency({ profile: "github", seed });
      const xs = Array.from({ length: 50_000 }, () => latency.sample("webhook"));
      expect(quantile(xs, 0.5), "p50").toBeGreaterThan(1_900);
      expect(quantile(xs, 0.5), "p50").toBeLessThan(2_100);
      expect(quantile(xs, 0.9), "p90").toBeLessThan(3_300);
      expect(quantile(xs, 0.95), "p95").toBeGreaterThan(45_000);
      expect(quantile(xs, 0.95), "p95").toBeLessThan(75_000);
      expect(quantile(xs, 0.99), "p99").toBeGreaterThan(100_000);
      expect(quantile(xs, 0.99), "p99").toBeLessThan(140_000);
      // The tail reaches 150 s and stops at 160 s.
      expect(Math.max(...xs)).toBe(160_000);
      expect(xs.filter((x) => x >= 150_000).length).toBeGreaterThan(0);
      // About one delivery in eighteen is a minute-scale one; the mean stays in single seconds.
      const late = xs.filter((x) => x > 10_000).length / xs.length;
      expect(late).toBeGreaterThan(0.045);
      expect(late).toBeLessThan(0.065);
      expect(xs.reduce((a, b) => a + b, 0) / xs.length).toBeLessThan(8_000);
    }
  });

  it("gives the same delays for the same seed, per class whatever the other classes drew", () => {
    const a = new Latency({ profile: "github", seed: 7 });
    const b = new Latency({ profile: "github", seed: 7 });
    const c = new Latency({ profile: "github", seed: 8 });
    const draw = (l: Latency, cls: LatencyClass) => Array.from({ length: 50 }, () => l.sample(cls));
    // b draws webhooks first: a's and b's REST reads are still the same.
    const bHooks = draw(b, "webhook");
    expect(draw(a, "restRead")).toEqual(draw(b, "restRead"));
    expect(draw(a, "webhook")).toEqual(bHooks);
    expect(draw(c, "restRead")).not.toEqual(draw(new Latency({ profile: "github", seed: 7 }), "restRead"));
    // Setting the profile again starts the streams over.
    a.set({ profile: "github", seed: 7 });
    expect(draw(a, "merge")).toEqual(draw(new Latency({ profile: "github", seed: 7 }), "merge"));
  });

  it("is off by default and with none; the runner queue can be set apart", () => {
    for (const l of [new Latency(), new Latency("none"), new Latency({ profile: "none", seed: 3 })]) {
      expect(l.enabled).toBe(false);
      for (const cls of LATENCY_CLASSES) expect(l.sample(cls)).toBe(0);
    }
    const queueOnly = new Latency({ runnerQueue: { medianMs: 250, p95Ms: 250 } });
    expect(queueOnly.sample("runnerQueue")).toBe(250);
    expect(queueOnly.sample("restRead")).toBe(0);
    const noQueue = new Latency({ profile: "github", runnerQueue: 0 });
    expect(noQueue.sample("runnerQueue")).toBe(0);
    expect(noQueue.sample("restRead")).toBeGreaterThan(0);
    expect(() => new Latency({ profile: "fast" as never })).toThrow(/none or github/);
  });
});

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((o) => o.close()));
});

const NOOP = `name: noop
on: workflow_dispatch
jobs:
  noop:
    runs-on: ubuntu-latest
    steps:
      - run: "true"
`;

/**
 * The local GitHub on a test clock, an App's receiver and an installation's Octokit. `skipping`
 * awaits a call or a delivery while letting the clock skip ahead whenever nothing goes on but waits
 * for it: every request of the test's own is at the local GitHub waiting out its delay, no webhook is
 * being sent (a request still on its way counts as going on).
 */
async function setup(): Promise<{
  sim: Sim;
  gh: Octokit;
  receiver: Receiver;
  clock: TestClock;
  skipping<T>(work: Promise<T>): Promise<T>;
}> {
  const clock = new TestClock();
  const sim = await createSim({ workflowExecutor: "noop", clock });
  const receiver = await startReceiver("l");
  open.push(sim, receiver);
  await sim.control.createRepo({ owner: "acme", name: "r", files: { ".github/workflows/noop.yml": NOOP } });
  const app = sim.control.registerApp({
    slug: "forge-latency",
    publicKeyPem: appKeys().publicKeyPem,
    webhookUrl: receiver.url,
    webhookSecret: "l",
    permissions: { issues: "write", actions: "write" },
    events: ["issues", "workflow_job"],
  });
  const installationId = sim.control.install(app.id, "acme", "all").id;
  const gh = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.installationToken(installationId), request: { retries: 0 } });
  let calls = 0;
  gh.hook.wrap("request", async (request, o) => {
    calls++;
    try {
      return await request(o);
    } finally {
      calls--;
    }
  });
  const skipping = <T>(work: Promise<T>) => clock.whileWaiting(work, () => calls <= sim.core.latency.asleep && sim.quiet());
  // A first issue compiles the schemas of the calls and webhooks measured below.
  await gh.rest.issues.create({ owner: "acme", repo: "r", title: "warm-up" });
  await sim.idle();
  receiver.received.length = 0;
  return { sim, gh, receiver, clock, skipping };
}

/** Opens an issue: how long the call took, and how long after its answer the `issues.opened` webhook arrived (the clock's ms). */
async function openIssue({
  gh,
  receiver,
  clock,
  skipping,
}: Awaited<ReturnType<typeof setup>>): Promise<{ callMs: number; deliveryMs: number }> {
  const t0 = clock.now();
  const { data } = await skipping(gh.rest.issues.create({ owner: "acme", repo: "r", title: "slow" }));
  const t1 = clock.now();
  await skipping(
    receiver.waitFor(
      (h) => h.event === "issues" && h.action === "opened" && (h.payload.issue as { number: number }).number === data.number,
      60_000,
    ),
  );
  return { callMs: t1 - t0, deliveryMs: clock.now() - t1 };
}

/**
 * A seed of the "github" profile whose first REST write and first webhook delay are both long
 * enough to tell from the local GitHub's own time, and the delays it gives (computed, not guessed).
 */
function seedWithVisibleDelays(): { seed: number; restWriteMs: number; webhookMs: number } {
  for (let seed = 1; ; seed++) {
    const l = new Latency({ profile: "github", seed });
    const restWriteMs = l.sample("restWrite");
    const webhookMs = l.sample("webhook");
    if (restWriteMs >= 700 && webhookMs >= 1_500 && webhookMs <= 4_000) return { seed, restWriteMs, webhookMs };
  }
}

describe("latency profile: the local GitHub", () => {
  it("delays a REST call and its webhook delivery under the github profile, and not without it", async () => {
    const { seed, restWriteMs, webhookMs } = seedWithVisibleDelays();

    const plain = await setup();
    const fast = await openIssue(plain);
    expect(fast).toEqual({ callMs: 0, deliveryMs: 0 });
    expect(plain.sim.core.latency.drawn.restWrite.count).toBe(0);

    const slow = await setup();
    // Set once the setup is done, so the issue's call and delivery are the streams' first draws.
    slow.sim.core.latency.set({ profile: "github", seed });
    const delayed = await openIssue(slow);
    expect(delayed.callMs).toBe(restWriteMs);
    // The delay counts from the event, which happened as the call was answered.
    expect(delayed.deliveryMs).toBe(webhookMs);
    expect(slow.sim.core.latency.drawn.restWrite).toEqual({ count: 1, totalMs: restWriteMs });
    expect(slow.sim.core.latency.drawn.webhook).toEqual({ count: 1, totalMs: webhookMs });
    expect(slow.sim.violations).toEqual([]);
  }, 60_000);

  it("sends each delivery at its own delay: a slow one holds back no later one (GitHub guarantees no order), and a minute-scale one costs no real time", async () => {
    // A seed whose first webhook delay is from the tail (a minute or more) and second short, with the
    // second issue's call short enough that its delivery is due well before the first's.
    let seed = 1;
    let w1 = 0;
    for (; ; seed++) {
      const l = new Latency({ profile: "github", seed });
      const [a, w2] = [l.sample("webhook"), l.sample("webhook")];
      const [, r2] = [l.sample("restWrite"), l.sample("restWrite")];
      w1 = a;
      if (w1 >= 60_000 && w2 + r2 + 1_500 <= w1) break;
    }
    const { sim, gh, receiver, clock, skipping } = await setup();
    const realStart = Date.now();
    const clockStart = clock.now();
    sim.core.latency.set({ profile: "github", seed });
    const a = (await skipping(gh.rest.issues.create({ owner: "acme", repo: "r", title: "slow delivery" }))).data.number;
    const b = (await skipping(gh.rest.issues.create({ owner: "acme", repo: "r", title: "quick delivery" }))).data.number;
    const opened = (n: number) => (h: ReceivedHook) =>
      h.event === "issues" && h.action === "opened" && (h.payload.issue as { number: number }).number === n;
    await skipping(receiver.waitFor(opened(a), 60_000));
    const order = receiver.received
      .filter((h) => h.event === "issues" && h.action === "opened")
      .map((h) => (h.payload.issue as { number: number }).number);
    expect(order).toEqual([b, a]);
    // The slow delivery waited its minute or more on the test clock, and seconds at most in real time.
    expect(clock.now() - clockStart).toBeGreaterThanOrEqual(w1);
    expect(Date.now() - realStart).toBeLessThan(w1 / 4);
    expect(sim.violations).toEqual([]);
  }, 60_000);

  it("holds a dispatched job until the runner queue time has passed", async () => {
    const settings: LatencySettings = { runnerQueue: { medianMs: 800, p95Ms: 800 } };
    for (const queued of [false, true]) {
      const { sim, gh, receiver, clock, skipping } = await setup();
      if (queued) sim.core.latency.set(settings);
      const t0 = clock.now();
      await skipping(gh.rest.actions.createWorkflowDispatch({ owner: "acme", repo: "r", workflow_id: "noop.yml", ref: "main" }));
      await skipping(receiver.waitFor((h) => h.event === "workflow_job" && h.action === "in_progress", 30_000));
      const startedMs = clock.now() - t0;
      expect(startedMs).toBe(queued ? 800 : 0);
      await sim.idle();
    }
  }, 60_000);
});
