import { describe, expect, it } from "vitest";
import {
  backoffDelay,
  detectRateLimit,
  nextWallClockTime,
  parseResetTime,
  parseRetryAfter,
  planRateLimitWait,
  zoneOffsetMs,
  zonedTimeToUtc,
} from "../../src/agent/rate-limit.js";

describe("rate-limit recognition", () => {
  it("recognises a usage limit with a reset time in an IANA zone (winter and summer offsets)", () => {
    // 10:00 in New York on 22 Nov 2026 is 15:00Z (EST, UTC-5); 3 pm there is 20:00Z.
    const now = new Date("2026-11-22T15:00:00Z");
    const info = detectRateLimit("Claude AI usage limit reached, resets at 3pm (America/New_York)", { now });
    expect(info).toMatchObject({ kind: "usage_limit" });
    expect(info!.resetAt!.toISOString()).toBe("2026-11-22T20:00:00.000Z");
    // In July New York is on EDT (UTC-4).
    const summer = parseResetTime("usage limit reached. Your limit resets 3pm (America/New_York)", new Date("2026-07-01T12:00:00Z"));
    expect(summer!.toISOString()).toBe("2026-07-01T19:00:00.000Z");
  });

  it("reads Gemini CLI's limits: a retryable 429, a quota with a retry delay, a daily quota (midnight Pacific)", () => {
    const now = new Date("2026-11-22T15:00:00Z");
    // What the CLI prints when its retries of a plain 429 are spent (exit 173).
    const plain = "[API Error: Resource has been exhausted (e.g. check quota).]\nPlease wait and try again later.";
    expect(detectRateLimit(plain, { now })).toMatchObject({ kind: "rate_limit" });
    expect(detectRateLimit(plain, { now })!.resetAt).toBeUndefined();
    const perMinute = detectRateLimit("[API Error: You exceeded your current quota. Please retry in 41.5s.]", { now });
    expect(perMinute).toMatchObject({ kind: "usage_limit" });
    expect(perMinute!.resetAt!.toISOString()).toBe("2026-11-22T15:00:41.500Z");
    // 15:00Z is 07:00 in Los Angeles (PST, UTC-8): the quota is back at 08:00Z the next day.
    const daily = detectRateLimit("[API Error: You have exhausted your daily quota on this model.]", { now });
    expect(daily).toMatchObject({ kind: "usage_limit" });
    expect(daily!.resetAt!.toISOString()).toBe("2026-11-23T08:00:00.000Z");
  });

  it("rolls over to the next day when the reset hour has passed, and reads minutes, am/pm and 24-hour times", () => {
    const now = new Date("2026-11-22T21:00:00Z"); // 16:00 in New York
    expect(parseResetTime("resets at 3pm (America/New_York)", now)!.toISOString()).toBe("2026-11-23T20:00:00.000Z");
    expect(parseResetTime("resets at 9:30am (Asia/Tokyo)", now)!.toISOString()).toBe("2026-11-23T00:30:00.000Z");
    expect(parseResetTime("resets at 12am (UTC)", now)!.toISOString()).toBe("2026-11-23T00:00:00.000Z");
    expect(parseResetTime("resets at 23:15 (Europe/Paris)", now)!.toISOString()).toBe("2026-11-22T22:15:00.000Z");
    // An unknown zone is read as UTC rather than ignored.
    expect(parseResetTime("resets at 11pm (Mars/Olympus_Mons)", now)!.toISOString()).toBe("2026-11-22T23:00:00.000Z");
  });

  it("reads weekly limits with a date, and Claude's newer wording", () => {
    const now = new Date("2026-11-22T15:00:00Z");
    const weekly = detectRateLimit("You've hit your weekly limit · resets Nov 24, 3pm (America/New_York)", { now });
    expect(weekly).toMatchObject({ kind: "usage_limit" });
    expect(weekly!.resetAt!.toISOString()).toBe("2026-11-24T20:00:00.000Z");
    expect(detectRateLimit("5-hour limit reached ∙ resets 9pm", { now })!.resetAt!.toISOString()).toBe("2026-11-22T21:00:00.000Z");
    // Early January, read in late December, is next year's.
    expect(parseResetTime("resets Jan 2 at 10am (UTC)", new Date("2026-12-30T12:00:00Z"))!.toISOString()).toBe("2027-01-02T10:00:00.000Z");
  });

  it("converts wall-clock times across a DST change", () => {
    // 8 March 2026: New York springs forward at 02:00; 03:30 that day is EDT (UTC-4).
    expect(zonedTimeToUtc(2026, 3, 8, 3, 30, "America/New_York").toISOString()).toBe("2026-03-08T07:30:00.000Z");
    expect(zonedTimeToUtc(2026, 3, 7, 3, 30, "America/New_York").toISOString()).toBe("2026-03-07T08:30:00.000Z");
    expect(zoneOffsetMs(Date.parse("2026-01-15T12:00:00Z"), "Australia/Sydney")).toBe(11 * 3_600_000);
    expect(nextWallClockTime(0, 0, "Asia/Kolkata", new Date("2026-11-22T18:00:00Z")).toISOString()).toBe("2026-11-22T18:30:00.000Z");
  });

  it("reads the epoch form, 'try again in', and retry-after seconds or dates", () => {
    const now = new Date("2026-11-22T10:00:00Z");
    expect(parseResetTime("Claude AI usage limit reached|1795348800", now)!.toISOString()).toBe("2026-11-22T12:00:00.000Z");
    expect(parseResetTime("Rate limited. Please try again in 5 minutes.", now)!.toISOString()).toBe("2026-11-22T10:05:00.000Z");
    expect(parseRetryAfter("30", now)).toBe(30_000);
    expect(parseRetryAfter("Sun, 22 Nov 2026 10:01:00 GMT", now)).toBe(60_000);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    const info = detectRateLimit("API Error: Request rejected (429) · Rate limited", { now, retryAfter: "120" });
    expect(info).toMatchObject({ kind: "rate_limit" });
    expect(info!.resetAt!.toISOString()).toBe("2026-11-22T10:02:00.000Z");
  });

  it("tells overloaded (529) from rate limits, and finds nothing in ordinary failures", () => {
    expect(detectRateLimit('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}')?.kind).toBe("overloaded");
    expect(detectRateLimit("failed", { status: 529 })?.kind).toBe("overloaded");
    expect(detectRateLimit("failed", { status: 429 })?.kind).toBe("rate_limit");
    expect(detectRateLimit("TypeError: cannot read properties of undefined")).toBeNull();
    expect(detectRateLimit("Error: tests failed (3 failing)")).toBeNull();
  });
});

