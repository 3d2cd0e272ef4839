/**
 * `sameJson` answers as `JSON.stringify` would (the engine's check that a decision changed nothing
 * used to serialise the whole journal twice): over random JSON values, copies of them with one
 * change or none, and copies sharing their unchanged parts as a decision's do.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sameJson } from "../../src/core/same-json.js";
import { decide, startRun } from "../../src/core/decide/index.js";
import { defaultConfig } from "../../src/core/schemas/config.js";
import { generateDag } from "../helpers/gen-plan.js";
import { factsFor, newRun } from "../helpers/world.js";
import type { LeafInput } from "../../src/core/inputs.js";

/** A copy of `v` with the value at a random path replaced by `to` (shares nothing: a deep copy). */
function changed(v: unknown, pick: number, to: unknown): unknown {
  const copy = JSON.parse(JSON.stringify(v)) as unknown;
  const spots: { parent: Record<string, unknown> | unknown[]; key: string | number }[] = [];
  const walk = (x: unknown) => {
    if (x && typeof x === "object")
      for (const [k, y] of Object.entries(x)) {
        spots.push({ parent: x as Record<string, unknown>, key: Array.isArray(x) ? Number(k) : k });
        walk(y);
      }
  };
  walk(copy);
  if (spots.length === 0) return to;
  const { parent, key } = spots[pick % spots.length]!;
  (parent as Record<string | number, unknown>)[key] = to;
  return copy;
}

/** Field order does not count for `sameJson`: both sides are compared with their keys sorted. */
const canonical = (v: unknown): string =>
  JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === "object" && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => a.localeCompare(b))) : x,
  );

describe("sameJson", () => {
  it("equals the comparison of the values' JSON, for a value and a changed copy", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.nat(), fc.jsonValue(), fc.boolean(), (v, pick, to, change) => {
        const w = change ? changed(v, pick, to) : JSON.parse(JSON.stringify(v ?? null));
        expect(sameJson(v, w)).toBe(canonical(v) === canonical(w));
        expect(sameJson(w, v)).toBe(canonical(v) === canonical(w));
      }),
      { numRuns: 500 },
    );
  });

  it("counts fields set to undefined as absent, as JSON does", () => {
    expect(sameJson({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(sameJson({ a: 1 }, { a: 1, b: undefined })).toBe(true);
    expect(sameJson({ a: undefined }, { b: undefined })).toBe(true);
    expect(sameJson([undefined], [null])).toBe(true);
    expect(sameJson({ a: null }, {})).toBe(false);
    expect(sameJson([1, 2], [1, 2, 3])).toBe(false);
    expect(sameJson({ a: [] }, { a: {} })).toBe(false);
  });

  it("tells, like JSON, whether each decision of random runs changed the journal", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 30 }),
        fc.integer({ min: 1, max: 1000 }),
        fc.array(fc.nat(), { maxLength: 60 }),
        (n, seed, picks) => {
          const config = defaultConfig();
          const dag = generateDag(n, 2 * n, seed);
          const nodes = dag.nodes.map((x) => ({ id: x.id, kind: x.type, agentType: x.agentType, dependencies: x.dependencies }));
          let d = startRun(newRun(nodes), 0, config);
          const queue: LeafInput[] = [];
          const enqueue = () => d.effects.forEach((e) => queue.push(...factsFor(e, () => ({ kind: "success" }), 0)));
          enqueue();
          // The facts in an order of the picks' choosing, some of them twice (a repeated webhook changes nothing).
          for (const pick of picks) {
            if (queue.length === 0) break;
            const input = queue.splice(pick % queue.length, 1)[0]!;
            if (pick % 5 === 0) queue.push(input);
            const before = d.journal;
            d = decide(before, input, 1000 + pick, config);
            expect(sameJson(before, d.journal)).toBe(JSON.stringify(before) === JSON.stringify(d.journal));
            enqueue();
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
