import type { ForgeConfig } from "./schemas/config.js";

/** FNV-1a over a string, scaled to [0, 1): a reproducible stand-in for random jitter. */
export function unitHash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) / 0x1_0000_0000;
}

/**
 * delay = min(base · 2^retry + jitter(0, base), max). The jitter is a hash of the
 * run, task and attempt, so the same inputs always give the same journal. See docs/executor.md#retries.
 */
export function backoffMs(config: Pick<ForgeConfig, "retry_backoff">, retry: number, salt: string): number {
  const base = config.retry_backoff.base_seconds * 1000;
  const max = config.retry_backoff.max_seconds * 1000;
  return delayMs({ baseMs: base, maxMs: max }, retry, unitHash(salt));
}

/** How an operation that can fail for a moment is tried again: the backoff's base and cap, and how many tries in all. */
export interface BackoffPolicy {
  baseMs: number;
  maxMs: number;
  /** Tries in all, the first included. */
  attempts: number;
}

/**
 * Git's remote operations (fetch, push, ls-remote) in the runner: 2 s base, 60 s cap, 5 tries, with
 * jitter — the executor loop's table of backoffs (docs/runner.md#the-runners-git). A try that fails
 * for a reason that can pass is tried again; a refusal never is (git-error.ts `gitFailureKind`).
 */
export const GIT_REMOTE_BACKOFF: BackoffPolicy = { baseMs: 2_000, maxMs: 60_000, attempts: 5 };

/**
 * The wait before retry number `retry` (0 for the first): min(base · 2^retry + jitter, max), the
 * jitter `unit · base` for a `unit` in [0, 1) — a hash where decisions must be reproducible,
 * a random number where many clients must not retry in step.
 */
export function delayMs(policy: Pick<BackoffPolicy, "baseMs" | "maxMs">, retry: number, unit: number): number {
  const delay = policy.baseMs * 2 ** retry + Math.min(Math.max(unit, 0), 1) * policy.baseMs;
  return Math.round(Math.min(delay, policy.maxMs));
}
