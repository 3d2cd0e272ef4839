// Seeded, reproducible fault injection. Each stream (API, webhooks) has its own PRNG so the faults
// one stream sees do not depend on how many decisions the other made.

/** mulberry32: tiny, fast, good enough for reproducible test faults. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * One failure of git over HTTP, answered to the next request of its kind: the RPC of a push
 * (`POST …/git-receive-pack`, after the client sent its pack) or of a fetch (`POST
 * …/git-upload-pack`). `answer` is an HTTP status (500, 502, 503…: the body is read and nothing is
 * applied) or `reset` (the connection is closed without an answer, as a dropped connection is).
 */
export interface GitFault {
  on: "push" | "fetch";
  answer: number | "reset";
}

export interface FaultConfig {
  seed: number;
  /** fraction of API calls (excluding the control API and git: see `gitFaults`) answered with a 5xx */
  apiErrorRate: number;
  apiErrorStatuses: number[];
  /** fraction of API calls answered as a secondary rate limit */
  rateLimitRate: number;
  /** 403 (GitHub's usual) or 429 */
  rateLimitStatus: 403 | 429;
  retryAfterSeconds: number;
  /** operationIds the API faults apply to (empty = all) */
  apiOperations: string[];
  /** credential kinds the API faults apply to (empty = all): "installation" (an App),
   *  "workflow" (a GITHUB_TOKEN), "user", "jwt", "none" */
  apiCredentials: string[];
  webhookDropRate: number;
  webhookDuplicateRate: number;
  /** deliveries are held for a random delay in [min, max] ms; with a window > 0 they are
   *  also shuffled within batches of that many deliveries */
  webhookDelayMs: [number, number];
  webhookReorderWindow: number;
  /** while the local GitHub's clock is before this, the App's webhook endpoint is treated as unreachable */
  appUnreachableUntil: number;
  /** git over HTTP: failures still to answer, in order, each to the next request of its kind (then gone) */
  gitFaults: GitFault[];
}

export const noFaults: FaultConfig = {
  seed: 1,
  apiErrorRate: 0,
  apiErrorStatuses: [500, 502, 503],
  rateLimitRate: 0,
  rateLimitStatus: 403,
  retryAfterSeconds: 1,
  apiOperations: [],
  apiCredentials: [],
  webhookDropRate: 0,
  webhookDuplicateRate: 0,
  webhookDelayMs: [0, 0],
  webhookReorderWindow: 0,
  appUnreachableUntil: 0,
  gitFaults: [],
};

export class Faults {
  config: FaultConfig = { ...noFaults };
  apiRandom = prng(1);
  hookRandom = prng(2);
  /** every decision taken, for tests that compare two runs with the same seed */
  log: string[] = [];

  set(partial: Partial<FaultConfig>): FaultConfig {
    this.config = { ...this.config, ...partial };
    if (partial.seed !== undefined) {
      this.apiRandom = prng(partial.seed);
      this.hookRandom = prng(partial.seed ^ 0x9e3779b9);
      this.log = [];
    }
    return this.config;
  }

  reset(): void {
    this.set({ ...noFaults });
  }

  /** Decides the fate of one API call: undefined (serve it) or a status to answer. */
  api(operationId: string, credential = "none"): { status: number; retryAfter?: number } | undefined {
    const c = this.config;
    if (c.apiErrorRate <= 0 && c.rateLimitRate <= 0) return undefined;
    if (c.apiOperations.length && !c.apiOperations.includes(operationId)) return undefined;
    if (c.apiCredentials.length && !c.apiCredentials.includes(credential)) return undefined;
    const r = this.apiRandom();
    let out: { status: number; retryAfter?: number } | undefined;
    if (r < c.rateLimitRate) out = { status: c.rateLimitStatus, retryAfter: c.retryAfterSeconds };
    else if (r < c.rateLimitRate + c.apiErrorRate) {
      out = { status: c.apiErrorStatuses[Math.floor(this.apiRandom() * c.apiErrorStatuses.length)] ?? 500 };
    }
    this.log.push(`api ${operationId} ${out ? out.status : "ok"}`);
    return out;
  }

  /** The failure to answer a git RPC with, taken from `gitFaults` (each answers one request), or undefined. */
  git(on: GitFault["on"]): GitFault | undefined {
    const queue = this.config.gitFaults;
    const i = queue.findIndex((f) => f.on === on);
    if (i < 0) return undefined;
    const fault = queue[i]!;
    this.config = { ...this.config, gitFaults: [...queue.slice(0, i), ...queue.slice(i + 1)] };
    this.log.push(`git ${on} ${fault.answer}`);
    return fault;
  }

  /** How a webhook delivery is handled: copies to send (0 = dropped) and delay. */
  hook(guid: string): { copies: number; delayMs: number } {
    const c = this.config;
    let copies = 1;
    if (c.webhookDropRate > 0 && this.hookRandom() < c.webhookDropRate) copies = 0;
    else if (c.webhookDuplicateRate > 0 && this.hookRandom() < c.webhookDuplicateRate) copies = 2;
    const [min, max] = c.webhookDelayMs;
    const delayMs = max > 0 ? Math.round(min + this.hookRandom() * (max - min)) : 0;
    this.log.push(`hook ${guid} x${copies} +${delayMs}ms`);
    return { copies, delayMs };
  }

  /** Random permutation of n items (Fisher–Yates) from the webhook stream. */
  shuffle<T>(items: T[]): T[] {
    const a = [...items];
    for (let i = a.length - 1; i > 0; i--) {
      const j = Math.floor(this.hookRandom() * (i + 1));
      [a[i], a[j]] = [a[j]!, a[i]!];
    }
    return a;
  }
}
