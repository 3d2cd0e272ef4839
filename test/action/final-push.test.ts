// A blip at the final push: the attempt's work and record commits are made, and the local GitHub's
// git endpoint answers the push with a 500, then drops the connection, then takes it. The runner
// tries again with the git backoff (on the test's clock: no real waiting) and the attempt ends as
// it should — pushed, recorded, the agent run once — so the App sees a finished attempt, not a lost
// one it would retry by running the agent again. Without the retries the same blip loses the attempt.
import { execFileSync } from "node:child_process";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { AgentRunner } from "../../action/src/agent-runner.js";
import type { GitRetry } from "../../action/src/git.js";
import { attemptDir } from "../../src/core/layout.js";
import { GIT_REMOTE_BACKOFF } from "../../src/core/retry.js";
import { agentResultSchema } from "../../src/core/schemas/agent-result.js";
import type { GitFault } from "../../src/local-github/faults.js";
import { createSim, type Sim } from "../../src/local-github/server.js";
import { commandAgent, JOB_URL, runJob } from "./job.js";
import { WRITE_WALKTHROUGH, WRITE_WORK } from "./main-job.js";
import { makeWorld, RUN, testConfig, type World } from "./world.js";

let sim: Sim;
let world: World | undefined;
let repos = 0;

beforeAll(async () => {
  sim = await createSim({ workflowExecutor: "noop" });
});
afterAll(async () => {
  await sim?.close();
});
afterEach(() => {
  world?.cleanup();
  world = undefined;
  sim.control.resetFaults();
});

/** A world whose origin is a repository of the local GitHub, reached by the job's git over HTTP. */
async function httpWorld(attempts: number) {
  const name = `demo${++repos}`;
  await sim.control.createRepo({ owner: "acme", name });
  const slept: number[] = [];
  const retries: GitRetry[] = [];
  world = makeWorld({
    origin: sim.core.state.repoByName("acme", name)!.gitDir,
    git: {
      remote: `${sim.gitUrl}/acme/${name}.git`,
      token: sim.control.userToken("acme"),
      backoff: { ...GIT_REMOTE_BACKOFF, attempts },
      clock: { sleep: async (ms) => void slept.push(ms) },
      random: () => 0.25,
      onRetry: (r) => retries.push(r),
    },
  });
  return { w: world, slept, retries };
}

const tip = (w: World) =>
  execFileSync("git", ["rev-parse", "--verify", "--quiet", `refs/heads/${w.branch}`], { cwd: w.origin, encoding: "utf8" }).trim();
const subject = (w: World, sha: string) =>
  execFileSync("git", ["log", "-1", "--format=%s", sha], { cwd: w.origin, encoding: "utf8" }).trim();

/**
 * The agent, counted, with `faults` queued for the git endpoint once it has ended and the attempt's
 * start commit (pushed for the draft PR while the agent works) has landed: they meet the final push.
 */
function agentThenFaults(w: World, faults: GitFault[]): { agent: AgentRunner; runs: () => number } {
  const inner = commandAgent(w, `${WRITE_WORK}\n${WRITE_WALKTHROUGH()}`);
  const before = tip(w);
  let runs = 0;
  return {
    runs: () => runs,
    agent: {
      name: inner.name,
      run: async (req) => {
        runs++;
        const out = await inner.run(req);
        await expect.poll(() => tip(w), { timeout: 10_000 }).not.toBe(before);
        sim.control.faults({ gitFaults: faults });
        return out;
      },
    },
  };
}

/**
 * The job's config: the agent's wrapper waits for the start commit to land after the agent ends, a
 * wait the stall watcher must not take for a silent agent (under load it can pass the 0.4 s of the
 * usual test config) — this test is about the push, not the heartbeat.
 */
const config = () => testConfig({ heartbeat_interval_seconds: 5, stale_threshold_seconds: 60 });

const BLIP: GitFault[] = [
  { on: "push", answer: 500 },
  { on: "push", answer: "reset" },
];

