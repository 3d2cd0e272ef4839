import { describe, expect, it } from "vitest";
import { decide } from "../../src/core/decide/index.js";
import type { LeafInput } from "../../src/core/inputs.js";
import { forgeEventSchema } from "../../src/core/schemas/events.js";
import { journalSchema } from "../../src/core/journal.js";
import { sha } from "../helpers/world.js";
import { cfg, feed, merged, MIN, start, status, success, types } from "./decide-helpers.js";

describe("starting a run", () => {
  it("emits run.started and dispatches the roots, most downstream work first, capped by max_parallel_agents", () => {
    // b unblocks c and d; a unblocks nothing. With one slot, b goes first.
    const d = start({ a: [], b: [], c: ["b"], d: ["c"] }, cfg({ max_parallel_agents: 1 }));
    expect(types(d.events)).toEqual(["run.started", "task.scheduled", "task.started"]);
    expect(d.events[2]!.taskId).toBe("b");
    expect(d.effects.map((e) => e.key)).toEqual(["check:b:1", "branch:b:1", "dispatch:b:1", "tracker"]);
    expect(status(d.journal, "b")).toMatchObject({ status: "RUNNING", attempts: 1, attempt: { branch: "forge/run-1/b/1" } });
    expect(status(d.journal, "a").status).toBe("PENDING");
  });

  it("a merge that makes several tasks ready dispatches each of them in the same decision", () => {
    const d = start({ a: [], b: ["a"], c: ["a"], e: ["a"] });
    const r = feed(d.journal, [success("a"), merged("a")]);
    expect(r.journal.tasks.map((t) => [t.id, t.status])).toEqual([
      ["a", "MERGED"],
      ["b", "RUNNING"],
      ["c", "RUNNING"],
      ["e", "RUNNING"],
    ]);
  });

  it("numbers events gap-free from 1 and every event matches the catalog schema", () => {
    const d = start({ a: [], b: ["a"] });
    const next = feed(d.journal, [success("a"), merged("a")]);
    const all = [...d.events, ...next.events];
    expect(all.map((e) => e.seq)).toEqual(all.map((_, k) => k + 1));
    for (const e of all) expect(forgeEventSchema.safeParse(e).success, JSON.stringify(e)).toBe(true);
    expect(journalSchema.safeParse(next.journal).success).toBe(true);
  });

  it("does not change the journal it was given", () => {
    const d = start({ a: [], b: ["a"] });
    const before = JSON.stringify(d.journal);
    decide(d.journal, success("a"), 1000, cfg());
    expect(JSON.stringify(d.journal)).toBe(before);
  });
});

