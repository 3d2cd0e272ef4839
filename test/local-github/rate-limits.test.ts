// GitHub's REST rate limits as the local GitHub enforces them, against GitHub's description
// (docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api):
//  - primary: one budget per installation, shared by every token of it ("GitHub Apps authenticating
//    with an installation access token use the installation's minimum rate limit of 5,000 requests
//    per hour"); past it 403 or 429 with `x-ratelimit-remaining: 0`;
//  - secondary, content creation: "no more than 80 content-generating requests per minute and no
//    more than 500 content-generating requests per hour"; past it 403 or 429 with `retry-after`;
//  - the headers `x-ratelimit-limit`, `-remaining`, `-used`, `-reset`, `-resource` on every answer.
import { Octokit } from "@octokit/rest";
import { afterEach, describe, expect, it } from "vitest";
import { createSim, type Sim } from "../../src/local-github/server.js";
import type { RateLimitConfig } from "../../src/local-github/rate-limits.js";
import { appJwt, appKeys } from "./support/helpers.js";

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((o) => o.close()));
});

async function setup(
  rateLimits: Partial<RateLimitConfig> = {},
): Promise<{ sim: Sim; installationId: number; appId: number; gh: () => Octokit }> {
  const sim = await createSim({ rateLimits });
  open.push(sim);
  await sim.control.createRepo({ owner: "acme", name: "r", files: { "a.txt": "a\n" } });
  const app = sim.control.registerApp({
    slug: "forge-limits",
    publicKeyPem: appKeys().publicKeyPem,
    webhookUrl: null,
    permissions: { issues: "write", contents: "write", metadata: "read" },
    events: [],
  });
  const installationId = sim.control.install(app.id, "acme", "all").id;
  // A new token each time: the budget is the installation's, not the token's.
  const gh = () =>
    new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.installationToken(installationId), request: { retries: 0 }, log: quiet });
  return { sim, installationId, appId: app.id, gh };
}

async function answer<T>(call: Promise<T>): Promise<{ status: number; headers: Record<string, string>; message?: string }> {
  try {
    const r = (await call) as { status: number; headers: Record<string, string> };
    return { status: r.status, headers: r.headers };
  } catch (e) {
    const err = e as { status: number; message: string; response?: { headers: Record<string, string> } };
    return { status: err.status, headers: err.response?.headers ?? {}, message: err.message };
  }
}

