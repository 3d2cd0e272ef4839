/**
 * The bounded fix loop that both sentinels share (docs/runner.md#sentinel-loop): each cycle checks the work; a
 * blocking verdict has the implementer fix it and the next cycle checks again. The loop ends on a
 * PASS or a WARN, after `maxCycles` fixes (the last fix judged by a final check), or earlier when two
 * consecutive cycles leave as many blocking items as before them: more of the same will not help.
 * The refinery's loop (sentinel.ts) and the task sentinel's (task-sentinel.ts) differ only in how
 * they check and who fixes.
 */
import type { StageOutcome } from "./context.js";

export type Grade = "PASS" | "WARN" | "FAIL";

/** What one check found. */
export interface LoopCheck {
  grade: Grade;
  /** Blocking problems the check found (failed checks). */
  blocking: number;
  /** Blocking items left to fix (the fix list's), compared across cycles to see progress. */
  remaining: number;
}

export interface LoopSteps<C extends LoopCheck> {
  maxCycles: number;
  /** Cycle `n`'s check, or the final one after the last fix; `{ stop }` ends the stage as it says. */
  check(cycle: number | "final"): Promise<C | { stop: StageOutcome }>;
  /** The implementer fixes what cycle `n` found; an outcome ends the stage as it says. */
  fix(cycle: number, found: C): Promise<StageOutcome | undefined>;
}

export interface LoopEnd<C extends LoopCheck> {
  grade: Grade;
  /** Cycles run (the final check is not one). */
  cycles: number;
  /** Blocking problems after each check, the final one included. */
  blocking: number[];
  /** The latest check. */
  last: C;
}

/** Runs the loop; `{ stop }` when a check or a fix ended the stage (an abort, an escalation). */
export async function boundedFixLoop<C extends LoopCheck>(steps: LoopSteps<C>): Promise<LoopEnd<C> | { stop: StageOutcome }> {
  const blocking: number[] = [];
  const remaining: number[] = [];
  for (let cycle = 1; cycle <= steps.maxCycles; cycle++) {
    const found = await steps.check(cycle);
    if ("stop" in found) return found;
    blocking.push(found.blocking);
    if (found.grade !== "FAIL") return { grade: found.grade, cycles: cycle, blocking, last: found };
    remaining.push(found.remaining);
    const r = remaining;
    if (r.length >= 3 && r[r.length - 1]! >= r[r.length - 3]!) return { grade: "FAIL", cycles: cycle, blocking, last: found };
    const stop = await steps.fix(cycle, found);
    if (stop) return { stop };
  }
  const final = await steps.check("final");
  if ("stop" in final) return final;
  blocking.push(final.blocking);
  return { grade: final.grade, cycles: steps.maxCycles, blocking, last: final };
}
