/**
 * The attempt's checkpoints (docs/formats.md#checkpoint): after every stage, and once more when the
 * agent has ended, the runner writes where the stage sequence stands — the stages done and pending,
 * the depth, the agent CLI's session, the head pushed — as `checkpoints/cp-<time>.json` in the
 * session folder, with `.session-state` beside it naming the latest. The last one also goes into
 * result.json, where the App reads it when the attempt ends and checks it before a retry resumes
 * from it (docs/executor.md#resuming). The files are the runner's; the agent has ended or is not
 * running when they are written (no session runs at a stage end).
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { stringify } from "yaml";
import type { StageProgress } from "../../../src/agent/stages/index.js";
import { CHECKPOINT_VERSION, checkpointSchema, type Checkpoint } from "../../../src/core/schemas/checkpoint.js";
import type { TaskAttempt } from "./context.js";

export const CHECKPOINTS_DIR = "checkpoints";
export const SESSION_STATE_FILE = ".session-state";

/** `cp-20260207T100512345Z-01.json`: sorted by name, they are in the order written. */
function checkpointName(at: number, n: number): string {
  return `cp-${new Date(at).toISOString().replace(/[-:.]/g, "")}-${String(n).padStart(2, "0")}.json`;
}

/** Writes a checkpoint of `progress` at `head` and the session state naming it; returns the checkpoint. */
export async function writeCheckpoint(a: TaskAttempt, progress: StageProgress, head: string, ended: boolean): Promise<Checkpoint> {
  const at = a.now();
  const { runId, taskId, attempt } = a.ids;
  const checkpoint = checkpointSchema.parse({
    checkpoint_version: CHECKPOINT_VERSION,
    created_at: new Date(at).toISOString(),
    run_id: runId,
    task_id: taskId,
    attempt,
    trace_id: progress.traceId,
    completed_stages: progress.completed.map((c) => ({ name: c.name, exit_code: c.exit_code })),
    pending_stages: [...progress.pending],
    depth_used: progress.depthUsed,
    depth_max: progress.depthMax,
    ...(progress.session ? { agent_session: { ...progress.session } } : {}),
    head_sha: head,
  } satisfies Checkpoint);
  const dir = path.join(a.sessionDir, CHECKPOINTS_DIR);
  await mkdir(dir, { recursive: true });
  const name = checkpointName(at, ++a.checkpoints);
  await writeFile(path.join(dir, name), `${JSON.stringify(checkpoint, null, 2)}\n`);
  const total = progress.completed.length + progress.pending.length;
  const state = {
    state: progress.pending.length === 0 ? "COMPLETE" : ended ? "STOPPED" : `PHASE_${progress.completed.length + 1}`,
    current_phase: Math.min(progress.completed.length + 1, total),
    total_phases: total,
    started_at: new Date(a.t0).toISOString(),
    last_checkpoint: `${CHECKPOINTS_DIR}/${name}`,
    depth_used: progress.depthUsed,
    depth_max: progress.depthMax,
  };
  await writeFile(path.join(a.sessionDir, SESSION_STATE_FILE), stringify(state));
  return checkpoint;
}
