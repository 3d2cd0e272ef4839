// A 10,000-node / 50,000-edge plan loads and validates without problems (iterative algorithms: no
// stack overflow on long chains). How fast is measured by `npm run bench`, not here: a timed unit
// test fails on a busy machine for reasons that are not bugs.
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

describe("large plans", () => {
  it("validates a generated 10,000-node / 50,000-edge plan", { timeout: 120_000 }, async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), "forge-perf-"));
    const dag = generateDag(10_000, 50_000, 1);
    const dir = await writePlan(tmp, dag);
    expect(path.basename(dir)).toBe(dag.planId);
    const plan = await loadPlan(dir);
    expect(plan.tasks).toHaveLength(10_000);
    expect(validatePlan(plan)).toEqual([]);
    expect(validateDag(dag)).toEqual([]);
  });
});
