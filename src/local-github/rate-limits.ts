// GitHub's REST rate limits, counted as GitHub counts them — docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api:
//  - primary: "GitHub Apps authenticating with an installation access token use the installation's
//    minimum rate limit of 5,000 requests per hour": one budget per installation, shared by all its
//    tokens; a person's tokens share the person's 5,000; a workflow's GITHUB_TOKEN has 1,000 an hour
//    per repository; unauthenticated requests 60 an hour. Past it: 403 or 429 with
//    `x-ratelimit-remaining: 0` ("If you exceed your primary rate limit, you will receive a 403 or
//    429 response, and the x-ratelimit-remaining header will be 0").
//  - secondary, content creation: "no more than 80 content-generating requests per minute and no
//    more than 500 content-generating requests per hour". Past it: 403 or 429 with `retry-after`
//    ("If the retry-after response header is present, you should not retry your request until after
//    that many seconds has elapsed").
// Counted always (the `x-ratelimit-*` headers); refused only when enabled (`SimOptions.rateLimits`,
// `PUT /_sim/rate-limits`): off by default, so suites that seed and act as many people at once keep
// their figures, and a test or the chaos suite sets GitHub's numbers or tighter ones.
import { realClock, type Clock } from "../core/clock.js";
import type { App, Token } from "./state.js";

export interface RateLimitConfig {
  /** refuse past the limits (headers are sent either way) */
  enabled: boolean;
  /** primary limit of an installation (and of a person): requests per window */
  primary: number;
  /** primary limit of a workflow's GITHUB_TOKEN, per repository */
  primaryWorkflow: number;
  /** primary limit of unauthenticated requests */
  primaryAnonymous: number;
  /** the primary window (GitHub: an hour); its end is `x-ratelimit-reset` */
  primaryWindowMs: number;
  /** content-creating requests per minute and per hour (secondary) */
  creatingPerMinute: number;
  /** the "minute" of `creatingPerMinute` (GitHub: 60 s); shorter in tests that compress time */
  creatingWindowMs: number;
  creatingPerHour: number;
  /** 403 (GitHub's usual answer) or 429 */
  status: 403 | 429;
  /**
   * Whose budgets are enforced (empty = all, as GitHub): "installation", "user", "workflow", "app" (its JWT),
   * "anonymous" — a test can hold the App's installation alone to a tight limit.
   */
  appliesTo: string[];
}

export const GITHUB_RATE_LIMITS: RateLimitConfig = {
  enabled: false,
  primary: 5000,
  primaryWorkflow: 1000,
  primaryAnonymous: 60,
  primaryWindowMs: 3_600_000,
  creatingPerMinute: 80,
  creatingWindowMs: 60_000,
  creatingPerHour: 500,
  status: 403,
  appliesTo: [],
};

const HOUR = 3_600_000;

/** Operations GitHub counts as content-generating: those that create (issues, comments, pull requests, commits, refs, check runs, reactions, merges, statuses, dispatches). */
export function isContentCreating(operationId: string, method: string): boolean {
  if (method !== "POST" && method !== "PUT") return false;
  const [group, name = ""] = operationId.split("/");
  if (group === "apps" || name.includes("secret")) return false;
  return /^(create|merge|add)/.test(name);
}

interface Bucket {
  limit: number;
  windowStart: number;
  used: number;
  /** start times of the content-creating requests of the last hour, oldest first */
  created: number[];
}

export interface RateAnswer {
  headers: Record<string, string>;
  /** set when the request is refused */
  refuse?: { status: number; message: string; doc: string; headers: Record<string, string> };
}

export const PRIMARY_DOC = "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-primary-rate-limits";
export const SECONDARY_DOC = "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits";

export class RateLimits {
  config: RateLimitConfig = { ...GITHUB_RATE_LIMITS };
  readonly #buckets = new Map<string, Bucket>();
  /** Requests refused so far, by budget (`installation:<id>`, `user:<id>`, `workflow:<repo id>`, `anonymous`) and limit. */
  readonly refused: Array<{ key: string; limit: "primary" | "secondary"; at: number; operationId: string }> = [];

  /** Windows run on the local GitHub's clock (a test clock skips a window instead of waiting it out). */
  constructor(private readonly clock: Pick<Clock, "now"> = realClock) {}

  set(partial: Partial<RateLimitConfig>): RateLimitConfig {
    this.config = { ...this.config, ...partial };
    // New limits start new windows (a test that tightens them starts from a clean count).
    this.#buckets.clear();
    return this.config;
  }

  reset(): RateLimitConfig {
    return this.set({ ...GITHUB_RATE_LIMITS });
  }

