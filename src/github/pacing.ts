/**
 * Forge's own pace per installation, under GitHub's secondary rate limits (docs.github.com, "Rate
 * limits for the REST API"): no more than 100 requests at once, and no more than 80 content-creating
 * requests a minute and 500 an hour. A request past a bound waits for its turn rather than being
 * refused by GitHub and retried; the App's effects run outside its decisions, so a wait holds back
 * only the calls behind it. Requests are started in the order they asked.
 *
 * When GitHub says no all the same (its limits are counted per installation, and other clients of
 * the installation spend them too), `holdUntil` stops every request of the installation until the
 * time GitHub named (`retry-after`, or `x-ratelimit-reset` with `x-ratelimit-remaining: 0`): the
 * refused request is not repeated here — the effect that made it stays in the outbox and is tried
 * again after the hold, as a replay that looks at GitHub before acting.
 */
import { realClock, type Clock, type TimerHandle } from "../core/clock.js";

export interface PaceLimits {
  /** Requests in flight at once (default 100). */
  concurrent: number;
  /** Content-creating requests started in any 60 s (default 80). */
  perMinute: number;
  /** Content-creating requests started in any hour (default 500). */
  perHour: number;
}

export const GITHUB_PACE: PaceLimits = { concurrent: 100, perMinute: 80, perHour: 500 };

const MINUTE = 60_000;
const HOUR = 3_600_000;

export class Pacer {
  #inFlight = 0;
  readonly #waiting: { creating: boolean; go: () => void; refuse: (e: Error) => void }[] = [];
  #closed = false;
  /** Start times of the content-creating requests of the last hour, oldest first. */
  readonly #created: number[] = [];
  #timer: TimerHandle | undefined;
  /** No request starts before this time (GitHub answered a rate limit). */
  #heldUntil = 0;
  /** Figures for benchmarks: the longest wait and how many requests waited. */
  readonly stats = { waited: 0, longestWaitMs: 0, maxInFlight: 0, holds: 0 };

  constructor(
    readonly limits: PaceLimits = GITHUB_PACE,
    private readonly clock: Clock = realClock,
  ) {}

  private now(): number {
    return this.clock.now();
  }

  /** Run `request` when the bounds allow; `creating` when GitHub counts it as content-creating. */
  async run<T>(creating: boolean, request: () => Promise<T>): Promise<T> {
    const asked = this.now();
    if (this.#closed) throw new PaceClosedError();
    if (this.#waiting.length || !this.#free(creating)) {
      await new Promise<void>((go, refuse) => {
        this.#waiting.push({ creating, go, refuse });
        this.#pump();
      });
      this.stats.waited++;
      this.stats.longestWaitMs = Math.max(this.stats.longestWaitMs, this.now() - asked);
    } else this.#start(creating);
    try {
      return await request();
    } finally {
      this.#inFlight--;
      this.#pump();
    }
  }

  /** GitHub answered a rate limit: no request of the installation starts before `at`. */
  holdUntil(at: number): void {
    if (at <= this.#heldUntil) return;
    this.#heldUntil = at;
    this.stats.holds++;
    // A timer set for an earlier window would start the queue too soon; set it again.
    this.clock.clear(this.#timer);
    this.#timer = undefined;
    this.#pump();
  }

  /** When the installation's requests may start again (0: not held). */
  get heldUntil(): number {
    return this.#heldUntil > this.now() ? this.#heldUntil : 0;
  }

  /**
   * The App is closing: requests still waiting for their turn are refused, not sent later by a
   * process that is going away (their effects stay in the outbox for the next process); requests
   * under way finish. Later requests are refused at once.
   */
  close(): void {
    this.#closed = true;
    this.clock.clear(this.#timer);
    this.#timer = undefined;
    for (const w of this.#waiting.splice(0)) w.refuse(new PaceClosedError());
  }

  /** Requests waiting for their turn (for a window to open, or for a hold to end). */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** When a content-creating request may start (now or later), by the minute and hour windows. */
  #creatableAt(): number {
    const now = this.now();
    while (this.#created.length && this.#created[0]! <= now - HOUR) this.#created.shift();
    let at = Math.max(now, this.#heldUntil);
    const n = this.#created.length;
    if (n >= this.limits.perHour) at = Math.max(at, this.#created[n - this.limits.perHour]! + HOUR);
    if (n >= this.limits.perMinute) at = Math.max(at, this.#created[n - this.limits.perMinute]! + MINUTE);
    return at;
  }

  #free(creating: boolean): boolean {
    const now = this.now();
    return this.#inFlight < this.limits.concurrent && this.#heldUntil <= now && (!creating || this.#creatableAt() <= now);
  }

  #start(creating: boolean): void {
    this.#inFlight++;
    this.stats.maxInFlight = Math.max(this.stats.maxInFlight, this.#inFlight);
    if (creating) this.#created.push(this.now());
  }

  /** Start the waiting requests in order while the bounds allow; wake up when the window opens. */
  #pump(): void {
    if (this.#closed) return;
    while (this.#waiting.length && this.#free(this.#waiting[0]!.creating)) {
      const next = this.#waiting.shift()!;
      this.#start(next.creating);
      next.go();
    }
    const head = this.#waiting[0];
    if (!head || this.#timer || this.#inFlight >= this.limits.concurrent) return;
    this.#timer = this.clock.setTimeout(
      () => {
        this.#timer = undefined;
        this.#pump();
      },
      Math.max(1, (head.creating ? this.#creatableAt() : this.#heldUntil) - this.now()),
    );
  }
}

/** A request refused because the pace it waited in was closed (the App is shutting down). */
export class PaceClosedError extends Error {
  constructor() {
    super("the App is closing: a request that waited for its turn under the pace was not sent");
    this.name = "PaceClosedError";
  }
}
