// Layer 2's rules for a stage that times out or ends partial (docs/runner.md#stage-rules), with the fake command agent and short limits instead of waiting:
// a stage session that reaches its own time limit is killed and the stage tried once more before
// the attempt fails (21); exit 12 keeps what succeeded and tries the partial stage — or type 3's
// failed subtasks — once more.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import matter from "gray-matter";
import { afterEach, describe, expect, it } from "vitest";
import { readSubtasks, runStages } from "../../src/agent/stages/index.js";
import { cleanupTempDirs, fakeWorld, type FakeWorld } from "./helpers.js";
import { git, options } from "./stages-helpers.js";

afterEach(cleanupTempDirs);

/** A stage session's own limit: long enough for the fake agent to start under load, short enough not to wait. */
const STAGE_MS = 3_000;

const withStageLimit = (w: FakeWorld, extra: Parameters<typeof options>[1] = {}) => {
  const o = options(w, extra);
  return { ...o, spawn: { ...o.spawn, timeoutMs: STAGE_MS } };
};
const prompt = (w: FakeWorld, dir: string) => readFileSync(path.join(w.dir, "session", "stages", dir, "prompt.md"), "utf8");

describe("a stage that times out", () => {
  it("is killed and tried once more from the work it left; the sequence goes on", async () => {
    const w = fakeWorld({
      implement: [{ write: { "half.txt": "half\n" }, stall: true }, { exit: 0 }],
      verify: { exit: 0 },
      walkthrough: { walkthrough: true },
    });
    const out = await runStages(withStageLimit(w));
    expect(out.exitCode, out.error).toBe(0);
    expect(out.manifest.stages.map((s) => [s.name, s.status, s.attempts])).toEqual([
      ["implement", "success", 2],
      ["verify", "success", 1],
      ["walkthrough", "success", 1],
    ]);
    expect(out.manifest.stages[0]!.session_dirs).toEqual(["stages/01-implement", "stages/02-implement-retry"]);
    expect(prompt(w, "02-implement-retry")).toMatch(
      /## Previous attempt timed out\n\nThe previous attempt at this stage was stopped: wall-clock limit/,
    );
    // What the killed session wrote stays in the work tree for its retry.
    expect(readFileSync(path.join(w.repo, "half.txt"), "utf8")).toBe("half\n");
  });

  it("a second time fails the attempt with 21, and no later stage runs", async () => {
    const w = fakeWorld({ implement: { stall: true }, verify: { exit: 0 } });
    const out = await runStages(withStageLimit(w));
    expect(out.exitCode).toBe(21);
    expect(out.manifest.stages.map((s) => [s.name, s.exit_code, s.attempts])).toEqual([["implement", 21, 2]]);
    expect(out.error).toMatch(/^implement: wall-clock limit/);
    expect(w.calls().map((c) => c.name)).toEqual(["implement", "implement-retry"]);
  });

  it("is tried once more when its session went silent past the idle limit", async () => {
    const w = fakeWorld({ single: [{ stall: true }, { walkthrough: true }] });
    const o = options(w, { stages: ["single"] });
    const out = await runStages({ ...o, spawn: { ...o.spawn, idleTimeoutMs: 1_500 } });
    expect(out.exitCode, out.error).toBe(0);
    expect(out.manifest.stages[0]).toMatchObject({ name: "single", attempts: 2 });
    expect(prompt(w, "02-single-retry")).toMatch(
      /## Previous attempt timed out\n\nThe previous attempt at this stage was stopped: no output for/,
    );
  });

  it("is not tried again when the agent's whole time ran out: nothing is left for a retry", async () => {
    const w = fakeWorld({ implement: [{ stall: true }, { exit: 0 }], verify: { exit: 0 } });
    const out = await runStages({ ...options(w), deadline: Date.now() + STAGE_MS });
    expect(out.exitCode).toBe(21);
    expect(out.manifest.stages.map((s) => [s.name, s.exit_code, s.attempts])).toEqual([["implement", 21, 1]]);
    expect(w.calls().map((c) => c.name)).toEqual(["implement"]);
  });

  it("a session of a multi-session stage is tried once more too (the captain's correction of its plan)", async () => {
    const w = fakeWorld({});
    const planDir = path.join(w.repo, ".forge", "plans", "p1");
    const taskFile = (deps: string) =>
      `---\nid: a\ntitle: a\ntype: 1\ndependencies: [${deps}]\nacceptance_criteria: [works]\nestimated_complexity: small\n---\n## Description\nx\n## Context\nx\n## Instructions\nx\n`;
    const dag = (deps: string[]) =>
      JSON.stringify({
        version: 1,
        planId: "p1",
        nodes: [{ id: "a", type: "task", agentType: "1", dependencies: deps }],
        metadata: { createdAt: "2026-11-22T00:00:00Z", createdBy: "captain", totalTasks: 1, totalRefineries: 0 },
      });
    w.setPlan({
      "captain:write": {
        write: {
          [path.join(planDir, "plan.md")]: "# Plan\n",
          [path.join(planDir, "tasks", "a.md")]: taskFile("zz"),
          [path.join(planDir, "dag.json")]: dag(["zz"]),
        },
      },
      "captain:write-fix-1": [
        { stall: true },
        { write: { [path.join(planDir, "tasks", "a.md")]: taskFile(""), [path.join(planDir, "dag.json")]: dag([]) } },
      ],
    });
    const taskContext = { runId: "r1", taskId: "captain", attempt: 1, task: "Plan it", planDir: ".forge/plans/p1", goal: "Build a thing" };
    const out = await runStages(withStageLimit(w, { agentType: "captain", taskContext }));
    expect(out.exitCode, JSON.stringify(out.manifest, null, 2)).toBe(0);
    expect(w.calls().map((c) => c.name)).toEqual(["write", "write-fix-1", "write-fix-1-retry"]);
    expect(out.manifest.stages[1]).toMatchObject({ name: "validate", status: "success", attempts: 2 });
    expect(out.manifest.stages[1]!.session_dirs).toEqual(["stages/02-write-fix-1", "stages/03-write-fix-1-retry"]);
  });
});

