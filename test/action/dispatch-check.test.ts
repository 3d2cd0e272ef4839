import { describe, expect, it } from "vitest";
import { checkDispatch, JournalError, readAndCheckDispatch } from "../../action/src/dispatch-check.js";
import type { JobGitHub } from "../../action/src/github.js";
import { startRun } from "../../src/core/decide/index.js";
import type { Journal } from "../../src/core/journal.js";
import { forgeConfigSchema } from "../../src/core/schemas/config.js";
import { splitRun } from "../../src/core/journal-parts.js";

function journal(): Journal {
  return startRun(
    {
      runId: "r1",
      planId: "p",
      planCommit: "a".repeat(40),
      dagHash: "0",
      integrationBranch: "forge/r1/_integration",
      baseBranch: "main",
      nodes: [
        { id: "t1", kind: "task", agentType: "1", dependencies: [] },
        { id: "t2", kind: "task", agentType: "2", dependencies: ["t1"] },
      ],
    },
    0,
    forgeConfigSchema.parse({}),
  ).journal;
}

function port(files: Record<string, string>): JobGitHub & { reads: string[] } {
  const reads: string[] = [];
  return {
    reads,
    readFile: async (path, ref) => {
      reads.push(`${ref}:${path}`);
      return files[`${ref}:${path}`];
    },
    findOpenPull: async () => undefined,
    createPull: async () => {
      throw new Error("no");
    },
    updatePull: async () => {},
    addLabels: async () => {},
    markReadyForReview: async () => {},
  };
}

