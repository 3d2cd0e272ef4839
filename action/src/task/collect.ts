/**
 * Steps 6 and 7 of a task job. The work becomes one commit on top of the pre-agent head (or of the
 * last progress push), protected paths reverted; an empty diff is never a success (a refinery may
 * change nothing). Then the walkthrough is completed with the runner's facts, which win over the
 * agent's, and validated: a success needs a valid one; its status may turn the exit code.
 */
import { rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { readAgentText } from "../../../src/agent/agent-files.js";
import { completeWalkthrough, type CompletedWalkthrough } from "../../../src/agent/walkthrough.js";
import { EXIT_CODES, interruptedOrTimedOut, succeeded } from "../../../src/core/exit-codes.js";
import { messageWithTrailers } from "../git.js";
import type { Refusal } from "../protected-paths.js";
import { attemptTrailers } from "../start-head.js";
import type { AgentEnd, Verdict } from "./agent.js";
import { stageWork } from "./branch.js";
import { mark, type TaskAttempt } from "./context.js";
import { dropLinks, exists } from "./files.js";

export interface CollectedWork {
  filesChanged: string[];
  refusals: Refusal[];
  /** The work commit (or the head that already holds the work); absent when the attempt changed nothing. */
  workSha?: string;
  /** The head the walkthrough's facts name. */
  headForFacts: string;
}

export async function collectWork(a: TaskAttempt, end: AgentEnd, verdict: Verdict): Promise<CollectedWork> {
  const { git, branchState } = a;
  const { attempt } = a.ids;
  // The agent has ended: the links it left in its session folder go before the runner reads or writes
  // there (a report linked to a file only the runner may read is then simply absent).
  const links = await dropLinks(a.sessionDir);
  if (links.length)
    a.warnings.push(
      `removed ${links.length} link(s) the agent left in its session folder (${links.slice(0, 5).join(", ")}${links.length > 5 ? ", …" : ""}): the runner reads no file through a link`,
    );
  // An agent that wrote its walkthrough into the record folder instead of the session: taken from there.
  const agentRecordCopy = path.join(a.input.workspace, a.recordRel, "walkthrough.md");
  if (!(await exists(a.walkthroughSession)) && !end.outcome.walkthroughPath) {
    const text = await readAgentText(a.input.workspace, agentRecordCopy, (m) => void a.warnings.push(m));
    if (text !== undefined) await writeFile(a.walkthroughSession, text);
  }
  const { filesChanged, pending } = await stageWork(a);
  const refusals = [...branchState.refused.values()];
  if (refusals.length) {
    const list = refusals.map((r) => r.path).join(", ");
    verdict.errors.unshift(`refused changes to protected paths (plans, .github/, agent instruction files): ${list}`);
    if (!interruptedOrTimedOut(verdict.exitCode)) verdict.exitCode = EXIT_CODES.FAILURE;
  }
  const stopped = end.supervised.stopped;
  let workSha: string | undefined;
  if (pending) {
    const body = stopped ? `Partial work of attempt ${attempt}, kept when the agent was stopped (${stopped.reason}).` : undefined;
    workSha = await git.commit(messageWithTrailers(a.prTitle, body, [...attemptTrailers(a.ids), ["Agent", a.deps.agent.name]]));
  } else if (filesChanged.length > 0 || (await git.head()) !== branchState.preAgentHead) {
    // Everything was in a progress push already, or in the merges kept.
    workSha = await git.head();
  }
  if (succeeded(verdict.exitCode) && filesChanged.length === 0 && a.node.kind !== "refinery") {
    verdict.exitCode = EXIT_CODES.FAILURE;
    verdict.errors.push("the agent reported success but changed no files (an empty diff is never success)");
  }
  mark(a, "work_commit");
  return { filesChanged, refusals, ...(workSha ? { workSha } : {}), headForFacts: workSha ?? branchState.preAgentHead };
}

/** The completed walkthrough, written back to the session (or removed when it is not valid). */
export async function completeAttemptWalkthrough(
  a: TaskAttempt,
  end: AgentEnd,
  work: CollectedWork,
  verdict: Verdict,
): Promise<CompletedWalkthrough> {
  const { config, deps } = a;
  const { runId, taskId, attempt } = a.ids;
  const { outcome } = end;
  const wtFile = outcome.walkthroughPath ?? a.walkthroughSession;
  // The agent's file, never read through a link (src/agent/agent-files.ts): a refused one is no walkthrough.
  const wtText = await readAgentText(a.sessionDir, wtFile, (m) => void a.warnings.push(m));
  const completed = completeWalkthrough(wtText, {
    task_id: taskId,
    run_id: runId,
    attempt,
    branch: a.branch,
    base_ref: a.built.taskContext.baseRef,
    head_sha: work.headForFacts,
    time_spent_minutes: Math.round(((end.tAgentEnd - end.tAgent) / 60_000) * 10) / 10,
    files_changed: work.filesChanged,
    agent: outcome.agent ?? deps.agent.name,
    ...((outcome.model ?? config.agent.model) ? { model: outcome.model ?? config.agent.model } : {}),
    ...(outcome.models?.length ? { models: outcome.models.slice(0, 32) } : {}),
    ...(outcome.costUsd !== undefined ? { cost_usd: outcome.costUsd } : {}),
    ...(outcome.turns !== undefined ? { turns: outcome.turns } : {}),
  });
  a.warnings.push(...completed.warnings);
  if (!completed.ok) {
    if (succeeded(verdict.exitCode)) {
      verdict.exitCode = EXIT_CODES.FAILURE;
      verdict.errors.push(`walkthrough: ${completed.error}`);
    } else if (wtText !== undefined) a.warnings.push(`walkthrough ignored: ${completed.error}`);
  } else if (verdict.exitCode === EXIT_CODES.SUCCESS && completed.frontmatter.status === "partial") {
    verdict.exitCode = EXIT_CODES.PARTIAL_SUCCESS;
  } else if (verdict.exitCode === EXIT_CODES.SUCCESS && completed.frontmatter.status === "failed") {
    verdict.exitCode = EXIT_CODES.FAILURE;
    verdict.errors.push("the walkthrough reports status: failed");
  }
  if (completed.ok) await writeFile(a.walkthroughSession, completed.markdown);
  else await rm(a.walkthroughSession, { force: true });
  return completed;
}