describe("a stage that ends partial (12)", () => {
  it("is tried once more to finish what is left; finished, the sequence succeeds", async () => {
    const w = fakeWorld({
      implement: [
        { exit: 12, write: { "first.txt": "1\n" } },
        { exit: 0, write: { "rest.txt": "2\n" } },
      ],
      verify: { exit: 0 },
      walkthrough: { walkthrough: true },
    });
    const out = await runStages(options(w));
    expect(out.exitCode, out.error).toBe(0);
    expect(out.manifest.stages[0]).toMatchObject({ name: "implement", status: "success", attempts: 2 });
    expect(prompt(w, "02-implement-retry")).toMatch(
      /## Previous attempt was partial\n\nThe previous attempt at this stage ended partial \(exit 12\)/,
    );
    expect(readFileSync(path.join(w.repo, "first.txt"), "utf8")).toBe("1\n");
    expect(readFileSync(path.join(w.repo, "rest.txt"), "utf8")).toBe("2\n");
  });

  it("stays partial when the retry is partial too, or fails: what succeeded is kept", async () => {
    for (const second of [{ exit: 12 }, { exit: 1 }]) {
      const w = fakeWorld({ implement: [{ exit: 12 }, second], verify: { exit: 0 }, walkthrough: { walkthrough: "partial" } });
      const out = await runStages(options(w));
      expect(out.exitCode).toBe(12);
      expect(out.manifest.stages.map((s) => [s.name, s.status, s.attempts])).toEqual([
        ["implement", "partial", 2],
        ["verify", "success", 1],
        ["walkthrough", "success", 1],
      ]);
      if (second.exit === 1) expect(out.manifest.stages[0]!.error).toMatch(/^partial; the retry did not finish it/);
    }
  });

  it("ends with the retry's own code when the retry stops the stage (a question)", async () => {
    const w = fakeWorld({ implement: [{ exit: 12 }, { exit: 3, question: "Which database?" }], verify: { exit: 0 } });
    const out = await runStages(options(w));
    expect(out).toMatchObject({ exitCode: 3, question: "Which database?\n" });
  });

  it("the walkthrough stage is not tried again for a partial end: it reports the work, it does not do it", async () => {
    const w = fakeWorld({ walkthrough: { exit: 12, walkthrough: "partial" } });
    const out = await runStages(options(w, { stages: ["walkthrough"] }));
    expect(out.exitCode).toBe(12);
    expect(out.manifest.stages[0]).toMatchObject({ status: "partial", attempts: 1 });
  });
});

