/**
 * The checkpoint a runner left on its branch (docs/executor.md#resuming): a job that ends without a
 * result — its runner killed, lost or out of time between stages — leaves no result.json, but each
 * stage's progress push ended with the runner's checkpoint commit (action/src/task/checkpoint.ts).
 * The App reads it at the branch head, as it reads result.json at a record commit, and trusts none of
 * it: the head must be a checkpoint commit of this attempt with one parent, the file bounded in size,
 * JSON, and of the checkpoint schema; the executor then checks every field as it checks result.json's
 * (src/core/decide/resume.ts: the attempt, the head it names against the commit's parent as GitHub
 * reports it, the node's stages, the depth budget). A checkpoint refused here or there is refused
 * whole: the retry starts fresh and says why.
 */
import { checkpointPath, TRAILERS, type AttemptRef } from "../core/layout.js";
import { formatProblem, zodProblems } from "../core/problems.js";
import { checkpointSchema, MAX_CHECKPOINT_BYTES, type Checkpoint } from "../core/schemas/checkpoint.js";
import type { GitHubPort } from "../github/port.js";
import { parseTrailers } from "./trailers.js";

/** What the branch head says of the attempt's last checkpoint; empty when the head is no checkpoint commit of the attempt. */
export interface BranchCheckpoint {
  checkpoint?: Checkpoint;
  /** The head is the attempt's checkpoint commit, but what it holds is not a checkpoint. */
  checkpointProblem?: string;
  /** The checkpoint commit: the head a resumed attempt continues from. */
  checkpointSha?: string;
  /** Its parent as GitHub reports it: the work the checkpoint must name. */
  pushedSha?: string;
}

/** The attempt's checkpoint at `head` of its branch (`commit`: the head's message and parents, when known). */
export async function readBranchCheckpoint(
  port: Pick<GitHubPort, "commit" | "readFile">,
  ref: AttemptRef,
  head: string,
  commit?: { message: string; parents: string[] },
): Promise<BranchCheckpoint> {
  const c = commit ?? (await port.commit(head));
  const t = parseTrailers(c.message);
  const stage = t[TRAILERS.checkpoint];
  // Another attempt's commit (the one a resumed attempt continues), or work with no checkpoint on top: nothing to read.
  if (stage === undefined || t.Run !== ref.runId || t.Task !== ref.taskId || t.Attempt !== String(ref.attempt)) return {};
  const refused = (why: string): BranchCheckpoint => ({ checkpointProblem: `the checkpoint commit ${head.slice(0, 12)} ${why}` });
  if (c.parents.length !== 1) return refused(`has ${c.parents.length} parents, not the one a checkpoint commit has`);
  const path = checkpointPath(ref.runId, ref.taskId, ref.attempt);
  const file = await port.readFile(path, head);
  if (!file) return refused(`has no ${path}`);
  const bytes = Buffer.byteLength(file.content, "utf8");
  if (bytes > MAX_CHECKPOINT_BYTES)
    return refused(`holds a ${path} of ${bytes} bytes, over the ${MAX_CHECKPOINT_BYTES} a checkpoint may have`);
  let raw: unknown;
  try {
    raw = JSON.parse(file.content);
  } catch (e) {
    return refused(`holds a ${path} that is not JSON: ${(e as Error).message.slice(0, 200)}`);
  }
  const parsed = checkpointSchema.safeParse(raw);
  if (!parsed.success) return refused(`holds no checkpoint: ${formatProblem(zodProblems(parsed.error, path)[0]!).slice(0, 500)}`);
  return { checkpoint: parsed.data, checkpointSha: head, pushedSha: c.parents[0]! };
}
