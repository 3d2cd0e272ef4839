// What the action hands the agent layer beyond one task: refineries' conflicted upstream branches
// (merged by the merge stage, conflicts resolved by a sub-agent), sub-agents (`forge` on the agent's
// PATH, sub-branches), and a push of the work at every stage end.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentRunner } from "../../action/src/agent-runner.js";
import type { JobReport } from "../../action/src/main.js";
import { newAttempt } from "../../src/core/journal.js";
import { attemptDir } from "../../src/core/layout.js";
import { forgeConfigSchema } from "../../src/core/schemas/config.js";
import { agentWalkthrough, makeWorld, RUN, sh, testConfig, type World, type WorldOptions } from "./world.js";
import { runJob, stagesAgent } from "./job.js";

let world: World | undefined;
afterEach(() => world?.cleanup());
function world_(o: WorldOptions = {}): World {
  world = makeWorld(o);
  return world;
}

const FORGE_JS = path.resolve("action/dist/forge.js");

// Git merges and pushes print nothing: liveness limits a loaded machine does not trip.
function job(w: World, agent: AgentRunner, taskId: string, context: Record<string, unknown> = {}): Promise<JobReport> {
  return runJob(w, agent, {
    config: testConfig({ heartbeat_interval_seconds: 1, stale_threshold_seconds: 10 }),
    input: { taskId, context },
  });
}

/** A commit on a branch of the bare repository (a clone, a commit, a push). */
function commitOn(w: World, branch: string, files: Record<string, string>, from = branch): void {
  const dir = path.join(w.dir, `edit-${Math.random().toString(36).slice(2)}`);
  sh(w.dir, ["clone", "--quiet", `--branch=${from}`, w.originUrl, dir]);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  }
  sh(dir, ["add", "-A"]);
  sh(dir, ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "--quiet", "-m", `edit ${branch}`]);
  sh(dir, ["push", "--quiet", "origin", `HEAD:refs/heads/${branch}`]);
}

const stagesRunner = (script: string) =>
  stagesAgent(script, existsSync(FORGE_JS) ? { forgeCli: { command: process.execPath, args: [FORGE_JS] } } : {});

const WALKTHROUGH = (fm: Record<string, unknown> = {}) =>
  `cat > "$FORGE_WALKTHROUGH_PATH" <<'WT'\n${agentWalkthrough({ files_changed: [], ...fm })}WT`;

