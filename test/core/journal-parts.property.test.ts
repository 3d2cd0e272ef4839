/**
 * The journal's split keeps two caches: which nodes' check runs differ from their parts (per base and
 * check-runs object) and the check runs grouped by node (per check-runs object). Over random runs —
 * facts in a random order, check runs learned now and then, a follow-up's among them, readers that
 * join the parts from the files alone (a restart, another replica) — every write joins back to the
 * whole run, and equals the split of the same run against a deep copy of its base, which no cache
 * entry can answer for.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decide, startRun } from "../../src/core/decide/index.js";
import type { LeafInput } from "../../src/core/inputs.js";
import { joinRun, partPath, splitRun, type PartsBase, type Whole } from "../../src/core/journal-parts.js";
import { defaultConfig } from "../../src/core/schemas/config.js";
import { generateDag } from "../helpers/gen-plan.js";
import { factsFor, newRun } from "../helpers/world.js";

const OPTIONS = { partSize: 7, liveMax: 5, layersMax: 2 };

const cloneBase = (b: PartsBase): PartsBase => ({ ...structuredClone(b), index: new Map(b.index), layered: new Set(b.layered) });

describe("a big run's journal in parts, over random runs", () => {
  it("every write joins back to the whole run and equals a split without caches", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 10, max: 60 }),
        fc.integer({ min: 1, max: 1000 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 80 }),
        async (n, seed, picks) => {
          const config = defaultConfig();
          const dag = generateDag(n, 2 * n, seed);
          const nodes = dag.nodes.map((x) => ({ id: x.id, kind: x.type, agentType: x.agentType, dependencies: x.dependencies }));
          let d = startRun(newRun(nodes), 0, config);
          let checkRuns: Record<string, number> = {};
          const files = new Map<string, string>();
          const read = async (hash: string) => files.get(partPath(hash)) ?? null;
          let base: PartsBase | undefined;
          const queue: LeafInput[] = [];
          const enqueue = () => d.effects.forEach((e) => queue.push(...factsFor(e, () => ({ kind: "success" }), 0)));
          enqueue();
          for (const pick of picks) {
            if (queue.length === 0) break;
            d = decide(d.journal, queue.splice(pick % queue.length, 1)[0]!, 1000, config);
            enqueue();
            // A check run learned (a new object, as the engine's facts), a follow-up's now and then.
            if (pick % 3 === 0) {
              const t = d.journal.tasks[pick % d.journal.tasks.length]!;
              checkRuns = { ...checkRuns, [pick % 9 === 0 ? `_followup-${pick}:1` : `${t.id}:${t.attempt}`]: pick };
            }
            const whole: Whole = { nodes: d.journal.plan.nodes, tasks: d.journal.tasks, checkRuns };
            const fresh = base ? cloneBase(base) : undefined;
            const s = splitRun(whole, base, OPTIONS);
            const reference = splitRun(structuredClone(whole), fresh, OPTIONS);
            expect(s.split).toEqual(reference.split);
            expect(s.live).toEqual(reference.live);
            expect(Object.keys(s.live.checkRuns)).toEqual(Object.keys(reference.live.checkRuns));
            expect(s.write).toEqual(reference.write);
            for (const p of s.write) files.set(p.path, p.content);
            const joined = await joinRun(s.live, s.split, read);
            expect(joined.whole).toEqual(whole);
            // The next write starts from the base this one made, or — a restart — from the files alone.
            base = pick % 4 === 0 ? joined.base : s.base;
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