describe("state machine through inputs", () => {
  it("a merge refused for good is not dropped in silence: the task keeps MERGE_READY, the reason and a comment on its PR", () => {
    const d = start({ a: [], b: ["a"] });
    const ready = feed(d.journal, [success("a")]);
    expect(ready.journal.outbox.map((e) => e.key)).toContain("merge:a:1");
    const r = feed(ready.journal, [
      { kind: "effect.failed", key: "merge:a:1", error: "the head of forge/run-1/a/1 moved after it was verified" },
    ]);
    expect(status(r.journal, "a")).toMatchObject({
      status: "MERGE_READY",
      lastError: "merge refused: the head of forge/run-1/a/1 moved after it was verified",
    });
    const comment = r.journal.outbox.find((e) => e.key === "merge-refused:a:1");
    expect(comment).toMatchObject({ kind: "PostComment", target: { on: "task", taskId: "a", attempt: 1 } });
    expect((comment as { body: string }).body).toContain("moved after it was verified");
    // The person merges it: the run goes on.
    expect(status(feed(r.journal, [merged("a")]).journal, "b").status).toBe("RUNNING");
  });

  it("success: RUNNING → DONE → MERGE_READY → MERGED, then dependents start", () => {
    const d = start({ a: [], b: ["a"] });
    const r = feed(d.journal, [success("a"), merged("a")]);
    expect(r.transitions.map((t) => `${t.taskId}:${t.from}→${t.to}`)).toEqual([
      "a:RUNNING→DONE",
      "a:DONE→MERGE_READY",
      "a:MERGE_READY→MERGED",
      "b:PENDING→RUNNING",
    ]);
    expect(r.effects.some((e) => e.kind === "MergePullRequest" && e.taskId === "a")).toBe(true);
  });

  it("a repeated input is a no-op", () => {
    const d = start({ a: [], b: ["a"] });
    const once = feed(d.journal, [success("a"), merged("a")]);
    const twice = feed(once.journal, [success("a"), merged("a")]);
    expect(twice.transitions).toEqual([]);
    expect(twice.events).toEqual([]);
    expect(twice.journal.tasks).toEqual(once.journal.tasks);
  });

  it("rejects an invalid transition with a reason (merged PR for a PENDING task)", () => {
    const d = start({ a: [], b: ["a"] });
    const r = feed(d.journal, [merged("b", 1)]);
    expect(r.transitions).toEqual([]);
    expect(r.rejections[0]!.reason).toBe("attempt 1 is not the current attempt (none yet)");
    const r2 = feed(d.journal, [{ kind: "agent.finished", taskId: "a", attempt: 1, exitCode: 0 }, success("a")]);
    // The first result has no walkthrough: FAILED, then retried; the late success names an old attempt.
    expect(r2.transitions.map((t) => t.to)).toEqual(["FAILED", "PENDING"]);
  });

  it("MERGE_READY waits until the head read back from GitHub equals the walkthrough head_sha", () => {
    const d = start({ a: [] });
    const r = feed(d.journal, [success("a", 1, { pushed: sha("something else") })]);
    expect(status(r.journal, "a").status).toBe("DONE");
    const r2 = feed(r.journal, [{ kind: "branch.pushed", taskId: "a", attempt: 1, headSha: sha("a/1") }]);
    expect(status(r2.journal, "a").status).toBe("MERGE_READY");
  });

  it("a push that arrives before the result still opens the gate", () => {
    const d = start({ a: [] });
    const r = feed(d.journal, [{ kind: "branch.pushed", taskId: "a", attempt: 1, headSha: sha("a/1") }, success("a", 1, { pushed: null })]);
    expect(status(r.journal, "a").status).toBe("MERGE_READY");
  });

  it("a PR merged before the result arrives is merged once the gate opens", () => {
    const d = start({ a: [] });
    const r = feed(d.journal, [merged("a"), success("a")]);
    expect(status(r.journal, "a").status).toBe("MERGED");
    expect(r.journal.status).toBe("completed");
  });

  it("an empty diff is never success", () => {
    const d = start({ a: [] });
    const r = feed(d.journal, [success("a", 1, { files: [] })]);
    expect(r.events.find((e) => e.type === "task.failed")!.data).toMatchObject({ error: "the attempt changed no files", retryable: true });
  });
});

