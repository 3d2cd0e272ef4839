import { describe, expect, it } from "vitest";
import {
  abortsTheStage,
  ALL_EXIT_CODES,
  EXIT_CODES,
  EXIT_STATUS,
  exitMeaning,
  interruptedOrTimedOut,
  isExitCode,
  needsOthers,
  retryable,
  signalStatusOf,
  stageStatusOf,
  succeeded,
} from "../../src/core/exit-codes.js";
import { exitCodeSchema } from "../../src/core/schemas/agent-result.js";

/** Which codes each predicate holds for, in ascending order. */
const holds = (p: (code: number) => boolean) => ALL_EXIT_CODES.filter((c) => p(c));

describe("exit codes: one vocabulary and one classification", () => {
  it("the codes, the guard and result.json's schema agree", () => {
    expect(ALL_EXIT_CODES).toEqual([0, 1, 2, 3, 10, 11, 12, 20, 21]);
    for (const c of ALL_EXIT_CODES) {
      expect(isExitCode(c)).toBe(true);
      expect(exitCodeSchema.safeParse(c).success).toBe(true);
      expect(exitMeaning(c)).not.toBe(`exit ${c}`);
      expect(EXIT_STATUS[c]).toBeTruthy();
    }
    for (const c of [-1, 4, 13, 22, 1.5, "0"]) {
      expect(isExitCode(c)).toBe(false);
      expect(exitCodeSchema.safeParse(c).success).toBe(false);
    }
    expect(exitMeaning(99)).toBe("exit 99");
  });

  it("each classification holds for its codes", () => {
    expect(holds(succeeded)).toEqual([EXIT_CODES.SUCCESS, EXIT_CODES.PARTIAL_SUCCESS]);
    expect(holds(interruptedOrTimedOut)).toEqual([EXIT_CODES.INTERRUPTED, EXIT_CODES.TIMEOUT]);
    expect(holds(abortsTheStage)).toEqual([EXIT_CODES.DEPTH_EXCEEDED, EXIT_CODES.INTERRUPTED, EXIT_CODES.TIMEOUT]);
    expect(holds(needsOthers)).toEqual([EXIT_CODES.HUMAN_INPUT, EXIT_CODES.NEEDS_REFINEMENT, EXIT_CODES.NEEDS_ESCALATION]);
    expect(holds((c) => !succeeded(c) && retryable(c))).toEqual([EXIT_CODES.FAILURE, EXIT_CODES.NEEDS_REFINEMENT, EXIT_CODES.TIMEOUT]);
    expect(ALL_EXIT_CODES.map(signalStatusOf)).toEqual(["done", "fail", "fail", "fail", "refine", "fail", "done", "fail", "fail"]);
    expect(ALL_EXIT_CODES.map(stageStatusOf)).toEqual([
      "success",
      "failure",
      "failure",
      "failure",
      "failure",
      "failure",
      "partial",
      "failure",
      "failure",
    ]);
  });
});
