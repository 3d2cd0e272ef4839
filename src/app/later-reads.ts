/**
 * Reads put off for a moment, in memory, keyed so the same one is not put off twice. GitHub
 * delivers webhooks in no order: a job's completion often arrives a second or two before the push
 * that carries its result, and reading the branch at once cost three reads for what the push was
 * about to tell. The read waits a grace period and is made only if the fact has still not come.
 * Nothing is lost with the process: the reconciler's sweep (at start and on its timer) finds the
 * ended job and reads the branch itself.
 */
import type { Clock, TimerHandle } from "../core/clock.js";
import type { Logger } from "./engine/index.js";

export class LaterReads {
  readonly #timers = new Map<string, TimerHandle>();
  #stopped = false;

  constructor(
    /** How long a read waits; 0 reads at once (serverless: no process stays to wait). */
    readonly graceMs: number,
    private readonly log: () => Logger,
    private readonly clock: Clock,
    /** Where a read under way is counted (the App's work in the background, for `idle`). */
    private readonly inFlight: Set<Promise<void>>,
  ) {}

  /** Run `read` after the grace period (at once when it is 0), unless one is already waiting under `key`. */
  async after(key: string, read: () => Promise<void>): Promise<void> {
    if (this.graceMs <= 0) return read();
    if (this.#stopped || this.#timers.has(key)) return;
    const timer = this.clock.setTimeout(() => {
      this.#timers.delete(key);
      if (this.#stopped) return;
      const work = read().catch((e: unknown) =>
        this.log().warn({ key, err: (e as Error).message }, "a read put off failed; the reconciler will make it"),
      );
      this.inFlight.add(work);
      void work.finally(() => this.inFlight.delete(work));
    }, this.graceMs);
    timer.unref();
    this.#timers.set(key, timer);
  }

  /** Drops the reads waiting under keys that start with `prefix` (a repository no longer served). */
  cancel(prefix: string): void {
    for (const [key, t] of this.#timers)
      if (key.startsWith(prefix)) {
        this.clock.clear(t);
        this.#timers.delete(key);
      }
  }

  stop(): void {
    this.#stopped = true;
    for (const t of this.#timers.values()) this.clock.clear(t);
    this.#timers.clear();
  }
}
