import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { findCycles, topoOrder } from "../../../src/core/plan/graph.js";
import { generateDag, nodeId } from "../../helpers/gen-plan.js";

const n = (id: string, ...dependencies: string[]) => ({ id, dependencies });

describe("findCycles", () => {
  it("finds nothing in a DAG and ignores self edges and unknown ids", () => {
    expect(findCycles([n("a"), n("b", "a", "b", "zz"), n("c", "a", "b")])).toEqual([]);
  });

  it("returns the shortest cycle through the first node of each component", () => {
    expect(findCycles([n("a", "b"), n("b", "c", "a"), n("c", "a"), n("d", "e"), n("e", "d")])).toEqual([
      ["a", "b", "a"],
      ["d", "e", "d"],
    ]);
  });
});

describe("topoOrder", () => {
  it("orders dependencies first, ties in input order", () => {
    expect(topoOrder([n("c", "a", "b"), n("a"), n("b", "a")])).toEqual({ ok: true, order: ["a", "b", "c"] });
  });

  it("returns a cycle when there is no order", () => {
    expect(topoOrder([n("a", "c"), n("b", "a"), n("c", "b"), n("d")])).toEqual({ ok: false, cycle: ["a", "c", "b", "a"] });
  });

  it("orders every generated DAG, and finds the cycle a back edge closes", () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 60 }), fc.integer({ min: 1, max: 200 }), fc.integer(), (nodes, edges, seed) => {
        const dag = generateDag(nodes, edges, seed);
        const result = topoOrder(dag.nodes);
        if (!result.ok) return false;
        const position = new Map(result.order.map((id, i) => [id, i]));
        for (const node of dag.nodes) for (const d of node.dependencies) if (position.get(d)! >= position.get(node.id)!) return false;
        // A node that something depends on, made to depend on that dependent, closes a cycle.
        const dependent = dag.nodes.find((x) => x.dependencies.length > 0);
        if (!dependent) return true;
        const dependency = dependent.dependencies[0]!;
        const cyclic = dag.nodes.map((x) => (x.id === dependency ? { ...x, dependencies: [...x.dependencies, dependent.id] } : x));
        const cycles = findCycles(cyclic);
        return !topoOrder(cyclic).ok && cycles.length === 1 && cycles[0]!.includes(dependent.id) && cycles[0]!.includes(dependency);
      }),
      { numRuns: 200 },
    );
  });

  it("handles a 10,000-long chain", () => {
    const chain = Array.from({ length: 10_000 }, (_, i) => n(nodeId(i), ...(i ? [nodeId(i - 1)] : [])));
    const result = topoOrder([...chain].reverse());
    expect(result.ok && result.order[0]).toBe(nodeId(0));
    expect(result.ok && result.order.length).toBe(10_000);
  });
});

describe("generateDag", () => {
  it("is deterministic, acyclic, has the asked sizes, and gives every refinery a dependency", () => {
    const dag = generateDag(1000, 5000, 42);
    expect(generateDag(1000, 5000, 42)).toEqual(dag);
    expect(generateDag(1000, 5000, 43)).not.toEqual(dag);
    expect(dag.nodes).toHaveLength(1000);
    expect(dag.nodes.reduce((s, x) => s + x.dependencies.length, 0)).toBe(5000);
    expect(dag.nodes[0]!.id).toBe("t00001");
    const refineries = dag.nodes.filter((x) => x.type === "refinery");
    expect(refineries.length).toBeGreaterThan(10);
    expect(refineries.every((r) => r.dependencies.length > 0 && r.agentType === "refinery")).toBe(true);
    expect(dag.metadata.totalRefineries).toBe(refineries.length);
    expect(topoOrder(dag.nodes).ok).toBe(true);
  });
});
