/**
 * `forge demo --plan` on plans other than textkit, as a user runs it (the CLI command, the demo
 * process, the scripted agent): examples/plans/wordfreq (three nodes) and examples/plans/csv-lite,
 * whose committed overlay adds a task that the App runs with the rest. Each exits 0: every task
 * merged and the plan's own test_command passing on the integration branch, with none of textkit's
 * scripted review or CI fix demanded — and a plan whose tasks all merge but whose test_command fails
 * on the integration branch exits 1. An invalid plan gets its problems, one line each, and nothing starts.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { DemoResult } from "../../src/demo/run.js";
import { runForge } from "../cli/helpers.js";

const out = mkdtempSync(path.join(tmpdir(), "forge-demo-plans-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

async function demo(plan: string): Promise<{ code: number; result: DemoResult; err: string }> {
  const { code, out: stdout, err } = await runForge(["demo", "--plan", plan, "--json", "--out", out], process.cwd());
  const result = JSON.parse(stdout) as DemoResult;
  expect(code, `${err.slice(-4000)}\n${JSON.stringify(result.problems)}`).toBe(0);
  expect(result).toMatchObject({ ok: true, problems: [], status: "completed", changeRequests: [], overlayPrs: [], feedback: {} });
  for (const t of result.tasks) expect(t, t.id).toMatchObject({ status: "MERGED", pr: expect.any(Number) });
  expect(result.finalPr).toMatchObject({ head: `forge/${result.runId}/_integration`, base: "main" });
  expect(result.jobs.captain).toBe(0);
  expect(result.reportPath && existsSync(result.reportPath)).toBe(true);
  return { code, result, err };
}

describe("forge demo --plan", () => {
  it("runs wordfreq to the end: every task merged, the plan's node --test passing on the integration branch", async () => {
    const { result, err } = await demo("examples/plans/wordfreq");
    expect(result.planId).toBe("wordfreq");
    expect(result.tasks.map((t) => [t.id, t.kind])).toEqual([
      ["tokenize", "task"],
      ["count", "task"],
      ["release", "refinery"],
    ]);
    // tokenize 2, count 2, index 1: the tests the plan's tasks wrote, run by its own test_command.
    expect(result.testsOnIntegration).toEqual({ ok: true, commands: ["node --test"], pass: 5, fail: 0, summary: "5 passed, 0 failed" });
    expect(err).toContain("Forge demo — plan wordfreq (3 nodes), agent: the scripted agent");
  }, 600_000);

  it("runs csv-lite with its committed overlay: the overlay's task runs and merges like the others", async () => {
    const { result, err } = await demo("examples/plans/csv-lite");
    expect(result.tasks.map((t) => t.id)).toEqual(["parse", "format", "release", "quote"]);
    expect(result.tasks.find((t) => t.id === "quote")).toMatchObject({ addedBy: "overlay-001", status: "MERGED", attempts: 1 });
    // The run's plan holds the overlay from the start: no Change Request, no Captain.
    expect(result.overlays).toEqual(["overlay-001"]);
    expect(result.notes.filter((n) => n.includes("unused"))).toEqual([]);
    expect(err).toContain("Forge demo — plan csv-lite (4 nodes, 1 overlay(s) committed with it)");
    expect(err).toMatch(/run csv-lite-[0-9a-f]{7} started: 4 nodes/);
    // parse 2, format 2, quote 2, index 1 (which reads back what format writes through quote's parser).
    expect(result.testsOnIntegration).toMatchObject({ ok: true, commands: ["node --test"], pass: 7, fail: 0 });
    const html = readFileSync(result.reportPath!, "utf8");
    for (const id of ["parse", "format", "release", "quote"])
      expect(html).toContain(`<g class="node" data-id="${id}" data-status="MERGED">`);
  }, 600_000);

  it("exits 1 when every task merged but the plan's own checks fail on the integration branch", async () => {
    // wordfreq's first task alone, its test asking for the wrong words: the scripted agent writes it as
    // given (it runs no tests), the task merges, and the plan's test_command fails on the integration branch.
    // Its sentinel is off (`sentinel: false`): on, it runs the task's test_command and sends the task back first.
    const dir = path.join(out, "plans", "redcheck");
    const task = readFileSync("examples/plans/wordfreq/tasks/tokenize.md", "utf8")
      .replace("estimated_complexity: small\n", "estimated_complexity: small\ntest_command: node --test\nsentinel: false\n")
      .replace('["the", "cat", "the", "hat"]));', '["the", "dog"]));');
    expect(task).toContain('["the", "dog"]');
    mkdirSync(path.join(dir, "tasks"), { recursive: true });
    writeFileSync(path.join(dir, "tasks", "tokenize.md"), task);
    writeFileSync(path.join(dir, "plan.md"), "# redcheck\n\nOne task whose own test fails once merged.\n");
    const dag = {
      version: 1,
      planId: "redcheck",
      nodes: [{ id: "tokenize", type: "task", agentType: "1", dependencies: [] }],
      metadata: { createdAt: "2026-11-27T09:00:00Z", createdBy: "octocat", totalTasks: 1, totalRefineries: 0 },
    };
    writeFileSync(path.join(dir, "dag.json"), `${JSON.stringify(dag, null, 2)}\n`);
    const {
      code,
      out: stdout,
      err,
    } = await runForge(["demo", "--plan", dir, "--json", "--out", path.join(out, "redcheck")], process.cwd());
    const result = JSON.parse(stdout) as DemoResult;
    expect(code, err.slice(-4000)).toBe(1);
    expect(result).toMatchObject({ ok: false, status: "completed" });
    expect(result.tasks).toMatchObject([{ id: "tokenize", status: "MERGED" }]);
    expect(result.testsOnIntegration).toMatchObject({ ok: false, commands: ["node --test"], pass: 1, fail: 1 });
    expect(result.problems).toEqual([
      expect.stringMatching(
        /^the plan's checks fail on the integration branch \(node --test\): 1 passed, 1 failed; `node --test` exited 1/,
      ),
    ]);
  }, 600_000);

  it("names an invalid plan's problems, one line each, and starts nothing", async () => {
    const { code, out: stdout, err } = await runForge(["demo", "--plan", "examples/invalid/duplicate-id"], process.cwd());
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(err).toBe(
      [
        'forge demo: examples/invalid/duplicate-id/tasks/docs-copy.md:2 id — id "docs" is already used by tasks/docs.md',
        "forge demo: the plan in examples/invalid/duplicate-id has 1 problem; nothing was started",
        "",
      ].join("\n"),
    );
    const many = await runForge(["demo", "--plan", "src"], process.cwd());
    expect(many.code).toBe(1);
    expect(many.err.split("\n").filter(Boolean)).toEqual([
      "forge demo: src/dag.json — dag.json is missing",
      "forge demo: src/plan.md — plan.md is missing",
      "forge demo: src/tasks/ — the tasks/ folder is missing",
      "forge demo: the plan in src has 3 problems; nothing was started",
    ]);
  });
});