describe("rate limits (docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api)", () => {
  it("counts the primary limit per installation, across its tokens, with GitHub's headers", async () => {
    const { gh } = await setup();
    const first = await answer(gh().rest.repos.get({ owner: "acme", repo: "r" }));
    const second = await answer(gh().rest.repos.get({ owner: "acme", repo: "r" }));
    expect(first.headers["x-ratelimit-limit"]).toBe("5000");
    expect(first.headers["x-ratelimit-resource"]).toBe("core");
    expect(second.headers["x-ratelimit-used"]).toBe(String(Number(first.headers["x-ratelimit-used"]) + 1));
    expect(Number(second.headers["x-ratelimit-remaining"])).toBe(5000 - Number(second.headers["x-ratelimit-used"]));
    const reset = Number(second.headers["x-ratelimit-reset"]);
    expect(reset).toBeGreaterThan(Date.now() / 1000 + 3500);
    expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 3600);
  });

  it("refuses past the primary limit with 403 and x-ratelimit-remaining 0, for every token of the installation", async () => {
    const { gh, sim, installationId } = await setup({ enabled: true, primary: 3 });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await answer(gh().rest.repos.get({ owner: "acme", repo: "r" }))).status);
    expect(statuses).toEqual([200, 200, 200]);
    const over = await answer(gh().rest.repos.get({ owner: "acme", repo: "r" }));
    expect(over.status).toBe(403);
    expect(over.headers["x-ratelimit-remaining"]).toBe("0");
    expect(over.message).toMatch(new RegExp(`API rate limit exceeded for installation ID ${installationId}`));
    // Another installation (its own budget) and a person are not held by it.
    const other = sim.control.registerApp({
      slug: "other",
      publicKeyPem: appKeys().publicKeyPem,
      webhookUrl: null,
      permissions: { metadata: "read" },
      events: [],
    });
    const otherToken = sim.control.installationToken(sim.control.install(other.id, "acme", "all").id);
    const o = new Octokit({ baseUrl: sim.apiUrl, auth: otherToken, request: { retries: 0 }, log: quiet });
    expect((await answer(o.rest.repos.get({ owner: "acme", repo: "r" }))).status).toBe(200);
  });

  it("holds only the budgets it is told to (appliesTo), all by default", async () => {
    const { sim, gh } = await setup({ enabled: true, creatingPerMinute: 1, appliesTo: ["user"] });
    for (const title of ["a", "b"]) expect((await answer(gh().rest.issues.create({ owner: "acme", repo: "r", title }))).status).toBe(201);
    const person = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken("acme"), request: { retries: 0 }, log: quiet });
    expect((await answer(person.rest.issues.create({ owner: "acme", repo: "r", title: "c" }))).status).toBe(201);
    expect((await answer(person.rest.issues.create({ owner: "acme", repo: "r", title: "d" }))).status).toBe(403);
  });

  it("counts the App's own requests (its JWT) on a budget of their own, not the installation's nor the anonymous one", async () => {
    const { sim, gh, appId } = await setup({ enabled: true, primary: 2, primaryAnonymous: 1 });
    const asApp = new Octokit({ baseUrl: sim.apiUrl, auth: appJwt(appId, appKeys().privateKeyPem), request: { retries: 0 }, log: quiet });
    const app = await answer(asApp.rest.apps.getAuthenticated());
    expect(app.status).toBe(200);
    expect(app.headers["x-ratelimit-used"]).toBe("1");
    expect((await answer(asApp.rest.apps.getAuthenticated())).status).toBe(200);
    expect((await answer(asApp.rest.apps.getAuthenticated())).status).toBe(403);
    expect(sim.core.rateLimits.refused.map((r) => r.key)).toEqual([`app:${appId}`]);
    expect((await answer(gh().rest.repos.get({ owner: "acme", repo: "r" }))).status).toBe(200);
  });

  it("answers 429 instead when configured so", async () => {
    const { gh } = await setup({ enabled: true, primary: 1, status: 429 });
    await answer(gh().rest.repos.get({ owner: "acme", repo: "r" }));
    const over = await answer(gh().rest.repos.get({ owner: "acme", repo: "r" }));
    expect(over.status).toBe(429);
    expect(over.headers["x-ratelimit-remaining"]).toBe("0");
  });

  it("refuses content creation past the per-minute limit with a secondary limit and retry-after; reads still pass", async () => {
    const { gh, sim, installationId } = await setup({ enabled: true, creatingPerMinute: 3 });
    const made: number[] = [];
    for (let i = 0; i < 3; i++) made.push((await answer(gh().rest.issues.create({ owner: "acme", repo: "r", title: `t${i}` }))).status);
    expect(made).toEqual([201, 201, 201]);
    const over = await answer(gh().rest.issues.create({ owner: "acme", repo: "r", title: "one too many" }));
    expect(over.status).toBe(403);
    expect(over.message).toMatch(/You have exceeded a secondary rate limit/);
    const retryAfter = Number(over.headers["retry-after"]);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(over.headers["x-ratelimit-remaining"]).not.toBe("0");
    expect(sim.core.rateLimits.refused).toEqual([expect.objectContaining({ key: `installation:${installationId}`, limit: "secondary" })]);
    // The refused request created nothing; a read is not content creation.
    const issues = await gh().rest.issues.listForRepo({ owner: "acme", repo: "r" });
    expect(issues.data.map((i) => i.title).sort()).toEqual(["t0", "t1", "t2"]);
  });

  it("holds GitHub's numbers when enabled without figures: 80 a minute (the 81st is refused)", async () => {
    const { sim, gh } = await setup({ enabled: true });
    expect(sim.core.rateLimits.config).toMatchObject({ primary: 5000, creatingPerMinute: 80, creatingPerHour: 500 });
    const o = gh();
    const statuses: number[] = [];
    for (let i = 0; i < 81; i++)
      statuses.push((await answer(o.rest.issues.createComment({ owner: "acme", repo: "r", issue_number: 1, body: `c${i}` }))).status);
    // issue #1 does not exist: each is a 404, yet each counts (GitHub counts the attempt)…
    expect(statuses.slice(0, 80).every((s) => s === 404)).toBe(true);
    // …and the 81st is refused before it is looked at.
    expect(statuses[80]).toBe(403);
  });

  it("enforces nothing by default, and the control API turns limits on and off", async () => {
    const { sim, gh } = await setup();
    for (let i = 0; i < 5; i++)
      expect((await answer(gh().rest.issues.create({ owner: "acme", repo: "r", title: `${i}` }))).status).toBe(201);
    const put = await fetch(`${sim.url}/_sim/rate-limits`, {
      method: "PUT",
      body: JSON.stringify({ enabled: true, creatingPerMinute: 1 }),
    });
    expect(((await put.json()) as RateLimitConfig).creatingPerMinute).toBe(1);
    expect((await answer(gh().rest.issues.create({ owner: "acme", repo: "r", title: "a" }))).status).toBe(201);
    expect((await answer(gh().rest.issues.create({ owner: "acme", repo: "r", title: "b" }))).status).toBe(403);
    await fetch(`${sim.url}/_sim/rate-limits`, { method: "DELETE" });
    expect((await answer(gh().rest.issues.create({ owner: "acme", repo: "r", title: "c" }))).status).toBe(201);
  });
});
