/**
 * The credential probe (test/security/agent-probe.test.ts) as users run the action: the agent
 * workflow template dispatched on the local GitHub, the sim runner starting action/dist as its own
 * process with the inputs in its environment — `INPUT_GITHUB-TOKEN` (the job's token) and
 * `INPUT_ANTHROPIC-API-KEY` (the repository secret) sit in that process's /proc/<pid>/environ, as on
 * GitHub. The probe agent reads every process's environment, tries sudo, the runner's temp files
 * and the event payload, and commits what it found; it finds neither.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Octokit } from "@octokit/rest";
import { afterAll, describe, expect, it } from "vitest";
import { Git } from "../../action/src/git.js";
import { startRun } from "../../src/core/decide.js";
import { stateBranch } from "../../src/core/layout.js";
import { forgeConfigSchema } from "../../src/core/schemas/config.js";
import { createSimExecutor } from "../../src/local-github/runner/sim-executor.js";
import { createSim, type Sim } from "../../src/local-github/server.js";
import { taskFile, vendoredActionFiles } from "../action/world.js";

const PRIVILEGED = process.getuid?.() === 0 || spawnSync("sudo", ["-n", "true"]).status === 0;
const OWNER = "acme";
const REPO = "probed";
const RUN = "r1";
const MODEL_KEY = "sk-ant-e2eProbeModelKey8Hq3Tz6Wm1";

const PROBE = `#!/bin/sh
R="$PWD/probe-report.txt"
{
  echo "whoami: uid=$(id -u)"
  echo "--- environ"
  for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < "$f" 2>/dev/null; done
  echo "--- sudo"
  if sudo -n true 2>/dev/null; then echo SUDO-WORKS; fi
  echo "--- temp"
  for d in /tmp/forge-sim-* "\${RUNNER_TEMP:-/nonexistent}"; do find "$d" -maxdepth 6 -type f -size -200k 2>/dev/null | while read -r f; do cat "$f" 2>/dev/null; done; done
  echo "--- event"
  cat "\${GITHUB_EVENT_PATH:-/nonexistent}" 2>/dev/null
  echo "--- env"
  env
  echo "--- end"
} > "$R" 2>&1
cat > "$FORGE_WALKTHROUGH_PATH" <<'WT'
---
task: probe
status: success
summary: probed
confidence: 0.9
tests: []
---
## Summary

Probed.
WT
`;

const sims: Sim[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const s of sims) await s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Runs the probe as a task job of the agent workflow; its report and the job's log. */
async function probeJob(isolation: "auto" | "none"): Promise<{ report: string; log: string }> {
  const s = await createSim();
  sims.push(s);
  const executor = createSimExecutor({ concurrency: 1, killGraceMs: 500, secrets: { "*": { ANTHROPIC_API_KEY: MODEL_KEY } } });
  s.onWorkflowDispatch(executor.handler);
  const workflow = readFileSync("templates/workflows/forge-agent.yml", "utf8").replace(
    /uses: forge-dev\/forge\/action@v1/,
    "uses: ./.github/actions/forge",
  );
  await s.control.createRepo({
    owner: OWNER,
    name: REPO,
    private: true,
    files: {
      "README.md": "# probed\n",
      "probe.sh": PROBE,
      ".github/workflows/forge-agent.yml": workflow,
      ".github/forge.yml": `heartbeat_interval_seconds: 1\nstale_threshold_seconds: 120\nagent:\n  adapter: command\n  isolation: ${isolation}\n  command: sh ./probe.sh\n`,
      ".forge/stages.yml": '"1": [single]\n',
      ".forge/plans/p/plan.md": "# Plan\n\nProbe.\n",
      ".forge/plans/p/tasks/probe.md": taskFile({ id: "probe", title: "Probe", body: "## Description\n\nProbe.\n" }),
      ...vendoredActionFiles(),
    },
  });
  const token = s.control.userToken(OWNER);
  const gh = new Octokit({ baseUrl: s.apiUrl, auth: token });
  await gh.rest.issues.createLabel({
    owner: OWNER,
    repo: REPO,
    name: "forge:task",
    color: "5319e7",
    description: "A Forge task pull request",
  });
  // What the App does at run start: the integration branch, the journal, the task branch.
  const dir = mkdtempSync(path.join(tmpdir(), "forge-probe-e2e-"));
  dirs.push(dir);
  const local = new Git({
    dir,
    remote: `${s.gitUrl}/${OWNER}/${REPO}.git`,
    token,
    identity: { name: "Forge App", email: "app@forge.invalid" },
  });
  await local.run(["init", "--quiet"]);
  const planCommit = (await local.fetchBranch("main"))!;
  const journal = startRun(
    {
      runId: RUN,
      planId: "p",
      planCommit,
      dagHash: "0".repeat(64),
      integrationBranch: `forge/${RUN}/_integration`,
      baseBranch: "main",
      nodes: [{ id: "probe", kind: "task" as const, agentType: "1" as const, title: "Probe", dependencies: [] }],
    },
    Date.now(),
    forgeConfigSchema.parse({}),
  ).journal;
  const blob = (await local.run(["hash-object", "-w", "--stdin"], { input: JSON.stringify(journal) })).stdout.trim();
  const tree = (await local.run(["mktree"], { input: `100644 blob ${blob}\tjournal.json\n` })).stdout.trim();
  const stateCommit = (await local.run(["commit-tree", tree, "-m", "journal"])).stdout.trim();
  const branch = journal.tasks[0]!.branch!;
  await local.run([
    "push",
    "--quiet",
    "origin",
    `${planCommit}:refs/heads/forge/${RUN}/_integration`,
    `${stateCommit}:refs/heads/${stateBranch(RUN)}`,
    `${planCommit}:refs/heads/${branch}`,
  ]);

  const res = await gh.request("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", {
    owner: OWNER,
    repo: REPO,
    workflow_id: "forge-agent.yml",
    ref: branch,
    inputs: { run_id: RUN, task_id: "probe", attempt: "1", context: "" },
    return_run_details: true,
  });
  const runId = (res.data as unknown as { workflow_run_id: number }).workflow_run_id;
  const deadline = Date.now() + 150_000;
  for (;;) {
    const { data } = await gh.rest.actions.getWorkflowRun({ owner: OWNER, repo: REPO, run_id: runId });
    if (data.status === "completed") break;
    if (Date.now() > deadline) throw new Error(`run ${runId} still ${data.status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const log = s.core.state.runs
    .get(runId)!
    .jobs.map((j) => j.log)
    .join("");
  const { data: file } = await gh.rest.repos.getContent({ owner: OWNER, repo: REPO, path: "probe-report.txt", ref: branch });
  return { report: Buffer.from((file as { content: string }).content, "base64").toString("utf8"), log };
}

describe("the probe through the action on the local GitHub", () => {
  it.runIf(PRIVILEGED)(
    "finds neither the job token nor the model key in any process, temp file or payload",
    { timeout: 180_000 },
    async () => {
      const { report, log } = await probeJob("auto");
      expect(log).toContain("The agent runs as the OS user forge-agent");
      // The probe ran and read things: its own environment, the event payload.
      expect(report).toContain("--- end");
      expect(report).toContain("FORGE_TASK_ID=probe");
      expect(Number(/whoami: uid=(\d+)/.exec(report)![1])).not.toBe(process.getuid!());
      expect(report).not.toContain("SUDO-WORKS");
      // Neither the job's token (a ghs_ installation-style token the sim minted for the run) nor the model key.
      expect(report).not.toMatch(/ghs_[A-Za-z0-9]{20,}/);
      expect(report).not.toContain("INPUT_GITHUB-TOKEN=");
      expect(report.includes(MODEL_KEY), "the model key was found").toBe(false);
    },
  );

  // The attack as it was: the same probe as the runner's user reads the action's process environment.
  it("as the runner's user (isolation: none) the same probe finds the job token and the model key", { timeout: 180_000 }, async () => {
    const { report } = await probeJob("none");
    expect(Number(/whoami: uid=(\d+)/.exec(report)![1])).toBe(process.getuid!());
    expect(report).toMatch(/INPUT_GITHUB-TOKEN=ghs_[A-Za-z0-9]{20,}/);
    expect(report).toContain(`INPUT_ANTHROPIC-API-KEY=${MODEL_KEY}`);
  });
});