describe("progress pushes", () => {
  it("pushes the work at each stage end; the final work and record commits come on top", async () => {
    const w = world_();
    let seenAfterStage: string | undefined;
    const agent: AgentRunner = {
      name: "command",
      async run(req) {
        mkdirSync(path.join(req.workdir, "src"), { recursive: true });
        writeFileSync(path.join(req.workdir, "src/a.txt"), "stage one\n");
        // The agent commits by itself in the first stage: folded into the runner's progress commit.
        sh(req.workdir, ["add", "-A"]);
        sh(req.workdir, ["-c", "user.name=a", "-c", "user.email=a@example.com", "commit", "--quiet", "-m", "wip"]);
        await req.onStageEnd!("implement");
        seenAfterStage = w.show(w.branch, "src/a.txt");
        await req.onStageEnd!("verify"); // nothing new: no commit, no push
        writeFileSync(path.join(req.workdir, "src/b.txt"), "stage two\n");
        writeFileSync(req.walkthroughPath, agentWalkthrough({ files_changed: [] }));
        return { exitCode: 0 };
      },
    };
    const report = await job(w, agent, "t1");
    if (report.kind !== "attempt") throw new Error(report.kind);
    expect(report.exitCode, report.result.error).toBe(0);
    // A runner that died after the first stage would have left its work on GitHub.
    expect(seenAfterStage).toBe("stage one\n");
    expect(report.progressPushes).toBe(1);
    const subjects = sh(w.origin, ["log", "--format=%s", `refs/heads/${w.branch}`]).split("\n");
    expect(subjects.slice(0, 4)).toEqual([
      "forge(t1): record attempt 1 (exit 0: success)",
      "forge(t1): Task t1",
      "forge(t1): work after stage implement",
      "forge(t1): start attempt 1",
    ]);
    const progress = sh(w.origin, ["log", "-1", "--skip=2", "--format=%H", `refs/heads/${w.branch}`]);
    expect(sh(w.origin, ["log", "-1", "--format=%(trailers:only,unfold)", progress])).toBe(
      "Run: r1\nTask: t1\nAttempt: 1\nAgent: command\nStage: implement",
    );
    expect(sh(w.origin, ["diff-tree", "--no-commit-id", "--name-only", "-r", report.workSha!])).toBe("src/b.txt");
    // The walkthrough lists everything the attempt changed, across the pushes.
    expect(report.result.walkthrough?.files_changed.map((f) => f.path).sort()).toEqual(["src/a.txt", "src/b.txt"]);
  });

  it("a stage's protected-path change is reverted before its push and still fails the attempt", async () => {
    const w = world_();
    const agent: AgentRunner = {
      name: "command",
      async run(req) {
        writeFileSync(path.join(req.workdir, ".github/workflows/ci.yml"), "name: pwned\n");
        writeFileSync(path.join(req.workdir, "ok.txt"), "fine\n");
        await req.onStageEnd!("implement");
        writeFileSync(req.walkthroughPath, agentWalkthrough({ files_changed: [] }));
        return { exitCode: 0 };
      },
    };
    const report = await job(w, agent, "t1");
    if (report.kind !== "attempt") throw new Error(report.kind);
    expect(report.exitCode).toBe(1);
    expect(report.refusals.map((r) => r.path)).toEqual([".github/workflows/ci.yml"]);
    expect(w.show(w.branch, ".github/workflows/ci.yml")).toBe("name: ci\non: push\njobs: {}\n");
    expect(w.show(w.branch, "ok.txt")).toBe("fine\n");
  });

  it("runStages' stage ends reach the pipeline: a two-stage type 1 pushes after each stage", async () => {
    const w = world_({ files: { ".forge/stages.yml": '"1": [implement, walkthrough]\n' } });
    const script = `case "$FORGE_SPAWN_NAME" in\n  implement) echo one > one.txt ;;\n  *) echo two > two.txt\n${WALKTHROUGH()}\n  ;;\nesac`;
    const report = await job(w, stagesRunner(script), "t1");
    if (report.kind !== "attempt") throw new Error(report.kind);
    expect(report.exitCode, report.result.error).toBe(0);
    expect(report.progressPushes).toBe(2);
    const subjects = sh(w.origin, ["log", "--format=%s", `refs/heads/${w.branch}`]).split("\n");
    // Each stage's work, and its checkpoint commit on top, which adds only record files (docs/runner.md#progress-pushes).
    expect(subjects.slice(0, 5)).toEqual([
      "forge(t1): record attempt 1 (exit 0: success)",
      "forge(t1): checkpoint after stage walkthrough",
      "forge(t1): work after stage walkthrough",
      "forge(t1): checkpoint after stage implement",
      "forge(t1): work after stage implement",
    ]);
    expect(report.workSha).toBe(sh(w.origin, ["rev-parse", `refs/heads/${w.branch}~1`]));
    const dir = attemptDir(RUN, "t1", 1);
    expect(
      sh(w.origin, ["diff-tree", "--no-commit-id", "--name-only", "-r", `refs/heads/${w.branch}~3`])
        .split("\n")
        .sort(),
    ).toEqual([`${dir}/agent/progress-notes.md`, `${dir}/checkpoint.json`]);
  });

  it("a stage session past its own time limit (timeouts.stage_minutes) is stopped and tried once more; its work so far stays and is pushed", async () => {
    const w = world_({ files: { ".forge/stages.yml": '"1": [implement, walkthrough]\n' } });
    const tries = path.join(w.dir, "implement-tries");
    // The first implement session keeps busy (output, so the job's liveness checks see a live agent) past its limit.
    const script = [
      `case "$FORGE_SPAWN_NAME" in`,
      `  implement) echo x >> ${tries}; echo half > half.txt; echo stage one > one.txt`,
      `    if [ "$(wc -l < ${tries})" -lt 2 ]; then while :; do echo working; sleep 0.1; done; fi ;;`,
      `  implement-retry) echo x >> ${tries}; echo done > one.txt ;;`,
      `  *) echo two > two.txt`,
      `${WALKTHROUGH()}`,
      `  ;;`,
      `esac`,
    ].join("\n");
    const agent = stagesAgent(script, { stageTimeoutMs: 2_500 });
    const report = await job(w, agent, "t1");
    if (report.kind !== "attempt") throw new Error(report.kind);
    expect(report.exitCode, report.result.error).toBe(0);
    const manifest = JSON.parse(w.show(report.headSha, `${attemptDir(RUN, "t1", 1)}/manifest.json`)!) as {
      stages: Array<{ name: string; attempts: number; session_dirs: string[] }>;
    };
    expect(manifest.stages.map((st) => [st.name, st.attempts])).toEqual([
      ["implement", 2],
      ["walkthrough", 1],
    ]);
    expect(manifest.stages[0]!.session_dirs).toEqual(["stages/01-implement", "stages/02-implement-retry"]);
    expect(w.show(report.headSha, "half.txt")).toBe("half\n");
    expect(w.show(report.headSha, "one.txt")).toBe("done\n");
  });
});

