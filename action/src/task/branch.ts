/**
 * The task branch while the attempt runs: pushes (one round trip saved when the remote already has
 * the head), the agent's work staged over the fold base, and the progress push at each stage end.
 */
import type { StageProgress } from "../../../src/agent/stages/index.js";
import { taskRecordsDir } from "../../../src/core/layout.js";
import { commitCheckpoint, writeCheckpoint } from "./checkpoint.js";
import { messageWithTrailers } from "../git.js";
import { isProtectedPath, revertProtectedChanges } from "../protected-paths.js";
import { attemptTrailers } from "../start-head.js";
import type { TaskAttempt } from "./context.js";

/** Pushes `sha` to the task branch; false when the remote has it already (nothing sent). */
export async function pushHead(a: TaskAttempt, sha: string): Promise<boolean> {
  const s = a.branchState;
  if (sha === s.remoteHead) return false;
  await a.git.push(a.branch, sha);
  s.remoteHead = sha;
  s.pushes++;
  return true;
}

/**
 * Stages the agent's work over the fold base (the pre-agent head, then the last progress commit):
 * the agent's own commits are folded into the runner's — except merge commits (a refinery's
 * upstream, a type 3's sub-branches), which are kept so the history says what was merged, or on a
 * linear branch the runner's squash commits (`keptCommit`). The
 * attempt's record folder is never part of it; protected paths are reverted and remembered. Returns
 * the files the attempt changed so far (against its starting head, so the progress pushes of this
 * run and of an earlier run of the same attempt count) and whether anything is staged over HEAD.
 */
export async function stageWork(a: TaskAttempt): Promise<{ filesChanged: string[]; pending: boolean }> {
  const { git, branch, recordRel, startHead, branchState } = a;
  await git.run(["symbolic-ref", "HEAD", `refs/heads/${branch}`]);
  const keep = await keptCommit(a);
  if ((await git.head()) !== keep) await git.run(["reset", "--soft", "--quiet", keep]);
  await git.run(["add", "--all", "--", ".", `:(exclude)${recordRel}`]);
  const staged = await git.stagedChanges(startHead);
  // The record folder is the runner's: as its last checkpoint commit left it (or as the attempt found it).
  if (staged.some((c) => c.path.startsWith(`${recordRel}/`))) await git.run(["reset", "--quiet", branchState.recordBase, "--", recordRel]);
  for (const r of await revertProtectedChanges(git, startHead, staged)) branchState.refused.set(r.path, r);
  const pending = (await git.run(["diff", "--cached", "--quiet", "HEAD"], { allowFail: true })).code !== 0;
  // The records of the attempts a resumed attempt continues are on its branch too: none is work.
  const records = `${taskRecordsDir(a.ids.runId, a.ids.taskId)}/`;
  return {
    filesChanged: staged
      .filter((c) => !c.path.startsWith(`${recordRel}/`) && !c.path.startsWith(records) && !isProtectedPath(c.path))
      .map((c) => c.path),
    pending,
  };
}

/**
 * What the agent's work is folded over: the fold base, or a commit above it the history keeps — the
 * last merge commit (a refinery's upstream, a type 3's sub-branches); on a branch that must keep a
 * linear history, never a merge commit but the runner's last squash of an upstream (task/squash.ts,
 * the merge stage), wherever the agent left HEAD since.
 */
async function keptCommit(a: TaskAttempt): Promise<string> {
  const { git, branchState } = a;
  const { foldBase } = branchState;
  if (!branchState.linear) return (await git.out(["rev-list", "--merges", "-1", `${foldBase}..HEAD`]).catch(() => "")) || foldBase;
  const squash = a.built.taskContext.squashed?.at(-1)?.commit;
  if (!squash || squash === foldBase) return foldBase;
  const above = await git.run(["merge-base", "--is-ancestor", foldBase, squash], { allowFail: true });
  return above.code === 0 ? squash : foldBase;
}

/**
 * The progress push at each stage end, while no agent runs: the work so far becomes a commit on the
 * task branch and is pushed, so a runner machine that dies loses one stage at most. A stage that
 * left only a merge commit (a sub-agent's branch merged back) pushes that; a stage that changed
 * nothing since the last push pushes nothing. The final work and record commits come on top
 * (pushes stay fast-forwards). With the stage sequence's `progress`, a checkpoint commit of it goes on
 * top, in the same push (task/checkpoint.ts): a runner that dies later leaves it at the branch head.
 */
export async function pushProgress(a: TaskAttempt, stage: string, progress?: StageProgress): Promise<void> {
  const { git, branchState } = a;
  const { pending } = await stageWork(a);
  if (pending)
    branchState.foldBase = await git.commit(
      messageWithTrailers(`forge(${a.ids.taskId}): work after stage ${stage}`, undefined, [
        ...attemptTrailers(a.ids),
        ["Agent", a.deps.agent.name],
        ["Stage", stage],
      ]),
    );
  // The checkpoint names the work so far, its commit's parent: what a resumed attempt would continue from.
  if (progress)
    await checkpointAfter(a, stage, progress).catch(async (err: unknown) => {
      a.warnings.push(`could not commit the checkpoint after stage ${stage}: ${(err as Error).message}`);
      await git.run(["reset", "--quiet", "HEAD", "--", a.recordRel], { allowFail: true });
    });
  // The start commit's push (with the PR) lands first.
  await branchState.prOpening;
  const head = await git.head();
  if (!(await pushHead(a, head))) return;
  branchState.progressPushes++;
  a.liveCheck.moveTo(head);
  a.log.info(`Pushed the work after stage ${stage} (${head.slice(0, 12)}).`);
}

async function checkpointAfter(a: TaskAttempt, stage: string, progress: StageProgress): Promise<void> {
  const checkpoint = await writeCheckpoint(a, progress, await a.git.head(), false);
  const sha = await commitCheckpoint(a, stage, checkpoint);
  a.branchState.foldBase = sha;
  a.branchState.recordBase = sha;
}
