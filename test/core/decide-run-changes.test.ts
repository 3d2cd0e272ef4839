// The decider when people and the plan change a run's course: a walkthrough's review, pause, resume
// and cancel, usage limits, Change Requests and plan edits (the rest: decide.test.ts).
import { describe, expect, it } from "vitest";
import { decide, startRun } from "../../src/core/decide/index.js";
import type { LeafInput } from "../../src/core/inputs.js";
import { newRun, sha } from "../helpers/world.js";
import { cfg, feed, merged, MIN, start, status, success, types } from "./decide-helpers.js";

describe("walkthrough review", () => {
  it("logs risks as warnings and flags a risk naming a file another in-flight task touches", () => {
    const d = start({ a: [], b: [] });
    let r = feed(d.journal, [success("b", 1, { files: ["src/api/routes.ts"] })], 1000, cfg({ merge_policy: "manual" }));
    r = feed(
      r.journal,
      [success("a", 1, { files: ["src/auth.ts"], risks: ["Middleware ordering may conflict with routes.ts"] })],
      1000,
      cfg({ merge_policy: "manual" }),
    );
    expect(r.events.find((e) => e.type === "review.risk")!.data).toMatchObject({ risk: "Middleware ordering may conflict with routes.ts" });
    expect(r.events.find((e) => e.type === "conflict.potential")!.data).toEqual({
      riskDescription: "Middleware ordering may conflict with routes.ts",
      relatedTasks: ["b"],
      files: ["src/api/routes.ts"],
    });
  });

  it("flags changed files that overlap another in-flight task's declared paths", () => {
    const run = newRun([
      { id: "a", kind: "task", agentType: "2", dependencies: [] },
      { id: "b", kind: "task", agentType: "2", dependencies: [], paths: ["src/db/**"] },
    ]);
    const d = startRun(run, 0, cfg());
    const r = feed(d.journal, [success("a", 1, { files: ["src/db/schema.ts", "README.md"] })]);
    expect(r.events.find((e) => e.type === "conflict.potential")!.data).toEqual({
      riskDescription: "changed files overlap with tasks in flight",
      relatedTasks: ["b"],
      files: ["src/db/schema.ts"],
    });
  });

  it("raises review.low_confidence below the threshold only", () => {
    const low = feed(start({ a: [] }).journal, [success("a", 1, { confidence: 0.59 })]);
    expect(low.events.find((e) => e.type === "review.low_confidence")!.data).toEqual({ confidence: 0.59, threshold: 0.6 });
    const ok = feed(start({ a: [] }).journal, [success("a", 1, { confidence: 0.6 })]);
    expect(types(ok.events)).not.toContain("review.low_confidence");
  });

  it("spawns a Type 1 follow-up for bug-like follow-ups and only logs the others", () => {
    const d = start({ a: [], b: ["a"] });
    const r = feed(d.journal, [
      success("a", 1, { followups: ["Fix the broken date parser", "Refactor shared validation", "Add a fixture"] }),
    ]);
    const spawned = r.events.filter((e) => e.type === "followup.spawned");
    expect(spawned.map((e) => (e.data as { reason: string }).reason)).toEqual(["Fix the broken date parser"]);
    expect(r.events.filter((e) => e.type === "followup.logged").map((e) => (e.data as { reason: string }).reason)).toEqual([
      "Refactor shared validation",
      "Add a fixture",
    ]);
    expect(r.effects.find((e) => e.kind === "SpawnFollowup")).toMatchObject({
      followupId: "_followup-1",
      branch: "forge/run-1/_followup-1/1",
    });
    // Follow-ups are outside the DAG: no node added.
    expect(r.journal.plan.nodes.map((n) => n.id)).toEqual(["a", "b"]);
  });

  it("spawns open-ended follow-ups when configured to", () => {
    const config = cfg({ followups: { spawn_open_ended: true } });
    const r = feed(start({ a: [] }, config).journal, [success("a", 1, { followups: ["Investigate caching"] })], 1000, config);
    expect(types(r.events)).toContain("followup.spawned");
  });
});

