import { describe, expect, it } from "vitest";
import { planCaptainDispatch } from "../../src/core/decide/plan-captain.js";
import { DISPATCH_LIMITS, dispatchInputsLength } from "../../src/core/dispatch-inputs.js";

describe("a plan Captain's dispatch (/forge plan)", () => {
  it("works on forge/_plan-<issue> with the core's input names and the issue as context", () => {
    const d = planCaptainDispatch({ issue: 9, title: "CSV export", body: "One toCsv(rows)." });
    expect(d.branch).toBe("forge/_plan-9");
    expect(d.inputs).toEqual({
      run_id: "_plan-9",
      task_id: "_captain-plan-9",
      attempt: "1",
      context: JSON.stringify({ issue: 9, title: "CSV export", body: "One toCsv(rows)." }),
    });
  });

  it("an issue body of any length is cut so the inputs stay within GitHub's limit", () => {
    const d = planCaptainDispatch({ issue: 9, title: "t".repeat(70_000), body: "\u{1F600}".repeat(200_000) });
    expect(dispatchInputsLength(d.inputs)).toBeLessThanOrEqual(DISPATCH_LIMITS.characters);
    expect(Object.keys(d.inputs).length).toBeLessThanOrEqual(DISPATCH_LIMITS.inputs);
  });
});
