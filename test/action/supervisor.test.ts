import { describe, expect, it } from "vitest";
import type { AgentRunOutcome } from "../../action/src/agent-runner.js";
import { exitCodeOfStop, supervise } from "../../action/src/supervisor.js";

const until = (signal: AbortSignal, outcome: AgentRunOutcome) =>
  new Promise<AgentRunOutcome>((r) => signal.addEventListener("abort", () => r(outcome), { once: true }));

describe("the heartbeat supervisor", () => {
  it("counts a beat per interval with progress and never stops a talking agent", async () => {
    const beats: number[] = [];
    const out = await supervise(
      async ({ onProgress }) => {
        for (let i = 0; i < 12; i++) {
          onProgress({ summary: `step ${i}` });
          await new Promise((r) => setTimeout(r, 25));
        }
        return { exitCode: 0 };
      },
      { heartbeatMs: 100, missedBeats: 2, idleMs: 10_000, wallClockMs: 10_000, onBeat: (t) => beats.push(t) },
    );
    expect(out.stopped).toBeUndefined();
    expect(out.outcome.exitCode).toBe(0);
    expect(beats.length).toBeGreaterThanOrEqual(2);
  });

  it("declares a stall after the configured number of consecutive missed beats", async () => {
    const missed: number[] = [];
    const t0 = Date.now();
    const out = await supervise(
      async ({ signal, onProgress }) => {
        onProgress({ summary: "hello" });
        return until(signal, { exitCode: 1 });
      },
      { heartbeatMs: 50, missedBeats: 2, idleMs: 10_000, wallClockMs: 10_000, onMissed: (_t, n) => missed.push(n) },
    );
    expect(out.stopped?.reason).toBe("stalled");
    expect(out.stopped?.detail).toMatch(/2 missed heartbeats/);
    expect(missed).toEqual([1, 2]);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    expect(exitCodeOfStop("stalled")).toBe(21);
  });

  it("does not count silence during a tool call as missed beats; the idle limit still applies", async () => {
    const out = await supervise(
      async ({ signal, onProgress }) => {
        onProgress({ summary: "Bash: npm test", kind: "tool_use" });
        return until(signal, { exitCode: 1 });
      },
      { heartbeatMs: 30, missedBeats: 2, idleMs: 300, wallClockMs: 10_000 },
    );
    expect(out.stopped?.reason).toBe("idle");
    const after = await supervise(
      async ({ signal, onProgress }) => {
        onProgress({ summary: "Bash: npm test", kind: "tool_use" });
        onProgress({ summary: "tests passed", kind: "tool_result" });
        return until(signal, { exitCode: 1 });
      },
      { heartbeatMs: 30, missedBeats: 2, idleMs: 10_000, wallClockMs: 10_000 },
    );
    expect(after.stopped?.reason).toBe("stalled");
  });

  it("stops at the wall clock and on a cancel, with their exit codes", async () => {
    const wall = await supervise(
      async ({ signal, onProgress }) => {
        const t = setInterval(() => onProgress({ summary: "." }), 10);
        const r = await until(signal, { exitCode: 0 });
        clearInterval(t);
        return r;
      },
      { heartbeatMs: 30, missedBeats: 2, idleMs: 10_000, wallClockMs: 120 },
    );
    expect(wall.stopped?.reason).toBe("wall_clock");
    const cancel = new AbortController();
    setTimeout(() => cancel.abort(), 30);
    const cancelled = await supervise(async ({ signal }) => until(signal, { exitCode: 0 }), {
      heartbeatMs: 1000,
      missedBeats: 2,
      idleMs: 10_000,
      wallClockMs: 10_000,
      cancel: cancel.signal,
    });
    expect(cancelled.stopped?.reason).toBe("cancelled");
    expect(exitCodeOfStop("cancelled")).toBe(20);
  });

  it("stops an agent silent past the idle limit even when beats are configured loosely", async () => {
    const out = await supervise(async ({ signal }) => until(signal, { exitCode: 0 }), {
      heartbeatMs: 40,
      missedBeats: 100,
      idleMs: 100,
      wallClockMs: 10_000,
    });
    expect(out.stopped?.reason).toBe("idle");
  });
});