describe("is this dispatch current?", () => {
  it("yes: the task's current attempt is this one and RUNNING", () => {
    const j = journal();
    expect(j.tasks[0]).toMatchObject({ id: "t1", status: "RUNNING", attempt: 1 });
    const c = checkDispatch(j, "t1", 1);
    expect(c.current).toBe(true);
    if (c.current) expect(c.node.agentType).toBe("1");
  });

  it.each<[string, (j: Journal) => void, string, number, string]>([
    ["another attempt", () => {}, "t1", 2, "task t1 is at attempt 1, not 2"],
    ["an older attempt", (j) => void (j.tasks[0]!.attempt = 3), "t1", 2, "task t1 is at attempt 3, not 2"],
    ["not RUNNING", (j) => void (j.tasks[0]!.status = "FAILED"), "t1", 1, "task t1 attempt 1 is FAILED, not RUNNING"],
    ["never dispatched", () => {}, "t2", 1, "task t2 is at attempt 0, not 1"],
    ["unknown task", () => {}, "zz", 1, "run r1 has no task zz"],
    ["run cancelled", (j) => void (j.status = "cancelled"), "t1", 1, "run r1 is cancelled"],
  ])("no: %s", (_name, edit, task, attempt, reason) => {
    const j = journal();
    edit(j);
    expect(checkDispatch(j, task, attempt)).toEqual({ current: false, reason });
  });

  it("reads journal.json from the run's state branch with the job's token", async () => {
    const gh = port({ "forge/r1/_state:journal.json": JSON.stringify(journal()) });
    expect((await readAndCheckDispatch(gh, "r1", "t1", 1)).current).toBe(true);
    expect(gh.reads).toEqual(["forge/r1/_state:journal.json"]);
  });

  it("reads the journal inside the App's stored run ({ version, journal, config, facts, events })", async () => {
    const stored = {
      version: 1,
      journal: journal(),
      config: forgeConfigSchema.parse({}),
      facts: { checkRuns: {}, crIssues: {} },
      events: { segment: 1, tail: [] },
    };
    const c = await readAndCheckDispatch(port({ "forge/r1/_state:journal.json": JSON.stringify(stored) }), "r1", "t1", 1);
    expect(c.current).toBe(true);
  });

  it("joins a big run's journal from its parts (a dependency's state lives in a part), and refuses a part that does not match its hash", async () => {
    const j = journal();
    const s = splitRun({ nodes: j.plan.nodes, tasks: j.tasks, checkRuns: {} }, undefined, { partSize: 1 });
    // journal.json carries only the RUNNING task; t2 is in its part.
    expect(s.live.tasks.map((t) => t.id)).toEqual(["t1"]);
    const stored = {
      version: 1,
      journal: { ...j, plan: { ...j.plan, nodes: s.live.nodes }, tasks: s.live.tasks },
      config: forgeConfigSchema.parse({}),
      facts: { checkRuns: {} },
      events: { segment: 1, tail: [] },
      split: s.split,
    };
    const files: Record<string, string> = { "forge/r1/_state:journal.json": JSON.stringify(stored) };
    for (const p of s.write) files[`forge/r1/_state:${p.path}`] = p.content;
    const c = await readAndCheckDispatch(port(files), "r1", "t1", 1);
    expect(c.current).toBe(true);
    if (c.current)
      expect(c.journal.tasks.map((t) => [t.id, t.status])).toEqual([
        ["t1", "RUNNING"],
        ["t2", "PENDING"],
      ]);
    expect(await readAndCheckDispatch(port(files), "r1", "t2", 1)).toEqual({ current: false, reason: "task t2 is at attempt 0, not 1" });

    const second = `forge/r1/_state:${s.write[1]!.path}`;
    files[second] = files[second]!.replace('"PENDING"', '"RUNNING"');
    await expect(readAndCheckDispatch(port(files), "r1", "t1", 1)).rejects.toThrow(/does not match its hash/);
  });

  it("a running follow-up (_followup-<n>) is current at attempt 1, as a Type 1 task depending on its source", () => {
    const j = journal();
    const f = {
      id: "_followup-1",
      sourceTaskId: "t1",
      sourceAttempt: 1,
      text: "Fix the bug in parse()",
      branch: "forge/r1/_followup-1/1",
      status: "running" as const,
    };
    const c = checkDispatch({ ...j, followups: [f] }, "_followup-1", 1);
    expect(c).toMatchObject({
      current: true,
      task: { id: "_followup-1", status: "RUNNING", attempt: 1, branch: "forge/r1/_followup-1/1" },
      node: { kind: "task", agentType: "1", dependencies: ["t1"] },
      followup: f,
    });
    expect(checkDispatch({ ...j, followups: [f] }, "_followup-1", 2)).toMatchObject({
      current: false,
      reason: "follow-up _followup-1 has one attempt, not 2",
    });
    expect(checkDispatch({ ...j, followups: [{ ...f, status: "done" }] }, "_followup-1", 1)).toMatchObject({
      current: false,
      reason: "follow-up _followup-1 is done, not running",
    });
    expect(checkDispatch(j, "_followup-2", 1)).toMatchObject({ current: false, reason: "run r1 has no follow-up _followup-2" });
  });

  it("a missing state branch means there is nothing to do", async () => {
    expect(await readAndCheckDispatch(port({}), "r1", "t1", 1)).toEqual({
      current: false,
      reason: "no journal for run r1 (branch forge/r1/_state or its journal.json does not exist)",
    });
  });

  it("a broken journal is an error, not a silent no-op", async () => {
    await expect(readAndCheckDispatch(port({ "forge/r1/_state:journal.json": "{" }), "r1", "t1", 1)).rejects.toThrow(JournalError);
    await expect(
      readAndCheckDispatch(port({ "forge/r1/_state:journal.json": JSON.stringify({ version: 1 }) }), "r1", "t1", 1),
    ).rejects.toThrow(/does not match the journal schema/);
    const other = { ...journal(), runId: "r2" };
    await expect(readAndCheckDispatch(port({ "forge/r1/_state:journal.json": JSON.stringify(other) }), "r1", "t1", 1)).rejects.toThrow(
      /belongs to run r2/,
    );
  });
});
