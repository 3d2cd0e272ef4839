// The task sentinel with the fake command agent: after a task's own stages an agent of another role
// checks the work against the acceptance criteria and the test command, the implementer fixes what it
// finds, in a bounded loop; off, the stage is not there.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { refinementProblems } from "../../src/agent/refinement.js";
import { runStages } from "../../src/agent/stages/index.js";
import { cleanupTempDirs, fakeWorld, type FakeWorld } from "./helpers.js";
import { git, options } from "./stages-helpers.js";

afterEach(cleanupTempDirs);

const taskText =
  "---\nid: t1\ntitle: Sum\ntype: 2\nacceptance_criteria:\n  - sum(a, b) returns a + b\n---\n## Description\nWrite sum.js.\n";
const ctx = { runId: "r1", taskId: "t1", attempt: 1, task: taskText };

/** The implementer writes a buggy sum.js; its own verify stage passes it anyway (the planted failure). */
function implementer(w: FakeWorld, extra: Record<string, unknown>) {
  git(w.repo, "commit", "-q", "--allow-empty", "-m", "base");
  w.setPlan({
    "2:implement": { write: { [path.join(w.repo, "sum.js")]: "export const sum = (a, b) => a - b;\n" } },
    "2:verify": { print: ["all good"] },
    "2:walkthrough": { walkthrough: true },
    ...extra,
  });
}

const audit = (grade: string) => ({ writeFromPrompt: { "Write the audit report to": `Grade: ${grade}\n- sum subtracts\n` } });
const fixList = {
  "Write the fix list to": JSON.stringify({
    fixes: [{ id: 1, severity: "blocking", file: "sum.js", issue: "sum subtracts", suggested_fix: "add" }],
  }),
};

describe("the task sentinel", () => {
  it("runs after the task's own stages, as its own role, and catches what the implementer's verify missed", async () => {
    const w = fakeWorld({}, { git: true });
    implementer(w, {
      "sentinel:sentinel-1": { writeFromPrompt: { "Write the audit report to": "Grade: FAIL\n- sum subtracts\n", ...fixList } },
      "sentinel:sentinel-2": audit("PASS"),
      "2:sentinel-fix-1": { write: { [path.join(w.repo, "sum.js")]: "export const sum = (a, b) => a + b;\n" } },
    });
    const out = await runStages(options(w, { taskContext: ctx, sentinel: { enabled: true } }));
    expect(out.exitCode, JSON.stringify(out.manifest, null, 2)).toBe(0);
    expect(out.manifest.stages.map((s) => [s.name, s.status])).toEqual([
      ["implement", "success"],
      ["verify", "success"],
      ["walkthrough", "success"],
      ["sentinel", "success"],
    ]);
    expect(readFileSync(path.join(w.repo, "sum.js"), "utf8")).toContain("a + b");
    // The sentinel is a role of its own (never the implementer's type); the fix is the implementer's.
    expect(w.calls().map((c) => `${c.kind}:${c.name}`)).toEqual([
      "2:implement",
      "2:verify",
      "2:walkthrough",
      "sentinel:sentinel-1",
      "2:sentinel-fix-1",
      "sentinel:sentinel-2",
    ]);
    expect(out.sentinel).toEqual({ role: "sentinel", grade: "PASS", cycles: 2, fixes: 1, blocking_counts: [1, 0] });
    const dir = path.join(w.dir, "session", "sentinel");
    expect(readFileSync(path.join(dir, "grade.txt"), "utf8")).toBe("PASS\n");
    expect(existsSync(path.join(dir, "cycle-1", "audit-report.md"))).toBe(true);
    expect(out.manifest.stages[3]!.artifact).toBe("sentinel/summary.json");
  });

  it("does not let a PASS stand over a failing test command", async () => {
    const w = fakeWorld({}, { git: true });
    implementer(w, {
      "sentinel:*": audit("PASS"),
      "2:sentinel-fix-1": { write: { [path.join(w.repo, "sum.js")]: "export const sum = (a, b) => a + b;\n" } },
    });
    const out = await runStages(
      options(w, { taskContext: { ...ctx, testCommand: "grep -q 'a + b' sum.js" }, sentinel: { enabled: true } }),
    );
    expect(out.exitCode, JSON.stringify(out.manifest, null, 2)).toBe(0);
    expect(out.sentinel).toMatchObject({ grade: "PASS", cycles: 2, fixes: 1, blocking_counts: [1, 0] });
    const results = JSON.parse(readFileSync(path.join(w.dir, "session", "sentinel", "cycle-1", "verification-results.json"), "utf8"));
    expect(results).toMatchObject({ overall: "FAIL", blocking_count: 1 });
  });

  it("bounds the fix loop, then ends with exit 10 and the sentinel's findings as the refinement document", async () => {
    for (const [maxCycles, fixes] of [
      [1, 1],
      [2, 2],
      // Three cycles allowed, but two consecutive cycles without progress stop the loop first.
      [3, 2],
    ] as const) {
      const w = fakeWorld({}, { git: true });
      implementer(w, { "sentinel:*": { writeFromPrompt: { "Write the audit report to": "Grade: FAIL\n- sum subtracts\n", ...fixList } } });
      const out = await runStages(options(w, { taskContext: ctx, sentinel: { enabled: true, maxCycles } }));
      expect(out.exitCode, `max ${maxCycles}`).toBe(10);
      expect(out.manifest.stages.at(-1)).toMatchObject({ name: "sentinel", status: "failure", exit_code: 10 });
      expect(w.calls().filter((c) => String(c.name).startsWith("sentinel-fix-")).length, `max ${maxCycles}`).toBe(fixes);
      expect(out.sentinel).toMatchObject({ grade: "FAIL", fixes });
      expect(out.refinement).toContain("sum subtracts");
      expect(refinementProblems(out.refinement)).toEqual([]);
    }
  });

  it("fails the stage when the sentinel gives no verdict, after one more try", async () => {
    const w = fakeWorld({}, { git: true });
    implementer(w, { "sentinel:*": { print: ["looks fine"] } });
    const out = await runStages(options(w, { taskContext: ctx, sentinel: { enabled: true } }));
    expect(out.exitCode).toBe(1);
    expect(out.error).toContain("no audit report");
    expect(
      w
        .calls()
        .filter((c) => c.kind === "sentinel")
        .map((c) => c.name),
    ).toEqual(["sentinel-1", "sentinel-1-retry"]);
  });

  it("is not there when it is off, even where the repository's stages name it; and never for a refinery", async () => {
    const w = fakeWorld({}, { git: true });
    implementer(w, {});
    const out = await runStages(
      options(w, { taskContext: ctx, stages: ["implement", "walkthrough", "sentinel"], sentinel: { enabled: false } }),
    );
    expect(out.exitCode).toBe(0);
    expect(out.manifest.stages.map((s) => s.name)).toEqual(["implement", "walkthrough"]);
    expect(w.calls().some((c) => c.kind === "sentinel")).toBe(false);
    expect(out.sentinel).toBeUndefined();

    const r = fakeWorld({ "refinery:walkthrough": { walkthrough: true } }, { git: true });
    git(r.repo, "commit", "-q", "--allow-empty", "-m", "base");
    const ref = await runStages(
      options(r, { agentType: "refinery", taskContext: { ...ctx, testCommand: "true" }, sentinel: { enabled: true } }),
    );
    expect(ref.manifest.stages.map((s) => s.name)).toEqual(["merge", "test", "fix", "walkthrough"]);
  });
});
