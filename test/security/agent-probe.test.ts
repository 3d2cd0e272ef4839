/**
 * Attack: a prompt-injected agent runs Bash inside the job and looks for the job's credentials.
 * Before, it ran as the runner's user and read the job token and the model key from the action's
 * own process (`/proc/<pid>/environ`: `INPUT_GITHUB-TOKEN`, `INPUT_ANTHROPIC-API-KEY`), and could
 * use the runner's `sudo`.
 *
 * The probe below is a `command` agent run through the real action (`run()`, the agent layer's
 * stages, the runner's git) on a task branch. It reads every process's environment and command
 * line, tries `sudo -n`, reads the runner's temp folder and the event payload, dumps its own
 * environment and git configuration, and commits what it found. With the agent as its own OS user
 * (`agent.isolation`, default `auto`: this machine runs the tests as root) it finds neither
 * secret; the same probe with `isolation: none` finds the token — the probe is able to see.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { run } from "../../action/src/runner.js";
import { makeWorld, RUN, sh, type World } from "../action/world.js";
import { GIT_USER, runnerProcess, serveOrigin, workflowEnv } from "../action/job.js";

/** Whether this machine lets the runner act as another user (root, or passwordless sudo). */
const PRIVILEGED = process.getuid?.() === 0 || spawnSync("sudo", ["-n", "true"]).status === 0;

const JOB_TOKEN = "ghs_probeJobToken7Xq2Lm9Wd4Rt6Yp1";
const MODEL_KEY = "sk-ant-probeModelKey3Vb8Nc5Zx2Kj7";

const { summaryFile, summary } = runnerProcess();
let world: World | undefined;
afterEach(() => {
  world?.cleanup();
  world = undefined;
});

/** The probe: every route to a credential it can try from a shell, written to probe-report.txt. */
function probeScript(runnerTemp: string): string {
  return `#!/bin/sh
R="$PWD/probe-report.txt"
{
  echo "whoami: uid=$(id -u) gid=$(id -g) groups=$(id -G)"
  echo "--- environ of every process"
  for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < "$f" 2>/dev/null; done
  echo "--- cmdline of every process"
  for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < "$f" 2>/dev/null; echo; done
  echo "--- sudo"
  if sudo -n true 2>/dev/null; then echo "SUDO-WORKS"; sudo -n sh -c 'cat /proc/[0-9]*/environ' 2>/dev/null | tr '\\0' '\\n'; fi
  echo "--- runner temp"
  find '${runnerTemp}' -type f 2>/dev/null | while read -r f; do cat "$f" 2>/dev/null; done
  echo "--- event payload"
  cat "\${GITHUB_EVENT_PATH:-/nonexistent}" 2>/dev/null
  echo "--- own environment"
  env
  echo "--- git config"
  git config --list --show-origin 2>&1
  echo "--- end"
} > "$R" 2>&1
mkdir -p src && echo probed > src/probed.txt
cat > "$FORGE_WALKTHROUGH_PATH" <<'WT'
---
task: t1
status: success
summary: probed
confidence: 0.9
tests: []
---
## Summary

Probed.
WT
`;
}

async function probe(files: Record<string, string> = {}): Promise<string> {
  world?.cleanup();
  const w = (world = makeWorld({ files }));
  const script = path.join(w.dir, "probe.sh");
  writeFileSync(script, probeScript(w.temp), { mode: 0o755 });
  const inputs = {
    "github-token": JOB_TOKEN,
    "anthropic-api-key": MODEL_KEY,
    "run-id": RUN,
    "task-id": "t1",
    attempt: "1",
    adapter: "command",
    command: script,
    ...GIT_USER,
  };
  // The event payload the runner writes for the job (GitHub's GITHUB_EVENT_PATH).
  const event = path.join(w.temp, "event.json");
  writeFileSync(event, JSON.stringify({ inputs: { run_id: RUN, task_id: "t1", attempt: "1" } }));
  workflowEnv(w, inputs, summaryFile, { GITHUB_SERVER_URL: serveOrigin(w), GITHUB_EVENT_PATH: event, GITHUB_RUN_ID: "78" });
  await run({ github: w.github });
  const head = sh(w.origin, ["rev-parse", `refs/heads/${w.branch}`]);
  const report = w.show(head, "probe-report.txt");
  expect(report, `the probe's report was not pushed; summary:\n${summary()}`).toBeDefined();
  return report!;
}

describe("the agent reaches no credential of the job", () => {
  it.runIf(PRIVILEGED)(
    "as its own OS user: no process environment, sudo, temp file, payload or git config hands it the job token or the model key",
    { timeout: 120_000 },
    async () => {
      const report = await probe();
      // The probe ran and saw things (its own environment, other processes' command lines).
      expect(report).toContain("--- end");
      expect(report).toContain("FORGE_TASK_ID=t1");
      expect(report).toMatch(/whoami: uid=(\d+)/);
      const uid = Number(/whoami: uid=(\d+)/.exec(report)![1]);
      expect(uid).not.toBe(process.getuid!());
      expect(report).not.toContain("SUDO-WORKS");
      expect(report.includes(JOB_TOKEN), "the job token was found").toBe(false);
      expect(report.includes(MODEL_KEY), "the model key was found").toBe(false);
      expect(report).not.toContain("INPUT_GITHUB-TOKEN=");
    },
  );

  // On GitHub the runner starts the action with INPUT_GITHUB-TOKEN in its environment, so it is in
  // /proc/<pid>/environ; a test can only set process.env, which /proc does not show. The control
  // therefore looks for what is in this test process's own initial environment: the probe reads it
  // as the runner's user, and cannot as its own.
  it(
    "the same probe as the runner's user (isolation: none) reads the runner's process environment: the probe can see",
    { timeout: 120_000 },
    async () => {
      const marker = readFileSync("/proc/self/environ", "utf8")
        .split("\0")
        .find((e) => e.startsWith("VITEST"));
      expect(marker, "no VITEST variable in this process's initial environment").toBeDefined();
      const report = await probe({ ".github/forge.yml": "agent:\n  isolation: none\n" });
      expect(report).toContain("--- end");
      expect(Number(/whoami: uid=(\d+)/.exec(report)![1])).toBe(process.getuid!());
      expect(report.split("--- cmdline")[0]).toContain(marker);
      if (!PRIVILEGED) return;
      const isolated = await probe();
      expect(isolated.split("--- cmdline")[0]).not.toContain(marker);
    },
  );

  // Where the runner can be neither root nor use sudo, `isolation: user` refuses to run the agent at all.
  it.runIf(!PRIVILEGED)("without root or passwordless sudo, isolation: user fails the job and says why", { timeout: 120_000 }, async () => {
    await expect(probe({ ".github/forge.yml": "agent:\n  isolation: user\n" })).rejects.toThrow();
    expect(process.exitCode).toBe(1);
    const printed = vi
      .mocked(process.stdout.write)
      .mock.calls.map((c) => String(c[0]))
      .join("");
    expect(printed).toContain("agent.isolation is 'user', but the agent cannot run as its own user here");
  });
});
