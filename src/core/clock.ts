/**
 * The clock: what the App and the local GitHub read the time from and set their timers on — the
 * engine's retries of effects that answer "later" (the tracker's debounce), effect leases, the
 * job-end grace, the reconciler's period, Forge's own pace, and the local GitHub's webhook and
 * latency delays. Production runs on `realClock`; tests give the App and the local GitHub one
 * test clock (test/helpers/clock.ts) and move it, skipping ahead instead of waiting, as Temporal's
 * time-skipping test environment does.
 *
 * Only the timers of Forge's logic go through it: a timer that bounds real I/O — a socket's drain,
 * a child process's kill grace, an HTTP timeout — keeps real time, since what it waits for does
 * (eslint.config.js lists each one that is allowed past the rule).
 */

/** A timer set on a clock; `unref` lets the process exit while it waits (real time only). */
export interface TimerHandle {
  unref(): unknown;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  setInterval(fn: () => void, ms: number): TimerHandle;
  /** Clears a timeout or an interval set on this clock; nothing when `timer` is undefined. */
  clear(timer: TimerHandle | undefined): void;
  /** Resolves after `ms`; rejects with the signal's reason if it is aborted first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Resolves after `ms` on `clock`, or rejects with `signal`'s reason once it is aborted. */
export function sleepOn(clock: Pick<Clock, "setTimeout" | "clear">, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clock.clear(timer);
      reject(signal!.reason as Error);
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Real time: the process's own clock and timers. */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  setInterval: (fn, ms) => setInterval(fn, ms),
  clear: (timer) => clearTimeout(timer as NodeJS.Timeout | undefined),
  sleep: (ms, signal) => sleepOn(realClock, ms, signal),
};
