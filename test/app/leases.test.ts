/**
 * The effect-lease rules: which App process may carry out a pending effect, and what a journal
 * write does to the leases of its outbox.
 */
import { describe, expect, it } from "vitest";
import type { Effect } from "../../src/core/effects.js";
import { isFree, owns, withLeases, type LeaseHolder } from "../../src/app/leases.js";
import type { StoredRun } from "../../src/app/run-store.js";

const NOW = Date.parse("2026-11-22T09:00:00.000Z");
const LEASE_MS = 20_000;
const me: LeaseHolder = { replicaId: "replica-1", leaseMs: LEASE_MS, now: NOW };
const at = (ms: number) => new Date(ms).toISOString();
const effect = (key: string): Effect => ({ key, kind: "UpdateTracker" });

/** A stored run whose outbox holds `keys`, with `leases`. */
function run(keys: string[], leases: StoredRun["leases"] = {}): StoredRun {
  return { journal: { outbox: keys.map(effect) }, leases } as unknown as StoredRun;
}

describe("effect leases", () => {
  it("a live lease of another replica is kept, even for an effect this process decided or claims", () => {
    const theirs = { owner: "replica-2", until: at(NOW + 1) };
    const next = withLeases(run(["a"], { a: theirs }), [effect("a")], ["a"], me);
    expect(next.leases).toEqual({ a: theirs });
    expect(owns(next, "a", me)).toBe(false);
    expect(isFree(next, "a", me)).toBe(false);
  });

  it("an expired lease is free, and a claim makes it this process's for a full lease", () => {
    const state = run(["a"], { a: { owner: "replica-2", until: at(NOW) } });
    expect(isFree(state, "a", me)).toBe(true);
    expect(owns(state, "a", me)).toBe(false);
    // Without a claim or a decision the ran-out lease stays as it was: nobody took it over.
    expect(withLeases(state, [], [], me).leases).toEqual({ a: { owner: "replica-2", until: at(NOW) } });
    const claimed = withLeases(state, [], ["a"], me);
    expect(claimed.leases).toEqual({ a: { owner: "replica-1", until: at(NOW + LEASE_MS) } });
    expect(owns(claimed, "a", me)).toBe(true);
  });

  it("an effect that waits until a known time (the tracker's redraw) is held until then and a lease beyond, so it is not claimed again while it waits", () => {
    const due = NOW + 45_000;
    const next = withLeases(run(["tracker", "b"]), [effect("tracker"), effect("b")], [], me, (e) => (e.key === "tracker" ? due : 0));
    expect(next.leases).toEqual({
      tracker: { owner: "replica-1", until: at(due + LEASE_MS) },
      b: { owner: "replica-1", until: at(NOW + LEASE_MS) },
    });
    // When its time comes it is still this process's to carry out, without a claim.
    const then = { ...me, now: due };
    expect(owns(next, "tracker", then)).toBe(true);
    expect(isFree(next, "tracker", then)).toBe(false);
    // Without the time known, the same wait would have run the lease out: a claim (a write) first.
    const plain = withLeases(run(["tracker"]), [effect("tracker")], [], me);
    expect(isFree(plain, "tracker", then)).toBe(true);
  });

  it("an effect without a lease is free; one this decision made becomes this process's", () => {
    expect(isFree(run(["a"]), "a", me)).toBe(true);
    expect(withLeases(run(["a", "b"]), [effect("a")], [], me).leases).toEqual({ a: { owner: "replica-1", until: at(NOW + LEASE_MS) } });
  });

  it("this process's lease needs more than half its time left to carry the effect out; past that it must be taken again", () => {
    const left = (ms: number) => run(["a"], { a: { owner: "replica-1", until: at(NOW + ms) } });
    expect(owns(left(LEASE_MS / 2 + 1), "a", me)).toBe(true);
    expect(isFree(left(LEASE_MS / 2 + 1), "a", me)).toBe(false);
    expect(owns(left(LEASE_MS / 2), "a", me)).toBe(false);
    expect(isFree(left(LEASE_MS / 2), "a", me)).toBe(true);
    // Any write of the journal by this process extends its own leases to a full one.
    expect(withLeases(left(1), [], [], me).leases).toEqual({ a: { owner: "replica-1", until: at(NOW + LEASE_MS) } });
  });

  it("leases of effects that left the outbox go", () => {
    const state = run(["b"], {
      a: { owner: "replica-1", until: at(NOW + LEASE_MS) },
      b: { owner: "replica-2", until: at(NOW + LEASE_MS) },
    });
    expect(withLeases(state, [], [], me).leases).toEqual({ b: { owner: "replica-2", until: at(NOW + LEASE_MS) } });
  });
});