describe("type 3: failed subtasks", () => {
  function subtaskWorld(plan: Record<string, unknown>): FakeWorld {
    const w = fakeWorld(plan, { git: true });
    git(w.repo, "checkout", "-q", "-b", "forge/r1/t1/1");
    git(w.repo, "commit", "-q", "--allow-empty", "-m", "base");
    return w;
  }
  const type3 = (w: FakeWorld, extra: Parameters<typeof options>[1] = {}) =>
    withStageLimit(w, {
      agentType: "3",
      subBranches: true,
      taskContext: { runId: "r1", taskId: "t1", attempt: 1, task: "Do t1.", branch: "forge/r1/t1/1" },
      stages: ["plan", "work"],
      ...extra,
    });

  it("keeps the subtasks that succeeded and tries each failed one once more, told how it failed, on a branch of its own", async () => {
    const w = subtaskWorld({
      "3:plan": { subtasks: [{ id: "a" }, { id: "b" }, { id: "c" }] },
      "1:work-a": { exit: 0, write: { "a.txt": "a\n" } },
      "1:work-b": [
        { exit: 1, printErr: ["b broke"] },
        { exit: 0, write: { "b.txt": "b\n" } },
      ],
      "1:work-c": [{ stall: true }, { exit: 0, write: { "c.txt": "c\n" } }],
    });
    const out = await runStages(type3(w));
    expect(out.exitCode, JSON.stringify(out.manifest, null, 2)).toBe(0);
    expect(out.manifest.stages[1]).toMatchObject({ name: "work", status: "success", attempts: 5 });
    // a ran once; b (a failure) and c (killed at its time limit) each once more.
    expect(w.calls().map((c) => [c.name, c.previousFailure])).toEqual([
      ["plan", false],
      ["work-a", false],
      ["work-b", false],
      ["work-c", false],
      ["work-b-retry", true],
      ["work-c-retry", true],
    ]);
    expect(prompt(w, "05-work-b-retry")).toMatch(/The previous attempt at this subtask failed: /);
    const subs = await readSubtasks(path.join(w.dir, "session", "subtasks"));
    expect(subs.map((s) => [s.id, s.status])).toEqual([
      ["a", "done"],
      ["b", "done"],
      ["c", "done"],
    ]);
    expect(matter(readFileSync(subs[1]!.file, "utf8")).data).toMatchObject({ forge_note: "done (on its second try)" });
    expect(
      git(w.repo, "branch", "--list", "forge/r1/t1/1-b*")
        .split("\n")
        .map((b) => b.trim().replace(/^\* /, "")),
    ).toEqual(["forge/r1/t1/1-b", "forge/r1/t1/1-b-retry"]);
    for (const f of ["a.txt", "b.txt", "c.txt"]) expect(git(w.repo, "show", `HEAD:${f}`)).toBe(f[0]);
  });

  it("stays partial (12) when a subtask fails its second try too, and fails (1) when every one does", async () => {
    const some = subtaskWorld({
      "3:plan": { subtasks: [{ id: "a" }, { id: "b" }] },
      "1:work-a": { exit: 0 },
      "1:work-b": { exit: 1 },
    });
    const partial = await runStages(type3(some));
    expect(partial.exitCode).toBe(12);
    expect(partial.manifest.stages[1]).toMatchObject({ name: "work", status: "partial", attempts: 3, error: "1 of 2 subtasks failed" });
    const subs = await readSubtasks(path.join(some.dir, "session", "subtasks"));
    expect(subs.map((s) => [s.id, s.status])).toEqual([
      ["a", "done"],
      ["b", "failed"],
    ]);

    const none = subtaskWorld({ "3:plan": { subtasks: [{ id: "a" }, { id: "b" }] }, "1:*": { exit: 1 } });
    const failed = await runStages(type3(none));
    expect(failed.exitCode).toBe(1);
    expect(failed.manifest.stages[1]).toMatchObject({ status: "failure", attempts: 4, error: "2 of 2 subtasks failed" });
  });

  it("a subtask the plan wrote in another front-matter language is never worked nor tried again", async () => {
    const w = subtaskWorld({ "1:work-a": { exit: 0 } });
    const dir = path.join(w.dir, "session", "subtasks");
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, "01-a.md"), '---\nid: a\ntitle: a\nagent_type: "1"\nstatus: pending\n---\nDo it.\n');
    writeFileSync(path.join(dir, "09-js.md"), "---js\n{ id: 'js' }\n---\nDo it.\n");
    const out = await runStages(type3(w, { stages: ["work"] }));
    expect(out.exitCode).toBe(12);
    expect(w.calls().map((c) => c.name)).toEqual(["work-a"]);
  });
});
