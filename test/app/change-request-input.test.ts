// The App's input for an escalation, from the runner's result.json (src/app/normalize.ts): the
// Change Request in the emitter's words, never the runner's error line.
import { describe, expect, it } from "vitest";
import { finishedInput } from "../../src/app/normalize.js";
import type { AgentResult } from "../../src/core/schemas/agent-result.js";

const ref = { runId: "run-1", taskId: "release", attempt: 1 };
const result: AgentResult = {
  version: 1,
  run_id: "run-1",
  task_id: "release",
  attempt: 1,
  exit_code: 11,
  branch: "forge/run-1/release/1",
  error: "single: merging wrap and template Spent $0.05 so far ESCALATE: the agent ended with FORGE_EXIT=11",
  change_request_path: ".forge/runs/run-1/release/1/change-request.md",
  started_at: "2026-11-22T09:00:00.000Z",
  finished_at: "2026-11-22T09:01:00.000Z",
};
const cr = {
  id: "cr-release-1",
  run_id: "run-1",
  title: "Add a task that writes the API reference before the release",
  emitted_by: "release",
  emitted_at: "2026-11-22T09:01:00.000Z",
  status: "pending" as const,
  reason: "The release needs an API reference and no task writes it",
  affected_tasks: ["release"],
  suggested_action: "AMEND" as const,
  priority: "HIGH" as const,
  suggested_changes: "Add a task docs.",
};

describe("an escalation's Change Request, as the App takes it", () => {
  it("is the emitter's: its title, reason, affected tasks, suggested action and priority", () => {
    const input = finishedInput(ref, { ok: true, result: { ...result, change_request: cr } }, "a".repeat(40), "b".repeat(40));
    expect(input).toMatchObject({
      kind: "agent.finished",
      exitCode: 11,
      changeRequest: {
        title: cr.title,
        reason: cr.reason,
        affectedTasks: ["release"],
        suggestedAction: "AMEND",
        priority: "HIGH",
        path: result.change_request_path,
      },
    });
  });

  it("without one (an older runner), the title is Forge's: no runner text, no spend, no exit code", () => {
    const input = finishedInput(ref, { ok: true, result }, "a".repeat(40), "b".repeat(40));
    if (input.kind !== "agent.finished") throw new Error(input.kind);
    expect(input.changeRequest!.title).toBe("release needs the plan amended");
    expect(input.changeRequest!.title).not.toMatch(/Spent|FORGE_EXIT|exit/);
  });
});