describe("pause, resume, cancel", () => {
  it("a paused run spawns nothing; in-flight work still completes; resume dispatches", () => {
    const d = start({ a: [], b: ["a"] });
    const r = feed(d.journal, [{ kind: "command", command: "pause", actor: "octocat" }, success("a"), merged("a")]);
    expect(status(r.journal, "a").status).toBe("MERGED");
    expect(r.effects.some((e) => e.kind === "DispatchAgent")).toBe(false);
    const r2 = feed(r.journal, [{ kind: "command", command: "resume", actor: "octocat" }]);
    expect(r2.effects.find((e) => e.kind === "DispatchAgent")).toMatchObject({ taskId: "b" });
  });

  it("a paused run still marks STALE", () => {
    const config = cfg();
    const d = start({ a: [] }, config);
    const j = decide(d.journal, { kind: "command", command: "pause", actor: "octocat" }, 0, config).journal;
    const r = decide(j, { kind: "tick" }, 20 * MIN, config);
    expect(r.transitions.map((t) => t.to)).toEqual(["STALE", "PENDING"]);
    expect(r.effects.some((e) => e.kind === "DispatchAgent")).toBe(false);
  });

  it("cancel stops the run and cancels running agents", () => {
    const d = start({ a: [], b: [] });
    const r = feed(d.journal, [{ kind: "command", command: "cancel", actor: "octocat" }]);
    expect(r.journal.status).toBe("cancelled");
    expect(r.effects.filter((e) => e.kind === "CancelAgent").map((e) => (e as { taskId: string }).taskId)).toEqual(["a", "b"]);
    const r2 = feed(r.journal, [{ kind: "agent.finished", taskId: "a", attempt: 1, exitCode: 1 }, { kind: "tick" }]);
    expect(r2.effects.some((e) => e.kind === "DispatchAgent")).toBe(false);
    expect(types(r2.events)).not.toContain("task.retried");
  });

  it("a model usage limit pauses dispatching until the reset and is not a failure", () => {
    const config = cfg({ max_parallel_agents: 1 });
    const d = start({ a: [], b: [] }, config);
    const until = new Date(30 * MIN).toISOString();
    const r = decide(d.journal, { kind: "agent.finished", taskId: "a", attempt: 1, exitCode: 1, rateLimitedUntil: until }, MIN, config);
    expect(r.events.find((e) => e.type === "run.paused")!.data).toEqual({ reason: "usage_limit", until });
    expect(status(r.journal, "a")).toMatchObject({ status: "PENDING", retries: 0, next: { notBefore: until } });
    expect(r.effects.some((e) => e.kind === "DispatchAgent")).toBe(false);
    expect(decide(r.journal, { kind: "tick" }, 29 * MIN, config).effects.some((e) => e.kind === "DispatchAgent")).toBe(false);
    const later = decide(r.journal, { kind: "tick" }, 30 * MIN, config);
    expect(types(later.events)).toContain("run.resumed");
    expect(later.effects.some((e) => e.kind === "DispatchAgent")).toBe(true);
  });
});

describe("usage limits across runs", () => {
  it("another run's usage limit pauses dispatching here until the reset, without failing anything", () => {
    const config = cfg({ max_parallel_agents: 1 });
    const d = start({ a: [], b: [] }, config);
    const until = new Date(30 * MIN).toISOString();
    const r = decide(d.journal, { kind: "usage.limited", until }, MIN, config);
    expect(r.events.map((e) => e.type)).toEqual(["run.paused"]);
    expect(r.transitions).toEqual([]);
    const afterA = decide(r.journal, success("a"), 2 * MIN, config);
    expect(afterA.effects.some((e) => e.kind === "DispatchAgent")).toBe(false);
    expect(decide(afterA.journal, { kind: "tick" }, 31 * MIN, config).effects.some((e) => e.kind === "DispatchAgent")).toBe(true);
  });
});