describe("exit codes", () => {
  const cases: { code: number; status: string; hold?: string; retried: boolean; event?: string }[] = [
    { code: 1, status: "PENDING", retried: true },
    { code: 2, status: "FAILED", hold: "fatal", retried: false },
    { code: 3, status: "FAILED", hold: "human", retried: false, event: "task.waiting" },
    { code: 10, status: "PENDING", retried: true },
    { code: 11, status: "FAILED", hold: "escalated", retried: false, event: "cr.emitted" },
    { code: 20, status: "FAILED", hold: "cancelled", retried: false },
    { code: 21, status: "PENDING", retried: true, event: "task.stale" },
    { code: 12, status: "MERGE_READY", retried: false },
  ];
  for (const c of cases) {
    it(`exit ${c.code} → ${c.status}${c.hold ? ` (${c.hold})` : ""}`, () => {
      const d = start({ a: [] });
      const input: LeafInput =
        c.code === 12
          ? { ...(success("a") as Extract<LeafInput, { kind: "agent.finished" }>), exitCode: 12 }
          : { kind: "agent.finished", taskId: "a", attempt: 1, exitCode: c.code, error: "boom", refinement: "do X", question: "Which?" };
      const r = feed(d.journal, [input]);
      const t = status(r.journal, "a");
      expect(t.status).toBe(c.status);
      expect(t.attempt?.hold).toBe(c.hold);
      expect(r.events.some((e) => e.type === "task.retried")).toBe(c.retried);
      if (c.event) expect(types(r.events)).toContain(c.event);
      if (c.code === 12) expect(t.walkthroughStatus).toBe("partial");
    });
  }

  it("exit 10 hands its refinement document to the next attempt", () => {
    const d = start({ a: [] });
    const failed = feed(
      d.journal,
      [{ kind: "agent.finished", taskId: "a", attempt: 1, exitCode: 10, refinement: "the tests fail: fix parse()" }],
      0,
    );
    const r = feed(failed.journal, [{ kind: "tick" }], 10 * MIN);
    const dispatch = r.effects.find((e) => e.kind === "DispatchAgent" && e.attempt === 2);
    expect(dispatch).toMatchObject({ context: { refinement: "the tests fail: fix parse()" } });
  });

  it("exit 3 posts the question and `/forge retry <answer>` resumes with it, not counted as a retry", () => {
    const d = start({ a: [] });
    const r = feed(d.journal, [{ kind: "agent.finished", taskId: "a", attempt: 1, exitCode: 3, question: "Which database?" }]);
    expect(r.effects.find((e) => e.kind === "PostComment")).toMatchObject({ body: expect.stringContaining("Which database?") });
    const r2 = feed(r.journal, [{ kind: "command", command: "retry", actor: "octocat", taskId: "a", message: "PostgreSQL" }]);
    expect(r2.effects.find((e) => e.kind === "DispatchAgent")).toMatchObject({ attempt: 2, context: { answer: "PostgreSQL" } });
    expect(status(r2.journal, "a").retries).toBe(0);
  });
});

describe("retries", () => {
  it("backs off exponentially with reproducible jitter, then exhausts after max_retries", () => {
    const config = cfg({ max_retries: 2, retry_backoff: { base_seconds: 10, max_seconds: 1000 } });
    let j = start({ a: [] }, config).journal;
    const delays: number[] = [];
    let now = 0;
    for (let attempt = 1; attempt <= 3; attempt++) {
      const r = decide(j, { kind: "agent.finished", taskId: "a", attempt, exitCode: 1 }, now, config);
      j = r.journal;
      const retried = r.events.find((e) => e.type === "task.retried");
      if (attempt <= 2) {
        const notBefore = Date.parse((retried!.data as { notBefore: string }).notBefore);
        delays.push(notBefore - now);
        // Not dispatched before the backoff ends…
        expect(decide(j, { kind: "tick" }, notBefore - 1, config).effects.some((e) => e.kind === "DispatchAgent")).toBe(false);
        // …and dispatched once it has.
        now = notBefore;
        const t = decide(j, { kind: "tick" }, now, config);
        expect(t.effects.find((e) => e.kind === "DispatchAgent")).toMatchObject({ attempt: attempt + 1 });
        j = t.journal;
      } else {
        expect(retried).toBeUndefined();
        expect(r.events.find((e) => e.type === "task.exhausted")!.data).toEqual({ attempts: 3, finalStatus: "FAILED" });
        expect(status(j, "a")).toMatchObject({ status: "FAILED", attempt: { hold: "exhausted" } });
        expect(r.effects.find((e) => e.kind === "UpsertCheckRun")).toMatchObject({ summary: "Failed; retries exhausted" });
      }
    }
    // base·2^retry + jitter(0, base): 10–20 s, then 20–30 s.
    expect(delays[0]).toBeGreaterThanOrEqual(10_000);
    expect(delays[0]).toBeLessThan(20_000);
    expect(delays[1]).toBeGreaterThanOrEqual(20_000);
    expect(delays[1]).toBeLessThan(30_000);
  });

  it("a person can retry an exhausted task", () => {
    const config = cfg({ max_retries: 0 });
    const d = start({ a: [] }, config);
    const r = feed(
      d.journal,
      [
        { kind: "agent.finished", taskId: "a", attempt: 1, exitCode: 1 },
        { kind: "command", command: "retry", actor: "octocat", taskId: "a" },
      ],
      0,
      config,
    );
    expect(r.effects.find((e) => e.kind === "DispatchAgent")).toMatchObject({ attempt: 2 });
  });

  it("refuses to retry a running or merged task, with a reason", () => {
    const d = start({ a: [] });
    const r = feed(d.journal, [{ kind: "command", command: "retry", actor: "octocat", taskId: "a" }]);
    expect(r.rejections[0]!.reason).toMatch(/a is RUNNING; only a FAILED or STALE task can be retried/);
  });
});

