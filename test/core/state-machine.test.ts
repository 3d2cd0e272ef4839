import { describe, expect, it } from "vitest";
import { checkTransition, isValidTransition } from "../../src/core/state-machine.js";
import type { TaskStatus } from "../../src/core/schemas/common.js";

const ALL: TaskStatus[] = ["PENDING", "RUNNING", "DONE", "MERGE_READY", "MERGED", "FAILED", "STALE"];
// docs/executor.md#transitions, written out independently of the implementation's table.
const VALID = new Set([
  "PENDING>RUNNING",
  "RUNNING>DONE",
  "RUNNING>FAILED",
  "RUNNING>STALE",
  "DONE>MERGE_READY",
  "MERGE_READY>MERGED",
  "MERGE_READY>RUNNING",
  "FAILED>PENDING",
  "STALE>PENDING",
]);

describe("task state machine", () => {
  for (const from of ALL) {
    for (const to of ALL) {
      const key = `${from}>${to}`;
      it(`${from} → ${to} is ${from === to ? "a no-op" : VALID.has(key) ? "valid" : "rejected"}`, () => {
        const check = checkTransition(from, to);
        if (from === to) expect(check).toEqual({ ok: true, noop: true });
        else if (VALID.has(key)) expect(check).toEqual({ ok: true, noop: false });
        else {
          expect(check.ok).toBe(false);
          expect(!check.ok && check.reason).toContain(`${from} → ${to} is not a valid transition`);
        }
        expect(isValidTransition(from, to)).toBe(VALID.has(key));
      });
    }
  }
});
