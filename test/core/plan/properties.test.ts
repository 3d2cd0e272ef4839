// Properties over generated plans: a generated plan is valid, and each kind of damage is reported
// by its rule (and only damage of that kind is reported).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parsePlan, type ParsedPlan } from "../../../src/core/plan/parse.js";
import { validatePlan } from "../../../src/core/plan/validate.js";
import type { Dag } from "../../../src/core/schemas/dag.js";
import { generateDag, taskFileText } from "../../helpers/gen-plan.js";

function planOf(dag: Dag, taskNodes: Dag["nodes"] = dag.nodes): ParsedPlan {
  const files = new Map<string, string>([
    ["plan.md", "# Generated\n"],
    ["specs/generated.md", ""],
    ["dag.json", JSON.stringify(dag, null, 2)],
  ]);
  for (const n of taskNodes) files.set(`tasks/${n.id}.md`, taskFileText(n));
  return parsePlan({ planId: dag.planId, files, dirs: new Set(["tasks", "specs"]), unreadable: [] });
}

const clone = (dag: Dag): Dag => structuredClone(dag);
const dagArb = fc
  .record({ nodes: fc.integer({ min: 3, max: 40 }), edges: fc.integer({ min: 2, max: 120 }), seed: fc.integer() })
  .map(({ nodes, edges, seed }) => generateDag(nodes, edges, seed))
  .filter((dag) => dag.nodes.some((n) => n.dependencies.length > 0));

const rules = (plan: ParsedPlan) => [...new Set(validatePlan(plan).map((p) => p.rule))].sort();

describe("generated plans", () => {
  it("are valid", () => {
    fc.assert(
      fc.property(dagArb, (dag) => validatePlan(planOf(dag)).length === 0),
      { numRuns: 100 },
    );
  });

  it("report a back edge, in files and dag.json alike, as a cycle", () => {
    fc.assert(
      fc.property(dagArb, fc.nat(), (dag, pick) => {
        const withDeps = dag.nodes.filter((n) => n.dependencies.length > 0);
        const dependent = withDeps[pick % withDeps.length]!;
        const bad = clone(dag);
        bad.nodes.find((n) => n.id === dependent.dependencies[0])!.dependencies.push(dependent.id);
        const problems = validatePlan(planOf(bad));
        return problems.length === 1 && problems[0]!.rule === "cycle" && problems[0]!.message.includes(dependent.id);
      }),
      { numRuns: 100 },
    );
  });

  it("report a dependency dag.json lacks as a disagreement at that node", () => {
    fc.assert(
      fc.property(dagArb, fc.nat(), (dag, pick) => {
        const withDeps = dag.nodes.filter((n) => n.dependencies.length > 0);
        const victim = withDeps[pick % withDeps.length]!;
        const bad = clone(dag);
        const index = bad.nodes.findIndex((n) => n.id === victim.id);
        bad.nodes[index]!.dependencies.pop();
        // dag.json changed, the task files did not; a refinery may now also lack dependencies in dag.json only.
        const problems = validatePlan(planOf(bad, dag.nodes));
        return problems.length === 1 && problems[0]!.rule === "dag-disagrees" && problems[0]!.field === `nodes[${index}].dependencies`;
      }),
      { numRuns: 100 },
    );
  });

  it("report a task file without a dag.json node, and the reverse", () => {
    fc.assert(
      fc.property(dagArb, (dag) => {
        const extra = { id: "zz-extra", type: "task" as const, agentType: "1" as const, dependencies: [dag.nodes[0]!.id] };
        const moreFiles = planOf(dag, [...dag.nodes, extra]);
        const moreNodes = clone(dag);
        moreNodes.nodes.push(extra);
        moreNodes.metadata.totalTasks++;
        return (
          JSON.stringify(rules(moreFiles)) === JSON.stringify(["dag-disagrees"]) &&
          JSON.stringify(rules(planOf(moreNodes, dag.nodes))) === JSON.stringify(["dag-disagrees"])
        );
      }),
      { numRuns: 50 },
    );
  });

  it("report a renamed dependency as unknown in the task file and as a disagreement in dag.json", () => {
    const dag = generateDag(30, 80, 5);
    const victim = dag.nodes.find((n) => n.dependencies.length > 0)!;
    const files = dag.nodes.map((n) => (n.id === victim.id ? { ...n, dependencies: [...n.dependencies.slice(1), "t99999"] } : n));
    expect(rules(planOf(dag, files))).toEqual(["dag-disagrees", "unknown-dependency"]);
  });
});
