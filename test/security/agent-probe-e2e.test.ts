/**
 * The credential probe (test/security/agent-probe.test.ts) as users run the action: the agent
 * workflow template dispatched on the local GitHub, the sim runner starting action/dist as its own
 * process with the inputs in its environment — `INPUT_GITHUB-TOKEN` (the job's token) and
 * `INPUT_ANTHROPIC-API-KEY` (the repository secret) sit in that process's /proc/<pid>/environ, as on
 * GitHub — and, as on GitHub's hosted runners, as a user with passwordless `sudo` (when this test
 * runs as root it creates one, `forge-runner-<hex>`, and the sim runner starts every step as it).
 *
 * The probe looks from every process the runner starts, not only from the agent's:
 * - the agent itself: every process's environment, sudo, the runner's temp files, the event payload;
 * - the task's `test_command` (a refinery's test stage), which runs the agents' code;
 * - a daemon the agent leaves behind (`setsid`), which must be gone with the agent's session;
 * - a git filter driver the agent plants in `.git/config` and `.git/info/attributes`, which the
 *   runner's `git add` must never run;
 * - a report file the agent links to the action's own `/proc/<pid>/environ` (its question), which
 *   the runner must not read through the link.
 * None finds the job token or the model key; `sudo -n` fails for each; no process of the agent's
 * user outlives the job, and the user is gone.
 */
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { Git } from "../../action/src/git.js";
import { startRun } from "../../src/core/decide/index.js";
import { attemptDir, stateBranch } from "../../src/core/layout.js";
import { forgeConfigSchema } from "../../src/core/schemas/config.js";
import { createSimExecutor, type SimExecutor } from "../../src/local-github/runner/sim-executor.js";
import { createSim, type Sim } from "../../src/local-github/server.js";
import { createRunnerUser, removeRunnerUser, runnerUserPlan, type RunnerUser } from "../helpers/runner-user.js";
import { taskFile, vendoredActionFiles } from "../action/world.js";

const PLAN = runnerUserPlan();
const OWNER = "acme";
const REPO = "probed";
const RUN = "r1";
const MODEL_KEY = "sk-ant-e2eProbeModelKey8Hq3Tz6Wm1";
/** How long the agent's daemon sleeps before it probes: past the agent's session, within the job. */
const DAEMON_SLEEP_S = 2;

/** The probe: `sh probe.sh <where>` writes what it found to `<reports>/<where>.txt`. */
const probe = (reports: string) => `#!/bin/sh
R="${reports}/$1.txt"
{
  echo "whoami: uid=$(id -u)"
  echo "--- environ"
  for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < "$f" 2>/dev/null; done
  echo "--- sudo"
  if sudo -n true 2>/dev/null; then echo SUDO-WORKS; sudo -n sh -c 'cat /proc/[0-9]*/environ' 2>/dev/null | tr '\\0' '\\n'; fi
  echo "--- temp"
  for d in /tmp/forge-sim-* "\${RUNNER_TEMP:-/nonexistent}"; do find "$d" -maxdepth 6 -type f -size -200k 2>/dev/null | while read -r f; do cat "$f" 2>/dev/null; done; done
  echo "--- event"
  cat "\${GITHUB_EVENT_PATH:-/nonexistent}" 2>/dev/null
  echo "--- env"
  env
  echo "--- end"
} > "$R" 2>&1
exit 0
`;

