/**
 * What Forge reads of a repository's settings and keeps for a while — its branches' rules, the checks
 * they require, its rulesets' names: a value per key for each owner (one repository's port, held
 * weakly so a dropped port drops its values), read again once `ttlMs` has passed. A read that fails
 * stores nothing and throws: the caller decides what a failure means (answer without it, or keep a
 * fallback by reading `() => read().catch(() => fallback)`).
 */
export interface TtlCache<K, V> {
  /** The value of `key` for `owner`: the kept one while younger than `ttlMs`, else `read()`'s, kept from `now`. */
  get(owner: object, key: K, now: number, ttlMs: number, read: () => Promise<V>): Promise<V>;
  /** The value kept for `key`, whatever its age (undefined when none is). */
  peek(owner: object, key: K): V | undefined;
  /** Keeps `value` for `key` from `now`, as though just read. */
  set(owner: object, key: K, value: V, now: number): void;
}

export function ttlCache<K, V>(): TtlCache<K, V> {
  const owners = new WeakMap<object, Map<K, { at: number; value: V }>>();
  const entries = (owner: object): Map<K, { at: number; value: V }> => {
    let byKey = owners.get(owner);
    if (!byKey) owners.set(owner, (byKey = new Map()));
    return byKey;
  };
  return {
    async get(owner, key, now, ttlMs, read) {
      const hit = entries(owner).get(key);
      if (hit && now - hit.at < ttlMs) return hit.value;
      const value = await read();
      entries(owner).set(key, { at: now, value });
      return value;
    },
    peek: (owner, key) => owners.get(owner)?.get(key)?.value,
    set: (owner, key, value, now) => void entries(owner).set(key, { at: now, value }),
  };
}
