// Heads of the branches new task branches are cut from, read beside the journal write that records
// their decision and taken once by the effect's first try.
import type { Clock } from "../../core/clock.js";
import type { Effect } from "../../core/effects.js";
import type { GitHubPort } from "../../github/port.js";

/** How long a branch head read beside a journal write may stand in for a fresh read (`prefetch`). */
const PREFETCH_TTL_MS = 60_000;

export class Prefetches {
  readonly #port: GitHubPort;
  /** Heads of the branches new task branches are cut from, read while their decision is written (`prefetch`). */
  readonly #prefetched = new Map<string, { head: Promise<string | null>; at: number }>();

  readonly #clock: Clock;

  constructor(port: GitHubPort, clock: Clock) {
    this.#port = port;
    this.#clock = clock;
  }

  /**
   * Starts reading the branch each new task branch will be cut from, beside the journal write that
   * records the decision: the merge → next dispatch path then waits for the write and the branch's
   * creation, not for a read in between. Taken once, by the effect's first try within a minute.
   */
  prefetch(runId: string, effects: readonly Effect[]): void {
    const now = this.#clock.now();
    for (const [key, p] of this.#prefetched) if (now - p.at > PREFETCH_TTL_MS) this.#prefetched.delete(key);
    for (const e of effects) {
      if (e.kind !== "PrepareBranch") continue;
      const head = this.#port.branchHead(e.from).catch(() => null);
      this.#prefetched.set(`${runId}:${e.key}`, { head, at: now });
    }
  }

  take(runId: string, effect: Effect): Promise<string | null> | undefined {
    const key = `${runId}:${effect.key}`;
    const p = this.#prefetched.get(key);
    this.#prefetched.delete(key);
    return p && this.#clock.now() - p.at <= PREFETCH_TTL_MS ? p.head : undefined;
  }

  /** The heads read for effects whose write was lost. */
  drop(runId: string, effects: readonly Effect[]): void {
    for (const effect of effects) this.#prefetched.delete(`${runId}:${effect.key}`);
  }

  clear(): void {
    this.#prefetched.clear();
  }
}
