// Latency profiles of the local GitHub: how long GitHub takes to answer each kind of call, to
// deliver a webhook, and to start a dispatched job. Off ("none") unless chosen. Each class of
// operation has a log-normal distribution given by its median and p95, sampled from its own seeded
// PRNG stream, so the same seed gives the same delays in the same order per class. The figures of
// the "github" profile and where they come from are in ./README.md.
//
// A delay never blocks the event loop: `wait()` is a timer. Where each delay applies:
//   REST          before the operation runs (its effects and webhooks happen at the end of the delay)
//   GraphQL       the same, per document
//   git (HTTP)    a fetch: at its ref advertisement (GET info/refs?service=git-upload-pack), once per
//                 fetch; a push: before git-receive-pack runs (the request that changes the refs)
//   webhooks      event → delivery, counted from the event; each delivery at its own time (no order)
//   runner queue  dispatch (or push/pull_request run) → the executor starts the job
import { realClock, type Clock } from "../../core/clock.js";
import { prng } from "../faults.js";

export const LATENCY_CLASSES = [
  "restRead",
  "restWrite",
  "merge",
  "workflowDispatch",
  "graphql",
  "gitFetch",
  "gitPush",
  "webhook",
  "runnerQueue",
] as const;
export type LatencyClass = (typeof LATENCY_CLASSES)[number];

/**
 * A log-normal distribution by its median and 95th percentile (ms); samples above `maxMs` (default
 * 4 × the largest p95) are cut to it. With a `tail`, a share of the samples comes from a second,
 * slower log-normal instead: a heavy tail one log-normal cannot give (GitHub's webhooks are seconds
 * late nineteen times in twenty, and a minute or two the twentieth — ./README.md).
 */
export interface LatencyDistribution {
  medianMs: number;
  p95Ms: number;
  maxMs?: number;
  tail?: { share: number; medianMs: number; p95Ms: number };
}

export type LatencyProfile = Record<LatencyClass, LatencyDistribution>;

export const LATENCY_PROFILE_NAMES = ["none", "github"] as const;
export type LatencyProfileName = (typeof LATENCY_PROFILE_NAMES)[number];

/** GitHub.com as a GitHub App and its runners see it, in steady state (no incident): see ./README.md for the sources. */
export const GITHUB_PROFILE: LatencyProfile = {
  restRead: { medianMs: 200, p95Ms: 1_000 },
  restWrite: { medianMs: 600, p95Ms: 1_500 },
  merge: { medianMs: 1_000, p95Ms: 3_000 },
  workflowDispatch: { medianMs: 500, p95Ms: 1_500 },
  graphql: { medianMs: 400, p95Ms: 1_500 },
  gitFetch: { medianMs: 700, p95Ms: 2_500 },
  gitPush: { medianMs: 1_000, p95Ms: 3_000 },
  // p50 2 s, p90 3 s, p95 60 s, p99 2 min, at most 160 s (README: measured, and how the mixture gives them).
  webhook: { medianMs: 2_000, p95Ms: 3_000, tail: { share: 0.055, medianMs: 90_000, p95Ms: 150_000 }, maxMs: 160_000 },
  runnerQueue: { medianMs: 6_000, p95Ms: 45_000 },
};

export interface LatencySettings {
  /** "none" (the default), "github", or a profile of one's own */
  profile?: LatencyProfileName | LatencyProfile;
  /** seed of the PRNG streams (default 1) */
  seed?: number;
  /** dispatch → job start, set apart from the profile: a distribution, or 0 for none */
  runnerQueue?: LatencyDistribution | 0;
}

/** Whether `value` names a latency profile. */
export function isLatencyProfileName(value: string): value is LatencyProfileName {
  return (LATENCY_PROFILE_NAMES as readonly string[]).includes(value);
}

const Z95 = 1.6448536269514722;

/**
 * One sample from two uniforms in [0, 1) (Box–Muller), of the body's log-normal — or, with a third
 * uniform `u0` below the tail's share, of the tail's.
 */
export function logNormalSample(d: LatencyDistribution, u1: number, u2: number, u0?: number): number {
  if (d.medianMs <= 0) return 0;
  const cap = d.maxMs ?? 4 * Math.max(d.p95Ms, d.medianMs, d.tail?.p95Ms ?? 0);
  const from = d.tail && u0 !== undefined && u0 < d.tail.share ? d.tail : d;
  const sigma = from.p95Ms > from.medianMs ? Math.log(from.p95Ms / from.medianMs) / Z95 : 0;
  const z = Math.sqrt(-2 * Math.log(1 - u1)) * Math.cos(2 * Math.PI * u2);
  return Math.min(from.medianMs * Math.exp(sigma * z), cap);
}

