/**
 * Resuming (docs/executor.md#resuming): a retry after a stall, a lost job, a usage limit or a budget
 * stop continues the attempt's work on its branch and PR, from the first stage its checkpoint left
 * pending; a failure of the work starts fresh; the retry policy says which, per exit class and per
 * task; a checkpoint that does not hold is refused and the retry starts fresh.
 */
import { describe, expect, it } from "vitest";
import type { LeafInput } from "../../src/core/inputs.js";
import type { Journal } from "../../src/core/journal.js";
import type { Checkpoint } from "../../src/core/schemas/checkpoint.js";
import { outboxProblems } from "../../src/core/outbox-check.js";
import { attemptOnBranch } from "../../src/core/task-rules.js";
import { startRun } from "../../src/core/decide/index.js";
import { newRun, nodes, sha } from "../helpers/world.js";
import { cfg, feed, start, status, success } from "./decide-helpers.js";

const RUN = "run-1";
const branch = (attempt: number) => `forge/${RUN}/a/${attempt}`;
const work = sha("a/1 work");
const record = sha("a/1 record");

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
    agent_session: { adapter: "claude", id: "5a1f3c2e-0000-4000-8000-000000000001", stage: "verify" },
    head_sha: work,
    ...over,
  };
}

/** Attempt 1 of `a` running: its job (workflow run 101) started and its PR (#7) opened. */
function running(config = cfg({ retry_backoff: { base_seconds: 0, max_seconds: 0 } }), j0?: Journal): Journal {
  const j = j0 ?? start({ a: [] }, config).journal;
  return feed(
    j,
    [
      { kind: "agent.started", taskId: "a", attempt: 1, workflowRunId: 101 },
      { kind: "pr.opened", taskId: "a", attempt: 1, number: 7 },
    ],
    1000,
    config,
  ).journal;
}

/** Attempt 1's result: exit `code` with its record commit, its pushed work and `extra`. */
function ended(code: number, extra: Partial<Extract<LeafInput, { kind: "agent.finished" }>> = {}): LeafInput {
  return { kind: "agent.finished", taskId: "a", attempt: 1, exitCode: code, recordSha: record, pushedSha: work, ...extra };
}

/** Feeds `inputs` after attempt 1 ran, then a tick that dispatches attempt 2. */
function afterwards(inputs: LeafInput[], config = cfg({ retry_backoff: { base_seconds: 0, max_seconds: 0 } }), j0?: Journal) {
  return feed(running(config, j0), [...inputs, { kind: "tick" }], 2000, config);
}

