/**
 * From nothing to a first run, as README.md's numbered steps go, on the local GitHub: a repository
 * with only a README; the App started without credentials serves its setup page, where a person (in
 * Debian's Chromium) registers the App and installs it on the repository; `forge init` writes the
 * workflow, the configuration and the example plan; the person adds the secret and the ruleset;
 * `forge doctor` passes every check; merging the plan starts the run, which completes with its
 * final pull request.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path, { join } from "node:path";
import { promisify } from "node:util";
import { Octokit } from "@octokit/rest";
import type { Browser } from "puppeteer-core";
import { afterAll, describe, expect, it } from "vitest";
import { launchApp } from "../../src/app/launch.js";
import type { ForgeServer } from "../../src/app/server.js";
import { stateBranchRuleset } from "../../src/app/start-run.js";
import { LABELS } from "../../src/core/layout.js";
import { createSimExecutor, type SimExecutor } from "../../src/local-github/runner/sim-executor.js";
import { createSim, type Sim } from "../../src/local-github/server.js";
import { launchBrowser } from "../helpers/browser.js";
import { runForge } from "../cli/helpers.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
let sim: Sim | undefined;
let executor: SimExecutor | undefined;
let browser: Browser | undefined;
let app: ForgeServer | undefined;
const scratch = mkdtempSync(join(tmpdir(), "forge-first-run-"));
afterAll(async () => {
  await browser?.close();
  await app?.close();
  executor?.dispose();
  await sim?.close();
  rmSync(scratch, { recursive: true, force: true });
}, 60_000);

async function git(cwd: string, args: string[], token: string): Promise<string> {
  const auth = `http.extraheader=AUTHORIZATION: basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`;
  const { stdout } = await run("git", ["-c", auth, ...args], {
    cwd,
    env: {
      ...process.env,
      GIT_TERMINAL_PROMPT: "0",
      GIT_AUTHOR_NAME: "Octo",
      GIT_AUTHOR_EMAIL: "octo@forge.invalid",
      GIT_COMMITTER_NAME: "Octo",
      GIT_COMMITTER_EMAIL: "octo@forge.invalid",
    },
  });
  return stdout;
}

describe("the first run", () => {
  it(
    "empty repository → setup page in a browser → forge init → forge doctor all green → the example plan's run completes",
    { timeout: 300_000 },
    async () => {
      sim = await createSim({ strict: false });
      await sim.control.createRepo({ owner: "octo", name: "hello", files: { "README.md": "# hello\n\nA project to greet.\n" } });
      mkdirSync(join(scratch, "runners"));
      executor = createSimExecutor({
        concurrency: 2,
        workspaceRoot: join(scratch, "runners"),
        // The template says `uses: forge-dev/forge/action@v1`: served from this checkout's action/.
        localActions: { "forge-dev/forge/action": join(ROOT, "action") },
      });
      sim.onWorkflowDispatch(executor.handler);
      const octo = sim.control.userToken("octo");
      const person = new Octokit({ baseUrl: sim.apiUrl, auth: octo });

      // 1. Start the App: no credentials yet, so the setup page; register and install it in a browser.
      const appDir = join(scratch, "app");
      mkdirSync(appDir);
      let link!: (url: string) => void;
      const linked = new Promise<string>((r) => (link = r));
      const started = launchApp({
        env: { GITHUB_API_URL: sim.apiUrl, PORT: "0", LOG_LEVEL: "fatal", FORGE_RECONCILE_SECONDS: "5" },
        cwd: appDir,
        log: () => undefined,
        onSetup: link,
      });
      browser = await launchBrowser();
      const page = await browser.newPage();
      await page.goto(await linked);
      await Promise.all([page.waitForNavigation(), page.click("#register")]);
      await Promise.all([page.waitForNavigation(), page.click("#create")]);
      await Promise.all([page.waitForNavigation(), page.click("a.account[href*='target=octo']")]);
      await page.click("#selected");
      await page.click("input[name=repository][value=hello]");
      await Promise.all([page.waitForNavigation(), page.click("#install")]);
      expect(await page.$eval("#installed", (e) => e.textContent)).toBe("Forge is installed");
      app = await started;
      const appId = Number(/^APP_ID=(\d+)$/m.exec(readFileSync(join(appDir, ".env"), "utf8"))![1]);

      // 2. forge init in a clone; the agent chosen in .github/forge.yml (here the demo's scripted agent).
      const work = join(scratch, "hello");
      await git(scratch, ["clone", "-q", `${sim.gitUrl}/octo/hello.git`, "hello"], octo);
      const init = await runForge(["init"], work);
      expect(init.code, init.err).toBe(0);
      expect(init.out).toContain("forge doctor");
      const agent = `node ${join(ROOT, "src/demo/bin/forge-demo-agent.mjs")}`;
      writeFileSync(
        join(work, ".github/forge.yml"),
        `${readFileSync(join(work, ".github/forge.yml"), "utf8")}\nagent:\n  adapter: command\n  isolation: none\n  command: ${JSON.stringify(agent)}\n`,
      );
      expect((await runForge(["validate", ".forge/plans/hello"], work)).code).toBe(0);
      await git(work, ["add", ".github"], octo);
      await git(work, ["commit", "-q", "-m", "Forge: the agent workflow and configuration"], octo);
      await git(work, ["push", "-q", "origin", "HEAD:main"], octo);

      // 3. The model key secret, the state branches' ruleset and pull requests from Actions, as README.md says.
      sim.control.setSecret("octo/hello", "ANTHROPIC_API_KEY", "sk-ant-first-run-dummy");
      await person.request("POST /repos/{owner}/{repo}/rulesets", { owner: "octo", repo: "hello", ...stateBranchRuleset(appId) });
      await person.request("PUT /repos/{owner}/{repo}/actions/permissions/workflow", {
        owner: "octo",
        repo: "hello",
        can_approve_pull_request_reviews: true,
      });

      // 4. forge doctor: every check passes. The API URL is given on the command line: doctor takes
      // none from a .env (the repository's could send the token anywhere).
      const doctor = await runForge(["doctor", "--dir", appDir, "--api-url", sim.apiUrl, "--token", octo, "--repo", "octo/hello"], work);
      expect(doctor.out).toContain("All 7 checks passed.");
      expect(doctor.code).toBe(0);

      // 5. Merging the plan to the default branch starts the run; it completes with its final PR.
      await git(work, ["add", ".forge"], octo);
      await git(work, ["commit", "-q", "-m", "Forge: the example plan"], octo);
      await git(work, ["push", "-q", "origin", "HEAD:main"], octo);
      let final: { number: number; title: string; head: { ref: string } } | undefined;
      for (let i = 0; i < 240 && !final; i++) {
        await new Promise((r) => setTimeout(r, 1_000));
        const { data } = await person.rest.pulls.list({ owner: "octo", repo: "hello", base: "main", state: "open" });
        final = data.find((p) => /^forge\/hello-[0-9a-f]+\/_integration$/.test(p.head.ref));
      }
      expect(final, "the run's final PR").toBeDefined();
      // The final PR and the tracker's last update are two effects carried out at once: the title may
      // follow the PR by a moment (the tracker is rewritten at most every 5 s).
      let title: string | undefined;
      for (let i = 0; i < 30 && !/\(2\/2 merged, completed\)$/.test(title ?? ""); i++) {
        if (i) await new Promise((r) => setTimeout(r, 1_000));
        const { data: tracker } = await person.rest.issues.listForRepo({
          owner: "octo",
          repo: "hello",
          state: "all",
          labels: LABELS.tracker,
        });
        title = tracker[0]?.title;
      }
      expect(title).toMatch(/\(2\/2 merged, completed\)$/);
      // Every page: each attempt's record is some 30 files.
      const files = await person.paginate(person.rest.pulls.listFiles, {
        owner: "octo",
        repo: "hello",
        pull_number: final!.number,
        per_page: 100,
      });
      expect(files.map((f) => f.filename)).toEqual(
        expect.arrayContaining([expect.stringMatching(/greeting/), expect.stringMatching(/link-greeting/)]),
      );
    },
  );
});
