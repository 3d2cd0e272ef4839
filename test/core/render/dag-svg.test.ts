/**
 * The report's DAG is laid out by dagre and no edge passes through a box: checked geometrically on
 * every example plan and on random DAGs. Each dependency is one edge, leaving its dependency's box at
 * the bottom and entering its dependent's at the top.
 */
import { readdirSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadPlan } from "../../../src/core/plan/index.js";
import { dagSvg, type SvgNode } from "../../../src/core/render/dag-svg.js";
import { edgesThroughBoxes, readDag, segmentEntersBox } from "./dag-geometry.js";

const PLANS = path.resolve("examples/plans");

function check(nodes: SvgNode[]): void {
  const svg = dagSvg(nodes);
  expect(edgesThroughBoxes(svg)).toEqual([]);
  const { boxes, edges } = readDag(svg);
  expect(boxes.map((b) => b.id).sort()).toEqual(nodes.map((n) => n.id).sort());
  const ids = new Set(nodes.map((n) => n.id));
  const wanted = nodes.flatMap((n) => [...new Set(n.dependencies)].filter((d) => ids.has(d) && d !== n.id).map((d) => `${d}→${n.id}`));
  expect(edges.map((e) => `${e.from}→${e.to}`).sort()).toEqual(wanted.sort());
  const box = new Map(boxes.map((b) => [b.id, b]));
  for (const e of edges) {
    const [first, last] = [e.points[0]!, e.points.at(-1)!];
    const [from, to] = [box.get(e.from)!, box.get(e.to)!];
    expect(first.y, `${e.from}→${e.to}`).toBeCloseTo(from.y + from.h, 0);
    expect(first.x).toBeGreaterThanOrEqual(from.x);
    expect(first.x).toBeLessThanOrEqual(from.x + from.w);
    expect(last.y, `${e.from}→${e.to}`).toBeCloseTo(to.y, 0);
    expect(last.x).toBeGreaterThanOrEqual(to.x);
    expect(last.x).toBeLessThanOrEqual(to.x + to.w);
  }
  // Boxes do not overlap one another either.
  for (const a of boxes)
    for (const b of boxes)
      if (a.id < b.id)
        expect(a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y, `${a.id} and ${b.id}`).toBe(true);
}

describe("the report's DAG", () => {
  it("knows a segment that passes through a box from one that only touches or misses it", () => {
    const box = { id: "b", x: 0, y: 0, w: 10, h: 10 };
    expect(segmentEntersBox({ x: -5, y: 5 }, { x: 15, y: 5 }, box)).toBe(true);
    expect(segmentEntersBox({ x: -5, y: -5 }, { x: 15, y: 15 }, box)).toBe(true);
    expect(segmentEntersBox({ x: 5, y: 10 }, { x: 5, y: 30 }, box)).toBe(false);
    expect(segmentEntersBox({ x: -5, y: 0 }, { x: 15, y: 0 }, box)).toBe(false);
    expect(segmentEntersBox({ x: 11, y: -5 }, { x: 11, y: 15 }, box)).toBe(false);
    // The old hand-made layout's long edges (straight through the rank between) are caught.
    const through = `<g class="node" data-id="a"><rect x="0" y="0" width="10" height="10"/></g><g class="node" data-id="m"><rect x="0" y="20" width="10" height="10"/></g><path class="edge" data-from="a" data-to="z" d="M5,10 L5,40"/>`;
    expect(edgesThroughBoxes(through)).toEqual(["a→z segment 0 through m"]);
  });

  it("draws every example plan with no edge through a box", async () => {
    const plans = readdirSync(PLANS);
    expect(plans).toEqual(expect.arrayContaining(["textkit", "semver-lite", "tiny-lru", "csv-lite", "wordfreq"]));
    for (const p of plans) {
      const plan = await loadPlan(path.join(PLANS, p));
      check(plan.dag.data!.nodes.map((n) => ({ id: n.id, kind: n.type, dependencies: n.dependencies, status: "MERGED" })));
    }
  });

  it("draws random DAGs with no edge through a box", () => {
    const dag = fc
      .integer({ min: 1, max: 18 })
      .chain((n) =>
        fc.tuple(
          fc.constant(n),
          fc.array(fc.tuple(fc.nat(n - 1), fc.nat(n - 1)), { maxLength: n * 3 }),
          fc.array(fc.boolean(), { minLength: n, maxLength: n }),
        ),
      );
    fc.assert(
      fc.property(dag, ([n, pairs, refinery]) => {
        // An edge always from the lower index to the higher: acyclic.
        const deps = Array.from({ length: n }, () => new Set<string>());
        for (const [a, b] of pairs) if (a !== b) deps[Math.max(a, b)]!.add(`t${Math.min(a, b)}`);
        check(deps.map((d, i) => ({ id: `t${i}`, kind: refinery[i] ? "refinery" : "task", dependencies: [...d] })));
      }),
      { numRuns: 150 },
    );
  });
});