describe("rate-limit decisions", () => {
  const now = new Date("2026-11-22T10:00:00Z");
  const noJitter = () => 0;

  it("waits inside the job when the reset comes before the deadline", () => {
    const d = planRateLimitWait(
      { kind: "usage_limit", resetAt: new Date("2026-11-22T10:10:00Z"), message: "" },
      { now, deadline: now.getTime() + 3_600_000, attempt: 0, random: noJitter },
    );
    expect(d).toEqual({ action: "wait", ms: 600_000, until: new Date("2026-11-22T10:10:00Z") });
  });

  it("gives up naming the reset time when it outlasts the job", () => {
    const d = planRateLimitWait(
      { kind: "usage_limit", resetAt: new Date("2026-11-22T20:00:00Z"), message: "" },
      { now, deadline: now.getTime() + 3_600_000, attempt: 0, random: noJitter },
    );
    expect(d).toEqual({ action: "give_up", until: new Date("2026-11-22T20:00:00Z") });
  });

  it("backs off exponentially with bounded jitter, and gives up after the retry limit", () => {
    expect(backoffDelay(0, { baseMs: 1000, random: noJitter })).toBe(1000);
    expect(backoffDelay(3, { baseMs: 1000, random: noJitter })).toBe(8000);
    expect(backoffDelay(20, { baseMs: 1000, maxMs: 60_000, random: noJitter })).toBe(60_000);
    const jittered = backoffDelay(2, { baseMs: 1000, random: () => 0.999 });
    expect(jittered).toBeGreaterThan(4000);
    expect(jittered).toBeLessThanOrEqual(6000);
    const wait = planRateLimitWait(
      { kind: "overloaded", message: "" },
      { now, deadline: now.getTime() + 3_600_000, attempt: 1, baseMs: 1000, random: noJitter },
    );
    expect(wait).toMatchObject({ action: "wait", ms: 2000 });
    const stop = planRateLimitWait(
      { kind: "overloaded", message: "" },
      { now, deadline: now.getTime() + 3_600_000, attempt: 5, maxRetries: 5, random: noJitter },
    );
    expect(stop.action).toBe("give_up");
  });
});
