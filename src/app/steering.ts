/**
 * `/forge steer`, once the journal took it: the App hands the message to the running job as a
 * comment of its own on the task's PR (`src/core/render/steering.ts`, docs/runner.md#steering). The
 * job takes steering only from the App's comments — GitHub says who wrote a comment, and nobody else
 * can post as the App — never from the journal, which anyone with the job's token may rewrite.
 */
import { steeringComment } from "../core/render/steering.js";
import type { RepoRuntime } from "./runtime.js";

/**
 * Posts the task's latest steering message on its PR (`pr`, or the task's own when the command came
 * from the tracker). Returns what to tell the person when there is no PR to post it on.
 */
export async function handSteeringToJob(
  rt: RepoRuntime,
  runId: string,
  taskId: string,
  pr: number | undefined,
): Promise<string | undefined> {
  const loaded = await rt.engine.state(runId);
  const t = loaded?.state.journal.tasks.find((x) => x.id === taskId);
  const note = t?.attempt?.steering?.at(-1);
  if (!t || !note) return undefined;
  const on = pr ?? t.attempt?.prNumber;
  if (on === undefined)
    return `\`${taskId}\` has no pull request yet, and its job reads steering there: steer again once its draft PR is open.`;
  await rt.port.createComment(
    on,
    steeringComment({ runId, taskId, attempt: t.attempts, id: note.id, actor: note.actor, message: note.message }),
  );
  return undefined;
}
