// Injected faults are seeded and reproducible: the same seed and the same calls give the same
// faults. API faults: 5xx and secondary rate limits (403/429 with retry-after). Webhook faults:
// drop, duplicate (same delivery GUID), reorder within a window, delay, App endpoint unreachable;
// failed deliveries are recorded and redelivered with the same GUID.
import { Octokit } from "@octokit/rest";
import { afterEach, describe, expect, it } from "vitest";
import { createSim, type Sim } from "../../src/local-github/server.js";
import type { FaultConfig } from "../../src/local-github/faults.js";
import { appKeys, startReceiver, type Receiver } from "./support/helpers.js";
import { settleWhen, TestClock } from "../helpers/clock.js";

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((o) => o.close()));
});

async function setup(
  faults: Partial<FaultConfig> = {},
  clock?: TestClock,
): Promise<{ sim: Sim; gh: Octokit; receiver: Receiver; installationId: number }> {
  const sim = await createSim({ faults, ...(clock ? { clock } : {}) });
  const receiver = await startReceiver("f");
  open.push(sim, receiver);
  await sim.control.createRepo({ owner: "acme", name: "r", files: { "a.txt": "a\n" } });
  const app = sim.control.registerApp({
    slug: "forge-faults",
    publicKeyPem: appKeys().publicKeyPem,
    webhookUrl: receiver.url,
    webhookSecret: "f",
    permissions: { issues: "write", contents: "write" },
    events: ["issues", "issue_comment", "push"],
  });
  const installationId = sim.control.install(app.id, "acme", "all").id;
  // On a test clock, delayed deliveries wait for it: it skips ahead while they are all that is left.
  await (clock ? clock.whileWaiting(sim.idle(), sim.quiet) : sim.idle());
  receiver.received.length = 0;
  const gh = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.installationToken(installationId), request: { retries: 0 } });
  return { sim, gh, receiver, installationId };
}

async function statuses(gh: Octokit, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    try {
      out.push((await gh.rest.repos.get({ owner: "acme", repo: "r" })).status);
    } catch (e) {
      out.push((e as { status: number }).status);
    }
  }
  return out;
}

describe("API faults", () => {
  it("answers a seeded fraction with 5xx, the same for the same seed", async () => {
    const a = await setup({ seed: 42, apiErrorRate: 0.3 });
    const b = await setup({ seed: 42, apiErrorRate: 0.3 });
    const c = await setup({ seed: 7, apiErrorRate: 0.3 });
    const sa = await statuses(a.gh, 40);
    const sb = await statuses(b.gh, 40);
    const sc = await statuses(c.gh, 40);
    expect(sa).toEqual(sb);
    expect(sa).not.toEqual(sc);
    const failures = sa.filter((s) => s >= 500).length;
    expect(failures).toBeGreaterThan(3);
    expect(failures).toBeLessThan(25);
    expect(sa.every((s) => s === 200 || [500, 502, 503].includes(s))).toBe(true);
    expect(a.sim.core.faults.log).toEqual(b.sim.core.faults.log);
  });

  it("answers secondary rate limits with retry-after (403 by default, 429 on demand), only for chosen operations", async () => {
    const { sim, gh } = await setup({ seed: 1, rateLimitRate: 1, retryAfterSeconds: 7, apiOperations: ["issues/create"] });
    expect((await gh.rest.repos.get({ owner: "acme", repo: "r" })).status).toBe(200);
    const err = (await gh.rest.issues.create({ owner: "acme", repo: "r", title: "x" }).catch((e: unknown) => e)) as {
      status: number;
      response: { headers: Record<string, string>; data: { message: string } };
    };
    expect(err.status).toBe(403);
    expect(err.response.headers["retry-after"]).toBe("7");
    expect(err.response.data.message).toMatch(/secondary rate limit/);
    sim.control.faults({ rateLimitStatus: 429 });
    const err2 = (await gh.rest.issues.create({ owner: "acme", repo: "r", title: "x" }).catch((e: unknown) => e)) as { status: number };
    expect(err2.status).toBe(429);
    sim.control.resetFaults();
    expect((await gh.rest.issues.create({ owner: "acme", repo: "r", title: "x" })).status).toBe(201);
    // Faults can target one kind of caller: here people's tokens only, not the App's.
    sim.control.faults({ seed: 1, apiErrorRate: 1, apiCredentials: ["user"] });
    expect((await gh.rest.repos.get({ owner: "acme", repo: "r" })).status).toBe(200);
    const person = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken("acme"), request: { retries: 0 } });
    expect(await statuses(person, 1)).not.toEqual([200]);
  });
});

