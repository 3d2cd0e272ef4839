/**
 * Regression tests of the bugs the chaos runs found, each on the smallest setting that shows it.
 * (The chaos scenarios themselves are in chaos.test.ts, run by `npm run test:chaos`.)
 */
import nock from "nock";
import { Probot } from "probot";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createForgeApp, type ForgeApp } from "../../src/app/app.js";
import { octokitWithDefaults, startForgeServer, type ForgeServer } from "../../src/app/server.js";
import { createSim, type Sim } from "../../src/local-github/server.js";
import { runScenario } from "./harness.js";
import { appKeys } from "../local-github/support/helpers.js";
import { journalKeyFrom } from "../../src/app/journal-seal.js";
import { TestClock } from "../helpers/clock.js";

let sim: Sim | undefined;
let app: ForgeServer | undefined;
afterEach(async () => {
  await app?.close();
  await sim?.close();
  app = undefined;
  sim = undefined;
});

async function setup(octokitDefaults: Record<string, unknown>, pace?: false): Promise<{ installationId: number }> {
  sim = await createSim();
  const keys = appKeys();
  const registered = sim.control.registerApp({
    slug: "forge",
    publicKeyPem: keys.publicKeyPem,
    webhookUrl: "http://127.0.0.1:9/unused",
    webhookSecret: "s",
    permissions: { contents: "write", metadata: "read" },
    events: ["push"],
  });
  await sim.control.createRepo({ owner: "acme", name: "widgets", files: { "README.md": "# hi\n" } });
  const inst = sim.control.install(registered.id, "acme", ["acme/widgets"]);
  app = await startForgeServer({
    appId: registered.id,
    privateKey: keys.privateKeyPem,
    webhookSecret: "s",
    baseUrl: sim.apiUrl,
    port: 0,
    octokitDefaults,
    ...(pace === false ? { pace } : {}),
  });
  return { installationId: inst.id };
}

describe("octokitDefaults reach the installation Octokit", () => {
  it("throttle options given to startForgeServer are used, not replaced by Probot's own", async () => {
    // Probot derives its Octokit once more with its own throttle options; given as an object,
    // ours were replaced — writes kept Octokit's 1 s spacing and `enabled: false` did nothing.
    const scheduled: string[] = [];
    const counting = (name: string) => ({
      key: () => ({ schedule: (_o: unknown, fn: (...a: unknown[]) => unknown, ...args: unknown[]) => (scheduled.push(name), fn(...args)) }),
    });
    const { installationId } = await setup({ throttle: { enabled: true, write: counting("write"), global: counting("global") } });
    const octokit = (await app!.probot.auth(installationId)) as unknown as {
      rest: { git: { createBlob(p: Record<string, unknown>): Promise<{ status: number }> } };
    };
    const res = await octokit.rest.git.createBlob({ owner: "acme", repo: "widgets", content: "x", encoding: "utf-8" });
    expect(res.status).toBe(201);
    expect(scheduled).toContain("write");
    expect(scheduled).toContain("global");
  });

  it("throttle: { enabled: false } turns the write spacing off", async () => {
    const { installationId } = await setup({ throttle: { enabled: false } });
    const octokit = (await app!.probot.auth(installationId)) as unknown as {
      rest: { git: { createBlob(p: Record<string, unknown>): Promise<unknown> } };
    };
    const started = Date.now();
    // Octokit's throttling spaces writes 1 s apart: four of them would take 3 s or more.
    await Promise.all(
      [1, 2, 3, 4].map((i) => octokit.rest.git.createBlob({ owner: "acme", repo: "widgets", content: `blob ${i}`, encoding: "utf-8" })),
    );
    expect(Date.now() - started).toBeLessThan(2_500);
  });
});

