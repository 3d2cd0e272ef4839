// The runner's executor when time runs out or the job is stopped: timeouts, cancellation, a runner that dies mid-job.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runJob, startJob, RunnerLostError, type StepEvent } from "../../../src/local-github/runner/executor.js";
import { baseContext, dispatch, removeDir, tempDir } from "./test-helpers.js";

let root: string;
let workspace: string;
beforeEach(() => {
  root = tempDir();
  workspace = path.join(root, "ws");
});
afterEach(() => removeDir(root));

describe("runJob: timeouts, cancellation and a dying runner", () => {
  it("fails a step that exceeds its timeout-minutes", async () => {
    const wf = dispatch(
      "",
      `    steps:\n      - timeout-minutes: 0.005\n        run: sleep 20\n      - if: always()\n        run: echo cleanup\n`,
    );
    const t0 = Date.now();
    const r = await runJob({ workflowText: wf, context: baseContext(), workspace, killGraceMs: 100 });
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(r.conclusion).toBe("failure");
    expect(r.steps[0]!.timedOut).toBe(true);
    expect(r.steps[1]!.log).toContain("cleanup");
  });

  it("ends a job that exceeds its timeout-minutes as timed_out; always() steps still run", async () => {
    const wf = dispatch(
      "",
      `    timeout-minutes: 0.005\n    steps:\n      - run: sleep 20\n      - run: echo next\n      - if: always()\n        run: echo cleanup\n`,
    );
    const r = await runJob({ workflowText: wf, context: baseContext(), workspace, killGraceMs: 100 });
    expect(r.conclusion).toBe("timed_out");
    expect(r.steps.map((s) => s.conclusion)).toEqual(["cancelled", "skipped", "success"]);
  });

  it("cancels through an AbortSignal: SIGTERM, then SIGKILL for a step that ignores it", async () => {
    const wf = dispatch(
      "",
      `    steps:
      - run: |
          trap '' TERM
          echo started
          sleep 30
      - run: echo next
      - if: cancelled()
        run: echo was cancelled
`,
    );
    const controller = new AbortController();
    const events: StepEvent[] = [];
    const t0 = Date.now();
    const p = runJob({
      workflowText: wf,
      context: baseContext(),
      workspace,
      signal: controller.signal,
      killGraceMs: 200,
      onStep: (e) => {
        events.push(e);
        if (e.type === "log" && e.line === "started") controller.abort();
      },
    });
    const r = await p;
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(r.conclusion).toBe("cancelled");
    expect(r.steps.map((s) => s.conclusion)).toEqual(["cancelled", "skipped", "success"]);
    expect(r.steps[2]!.log).toContain("was cancelled");
    expect(events.filter((e) => e.type === "started").length).toBe(2);
  });

  it("stops a step whose cancel lands while it is being set up", async () => {
    const wf = dispatch("", `    steps:\n      - run: sleep 20\n`);
    const controller = new AbortController();
    const t0 = Date.now();
    const r = await runJob({
      workflowText: wf,
      context: baseContext(),
      workspace,
      signal: controller.signal,
      killGraceMs: 200,
      onStep: (e) => {
        if (e.type === "started") controller.abort();
      },
    });
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(r.conclusion).toBe("cancelled");
    expect(r.steps[0]!.conclusion).toBe("cancelled");
  });

  it("kill(): the runner dies mid-job — no result, no later or post steps, the process group is gone", async () => {
    const pidFile = path.join(root, "pid");
    const marker = path.join(root, "cleanup-ran");
    const wf = dispatch(
      "",
      `    steps:
      - run: |
          sleep 30 &
          echo $! > "${pidFile}"
          echo working
          wait
      - if: always()
        run: touch "${marker}"
`,
    );
    const handle = startJob({
      workflowText: wf,
      context: baseContext(),
      workspace,
      runnerTemp: path.join(root, "tmp"), // a dead runner cleans nothing up
      onStep: (e) => {
        if (e.type === "log" && e.line === "working") handle.kill();
      },
    });
    const err = await handle.result.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RunnerLostError);
    expect((err as RunnerLostError).steps.map((st) => st.status)).toEqual(["in_progress"]); // never concluded
    await new Promise((r) => setTimeout(r, 300));
    expect(existsSync(marker)).toBe(false);
    const pid = Number(readFileSync(pidFile, "utf8"));
    // Gone, or a zombie nobody has reaped yet (PID 1 in a container may not reap).
    const stat = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, "utf8") : "";
    expect(stat === "" || / Z /.test(stat), stat).toBe(true);
  });
});
