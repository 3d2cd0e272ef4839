import { describe, expect, it } from "vitest";
import { validateDag, validateDagChange, validatePlan } from "../../../src/core/plan/validate.js";
import type { Dag } from "../../../src/core/schemas/dag.js";
import { generateDag } from "../../helpers/gen-plan.js";
import { overlayText, plan, type TaskSpec } from "./fixtures.js";

const brief = (ps: { rule: string; file: string; field?: string }[]) => ps.map((p) => `${p.rule} ${p.file} ${p.field ?? ""}`.trim());

const BASE: TaskSpec[] = [
  { id: "setup", type: "1" },
  { id: "feature", deps: ["setup"] },
  { id: "docs", type: "1", deps: ["setup"] },
  { id: "integrate", type: "refinery", deps: ["feature", "docs"] },
];

describe("validatePlan", () => {
  it("accepts a consistent plan", () => {
    expect(validatePlan(plan({ tasks: BASE }))).toEqual([]);
  });

  it("reports one cycle per strongly connected component, with its path", () => {
    const tasks: TaskSpec[] = [
      { id: "a", deps: ["b"] },
      { id: "b", deps: ["c"] },
      { id: "c", deps: ["a"] },
      { id: "x", deps: ["y"] },
      { id: "y", deps: ["x"] },
    ];
    const problems = validatePlan(plan({ tasks }));
    expect(brief(problems)).toEqual(["cycle tasks/a.md dependencies[0]", "cycle tasks/x.md dependencies[0]"]);
    expect(problems[0]!.message).toContain("a → b → c → a");
    expect(problems[1]!.message).toContain("x → y → x");
  });

  it("refuses ids that cannot be part of a git branch name, in the task file and in dag.json, with the rule bad-id", () => {
    const tasks: TaskSpec[] = [
      { id: "setup", type: "1" },
      { id: "fix..up", deps: ["setup"] },
      { id: "cache.lock", deps: ["setup"] },
      { id: "v1.", deps: ["setup"] },
    ];
    const problems = validatePlan(plan({ tasks }));
    expect(brief(problems.filter((p) => p.rule === "bad-id")).sort()).toEqual([
      "bad-id dag.json nodes[1].id",
      "bad-id dag.json nodes[2].id",
      "bad-id dag.json nodes[3].id",
      "bad-id tasks/cache.lock.md id",
      "bad-id tasks/fix..up.md id",
      "bad-id tasks/v1..md id",
    ]);
    expect(problems.find((p) => p.file === "tasks/fix..up.md")!.message).toBe(
      `"fix..up" cannot be part of a git branch name: no '..', and no '.lock' or '.' at its end (git check-ref-format)`,
    );
  });

  it("treats dependency order in dag.json as irrelevant", () => {
    const dag = BASE.map((t) => (t.id === "integrate" ? { ...t, deps: ["docs", "feature"] } : t));
    expect(validatePlan(plan({ tasks: BASE, dag }))).toEqual([]);
  });

  it("reports a dag.json that is not JSON with the line of the error", () => {
    const problems = validatePlan(plan({ tasks: BASE, dag: '{\n  "version": 1,\n  "planId": "test-plan",,\n}' }));
    expect(problems).toEqual([expect.objectContaining({ rule: "unreadable-json", file: "dag.json", line: 3 })]);
  });

  it("reports dag.json schema errors with their path and keeps comparing what it can read", () => {
    const text = JSON.stringify({
      version: 1,
      planId: "test-plan",
      nodes: [
        { id: "setup", type: "task", agentType: "1", dependencies: [] },
        { id: "feature", type: "job", agentType: "2", dependencies: ["setup"] },
      ],
      metadata: { createdAt: "x", createdBy: "y", totalTasks: 2, totalRefineries: 0 },
    });
    const problems = validatePlan(plan({ tasks: BASE.slice(0, 2), dag: text }));
    expect(brief(problems)).toEqual(["invalid-dag dag.json nodes[1].type"]);
  });
});

