/**
 * Effect leases: which of the App's processes (replicas) may carry out a pending effect of a run.
 * A lease names its owner and runs until a time; it is written with the journal, so the
 * compare-and-swap of the journal write decides between two processes that want the same effect.
 * Pure functions of the stored leases, the asking process and the time.
 */
import type { Effect } from "../core/effects.js";
import type { StoredRun } from "./run-store.js";

/** The process that asks: its name among the replicas, how long its leases last, and the time now (ms). */
export interface LeaseHolder {
  replicaId: string;
  leaseMs: number;
  now: number;
}

/**
 * The leases of `next`'s outbox: effects this decision made (`decided`) are the holder's, unless
 * another live process owns the key; every lease the holder has is extended; leases of effects
 * that left the outbox go. `claim` takes over the given keys (their leases ran out). An effect that
 * will not act before a known time (`dueOf`, the tracker's wait) is held until then and a lease
 * period beyond: otherwise its lease would run out while it waits, and it would be claimed again —
 * a journal write — before it runs.
 */
export function withLeases(
  next: StoredRun,
  decided: readonly Effect[],
  claim: readonly string[],
  me: LeaseHolder,
  dueOf: (e: Effect) => number = () => 0,
): StoredRun {
  const until = (e: Effect) => new Date(Math.max(me.now, dueOf(e)) + me.leaseMs).toISOString();
  const before = next.leases ?? {};
  const fresh = new Set([...decided.map((e) => e.key), ...claim]);
  const leases: StoredRun["leases"] = {};
  for (const e of next.journal.outbox) {
    const held = before[e.key];
    const othersLive = !!held && held.owner !== me.replicaId && Date.parse(held.until) > me.now;
    const mine = !othersLive && (fresh.has(e.key) || held?.owner === me.replicaId);
    if (mine) leases[e.key] = { owner: me.replicaId, until: until(e) };
    else if (held) leases[e.key] = held;
  }
  return { ...next, leases };
}

/**
 * May the holder carry out the effect now? Only under its own lease with at least half of it left:
 * the rest is the margin that keeps the effect from running on while another process takes it over.
 */
export function owns(state: StoredRun, key: string, me: LeaseHolder): boolean {
  const lease = state.leases?.[key];
  return !!lease && lease.owner === me.replicaId && Date.parse(lease.until) - me.now > me.leaseMs / 2;
}

/**
 * Must the effect be taken over (a journal write naming the holder) before anyone carries it out?
 * Yes with no lease, with one that ran out, or with the holder's own lease past its half.
 */
export function isFree(state: StoredRun, key: string, me: LeaseHolder): boolean {
  const lease = state.leases?.[key];
  return !lease || Date.parse(lease.until) <= me.now || (lease.owner === me.replicaId && !owns(state, key, me));
}
