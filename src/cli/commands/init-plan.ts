/**
 * The example plan `forge init` writes under `.forge/plans/hello/`: two tasks, the second depending
 * on the first, in the format of examples/plans/ (docs/formats.md). `forge validate` accepts it.
 */
export const HELLO_PLAN_ID = "hello";

const PLAN_MD = `# hello

A first Forge plan: two small tasks, the second depending on the first, to see a run from end to
end. Replace it with your own plan, or comment \`/forge plan\` on an issue to have a Captain agent
write one.

## Goals

- A \`HELLO.md\` file at the root of the repository greeting its contributors.
- The README links to it.

## Shape of the work

\`greeting\` writes HELLO.md. \`link-greeting\` depends on it and adds the link from the README.
`;

const DAG = {
  version: 1,
  planId: HELLO_PLAN_ID,
  nodes: [
    { id: "greeting", type: "task", agentType: "1", dependencies: [] },
    { id: "link-greeting", type: "task", agentType: "1", dependencies: ["greeting"] },
  ],
  metadata: { createdAt: "2026-01-01T00:00:00Z", createdBy: "forge init", totalTasks: 2, totalRefineries: 0 },
};

const GREETING_MD = `---
id: greeting
title: "Write HELLO.md"
type: 1
dependencies: []
acceptance_criteria:
  - "HELLO.md exists at the root of the repository"
  - "It greets the project's contributors in one or two sentences and names the project"
estimated_complexity: small
paths:
  - HELLO.md
---

## Description

Write a short \`HELLO.md\` at the root of the repository that greets the project's contributors.

## Context

This is Forge's example plan (written by \`forge init\`); see plan.md. The file is plain Markdown.

## Instructions

1. Read the README to learn the project's name and purpose.
2. Write \`HELLO.md\`: a \`# Hello\` heading and one or two sentences greeting contributors to the project.
3. Change no other file.
`;

const LINK_GREETING_MD = `---
id: link-greeting
title: "Link HELLO.md from the README"
type: 1
dependencies:
  - greeting
acceptance_criteria:
  - "The README has a link to HELLO.md"
  - "Nothing else in the README changed"
estimated_complexity: small
paths:
  - README.md
---

## Description

Add a link to \`HELLO.md\` (written by the \`greeting\` task) to the README.

## Context

This is Forge's example plan (written by \`forge init\`); see plan.md. \`greeting\` has merged, so
\`HELLO.md\` exists. If the repository has no README.md, create one with the project's name as its heading.

## Instructions

1. Open the README (README.md, or create it).
2. Add one line near the top: \`See [HELLO.md](HELLO.md).\`
3. Change no other file.
`;

/** The plan's files, relative to its folder. */
export function helloPlanFiles(): Record<string, string> {
  return {
    "plan.md": PLAN_MD,
    "dag.json": `${JSON.stringify(DAG, null, 2)}\n`,
    "tasks/greeting.md": GREETING_MD,
    "tasks/link-greeting.md": LINK_GREETING_MD,
  };
}
