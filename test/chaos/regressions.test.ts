/**
 * Regression tests of the bugs the chaos runs found, each on the smallest setting that shows it.
 * (The chaos scenarios themselves are in chaos.test.ts, run by `npm run test:chaos`.)
 */
import { afterEach, describe, expect, it } from "vitest";
import { startForgeServer, type ForgeServer } from "../../src/app/server.js";
import { createSim, type Sim } from "../sim/server.js";
import { appKeys } from "../sim/support/helpers.js";

let sim: Sim | undefined;
let app: ForgeServer | undefined;
afterEach(async () => {
  await app?.close();
  await sim?.close();
  app = undefined;
  sim = undefined;
});

async function setup(octokitDefaults: Record<string, unknown>): Promise<{ installationId: number }> {
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
  app = await startForgeServer({ appId: registered.id, privateKey: keys.privateKeyPem, webhookSecret: "s", baseUrl: sim.apiUrl, port: 0, octokitDefaults });
  return { installationId: inst.id };
}

describe("octokitDefaults reach the installation Octokit", () => {
  it("throttle options given to startForgeServer are used, not replaced by Probot's own", async () => {
    // Probot derives its Octokit once more with its own throttle options; given as an object,
    // ours were replaced — writes kept Octokit's 1 s spacing and `enabled: false` did nothing.
    const scheduled: string[] = [];
    const counting = (name: string) => ({ key: () => ({ schedule: (_o: unknown, fn: (...a: unknown[]) => unknown, ...args: unknown[]) => (scheduled.push(name), fn(...args)) }) });
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
    await Promise.all([1, 2, 3, 4].map((i) => octokit.rest.git.createBlob({ owner: "acme", repo: "widgets", content: `blob ${i}`, encoding: "utf-8" })));
    expect(Date.now() - started).toBeLessThan(2_500);
  });
});
