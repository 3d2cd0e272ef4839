// An escalation through the job pipeline: the runner completes the agent's Change Request with
// the fields it owns and puts it in result.json (action/src/task/reports.ts), or fails the attempt
// with the problems of a document that is not one.
import { afterEach, describe, expect, it } from "vitest";
import { attemptDir } from "../../src/core/layout.js";
import { RUN } from "./world.js";
import { cleanupWorld, runJob, world_ } from "./main-job.js";

afterEach(cleanupWorld);

describe("main: a Change Request (exit 11)", () => {
  it("records a Change Request (exit 11) in the attempt folder, completed with the runner's fields, and puts it in result.json", async () => {
    const w = world_();
    const r = await runJob(
      w,
      [
        `cat > "$FORGE_CHANGE_REQUEST_FILE" <<'EOF'`,
        "---",
        "id: cr-mine",
        "emitted_by: someone-else",
        "title: Add the missing schema task",
        "reason: The task needs a schema no task writes.",
        "affected_tasks: [t1, t2]",
        "suggested_action: AMEND",
        "priority: HIGH",
        "suggested_changes: Add a task schema before t1.",
        "---",
        "## Description",
        "",
        "A task is missing.",
        "",
        "## Impact Assessment",
        "",
        "t1 waits.",
        "",
        "## Proposed Resolution",
        "",
        "Add it.",
        "EOF",
        "echo 'Spent $0.05 so far'",
        "exit 11",
      ].join("\n"),
    );
    if (r.kind !== "attempt") throw new Error("not an attempt");
    expect(r.exitCode).toBe(11);
    const rec = attemptDir(RUN, "t1", 1);
    expect(r.result.change_request_path).toBe(`${rec}/change-request.md`);
    // The agent's words; the id, the run, the emitter and the time are the runner's.
    expect(r.result.change_request).toMatchObject({
      id: "cr-t1-1",
      run_id: RUN,
      emitted_by: "t1",
      status: "pending",
      title: "Add the missing schema task",
      reason: "The task needs a schema no task writes.",
      affected_tasks: ["t1", "t2"],
      suggested_action: "AMEND",
      priority: "HIGH",
      suggested_changes: "Add a task schema before t1.",
    });
    const doc = w.show(r.headSha, `${rec}/change-request.md`);
    expect(doc).toContain("A task is missing.");
    expect(doc).toMatch(/^id: cr-t1-1$/m);
    expect(doc).toMatch(/^emitted_by: t1$/m);
    expect(doc).not.toContain("someone-else");
    expect(w.github.pulls[0]!.body).toContain("exit 11: escalated (Change Request)");
  });

  it("fails an escalation whose Change Request is not one, with its problems", async () => {
    const w = world_();
    const r = await runJob(
      w,
      `printf -- '---\\ntitle: "two\\\\nlines"\\nowner: me\\n---\\nNo sections.\\n' > "$FORGE_CHANGE_REQUEST_FILE"\nexit 11`,
    );
    if (r.kind !== "attempt") throw new Error("not an attempt");
    expect(r.exitCode).toBe(1);
    expect(r.result.change_request).toBeUndefined();
    expect(r.result.change_request_path).toBeUndefined();
    expect(r.result.error).toContain("the agent escalated (exit 11) without a valid Change Request: ");
    expect(r.result.error).toContain("change-request.md title — must be one line");
    expect(r.result.error).toContain("change-request.md reason — ");
    expect(r.result.error).toContain("change-request.md owner — unknown field");
    expect(r.result.error).toContain('change-request.md body — missing section "## Description"');
  });
});
