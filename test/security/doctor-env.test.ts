/**
 * Attack: a repository commits a `.env` naming its own host as `GITHUB_API_URL`; a maintainer runs
 * `forge doctor` in the clone with their admin token (`--token`, `GITHUB_TOKEN`) and the token goes
 * to that host. `forge doctor` reads an App `.env` only from a `--dir` given explicitly, and only the
 * App's credentials from it: the API URL (and the token) come from the command line or the
 * process's environment. The planted host is a real HTTP server here; it must receive nothing.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { APP_MANIFEST } from "../../src/app/launch.js";
import { updateEnvFile } from "../../src/app/setup.js";
import { AGENT_WORKFLOW_TEMPLATE } from "../../src/cli/commands/init.js";
import { appKeys } from "../../src/demo/app-keys.js";
import { createSim, type Sim } from "../../src/local-github/server.js";
import { runForge } from "../cli/helpers.js";

let sim: Sim;
let planted: { url: string; seen: Array<{ path: string; headers: IncomingHttpHeaders }>; close(): Promise<void> };
let clone: string;
let admin: string;
let appEnv: { APP_ID: string; PRIVATE_KEY: string };
const saved = { ...process.env };
/** Requests that left for hosts other than this machine (GitHub's default API root), answered 404 without the network. */
const elsewhere: string[] = [];

beforeAll(async () => {
  sim = await createSim();
  const keys = appKeys();
  const manifest = YAML.parse(readFileSync(APP_MANIFEST, "utf8")) as { default_permissions: never; default_events: string[] };
  const app = sim.control.registerApp({
    slug: "forge",
    owner: "octo",
    publicKeyPem: keys.publicKeyPem,
    permissions: manifest.default_permissions,
    events: manifest.default_events,
  });
  await sim.control.createRepo({
    owner: "octo",
    name: "ready",
    files: { "README.md": "# ready\n", ".github/workflows/forge-agent.yml": readFileSync(AGENT_WORKFLOW_TEMPLATE, "utf8") },
  });
  sim.control.install(app.id, "octo", ["ready"]);
  admin = sim.control.userToken("octo");
  appEnv = { APP_ID: String(app.id), PRIVATE_KEY: keys.privateKeyPem };

  const seen: Array<{ path: string; headers: IncomingHttpHeaders }> = [];
  const server = createServer((req, res) => {
    seen.push({ path: req.url ?? "", headers: req.headers });
    req.resume();
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  planted = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
  // The clone: its committed .env names the planted host (and credentials of an App, to look real).
  clone = mkdtempSync(join(tmpdir(), "forge-doctor-planted-"));
  updateEnvFile(join(clone, ".env"), { ...appEnv, GITHUB_API_URL: planted.url, GITHUB_TOKEN: "ghp_planted" });
});

afterAll(async () => {
  process.env = saved;
  await sim?.close();
  await planted?.close();
  if (clone) rmSync(clone, { recursive: true, force: true });
});

afterEach(() => {
  vi.unstubAllGlobals();
  process.env = { ...saved };
});

/** No GitHub settings in the process's environment; fetches to other machines are recorded and answered 404. */
function cleanEnvironment(): void {
  for (const k of ["GITHUB_API_URL", "GITHUB_TOKEN", "GH_TOKEN", "APP_ID", "PRIVATE_KEY", "PRIVATE_KEY_PATH"]) delete process.env[k];
  const real = globalThis.fetch;
  vi.stubGlobal("fetch", (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.hostname === "127.0.0.1" || url.hostname === "localhost") return real(input, init);
    elsewhere.push(url.origin);
    return Promise.resolve(new Response(JSON.stringify({ message: "Not Found" }), { status: 404 }));
  });
}

type Check = { id: string; verdict: string; detail: string };

describe("forge doctor and a planted .env", () => {
  it("in the clone, without --dir: the .env is not read; the token goes to GitHub's default API, never the planted host", async () => {
    cleanEnvironment();
    const r = await runForge(["doctor", "--repo", "octo/ready", "--token", admin, "--json"], clone);
    expect(planted.seen).toEqual([]);
    expect(elsewhere).toContain("https://api.github.com");
    // The App's credentials of the planted .env were not taken either.
    const app = (JSON.parse(r.out) as { checks: Check[] }).checks.find((c) => c.id === "app")!;
    expect(app.verdict).toBe("skip");
  });

  it("with --dir naming it: the App's credentials are read, its GITHUB_API_URL and GITHUB_TOKEN are not", async () => {
    cleanEnvironment();
    elsewhere.length = 0;
    await runForge(["doctor", "--repo", "octo/ready", "--dir", clone, "--token", admin, "--json"], clone);
    expect(planted.seen).toEqual([]);
    expect(elsewhere).toContain("https://api.github.com");

    // The API URL from the command line (or the process's environment) is the one used; the .env's App credentials work.
    elsewhere.length = 0;
    for (const how of ["flag", "env"] as const) {
      if (how === "env") process.env.GITHUB_API_URL = sim.apiUrl;
      const args = ["doctor", "--repo", "octo/ready", "--dir", clone, "--json", ...(how === "flag" ? ["--api-url", sim.apiUrl] : [])];
      const r = await runForge(args, clone);
      const checks = (JSON.parse(r.out) as { checks: Check[] }).checks;
      expect({ how, app: checks.find((c) => c.id === "app")!.verdict }).toEqual({ how, app: "pass" });
    }
    expect(planted.seen).toEqual([]);
    expect(elsewhere).toEqual([]);
  });
});