describe("the task sentinel", () => {
  it("the task sentinel runs by default after the task's own stages: it catches what they missed, the fix is pushed, result.json has its verdict", async () => {
    const w = world_({ files: { ".forge/stages.yml": '"1": [implement, walkthrough]\n' } });
    const report_ = (file: string, text: string) =>
      `f=$(printf '%s\\n' "$FORGE_PROMPT" | sed -n 's/^- ${file}: //p'); printf '${text}' > "$f"`;
    const script = [
      `case "$FORGE_SPAWN_NAME" in`,
      `  implement) echo 'a - b' > sum.txt ;;`,
      `  walkthrough)`,
      WALKTHROUGH(),
      `  ;;`,
      // The sentinel fails the first check (the work says a - b), passes the second.
      `  sentinel-1) ${report_("Write the audit report to", "Grade: FAIL\\n- sum subtracts\\n")} ;;`,
      `  sentinel-fix-1) echo 'a + b' > sum.txt ;;`,
      `  sentinel-*) ${report_("Write the audit report to", "Grade: PASS\\n")} ;;`,
      `esac`,
    ].join("\n");
    const config = {
      ...testConfig({ heartbeat_interval_seconds: 1, stale_threshold_seconds: 10 }),
      sentinel: forgeConfigSchema.parse({}).sentinel,
    };
    const report = await runJob(w, stagesRunner(script), { config, input: { taskId: "t1", context: {} } });
    if (report.kind !== "attempt") throw new Error(report.kind);
    expect(report.exitCode, report.result.error).toBe(0);
    expect(report.result.sentinel).toEqual({ role: "sentinel", grade: "PASS", cycles: 2, fixes: 1, blocking_counts: [1, 0] });
    expect(w.show(report.headSha, "sum.txt")).toBe("a + b\n");
    const manifest = JSON.parse(w.show(report.headSha, `${attemptDir(RUN, "t1", 1)}/manifest.json`)!) as {
      stages: Array<{ name: string; status: string }>;
    };
    expect(manifest.stages.map((st) => [st.name, st.status])).toEqual([
      ["implement", "success"],
      ["walkthrough", "success"],
      ["sentinel", "success"],
    ]);
    const subjects = sh(w.origin, ["log", "--format=%s", `refs/heads/${w.branch}`]).split("\n");
    expect(subjects.slice(0, 3)).toEqual([
      "forge(t1): record attempt 1 (exit 0: success)",
      "forge(t1): checkpoint after stage sentinel",
      "forge(t1): work after stage sentinel",
    ]);
  });
});

