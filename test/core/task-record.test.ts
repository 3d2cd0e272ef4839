/**
 * The task record (src/core/task-record.ts): a dispatch makes a new attempt record and a revision a
 * new revision record, so nothing of an earlier attempt or head reaches the next one — not even the
 * facts about the old attempt that arrive after it was retried. And the rules read from the records
 * (src/core/task-rules.ts).
 */
import { describe, expect, it } from "vitest";
import { decide, startRun } from "../../src/core/decide/index.js";
import type { LeafInput } from "../../src/core/inputs.js";
import { journalSchema, type Journal } from "../../src/core/journal.js";
import { forgeConfigSchema, type ForgeConfig } from "../../src/core/schemas/config.js";
import {
  clearedForRefinery,
  heldForProtectedPaths,
  isPaused,
  pauseReasons,
  prHead,
  reviewSeen,
  schedulingHeld,
} from "../../src/core/task-rules.js";
import { newRun, nodes, sha } from "../helpers/world.js";

const cfg = (over: Record<string, unknown> = {}): ForgeConfig => forgeConfigSchema.parse(over);

function feed(j: Journal, inputs: LeafInput[], now: number, config: ForgeConfig) {
  const rejections: string[] = [];
  for (const input of inputs) {
    const d = decide(j, input, now, config);
    rejections.push(...d.rejections.map((r) => r.reason));
    j = d.journal;
  }
  expect(journalSchema.safeParse(j).success).toBe(true);
  return { journal: j, rejections };
}

const task = (j: Journal, id: string) => j.tasks.find((t) => t.id === id)!;

function finished(attempt: number, iteration = 0): LeafInput {
  const w = sha(`w/a/${attempt}/${iteration}`);
  return {
    kind: "agent.finished",
    taskId: "a",
    attempt,
    iteration,
    exitCode: 0,
    pushedSha: w,
    recordSha: sha(`r/a/${attempt}/${iteration}`),
    walkthrough: { status: "completed", confidence: 0.9, headSha: w, filesChanged: ["src/a.ts"], risks: [], followups: [] },
  };
}

describe("a new attempt, a new revision", () => {
  it("a retry ends the attempt: facts about it that come late reach nothing, and the next attempt starts empty", () => {
    const config = cfg({ retry_backoff: { base_seconds: 60, max_seconds: 60 } });
    let j = startRun(newRun(nodes({ a: [] })), 0, config).journal;
    j = feed(
      j,
      [
        { kind: "agent.started", taskId: "a", attempt: 1, workflowRunId: 70 },
        { kind: "agent.finished", taskId: "a", attempt: 1, exitCode: 1, error: "tests fail" },
      ],
      1000,
      config,
    ).journal;
    expect(task(j, "a")).toMatchObject({
      status: "PENDING",
      attempts: 1,
      retries: 1,
      lastError: "tests fail",
      next: { notBefore: expect.any(String) },
    });
    expect(task(j, "a").attempt).toBeUndefined();
    // What GitHub says of attempt 1 after its retry: its PR opened, its branch pushed, its dispatch answered.
    const late = feed(
      j,
      [
        { kind: "pr.opened", taskId: "a", attempt: 1, number: 9 },
        { kind: "branch.pushed", taskId: "a", attempt: 1, headSha: sha("late") },
        { kind: "effect.done", key: "dispatch:a:1", result: { workflowRunId: 71 } },
      ],
      2000,
      config,
    );
    expect(late.rejections.filter((r) => r.startsWith("attempt 1 is not the current attempt"))).toHaveLength(2);
    // The backoff over, attempt 2 is dispatched: a record with its branch and its first run, nothing more.
    const next = feed(late.journal, [{ kind: "tick" }], 200_000, config).journal;
    expect(task(next, "a")).toMatchObject({ status: "RUNNING", attempts: 2, retries: 1, lastError: "tests fail" });
    expect(task(next, "a").next).toBeUndefined();
    // Its own facts only: its branch, its agent (the task's, as each dispatch gives it) and its first revision.
    expect(task(next, "a").attempt).toEqual({
      branch: "forge/run-1/a/2",
      agent: "claude",
      revision: { iteration: 0, dispatchedAt: new Date(200_000).toISOString() },
    });
  });

  it("a revision is a new record: no verdict on the previous head carries over, the attempt's PR and counts do", () => {
    const config = cfg({ merge_policy: "review" });
    let j = startRun(newRun(nodes({ a: [] })), 0, config).journal;
    j = feed(
      j,
      [
        { kind: "agent.started", taskId: "a", attempt: 1, workflowRunId: 70 },
        { kind: "pr.opened", taskId: "a", attempt: 1, number: 5 },
        finished(1),
      ],
      1000,
      config,
    ).journal;
    const first = sha("r/a/1/0");
    j = feed(
      j,
      [
        { kind: "review.submitted", taskId: "a", attempt: 1, reviewId: 1, actor: "octocat", state: "approved", headSha: first },
        { kind: "effect.done", key: "merge:a:1", result: { held: [".github/forge.yml"] } },
      ],
      2000,
      config,
    ).journal;
    expect(task(j, "a").attempt!.revision).toMatchObject({
      reviewApprovedHead: first,
      protectedPaths: [".github/forge.yml"],
      workflowRunId: 70,
    });
    expect(heldForProtectedPaths(task(j, "a"))).toBe(true);
    const revising = feed(
      j,
      [
        {
          kind: "review.submitted",
          taskId: "a",
          attempt: 1,
          reviewId: 2,
          actor: "octocat",
          state: "changes_requested",
          headSha: first,
          body: "Rename it.",
        },
      ],
      3000,
      config,
    ).journal;
    const a = task(revising, "a").attempt!;
    expect(a.revision).toEqual({ iteration: 1, dispatchedAt: new Date(3000).toISOString(), priorRunId: 70 });
    expect(a).toMatchObject({ branch: "forge/run-1/a/1", prNumber: 5, recordSha: first, reviewIterations: 1, answered: [2], feedback: [] });
    // Until the revision's own record arrives, the PR's head is still the last record.
    expect(prHead(task(revising, "a"))).toBe(first);
    expect(heldForProtectedPaths(task(revising, "a"))).toBe(false);
    const done = feed(revising, [finished(1, 1)], 4000, config).journal;
    expect(task(done, "a")).toMatchObject({ status: "MERGE_READY" });
    expect(prHead(task(done, "a"))).toBe(sha("r/a/1/1"));
  });
});

