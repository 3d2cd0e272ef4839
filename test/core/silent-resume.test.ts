/**
 * An attempt the App's clock finds silent (a `tick`, docs/executor.md#liveness-at-the-app) is resumed
 * from the checkpoint its branch head holds, which the App read before the tick and gives in the
 * tick's input — checked exactly as a lost job's: a refused one starts the retry fresh, saying why.
 * `checkpointReadsAt` names the attempts worth that read: the very ones the tick makes STALE for
 * silence whose retry may resume.
 */
import { describe, expect, it } from "vitest";
import { checkpointReadsAt, silenceOf } from "../../src/core/decide/liveness.js";
import type { LeafInput } from "../../src/core/inputs.js";
import type { Journal } from "../../src/core/journal.js";
import type { Checkpoint } from "../../src/core/schemas/checkpoint.js";
import { outboxProblems } from "../../src/core/outbox-check.js";
import { startRun } from "../../src/core/decide/index.js";
import { newRun, nodes, sha } from "../helpers/world.js";
import { cfg, feed, MIN, start, status, success } from "./decide-helpers.js";

const RUN = "run-1";
const branch = (attempt: number) => `forge/${RUN}/a/${attempt}`;
const work = sha("a/1 work after implement");
const cpCommit = sha("a/1 checkpoint after implement");
const SESSION = "5a1f3c2e-0000-4000-8000-000000000001";
const config = cfg({ retry_backoff: { base_seconds: 0, max_seconds: 0 } });
/** Past the liveness limit (10 min) after the job's start at 1000. */
const SILENT_AT = 1000 + 11 * MIN;

function checkpoint(over: Partial<Checkpoint> = {}): Checkpoint {
  return {
    checkpoint_version: 1,
    created_at: "2026-01-01T00:00:00.000Z",
    run_id: RUN,
    task_id: "a",
    attempt: 1,
    trace_id: "0123456789abcdef",
    completed_stages: [{ name: "implement", exit_code: 0 }],
    pending_stages: ["verify", "walkthrough"],
    depth_used: 1,
    depth_max: 3,
    agent_session: { adapter: "claude", id: SESSION, stage: "verify" },
    head_sha: work,
    ...over,
  };
}

/** Attempt 1 of `a` (and `b`, alongside) running: its job (workflow run 101) started at 1000 and its PR (#7) opened. */
function running(j0?: Journal): Journal {
  const j = j0 ?? start({ a: [], b: [] }, config).journal;
  return feed(
    j,
    [
      { kind: "agent.started", taskId: "a", attempt: 1, workflowRunId: 101 },
      { kind: "pr.opened", taskId: "a", attempt: 1, number: 7 },
      { kind: "agent.started", taskId: "b", attempt: 1, workflowRunId: 102 },
    ],
    1000,
    config,
  ).journal;
}

/** The tick the App gives once it read attempt 1's branch head: its checkpoint commit (or what `over` says instead). */
function tickWith(over: Record<string, unknown> = {}): LeafInput {
  return {
    kind: "tick",
    checkpoints: [{ taskId: "a", attempt: 1, checkpoint: checkpoint(), checkpointSha: cpCommit, pushedSha: work, ...over }],
  };
}

const retriedOf = (r: ReturnType<typeof feed>, id = "a") =>
  r.events.find((e) => e.type === "task.retried" && e.taskId === id)?.data as { branch: string; fresh?: string; resumes?: unknown };