describe("Change Requests", () => {
  const escalation = (taskId: string): LeafInput => ({
    kind: "agent.finished",
    taskId,
    attempt: 1,
    exitCode: 11,
    changeRequest: {
      id: "cr-missing-auth",
      title: "Auth task missing",
      reason: "routes need auth",
      affectedTasks: [taskId],
      path: ".forge/runs/run-1/r1/1/cr.md",
    },
  });

  it("replan: opens the CR issue, pauses, dispatches the Captain; the overlay adds a task and resumes", () => {
    const d = start({ a: [], r1: ["a"], c: ["r1"] });
    let r = feed(d.journal, [success("a"), escalation("r1")]);
    expect(types(r.events)).toEqual(expect.arrayContaining(["cr.emitted", "run.paused"]));
    expect(r.effects.map((e) => e.kind)).toEqual(expect.arrayContaining(["OpenChangeRequest", "DispatchCaptain"]));
    expect(r.journal.pause.changeRequests).toEqual(["cr-missing-auth"]);
    r = feed(r.journal, [
      {
        kind: "overlay.applied",
        crId: "cr-missing-auth",
        overlayId: "overlay-001",
        planCommit: sha("p2"),
        nodes: [{ id: "auth", kind: "task", agentType: "2", dependencies: ["a"] }],
        edges: [{ from: "auth", to: "r1" }],
      },
    ]);
    expect(types(r.events)).toEqual(expect.arrayContaining(["cr.resolved", "task.retried", "run.resumed"]));
    expect(r.journal.plan.overlays).toEqual(["overlay-001"]);
    expect(status(r.journal, "r1")).toMatchObject({ status: "PENDING", blockers: 1 });
    // a is MERGE_READY (merged by its refinery), so auth may not start yet… a must be MERGED for a task.
    expect(status(r.journal, "auth")).toMatchObject({ status: "PENDING", blockers: 1 });
  });

  it("after an overlay gives a refinery-merged task a task downstream, that task is merged directly", () => {
    const d = start({ a: [], r1: ["a"] });
    let r = feed(d.journal, [success("a"), escalation("r1")]);
    expect(status(r.journal, "a").status).toBe("MERGE_READY");
    r = feed(r.journal, [
      {
        kind: "overlay.applied",
        crId: "cr-missing-auth",
        overlayId: "overlay-001",
        planCommit: sha("p2"),
        nodes: [{ id: "b", kind: "task", agentType: "2", dependencies: ["a"] }],
        edges: [{ from: "b", to: "r1" }],
      },
    ]);
    expect(r.effects.find((e) => e.kind === "MergePullRequest")).toMatchObject({ taskId: "a" });
    r = feed(r.journal, [merged("a"), success("b"), merged("b"), success("r1", 2), merged("r1", 2)]);
    expect(r.journal.status).toBe("completed");
  });

  it("keeps the emitter's title, reason, affected tasks, suggested action and priority; without them, a title of Forge's", () => {
    const d = start({ a: [], r1: ["a"] });
    const words = escalation("r1");
    if (words.kind !== "agent.finished") throw new Error("not a result");
    const r = feed(d.journal, [
      success("a"),
      {
        ...words,
        changeRequest: { ...words.changeRequest!, affectedTasks: ["r1", "a"], suggestedAction: "MANUAL_REVIEW", priority: "LOW" },
      },
    ]);
    expect(r.journal.changeRequests[0]).toMatchObject({
      title: "Auth task missing",
      reason: "routes need auth",
      affectedTasks: ["r1", "a"],
      suggestedAction: "MANUAL_REVIEW",
      priority: "LOW",
    });
    const bare = feed(d.journal, [
      success("a"),
      { kind: "agent.finished", taskId: "r1", attempt: 1, exitCode: 11, error: "Spent $0.05 so far" },
    ]);
    expect(bare.journal.changeRequests[0]).toMatchObject({ title: "r1 needs the plan amended", affectedTasks: ["r1"] });
    expect(bare.journal.changeRequests[0]!.suggestedAction).toBeUndefined();
  });

  it("review mode waits for /forge approve (then the Captain) or /forge reject (then the task retries)", () => {
    const config = cfg({ cr_mode: "review" });
    const d = start({ a: [], r1: ["a"] }, config);
    const r = feed(d.journal, [success("a"), escalation("r1")], 1000, config);
    expect(r.effects.some((e) => e.kind === "DispatchCaptain")).toBe(false);
    const approved = feed(r.journal, [{ kind: "command", command: "approve", actor: "octocat", crId: "cr-missing-auth" }], 1000, config);
    expect(approved.effects.find((e) => e.kind === "DispatchCaptain")).toMatchObject({ crId: "cr-missing-auth" });
    const rejected = feed(r.journal, [{ kind: "command", command: "reject", actor: "octocat", crId: "cr-missing-auth" }], 1000, config);
    expect(types(rejected.events)).toEqual(expect.arrayContaining(["cr.resolved", "run.resumed"]));
    expect(rejected.effects.find((e) => e.kind === "DispatchAgent")).toMatchObject({ taskId: "r1", attempt: 2 });
  });

  it("refuses an overlay that is not append-only or cyclic, leaving the journal as it was", () => {
    const d = start({ a: [], r1: ["a"] });
    const r = feed(d.journal, [success("a"), escalation("r1")]);
    const bad = (nodes: LeafInput & { kind: "overlay.applied" }) => feed(r.journal, [nodes]);
    const dup = bad({
      kind: "overlay.applied",
      crId: "cr-missing-auth",
      overlayId: "overlay-001",
      planCommit: "x",
      nodes: [{ id: "a", kind: "task", agentType: "1", dependencies: [] }],
      edges: [],
    });
    expect(dup.rejections[0]!.reason).toMatch(/task a already exists/);
    expect(dup.journal.plan).toBe(r.journal.plan);
    const cyc = bad({
      kind: "overlay.applied",
      crId: "cr-missing-auth",
      overlayId: "overlay-001",
      planCommit: "x",
      nodes: [{ id: "x", kind: "task", agentType: "1", dependencies: ["r1"] }],
      edges: [{ from: "x", to: "r1" }],
    });
    expect(cyc.rejections[0]!.reason).toMatch(/cycle/);
    const late = bad({
      kind: "overlay.applied",
      crId: "cr-missing-auth",
      overlayId: "overlay-001",
      planCommit: "x",
      nodes: [],
      edges: [{ from: "r1", to: "a" }],
    });
    expect(late.rejections[0]!.reason).toMatch(/a is already MERGE_READY/);
  });
});

describe("plan edits and effects", () => {
  it("an edit to the pinned plan during a run is only logged", () => {
    const d = start({ a: [] });
    const r = feed(d.journal, [{ kind: "plan.changed", commit: sha("edit") }]);
    expect(types(r.events)).toEqual(["plan.edit_ignored"]);
    expect(r.journal.plan).toBe(d.journal.plan);
  });

  it("acknowledged effects leave the outbox; a failed dispatch fails the attempt and retries", () => {
    const d = start({ a: [] });
    expect(d.journal.outbox.map((e) => e.key)).toEqual(["check:a:1", "branch:a:1", "dispatch:a:1", "tracker"]);
    const r = feed(d.journal, [
      { kind: "effect.done", key: "branch:a:1", result: {} },
      { kind: "effect.failed", key: "dispatch:a:1", error: "422 workflow not found" },
    ]);
    expect(r.journal.outbox.map((e) => e.key)).not.toContain("dispatch:a:1");
    expect(r.journal.outbox.map((e) => e.key)).not.toContain("branch:a:1");
    expect(r.events.find((e) => e.type === "task.failed")!.data).toMatchObject({
      error: "dispatching the agent failed: 422 workflow not found",
    });
  });
});
