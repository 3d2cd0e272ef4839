/**
 * README.md's "A first run on the local GitHub", step by step, each `forge` command a process of its
 * own as a person runs them: `forge sim` with a repository, the model key secret and the Forge App
 * (flags only: no control API); `forge app --dir` from the `.env` it wrote; a clone with the printed
 * token; `forge init --dir` on it, the agent chosen, pushed; `forge doctor --repo` all green; the plan
 * pushed — and the run completes on the local GitHub's runner, which runs the workflow `forge init`
 * wrote with Forge's action (`forge-dev/forge/action@v1`) served from this checkout. Every `forge`
 * command runs from Forge's folder, as the README's block says, and is a line of that block.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path, { join } from "node:path";
import { promisify } from "node:util";
import { Octokit } from "@octokit/rest";
import { afterAll, describe, expect, it } from "vitest";
import { LABELS } from "../../src/core/layout.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
/** `forge` from the sources, whatever folder it runs in: tsx found from here, not from the clone. */
const FORGE = ["--import", import.meta.resolve("tsx"), join(ROOT, "src/cli/main.ts")];
const run = promisify(execFile);
const scratch = mkdtempSync(join(tmpdir(), "forge-first-run-sim-"));
const children: ChildProcess[] = [];

afterAll(async () => {
  for (const child of children.reverse()) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const closed = new Promise((r) => child.once("close", r));
    child.kill("SIGTERM");
    await closed;
  }
  rmSync(scratch, { recursive: true, force: true });
}, 60_000);

/** This process's environment without GitHub or App settings: the steps give their own. */
function personal(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of [
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GITHUB_API_URL",
    "APP_ID",
    "PRIVATE_KEY",
    "PRIVATE_KEY_PATH",
    "WEBHOOK_SECRET",
    "PORT",
    "HOST",
  ])
    delete env[name];
  return env;
}

/** `forge <args>` started from the sources, as a person's terminal would; resolves once `ready` matches its output. */
function startForge(args: string[], ready: RegExp, env: NodeJS.ProcessEnv = {}): Promise<{ child: ChildProcess; out: () => string }> {
  const child = spawn(process.execPath, [...FORGE, ...args], {
    cwd: ROOT,
    env: { ...personal(), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let out = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`forge ${args[0]} did not start:\n${out}`)), 60_000);
    const seen = (d: Buffer) => {
      out += d.toString("utf8");
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve({ child, out: () => out });
      }
    };
    child.stdout!.on("data", seen);
    child.stderr!.on("data", (d: Buffer) => void (out += d.toString("utf8")));
    child.once("close", (code) => {
      clearTimeout(timer);
      reject(new Error(`forge ${args[0]} ended (${code}):\n${out}`));
    });
  });
}

/** The README's block of "A first run on the local GitHub": the commands a person types. */
const README_BLOCK = /## A first run on the local GitHub[\s\S]*?```sh\n([\s\S]*?)```/.exec(
  readFileSync(join(ROOT, "README.md"), "utf8"),
)![1]!;
const README_API = "http://127.0.0.1:4000/api/v3";

/**
 * A check that `forge <args>` is a line of the README's block once this run's folders, API and token
 * are written as the README writes them (`../hello`, `./forge-app`, `TOKEN`): the step the test
 * takes is the one a person copies. Returns the arguments unchanged.
 */
function readmeCommands(asWritten: Record<string, string>): (args: string[]) => string[] {
  return (args) => {
    const line = `npx forge ${args.map((a) => asWritten[a] ?? a).join(" ")}`;
    expect(README_BLOCK.split("\n"), line).toContain(line);
    return args;
  };
}

/** `forge <args>` run to its end in `cwd`. */
async function forge(args: string[], cwd: string): Promise<{ code: number; out: string; err: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [...FORGE, ...args], {
      cwd,
      env: personal(),
    });
    return { code: 0, out: stdout, err: stderr };
  } catch (e) {
    const r = e as { code: number; stdout: string; stderr: string };
    return { code: r.code, out: r.stdout, err: r.stderr };
  }
}

