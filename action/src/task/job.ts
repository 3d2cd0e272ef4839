/**
 * A task job: one attempt of one task, start to end, as data in and data out. Each step is a
 * function of the job's explicit state (context.ts):
 *
 *  1. the dispatch is current (journal: this attempt RUNNING), else neutral — nothing touched
 *  2. check out the task branch                         (checkout.ts)
 *  3. build the context (pinned plan, deps, AGENTS.md, sanitized extra)   (session.ts)
 *  4. open the draft PR early                           (pull.ts)
 *  5. run the agent under heartbeats and timeouts; progress pushes at stage ends   (agent.ts, branch.ts)
 *  6. collect the work: protected paths reverted, one work commit `forge(<task>): <title>`   (collect.ts)
 *  7. complete and validate the walkthrough (runner facts win), and an escalation's Change Request   (collect.ts, reports.ts)
 *  8. the record commit (attempt folder only, Forge-* trailers), push   (record.ts)
 *  9. walkthrough as PR body, ready for review          (pull.ts)
 * 10. summary, artifact, outputs                        (summary.ts, here)
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { succeeded } from "../../../src/core/exit-codes.js";
import { resultPath } from "../../../src/core/layout.js";
import { renderTaskContext } from "../task-context.js";
import type { AttemptReport, JobArgs, NeutralReport, Timings } from "../job.js";
import { runAgent, type AgentEnd } from "./agent.js";
import { pushHead } from "./branch.js";
import { checkoutAttempt } from "./checkout.js";
import { collectWork, completeAttemptWalkthrough } from "./collect.js";
import { mark, openTaskJob, type TaskAttempt } from "./context.js";
import { inAgentHome, listFiles, removeAgentHomes } from "./files.js";
import { openPrAfterPush, publishPr } from "./pull.js";
import { recordAttempt } from "./record.js";
import { completeReports } from "./reports.js";
import { openAttempt } from "./session.js";
import { ANSWERS_FILE, answerReviewers, answersPath, readRevision, walkthroughInCheckout, withRevisionSection } from "./revision.js";
import { startSteering, steeringSection } from "./steering.js";
import { agentSection, resumedSection } from "./resumed.js";
import { renderSummary } from "./summary.js";

export async function taskJob(args: JobArgs): Promise<AttemptReport | NeutralReport> {
  const job = openTaskJob(args);
  const checkedOut = await checkoutAttempt(job);
  if ("kind" in checkedOut) return checkedOut;
  const a = await openAttempt(job, checkedOut);
  // A revision (docs/executor.md#iterations): the review to answer, read before the agent touches the checkout.
  const revision = await readRevision(job, walkthroughInCheckout(job));
  if (revision) await withReviewContext(a, revision.prompt);
  const steering = startSteering(a);
  const { end, verdict } = await runAgent(a).finally(() => steering.stop());
  const work = await collectWork(a, end, verdict);
  const completed = await completeAttemptWalkthrough(a, end, work, verdict);
  const reports = await completeReports(a, end, verdict);
  const changed = work.filesChanged;
  if (revision && completed.ok) await withRevisionSection(a, revision, completed, changed);
  const switched = a.input.context.agent ? agentSection(a, a.input.context.agent) : undefined;
  const sections = [
    ...(switched ? [switched] : []),
    ...(a.input.context.resume ? [resumedSection(a, a.input.context.resume, end.outcome.progress)] : []),
    ...(steering.received.length ? [steeringSection(steering.received)] : []),
  ];
  if (completed.ok && sections.length) {
    for (const section of sections) {
      completed.body = `${completed.body.trimEnd()}\n\n${section}\n`;
      completed.markdown = `${completed.markdown.trimEnd()}\n\n${section}\n`;
    }
  }
  if ((revision || sections.length) && completed.ok) await writeFile(a.walkthroughSession, completed.markdown);
  const { result, error, recordSha } = await recordAttempt(a, end, work, completed, verdict, reports);
  const { exitCode } = verdict;

  const early = await a.branchState.prOpening;
  await pushHead(a, recordSha);
  const pr = early ?? (await openPrAfterPush(a));
  const tPushed = a.now();
  mark(a, "push");
  await a.liveCheck.finish(exitCode, recordSha);

  const notes = [...work.refusals.map((r) => `refused change to protected path \`${r.path}\` (reverted)`), ...completed.warnings];
  if (pr) await publishPr(a, pr, { exitCode, error, completed, recordSha, notes });
  if (revision && succeeded(exitCode)) await answerReviewers(a, revision, pr, recordSha, changed);
  const tEnd = a.now();
  mark(a, "pr_body");

  await uploadSession(a);
  // Nothing of the agents' own homes outlives the job (the runner's temp folder may be kept, on a self-hosted runner).
  for (const p of await removeAgentHomes(a.sessionDir)) a.warnings.push(`could not remove an agent's home: ${p}`);
  await a.telemetry
    ?.end(
      {
        exitCode,
        agentMs: end.tAgentEnd - end.tAgent,
        ...(result.cost_usd !== undefined ? { costUsd: result.cost_usd } : {}),
        ...(result.turns !== undefined ? { turns: result.turns } : {}),
      },
      a.now(),
    )
    .catch((err: unknown) => void a.warnings.push(`could not send the attempt's telemetry: ${(err as Error).message}`));
  const timings = timingsOf(a, end, tPushed, tEnd);
  const { input } = a;
  const summary = renderSummary({
    prTitle: a.prTitle,
    result,
    exitCode,
    error,
    completed,
    branch: a.branch,
    base: a.base,
    recordSha,
    pr,
    timings,
    warnings: a.warnings,
    refusals: work.refusals,
    jobUrl: input.jobUrl,
    serverUrl: input.serverUrl,
    repository: input.repository,
  });
  return {
    kind: "attempt",
    exitCode,
    result,
    branch: a.branch,
    headSha: recordSha,
    ...(work.workSha ? { workSha: work.workSha } : {}),
    resultPath: resultPath(a.ids.runId, a.ids.taskId, a.ids.attempt),
    ...(pr ? { prNumber: pr.number, prUrl: pr.url } : {}),
    refusals: work.refusals,
    warnings: a.warnings,
    summary,
    timings,
    progressPushes: a.branchState.progressPushes,
    pushes: a.branchState.pushes,
  };
}

/** The agent's context with the review to answer, in its prompt and in the session's context.md. */
async function withReviewContext(a: TaskAttempt, review: string): Promise<void> {
  a.built.taskContext.review = review.replace(ANSWERS_FILE, answersPath(a));
  a.built.markdown = renderTaskContext(a.built.taskContext);
  await writeFile(path.join(a.sessionDir, "context.md"), a.built.markdown);
}

