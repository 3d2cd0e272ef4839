/**
 * Attack: code the agents wrote runs as the runner, or outlives the agent.
 * - The refinery's test command (the test stage, every fix cycle's retest) runs `npm test` or
 *   whatever the plan says over the agents' code. As the runner's user it reads the runner's own
 *   process environment (`/proc/<pid>/environ`: the job token, the model key) and uses its sudo.
 * - A process the agent starts with `setsid` leaves the session's process group: a kill of the
 *   group misses it, and it outlives the session, later stages and the job.
 *
 * Here, with the agent's own user (root or passwordless sudo, as in CI): the test command runs as
 * that user with the agent's environment, and a daemon left by the test command or by an agent
 * session is gone when it ends. The end-to-end view of the same is agent-probe-e2e.test.ts.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { prepareAgentUser, releaseAgentUser, type AgentUser } from "../../src/agent/isolation.js";
import { spawnAgent } from "../../src/agent/spawn/index.js";
import { runStages } from "../../src/agent/stages/index.js";
import { cleanupTempDirs, tempDir } from "../agent/helpers.js";

const PRIVILEGED = process.getuid?.() === 0 || spawnSync("sudo", ["-n", "true"]).status === 0;
const TOKEN = "ghs_processProbeJobToken4Kd9Xw2Lq7";
const KEY = "sk-ant-processProbeModelKey6Tn1Rv8";

let user: AgentUser | undefined;
const daemons: number[] = [];
beforeAll(async () => {
  if (PRIVILEGED) user = await prepareAgentUser("user", () => undefined);
});
afterEach(() => {
  // A daemon the old code left behind: this test's own, by pid.
  for (const pid of daemons.splice(0)) if (alive(pid)) process.kill(pid, "SIGKILL");
  cleanupTempDirs();
});
afterAll(async () => {
  if (user) await releaseAgentUser(user);
});

function needsPrivilege(ctx: TestContext): AgentUser {
  if (!PRIVILEGED) {
    if (process.env.CI) throw new Error("CI must run this: it needs root or passwordless sudo");
    ctx.skip("the agent's own user needs root or passwordless sudo");
  }
  return user!;
}

/** A live process (a zombie is dead: only its reaping is left). */
function alive(pid: number): boolean {
  const status = existsSync(`/proc/${pid}/status`) ? readFileSync(`/proc/${pid}/status`, "utf8") : "";
  return status !== "" && !/^State:\s+[ZX]/m.test(status);
}

/** A marker of this process's initial environment, which /proc shows (process.env is not what /proc shows). */
const marker = () =>
  readFileSync("/proc/self/environ", "utf8")
    .split("\0")
    .find((e) => e.startsWith("VITEST"))!;

/** The refinery's test stage alone, with `testCommand`, in a fresh work tree. */
async function testStage(testCommand: string, runAs: AgentUser, files: Record<string, string> = {}) {
  const dir = tempDir("forge-procs-");
  const repo = path.join(dir, "repo");
  mkdirSync(repo);
  for (const [f, text] of Object.entries(files)) writeFileSync(path.join(repo, f), text);
  const out = await runStages({
    agentType: "refinery",
    stages: ["test"],
    taskContext: { runId: "r1", taskId: "ref", attempt: 1, task: "---\nid: ref\n---\n## Description\nVerify.", testCommand },
    workdir: repo,
    sessionDir: path.join(dir, "session"),
    spawn: {
      adapter: "command",
      command: "true",
      args: [],
      // What the runner's environment may hold: none of it reaches the test command.
      env: { PATH: process.env.PATH, HOME: dir, "INPUT_GITHUB-TOKEN": TOKEN, GITHUB_TOKEN: TOKEN, ANTHROPIC_API_KEY: KEY },
      forgeCli: false,
      runAs,
    },
  });
  const results = JSON.parse(readFileSync(path.join(dir, "session", "sentinel", "initial", "verification-results.json"), "utf8")) as {
    checks: Array<{ output: string }>;
  };
  return { out, repo, output: readFileSync(path.join(dir, "session", "sentinel", "initial", "test-output.log"), "utf8"), results };
}

describe("code the agents wrote runs as the agent, and dies with it", () => {
  it(
    "the refinery's test command runs as the agent's user with the agent's environment: no token, no key, no sudo, no runner environment",
    {
      timeout: 60_000,
    },
    async (ctx) => {
      const u = needsPrivilege(ctx);
      const probe = [
        'echo "uid=$(id -u)"',
        "env",
        `echo "--- runner"; tr '\\0' '\\n' 2>/dev/null < /proc/${process.pid}/environ`,
        "if sudo -n true 2>/dev/null; then echo SUDO-WORKS; fi",
        "echo '--- end'",
      ].join("\n");
      const { out, output, results } = await testStage("sh probe.sh", u, { "probe.sh": probe });
      expect(out.exitCode).toBe(0);
      expect(output).toContain("--- end");
      expect(output).toContain(`uid=${u.uid}\n`);
      expect(output).toContain("FORGE_TASK_ID=ref");
      expect(output).not.toContain(marker());
      expect(output).not.toContain("SUDO-WORKS");
      expect(output).not.toContain(TOKEN);
      expect(output).not.toContain(KEY);
      // Its output still reaches the next prompt, bounded.
      expect(results.checks[0]!.output).toContain("--- end");
    },
  );

  it("a daemon the test command leaves is gone when the test command ends", { timeout: 60_000 }, async (ctx) => {
    const u = needsPrivilege(ctx);
    const { repo } = await testStage("setsid sh -c 'sleep 60' </dev/null >/dev/null 2>&1 & echo $! > daemon.pid", u);
    const pid = Number(readFileSync(path.join(repo, "daemon.pid"), "utf8"));
    daemons.push(pid);
    expect(pid).toBeGreaterThan(0);
    expect(alive(pid), "the test command's daemon outlived it").toBe(false);
  });

  it("a daemon an agent session leaves is gone when the session ends", { timeout: 60_000 }, async (ctx) => {
    const u = needsPrivilege(ctx);
    const dir = tempDir("forge-procs-");
    const repo = path.join(dir, "repo");
    mkdirSync(repo);
    const r = await spawnAgent({
      adapter: "command",
      command: "sh",
      args: ["-c", "setsid sh -c 'sleep 60' </dev/null >/dev/null 2>&1 & echo $! > daemon.pid; echo FORGE_EXIT=0"],
      prompt: "leave a daemon",
      cwd: repo,
      sessionDir: path.join(dir, "session"),
      env: { PATH: process.env.PATH },
      forgeCli: false,
      runAs: u,
    });
    expect(r.exitCode).toBe(0);
    const pid = Number(readFileSync(path.join(repo, "daemon.pid"), "utf8"));
    daemons.push(pid);
    expect(pid).toBeGreaterThan(0);
    expect(alive(pid), "the session's daemon outlived it").toBe(false);
  });
});