describe("the rules read from the records", () => {
  const pause = { manual: false, changeRequests: [] as string[] };

  it("a run is paused while a usage limit lasts, and no longer once its time has passed", () => {
    const until = { ...pause, usageLimitUntil: new Date(10_000).toISOString() };
    expect(pauseReasons(until, 9_999)).toEqual(["usage_limit"]);
    expect(isPaused(until, 10_000)).toBe(false);
    expect(pauseReasons({ ...pause, manual: true, budget: true, changeRequests: ["cr-1"] }, 0)).toEqual([
      "change_requests",
      "manual",
      "budget",
    ]);
  });

  it("the scheduler runs under a budget pause (it lifts that one itself) and under no other", () => {
    expect(schedulingHeld({ ...pause, budget: true }, 0)).toBe(false);
    expect(isPaused({ ...pause, budget: true }, 0)).toBe(true);
    expect(schedulingHeld({ ...pause, manual: true }, 0)).toBe(true);
  });

  it("an upstream is cleared for its refinery at the head a person approved, or one read and found clean", () => {
    const base = { id: "u", status: "MERGE_READY" as const, blockers: 0, attempts: 1, retries: 0 };
    const revision = { iteration: 0, dispatchedAt: "2026-01-01T00:00:00Z", pushedSha: sha("w") };
    const at = (r: Record<string, unknown>) => ({
      ...base,
      attempt: { branch: "b", recordSha: sha("r"), revision: { ...revision, ...r } },
    });
    expect(clearedForRefinery(at({}))).toBe(false);
    expect(clearedForRefinery(at({ checkedHead: sha("r") }))).toBe(true);
    expect(clearedForRefinery(at({ checkedHead: sha("w") }))).toBe(false);
    expect(clearedForRefinery(at({ checkedHead: sha("r"), protectedPaths: [".github/x"] }))).toBe(false);
    expect(clearedForRefinery(at({ approvedHead: sha("r"), protectedPaths: [".github/x"] }))).toBe(true);
    expect(clearedForRefinery(base)).toBe(false);
  });

  it("a review is seen once answered or waiting in the feedback, by its id alone", () => {
    const a = { branch: "b", revision: { iteration: 1, dispatchedAt: "2026-01-01T00:00:00Z" } };
    expect(reviewSeen(a, 7)).toBe(false);
    expect(reviewSeen({ ...a, answered: [7] }, 7)).toBe(true);
    expect(reviewSeen({ ...a, answered: [8] }, 7)).toBe(false);
    expect(reviewSeen({ ...a, feedback: [{ source: "review", reviewId: 7, actor: "ann", headSha: sha("h") }] }, 7)).toBe(true);
    expect(reviewSeen({ ...a, feedback: [{ source: "command", actor: "ann", headSha: sha("h") }] }, 7)).toBe(false);
  });
});