describe("validatePlan: overlays, the order of problems", () => {
  describe("overlays", () => {
    const hotfix: TaskSpec = { id: "hotfix", deps: ["feature"] };
    const patch: TaskSpec = { id: "patch", deps: ["hotfix"] };
    const withDeps = (extra: Record<string, string[]>) => (t: TaskSpec) => ({ ...t, deps: [...(t.deps ?? []), ...(extra[t.id] ?? [])] });

    it("accepts base + overlay-001 + overlay-002 applied in order", () => {
      const files = {
        "overlays/overlay-001.md": overlayText("overlay-001", ["hotfix"], [["hotfix", "integrate"]]),
        "overlays/overlay-002.md": overlayText(
          "overlay-002",
          ["patch"],
          [
            ["patch", "integrate"],
            ["hotfix", "docs"],
          ],
        ),
      };
      const dag = [...BASE, hotfix, patch].map(withDeps({ integrate: ["hotfix", "patch"], docs: ["hotfix"] }));
      expect(validatePlan(plan({ tasks: [...BASE, hotfix, patch], dag, files }))).toEqual([]);
    });

    it("refuses an edge naming a task that only a later overlay adds", () => {
      const files = {
        "overlays/overlay-001.md": overlayText("overlay-001", ["hotfix"], [["patch", "integrate"]]),
        "overlays/overlay-002.md": overlayText("overlay-002", ["patch"], []),
      };
      const dag = [...BASE, hotfix, patch].map(withDeps({ integrate: ["patch"] }));
      const problems = validatePlan(plan({ tasks: [...BASE, hotfix, patch], dag, files }));
      expect(brief(problems)).toEqual(["overlay-not-append-only overlays/overlay-001.md added_edges[0].from"]);
      expect(problems[0]!.message).toContain("overlay-002");
    });

    it("refuses a task added by two overlays", () => {
      const files = {
        "overlays/overlay-001.md": overlayText("overlay-001", ["hotfix"], []),
        "overlays/overlay-002.md": overlayText("overlay-002", ["hotfix"], []),
      };
      const problems = validatePlan(plan({ tasks: [...BASE, hotfix], files }));
      expect(brief(problems)).toEqual(["overlay-not-append-only overlays/overlay-002.md added_tasks[0]"]);
      expect(problems[0]!.message).toContain("overlay-001 added it");
    });

    it("refuses an edge a previous overlay already added", () => {
      const files = {
        "overlays/overlay-001.md": overlayText("overlay-001", ["hotfix"], [["hotfix", "integrate"]]),
        "overlays/overlay-002.md": overlayText("overlay-002", [], [["hotfix", "integrate"]]),
      };
      const dag = [...BASE, hotfix].map(withDeps({ integrate: ["hotfix"] }));
      expect(brief(validatePlan(plan({ tasks: [...BASE, hotfix], dag, files })))).toEqual([
        "overlay-not-append-only overlays/overlay-002.md added_edges[0]",
      ]);
    });

    it("reports gaps, bad names and ids that differ from the file name", () => {
      const files = {
        "overlays/overlay-001.md": overlayText("overlay-001", [], []),
        "overlays/overlay-003.md": overlayText("overlay-003", [], []),
        "overlays/overlay-4.md": overlayText("overlay-004", [], []),
        "overlays/overlay-005.md": overlayText("overlay-006", [], []),
      };
      const problems = validatePlan(plan({ tasks: BASE, files }));
      expect(brief(problems)).toEqual([
        "overlay-numbering overlays/overlay-003.md",
        "overlay-numbering overlays/overlay-005.md",
        "id-file-mismatch overlays/overlay-005.md id",
        "overlay-numbering overlays/overlay-4.md",
      ]);
      expect(problems[0]!.message).toContain("overlay-002.md is missing");
    });

    it("locates a cycle that an overlay edge closes in the overlay", () => {
      const files = { "overlays/overlay-001.md": overlayText("overlay-001", [], [["integrate", "setup"]]) };
      const dag = BASE.map(withDeps({ setup: ["integrate"] }));
      const problems = validatePlan(plan({ tasks: BASE, dag, files }));
      expect(brief(problems)).toEqual(["cycle overlays/overlay-001.md added_edges[0]"]);
      expect(problems[0]!.message).toMatch(/setup → integrate → (feature|docs) → setup/);
    });

    it("reports an overlay task missing from dag.json as dag ≠ base + overlays", () => {
      const files = { "overlays/overlay-001.md": overlayText("overlay-001", ["hotfix"], []) };
      expect(brief(validatePlan(plan({ tasks: [...BASE, hotfix], dag: BASE, files })))).toEqual([
        "dag-not-base-plus-overlays dag.json nodes",
      ]);
    });
  });

  it("sorts problems by file, then line", () => {
    const tasks: TaskSpec[] = [
      { id: "b", deps: ["zz", "b"] },
      { id: "a", deps: ["yy"] },
    ];
    const problems = validatePlan(plan({ tasks, dag: [] }));
    const keys = problems.map((p) => [p.file, p.line ?? 0] as const);
    expect(keys).toEqual([...keys].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] - y[1])));
    expect(new Set(problems.map((p) => p.rule))).toEqual(new Set(["unknown-dependency", "self-dependency", "dag-disagrees"]));
  });
});

