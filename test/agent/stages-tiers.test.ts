// Model tiers in a stage sequence (docs/runner.md#model-tiers), with the fake command agent: each
// stage's sessions get their role's model, a stage's own `model`, `retry` and `required` in
// .forge/stages.yml apply, the manifest and the result say which model each stage ran on, and a
// sub-agent started with `forge spawn` takes its own role's model from the table its parent passed down.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runStages } from "../../src/agent/stages/index.js";
import { modelPlan } from "../../src/core/tiers.js";
import { cleanupTempDirs, FAKE_AGENT, fakeWorld, forgeCliFromSource, type FakeWorld } from "./helpers.js";
import { options } from "./stages-helpers.js";

afterEach(cleanupTempDirs);

/** The command adapter has no tiers of its own: the test gives it three. */
const models = modelPlan("command", { tiers: { command: { low: "m-low", medium: "m-medium", high: "m-high" } } });

function stagesYml(w: FakeWorld, text: string): void {
  mkdirSync(path.join(w.repo, ".forge"), { recursive: true });
  writeFileSync(path.join(w.repo, ".forge", "stages.yml"), text);
}

describe("model tiers in a stage sequence", () => {
  it("gives each stage its role's tier: implement high, verify low, walkthrough medium", async () => {
    const w = fakeWorld({ implement: { exit: 0 }, verify: { exit: 0 }, walkthrough: { walkthrough: true } });
    const out = await runStages(options(w, { models }));
    expect(out.exitCode, out.error).toBe(0);
    expect(w.calls().map((c) => [c.name, c.model, c.tier])).toEqual([
      ["implement", "m-high", "high"],
      ["verify", "m-low", "low"],
      ["walkthrough", "m-medium", "medium"],
    ]);
    expect(out.manifest.stages.map((s) => [s.name, s.model, s.tier, s.role])).toEqual([
      ["implement", "m-high", "high", "implementer"],
      ["verify", "m-low", "low", "verifier"],
      ["walkthrough", "m-medium", "medium", "analyst"],
    ]);
    expect(out.models).toEqual([
      { stage: "implement", role: "implementer", tier: "high", model: "m-high" },
      { stage: "verify", role: "verifier", tier: "low", model: "m-low" },
      { stage: "walkthrough", role: "analyst", tier: "medium", model: "m-medium" },
    ]);
  });

  it("gives the task's own model to its implementer sessions only, and keeps spawn.model without a plan", async () => {
    const w = fakeWorld({ implement: { exit: 0 }, verify: { exit: 0 }, walkthrough: { walkthrough: true } });
    await runStages(options(w, { models, taskModel: "low" }));
    expect(w.calls().map((c) => c.model)).toEqual(["m-low", "m-low", "m-medium"]);

    const w2 = fakeWorld({ implement: { exit: 0 }, verify: { exit: 0 }, walkthrough: { walkthrough: true } });
    const o = options(w2);
    const out = await runStages({ ...o, spawn: { ...o.spawn, model: "one-model" } });
    expect(w2.calls().map((c) => [c.model, c.tier])).toEqual([
      ["one-model", undefined],
      ["one-model", undefined],
      ["one-model", undefined],
    ]);
    expect(out.manifest.stages.every((s) => s.model === undefined)).toBe(true);
  });

  it("applies a stage's own model, retries and required from .forge/stages.yml", async () => {
    const w = fakeWorld({
      implement: { exit: 0 },
      verify: [{ exit: 1 }, { exit: 1 }, { exit: 0 }],
      walkthrough: { exit: 1 },
    });
    stagesYml(
      w,
      `"2":\n  - implement\n  - name: verify\n    model: verifier-9\n    retry: 2\n  - name: walkthrough\n    required: false\n    retry: 0\n`,
    );
    const out = await runStages(options(w, { models }));
    // The walkthrough failed but is not required: the sequence ends partial, not failed.
    expect(out.exitCode, out.error).toBe(12);
    expect(out.manifest.stages.map((s) => [s.name, s.status, s.attempts, s.model, s.required])).toEqual([
      ["implement", "success", 1, "m-high", undefined],
      ["verify", "success", 3, "verifier-9", undefined],
      ["walkthrough", "failure", 1, "m-medium", false],
    ]);
    expect(w.calls().map((c) => [c.name, c.model])).toEqual([
      ["implement", "m-high"],
      ["verify", "verifier-9"],
      ["verify-retry", "verifier-9"],
      ["verify-retry", "verifier-9"],
      ["walkthrough", "m-medium"],
    ]);
    // A resumed attempt would not run the stage passed over again.
    expect(out.progress?.pending).toEqual([]);
  });

  it("stops at a required stage whose retries are spent, and retry: 0 tries it once", async () => {
    const w = fakeWorld({ implement: { exit: 1 }, verify: { exit: 0 } });
    stagesYml(w, `"2":\n  - name: implement\n    retry: 0\n  - verify\n`);
    const out = await runStages(options(w, { models }));
    expect(out.exitCode).toBe(1);
    expect(w.calls().map((c) => c.name)).toEqual(["implement"]);
    expect(out.progress?.pending).toEqual(["implement", "verify"]);
  });

  it("refuses a stage's unknown tier, failing the attempt with the file's problem", async () => {
    const w = fakeWorld({ implement: { exit: 0 } });
    stagesYml(w, `"2":\n  - name: implement\n    model: ultra-tier\n`);
    const out = await runStages(options(w, { models }));
    expect(out.exitCode).toBe(1);
    expect(out.error).toBe(".forge/stages.yml 2[0].model — unknown tier 'ultra-tier': use low, medium, high or a model id");
  });

  it("passes the table down: a sub-agent takes its own role's model, not its parent's", async () => {
    const child = [
      "spawn",
      "--adapter",
      "command",
      "--command",
      process.execPath,
      "--arg",
      FAKE_AGENT,
      "--agent-type",
      "1",
      "--pass-env",
      "FAKE_PLAN,FAKE_STATE",
      "--output-format",
      "json",
      "--prompt",
      "child work",
      "--name",
      "child",
    ];
    const w = fakeWorld({ verify: { spawn: child }, child: { exit: 0 } });
    const o = options(w, { models, stages: ["verify"] });
    const out = await runStages({ ...o, spawn: { ...o.spawn, forgeCli: forgeCliFromSource(), maxDepth: 3 } });
    expect(out.exitCode, out.error).toBe(0);
    expect(w.calls().map((c) => [c.name, c.model, c.tier])).toEqual([
      ["verify", "m-low", "low"],
      ["child", "m-high", "high"],
    ]);
    const answer = JSON.parse(readFileSync(path.join(w.state, "child-verify-0.json"), "utf8")) as Record<string, unknown>;
    expect(answer).toMatchObject({ exit_code: 0, model: "m-high" });
  }, 60_000);
});
