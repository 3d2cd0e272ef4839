/**
 * Model rate limits and usage limits (see docs/runner.md#rate-limits): recognise them in an agent's output, work out when
 * they end, and decide between waiting inside the job (exponential backoff with jitter) and giving up
 * with the reset time, which the App treats as not-a-failure (`rate_limited_until`).
 */

export type RateLimitKind = "rate_limit" | "overloaded" | "usage_limit";

export interface RateLimitInfo {
  kind: RateLimitKind;
  /** When the limit ends, if the text or headers say. */
  resetAt?: Date;
  /** The line that gave it away. */
  message: string;
}

const USAGE_LIMIT =
  /usage limit (?:reached|exceeded|hit)|(?:you(?:'|’)ve|you have) (?:hit|reached) your (?:usage |weekly |daily )?limit|\b(?:5-hour|weekly|daily|session|opus|sonnet) limit reached|out of (?:extra )?usage|quota exceeded|insufficient_quota|exceeded your current quota|exhausted your (?:daily )?quota/i;
const OVERLOADED = /\boverloaded(?:_error)?\b|\b529\b/i;
const RATE_LIMIT = /\b429\b|rate[ _-]?limit(?:ed|_error)?|too many requests|resource has been exhausted|RESOURCE_EXHAUSTED/i;
/** Gemini's daily quotas ("You have exhausted your daily quota on this model."), which reset at midnight Pacific time. */
const DAILY_QUOTA = /\bdaily quota\b|PerDay|\bper day\b/i;

/**
 * `resets at 3pm (America/New_York)`, `resets 3:30 PM (Europe/Paris)`, `resets at 15:00 (UTC)`, and
 * weekly limits with a date: `resets Nov 24, 3pm (America/New_York)`.
 */
const RESETS_AT =
  /\bresets?\s+(?:at\s+|on\s+)?(?:(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(\d{1,2}),?\s+(?:at\s+)?)?(\d{1,2})(?::(\d{2}))?\s*(am|pm)?\s*(?:\(\s*([A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*)\s*\))?/i;
const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
/** Claude Code's older form: `Claude AI usage limit reached|1760000000` (epoch seconds). */
const EPOCH_RESET = /usage limit reached\|(\d{10,13})/i;
/** `try again in 5 minutes`, `retry after 30 seconds`, `reset in 2h`. */
const TRY_AGAIN_IN =
  /\b(?:try again|retry|resets?)\s+(?:in|after)\s+(\d+(?:\.\d+)?)\s*(s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?)\b/i;

/**
 * Looks for a rate or usage limit in an agent's failure output. Call it only on failed sessions: a
 * successful agent may well write "429" in its code.
 */
export function detectRateLimit(
  text: string,
  options: { now?: Date; status?: number | null; retryAfter?: string | null } = {},
): RateLimitInfo | null {
  const now = options.now ?? new Date();
  let kind: RateLimitKind | null = null;
  if (USAGE_LIMIT.test(text)) kind = "usage_limit";
  else if (options.status === 529 || OVERLOADED.test(text)) kind = "overloaded";
  else if (options.status === 429 || RATE_LIMIT.test(text)) kind = "rate_limit";
  if (!kind) return null;
  const info: RateLimitInfo = { kind, message: lineMatching(text, [USAGE_LIMIT, OVERLOADED, RATE_LIMIT]) };
  const resetAt =
    parseResetTime(text, now) ??
    (options.retryAfter ? retryAfterToDate(options.retryAfter, now) : undefined) ??
    (kind === "usage_limit" && DAILY_QUOTA.test(text) ? nextWallClockTime(0, 0, "America/Los_Angeles", now) : undefined);
  if (resetAt) info.resetAt = resetAt;
  return info;
}

function lineMatching(text: string, patterns: RegExp[]): string {
  const lines = text.split(/\r?\n/);
  const line = lines.find((l) => patterns.some((p) => p.test(l))) ?? lines[0] ?? "";
  return line.trim().slice(0, 300);
}

/** The absolute reset time a limit message names, if any. */
export function parseResetTime(text: string, now: Date = new Date()): Date | undefined {
  const epoch = EPOCH_RESET.exec(text);
  if (epoch) {
    const n = Number(epoch[1]);
    return new Date(n > 1e12 ? n : n * 1000);
  }
  const at = RESETS_AT.exec(text);
  // A bare number ("resets 5") is too vague; a time needs minutes, am/pm, a zone or a date.
  if (at && (at[1] !== undefined || at[4] !== undefined || at[5] !== undefined || at[6] !== undefined)) {
    let hour = Number(at[3]);
    const minute = at[4] ? Number(at[4]) : 0;
    const meridiem = at[5]?.toLowerCase();
    if (meridiem === "pm" && hour < 12) hour += 12;
    if (meridiem === "am" && hour === 12) hour = 0;
    const zone = at[6] && isValidTimeZone(at[6]) ? at[6] : "UTC";
    if (hour <= 23 && minute <= 59) {
      if (at[1] === undefined) return nextWallClockTime(hour, minute, zone, now);
      const month = MONTHS.indexOf(at[1].toLowerCase()) + 1;
      const day = Number(at[2]);
      const year = wallClock(now.getTime(), zone).year;
      const thisYear = zonedTimeToUtc(year, month, day, hour, minute, zone);
      // "Jan 2" read in late December is next year's.
      return thisYear.getTime() > now.getTime() - 86_400_000 ? thisYear : zonedTimeToUtc(year + 1, month, day, hour, minute, zone);
    }
  }
  const inN = TRY_AGAIN_IN.exec(text);
  if (inN) {
    const n = Number(inN[1]);
    const unit = inN[2]!.toLowerCase();
    const ms = unit.startsWith("h") ? n * 3_600_000 : unit.startsWith("m") ? n * 60_000 : n * 1000;
    return new Date(now.getTime() + ms);
  }
  return undefined;
}

/**
 * `retry-after` as HTTP sends it: delay seconds, or an HTTP date (RFC 9110 §10.2.3).
 * Returns milliseconds from `now`, never negative; undefined when unreadable.
 */
export function parseRetryAfter(value: string, now: Date = new Date()): number | undefined {
  const v = value.trim();
  if (/^\d+(?:\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const t = Date.parse(v);
  if (Number.isNaN(t)) return undefined;
  return Math.max(0, t - now.getTime());
}

function retryAfterToDate(value: string, now: Date): Date | undefined {
  const ms = parseRetryAfter(value, now);
  return ms === undefined ? undefined : new Date(now.getTime() + ms);
}

// ---------------------------------------------------------------- time zones through Intl

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(zone, f);
  }
  return f;
}

/** True when Intl knows the IANA zone. */
export function isValidTimeZone(zone: string): boolean {
  try {
    formatterFor(zone);
    return true;
  } catch {
    return false;
  }
}

interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function wallClock(t: number, zone: string): WallClock {
  const parts = Object.fromEntries(
    formatterFor(zone)
      .formatToParts(new Date(t))
      .map((p) => [p.type, p.value]),
  );
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
  };
}

/** Offset of `zone` from UTC at instant `t`, in ms (New York in winter: -5 h). */
export function zoneOffsetMs(t: number, zone: string): number {
  const w = wallClock(t, zone);
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  return asUtc - Math.floor(t / 1000) * 1000;
}

/** The instant at which the wall clock in `zone` shows the given date and time. */
export function zonedTimeToUtc(year: number, month: number, day: number, hour: number, minute: number, zone: string): Date {
  const guess = Date.UTC(year, month - 1, day, hour, minute);
  const first = guess - zoneOffsetMs(guess, zone);
  // Around a DST change the offset at the first estimate may differ; one more step settles it.
  const second = guess - zoneOffsetMs(first, zone);
  return new Date(second);
}

/**
 * The next instant after `now` at which the wall clock in `zone` reads hour:minute. An unknown zone
 * is read as UTC.
 */
export function nextWallClockTime(hour: number, minute: number, zone: string, now: Date): Date {
  const z = isValidTimeZone(zone) ? zone : "UTC";
  const today = wallClock(now.getTime(), z);
  for (let addDays = 0; addDays < 3; addDays++) {
    const candidate = zonedTimeToUtc(today.year, today.month, today.day + addDays, hour, minute, z);
    if (candidate.getTime() > now.getTime()) return candidate;
  }
  return zonedTimeToUtc(today.year, today.month, today.day + 1, hour, minute, z);
}

// ---------------------------------------------------------------- backoff

export interface BackoffOptions {
  baseMs?: number;
  maxMs?: number;
  random?: () => number;
}

/** Exponential backoff with jitter: min(base · 2^attempt, max), plus up to half of it at random. */
export function backoffDelay(attempt: number, options: BackoffOptions = {}): number {
  const base = options.baseMs ?? 5_000;
  const max = options.maxMs ?? 300_000;
  const exp = Math.min(base * 2 ** attempt, max);
  const jitter = (options.random ?? Math.random)() * exp * 0.5;
  return Math.round(Math.min(exp + jitter, max * 1.5));
}

export type RateLimitDecision = { action: "wait"; ms: number; until: Date } | { action: "give_up"; until: Date };

export interface RateLimitPlanOptions extends BackoffOptions {
  now: Date;
  /** Epoch ms by which the job must be done with the agent. */
  deadline: number;
  /** Retries already made (0 for the first limit seen). */
  attempt: number;
  maxRetries?: number;
  /** A usage limit with no reset time is assumed to last this long (default 1 h). */
  unknownUsageLimitMs?: number;
}

/**
 * Wait inside the job while the limit ends before the deadline; otherwise give up naming the time it
 * ends. Known reset times get a little jitter so many jobs do not wake at the same second.
 */
export function planRateLimitWait(info: RateLimitInfo, options: RateLimitPlanOptions): RateLimitDecision {
  const now = options.now.getTime();
  const random = options.random ?? Math.random;
  let until: number;
  if (info.resetAt) until = Math.max(now, info.resetAt.getTime()) + Math.round(random() * 5_000);
  else if (info.kind === "usage_limit") until = now + (options.unknownUsageLimitMs ?? 3_600_000);
  else until = now + backoffDelay(options.attempt, options);
  const untilDate = new Date(until);
  if (options.attempt >= (options.maxRetries ?? 5) || until > options.deadline) return { action: "give_up", until: untilDate };
  return { action: "wait", ms: until - now, until: untilDate };
}