describe("a silent attempt's retry and its branch checkpoint", () => {
  it("resumes from the checkpoint's first pending stage, on the same branch and PR, from the checkpoint commit, with the agent's session", () => {
    const r = feed(running(), [tickWith()], SILENT_AT, config);
    expect(r.events.find((e) => e.type === "task.stale" && e.taskId === "a")?.data).toMatchObject({ attempt: 1, threshold: 600 });
    expect(status(r.journal, "a")).toMatchObject({
      status: "RUNNING",
      attempts: 2,
      retries: 1,
      lastError: "no sign of life from the job",
      attempt: {
        branch: branch(1),
        prNumber: 7,
        resumed: { reason: "stale", fromAttempt: 1, head: cpCommit, stage: "verify", depthUsed: 1 },
        revision: { priorRunId: 101 },
      },
    });
    expect(retriedOf(r)).toMatchObject({ attemptId: 2, branch: branch(1), resumes: { fromAttempt: 1, stage: "verify" } });
    expect(retriedOf(r).fresh).toBeUndefined();
    // The silent job is cancelled; the next one runs on the branch as it is, told where to start.
    expect(r.effects.some((e) => e.kind === "CancelAgent" && e.key === "cancel:a:1")).toBe(true);
    expect(r.effects.filter((e) => e.kind === "PrepareBranch" && e.attempt === 2)).toEqual([]);
    const dispatch = r.effects.find((e) => e.kind === "DispatchAgent" && e.attempt === 2);
    expect(dispatch).toMatchObject({
      branch: branch(1),
      afterRunId: 101,
      context: {
        resume: {
          fromAttempt: 1,
          reason: "stale",
          head: cpCommit,
          stage: "verify",
          session: { adapter: "claude", id: SESSION, stage: "verify" },
          depthUsed: 1,
        },
      },
    });
    expect(r.effects.some((e) => e.kind === "PostComment" && e.key.startsWith("checkpoint-refused:"))).toBe(false);
    expect(outboxProblems(r.journal, config)).toEqual([]);
    // `b` was silent too, but nothing was read for it: it resumes from its branch head, every stage again.
    expect(status(r.journal, "b").attempt).toMatchObject({ branch: `forge/${RUN}/b/1`, resumed: { reason: "stale", fromAttempt: 1 } });
    expect(status(r.journal, "b").attempt?.resumed?.stage).toBeUndefined();
    expect(status(r.journal, "b").attempt?.resumed?.head).toBeUndefined();
  });

  it("a checkpoint that does not hold is refused whole: a fresh branch, the reason in task.retried and on the attempt's PR", () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ checkpoint: checkpoint({ head_sha: sha("forged") }) }, /its head [0-9a-f]{12} is not the attempt's pushed work/],
      [{ checkpoint: checkpoint({ attempt: 2 }) }, /it names run-1\/a\/2, not run-1\/a\/1/],
      [{ checkpoint: checkpoint({ pending_stages: ["verify", "merge"] }) }, /'merge' is not a stage of type 2/],
      [{ checkpoint: checkpoint({ depth_max: 9 }) }, /its depth budget 9 is over the config's 3/],
      [
        { checkpoint: undefined, checkpointProblem: "the checkpoint commit 0123456789ab holds a checkpoint.json that is not JSON" },
        /holds a checkpoint.json that is not JSON/,
      ],
    ];
    for (const [over, why] of cases) {
      const r = feed(running(), [tickWith(over)], SILENT_AT, config);
      const t = status(r.journal, "a");
      expect(t.attempt?.branch).toBe(branch(2));
      expect(t.attempt?.resumed).toBeUndefined();
      expect(r.effects.some((e) => e.kind === "PrepareBranch" && e.attempt === 2 && e.branch === branch(2))).toBe(true);
      expect(retriedOf(r).fresh).toMatch(/^its checkpoint was refused: /);
      expect(retriedOf(r).fresh).toMatch(why);
      const comment = r.effects.find((e) => e.kind === "PostComment" && e.key === "checkpoint-refused:a:1");
      expect(comment).toMatchObject({ target: { on: "task", taskId: "a", attempt: 1 } });
      expect(comment?.kind === "PostComment" && comment.body).toMatch(why);
      expect(outboxProblems(r.journal, config)).toEqual([]);
    }
  });

  it("what was read for another attempt, or for an attempt still alive, is not used", () => {
    // Read for attempt 2 (not the current one): attempt 1 resumes from its branch head only.
    const other = feed(
      running(),
      [{ kind: "tick", checkpoints: [{ taskId: "a", attempt: 2, checkpoint: checkpoint({ attempt: 2 }) }] }],
      SILENT_AT,
      config,
    );
    expect(status(other.journal, "a").attempt).toMatchObject({ branch: branch(1), resumed: { reason: "stale", fromAttempt: 1 } });
    expect(status(other.journal, "a").attempt?.resumed?.stage).toBeUndefined();
    // A tick before the limit: nothing goes STALE, whatever the input carries.
    const early = feed(running(), [tickWith()], 1000 + 9 * MIN, config);
    expect(early.events.some((e) => e.type === "task.stale")).toBe(false);
    expect(status(early.journal, "a")).toMatchObject({ status: "RUNNING", attempts: 1 });
  });

  it("a job that never started goes STALE fresh, a checkpoint or not: nothing of it ran to be continued", () => {
    const j = start({ a: [] }, config).journal;
    const r = feed(
      j,
      [{ kind: "tick", checkpoints: [{ taskId: "a", attempt: 1, checkpoint: checkpoint(), checkpointSha: cpCommit, pushedSha: work }] }],
      16 * MIN,
      config,
    );
    expect(r.events.find((e) => e.type === "task.stale")).toBeDefined();
    expect(status(r.journal, "a").lastError).toBe("the dispatched job never started");
    expect(retriedOf(r)).toMatchObject({ branch: branch(2), fresh: "its job never ran" });
  });
});