describe("liveness", () => {
  it("a dispatch whose job never starts goes STALE and is retried", () => {
    const config = cfg();
    const d = start({ a: [] }, config);
    const early = decide(d.journal, { kind: "tick" }, 14 * MIN, config);
    expect(early.transitions).toEqual([]);
    const late = decide(d.journal, { kind: "tick" }, 16 * MIN, config);
    expect(late.transitions.map((t) => t.to)).toEqual(["STALE", "PENDING"]);
    expect(late.effects.some((e) => e.kind === "CancelAgent")).toBe(true);
  });

  it("a started job with no sign of life goes STALE; heartbeats keep it alive", () => {
    const config = cfg();
    const d = start({ a: [] }, config);
    let j = decide(d.journal, { kind: "agent.started", taskId: "a", attempt: 1 }, 1 * MIN, config).journal;
    j = decide(j, { kind: "agent.heartbeat", taskId: "a", attempt: 1 }, 9 * MIN, config).journal;
    expect(decide(j, { kind: "tick" }, 18 * MIN, config).transitions).toEqual([]);
    expect(decide(j, { kind: "tick" }, 20 * MIN, config).transitions[0]).toMatchObject({ to: "STALE" });
  });

  it("an attempt's job, once known, is never re-pointed: another run's start is refused and is no sign of life", () => {
    const config = cfg();
    const d = start({ a: [] }, config);
    let j = decide(d.journal, { kind: "agent.started", taskId: "a", attempt: 1, workflowRunId: 11 }, 1 * MIN, config).journal;
    expect(j.tasks[0]!.attempt?.revision.workflowRunId).toBe(11);
    const other = decide(j, { kind: "agent.started", taskId: "a", attempt: 1, workflowRunId: 99 }, 9 * MIN, config);
    expect(other.rejections[0]?.reason).toMatch(/workflow run 99 is not the job of a \(run 11\)/);
    j = other.journal;
    expect(j.tasks[0]!.attempt?.revision.workflowRunId).toBe(11);
    expect(j.tasks[0]!.attempt?.revision.lastHeartbeat).toBe(new Date(1 * MIN).toISOString());
  });

  it("a job that ended without a result fails and is retried", () => {
    const d = start({ a: [] });
    const r = feed(d.journal, [{ kind: "agent.lost", taskId: "a", attempt: 1, reason: "job completed without a result" }]);
    expect(r.transitions.map((t) => t.to)).toEqual(["FAILED", "PENDING"]);
  });

  it("keeps the page of the job that ended without a result (its log) beside the error, and drops it with the next error", () => {
    const now = cfg({ retry_backoff: { base_seconds: 0, max_seconds: 0 } });
    const d = start({ a: [] }, now);
    const logUrl = "https://github.com/octo/app/actions/runs/11/job/12";
    const lost = feed(
      d.journal,
      [
        {
          kind: "agent.lost",
          taskId: "a",
          attempt: 1,
          workflowRunId: 11,
          reason: 'the job ended (failure) at the step "Run the Forge agent" without a result',
          logUrl,
        },
      ],
      1000,
      now,
    );
    expect(status(lost.journal, "a")).toMatchObject({ lastError: expect.stringContaining("Run the Forge agent"), lastErrorLog: logUrl });
    expect(journalSchema.safeParse(lost.journal).success).toBe(true);
    expect(status(lost.journal, "a")).toMatchObject({ status: "RUNNING", attempts: 2 });
    const again = feed(
      lost.journal,
      [{ kind: "agent.lost", taskId: "a", attempt: 2, reason: "the job ended (failure) without a result" }],
      1000,
      now,
    );
    expect(status(again.journal, "a").lastError).toBe("the job ended (failure) without a result");
    expect(status(again.journal, "a").lastErrorLog).toBeUndefined();
  });
});