/** Every push the job makes through its Git (what it pushed), including a push of a head the remote already has. */
function countPushes(w: World): string[] {
  const pushed: string[] = [];
  const push = w.git.push.bind(w.git);
  w.git.push = async (branch: string, commit = "HEAD") => {
    pushed.push(commit === "HEAD" ? sh(w.workspace, ["rev-parse", "HEAD"]) : commit);
    return push(branch, commit);
  };
  return pushed;
}

describe("pushes", () => {
  it("a stage that changed nothing since the last push pushes nothing; after the last stage only the record is pushed", async () => {
    const w = world_();
    const pushed = countPushes(w);
    const agent: AgentRunner = {
      name: "command",
      async run(req) {
        writeFileSync(path.join(req.workdir, "a.txt"), "a\n");
        await req.onStageEnd!("implement");
        await req.onStageEnd!("verify");
        writeFileSync(req.walkthroughPath, agentWalkthrough({ files_changed: [] }));
        await req.onStageEnd!("walkthrough");
        return { exitCode: 0 };
      },
    };
    const report = await job(w, agent, "t1");
    if (report.kind !== "attempt") throw new Error(report.kind);
    expect(report.exitCode, report.result.error).toBe(0);
    // The start commit (for the draft PR), the work after implement, the record: nothing pushed twice.
    expect(pushed).toHaveLength(3);
    expect(new Set(pushed).size).toBe(3);
    expect(report.pushes).toBe(3);
    expect(report.progressPushes).toBe(1);
    expect(pushed[2]).toBe(report.headSha);
    expect(report.workSha).toBe(pushed[1]);
  });

  it("a stage whose only new commit is a merge (a sub-branch merged back) pushes it at the stage end", async () => {
    const w = world_();
    const pushed = countPushes(w);
    let remoteAfterMerge: string | undefined;
    let merge: string | undefined;
    const agent: AgentRunner = {
      name: "command",
      async run(req) {
        const id = ["-c", "user.name=a", "-c", "user.email=a@example.com"];
        sh(req.workdir, ["checkout", "--quiet", "-b", `${w.branch}-sub`]);
        writeFileSync(path.join(req.workdir, "sub.txt"), "sub\n");
        sh(req.workdir, ["add", "-A"]);
        sh(req.workdir, [...id, "commit", "--quiet", "-m", "sub"]);
        sh(req.workdir, ["checkout", "--quiet", w.branch]);
        sh(req.workdir, [...id, "merge", "--quiet", "--no-ff", "-m", "merge sub", `${w.branch}-sub`]);
        merge = sh(req.workdir, ["rev-parse", "HEAD"]);
        await req.onStageEnd!("work");
        remoteAfterMerge = sh(w.origin, ["rev-parse", `refs/heads/${w.branch}`]);
        writeFileSync(req.walkthroughPath, agentWalkthrough({ files_changed: [] }));
        await req.onStageEnd!("walkthrough");
        return { exitCode: 0 };
      },
    };
    const report = await job(w, agent, "t1");
    if (report.kind !== "attempt") throw new Error(report.kind);
    expect(report.exitCode, report.result.error).toBe(0);
    expect(remoteAfterMerge).toBe(merge);
    expect(report.progressPushes).toBe(1);
    expect(pushed).toEqual([pushed[0], merge, report.headSha]);
    expect(report.workSha).toBe(merge);
  });
});