async function git(cwd: string, args: string[]): Promise<string> {
  const { stdout } = await run("git", args, {
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

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe("a first run on the local GitHub, as README.md says", () => {
  it(
    "forge sim → forge app → clone → forge init → forge doctor all green → the plan's run completes on the sim's runner",
    { timeout: 420_000 },
    async () => {
      // 1. The local GitHub: a repository, the model key secret, the Forge App (where forge app will listen).
      const appDir = join(scratch, "forge-app");
      const appPort = await freePort();
      const sim = await startForge(
        [
          "sim",
          "--repo",
          "octo/hello",
          "--secret",
          "ANTHROPIC_API_KEY",
          "--forge-app",
          appDir,
          "--forge-app-url",
          `http://127.0.0.1:${appPort}`,
        ],
        /\n {10}its credentials are in .*\n/,
        { ANTHROPIC_API_KEY: "sk-ant-first-run-dummy" },
      );
      const printed = sim.out();
      const api = /^api:\s+(\S+)/m.exec(printed)![1]!;
      const cloneUrl = /^repo:\s+octo\/hello\s+(\S+)/m.exec(printed)![1]!;
      const token = /^user:\s+octo\s+token (\S+)/m.exec(printed)![1]!;
      expect(printed).toMatch(/^executor: runner \(actions from folders: forge-dev\/forge\/action → .*\/action\)$/m);
      expect(printed).toMatch(/^app:\s+forge \(id \d+\) installed on octo\/hello, with the state-branch ruleset/m);
      expect(readFileSync(join(appDir, ".env"), "utf8")).toContain(`GITHUB_API_URL=${api}`);

      // The repository's clone, beside the folder Forge's commands run in (README: `../hello`).
      const work = join(scratch, "hello");
      const asInReadme = readmeCommands({ [appDir]: "./forge-app", [work]: "../hello", [api]: README_API, [token]: "TOKEN" });

      // 2. The App, from the .env forge sim wrote (a short reconcile period: the test waits for it).
      await startForge(asInReadme(["app", "--dir", appDir]), /Forge App listening/, { FORGE_RECONCILE_SECONDS: "5", LOG_LEVEL: "warn" });

      // 3. The repository: cloned with octo's token, set up by forge init (run from Forge's folder, as
      //    every command of the README's block: the clone has no Forge of its own), the agent chosen, pushed.
      await git(scratch, ["clone", "-q", cloneUrl.replace("http://", `http://octo:${token}@`), "hello"]);
      const init = await forge(asInReadme(["init", "--dir", work]), ROOT);
      expect(init.code, init.err).toBe(0);
      expect(init.out).toContain("3. Run `npx forge doctor --repo octo/hello` here");
      // The demo's scripted agent (the runner runs it on this machine), as a person would name a command of theirs.
      const agent = `node ${join(ROOT, "src/demo/bin/forge-demo-agent.mjs")}`;
      writeFileSync(
        join(work, ".github/forge.yml"),
        `${readFileSync(join(work, ".github/forge.yml"), "utf8")}\nagent:\n  adapter: command\n  isolation: none\n  command: ${JSON.stringify(agent)}\n`,
      );
      await git(work, ["add", ".github"]);
      await git(work, ["commit", "-q", "-m", "Forge: the agent workflow and configuration"]);
      await git(work, ["push", "-q", "origin", "HEAD:main"]);
      const doctor = await forge(asInReadme(["doctor", "--repo", "octo/hello", "--dir", appDir, "--api-url", api, "--token", token]), ROOT);
      expect(doctor.out).toContain("forge doctor: octo/hello\n");
      expect(doctor.out.trimEnd().split("\n").at(-1), doctor.out).toMatch(/^All 7 checks passed/);
      expect(doctor.code, doctor.out).toBe(0);

      // 4. The plan merged: the run starts and completes with its final pull request.
      await git(work, ["add", ".forge"]);
      await git(work, ["commit", "-q", "-m", "Forge: the example plan"]);
      await git(work, ["push", "-q", "origin", "HEAD:main"]);
      const person = new Octokit({ baseUrl: api, auth: token });
      // The final PR and the tracker's last update are two effects carried out at once: either may come first.
      let title: string | undefined;
      let final: string | undefined;
      for (let i = 0; i < 300 && !(final && /\(2\/2 merged, completed\)$/.test(title ?? "")); i++) {
        if (i) await new Promise((r) => setTimeout(r, 1_000));
        const { data } = await person.rest.issues.listForRepo({ owner: "octo", repo: "hello", state: "all", labels: LABELS.tracker });
        title = data[0]?.title;
        const { data: pulls } = await person.rest.pulls.list({ owner: "octo", repo: "hello", base: "main", state: "open" });
        final = pulls.map((p) => p.head.ref).find((ref) => /^forge\/hello-[0-9a-f]+\/_integration$/.test(ref));
      }
      expect(title, sim.out()).toMatch(/\(2\/2 merged, completed\)$/);
      expect(final, "the run's final PR").toBeDefined();
      // Every agent job ran the workflow forge init wrote, Forge's action in it, and succeeded.
      const { data: runs } = await person.rest.actions.listWorkflowRunsForRepo({
        owner: "octo",
        repo: "hello",
        event: "workflow_dispatch",
      });
      expect(runs.workflow_runs.length).toBeGreaterThanOrEqual(2);
      for (const r of runs.workflow_runs)
        expect({ path: r.path, conclusion: r.conclusion }).toEqual({
          path: ".github/workflows/forge-agent.yml",
          conclusion: "success",
        });
    },
  );
});