const WALKTHROUGH = `cat > "$FORGE_WALKTHROUGH_PATH" <<'WT'
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

/** The agent: probes, then leaves a daemon, plants a filter driver and links its question to the action's environment. */
const EVERYWHERE_AGENT = (reports: string) => `#!/bin/sh
P="$PWD/probe.sh"
sh "$P" agent
# A daemon outside the session's process group, probing after the session ended.
setsid sh -c 'sleep ${DAEMON_SLEEP_S}; sh "$0" daemon' "$P" </dev/null >/dev/null 2>&1 &
echo $! > "${reports}/daemon.pid"
# A filter driver for the runner's git add.
git config filter.probe.clean "sh '$P' filter >/dev/null 2>&1; cat"
git config filter.probe.required true
mkdir -p .git/info && echo '* filter=probe' >> .git/info/attributes
mkdir -p src && echo probed > src/probed.txt
# The question, linked to the environment of the action's own process (this job's: it runs from the work tree).
for p in /proc/[0-9]*; do
  case "$(tr '\\0' ' ' 2>/dev/null < "$p/cmdline")" in *"$PWD/.github/actions/forge/dist/index.js"*) ACTION=\${p#/proc/};; esac
done
echo "action pid: $ACTION" > "${reports}/action.pid"
ln -sf "/proc/$ACTION/environ" "$FORGE_QUESTION_FILE"
exit 3
`;

const sims: Sim[] = [];
const executors: SimExecutor[] = [];
const dirs: string[] = [];
let runner: RunnerUser | undefined;
beforeAll(() => {
  if (PLAN.kind === "create") runner = createRunnerUser();
});
afterAll(async () => {
  for (const s of sims) await s.close();
  for (const e of executors) e.dispose();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  if (runner) removeRunnerUser(runner);
});

/** Skips with the reason when this machine cannot run the action as a user with passwordless sudo; never in CI. */
function needsRunnerUser(ctx: TestContext): void {
  if (PLAN.kind !== "skip") return;
  if (process.env.CI) throw new Error(`CI must run the probe through the action: ${PLAN.reason}`);
  ctx.skip(PLAN.reason);
}

interface ProbeJob {
  isolation: "auto" | "none";
  agent: string;
  task: { type: "1" | "refinery"; testCommand?: string };
  stages: string;
}

const REPORTS = ["agent", "test-command", "daemon", "filter", "daemon.pid", "action.pid"];
/**
 * Where the probes report, whatever user they run as: files of this process's that everyone may
 * write (the end of the job removes the files the agent's user left in /tmp; not these).
 */
function reportsDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), "forge-probe-reports-"));
  chmodSync(d, 0o755);
  for (const name of REPORTS) {
    const f = path.join(d, name.includes(".") ? name : `${name}.txt`);
    writeFileSync(f, "");
    chmodSync(f, 0o666);
  }
  dirs.push(d);
  return d;
}

/** Runs a task job of the agent workflow; its log and the branch's files. */
async function probeJob(
  o: ProbeJob,
  reports: string,
): Promise<{ log: string; endedAt: number; file: (p: string) => Promise<string | undefined> }> {
  const s = await createSim();
  sims.push(s);
  const executor = createSimExecutor({
    concurrency: 1,
    killGraceMs: 500,
    secrets: { "*": { ANTHROPIC_API_KEY: MODEL_KEY } },
    ...(runner ? { runAs: { uid: runner.uid, gid: runner.gid, user: runner.user, home: runner.home } } : {}),
  });
  executors.push(executor);
  s.onWorkflowDispatch(executor.handler);
  const workflow = readFileSync("templates/workflows/forge-agent.yml", "utf8").replace(
    /uses: forge-dev\/forge\/action@v1/,
    "uses: ./.github/actions/forge",
  );
  const task =
    o.task.type === "1"
      ? taskFile({ id: "probe", title: "Probe", body: "## Description\n\nProbe.\n" })
      : taskFile({ id: "probe", title: "Probe", type: "refinery", body: "## Description\n\nProbe.\n" }).replace(
          "estimated_complexity: small\n",
          `estimated_complexity: small\ntest_command: ${JSON.stringify(o.task.testCommand)}\n`,
        );
  await s.control.createRepo({
    owner: OWNER,
    name: REPO,
    private: true,
    files: {
      "README.md": "# probed\n",
      "probe.sh": probe(reports),
      "agent.sh": o.agent,
      ".github/workflows/forge-agent.yml": workflow,
      ".github/forge.yml": `heartbeat_interval_seconds: 1\nstale_threshold_seconds: 120\nagent:\n  adapter: command\n  isolation: ${o.isolation}\n  command: sh ./agent.sh\n`,
      ".forge/stages.yml": o.stages,
      ".forge/plans/p/plan.md": "# Plan\n\nProbe.\n",
      ".forge/plans/p/tasks/probe.md": task,
      ...vendoredActionFiles(),
    },
    // As README.md's setup asks: the runner opens the task PR with the job's token.
    actionsMayCreatePullRequests: true,
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
  const branch = await startTheRun(s, token, o.task.type);
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
  const endedAt = Date.now();
  const log = s.core.state.runs
    .get(runId)!
    .jobs.map((j) => j.log)
    .join("");
  const file = async (p: string) => {
    const r = await gh.rest.repos.getContent({ owner: OWNER, repo: REPO, path: p, ref: branch }).catch(() => undefined);
    return r ? Buffer.from((r.data as { content: string }).content, "base64").toString("utf8") : undefined;
  };
  return { log, endedAt, file };
}

/** What the App does at run start: the integration branch, the journal, the task branch; the task branch. */
async function startTheRun(s: Sim, token: string, type: "1" | "refinery"): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), "forge-probe-e2e-"));
  const gitTemp = mkdtempSync(path.join(tmpdir(), "forge-probe-git-"));
  dirs.push(dir, gitTemp);
  const local = new Git({
    dir,
    remote: `${s.gitUrl}/${OWNER}/${REPO}.git`,
    token,
    identity: { name: "Forge App", email: "app@forge.invalid" },
    tempDir: gitTemp,
  });
  await local.run(["init", "--quiet"]);
  const planCommit = (await local.fetchBranch("main"))!;
  const kind = type === "refinery" ? ("refinery" as const) : ("task" as const);
  const journal = startRun(
    {
      runId: RUN,
      planId: "p",
      planCommit,
      dagHash: "0".repeat(64),
      integrationBranch: `forge/${RUN}/_integration`,
      baseBranch: "main",
      nodes: [{ id: "probe", kind, agentType: type, title: "Probe", dependencies: [] }],
    },
    Date.now(),
    forgeConfigSchema.parse({}),
  ).journal;
  const blob = (await local.run(["hash-object", "-w", "--stdin"], { input: JSON.stringify(journal) })).stdout.trim();
  const tree = (await local.run(["mktree"], { input: `100644 blob ${blob}\tjournal.json\n` })).stdout.trim();
  const stateCommit = (await local.run(["commit-tree", tree, "-m", "journal"])).stdout.trim();
  const branch = journal.tasks[0]!.attempt!.branch!;
  await local.run([
    "push",
    "--quiet",
    "origin",
    `${planCommit}:refs/heads/forge/${RUN}/_integration`,
    `${stateCommit}:refs/heads/${stateBranch(RUN)}`,
    `${planCommit}:refs/heads/${branch}`,
  ]);
  return branch;
}

/** A report, when the probe wrote one. */
const read = (f: string) => (existsSync(f) ? readFileSync(f, "utf8") || undefined : undefined);
const uidOf = (report: string) => Number(/whoami: uid=(\d+)/.exec(report)![1]);
const BOOT_MS = Number(/^btime (\d+)$/m.exec(readFileSync("/proc/stat", "utf8"))![1]) * 1000;
const TICK_MS = 1000 / Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim() || 100);

/**
 * Live processes (not zombies) with `uid` as any of their uids, read from /proc, started before
 * `beforeMs`: once the job's user is deleted another test's new user may get its uid, but not
 * before.
 */
function processesOf(uid: number, beforeMs: number): string[] {
  return readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      const status = read(`/proc/${p}/status`) ?? "";
      const ids = /^Uid:\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)/m.exec(status)?.slice(1).map(Number) ?? [];
      const stat = read(`/proc/${p}/stat`) ?? "";
      const startedMs = BOOT_MS + Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]) * TICK_MS;
      return ids.includes(uid) && !/^State:\s+[ZX]/m.test(status) && startedMs < beforeMs;
    });
}
/** The uid the action ran as: the runner's user. */
const runnerUid = () => runner?.uid ?? process.getuid!();

/** A probe's report holds no credential, and it was not the runner's user nor could use sudo. */
function expectNothingFound(report: string, what: string): void {
  expect(report, what).toContain("--- end");
  expect(uidOf(report), `${what} ran as the runner's user`).not.toBe(runnerUid());
  expect(report, `${what}: sudo worked`).not.toContain("SUDO-WORKS");
  expect(report, `${what}: the job token`).not.toMatch(/ghs_[A-Za-z0-9]{20,}/);
  expect(report, `${what}: the action's environment`).not.toContain("INPUT_GITHUB-TOKEN=");
  expect(report.includes(MODEL_KEY), `${what}: the model key`).toBe(false);
}

