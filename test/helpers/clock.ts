/**
 * A clock the tests move (src/core/clock.ts is the port). Time stands still until a test moves it:
 * `advance(ms)` fires the timers due within `ms` one after another, each at its own time, and
 * `skip()` jumps to the next timer. Between two timers the clock lets the world settle — a real
 * turn of the event loop by default, or whatever the caller passes (the App harness waits until
 * the App, the local GitHub and the runners are quiet). `whileWaiting` skips ahead by itself while
 * the world is quiet, as Temporal's time-skipping test environment does while a test awaits a
 * result: nothing is left to happen before the next timer, so waiting for it in real time would
 * only cost the time.
 *
 * Nothing global is replaced: I/O, HTTP servers and child processes keep real time; only what was
 * given this clock runs on it.
 */
import { sleepOn, type Clock, type TimerHandle } from "../../src/core/clock.js";

interface Timer extends TimerHandle {
  at: number;
  /** Set order: timers due at the same time fire in the order they were set, as Node's do. */
  seq: number;
  fn: () => void;
  every?: number;
}

/** One real turn of the event loop: promise callbacks and I/O that is ready run. */
export const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Resolves once `quiet()` has held on `quietPolls` polls in a row, a real `pollMs` apart — the
 * world has settled — or after `timeoutMs` whatever it says (a job a test holds stays at work).
 */
export function settleWhen(
  quiet: () => boolean,
  { pollMs = 10, quietPolls = 3, timeoutMs = 30_000 }: { pollMs?: number; quietPolls?: number; timeoutMs?: number } = {},
): () => Promise<void> {
  return async () => {
    const until = Date.now() + timeoutMs;
    for (let calm = 0; calm < quietPolls && Date.now() < until;) {
      await new Promise((resolve) => setTimeout(resolve, pollMs));
      calm = quiet() ? calm + 1 : 0;
    }
  };
}

/** The most timers one `advance` fires (a timer that sets itself again at 0 ms would never end). */
const MAX_FIRED = 100_000;

export class TestClock implements Clock {
  #now: number;
  #seq = 0;
  readonly #timers = new Set<Timer>();
  /** Every skip ahead, in ms, for tests that report how much waiting they saved. */
  skippedMs = 0;

  /** Starts at `start` (default: the real time now, so timestamps look like today's). */
  constructor(start: number = Date.now()) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    return this.#add(fn, ms);
  }

  setInterval(fn: () => void, ms: number): TimerHandle {
    return this.#add(fn, ms, Math.max(1, ms));
  }

  clear(timer: TimerHandle | undefined): void {
    if (timer) this.#timers.delete(timer as Timer);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, ms, signal);
  }

  /** Timers set and not yet fired or cleared (an interval counts until cleared). */
  get pending(): number {
    return this.#timers.size;
  }

  /** When the next timer is due (ms since the epoch), or undefined when none is set. */
  nextDue(): number | undefined {
    return this.#earliest()?.at;
  }

  /**
   * Moves the time `ms` ahead: the timers due by then fire in order, the time set to each one's as
   * it fires, with `settle` awaited before each (what one timer starts may set the next).
   */
  async advance(ms: number, settle: () => Promise<void> = turn): Promise<void> {
    const target = this.#now + Math.max(0, ms);
    for (let fired = 0; ; fired++) {
      await settle();
      const next = this.#earliest();
      if (!next || next.at > target) break;
      if (fired >= MAX_FIRED) throw new Error(`TestClock: more than ${MAX_FIRED} timers fired in one advance`);
      this.#fire(next);
    }
    this.skippedMs += target - this.#now;
    this.#now = target;
  }

  /**
   * Jumps to the next timer (not beyond `horizon`, ms since the epoch) and fires every timer due
   * then. False when no timer is due by the horizon (the time does not move).
   */
  async skip(settle: () => Promise<void> = turn, horizon = Number.POSITIVE_INFINITY): Promise<boolean> {
    const next = this.nextDue();
    if (next === undefined || next > horizon) return false;
    await this.advance(next - this.#now, settle);
    return true;
  }

  /**
   * Runs `work` while skipping ahead whenever the world is quiet: `quiet()` true on a few polls in
   * a row, a real `pollMs` apart, and a timer set. Resolves or rejects as `work` does.
   */
  async whileWaiting<T>(work: Promise<T>, quiet: () => boolean, options: { pollMs?: number; quietPolls?: number } = {}): Promise<T> {
    const pollMs = options.pollMs ?? 10;
    const needed = options.quietPolls ?? 3;
    let calm = 0;
    let skipping: Promise<unknown> | undefined;
    const poll = setInterval(() => {
      if (skipping) return;
      calm = quiet() ? calm + 1 : 0;
      if (calm < needed || this.#timers.size === 0) return;
      calm = 0;
      skipping = this.skip().finally(() => (skipping = undefined));
    }, pollMs);
    try {
      return await work;
    } finally {
      clearInterval(poll);
      await skipping;
    }
  }

  #add(fn: () => void, ms: number, every?: number): Timer {
    const timer: Timer = { at: this.#now + Math.max(0, ms || 0), seq: this.#seq++, fn, ...(every ? { every } : {}), unref: () => timer };
    this.#timers.add(timer);
    return timer;
  }

  #earliest(): Timer | undefined {
    let best: Timer | undefined;
    for (const t of this.#timers) if (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    return best;
  }

  #fire(timer: Timer): void {
    this.skippedMs += Math.max(0, timer.at - this.#now);
    this.#now = Math.max(this.#now, timer.at);
    if (timer.every) {
      timer.at += timer.every;
      timer.seq = this.#seq++;
    } else this.#timers.delete(timer);
    timer.fn();
  }
}