describe("a retry that resumes", () => {
  it("after a stall (exit 21) with a checkpoint: attempt 2 continues on attempt 1's branch and PR, from the first pending stage, with its session", () => {
    const r = afterwards([ended(21, { error: "stalled", checkpoint: checkpoint() })]);
    const t = status(r.journal, "a");
    expect(t).toMatchObject({ status: "RUNNING", attempts: 2, retries: 1 });
    expect(t.attempt).toMatchObject({
      branch: branch(1),
      prNumber: 7,
      resumed: { reason: "stale", fromAttempt: 1, head: record, stage: "verify", depthUsed: 1 },
      revision: { iteration: 0, priorRunId: 101 },
    });
    const retried = r.events.find((e) => e.type === "task.retried")!;
    expect(retried.data).toMatchObject({ attemptId: 2, branch: branch(1), resumes: { fromAttempt: 1, stage: "verify" } });
    expect(r.events.find((e) => e.type === "task.started" && (e.data as { attempt: number }).attempt === 2)?.data).toMatchObject({
      branch: branch(1),
      resumes: { fromAttempt: 1, stage: "verify" },
    });
    // No new branch is cut: the dispatch runs on the branch as attempt 1 left it.
    expect(r.effects.filter((e) => e.kind === "PrepareBranch" && e.attempt === 2)).toEqual([]);
    const dispatch = r.effects.find((e) => e.kind === "DispatchAgent" && e.attempt === 2);
    expect(dispatch).toMatchObject({
      key: "dispatch:a:2",
      branch: branch(1),
      afterRunId: 101,
      context: {
        resume: {
          fromAttempt: 1,
          reason: "stale",
          head: record,
          stage: "verify",
          session: { adapter: "claude", id: "5a1f3c2e-0000-4000-8000-000000000001", stage: "verify" },
          depthUsed: 1,
        },
      },
    });
    // The App's own check of its outbox takes a dispatch on an earlier attempt's branch.
    expect(outboxProblems(r.journal, cfg())).toEqual([]);
  });

  it("after a lost runner, a lost job and a silent job: it continues on the branch from its head, from the first stage", () => {
    for (const input of [
      { kind: "agent.lost", taskId: "a", attempt: 1, workflowRunId: 101, reason: "runner gone", runnerLost: true },
      { kind: "agent.lost", taskId: "a", attempt: 1, workflowRunId: 101, reason: "the job ended without a result" },
    ] as LeafInput[]) {
      const t = status(afterwards([input]).journal, "a");
      expect(t.attempt).toMatchObject({ branch: branch(1), prNumber: 7, resumed: { reason: "lost", fromAttempt: 1 } });
      expect(t.attempt?.resumed?.stage).toBeUndefined();
    }
    // No sign of life for the liveness limit: STALE at the App, resumed.
    const config = cfg({ retry_backoff: { base_seconds: 0, max_seconds: 0 } });
    const silent = feed(running(config), [{ kind: "tick" }, { kind: "tick" }], 1000 + 11 * 60_000, config);
    expect(silent.events.some((e) => e.type === "task.stale")).toBe(true);
    expect(status(silent.journal, "a").attempt).toMatchObject({ branch: branch(1), resumed: { reason: "stale", fromAttempt: 1 } });
  });

  it("after a runner that died between stages: from the checkpoint commit its last progress push left, checked as result.json's", () => {
    const cpCommit = sha("a/1 checkpoint after implement");
    for (const runnerLost of [true, false]) {
      const lost: LeafInput = {
        kind: "agent.lost",
        taskId: "a",
        attempt: 1,
        workflowRunId: 101,
        reason: "runner gone",
        runnerLost,
        checkpoint: checkpoint(),
        checkpointSha: cpCommit,
        pushedSha: work,
      };
      const r = afterwards([lost]);
      expect(status(r.journal, "a").attempt).toMatchObject({
        branch: branch(1),
        prNumber: 7,
        resumed: { reason: "lost", fromAttempt: 1, head: cpCommit, stage: "verify", depthUsed: 1 },
      });
      const d = r.effects.find((e) => e.kind === "DispatchAgent" && e.attempt === 2);
      expect(d?.kind === "DispatchAgent" && d.context?.resume).toMatchObject({
        head: cpCommit,
        stage: "verify",
        session: { adapter: "claude", id: "5a1f3c2e-0000-4000-8000-000000000001", stage: "verify" },
      });
      expect(r.effects.some((e) => e.kind === "PostComment" && e.key.startsWith("checkpoint-refused:"))).toBe(false);
    }
  });

  it("after a usage limit and after a budget stop (once /forge budget raises it): on the same branch and PR", () => {
    const limited = feed(running(), [ended(1, { rateLimitedUntil: new Date(5000).toISOString(), checkpoint: checkpoint() })], 2000);
    expect(status(limited.journal, "a").next?.resume).toMatchObject({ reason: "usage_limit", branch: branch(1), stage: "verify" });
    const later = feed(limited.journal, [{ kind: "tick" }], 6000);
    expect(status(later.journal, "a").attempt).toMatchObject({ branch: branch(1), resumed: { reason: "usage_limit" } });

    const stopped = feed(running(), [ended(20, { budgetExceeded: { limitUsd: 1, spentUsd: 1.4 }, checkpoint: checkpoint() })], 2000);
    expect(status(stopped.journal, "a").attempt?.hold).toBe("budget");
    const raised = feed(
      stopped.journal,
      [{ kind: "command", command: "budget", actor: "octocat", taskId: "a", amountUsd: 1 }, { kind: "tick" }],
      3000,
    );
    expect(status(raised.journal, "a").attempt).toMatchObject({
      branch: branch(1),
      prNumber: 7,
      resumed: { reason: "budget", stage: "verify" },
    });
  });

  it("a resumed attempt that stalls again resumes again, on the same branch, after its own job", () => {
    const config = cfg({ retry_backoff: { base_seconds: 0, max_seconds: 0 } });
    const first = afterwards([ended(21, { checkpoint: checkpoint() })], config);
    const again = feed(
      first.journal,
      [
        { kind: "agent.started", taskId: "a", attempt: 2, workflowRunId: 202 },
        { kind: "agent.finished", taskId: "a", attempt: 2, exitCode: 21, recordSha: sha("a/2 record"), pushedSha: sha("a/2 work") },
        { kind: "tick" },
      ],
      3000,
      config,
    );
    expect(status(again.journal, "a").attempt).toMatchObject({
      branch: branch(1),
      prNumber: 7,
      resumed: { fromAttempt: 2, head: sha("a/2 record") },
      revision: { priorRunId: 202 },
    });
  });

  it("facts about the shared branch are the resumed attempt's; attempt 1's own job is told apart by its run", () => {
    const r = afterwards([ended(21, { checkpoint: checkpoint() })]);
    // The branch names attempt 1; the task's current attempt works on it.
    expect(attemptOnBranch(r.journal, { runId: RUN, taskId: "a", attempt: 1 }, branch(1))).toMatchObject({ attempt: 2 });
    expect(attemptOnBranch(r.journal, { runId: RUN, taskId: "a", attempt: 1 }, branch(2))).toMatchObject({ attempt: 1 });
    // Attempt 1's job, ending late, is no fact about attempt 2.
    const late = feed(
      r.journal,
      [{ kind: "agent.lost", taskId: "a", attempt: 2, workflowRunId: 101, reason: "late", runnerLost: true }],
      3000,
    );
    expect(late.rejections.map((x) => x.reason)).toContain("workflow run 101 is an earlier revision's job");
    expect(status(late.journal, "a").status).toBe("RUNNING");
    // Its own result completes it on the PR attempt 1 opened.
    const result = success("a", 2);
    const done = feed(r.journal, [result.kind === "agent.finished" ? { ...result, recordSha: sha("a/2 record") } : result], 3000);
    expect(status(done.journal, "a")).toMatchObject({ status: "MERGE_READY", attempt: { branch: branch(1), prNumber: 7 } });
  });
});