describe("refineries (docs/executor.md#refineries)", () => {
  it("a task whose dependents are all refineries stays MERGE_READY; the refinery starts and merges it", () => {
    const d = start({ a: [], b: [], r1: ["a", "b"] });
    let r = feed(d.journal, [success("a"), success("b")]);
    expect(status(r.journal, "a").status).toBe("MERGE_READY");
    expect(r.effects.some((e) => e.kind === "MergePullRequest")).toBe(false);
    const prep = r.effects.find((e) => e.kind === "PrepareBranch" && e.taskId === "r1");
    expect(prep).toMatchObject({ merge: ["forge/run-1/a/1", "forge/run-1/b/1"] });
    expect(types(r.events)).toContain("refinery.started");
    r = feed(r.journal, [success("r1"), merged("r1")]);
    expect(r.journal.tasks.map((t) => t.status)).toEqual(["MERGED", "MERGED", "MERGED"]);
    expect(r.events.find((e) => e.type === "refinery.merged")!.data).toMatchObject({ mergedBranches: ["a", "b"] });
    expect(r.journal.status).toBe("completed");
    expect(r.effects.some((e) => e.kind === "OpenFinalPullRequest")).toBe(true);
  });

  it("a refinery whose upstream changes protected paths is neither prepared nor dispatched until a person approves that head", () => {
    const d = start({ a: [], b: [], r1: ["a", "b"] });
    let r = feed(d.journal, [success("a"), success("b")], 1000, cfg(), false);
    const checks = r.effects.filter((e) => e.kind === "CheckUpstream");
    expect(checks.map((e) => e.key).sort()).toEqual(["upstream:a:1", "upstream:b:1"]);
    expect(r.effects.some((e) => e.kind === "PrepareBranch" && e.taskId === "r1")).toBe(false);
    r = feed(r.journal, [
      { kind: "effect.done", key: "upstream:a:1", result: { held: ["CLAUDE.md", ".claude/settings.json"] } },
      { kind: "effect.done", key: "upstream:b:1", result: { clean: true } },
    ]);
    expect(status(r.journal, "a")).toMatchObject({
      status: "MERGE_READY",
      attempt: { revision: { protectedPaths: ["CLAUDE.md", ".claude/settings.json"] } },
    });
    expect(status(r.journal, "r1").status).toBe("PENDING");
    expect(r.effects.some((e) => e.kind === "PrepareBranch" || e.kind === "DispatchAgent")).toBe(false);
    const comment = r.effects.find((e) => e.kind === "PostComment" && e.key === "protected:a:1");
    expect(JSON.stringify(comment)).toContain("CLAUDE.md");
    // Not read again while it waits; a person's approval of the head lets the refinery start.
    r = feed(r.journal, [{ kind: "tick" }]);
    expect(r.effects.some((e) => e.kind === "CheckUpstream" || e.kind === "PrepareBranch")).toBe(false);
    r = feed(r.journal, [{ kind: "command", command: "approve", actor: "octocat", taskId: "a" }]);
    expect(r.effects.find((e) => e.kind === "PrepareBranch" && e.taskId === "r1")).toMatchObject({
      merge: ["forge/run-1/a/1", "forge/run-1/b/1"],
    });
    // An upstream whose PR could not be read is held too, never merged unread.
    const d2 = start({ a: [], r1: ["a"] });
    let r2 = feed(d2.journal, [success("a")], 1000, cfg(), false);
    r2 = feed(r2.journal, [{ kind: "effect.failed", key: "upstream:a:1", error: "pull request #1 is not forge/run-1/a/1 → x" }]);
    expect(status(r2.journal, "a").attempt?.revision.protectedPaths?.[0]).toMatch(/could not be read/);
    expect(r2.effects.some((e) => e.kind === "PrepareBranch")).toBe(false);
  });

  it("a refinery whose head lacks an upstream's work fails and is retried; the upstream is not marked MERGED", () => {
    const config = cfg({ retry_backoff: { base_seconds: 0, max_seconds: 0 } });
    const d = start({ a: [], b: [], r1: ["a", "b"] }, config);
    let r = feed(d.journal, [success("a"), success("b")], 1000, config);
    r = feed(r.journal, [{ ...success("r1"), uncontainedUpstreams: ["b"] } as LeafInput], 1000, config);
    const failed = r.events.find((e) => e.type === "task.failed");
    expect(failed).toMatchObject({
      taskId: "r1",
      data: { attemptId: 1, retryable: true, error: "r1's head does not contain b's work (branch forge/run-1/b/1)" },
    });
    expect(r.events.some((e) => e.type === "task.merge_ready" && e.taskId === "r1")).toBe(false);
    expect(r.effects.some((e) => e.kind === "MergePullRequest")).toBe(false);
    expect(r.journal.tasks.map((t) => `${t.id} ${t.status} #${t.attempts}`)).toEqual([
      "a MERGE_READY #1",
      "b MERGE_READY #1",
      "r1 RUNNING #2",
    ]);
    expect(status(r.journal, "r1")).toMatchObject({
      retries: 1,
      lastError: "r1's head does not contain b's work (branch forge/run-1/b/1)",
    });
    // The retried attempt merges both upstream branches again; its head contains them both.
    expect(r.effects.find((e) => e.kind === "PrepareBranch" && e.taskId === "r1")).toMatchObject({
      attempt: 2,
      merge: ["forge/run-1/a/1", "forge/run-1/b/1"],
    });
    r = feed(r.journal, [{ ...success("r1", 2), uncontainedUpstreams: [] } as LeafInput], 1000, config);
    expect(status(r.journal, "r1")).toMatchObject({ status: "MERGE_READY", attempt: { contained: ["a", "b"] } });
    r = feed(r.journal, [merged("r1", 2)], 1000, config);
    expect(r.journal.tasks.map((t) => t.status)).toEqual(["MERGED", "MERGED", "MERGED"]);
    expect(r.journal.status).toBe("completed");
    expect(journalSchema.safeParse(r.journal).success).toBe(true);
  });

  it("an unchecked refinery result (no containment facts) merges every MERGE_READY upstream, as before", () => {
    const d = start({ a: [], b: [], r1: ["a", "b"] });
    const r = feed(d.journal, [success("a"), success("b"), success("r1"), merged("r1")]);
    expect(status(r.journal, "r1").attempt?.contained).toBeUndefined();
    expect(r.journal.tasks.map((t) => t.status)).toEqual(["MERGED", "MERGED", "MERGED"]);
  });

  it("the conflicts found while preparing a refinery's branch are kept with its attempt, not handed to the next one", () => {
    const config = cfg({ retry_backoff: { base_seconds: 0, max_seconds: 0 } });
    const d = start({ a: [], b: [], r1: ["a", "b"] }, config);
    let r = feed(d.journal, [success("a"), success("b")], 1000, config);
    r = feed(r.journal, [{ kind: "effect.done", key: "branch:r1:1", result: { conflicts: ["forge/run-1/b/1"] } }], 1000, config);
    expect(status(r.journal, "r1").attempt?.conflicts).toEqual(["forge/run-1/b/1"]);
    expect(journalSchema.parse(r.journal).tasks[2]!.attempt?.conflicts).toEqual(["forge/run-1/b/1"]);
    // A clean preparation, or one of another attempt, records nothing.
    expect(
      status(
        feed(d.journal, [success("a"), success("b"), { kind: "effect.done", key: "branch:r1:1", result: { conflicts: [] } }], 1000, config)
          .journal,
        "r1",
      ).attempt?.conflicts,
    ).toBeUndefined();
    // The attempt fails: waiting for its retry, the task keeps no conflicts of the attempt that failed…
    const failed = feed(r.journal, [{ kind: "agent.finished", taskId: "r1", attempt: 1, exitCode: 1, error: "tests failed" }], 1000, cfg());
    expect(status(failed.journal, "r1")).toMatchObject({ status: "PENDING", attempts: 1 });
    expect(status(failed.journal, "r1").attempt).toBeUndefined();
    expect(status(failed.journal, "r1").next?.notBefore).toBeDefined();
    expect(status(failed.journal, "r1").next).not.toHaveProperty("conflicts");
    // …and a person's answer is handed on alone.
    const exhausted = feed(
      r.journal,
      [{ kind: "agent.finished", taskId: "r1", attempt: 1, exitCode: 3, question: "which side wins?" }],
      1000,
      config,
    );
    r = feed(exhausted.journal, [{ kind: "command", command: "retry", actor: "octocat", taskId: "r1", message: "b wins" }], 1000, config);
    expect(status(r.journal, "r1")).toMatchObject({ status: "RUNNING", attempts: 2 });
    expect(r.effects.find((e) => e.kind === "DispatchAgent" && e.taskId === "r1")).toEqual(
      expect.objectContaining({ attempt: 2, context: { answer: "b wins" } }),
    );
  });
});