const node = (id: string, dependencies: string[] = [], type: "task" | "refinery" = "task"): Dag["nodes"][number] => ({
  id,
  type,
  agentType: type === "refinery" ? "refinery" : "2",
  dependencies,
});
const dagOf = (nodes: Dag["nodes"]): Dag => ({
  version: 1,
  planId: "p",
  nodes,
  metadata: {
    createdAt: "2026-01-01T00:00:00Z",
    createdBy: "test",
    totalTasks: nodes.filter((n) => n.type === "task").length,
    totalRefineries: nodes.filter((n) => n.type === "refinery").length,
  },
});

describe("validateDag", () => {
  it("accepts generated DAGs", () => {
    expect(validateDag(generateDag(500, 2000, 7))).toEqual([]);
  });

  it("reports every structural rule on dag.json alone", () => {
    const dag = dagOf([node("a", ["a"]), node("b", ["nope"]), node("c", ["d"]), node("d", ["c"]), node("r", [], "refinery"), node("a")]);
    dag.nodes.push({ ...node("t"), agentType: "refinery" });
    dag.metadata.totalTasks = 9;
    expect(brief(validateDag(dag)).sort()).toEqual(
      [
        "self-dependency dag.json nodes[0].dependencies[0]",
        "unknown-dependency dag.json nodes[1].dependencies[0]",
        "cycle dag.json nodes[2].dependencies[0]",
        "refinery-without-dependencies dag.json nodes[4].dependencies",
        "duplicate-id dag.json nodes[5].id",
        "type-mismatch dag.json nodes[6].type",
        "metadata-totals dag.json metadata.totalTasks",
      ].sort(),
    );
  });

  it("handles a 10,000-long chain and a 10,000-long cycle without recursion", () => {
    const n = 10_000;
    const chain = dagOf(Array.from({ length: n }, (_, i) => node(`n${i}`, i ? [`n${i - 1}`] : [])));
    expect(validateDag(chain)).toEqual([]);
    chain.nodes[0]!.dependencies = [`n${n - 1}`];
    const problems = validateDag(chain);
    expect(problems).toHaveLength(1);
    expect(problems[0]!.rule).toBe("cycle");
    expect(problems[0]!.message.split(" → ")).toHaveLength(n + 1);
  });
});

describe("validateDagChange", () => {
  const before = dagOf([node("a"), node("b", ["a"]), node("r", ["b"], "refinery")]);

  it("accepts added nodes and edges", () => {
    const after = dagOf([node("a"), node("b", ["a"]), node("r", ["b", "c"], "refinery"), node("c", ["a"])]);
    expect(validateDagChange(before, after)).toEqual([]);
  });

  it("refuses removed nodes, removed edges and changed types", () => {
    const after = dagOf([node("a"), node("b", []), node("r", ["b"])]);
    after.nodes[2]!.agentType = "2";
    expect(brief(validateDagChange(before, after))).toEqual([
      "overlay-not-append-only dag.json nodes[1].dependencies",
      "overlay-not-append-only dag.json nodes[2].agentType",
    ]);
    expect(brief(validateDagChange(before, dagOf([node("a"), node("b", ["a"])])))).toEqual(["overlay-not-append-only dag.json nodes"]);
  });

  it("refuses an addition that closes a cycle", () => {
    const after = dagOf([node("a", ["r"]), node("b", ["a"]), node("r", ["b"], "refinery")]);
    expect(brief(validateDagChange(before, after))).toEqual(["cycle dag.json nodes[0].dependencies[0]"]);
  });
});
