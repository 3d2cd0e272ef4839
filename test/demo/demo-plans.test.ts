/**
 * `forge demo --plan` on plans other than textkit, as a user runs it (the CLI command, the demo
 * process, the scripted agent): examples/plans/wordfreq (three nodes) and examples/plans/csv-lite,
 * whose committed overlay adds a task that the App runs with the rest. Each exits 0: every task
 * merged and the plan's own test_command passing on the integration branch, with none of textkit's
 * scripted review or CI fix demanded. An invalid plan gets its problems, one line each, and nothing starts.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
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