  /**
   * Whose budget a request spends: the installation's (all its tokens), the person's, the
   * repository's GITHUB_TOKEN's, the App's own (its JWT: "a separate rate limit" for the App), or
   * the anonymous one.
   */
  static key(who: Token | App | undefined, repoId: number | undefined): { key: string; kind: "app" | "workflow" | "anonymous" } {
    if (!who) return { key: "anonymous", kind: "anonymous" };
    if (!("token" in who)) return { key: `app:${who.id}`, kind: "app" };
    if (who.kind === "installation") return { key: `installation:${who.installationId}`, kind: "app" };
    if (who.kind === "workflow") return { key: `workflow:${repoId ?? who.workflowRunId}`, kind: "workflow" };
    return { key: `user:${who.actor.id}`, kind: "app" };
  }

  #bucket(key: string, kind: "app" | "workflow" | "anonymous", now: number): Bucket {
    const c = this.config;
    const limit = kind === "workflow" ? c.primaryWorkflow : kind === "anonymous" ? c.primaryAnonymous : c.primary;
    let b = this.#buckets.get(key);
    if (!b) this.#buckets.set(key, (b = { limit, windowStart: now, used: 0, created: [] }));
    b.limit = limit;
    if (now >= b.windowStart + c.primaryWindowMs) {
      b.windowStart = now;
      b.used = 0;
    }
    while (b.created.length && b.created[0]! <= now - HOUR) b.created.shift();
    return b;
  }

  /** When a content-creating request may go (now or later), by the minute and hour windows. */
  #creatableAt(b: Bucket, now: number): number {
    const c = this.config;
    let at = now;
    const n = b.created.length;
    if (n >= c.creatingPerHour) at = Math.max(at, b.created[n - c.creatingPerHour]! + HOUR);
    if (n >= c.creatingPerMinute) at = Math.max(at, b.created[n - c.creatingPerMinute]! + c.creatingWindowMs);
    return at;
  }

  /**
   * Counts one request against its budget and says how to answer it: the `x-ratelimit-*` headers,
   * and a refusal when the limits are enforced and spent. A refused request counts as used (GitHub
   * counts it) but creates nothing.
   */
  take(who: Token | App | undefined, repoId: number | undefined, operationId: string, creating: boolean, requestId: string): RateAnswer {
    const now = this.clock.now();
    const { key, kind } = RateLimits.key(who, repoId);
    const token = who && "token" in who ? who : undefined;
    const b = this.#bucket(key, kind, now);
    const c = this.config;
    const reset = Math.ceil((b.windowStart + c.primaryWindowMs) / 1000);
    const enforced = c.enabled && (c.appliesTo.length === 0 || c.appliesTo.includes(key.split(":")[0]!));
    const over = enforced && b.used >= b.limit;
    if (!over) b.used++;
    const headers = {
      "x-ratelimit-limit": String(b.limit),
      "x-ratelimit-remaining": String(Math.max(0, b.limit - b.used)),
      "x-ratelimit-reset": String(reset),
      "x-ratelimit-used": String(b.used),
      "x-ratelimit-resource": "core",
    };
    if (over) {
      const message =
        kind === "app" && token?.kind === "installation"
          ? `API rate limit exceeded for installation ID ${token.installationId}. If you reach out to GitHub Support for help, please include the request ID ${requestId}.`
          : kind === "anonymous"
            ? `API rate limit exceeded for 127.0.0.1. (But here's the good news: Authenticated requests get a higher rate limit. Check out the documentation for more details.) If you reach out to GitHub Support for help, please include the request ID ${requestId}.`
            : token
              ? `API rate limit exceeded for user ID ${token.actor.id}. If you reach out to GitHub Support for help, please include the request ID ${requestId}.`
              : `API rate limit exceeded for ${key.replace(":", " ID ")}. If you reach out to GitHub Support for help, please include the request ID ${requestId}.`;
      this.refused.push({ key, limit: "primary", at: now, operationId });
      return { headers, refuse: { status: c.status, message, doc: PRIMARY_DOC, headers } };
    }
    if (creating && enforced && kind !== "anonymous") {
      const at = this.#creatableAt(b, now);
      if (at > now) {
        this.refused.push({ key, limit: "secondary", at: now, operationId });
        return {
          headers,
          refuse: {
            status: c.status,
            message: `You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID ${requestId}.`,
            doc: SECONDARY_DOC,
            headers: { ...headers, "retry-after": String(Math.max(1, Math.ceil((at - now) / 1000))) },
          },
        };
      }
    }
    if (creating) b.created.push(now);
    return { headers };
  }
}