describe("the attempt's starting head", () => {
  /** actions/checkout again, for a re-run: a fresh shallow clone of the task branch. */
  function freshCheckout(w: World): void {
    rmSync(w.workspace, { recursive: true, force: true });
    sh(w.dir, ["clone", "--quiet", "--depth=1", `--branch=${w.branch}`, w.originUrl, w.workspace]);
    rmSync(w.temp, { recursive: true, force: true });
    mkdirSync(w.temp);
  }

  it("a re-run whose work all came with the first run's progress pushes still reports its files and succeeds", async () => {
    const w = world_();
    const startedAt = sh(w.origin, ["rev-parse", `refs/heads/${w.branch}`]);
    // First run: two stages of work pushed, then the runner dies before its record (the branch is
    // put back to the last progress push, as a dead runner would have left it).
    const first: AgentRunner = {
      name: "command",
      async run(req) {
        mkdirSync(path.join(req.workdir, "src"), { recursive: true });
        writeFileSync(path.join(req.workdir, "src/a.txt"), "a\n");
        await req.onStageEnd!("implement");
        writeFileSync(path.join(req.workdir, "src/b.txt"), "b\n");
        await req.onStageEnd!("verify");
        return { exitCode: 1 };
      },
    };
    const died = await job(w, first, "t1");
    if (died.kind !== "attempt") throw new Error(died.kind);
    expect(died.progressPushes).toBe(2);
    const lastProgress = sh(w.origin, ["rev-parse", `refs/heads/${w.branch}~1`]);
    expect(sh(w.origin, ["log", "-1", "--format=%s", lastProgress])).toBe("forge(t1): work after stage verify");
    sh(w.origin, ["update-ref", `refs/heads/${w.branch}`, lastProgress]);

    // The re-run: the agent redoes the same work (nothing new over the branch) and writes its walkthrough.
    freshCheckout(w);
    const again: AgentRunner = {
      name: "command",
      async run(req) {
        mkdirSync(path.join(req.workdir, "src"), { recursive: true });
        writeFileSync(path.join(req.workdir, "src/a.txt"), "a\n");
        writeFileSync(path.join(req.workdir, "src/b.txt"), "b\n");
        await req.onStageEnd!("implement");
        writeFileSync(req.walkthroughPath, agentWalkthrough({ files_changed: [] }));
        return { exitCode: 0 };
      },
    };
    const report = await job(w, again, "t1");
    if (report.kind !== "attempt") throw new Error(report.kind);
    expect(report.exitCode, report.result.error).toBe(0);
    expect(report.progressPushes).toBe(0);
    // The pull request is there already (no start commit), and the work is on the remote: only the record is pushed.
    expect(report.pushes).toBe(1);
    expect(report.result.walkthrough?.files_changed.map((f) => f.path).sort()).toEqual(["src/a.txt", "src/b.txt"]);
    // The work is the first run's last progress commit; the record sits right on it.
    expect(report.workSha).toBe(lastProgress);
    expect(sh(w.origin, ["rev-parse", `refs/heads/${w.branch}~1`])).toBe(lastProgress);
    // The history between the branch's start and the work is the first run's (start, two progress pushes).
    expect(sh(w.origin, ["log", "--format=%s", `${startedAt}..${lastProgress}`]).split("\n")).toEqual([
      "forge(t1): work after stage verify",
      "forge(t1): work after stage implement",
      "forge(t1): start attempt 1",
    ]);
  });

  it("a fresh attempt on a branch whose tip is another attempt's commit measures from that tip", async () => {
    const w = world_();
    // The integration head carries an earlier attempt's commit (same task, attempt 1 of another run).
    commitOn(w, w.branch, { "src/old.txt": "old\n" });
    const msg = "forge(t1): work after stage implement\n\nRun: r0\nTask: t1\nAttempt: 1\nAgent: command\n";
    const dir = path.join(w.dir, "amend");
    sh(w.dir, ["clone", "--quiet", `--branch=${w.branch}`, w.originUrl, dir]);
    sh(dir, ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "--quiet", "--amend", "-m", msg]);
    sh(dir, ["push", "--quiet", "--force", "origin", `HEAD:refs/heads/${w.branch}`]);
    freshCheckout(w);
    const agent: AgentRunner = {
      name: "command",
      async run(req) {
        writeFileSync(path.join(req.workdir, "new.txt"), "new\n");
        writeFileSync(req.walkthroughPath, agentWalkthrough({ files_changed: [] }));
        return { exitCode: 0 };
      },
    };
    const report = await job(w, agent, "t1");
    if (report.kind !== "attempt") throw new Error(report.kind);
    expect(report.exitCode, report.result.error).toBe(0);
    expect(report.result.walkthrough?.files_changed.map((f) => f.path)).toEqual(["new.txt"]);
  });
});

