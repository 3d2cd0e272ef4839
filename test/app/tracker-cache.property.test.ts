/**
 * The tracker keeps rendered rows per task state and the plan's shape (edge count, waves) per nodes
 * array. Over random runs — small plans drawn node by node, big ones summarised and cut — the body
 * of each decision's journal equals the body rendered from a deep copy of it, which shares nothing
 * with what was rendered before (no cache entry can answer for it).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { renderTracker } from "../../src/app/render.js";
import type { RunFacts } from "../../src/app/run-store.js";
import { decide, startRun } from "../../src/core/decide/index.js";
import type { LeafInput } from "../../src/core/inputs.js";
import { defaultConfig } from "../../src/core/schemas/config.js";
import { generateDag } from "../helpers/gen-plan.js";
import { factsFor, newRun } from "../helpers/world.js";

const REPO = { owner: "octo", repo: "app", webUrl: "https://github.com" };

describe("the tracker's cached rows and plan shape", () => {
  it("render what a render from scratch gives, decision after decision", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(6, 40, 1200),
        fc.integer({ min: 1, max: 1000 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 40 }),
        (n, seed, picks) => {
          const config = defaultConfig();
          const dag = generateDag(n, 3 * n, seed);
          const nodes = dag.nodes.map((x) => ({
            id: x.id,
            kind: x.type,
            agentType: x.agentType,
            title: `Task ${x.id} | with a pipe`,
            dependencies: x.dependencies,
          }));
          let d = startRun(newRun(nodes), 0, config);
          const facts: RunFacts = { checkRuns: {}, trackerIssue: 1 };
          const queue: LeafInput[] = [];
          const behaviour = (taskId: string) =>
            taskId.endsWith("3") ? ({ kind: "exit", code: 1 } as const) : ({ kind: "success" } as const);
          const enqueue = () => d.effects.forEach((e) => queue.push(...factsFor(e, behaviour, 0)));
          enqueue();
          for (const pick of picks) {
            if (queue.length === 0) break;
            const input = queue.splice(pick % queue.length, 1)[0]!;
            d = decide(d.journal, input, 1000 + pick, config);
            // A check run recorded now and then, and the repository named another way once.
            const t = d.journal.tasks[pick % d.journal.tasks.length]!;
            if (pick % 3 === 0) facts.checkRuns = { ...facts.checkRuns, [`${t.id}:${t.attempts}`]: pick };
            const repo = pick % 7 === 0 ? { owner: "octo", repo: "other", webUrl: "https://github.com" } : REPO;
            const body = renderTracker(d.journal, d.events, facts, repo, 0, config);
            expect(body).toBe(renderTracker(structuredClone(d.journal), d.events, structuredClone(facts), repo, 0, config));
            enqueue();
          }
        },
      ),
      { numRuns: 30 },
    );
  });
});
