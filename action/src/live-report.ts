/**
 * `.live-report` (docs/formats.md#live-report): one JSON line per stage and tool event of the
 * attempt, appended as it happens, so that `tail -f` on the session folder shows the agent at work.
 * The lines are the agent's own words (tool names, summaries) cut short and masked; a reader treats
 * them as data.
 */
import { appendFileSync } from "node:fs";
import type { Masker } from "../../src/agent/secrets.js";

/** What a line says happened. */
export type LiveStatus = "start" | "end" | "tool_use" | "tool_result" | "rate_limit" | "retry" | "push" | "stopped" | "budget";

export interface LiveEntry {
  /** ISO time. */
  at: string;
  /** Seconds since the attempt's agent started. */
  elapsed_s: number;
  /** Who: `job` for the runner's own steps, `stage` for a stage session. */
  layer: "job" | "stage";
  /** The stage's name (its session name), or the runner's step. */
  stage: string;
  status: LiveStatus;
  detail?: string;
  tool?: string;
  turn?: number;
  trace_id: string;
}

/** The longest `detail` a line keeps. */
export const LIVE_DETAIL_MAX = 200;
/** Lines kept in memory for the execution report (the file keeps them all). */
const KEPT = 1_000;

export class LiveReport {
  readonly entries: LiveEntry[] = [];
  /** Called with every line written (telemetry, live progress); a failing listener is ignored. */
  readonly listeners: ((e: LiveEntry) => void)[] = [];
  #t0: number;
  constructor(
    readonly file: string,
    readonly traceId: string,
    private readonly now: () => number = Date.now,
    private readonly masker?: Masker,
  ) {
    this.#t0 = now();
  }

  /** Starts the elapsed clock (the agent's start). */
  restart(): void {
    this.#t0 = this.now();
  }

  write(e: Omit<LiveEntry, "at" | "elapsed_s" | "trace_id">): LiveEntry {
    const t = this.now();
    const detail = e.detail !== undefined ? this.#bound(e.detail, LIVE_DETAIL_MAX) : undefined;
    const entry: LiveEntry = {
      at: new Date(t).toISOString(),
      elapsed_s: Math.round((t - this.#t0) / 100) / 10,
      layer: e.layer,
      stage: this.#bound(e.stage, 80),
      status: e.status,
      ...(detail ? { detail } : {}),
      ...(e.tool ? { tool: this.#bound(e.tool, 80) } : {}),
      ...(e.turn !== undefined ? { turn: e.turn } : {}),
      trace_id: this.traceId,
    };
    this.entries.push(entry);
    if (this.entries.length > 2 * KEPT) this.entries.splice(0, this.entries.length - KEPT);
    try {
      appendFileSync(this.file, `${JSON.stringify(entry)}\n`);
    } catch {
      // A full disk must not stop the agent; the execution report says what it has.
    }
    for (const listen of this.listeners) {
      try {
        listen(entry);
      } catch {
        // Observers never break the attempt.
      }
    }
    return entry;
  }

  /** One line of text: whitespace folded, cut to `max` characters, masked. */
  #bound(s: string, max: number): string {
    const one = s
      .slice(0, max * 4)
      .replace(/\s+/g, " ")
      .trim()
      .slice(0, max);
    return this.masker ? this.masker.mask(one) : one;
  }
}

/** Which progress kinds of a session are stage and tool events (the rest only prove liveness). */
export const LIVE_KINDS: Readonly<Record<string, LiveStatus>> = {
  start: "start",
  exit: "end",
  tool_use: "tool_use",
  tool_result: "tool_result",
  rate_limit: "rate_limit",
  retry: "retry",
};
