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
  const delay = base * 2 ** retry + unitHash(salt) * base;
  return Math.round(Math.min(delay, max));
}
