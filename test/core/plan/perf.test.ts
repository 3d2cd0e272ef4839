// validatePlan must stay linear: a 10,000-node / 50,000-edge plan is validated (pure part) in well
// under 50 ms on a developer machine. The bound here is looser because CI machines are shared; a
// quadratic step would still blow it by orders of magnitude.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadPlan } from "../../../src/core/plan/load.js";
import { validateDag, validatePlan } from "../../../src/core/plan/validate.js";
import { generateDag, writePlan } from "../../helpers/gen-plan.js";

let tmp: string | undefined;
afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

function fastest(run: () => unknown, times = 7): number {
  let best = Infinity;
  for (let i = 0; i < times; i++) {
    const start = performance.now();
    run();
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

describe("validation speed", () => {
  it("validates a generated 10,000-node / 50,000-edge plan in linear time", { timeout: 120_000 }, async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), "forge-perf-"));
    const dag = generateDag(10_000, 50_000, 1);
    const dir = await writePlan(tmp, dag);
    expect(path.basename(dir)).toBe(dag.planId);
    const plan = await loadPlan(dir);
    expect(plan.tasks).toHaveLength(10_000);
    expect(validatePlan(plan)).toEqual([]);
    expect(fastest(() => validatePlan(plan))).toBeLessThan(150);
    expect(fastest(() => validateDag(dag))).toBeLessThan(100);
  });
});
