/**
 * The first start, as a person meets it: `npm start` without credentials serves the setup page; in a
 * real browser (Debian's Chromium) the person registers the App on the local GitHub from its
 * manifest, installs it on a repository, and lands on the running App — which receives the
 * installation's webhook. `.env` keeps the credentials for the next start. And the attacks: the
 * page without the console's link, and a registration the page did not start.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseEnv } from "node:util";
import type { Browser } from "puppeteer-core";
import { afterEach, describe, expect, it } from "vitest";
import { launchApp, LaunchError } from "../../src/app/launch.js";
import { webUrlOf } from "../../src/github/web-url.js";
import type { ForgeServer } from "../../src/app/server.js";
import { createSim, type Sim } from "../../src/local-github/server.js";
import { launchBrowser } from "../helpers/browser.js";

let sim: Sim | undefined;
let browser: Browser | undefined;
let app: ForgeServer | undefined;
let dir: string | undefined;
afterEach(async () => {
  await browser?.close();
  await app?.close();
  await sim?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  browser = app = sim = dir = undefined;
}, 60_000);

async function setupLink(env: NodeJS.ProcessEnv, cwd: string): Promise<{ link: string; started: Promise<ForgeServer> }> {
  let found!: (url: string) => void;
  const link = new Promise<string>((r) => (found = r));
  const started = launchApp({ env, cwd, log: () => undefined, onSetup: found });
  started.catch(() => undefined);
  return { link: await link, started };
}

describe("the App's first start", () => {
  it(
    "serves the setup page; in a browser the person registers the App from app.yml, installs it, and the running App receives the webhook; .env is read on the next start",
    { timeout: 120_000 },
    async () => {
      sim = await createSim();
      await sim.control.createRepo({ owner: "acme", name: "widgets", files: { "README.md": "# widgets\n" } });
      dir = mkdtempSync(join(tmpdir(), "forge-setup-"));
      writeFileSync(join(dir, ".env"), "LOG_LEVEL=warn\n");
      const env = { GITHUB_API_URL: sim.apiUrl, PORT: "0", HOST: "127.0.0.1" };
      const { link, started } = await setupLink(env, dir);

      browser = await launchBrowser();
      const page = await browser.newPage();
      await page.goto(link);
      expect(await page.$eval("#webhook", (e) => e.textContent)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/github\/webhooks$/);
      // Register: GitHub's page for the manifest, then "Create GitHub App".
      await Promise.all([page.waitForNavigation(), page.click("#register")]);
      expect(await page.$eval("#name", (e) => (e as unknown as { value: string }).value)).toBe("Forge");
      await Promise.all([page.waitForNavigation(), page.click("#create")]);
      // Back through the setup page to GitHub's install page: where, then which repositories.
      expect(page.url()).toMatch(/\/apps\/forge\/installations\/new$/);
      await Promise.all([page.waitForNavigation(), page.click("a.account[href*='target=acme']")]);
      await Promise.all([page.waitForNavigation(), page.click("#install")]);
      // The App took the setup page's port over: GitHub's setup URL lands on it.
      expect(await page.$eval("#installed", (e) => e.textContent)).toBe("Forge is installed");
      app = await started;

      const saved = parseEnv(readFileSync(join(dir, ".env"), "utf8"));
      expect(saved.LOG_LEVEL).toBe("warn");
      expect(saved.APP_ID).toMatch(/^\d+$/);
      expect(saved.PRIVATE_KEY).toMatch(/^-----BEGIN RSA PRIVATE KEY-----\n/);
      expect(saved.WEBHOOK_SECRET).toMatch(/^[0-9a-f]{40}$/);
      expect(saved.GITHUB_API_URL).toBe(sim.apiUrl);
      expect(statSync(join(dir, ".env")).mode & 0o777).toBe(0o600);

      // The installation's webhook reached the running App, signed with the new secret, and was taken.
      await sim.idle();
      const delivered = sim.control.deliveries({ event: "installation", action: "created" });
      expect(delivered).toHaveLength(1);
      expect(delivered[0]!.status).toBe("ok");
      expect(delivered[0]!.statusCode).toBe(200);

      // The next start reads .env: no setup page, the App answers at once.
      await app.close();
      app = await launchApp({
        env: { PORT: "0", HOST: "127.0.0.1" },
        cwd: dir,
        log: () => undefined,
        onSetup: () => expect.fail("setup again"),
      });
      expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
    },
  );

  it(
    "refuses the page without the console's link, and a registration the page did not start; nothing is written",
    { timeout: 60_000 },
    async () => {
      sim = await createSim();
      dir = mkdtempSync(join(tmpdir(), "forge-setup-"));
      const { link } = await setupLink({ GITHUB_API_URL: sim.apiUrl, PORT: "0" }, dir);
      const root = new URL(link).origin;
      const bare = await fetch(`${root}/`);
      expect(bare.status).toBe(403);
      expect(await bare.text()).toContain("Open the setup link printed in the App's console");
      expect((await fetch(`${root}/?token=guess`)).status).toBe(403);
      // An attacker's own registration (a real code from GitHub, for an App of theirs) sent to this server.
      const form = new URLSearchParams({
        manifest: JSON.stringify({ name: "Mallory", url: "https://mallory.invalid", redirect_url: `${root}/setup/done` }),
        name: "Mallory",
      });
      const created = await fetch(`${sim.url}/settings/apps/new/confirm?state=forged`, { method: "POST", body: form, redirect: "manual" });
      const back = new URL(created.headers.get("location")!);
      expect(back.searchParams.get("code")).toBeTruthy();
      const forged = await fetch(`${root}/setup/done${back.search}`, { redirect: "manual" });
      expect(forged.status).toBe(400);
      expect(() => readFileSync(join(dir!, ".env"))).toThrow();
      // A webhook before setup is answered 503, never taken.
      expect((await fetch(`${root}/api/github/webhooks`, { method: "POST", body: "{}" })).status).toBe(503);
    },
  );

  it("a partial configuration names what is missing; production without credentials serves no setup page", async () => {
    dir = mkdtempSync(join(tmpdir(), "forge-setup-"));
    await expect(launchApp({ env: { APP_ID: "12" }, cwd: dir, log: () => undefined })).rejects.toThrow(
      /the environment variable PRIVATE_KEY is required/,
    );
    await expect(launchApp({ env: { NODE_ENV: "production" }, cwd: dir, log: () => undefined })).rejects.toBeInstanceOf(LaunchError);
    await expect(launchApp({ env: { PORT: "-1" }, cwd: dir, log: () => undefined })).rejects.toThrow(/PORT must be a whole number/);
    expect(webUrlOf("https://api.github.com")).toBe("https://github.com");
    expect(webUrlOf("https://ghe.example/api/v3")).toBe("https://ghe.example");
  });
});