describe("a blip at the final push", () => {
  it("is waited out: the work and the record are pushed, the attempt ends 0, and the agent ran once", async () => {
    const { w, slept, retries } = await httpWorld(GIT_REMOTE_BACKOFF.attempts);
    const { agent, runs } = agentThenFaults(w, BLIP);
    const report = await runJob(w, agent, { config: config(), input: { jobUrl: JOB_URL } });
    expect(report.kind).toBe("attempt");
    if (report.kind !== "attempt") return;
    expect(report.exitCode, report.result.error).toBe(0);
    expect(runs()).toBe(1);
    // Both failures met the final push, which then got through.
    expect(sim.core.faults.config.gitFaults).toEqual([]);
    expect(retries.map((r) => [r.command, r.attempt])).toEqual([
      ["push", 1],
      ["push", 2],
    ]);
    expect(slept).toEqual([2_500, 4_500]);
    // The local GitHub holds the record commit: result.json says attempt 1 ended 0, on the work commit.
    expect(tip(w)).toBe(report.headSha);
    const rec = attemptDir(RUN, "t1", 1);
    const result = agentResultSchema.parse(JSON.parse(w.show(report.headSha, `${rec}/result.json`)!));
    expect(result).toMatchObject({ exit_code: 0, attempt: 1, head_sha: report.workSha });
    expect(w.show(report.headSha, "src/out.txt")).toBe("hello\n");
    // The PR is the finished attempt's: ready for review, its body the walkthrough.
    expect(w.github.pulls).toHaveLength(1);
    expect(w.github.pulls[0]!.draft).toBe(false);
    expect(report.warnings.join("\n")).not.toMatch(/could not/);
  });

  it("loses the attempt when git is not tried again: nothing recorded, and the App would run the agent again", async () => {
    const { w, retries } = await httpWorld(1);
    const { agent, runs } = agentThenFaults(w, BLIP);
    await expect(runJob(w, agent, { config: config(), input: { jobUrl: JOB_URL } })).rejects.toThrow(/git push failed/);
    expect(runs()).toBe(1);
    expect(retries).toEqual([]);
    // The branch still ends with the start commit pushed for the draft PR: no work, no record reached GitHub.
    expect(subject(w, tip(w))).toBe("forge(t1): start attempt 1");
    expect(w.show(tip(w), `${attemptDir(RUN, "t1", 1)}/result.json`)).toBeUndefined();
    expect(sim.core.faults.config.gitFaults).toEqual([BLIP[1]]);
  });

  it("a refused final push is not tried again", async () => {
    const { w, slept, retries } = await httpWorld(GIT_REMOTE_BACKOFF.attempts);
    const inner = commandAgent(w, `${WRITE_WORK}\n${WRITE_WALKTHROUGH()}`);
    const before = tip(w);
    // Someone else's commit lands on the branch while the agent works: the final push is no fast-forward.
    const agent: AgentRunner = {
      name: inner.name,
      run: async (req) => {
        const out = await inner.run(req);
        await expect.poll(() => tip(w), { timeout: 10_000 }).not.toBe(before);
        const other = execFileSync("git", ["commit-tree", `${tip(w)}^{tree}`, "-p", tip(w), "-m", "someone else"], {
          cwd: w.origin,
          encoding: "utf8",
          env: { ...process.env, GIT_AUTHOR_NAME: "o", GIT_AUTHOR_EMAIL: "o@x", GIT_COMMITTER_NAME: "o", GIT_COMMITTER_EMAIL: "o@x" },
        }).trim();
        execFileSync("git", ["update-ref", `refs/heads/${w.branch}`, other], { cwd: w.origin });
        return out;
      },
    };
    await expect(runJob(w, agent, { config: config(), input: { jobUrl: JOB_URL } })).rejects.toThrow(
      /rejected|fetch first|non-fast-forward/,
    );
    expect(retries).toEqual([]);
    expect(slept).toEqual([]);
  });
});