describe("refineries: the upstream branches the App could not merge", () => {
  it("are fetched into the shallow checkout and merged by the merge stage; a sub-agent resolves the conflict; the merge is kept", async () => {
    const w = world_({
      tasks: [{ id: "a" }, { id: "b" }, { id: "r", type: "refinery", dependencies: ["a", "b"] }],
      taskId: "r",
      files: { ".forge/stages.yml": "refinery: [merge, single]\n", "shared.txt": "base\n" },
      journal: (j) => {
        Object.assign(j.tasks[0]!, { status: "MERGE_READY", attempts: 1, attempt: newAttempt("forge/r1/a/1", "2026-11-22T09:00:00.000Z") });
        Object.assign(j.tasks[1]!, { status: "MERGE_READY", attempts: 1, attempt: newAttempt("forge/r1/b/1", "2026-11-22T09:00:00.000Z") });
        Object.assign(j.tasks[2]!, {
          status: "RUNNING",
          attempts: 1,
          attempt: newAttempt("forge/r1/r/1", "2026-11-22T09:00:00.000Z"),
          blockers: 0,
        });
      },
    });
    // b was merged server-side into the refinery's branch; a conflicts with it on shared.txt.
    commitOn(w, "forge/r1/a/1", { "shared.txt": "from a\n", "a.txt": "a\n" }, "main");
    commitOn(w, "forge/r1/b/1", { "shared.txt": "from b\n" }, "main");
    commitOn(w, w.branch, { "shared.txt": "from b\n" });
    const script = [
      `case "$FORGE_SPAWN_NAME" in`,
      `  merge-resolve) printf 'from a\\nfrom b\\n' > shared.txt; echo "$FORGE_AGENT_TYPE" > "$FORGE_SESSION_DIR/../../resolver-type" ;;`,
      `  single) forge validate --help > /dev/null && echo ok > forge-ok.txt`,
      WALKTHROUGH(),
      `  ;;`,
      `esac`,
    ].join("\n");
    const report = await job(w, stagesRunner(script), "r", { conflicts: ["forge/r1/a/1"] });
    if (report.kind !== "attempt") throw new Error(report.kind);
    expect(report.exitCode, report.result.error).toBe(0);
    expect(w.show(w.branch, "shared.txt")).toBe("from a\nfrom b\n");
    expect(w.show(w.branch, "a.txt")).toBe("a\n");
    // The merge commit stays in the history: a's branch is an ancestor of the refinery's.
    const aTip = sh(w.origin, ["rev-parse", "refs/heads/forge/r1/a/1"]);
    expect(() => sh(w.origin, ["merge-base", "--is-ancestor", aTip, `refs/heads/${w.branch}`])).not.toThrow();
    const manifest = JSON.parse(w.show(w.branch, `${attemptDir(RUN, "r", 1)}/manifest.json`)!) as {
      stages: Array<{ name: string; status: string }>;
    };
    expect(manifest.stages.map((s) => `${s.name}:${s.status}`)).toEqual(["merge:success", "single:success"]);
    // The agents' shell has the bundled `forge` (spawn, validate) on its PATH.
    if (existsSync(FORGE_JS)) expect(w.show(w.branch, "forge-ok.txt")).toBe("ok\n");
  });

  it("with no conflicts there is nothing to merge", async () => {
    const w = world_({ tasks: [{ id: "r", type: "refinery" }], taskId: "r" });
    let refs: string[] | undefined = ["unset"];
    const agent: AgentRunner = {
      name: "command",
      async run(req) {
        refs = req.taskContext.mergeRefs;
        writeFileSync(req.walkthroughPath, agentWalkthrough({ files_changed: [] }));
        return { exitCode: 0 };
      },
    };
    const report = await job(w, agent, "r", {});
    expect(report.kind).toBe("attempt");
    expect(refs).toBeUndefined();
  });
});

