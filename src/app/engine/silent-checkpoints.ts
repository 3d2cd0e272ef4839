/**
 * A tick with what the branches of the attempts it finds silent hold (docs/executor.md#liveness-at-the-app):
 * an attempt the App's clock makes STALE left no result, but its runner's last progress push may have
 * left a checkpoint commit at its branch head — as a lost job's does. `decide` reads nothing, so the
 * engine reads those branches before deciding and gives what it found in the tick's input; the
 * decision is a function of its input, and a re-decision (a lost compare-and-swap) reads again.
 */
import { decide } from "../../core/decide/index.js";
import { checkpointReadsAt, type SilentAttempt } from "../../core/decide/liveness.js";
import type { LeafInput } from "../../core/inputs.js";
import type { Journal } from "../../core/journal.js";
import type { ForgeConfig } from "../../core/schemas/config.js";
import type { GitHubPort } from "../../github/port.js";
import { readBranchCheckpoint } from "../branch-checkpoint.js";
import type { Logger } from "./types.js";

type TickCheckpoint = NonNullable<Extract<LeafInput, { kind: "tick" }>["checkpoints"]>[number];

/** Branches read at once: a tick after a long outage may find many attempts silent, each read costs up to three calls. */
export const CHECKPOINT_READS_AT_ONCE = 4;

/**
 * `inputs` with the first tick given the branch checkpoint of every attempt it will find silent at
 * `now` (`checkpointReadsAt`, on the journal as the batch's inputs before the tick leave it). Nothing is
 * read when no attempt goes silent, which is almost every tick. A read that fails gives the attempt
 * no checkpoint: its retry resumes from the branch head, as before the read.
 */
export async function withSilentCheckpoints(
  port: Pick<GitHubPort, "branchHead" | "commit" | "readFile">,
  log: Logger,
  run: { runId: string; journal: Journal; config: ForgeConfig },
  inputs: LeafInput[],
  now: number,
): Promise<LeafInput[]> {
  const first = inputs.findIndex((i) => i.kind === "tick");
  if (first < 0 || checkpointReadsAt(run.journal, run.config, now).length === 0) return inputs;
  // The journal the tick is decided on: a sign of life earlier in the batch keeps its attempt out (pure, no read).
  const before = first > 0 ? decide(run.journal, { kind: "batch", inputs: inputs.slice(0, first) }, now, run.config).journal : run.journal;
  const silent = checkpointReadsAt(before, run.config, now);
  if (silent.length === 0) return inputs;
  const checkpoints: TickCheckpoint[] = [];
  for (let k = 0; k < silent.length; k += CHECKPOINT_READS_AT_ONCE)
    checkpoints.push(...(await Promise.all(silent.slice(k, k + CHECKPOINT_READS_AT_ONCE).map((a) => readOne(port, log, run.runId, a)))));
  return inputs.map((input, k): LeafInput => (k === first ? { kind: "tick", checkpoints } : input));
}

/** The attempt's checkpoint at its branch head; none when the head is no checkpoint commit of it, or GitHub does not answer. */
async function readOne(
  port: Pick<GitHubPort, "branchHead" | "commit" | "readFile">,
  log: Logger,
  runId: string,
  a: SilentAttempt,
): Promise<TickCheckpoint> {
  const ref = { taskId: a.taskId, attempt: a.attempt };
  try {
    const head = await port.branchHead(a.branch);
    return { ...ref, ...(head ? await readBranchCheckpoint(port, { runId, ...ref }, head) : {}) };
  } catch (e) {
    log.warn(
      { runId, ...ref, branch: a.branch, err: (e as Error).message },
      "could not read a silent attempt's checkpoint; its retry resumes from the branch head",
    );
    return ref;
  }
}
