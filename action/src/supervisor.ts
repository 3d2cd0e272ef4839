/**
 * Liveness of the agent inside the job (see docs/runner.md#heartbeats): its progress — any output — is
 * checked every `heartbeatMs`; a check that finds none is a missed beat, and `missedBeats` in a row
 * (2: 60 s at the defaults) means the agent is stalled. While a tool call is in flight (the last
 * event was a `tool_use`: a test suite, a build) silence is expected and beats are not counted as
 * missed; the idle limit still bounds it. A stalled agent, one silent for `idleMs`, or
 * one past its wall clock is stopped through its AbortSignal; the pipeline then commits and pushes
 * whatever it left (exit 21). A cancel of the job (SIGINT from the runner) stops it the same way (exit 20).
 */
import { EXIT_CODES } from "../../src/core/exit-codes.js";
import type { AgentRunOutcome, Progress } from "./agent-runner.js";

export type StopReason = "stalled" | "idle" | "wall_clock" | "cancelled" | "budget";

export interface SupervisorOptions {
  heartbeatMs: number;
  /** Consecutive missed beats that make a stall (stale_threshold / heartbeat_interval, at least 1). */
  missedBeats: number;
  idleMs: number;
  wallClockMs: number;
  /** The job is being cancelled. */
  cancel?: AbortSignal;
  now?: () => number;
  /** A beat: progress was seen since the previous check. */
  onBeat?(at: number, last: Progress | undefined): void;
  onMissed?(at: number, missed: number): void;
  onStop?(reason: StopReason, detail: string, at: number, lastProgressAt: number): void;
}

export interface Supervised {
  outcome: AgentRunOutcome;
  stopped?: { reason: StopReason; detail: string; at: number };
  /** The agent's last progress (for the stall figures). */
  lastProgressAt: number;
  beats: number;
}

export async function supervise(
  start: (ctl: {
    signal: AbortSignal;
    onProgress(p: Progress): void;
    stop(reason: StopReason, detail: string): void;
  }) => Promise<AgentRunOutcome>,
  options: SupervisorOptions,
): Promise<Supervised> {
  const now = options.now ?? Date.now;
  const controller = new AbortController();
  let lastProgressAt = now();
  let last: Progress | undefined;
  let progressed = false;
  let missed = 0;
  let beats = 0;
  let stopped: Supervised["stopped"];

  const stop = (reason: StopReason, detail: string) => {
    if (stopped) return;
    stopped = { reason, detail, at: now() };
    options.onStop?.(reason, detail, stopped.at, lastProgressAt);
    controller.abort();
  };

  const tick = setInterval(() => {
    const t = now();
    if (progressed) {
      progressed = false;
      missed = 0;
      beats++;
      options.onBeat?.(t, last);
    } else if (last?.kind === "tool_use") {
      // A tool is running; its result will be the next event.
      missed = 0;
    } else {
      missed++;
      options.onMissed?.(t, missed);
      if (missed >= options.missedBeats) {
        stop(
          "stalled",
          `no progress for ${Math.round((t - lastProgressAt) / 1000)} s (${missed} missed heartbeats of ${Math.round(options.heartbeatMs / 1000)} s)`,
        );
        return;
      }
    }
    if (t - lastProgressAt >= options.idleMs)
      stop("idle", `no output for ${Math.round((t - lastProgressAt) / 1000)} s (idle limit ${Math.round(options.idleMs / 1000)} s)`);
  }, options.heartbeatMs);
  const wall = setTimeout(
    () => stop("wall_clock", `wall-clock limit of ${Math.round(options.wallClockMs / 60_000)} min reached`),
    options.wallClockMs,
  );
  const onCancel = () => stop("cancelled", "the job was cancelled");
  if (options.cancel?.aborted) onCancel();
  options.cancel?.addEventListener("abort", onCancel, { once: true });

  try {
    const outcome = await start({
      signal: controller.signal,
      stop,
      onProgress: (p) => {
        // What the agent prints while being stopped is not progress (keeps the stall figures honest).
        if (stopped) return;
        lastProgressAt = now();
        last = p;
        progressed = true;
      },
    });
    return { outcome, ...(stopped ? { stopped } : {}), lastProgressAt, beats };
  } finally {
    clearInterval(tick);
    clearTimeout(wall);
    options.cancel?.removeEventListener("abort", onCancel);
  }
}

/** The attempt's exit code when the pipeline stopped the agent (see docs/runner.md#exit-codes). */
export function exitCodeOfStop(reason: StopReason): number {
  // A budget stop is not retried by itself: the App holds the task until a person raises the budget.
  return reason === "cancelled" || reason === "budget" ? EXIT_CODES.INTERRUPTED : EXIT_CODES.TIMEOUT;
}
