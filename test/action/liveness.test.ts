// The job pipeline's liveness: a silent agent, one that never ends and a cancelled job are stopped,
// and their work is kept and pushed (exit 21, 20).
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { attemptDir } from "../../src/core/layout.js";
import { RUN, sh } from "./world.js";

import { cleanupWorld, filesOf, runJob, world_, WRITE_WORK } from "./main-job.js";

afterEach(cleanupWorld);

describe("main: liveness — heartbeats, stalls and timeouts keep the work", () => {
  it("a silent agent misses two heartbeats, is killed, and its partial work is committed and pushed (exit 21)", async () => {
    const w = world_();
    const report = await runJob(w, `${WRITE_WORK}\necho "thinking…"\nexec sleep 30`, {
      config: { heartbeat_interval_seconds: 0.25, stale_threshold_seconds: 0.5 },
    });
    if (report.kind !== "attempt") throw new Error("not an attempt");
    expect(report.exitCode).toBe(21);
    expect(report.result.error).toMatch(/the agent was stopped: no progress for \d+ s \(2 missed heartbeats/);
    expect(filesOf(w, report.workSha!)).toEqual(["src/out.txt"]);
    expect(sh(w.origin, ["log", "-1", "--format=%b", report.workSha!])).toMatch(
      /Partial work of attempt 1, kept when the agent was stopped \(stalled\)/,
    );
    expect(sh(w.origin, ["rev-parse", `refs/heads/${w.branch}`])).toBe(report.headSha);
    const events = w.show(report.headSha, `${attemptDir(RUN, "t1", 1)}/events.ndjson`)!;
    expect(events).toContain('"type":"task.stale"');
    // Two missed beats of 250 ms: detected between 0.5 and 0.75 s of silence (+ slack for a loaded machine).
    expect(report.timings.stallDetectedAfterMs!).toBeGreaterThanOrEqual(450);
    expect(report.timings.stallDetectedAfterMs!).toBeLessThan(3000);
    expect(report.timings.partialPushedAfterMs!).toBeGreaterThan(report.timings.stallDetectedAfterMs!);
    console.log(
      `stall: detected after ${report.timings.stallDetectedAfterMs} ms of silence, partial work pushed after ${report.timings.partialPushedAfterMs} ms (heartbeat 250 ms, 2 missed beats)`,
    );
  });

  it("an agent that keeps talking but never ends hits the wall clock; its work is pushed (exit 21)", async () => {
    const w = world_();
    const report = await runJob(w, `${WRITE_WORK}\nwhile true; do echo working; sleep 0.05; done`, {
      config: { timeouts: { agent_minutes: 0.01 } },
    });
    if (report.kind !== "attempt") throw new Error("not an attempt");
    expect(report.exitCode).toBe(21);
    expect(report.result.error).toMatch(/wall-clock limit/);
    expect(filesOf(w, report.workSha!)).toEqual(["src/out.txt"]);
    const events = w.show(report.headSha, `${attemptDir(RUN, "t1", 1)}/events.ndjson`)!;
    expect(events).toContain('"type":"task.heartbeat"');
  });

  it("a cancelled job stops the agent and still pushes its work (exit 20)", async () => {
    const w = world_();
    const cancel = new AbortController();
    // Cancel once the agent has written its work (as a person would, mid-run).
    const marker = path.join(w.dir, "agent-wrote");
    const poll = setInterval(() => existsSync(marker) && cancel.abort(), 20);
    const report = await runJob(w, `${WRITE_WORK}\ntouch "${marker}"\nwhile true; do echo working; sleep 0.05; done`, {
      cancel: cancel.signal,
    });
    clearInterval(poll);
    if (report.kind !== "attempt") throw new Error("not an attempt");
    expect(report.exitCode).toBe(20);
    expect(report.result.error).toMatch(/the job was cancelled/);
    expect(filesOf(w, report.workSha!)).toEqual(["src/out.txt"]);
    expect(readFileSync(path.join(w.workspace, "src/out.txt"), "utf8")).toBe("hello\n");
  });
});