describe("Forge paces its own requests per installation", () => {
  /** Four writes at once, as the App's effects start them: how long until all are answered. */
  async function fourWrites(installationId: number): Promise<number> {
    const octokit = (await app!.probot.auth(installationId)) as unknown as {
      rest: { git: { createBlob(p: Record<string, unknown>): Promise<unknown> } };
    };
    const started = Date.now();
    await Promise.all(
      [1, 2, 3, 4].map((i) => octokit.rest.git.createBlob({ owner: "acme", repo: "widgets", content: `blob ${i}`, encoding: "utf-8" })),
    );
    return Date.now() - started;
  }

  it("so Octokit's process-wide spacing of writes (one a second, all installations together) is off by default", async () => {
    const { installationId } = await setup({});
    expect(await fourWrites(installationId)).toBeLessThan(2_500);
  });

  it("with the pace off (pace: false), Octokit's own throttling is back: writes 1 s apart", async () => {
    const { installationId } = await setup({}, false);
    expect(await fourWrites(installationId)).toBeGreaterThanOrEqual(2_900);
  });
});

describe("the reconciler of a restarted App", () => {
  const API = "https://api.github.com";
  let forge: ForgeApp | undefined;
  afterEach(() => {
    forge?.stop();
    forge = undefined;
    nock.cleanAll();
  });

  async function loadForge(options: Partial<Parameters<typeof createForgeApp>[0]> = {}): Promise<ForgeApp> {
    const probot = new Probot({
      appId: 1001,
      privateKey: appKeys().privateKeyPem,
      secret: "s",
      logLevel: "fatal",
      Octokit: octokitWithDefaults({ retry: { enabled: false }, throttle: { enabled: false } }),
    });
    forge = createForgeApp({ journalKey: journalKeyFrom(appKeys().privateKeyPem), ...options });
    await probot.load(forge);
    return forge;
  }

  function installedOn(scope: nock.Scope): nock.Scope {
    return scope
      .get("/app/installations")
      .query(true)
      .reply(200, [{ id: 42, account: { login: "acme" }, repository_selection: "selected" }])
      .post("/app/installations/42/access_tokens")
      .reply(201, {
        token: "ghs_test",
        expires_at: "2099-01-01T00:00:00Z",
        permissions: { contents: "write" },
        repository_selection: "selected",
      })
      .get("/installation/repositories")
      .query(true)
      .reply(200, { total_count: 1, repositories: [{ id: 7, name: "widgets", full_name: "acme/widgets", owner: { login: "acme" } }] });
  }

  it("asks GitHub where it is installed, so a run whose webhooks were lost while it was down is still swept", async () => {
    const app = await loadForge();
    // The sweep of acme/widgets starts by listing the runs' state branches.
    const scope = installedOn(nock(API))
      .get(/\/repos\/acme\/widgets\/git\/matching-refs\//)
      .query(true)
      .reply(200, []);
    await app.tick();
    expect(app.runtimes.has("acme/widgets")).toBe(true);
    expect(scope.isDone()).toBe(true);
  });

  it("runs one sweep at a time when a sweep is slower than the timer's period", async () => {
    let inFlight = 0;
    let most = 0;
    let calls = 0;
    const answers: (() => void)[] = [];
    installedOn(nock(API))
      .get(/\/repos\/acme\/widgets\/git\/matching-refs\//)
      .query(true)
      .times(1000)
      .reply((_uri, _body, answer) => {
        // GitHub answers only when the test says: a sweep lasts as many periods as the test likes.
        calls++;
        inFlight++;
        most = Math.max(most, inFlight);
        answers.push(() => {
          inFlight--;
          answer(null, [200, []]);
        });
      });
    const clock = new TestClock();
    await loadForge({ reconcileEveryMs: 10, clock });
    // The sweep at start waits for GitHub while fifteen periods pass: no second sweep joins it.
    await vi.waitFor(() => expect(calls).toBe(1));
    for (let i = 0; i < 15; i++) await clock.advance(10);
    expect(calls).toBe(1);
    answers.shift()!();
    // Once it is over, the next period starts the next sweep.
    await vi.waitFor(async () => {
      await clock.advance(10);
      expect(calls).toBe(2);
    });
    answers.shift()!();
    expect(most).toBe(1);
  });
});

describe("a write whose answer is lost", () => {
  it("a dispatch answered 502 after GitHub started the job is not sent again: the attempt runs once", { timeout: 300_000 }, async () => {
    let lost = 0;
    const r = await runScenario("clean", 3, {
      tasks: 3,
      timeoutMs: 240_000,
      // The App's timers (the reconciler that finds the job started) skip ahead instead of running in real time.
      clock: new TestClock(),
      // The first dispatch reaches GitHub, which starts the job; the App gets a 502.
      loseAnswer: (method, url) => method === "POST" && url.endsWith("/dispatches") && lost++ === 0,
    });
    expect(r.faults.answersLost).toBe(1);
    expect(r.completed).toBe(true);
    expect(r.duplicateDispatches).toEqual([]);
    expect(r.dispatches).toBe(3);
    expect(Object.values(r.statuses)).toEqual(["MERGED", "MERGED", "MERGED"]);
  });
});

describe("merges racing into the same base", () => {
  // Two merges into the integration branch at once: GitHub lets one win and answers the other 405
  // "Base branch was modified". The local GitHub answered 409 instead, Forge took any 409 for a moved
  // head, dropped the merge and left the task MERGE_READY with nothing to merge it: the chaos stall.
  // The reconciler is off here: only the merge's own retry can finish the run.
  const answers = [
    { status: 405, message: "Base branch was modified. Review and try the merge again." },
    { status: 409, message: "Head branch was modified. Review and try the merge again." },
  ];
  for (const answer of answers) {
    it(
      `a merge answered ${answer.status} "${answer.message.slice(0, 25)}…" while its head is the verified one is tried again by itself`,
      { timeout: 300_000 },
      async () => {
        let refused = 0;
        const r = await runScenario("clean", 3, {
          tasks: 1,
          reconcileEveryMs: 0,
          timeoutMs: 60_000,
          // The merge's own retries wait on the App's clock: skipped ahead, not waited out.
          clock: new TestClock(),
          refuse: (method, url) => (method === "PUT" && url.endsWith("/merge") && refused++ < 4 ? answer : undefined),
        });
        expect(refused).toBeGreaterThanOrEqual(5);
        expect(r.completed).toBe(true);
        expect(Object.values(r.statuses)).toEqual(["MERGED"]);
      },
    );
  }
});

describe("a test clock with the local GitHub's latency", () => {
  // The latency's waits are timers on the run's clock: a request asleep at the local GitHub is
  // waited out by skipping ahead, not in real time. The App, the runner and the people's calls
  // waiting there once held the clock still — the world was never quiet — and `npm run chaos --
  // --latency github` had to run in real time.
  it(
    "a run at GitHub's speed completes on a test clock: every class of delay drawn, skipped rather than waited",
    { timeout: 300_000 },
    async () => {
      const clock = new TestClock();
      const r = await runScenario("clean", 3, { tasks: 3, timeoutMs: 240_000, latency: "github", clock });
      expect(r.completed).toBe(true);
      expect(Object.values(r.statuses)).toEqual(["MERGED", "MERGED", "MERGED"]);
      expect(r.duplicateDispatches).toEqual([]);
      for (const cls of ["restRead", "restWrite", "merge", "workflowDispatch", "webhook", "runnerQueue"] as const)
        expect(r.latencyDrawn[cls], cls).toBeGreaterThan(0);
      // Three jobs' queue (median 6 s each) and hundreds of requests at GitHub's pace: a run's clock
      // that moved well past the real time it took.
      expect(r.clockMs).toBeGreaterThan(r.wallMs);
      expect(clock.skippedMs).toBeGreaterThan(10_000);
    },
  );
});
