/**
 * The engine's read before a tick (src/app/engine/silent-checkpoints.ts): the branch head of each
 * attempt the tick will find silent, and of no other; what it holds goes in the tick's input. A
 * failed read is no checkpoint, never a failed tick; reads go a few at a time.
 */
import { describe, expect, it } from "vitest";
import { CHECKPOINT_READS_AT_ONCE, withSilentCheckpoints } from "../../src/app/engine/silent-checkpoints.js";
import type { LeafInput } from "../../src/core/inputs.js";
import type { Journal } from "../../src/core/journal.js";
import { checkpointPath } from "../../src/core/layout.js";
import type { Checkpoint } from "../../src/core/schemas/checkpoint.js";
import { cfg, feed, MIN, start } from "../core/decide-helpers.js";
import { sha } from "../helpers/world.js";

const RUN = "run-1";
const config = cfg({ max_parallel_agents: 10 });
const SILENT_AT = 1000 + 11 * MIN;
const WORK = sha("a/1 work");
const HEAD = sha("a/1 checkpoint");

const checkpoint: Checkpoint = {
  checkpoint_version: 1,
  created_at: "2026-01-01T00:00:00.000Z",
  run_id: RUN,
  task_id: "a",
  attempt: 1,
  trace_id: "0123456789abcdef",
  completed_stages: [{ name: "implement", exit_code: 0 }],
  pending_stages: ["verify", "walkthrough"],
  depth_used: 0,
  depth_max: 3,
  head_sha: WORK,
};

/** Attempts 1 of `ids` running, their jobs started at 1000. */
function running(ids: string[]): Journal {
  const j = start(Object.fromEntries(ids.map((id) => [id, []])), config).journal;
  const started: LeafInput[] = ids.map((id, k) => ({ kind: "agent.started", taskId: id, attempt: 1, workflowRunId: 100 + k }));
  return feed(j, started, 1000, config).journal;
}

/** A GitHub whose branch `forge/run-1/a/1` ends in attempt 1's checkpoint commit; every other branch in plain work. */
function github(over: { branchHead?: (branch: string) => Promise<string | null> } = {}) {
  const asked: string[] = [];
  let inFlight = 0;
  let most = 0;
  const port = {
    async branchHead(branch: string) {
      asked.push(branch);
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((r) => setTimeout(r, 5));
      inFlight--;
      if (over.branchHead) return over.branchHead(branch);
      return branch === `forge/${RUN}/a/1` ? HEAD : sha(`${branch} work`);
    },
    async commit(at: string) {
      return at === HEAD
        ? {
            sha: at,
            message: `forge(a): checkpoint after stage implement\n\nRun: ${RUN}\nTask: a\nAttempt: 1\nForge-Checkpoint: implement\n`,
            parents: [WORK],
          }
        : { sha: at, message: "work\n", parents: [sha("parent")] };
    },
    async readFile(path: string, at: string) {
      return path === checkpointPath(RUN, "a", 1) && at === HEAD ? { content: JSON.stringify(checkpoint), blobSha: sha("blob") } : null;
    },
  };
  return { port, asked, most: () => most };
}

const warnings: string[] = [];
const log = { info() {}, warn: (_o: Record<string, unknown>, msg: string) => void warnings.push(msg), error() {} };

describe("a tick given the checkpoints of the attempts it finds silent", () => {
  it("reads the branch of each silent attempt, and gives what its head holds in the tick", async () => {
    const j = feed(running(["a", "b", "c"]), [{ kind: "agent.heartbeat", taskId: "c", attempt: 1 }], 5 * MIN, config).journal;
    const gh = github();
    const out = await withSilentCheckpoints(gh.port, log, { runId: RUN, journal: j, config }, [{ kind: "tick" }], SILENT_AT);
    // `c` gave a sign of life 6 minutes ago: not read.
    expect(gh.asked.sort()).toEqual([`forge/${RUN}/a/1`, `forge/${RUN}/b/1`]);
    expect(out).toEqual([
      {
        kind: "tick",
        checkpoints: [
          { taskId: "a", attempt: 1, checkpoint, checkpointSha: HEAD, pushedSha: WORK },
          { taskId: "b", attempt: 1 },
        ],
      },
    ]);
  });

  it("reads nothing when no attempt goes silent, when the batch has no tick, or when a sign of life earlier in the batch keeps it alive", async () => {
    const j = running(["a"]);
    const gh = github();
    const tick: LeafInput[] = [{ kind: "tick" }];
    expect(await withSilentCheckpoints(gh.port, log, { runId: RUN, journal: j, config }, tick, 1000 + 9 * MIN)).toBe(tick);
    const noTick: LeafInput[] = [{ kind: "agent.heartbeat", taskId: "a", attempt: 1 }];
    expect(await withSilentCheckpoints(gh.port, log, { runId: RUN, journal: j, config }, noTick, SILENT_AT)).toBe(noTick);
    // The reconciler's batch: the job seen in progress, then the tick.
    const swept: LeafInput[] = [
      { kind: "agent.started", taskId: "a", attempt: 1, workflowRunId: 100 },
      { kind: "agent.heartbeat", taskId: "a", attempt: 1 },
      { kind: "tick" },
    ];
    expect(await withSilentCheckpoints(gh.port, log, { runId: RUN, journal: j, config }, swept, SILENT_AT)).toBe(swept);
    expect(gh.asked).toEqual([]);
    // A heartbeat after the tick is no sign of life for it: the tick (the first one) is given the read.
    const late: LeafInput[] = [{ kind: "tick" }, { kind: "agent.heartbeat", taskId: "a", attempt: 1 }, { kind: "tick" }];
    const out = await withSilentCheckpoints(gh.port, log, { runId: RUN, journal: j, config }, late, SILENT_AT);
    expect(out[0]).toMatchObject({ kind: "tick", checkpoints: [{ taskId: "a", checkpointSha: HEAD }] });
    expect(out.slice(1)).toEqual(late.slice(1));
  });

  it("a read GitHub does not answer is no checkpoint, and the tick goes on", async () => {
    warnings.length = 0;
    const gh = github({
      branchHead: async () => {
        throw new Error("502 Bad Gateway");
      },
    });
    const out = await withSilentCheckpoints(gh.port, log, { runId: RUN, journal: running(["a"]), config }, [{ kind: "tick" }], SILENT_AT);
    expect(out).toEqual([{ kind: "tick", checkpoints: [{ taskId: "a", attempt: 1 }] }]);
    expect(warnings).toEqual(["could not read a silent attempt's checkpoint; its retry resumes from the branch head"]);
    // A branch that is gone: nothing to read either.
    const gone = github({ branchHead: async () => null });
    expect(
      await withSilentCheckpoints(gone.port, log, { runId: RUN, journal: running(["a"]), config }, [{ kind: "tick" }], SILENT_AT),
    ).toEqual([{ kind: "tick", checkpoints: [{ taskId: "a", attempt: 1 }] }]);
  });

  it("many silent attempts (after an outage) are read a few at a time, every one of them", async () => {
    const ids = Array.from({ length: 10 }, (_, k) => `t${k}`);
    const gh = github();
    const out = await withSilentCheckpoints(gh.port, log, { runId: RUN, journal: running(ids), config }, [{ kind: "tick" }], SILENT_AT);
    expect(gh.asked).toHaveLength(10);
    expect(gh.most()).toBe(CHECKPOINT_READS_AT_ONCE);
    expect(out[0]?.kind === "tick" && out[0].checkpoints?.map((c) => c.taskId)).toEqual(ids);
  });
});
