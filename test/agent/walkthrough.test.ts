import { describe, expect, it } from "vitest";
import { completeWalkthrough, parseAgentWalkthrough } from "../../src/agent/walkthrough.js";
import { walkthroughFrontmatterSchema } from "../../src/core/schemas/walkthrough.js";

const agentText = `---
status: completed
confidence: 0.7
files_changed:
  - path: ./src/a.ts
    reason: new module
  - path: src/imaginary.ts
    reason: the agent thinks it changed this
tests:
  - name: npm test
    result: pass
risks: [none really]
followups: []
branch: made-up
---

## Summary
S

## Approach
A

## Issues Encountered
None.

## Testing
T
`;

const facts = {
  task_id: "t1",
  run_id: "r1",
  attempt: 2,
  branch: "forge/r1/t1/2",
  base_ref: "forge/r1/_integration",
  head_sha: "a".repeat(40),
  time_spent_minutes: 3.5,
  files_changed: ["src/a.ts", "src/b.ts"],
  agent: "claude",
  turns: 9,
};

describe("walkthrough", () => {
  it("accepts an agent walkthrough without the runner's fields", () => {
    expect(parseAgentWalkthrough(agentText).problems).toEqual([]);
  });

  it("names what is wrong: missing frontmatter, bad values, missing sections", () => {
    expect(parseAgentWalkthrough("just text").problems).toEqual([
      "frontmatter: missing (the file must start with --- YAML ---)",
      'body: missing section "## Summary"',
      'body: missing section "## Approach"',
      'body: missing section "## Issues Encountered"',
      'body: missing section "## Testing"',
    ]);
    const bad = parseAgentWalkthrough(agentText.replace("confidence: 0.7", "confidence: 7").replace("## Testing\nT\n", ""));
    expect(bad.problems).toEqual([
      "frontmatter: walkthrough.md confidence — Too big: expected number to be <=1",
      'body: missing section "## Testing"',
    ]);
  });

  it("completes it with the runner's measured facts, which win, and the result is valid", () => {
    const done = completeWalkthrough(agentText, facts);
    expect(done.problems).toEqual([]);
    const fm = walkthroughFrontmatterSchema.parse(done.frontmatter);
    expect(fm).toMatchObject({ branch: "forge/r1/t1/2", attempt: 2, head_sha: "a".repeat(40), agent: "claude", turns: 9 });
    // The measured list, with the agent's reasons where it gave one.
    expect(fm.files_changed).toEqual([
      { path: "src/a.ts", reason: "new module" },
      { path: "src/b.ts", reason: "" },
    ]);
    if (!done.ok) throw new Error(done.error);
    expect(parseAgentWalkthrough(done.markdown).problems).toEqual([]);
    expect(done.markdown).toContain("## Issues Encountered");
  });

  it("reports what the agent left out even after completion", () => {
    const done = completeWalkthrough("---\nconfidence: 0.5\n---\n## Summary\nx\n", facts);
    expect(done.frontmatter).toBeUndefined();
    expect(done.problems).toContain('frontmatter: walkthrough.md status — Invalid option: expected one of "completed"|"failed"|"partial"');
    expect(done.problems).toContain('body: missing section "## Testing"');
  });
});