describe("the probe through the action on the local GitHub, the runner's user with passwordless sudo", () => {
  it("finds neither the job token nor the model key in any process, temp file or payload", { timeout: 180_000 }, async (ctx) => {
    needsRunnerUser(ctx);
    const reports = reportsDir();
    const { log } = await probeJob(
      { isolation: "auto", agent: `sh ./probe.sh agent\n${WALKTHROUGH}`, task: { type: "1" }, stages: '"1": [single]\n' },
      reports,
    );
    expect(log).toMatch(/The agent runs as the OS user forge-agent-[0-9a-f]{8} \(uid \d+\)/);
    const report = read(path.join(reports, "agent.txt"))!;
    expect(report).toContain("FORGE_TASK_ID=probe");
    expectNothingFound(report, "the agent");
  });

  // The attack as it was: the same probe as the runner's user reads the action's process environment.
  it("as the runner's user (isolation: none) the same probe finds the job token and the model key", { timeout: 180_000 }, async (ctx) => {
    needsRunnerUser(ctx);
    const reports = reportsDir();
    await probeJob(
      { isolation: "none", agent: `sh ./probe.sh agent\n${WALKTHROUGH}`, task: { type: "1" }, stages: '"1": [single]\n' },
      reports,
    );
    const report = read(path.join(reports, "agent.txt"))!;
    expect(uidOf(report)).toBe(runnerUid());
    expect(report).toMatch(/INPUT_GITHUB-TOKEN=ghs_[A-Za-z0-9]{20,}/);
    expect(report).toContain(`INPUT_ANTHROPIC-API-KEY=${MODEL_KEY}`);
    expect(report).toContain("SUDO-WORKS");
  });

  describe("from everything the runner starts on the agent's behalf", () => {
    let job: Promise<{ reports: string; log: string; endedAt: number; file: (p: string) => Promise<string | undefined> }> | undefined;
    /** One refinery job: test command, then the agent (daemon, filter, linked question); shared by the checks below. */
    const everywhere = () =>
      (job ??= (async () => {
        const reports = reportsDir();
        const r = await probeJob(
          {
            isolation: "auto",
            agent: EVERYWHERE_AGENT(reports),
            task: { type: "refinery", testCommand: "sh ./probe.sh test-command" },
            stages: "refinery: [test, single]\n",
          },
          reports,
        );
        return { reports, ...r };
      })());

    it("the test command runs as the agent's user: no token, no key, no sudo", { timeout: 180_000 }, async (ctx) => {
      needsRunnerUser(ctx);
      const { reports, log } = await everywhere();
      const report = read(path.join(reports, "test-command.txt"));
      expect(report, `the test command did not run; log:\n${log.slice(-3000)}`).toBeDefined();
      expectNothingFound(report!, "the test command");
      expect(uidOf(report!)).toBe(uidOf(read(path.join(reports, "agent.txt"))!));
    });

    it(
      "a daemon the agent left is gone with its session: it never reports, and no process of the agent's user survives the job",
      { timeout: 180_000 },
      async (ctx) => {
        needsRunnerUser(ctx);
        const { reports, endedAt, log } = await everywhere();
        const agent = read(path.join(reports, "agent.txt"))!;
        expectNothingFound(agent, "the agent");
        const pid = Number(read(path.join(reports, "daemon.pid")));
        expect(pid).toBeGreaterThan(0);
        // Past the daemon's sleep, counted from the end of the job.
        await new Promise((r) => setTimeout(r, (DAEMON_SLEEP_S + 1) * 1000));
        expect(read(path.join(reports, "daemon.txt")), "the daemon outlived the agent and probed").toBeUndefined();
        expect(existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(read(`/proc/${pid}/status`) ?? ""), "the daemon is alive").toBe(false);
        expect(processesOf(uidOf(agent), endedAt), "processes of the agent's user").toEqual([]);
        // The job's agent user is gone too.
        const name = /The agent runs as the OS user (forge-agent-[0-9a-f]{8})/.exec(log)?.[1];
        expect(name).toBeDefined();
        expect(spawnSync("id", ["-u", name!]).status).not.toBe(0);
      },
    );

    it("a filter driver the agent planted never runs as the runner", { timeout: 180_000 }, async (ctx) => {
      needsRunnerUser(ctx);
      const { reports, file } = await everywhere();
      expect(await file("src/probed.txt"), "the agent's work was not pushed").toBe("probed\n");
      // The runner's git runs no driver the agent configured: the filter never ran at all, so it
      // found nothing either (on the runner's user it would have read the action's environment).
      const report = read(path.join(reports, "filter.txt"));
      expect(report, `the filter driver ran:\n${report?.slice(0, 2000)}`).toBeUndefined();
    });

    it("a report file the agent linked to the action's environment is not read through the link", { timeout: 180_000 }, async (ctx) => {
      needsRunnerUser(ctx);
      const { reports, file, log } = await everywhere();
      expect(read(path.join(reports, "action.pid"))).toMatch(/action pid: \d+/);
      const result = await file(`${attemptDir(RUN, "probe", 1)}/result.json`);
      expect(result, `no result.json; log:\n${log.slice(-3000)}`).toBeDefined();
      expect(result).not.toContain("INPUT_GITHUB-TOKEN");
      expect(result).not.toContain("GITHUB_WORKSPACE=");
      expect(result).not.toMatch(/ghs_[A-Za-z0-9]{20,}/);
      expect(result!.includes(MODEL_KEY)).toBe(false);
      expect(log).not.toContain("INPUT_GITHUB-TOKEN=");
    });
  });
});