describe("checkpointReadsAt: the attempts worth a read before a tick", () => {
  it("names exactly the started attempts the tick at that time makes STALE for silence, with their branches", () => {
    const j = running();
    expect(checkpointReadsAt(j, config, 1000 + 10 * MIN)).toEqual([]);
    expect(checkpointReadsAt(j, config, SILENT_AT)).toEqual([
      { taskId: "a", attempt: 1, branch: branch(1) },
      { taskId: "b", attempt: 1, branch: `forge/${RUN}/b/1` },
    ]);
    // The same predicate as the tick's, at every time around the limits.
    for (const now of [1000, 1000 + 10 * MIN, 1000 + 10 * MIN + 1, SILENT_AT, 16 * MIN, 60 * MIN]) {
      const staled = feed(j, [{ kind: "tick" }], now, config)
        .events.filter((e) => e.type === "task.stale")
        .map((e) => e.taskId);
      const silent = j.tasks.filter((t) => silenceOf(t, config, now) === "silent").map((t) => t.id);
      expect(staled, `at ${now}`).toEqual(silent);
      expect(checkpointReadsAt(j, config, now).map((a) => a.taskId)).toEqual(silent);
    }
    // A sign of life puts it off.
    const alive = feed(j, [{ kind: "agent.heartbeat", taskId: "a", attempt: 1 }], 5 * MIN, config).journal;
    expect(checkpointReadsAt(alive, config, SILENT_AT).map((a) => a.taskId)).toEqual(["b"]);
  });

  it("leaves out what the tick would retry fresh anyway: a job never started, a stall the policy retries fresh, a refinery, a revision, a run not running", () => {
    // Dispatched, never started.
    expect(checkpointReadsAt(start({ a: [] }, config).journal, config, 60 * MIN)).toEqual([]);
    // The config's policy, then the task's own.
    const fresh = cfg({ retry_backoff: { base_seconds: 0, max_seconds: 0 }, retry_policy: { stale: "fresh" } });
    expect(checkpointReadsAt(running(start({ a: [], b: [] }, fresh).journal), fresh, SILENT_AT)).toEqual([]);
    const own = startRun(newRun([{ ...nodes({ a: [] })[0]!, retryPolicy: { stale: "fresh" } }, nodes({ b: [] })[0]!]), 0, config).journal;
    expect(checkpointReadsAt(running(own), config, SILENT_AT).map((a) => a.taskId)).toEqual(["b"]);
    // A refinery's attempt.
    let r = feed(start({ a: [], r: ["a"] }, config).journal, [success("a"), { kind: "tick" }], 1000, config).journal;
    r = feed(r, [{ kind: "agent.started", taskId: "r", attempt: 1, workflowRunId: 9 }], 1100, config).journal;
    expect(status(r, "r").status).toBe("RUNNING");
    expect(checkpointReadsAt(r, config, 1100 + 11 * MIN)).toEqual([]);
    // A revision of the attempt (a review asked for changes), whose job started and went silent.
    const rc = cfg({ merge_policy: "review", retry_backoff: { base_seconds: 0, max_seconds: 0 } });
    const record = sha("a/1 record");
    const done: LeafInput = { ...success("a"), recordSha: record } as LeafInput;
    let rv = feed(
      start({ a: [] }, rc).journal,
      [{ kind: "agent.started", taskId: "a", attempt: 1, workflowRunId: 101 }, done],
      1000,
      rc,
    ).journal;
    rv = feed(
      rv,
      [
        {
          kind: "review.submitted",
          taskId: "a",
          attempt: 1,
          reviewId: 7,
          actor: "octocat",
          state: "changes_requested",
          headSha: record,
          body: "Rename foo.",
        },
      ],
      1000,
      rc,
    ).journal;
    rv = feed(rv, [{ kind: "agent.started", taskId: "a", attempt: 1, iteration: 1, workflowRunId: 202 }], 1100, rc).journal;
    expect(status(rv, "a")).toMatchObject({ status: "RUNNING", attempt: { revision: { iteration: 1, startedAt: expect.any(String) } } });
    expect(silenceOf(status(rv, "a"), rc, 1100 + 11 * MIN)).toBe("silent");
    expect(checkpointReadsAt(rv, rc, 1100 + 11 * MIN)).toEqual([]);
    // A run cancelled.
    const cancelled = feed(running(), [{ kind: "command", command: "cancel", actor: "octocat" }], 2000, config).journal;
    expect(checkpointReadsAt(cancelled, config, SILENT_AT)).toEqual([]);
  });
});
