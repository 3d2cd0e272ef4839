/**
 * Which events the App handles when it is their sender: the jobs it dispatched and the merge
 * queue's later doings (guard.ts), and a pull request merged into the default branch in its name —
 * the final PR it set to auto-merge, whose issues close then — but not a task PR it merged into an
 * integration branch, nor its other own events.
 */
import { describe, expect, it } from "vitest";
import { handledWhenOwn } from "../../src/app/guard.js";

const closed = (base: string, merged: boolean) => ({
  action: "closed",
  pull_request: { merged, base: { ref: base } },
  repository: { default_branch: "main" },
});

describe("handledWhenOwn", () => {
  it("handles the App's own final PR merged into the default branch (auto-merge, the merge queue)", () => {
    expect(handledWhenOwn("pull_request", closed("main", true))).toBe(true);
  });

  it("leaves out a task PR merged into an integration branch, a PR closed unmerged, and other own events", () => {
    expect(handledWhenOwn("pull_request", closed("forge/r-1/_integration", true))).toBe(false);
    expect(handledWhenOwn("pull_request", closed("main", false))).toBe(false);
    expect(handledWhenOwn("pull_request", { action: "opened", repository: { default_branch: "main" } })).toBe(false);
    expect(handledWhenOwn("issue_comment", { action: "created" })).toBe(false);
  });

  it("handles the jobs' and the merge queue's events", () => {
    expect(handledWhenOwn("workflow_run", { action: "completed" })).toBe(true);
    expect(handledWhenOwn("merge_group", { action: "destroyed" })).toBe(true);
    expect(handledWhenOwn("pull_request", { action: "dequeued" })).toBe(true);
  });
});