/** Step 10: the session folder as a workflow artifact (the same files are in the record folder anyway). */
async function uploadSession(a: TaskAttempt): Promise<void> {
  if (!a.deps.uploadArtifact) return;
  const { runId, taskId, attempt } = a.ids;
  try {
    const files = (await listFiles(a.sessionDir)).filter((f) => !inAgentHome(a.sessionDir, path.relative(a.sessionDir, f)));
    await a.deps.uploadArtifact(`forge-${runId}-${taskId}-${attempt}`, a.sessionDir, files);
  } catch (err) {
    a.warnings.push(`could not upload the session artifact: ${(err as Error).message}`);
  }
}

function timingsOf(a: TaskAttempt, end: AgentEnd, tPushed: number, tEnd: number): Timings {
  const { tAgent, tAgentEnd, supervised } = end;
  return {
    beforeAgentMs: tAgent - a.t0,
    agentMs: tAgentEnd - tAgent,
    afterAgentMs: tEnd - tAgentEnd,
    steps: { ...a.marks, agent_start: tAgent - a.t0, agent_end: tAgentEnd - a.t0 },
    ...(supervised.stopped?.reason === "stalled"
      ? {
          stallDetectedAfterMs: supervised.stopped.at - supervised.lastProgressAt,
          partialPushedAfterMs: tPushed - supervised.lastProgressAt,
        }
      : {}),
  };
}
