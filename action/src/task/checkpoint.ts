/**
 * The attempt's checkpoints (docs/formats.md#checkpoint): after every stage, and once more when the
 * agent has ended, the runner writes where the stage sequence stands — the stages done and pending,
 * the depth, the agent CLI's session, the head pushed — as `checkpoints/cp-<time>.json` in the
 * session folder, with `.session-state` beside it naming the latest and `checkpoint.json` holding it.
 * The last one also goes into result.json, where the App reads it when the attempt ends and checks it
 * before a retry resumes from it (docs/executor.md#resuming). The files are the runner's; the agent
 * has ended or is not running when they are written (no session runs at a stage end).
 *
 * A runner that dies leaves no result.json: so after each stage the checkpoint also travels with the
 * stage's progress push, in a checkpoint commit of the runner's (`commitCheckpoint`) whose parent is
 * the head it names — with the agent's conversation and progress notes, which a resumed attempt
 * needs, and nothing else. The App reads it at the branch head when the attempt ends without a result.
 */
import { lstat, mkdir, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { stringify } from "yaml";
import { readAgentFile, readAgentText } from "../../../src/agent/agent-files.js";
import { AGENT_SESSION_DIR, MAX_CARRIED_SESSION_BYTES } from "../../../src/agent/agent-sessions.js";
import { NOTES_FILE } from "../../../src/agent/stages/prompt.js";
import type { StageProgress } from "../../../src/agent/stages/index.js";
import { TRAILERS } from "../../../src/core/layout.js";
import { CHECKPOINT_VERSION, checkpointSchema, type Checkpoint } from "../../../src/core/schemas/checkpoint.js";
import { messageWithTrailers } from "../git.js";
import { maskerOf } from "../publish.js";
import { attemptTrailers } from "../start-head.js";
import type { TaskAttempt } from "./context.js";

export const CHECKPOINTS_DIR = "checkpoints";
export const SESSION_STATE_FILE = ".session-state";
/** The latest checkpoint, in the session folder and so in the record folder (src/core/layout.ts checkpointPath). */
export const CHECKPOINT_FILE = "checkpoint.json";

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
  const text = `${JSON.stringify(checkpoint, null, 2)}\n`;
  await writeFile(path.join(dir, name), text);
  await writeFile(path.join(a.sessionDir, CHECKPOINT_FILE), text);
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

/**
 * The checkpoint commit after stage `stage`: on top of HEAD (the head `checkpoint` names), the
 * attempt's record folder as the runner last wrote it plus `checkpoint.json`, the agent's carried
 * conversations and its progress notes (masked) — written into the index only, never through the
 * agent's work tree. Returns the commit.
 */
export async function commitCheckpoint(a: TaskAttempt, stage: string, checkpoint: Checkpoint): Promise<string> {
  const { git, recordRel } = a;
  const files: Array<[string, string]> = [[CHECKPOINT_FILE, `${JSON.stringify(checkpoint, null, 2)}\n`], ...(await carriedFiles(a))];
  for (const [rel, content] of files) {
    const blob = (await git.run(["hash-object", "-w", "--stdin"], { input: content })).stdout.trim();
    await git.run(["update-index", "--add", "--cacheinfo", `100644,${blob},${recordRel}/${rel}`]);
  }
  return git.commit(
    messageWithTrailers(`forge(${a.ids.taskId}): checkpoint after stage ${stage}`, undefined, [
      ...attemptTrailers(a.ids),
      ["Agent", a.deps.agent.name],
      [TRAILERS.checkpoint, stage],
    ]),
  );
}

/**
 * What a resumed attempt needs beside the checkpoint, by its path in the session folder: each
 * stage's carried conversation (`agent/stages/<nn>-<stage>/agent-session/`, masked when carried) and
 * the progress notes, masked here. The folder's files were the agent's: no link is followed.
 */
async function carriedFiles(a: TaskAttempt): Promise<Array<[string, string]>> {
  const out: Array<[string, string]> = [];
  const root = a.sessionDir;
  const isDir = async (p: string) => (await lstat(p).catch(() => undefined))?.isDirectory() === true;
  const stages = path.join(root, "agent", "stages");
  if ((await isDir(path.join(root, "agent"))) && (await isDir(stages)))
    for (const dir of (await readdir(stages, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name)) {
      const folder = path.join(stages, dir, AGENT_SESSION_DIR);
      if (!(await isDir(folder))) continue;
      for (const f of await readdir(folder, { withFileTypes: true })) {
        if (!f.isFile() || !f.name.endsWith(".jsonl")) continue;
        const buf = await readAgentFile(folder, path.join(folder, f.name), { maxBytes: MAX_CARRIED_SESSION_BYTES }).catch(() => undefined);
        if (buf) out.push([`agent/stages/${dir}/${AGENT_SESSION_DIR}/${f.name}`, buf.toString("utf8")]);
      }
    }
  const notes = await readAgentText(root, path.join(root, "agent", NOTES_FILE), (m) => void a.warnings.push(m), { maxBytes: 1_000_000 });
  if (notes !== undefined) out.push([`agent/${NOTES_FILE}`, maskerOf(a.deps).mask(notes)]);
  return out;
}