/** The class of a REST call: merges and dispatches apart, then reads (GET, HEAD) and writes. */
export function restLatencyClass(method: string, operationId: string | undefined): LatencyClass {
  if (operationId === "pulls/merge" || operationId === "repos/merge") return "merge";
  if (operationId === "actions/create-workflow-dispatch") return "workflowDispatch";
  const m = method.toUpperCase();
  return m === "GET" || m === "HEAD" ? "restRead" : "restWrite";
}

/** The class of a git smart-HTTP request, or undefined for the requests that carry no delay of their own. */
export function gitLatencyClass(method: string, pathRest: string, service: string): LatencyClass | undefined {
  const m = method.toUpperCase();
  if (m === "GET" && pathRest.endsWith("/info/refs") && service === "git-upload-pack") return "gitFetch";
  if (m === "POST" && pathRest.endsWith("/git-receive-pack")) return "gitPush";
  return undefined;
}

/** The latency of one local GitHub: off until `set()` chooses a profile. */
export class Latency {
  profile: LatencyProfile | undefined;
  seed = 1;
  private streams = new Map<LatencyClass, () => number>();
  /** samples drawn per class (count and sum, ms), for reports and tests */
  readonly drawn: Record<LatencyClass, { count: number; totalMs: number }> = emptyTally();

  constructor(
    settings?: LatencySettings | LatencyProfileName,
    /** What the delays are waited on (a test clock skips them). */
    private readonly clock: Clock = realClock,
  ) {
    if (settings !== undefined) this.set(settings);
  }

  set(settings: LatencySettings | LatencyProfileName): void {
    const s: LatencySettings = typeof settings === "string" ? { profile: settings } : settings;
    if (typeof s.profile === "string" && !isLatencyProfileName(s.profile))
      throw new Error(`unknown latency profile ${JSON.stringify(s.profile)}: expected ${LATENCY_PROFILE_NAMES.join(" or ")}`);
    const base = s.profile === undefined || s.profile === "none" ? undefined : s.profile === "github" ? GITHUB_PROFILE : s.profile;
    let profile = base ? { ...base } : undefined;
    if (s.runnerQueue !== undefined) {
      const rq = s.runnerQueue === 0 ? { medianMs: 0, p95Ms: 0 } : s.runnerQueue;
      profile = { ...(profile ?? noneProfile()), runnerQueue: rq };
    }
    this.profile = profile;
    this.seed = s.seed ?? 1;
    this.streams.clear();
    Object.assign(this.drawn, emptyTally());
  }

  get enabled(): boolean {
    return this.profile !== undefined;
  }

  /** Whether operations of `cls` are delayed at all. */
  delays(cls: LatencyClass): boolean {
    return (this.profile?.[cls]?.medianMs ?? 0) > 0;
  }

  /** A delay (ms) for one operation of `cls`: 0 when latency is off. */
  sample(cls: LatencyClass): number {
    const d = this.profile?.[cls];
    if (!d || d.medianMs <= 0) return 0;
    let r = this.streams.get(cls);
    if (!r) {
      // One stream per class, so that what one class draws does not shift another's delays.
      r = prng((this.seed ^ Math.imul(LATENCY_CLASSES.indexOf(cls) + 1, 0x9e3779b9)) >>> 0);
      this.streams.set(cls, r);
    }
    // A class with a tail draws a third number, which picks the body or the tail.
    const ms = Math.round(d.tail ? logNormalSample(d, r(), r(), r()) : logNormalSample(d, r(), r()));
    this.drawn[cls].count++;
    this.drawn[cls].totalMs += ms;
    return ms;
  }

  /** Waits (a timer) for one operation of `cls`; resolves at once when latency is off. */
  async wait(cls: LatencyClass | undefined): Promise<void> {
    if (!cls) return;
    const ms = this.sample(cls);
    if (ms <= 0) return;
    this.#asleep++;
    try {
      await this.clock.sleep(ms);
    } finally {
      this.#asleep--;
    }
  }

  /** Operations waiting out their delay now (they go on only once the clock moves). */
  get asleep(): number {
    return this.#asleep;
  }

  #asleep = 0;
}

function noneProfile(): LatencyProfile {
  return Object.fromEntries(LATENCY_CLASSES.map((c) => [c, { medianMs: 0, p95Ms: 0 }])) as LatencyProfile;
}

function emptyTally(): Record<LatencyClass, { count: number; totalMs: number }> {
  return Object.fromEntries(LATENCY_CLASSES.map((c) => [c, { count: 0, totalMs: 0 }])) as Record<
    LatencyClass,
    { count: number; totalMs: number }
  >;
}
