import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { completeWalkthrough, splitFrontmatter, type WalkthroughFacts } from "../../src/agent/walkthrough.js";
import { walkthroughFrontmatterSchema } from "../../src/core/schemas/walkthrough.js";

const facts: WalkthroughFacts = {
  task_id: "t1",
  run_id: "r1",
  attempt: 2,
  branch: "forge/r1/t1/2",
  base_ref: "forge/r1/_integration",
  head_sha: "a".repeat(40),
  time_spent_minutes: 3.5,
  files_changed: ["src/a.ts", "src/b.ts"],
  agent: "claude",
  cost_usd: 0.12,
  turns: 7,
};

const BODY = "## Summary\n\nS.\n\n## Approach\n\nA.\n\n## Issues Encountered\n\nI.\n\n## Testing\n\nT.\n";

describe("completing the walkthrough", () => {
  it("fills the runner's facts over the agent's claims and keeps the agent's reasons", () => {
    const text = `---
task_id: other
run_id: r9
attempt: 9
branch: main
base_ref: main
head_sha: ${"b".repeat(40)}
status: completed
confidence: 0.8
time_spent_minutes: 120
files_changed:
  - { path: src/a.ts, reason: "new API" }
  - src/c.ts
tests: [{ name: unit, result: pass }]
risks: [r]
followups: [f]
cost_usd: 99
---
${BODY}`;
    const out = completeWalkthrough(text, facts);
    if (!out.ok) throw new Error(out.error);
    expect(out.frontmatter).toMatchObject({
      task_id: "t1",
      run_id: "r1",
      attempt: 2,
      branch: "forge/r1/t1/2",
      base_ref: "forge/r1/_integration",
      head_sha: "a".repeat(40),
      time_spent_minutes: 3.5,
      files_changed: [
        { path: "src/a.ts", reason: "new API" },
        { path: "src/b.ts", reason: "" },
      ],
      cost_usd: 0.12,
      turns: 7,
      agent: "claude",
      status: "completed",
      confidence: 0.8,
    });
    expect(out.warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^head_sha: the agent claimed/),
        expect.stringMatching(/^branch: the agent claimed "main"/),
        "the agent listed files it did not change: src/c.ts",
      ]),
    );
    // The file written to the record parses back to the same, valid frontmatter.
    const again = splitFrontmatter(out.markdown)!;
    expect(walkthroughFrontmatterSchema.parse(parseYaml(again.yaml))).toEqual(out.frontmatter);
    expect(again.body).toContain("## Testing");
  });

  it("accepts a walkthrough that leaves every measured fact to the runner", () => {
    const out = completeWalkthrough(`---\nstatus: partial\nconfidence: 0.5\n---\n${BODY}`, facts);
    expect(out.ok && out.frontmatter.status).toBe("partial");
    expect(out.warnings).toEqual([]);
  });

  it.each([
    [undefined, "the agent wrote no walkthrough"],
    ["   ", "the agent wrote no walkthrough"],
    ["no frontmatter here", "the walkthrough has no YAML frontmatter (a --- block at the top)"],
    ["---\nstatus: [unclosed\n---\n", "the walkthrough's frontmatter is not valid YAML"],
    ["---\n- a list\n---\n", "the walkthrough's frontmatter is not a mapping"],
    ["---\nstatus: done\nconfidence: 2\n---\n", "the walkthrough's frontmatter is invalid: walkthrough.md status — Invalid option"],
    ["---\nconfidence: 0.5\n---\n", "the walkthrough's frontmatter is invalid: walkthrough.md status — "],
  ])("fails with the reason: %j", (text, reason) => {
    const out = completeWalkthrough(text, facts);
    expect(out.ok).toBe(false);
    if (!out.ok) expect(out.error.startsWith(reason)).toBe(true);
  });

  it("drops unknown fields with a warning and reports missing sections", () => {
    const out = completeWalkthrough("---\nstatus: completed\nconfidence: 1\nmood: great\n---\n## Summary\n\nok\n", facts);
    expect(out.ok).toBe(true);
    expect(out.warnings).toEqual([
      "unknown walkthrough field 'mood' dropped",
      "walkthrough sections missing: Approach, Issues Encountered, Testing",
    ]);
  });
});
