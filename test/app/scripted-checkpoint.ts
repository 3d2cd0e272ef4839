/**
 * A scripted runner's progress push after a stage, as the Action makes it (action/src/task/branch.ts,
 * action/src/task/checkpoint.ts): the stage's work commit, then the runner's checkpoint commit on top
 * — the attempt's `checkpoint.json` naming the work commit, with the Forge-Checkpoint trailer — and
 * the draft PR. A runner killed after it leaves that checkpoint at the branch head. `raw` stands in
 * for a checkpoint file someone forged (the App must refuse it).
 */
import type { Octokit } from "@octokit/rest";
import { checkpointPath, TRAILERS } from "../../src/core/layout.js";
import type { Checkpoint } from "../../src/core/schemas/checkpoint.js";
import type { DispatchedRun } from "../../src/local-github/workflows/index.js";

export interface StageCheckpoint {
  files: Record<string, string>;
  /** The stages done and pending and the agent's session id, or the file's text as is. */
  checkpoint: { completed: string[]; pending: string[]; session?: string } | { raw: string };
  /**
   * After the push nothing more is heard of the job: no step ends, the run stays in progress, until
   * it is cancelled (then it ends `cancelled`). The App's clock is what finds it silent.
   */
  thenSilent?: boolean;
}

/** Pushes the stage's work and checkpoint; "silent" when the job then goes silent (it ends only once cancelled). */
export async function pushStageCheckpoint(gh: Octokit, d: DispatchedRun, after: StageCheckpoint): Promise<"silent" | undefined> {
  const [owner, repo, branch] = [d.repo.owner.login, d.repo.name, d.ref.replace(/^refs\/heads\//, "")];
  const [runId, taskId, attempt] = [d.inputs.run_id ?? "", d.inputs.task_id ?? "", Number(d.inputs.attempt ?? 1)];
  const commit = async (parent: string, files: Record<string, string>, message: string) => {
    const { data: p } = await gh.rest.git.getCommit({ owner, repo, commit_sha: parent });
    const tree = Object.entries(files).map(([path, content]) => ({ path, mode: "100644" as const, type: "blob" as const, content }));
    const { data: t } = await gh.rest.git.createTree({ owner, repo, base_tree: p.tree.sha, tree });
    return (await gh.rest.git.createCommit({ owner, repo, message, tree: t.sha, parents: [parent] })).data.sha;
  };
  const c = after.checkpoint;
  const stage = "raw" in c ? "implement" : c.completed.at(-1)!;
  const work = await commit(
    d.sha,
    after.files,
    `forge(${taskId}): work after stage ${stage}\n\nRun: ${runId}\nTask: ${taskId}\nAttempt: ${attempt}\nStage: ${stage}`,
  );
  const text =
    "raw" in c
      ? c.raw
      : JSON.stringify({
          checkpoint_version: 1,
          created_at: new Date().toISOString(),
          run_id: runId,
          task_id: taskId,
          attempt,
          trace_id: "0123456789abcdef",
          completed_stages: c.completed.map((name) => ({ name, exit_code: 0 })),
          pending_stages: c.pending,
          depth_used: 0,
          depth_max: 3,
          ...(c.session ? { agent_session: { adapter: "claude", id: c.session, stage: c.pending[0]! } } : {}),
          head_sha: work,
        } satisfies Checkpoint);
  const message = `forge(${taskId}): checkpoint after stage ${stage}\n\nRun: ${runId}\nTask: ${taskId}\nAttempt: ${attempt}\nAgent: scripted\n${TRAILERS.checkpoint}: ${stage}`;
  const head = await commit(work, { [checkpointPath(runId, taskId, attempt)]: text }, message);
  await gh.rest.git.updateRef({ owner, repo, ref: `heads/${branch}`, sha: head });
  await gh.rest.pulls.create({
    owner,
    repo,
    head: branch,
    base: `forge/${runId}/_integration`,
    title: `forge(${taskId}): attempt ${attempt}`,
    body: "Work in progress",
  });
  if (!after.thenSilent) return undefined;
  d.signal.addEventListener("abort", () => (d.completeJob("agent", "cancelled"), d.complete()), { once: true });
  return "silent";
}
