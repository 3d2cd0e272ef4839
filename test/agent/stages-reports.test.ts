// The document that goes with exit 10 and 11, checked at the end of the session that ended with it
// (src/agent/stages/reports.ts): an invalid one goes back to the agent once with its problems, then
// the stage fails with them, and is not retried.
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runStages } from "../../src/agent/stages/index.js";
import { cleanupTempDirs, fakeWorld } from "./helpers.js";
import { options } from "./stages-helpers.js";

afterEach(cleanupTempDirs);

/** A Change Request with a two-line title, no reason, an unknown field and no body sections. */
const BAD_CR = '---\ntitle: "Split\\nthe task"\nsuggested_action: AMEND\nowner: me\n---\n\nNo sections.\n';
const prompt = (dir: string, session: string) => readFileSync(path.join(dir, "session", "stages", session, "prompt.md"), "utf8");

describe("a Change Request (exit 11) that is not one", () => {
  it("goes back to the agent once with its problems; the corrected one ends the stage with 11", async () => {
    const w = fakeWorld({
      implement: { exit: 11, rawChangeRequest: BAD_CR },
      "implement-fix-change-request": { exit: 11, changeRequest: "Split the task in two" },
    });
    const out = await runStages(options(w));
    expect(out.exitCode).toBe(11);
    expect(readFileSync(out.changeRequestPath!, "utf8")).toContain('title: "Split the task in two"');
    expect(w.calls().map((c) => c.name)).toEqual(["implement", "implement-fix-change-request"]);
    const fix = prompt(w.dir, "02-implement-fix-change-request");
    expect(fix).toContain("ended with FORGE_EXIT=11, but the Change Request at");
    expect(fix).toContain("- change-request.md title — must be one line");
    expect(fix).toContain("- change-request.md reason — ");
    expect(fix).toContain("- change-request.md owner — unknown field");
    expect(fix).toContain('- change-request.md body — missing section "## Description"');
    expect(fix).toContain("Then end with FORGE_EXIT=11.");
    // The correction still has the task and the report paths.
    expect(fix).toContain("## The task");
    expect(fix).toContain(`- Change Request (exit 11): ${out.changeRequestPath}`);
  });

  it("still invalid after the correction: the stage fails with the problems left, and is not retried", async () => {
    const w = fakeWorld({
      implement: { exit: 11, rawChangeRequest: BAD_CR },
      "implement-fix-change-request": { exit: 11, rawChangeRequest: `---\ntitle: ${"x".repeat(300)}\n---\n` },
    });
    const out = await runStages(options(w));
    expect(out.exitCode).toBe(1);
    expect(out.error).toMatch(/^implement: the Change Request \(exit 11\) is still invalid after one correction: /);
    expect(out.error).toContain("change-request.md title — Too big: expected string to have <=200 characters");
    expect(out.changeRequestPath).toBeUndefined();
    expect(w.calls().map((c) => c.name)).toEqual(["implement", "implement-fix-change-request"]);
    // Both sessions are the stage's: the first and its correction.
    expect(out.manifest.stages[0]).toMatchObject({
      name: "implement",
      exit_code: 1,
      attempts: 2,
      session_dirs: ["stages/01-implement", "stages/02-implement-fix-change-request"],
    });
  });

  it("a correction that ends with another code fails the stage, saying so", async () => {
    const w = fakeWorld({ implement: { exit: 11 }, "implement-fix-change-request": { exit: 0 } });
    const out = await runStages(options(w));
    expect(out.exitCode).toBe(1);
    expect(out.error).toContain(
      "the Change Request (exit 11) was invalid (change-request.md — missing: the file was not written) and its correction ended with exit 0, not 11",
    );
  });

  it("a huge document is refused before it is parsed", async () => {
    const huge = `---\ntitle: Split\nreason: "${"r".repeat(70_000)}"\nsuggested_action: AMEND\n---\n`;
    const w = fakeWorld({
      implement: { exit: 11, rawChangeRequest: huge },
      "implement-fix-change-request": { exit: 11, changeRequest: "Split the task" },
    });
    const out = await runStages(options(w));
    expect(out.exitCode).toBe(11);
    expect(prompt(w.dir, "02-implement-fix-change-request")).toMatch(
      /- change-request\.md — 70\d{3} bytes; a Change Request has at most 65536/,
    );
  });
});

describe("a refinement document (exit 10) that is not one", () => {
  it("goes back to the agent once; the corrected one is the result's refinement", async () => {
    const w = fakeWorld({
      implement: { exit: 10, rawRefinement: "types do not check\n" },
      "implement-fix-refinement": { exit: 10, refinement: "types do not check" },
    });
    const out = await runStages(options(w));
    expect(out.exitCode).toBe(10);
    expect(out.refinement).toMatch(/^# Refinement Request\n\n## Summary\ntypes do not check\n/);
    const fix = prompt(w.dir, "02-implement-fix-refinement");
    expect(fix).toContain('- refinement.md — must start with the heading "# Refinement Request"');
    expect(fix).toContain('- refinement.md — missing section "## Suggested Resolution"');
    expect(fix).toContain("Then end with FORGE_EXIT=10.");
  });

  it("still invalid: the stage fails with the problems", async () => {
    const w = fakeWorld({ implement: { exit: 10, rawRefinement: "# Refinement Request\n\n## Summary\nx\n" } });
    const out = await runStages(options(w));
    expect(out.exitCode).toBe(1);
    expect(out.error).toContain('the refinement document (exit 10) was invalid (refinement.md — missing section "## Context"');
  });
});