describe("a retry that starts fresh", () => {
  const freshOf = (r: ReturnType<typeof afterwards>) => ({
    attempt: status(r.journal, "a").attempt,
    fresh: (r.events.find((e) => e.type === "task.retried")?.data as { fresh?: string }).fresh,
    prepared: r.effects.some((e) => e.kind === "PrepareBranch" && e.attempt === 2 && e.branch === branch(2)),
  });

  it("after a failure of the work (exit 1) and a refinement (exit 10), by default: a new branch, no session", () => {
    for (const input of [
      ended(1, { error: "tests red", checkpoint: checkpoint() }),
      ended(10, { refinement: "do X", checkpoint: checkpoint() }),
    ]) {
      const f = freshOf(afterwards([input]));
      expect(f.attempt?.branch).toBe(branch(2));
      expect(f.attempt?.resumed).toBeUndefined();
      expect(f.prepared).toBe(true);
      expect(f.fresh).toBeUndefined();
    }
  });

  it("per exit class as the config says, and per task as its front matter says", () => {
    const stale = cfg({ retry_backoff: { base_seconds: 0, max_seconds: 0 }, retry_policy: { stale: "fresh" } });
    expect(freshOf(afterwards([ended(21, { checkpoint: checkpoint() })], stale)).attempt?.branch).toBe(branch(2));
    const failure = cfg({ retry_backoff: { base_seconds: 0, max_seconds: 0 }, retry_policy: { failure: "resume" } });
    expect(status(afterwards([ended(1, { checkpoint: checkpoint() })], failure).journal, "a").attempt).toMatchObject({
      branch: branch(1),
      resumed: { reason: "failure", stage: "verify" },
    });
    // The task's own policy wins over the config's.
    const config = cfg({ retry_backoff: { base_seconds: 0, max_seconds: 0 } });
    const own = startRun(newRun([{ ...nodes({ a: [] })[0]!, retryPolicy: { stale: "fresh", failure: "resume" } }]), 0, config).journal;
    expect(freshOf(afterwards([ended(21, { checkpoint: checkpoint() })], config, own)).attempt?.branch).toBe(branch(2));
    expect(status(afterwards([ended(1, { checkpoint: checkpoint() })], config, own).journal, "a").attempt?.branch).toBe(branch(1));
  });

  it("a forged or invalid checkpoint is refused whole: a new branch, and the retry says why", () => {
    const cases: Array<[Partial<Checkpoint>, RegExp]> = [
      [{ head_sha: sha("elsewhere") }, /its head [0-9a-f]{12} is not the attempt's pushed work/],
      [{ attempt: 2 }, /it names run-1\/a\/2, not run-1\/a\/1/],
      [{ task_id: "b" }, /it names run-1\/b\/1/],
      [{ pending_stages: ["merge"] }, /'merge' is not a stage of type 2/],
      [{ pending_stages: ["implement", "walkthrough"] }, /it names a stage twice/],
      [{ depth_max: 9, depth_used: 2 }, /its depth budget 9 is over the config's 3/],
      [{ depth_used: 3, depth_max: 2 }, /its depth 3 is over its budget 2/],
      [{ agent_session: { adapter: "claude", id: "x1", stage: "fix" } }, /'fix', a stage it does not name/],
    ];
    for (const [over, why] of cases) {
      const f = freshOf(afterwards([ended(21, { checkpoint: checkpoint(over) })]));
      expect(f.attempt?.branch).toBe(branch(2));
      expect(f.attempt?.resumed).toBeUndefined();
      expect(f.prepared).toBe(true);
      expect(f.fresh).toMatch(/^its checkpoint was refused: /);
      expect(f.fresh).toMatch(why);
    }
    // A result whose checkpoint is not one at all (the App could not parse it).
    const f = freshOf(afterwards([ended(21, { checkpointProblem: "checkpoint.head_sha: Invalid string" })]));
    expect(f.attempt?.branch).toBe(branch(2));
    expect(f.fresh).toBe("its checkpoint was refused: checkpoint.head_sha: Invalid string");
    // No pushed work named by GitHub: nothing the checkpoint can be checked against.
    expect(freshOf(afterwards([ended(21, { checkpoint: checkpoint(), pushedSha: undefined })])).fresh).toMatch(/pushed work is unknown/);
  });

  it("a lost runner's checkpoint that does not hold starts the retry fresh, said on the attempt's PR", () => {
    const lost = (extra: Partial<Extract<LeafInput, { kind: "agent.lost" }>>): LeafInput => ({
      kind: "agent.lost",
      taskId: "a",
      attempt: 1,
      workflowRunId: 101,
      reason: "runner gone",
      runnerLost: true,
      checkpointSha: sha("a/1 checkpoint"),
      pushedSha: work,
      ...extra,
    });
    const cases: Array<[LeafInput, RegExp]> = [
      [lost({ checkpointProblem: "the checkpoint commit 0123456789ab holds a checkpoint.json that is not JSON" }), /that is not JSON$/],
      [lost({ checkpoint: checkpoint({ head_sha: sha("forged") }) }), /its head [0-9a-f]{12} is not the attempt's pushed work/],
      [lost({ checkpoint: checkpoint({ pending_stages: ["verify", "merge"] }) }), /'merge' is not a stage of type 2/],
    ];
    for (const [input, why] of cases) {
      const r = afterwards([input]);
      const f = freshOf(r);
      expect(f.attempt?.branch).toBe(branch(2));
      expect(f.attempt?.resumed).toBeUndefined();
      expect(f.fresh).toMatch(/^its checkpoint was refused: /);
      expect(f.fresh).toMatch(why);
      const comment = r.effects.find((e) => e.kind === "PostComment" && e.key === "checkpoint-refused:a:1");
      expect(comment).toMatchObject({ target: { on: "task", taskId: "a", attempt: 1 } });
      expect(comment?.kind === "PostComment" && comment.body).toMatch(
        /^Forge did not resume `a` from the checkpoint attempt 1 left, which it refused: /,
      );
      expect(outboxProblems(r.journal, cfg())).toEqual([]);
    }
  });

  it("a session of another adapter is not resumed, but the stages are", () => {
    const r = afterwards([ended(21, { checkpoint: checkpoint({ agent_session: { adapter: "codex", id: "t-1", stage: "verify" } }) })]);
    const d = r.effects.find((e) => e.kind === "DispatchAgent" && e.attempt === 2);
    expect(d?.kind === "DispatchAgent" && d.context?.resume).toMatchObject({ stage: "verify" });
    expect(d?.kind === "DispatchAgent" && d.context?.resume?.session).toBeUndefined();
  });

  it("a job that never started, a refinery and a held push start fresh", () => {
    const config = cfg({ retry_backoff: { base_seconds: 0, max_seconds: 0 } });
    const never = feed(start({ a: [] }, config).journal, [{ kind: "tick" }], 16 * 60_000, config);
    const retried = never.events.find((e) => e.type === "task.retried")?.data as { fresh?: string; branch: string };
    expect(retried).toMatchObject({ branch: branch(2), fresh: "its job never ran" });

    const withRefinery = start({ a: [], r: ["a"] }, config).journal;
    let j = feed(withRefinery, [success("a"), { kind: "tick" }], 1000, config).journal;
    j = feed(j, [{ kind: "agent.started", taskId: "r", attempt: 1, workflowRunId: 9 }], 1100, config).journal;
    const r = feed(
      j,
      [{ kind: "agent.finished", taskId: "r", attempt: 1, exitCode: 21, recordSha: record, pushedSha: work }, { kind: "tick" }],
      1200,
      config,
    );
    expect(status(r.journal, "r").attempt?.branch).toBe(`forge/${RUN}/r/2`);
  });
});