describe("refineries: chains, direct merges, approval and merge policy", () => {
  it("a chain of refineries merges everything upstream when the last one merges", () => {
    const d = start({ a: [], r1: ["a"], r2: ["r1"] });
    let r = feed(d.journal, [success("a"), success("r1"), success("r2")]);
    expect(r.journal.tasks.map((t) => t.status)).toEqual(["MERGE_READY", "MERGE_READY", "MERGE_READY"]);
    r = feed(r.journal, [merged("r2")]);
    expect(r.journal.tasks.map((t) => t.status)).toEqual(["MERGED", "MERGED", "MERGED"]);
    expect(r.journal.status).toBe("completed");
  });

  it("a task with a non-refinery dependent is merged directly; the refinery may start at MERGE_READY", () => {
    const d = start({ a: [], b: ["a"], r1: ["a"] });
    const r = feed(d.journal, [success("a")]);
    expect(r.effects.some((e) => e.kind === "MergePullRequest" && e.taskId === "a")).toBe(true);
    expect(status(r.journal, "r1").status).toBe("RUNNING");
    expect(status(r.journal, "b").status).toBe("PENDING");
  });

  it("a chain without refineries does not deadlock", () => {
    const d = start({ a: [], b: ["a"], c: ["b"] });
    const r = feed(d.journal, [success("a"), merged("a"), success("b"), merged("b"), success("c"), merged("c")]);
    expect(r.journal.status).toBe("completed");
  });

  it("with refinery_approval the refinery waits for /forge approve", () => {
    const config = cfg({ refinery_approval: true });
    const d = start({ a: [], r1: ["a"] }, config);
    const r = feed(d.journal, [success("a"), success("r1")], 1000, config);
    expect(r.effects.some((e) => e.kind === "MergePullRequest" && e.taskId === "r1")).toBe(false);
    expect(r.effects.find((e) => e.kind === "PostComment")).toMatchObject({ body: expect.stringContaining("/forge approve") });
    const r2 = feed(r.journal, [{ kind: "command", command: "approve", actor: "octocat", taskId: "r1" }], 1000, config);
    expect(r2.effects.find((e) => e.kind === "MergePullRequest")).toMatchObject({ taskId: "r1" });
  });

  it("manual merge policy never merges by itself", () => {
    const config = cfg({ merge_policy: "manual" });
    const d = start({ a: [] }, config);
    const r = feed(d.journal, [success("a")], 1000, config);
    expect(r.effects.some((e) => e.kind === "MergePullRequest")).toBe(false);
  });
});