describe("the bundled forge command", () => {
  it.skipIf(!existsSync(FORGE_JS))("dist/forge.js runs spawn (depth budget) and validate", () => {
    const out = (args: string[], env: NodeJS.ProcessEnv = {}) => {
      try {
        return {
          code: 0,
          stdout: execFileSync(process.execPath, [FORGE_JS, ...args], {
            encoding: "utf8",
            env: { PATH: process.env.PATH, ...env },
            stdio: ["ignore", "pipe", "pipe"],
          }),
        };
      } catch (err) {
        const e = err as { status: number; stdout: string; stderr: string };
        return { code: e.status, stdout: e.stdout, stderr: e.stderr };
      }
    };
    expect(out(["--help"]).stdout).toMatch(/spawn[\s\S]*validate|validate[\s\S]*spawn/);
    // Depth spent: exit 2, nothing runs.
    const spent = out(
      ["spawn", "--adapter", "command", "--command", "true", "--prompt", "x", "--max-depth", "1", "--output-format", "json"],
      { FORGE_SPAWN_DEPTH: "1" },
    );
    expect(spent.code).toBe(2);
  });
});

describe("sub-agents started with forge spawn inside the job", () => {
  it.skipIf(!existsSync(FORGE_JS))(
    "work on <branch>-<sub>, merged back: the merge stays in the task branch's history and the walkthrough lists their files",
    async () => {
      const w = world_({ tasks: [{ id: "t1", type: "2" }], files: { ".forge/stages.yml": '"2": [single]\n' } });
      const script = [
        `forge spawn --adapter command --command sh --arg -c --arg 'echo sub > sub.txt' --agent-type 1 --name helper --prompt 'write sub.txt' --output-format json > "$FORGE_SESSION_DIR/helper.json"`,
        `echo main > main.txt`,
        WALKTHROUGH(),
      ].join("\n");
      const report = await job(w, stagesRunner(script), "t1");
      if (report.kind !== "attempt") throw new Error(report.kind);
      expect(report.exitCode, report.result.error).toBe(0);
      expect(report.result.walkthrough?.files_changed.map((f) => f.path).sort()).toEqual(["main.txt", "sub.txt"]);
      expect(w.show(w.branch, "sub.txt")).toBe("sub\n");
      const merges = sh(w.origin, ["log", "--merges", "--format=%s", `refs/heads/${w.branch}`]);
      expect(merges).toBe(`Merge ${w.branch}-helper into ${w.branch}`);
    },
  );

  it.skipIf(!existsSync(FORGE_JS))(
    "past the job's cap (agent.max_sub_agents) a spawn is refused with exit 2, and result.json records the count and the refusal",
    async () => {
      const w = world_({ tasks: [{ id: "t1", type: "2" }], files: { ".forge/stages.yml": '"2": [single]\n' } });
      const spawn = (name: string) =>
        `forge spawn --adapter command --command sh --arg -c --arg 'echo ${name} > ${name}.txt' --agent-type 1 --name ${name} --prompt 'write ${name}.txt' --output-format json > "$FORGE_SESSION_DIR/${name}.json"; echo $? > "$FORGE_SESSION_DIR/${name}.code"`;
      const script = [spawn("first"), spawn("second"), `cp "$FORGE_SESSION_DIR/second.code" second.code`, WALKTHROUGH()].join("\n");
      const agent = stagesAgent(script, { forgeCli: { command: process.execPath, args: [FORGE_JS] }, maxSubAgents: 1 });
      const report = await job(w, agent, "t1");
      if (report.kind !== "attempt") throw new Error(report.kind);
      expect(report.exitCode, report.result.error).toBe(0);
      expect(w.show(w.branch, "first.txt")).toBe("first\n");
      expect(w.show(w.branch, "second.txt")).toBeUndefined();
      expect(w.show(w.branch, "second.code")).toBe("2\n");
      expect(report.result.sub_agents).toMatchObject({ limit: 1, spawned: 1, refused: 1, refusals: [{ agentType: "1", depth: 2 }] });
      expect(report.result.sub_agents!.refusals![0]!.message).toContain("already started 1 sub-agent, its cap (agent.max_sub_agents: 1");
    },
  );
});
