/**
 * The clock port (src/core/clock.ts) and the test clock the App's tests move (test/helpers/clock.ts):
 * skipping ahead fires the timers in order, each at its own time, and touches nothing real.
 */
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { realClock } from "../../src/core/clock.js";
import { TestClock } from "../helpers/clock.js";

const START = Date.parse("2026-01-01T00:00:00Z");

describe("the test clock", () => {
  it("stands still until moved; advancing fires the timers due in order, the time set to each one's", async () => {
    const clock = new TestClock(START);
    const fired: string[] = [];
    const at = (name: string) => () => fired.push(`${name}@${clock.now() - START}`);
    clock.setTimeout(at("c"), 3_000);
    clock.setTimeout(at("a"), 1_000);
    clock.setTimeout(at("b1"), 2_000);
    clock.setTimeout(at("b2"), 2_000);
    clock.setTimeout(at("late"), 10_000);
    expect(clock.now()).toBe(START);
    expect(clock.nextDue()).toBe(START + 1_000);
    await clock.advance(5_000);
    // Same due time: in the order they were set, as Node's timers.
    expect(fired).toEqual(["a@1000", "b1@2000", "b2@2000", "c@3000"]);
    expect(clock.now()).toBe(START + 5_000);
    expect(clock.pending).toBe(1);
    await clock.advance(4_999);
    expect(fired).toHaveLength(4);
    await clock.advance(1);
    expect(fired.at(-1)).toBe("late@10000");
    expect(clock.skippedMs).toBe(10_000);
  });

  it("a timer set by a timer fires in the same advance when it is due within it, after what its setter started", async () => {
    const clock = new TestClock(0);
    const log: string[] = [];
    clock.setTimeout(() => {
      log.push(`first@${clock.now()}`);
      // What a timer starts (a promise chain) runs before the next timer fires.
      void Promise.resolve().then(() => log.push("its work"));
      clock.setTimeout(() => log.push(`second@${clock.now()}`), 500);
    }, 1_000);
    await clock.advance(2_000);
    expect(log).toEqual(["first@1000", "its work", "second@1500"]);
  });

  it("an interval fires once a period until cleared; a cleared timeout never fires", async () => {
    const clock = new TestClock(0);
    const ticks: number[] = [];
    const every = clock.setInterval(() => ticks.push(clock.now()), 1_000);
    let cleared = false;
    clock.clear(clock.setTimeout(() => (cleared = true), 500));
    await clock.advance(3_500);
    expect(ticks).toEqual([1_000, 2_000, 3_000]);
    clock.clear(every);
    await clock.advance(10_000);
    expect(ticks).toHaveLength(3);
    expect(cleared).toBe(false);
    expect(clock.pending).toBe(0);
  });

  it("sleep resolves once the clock passes it, and rejects when its signal is aborted first", async () => {
    const clock = new TestClock(0);
    let woke = false;
    const sleeping = clock.sleep(60_000).then(() => (woke = true));
    await clock.advance(59_999);
    expect(woke).toBe(false);
    await clock.advance(1);
    await sleeping;
    expect(woke).toBe(true);
    const abort = new AbortController();
    const cut = clock.sleep(1_000, abort.signal);
    abort.abort(new Error("stopped"));
    await expect(cut).rejects.toThrow("stopped");
    expect(clock.pending).toBe(0);
  });

  it("skip jumps to the next timer (not past a horizon); with none set the time does not move", async () => {
    const clock = new TestClock(0);
    expect(await clock.skip()).toBe(false);
    expect(clock.now()).toBe(0);
    const fired: number[] = [];
    clock.setTimeout(() => fired.push(clock.now()), 20_000);
    clock.setTimeout(() => fired.push(clock.now()), 5_000);
    expect(await clock.skip(undefined, 4_000)).toBe(false);
    expect(await clock.skip()).toBe(true);
    expect(fired).toEqual([5_000]);
    expect(clock.now()).toBe(5_000);
  });

  it("while a test waits, skips ahead only when the world is quiet", async () => {
    const clock = new TestClock(0);
    let busy = true;
    const done = clock.sleep(10_000).then(() => clock.now());
    const waiting = clock.whileWaiting(done, () => !busy, { pollMs: 5 });
    await new Promise((r) => setTimeout(r, 60));
    // Busy: something real is under way, and it might set an earlier timer.
    expect(clock.now()).toBe(0);
    busy = false;
    expect(await waiting).toBe(10_000);
  });

  it("touches nothing real: Date.now, real timers and I/O go on in real time while the clock skips hours", async () => {
    const clock = new TestClock(START);
    let clockTimer = false;
    clock.setTimeout(() => (clockTimer = true), 10);
    const realBefore = Date.now();
    // A real timer fires by itself; the clock's does not, however long the wait.
    await new Promise((r) => setTimeout(r, 30));
    expect(clockTimer).toBe(false);
    expect(clock.now()).toBe(START);
    await clock.advance(5 * 3_600_000);
    expect(clockTimer).toBe(true);
    expect(clock.now()).toBe(START + 5 * 3_600_000);
    // Real time moved by what the test took, not by five hours; a file reads as ever.
    expect(Date.now() - realBefore).toBeLessThan(60_000);
    expect(await readFile(new URL(import.meta.url), "utf8")).toContain("touches nothing real");
  });
});

describe("the real clock", () => {
  it("is the process's time and timers", async () => {
    expect(Math.abs(realClock.now() - Date.now())).toBeLessThan(1_000);
    const t0 = performance.now();
    await realClock.sleep(20);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(15);
    let fired = false;
    realClock.clear(realClock.setTimeout(() => (fired = true), 5));
    const ticks: number[] = [];
    const every = realClock.setInterval(() => ticks.push(1), 5);
    await new Promise((r) => setTimeout(r, 40));
    realClock.clear(every);
    expect(fired).toBe(false);
    expect(ticks.length).toBeGreaterThan(0);
    const abort = new AbortController();
    const cut = realClock.sleep(60_000, abort.signal);
    abort.abort(new Error("stopped"));
    await expect(cut).rejects.toThrow("stopped");
  });
});
