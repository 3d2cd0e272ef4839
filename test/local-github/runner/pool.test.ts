import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createRunnerPool } from "../../../src/local-github/runner/pool.js";
import { RunnerLostError, runJob } from "../../../src/local-github/runner/executor.js";
import { baseContext, removeDir, tempDir } from "./test-helpers.js";

let root: string;
beforeEach(() => {
  root = tempDir();
});
afterEach(() => removeDir(root));

const wf = (cmd: string) => `on: workflow_dispatch\njobs:\n  j:\n    runs-on: ubuntu-latest\n    steps:\n      - run: ${cmd}\n`;

describe("createRunnerPool", () => {
  it("never runs more jobs at once than its concurrency", async () => {
    const pool = createRunnerPool({ concurrency: 2 });
    let live = 0;
    let peak = 0;
    const jobs = Array.from({ length: 5 }, (_, i) =>
      pool.submit({
        workflowText: wf("sleep 0.2"),
        context: baseContext({ runId: i }),
        workspace: path.join(root, `ws${i}`),
        onStep: (e) => {
          if (e.type === "started") peak = Math.max(peak, ++live);
          if (e.type === "completed" && e.step.startedAt) live--;
        },
      }),
    );
    await new Promise((r) => setTimeout(r, 50));
    expect(pool.running).toBe(2);
    expect(pool.queued).toBe(3);
    expect(jobs[4]!.state()).toBe("queued");
    const results = await Promise.all(jobs.map((j) => j.result));
    expect(results.every((r) => r.conclusion === "success")).toBe(true);
    expect(peak).toBeGreaterThanOrEqual(1);
    expect(peak).toBeLessThanOrEqual(2);
    await pool.idle();
    expect(pool.running).toBe(0);
  });

  it("cancels a queued job without running it, and kills a queued one as lost", async () => {
    const pool = createRunnerPool({ concurrency: 1 });
    const first = pool.submit({ workflowText: wf("sleep 0.2"), context: baseContext(), workspace: path.join(root, "a") });
    const second = pool.submit({ workflowText: wf("echo never"), context: baseContext(), workspace: path.join(root, "b") });
    const third = pool.submit({ workflowText: wf("echo never"), context: baseContext(), workspace: path.join(root, "c") });
    second.cancel();
    third.kill();
    const r2 = await second.result;
    expect(r2.conclusion).toBe("cancelled");
    expect(r2.steps).toEqual([]);
    await expect(third.result).rejects.toBeInstanceOf(RunnerLostError);
    expect((await first.result).conclusion).toBe("success");
  });
});

describe("timing", () => {
  it("runs a no-op job (parse → steps → result) quickly", async () => {
    const text = wf("true");
    await runJob({ workflowText: text, context: baseContext(), workspace: path.join(root, "warm") });
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      const r = await runJob({ workflowText: text, context: baseContext(), workspace: path.join(root, `n${i}`) });
      times.push(performance.now() - t0);
      expect(r.conclusion).toBe("success");
    }
    times.sort((a, b) => a - b);
    console.log(`no-op job: median ${times[2]!.toFixed(1)} ms (${times.map((t) => t.toFixed(1)).join(", ")})`);
    expect(times[2]).toBeLessThan(1_000);
  });
});