describe("webhook faults", () => {
  async function openIssues(gh: Octokit, n: number): Promise<void> {
    for (let i = 1; i <= n; i++) await gh.rest.issues.create({ owner: "acme", repo: "r", title: `issue ${i}` });
  }

  it("drops and duplicates deliveries (duplicates keep the GUID)", async () => {
    const { sim, gh, receiver } = await setup({ seed: 3, webhookDropRate: 1 });
    await openIssues(gh, 2);
    await sim.idle();
    expect(receiver.received).toEqual([]);
    expect(sim.control.deliveries({ event: "issues" }).map((d) => d.status)).toEqual(["dropped", "dropped"]);
    sim.control.faults({ webhookDropRate: 0, webhookDuplicateRate: 1 });
    await openIssues(gh, 1);
    await sim.idle();
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[0]!.delivery).toBe(receiver.received[1]!.delivery);
  });

  it("reorders within a window, reproducibly by seed", async () => {
    const a = await setup({ seed: 11, webhookReorderWindow: 5 });
    const b = await setup({ seed: 11, webhookReorderWindow: 5 });
    // Events caused by one API call are flushed together: setting five labels sends five
    // issues.labeled deliveries, which the window shuffles.
    const labelsOf = (r: Receiver) =>
      r.received.filter((h) => h.action === "labeled").map((h) => (h.payload.label as { name: string }).name);
    for (const s of [a, b]) {
      await s.gh.rest.issues.create({ owner: "acme", repo: "r", title: "t" });
      await s.gh.rest.issues.setLabels({ owner: "acme", repo: "r", issue_number: 1, labels: ["l1", "l2", "l3", "l4", "l5"] });
      await s.sim.idle();
    }
    expect(labelsOf(a.receiver)).toEqual(labelsOf(b.receiver));
    expect([...labelsOf(a.receiver)].sort()).toEqual(["l1", "l2", "l3", "l4", "l5"]);
    expect(labelsOf(a.receiver)).not.toEqual(["l1", "l2", "l3", "l4", "l5"]);
    expect(a.sim.violations).toEqual([]);
    // The window spans API calls: five issues opened one call at a time can arrive out of order.
    const c = await setup({ seed: 11, webhookReorderWindow: 5 });
    for (let i = 1; i <= 5; i++) await c.gh.rest.issues.create({ owner: "acme", repo: "r", title: `i${i}` });
    await c.sim.idle();
    const opened = c.receiver.received.filter((h) => h.action === "opened").map((h) => (h.payload.issue as { number: number }).number);
    expect([...opened].sort()).toEqual([1, 2, 3, 4, 5]);
    expect(opened).not.toEqual([1, 2, 3, 4, 5]);
  });

  it("delays deliveries", async () => {
    const clock = new TestClock();
    const { sim, gh, receiver } = await setup({ seed: 5, webhookDelayMs: [150, 200] }, clock);
    await openIssues(gh, 1);
    // The delivery waits for the local GitHub's clock: not sent before 150 ms, sent by 200 ms.
    await clock.advance(149, settleWhen(sim.quiet));
    expect(receiver.received).toHaveLength(0);
    await clock.advance(51, settleWhen(sim.quiet));
    await sim.idle();
    expect(receiver.received).toHaveLength(1);
  });

  it("records failures while the App is unreachable and redelivers them with the same GUID", async () => {
    const { sim, gh, receiver } = await setup({ seed: 9 });
    sim.control.appUnreachableFor(60_000);
    await openIssues(gh, 1);
    await sim.idle();
    expect(receiver.received).toEqual([]);
    const [failed] = sim.control.deliveries({ event: "issues", status: "failed" });
    expect(failed?.error).toMatch(/unreachable/);
    // A receiver answering 500 is a failed delivery too.
    sim.control.faults({ appUnreachableUntil: 0 });
    receiver.status = 500;
    await openIssues(gh, 1);
    await sim.idle();
    expect(sim.control.deliveries({ event: "issues", status: "failed" })).toHaveLength(2);
    receiver.status = 200;
    const again = sim.control.redeliver(failed!.id);
    await sim.idle();
    expect(again.guid).toBe(failed!.guid);
    expect(again.redelivery).toBe(true);
    expect(again.status).toBe("ok");
    const got = receiver.received.filter((h) => h.delivery === failed!.guid);
    expect(got.length).toBeGreaterThanOrEqual(1);
    expect(got.at(-1)!.signatureValid).toBe(true);
    expect(sim.violations).toEqual([]);
  });

  it("exposes deliveries and faults over the HTTP control API", async () => {
    const { sim, gh } = await setup({ seed: 2 });
    await openIssues(gh, 1);
    await sim.idle();
    const list = (await (await fetch(`${sim.url}/_sim/deliveries?event=issues`)).json()) as Array<{
      id: number;
      guid: string;
      status: string;
    }>;
    expect(list.map((d) => d.status)).toEqual(["ok"]);
    const re = await fetch(`${sim.url}/_sim/deliveries/${list[0]!.id}/redeliver`, { method: "POST" });
    expect(((await re.json()) as { guid: string }).guid).toBe(list[0]!.guid);
    const put = await fetch(`${sim.url}/_sim/faults`, { method: "PUT", body: JSON.stringify({ seed: 4, apiErrorRate: 1 }) });
    expect(((await put.json()) as FaultConfig).apiErrorRate).toBe(1);
    expect(await statuses(gh, 1)).not.toEqual([200]);
    await fetch(`${sim.url}/_sim/faults`, { method: "DELETE" });
    expect(await statuses(gh, 1)).toEqual([200]);
  });
});
