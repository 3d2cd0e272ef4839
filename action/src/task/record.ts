/**
 * Step 8 of a task job: the record — result, events, signal, stage manifest, transcript, reports —
 * committed only in the attempt's folder, with the Forge-* trailers the App reads, then pushed
 * after the start commit (with the PR) has landed: the final push fast-forwards from it.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { assertNoLinks, readAgentText } from "../../../src/agent/agent-files.js";
import { writeSignal } from "../../../src/agent/signals.js";
import type { CompletedWalkthrough } from "../../../src/agent/walkthrough.js";
import { EXIT_CODES, exitMeaning, retryable, signalStatusOf, stageStatusOf, succeeded } from "../../../src/core/exit-codes.js";
import { TRAILERS, walkthroughPath } from "../../../src/core/layout.js";
import { agentResultSchema, type AgentResult } from "../../../src/core/schemas/agent-result.js";
import { messageWithTrailers } from "../git.js";
import { maskerOf, maskFolder } from "../publish.js";
import type { AgentEnd, Verdict } from "./agent.js";
import type { CollectedWork } from "./collect.js";
import { mark, type TaskAttempt } from "./context.js";
import { copyForRecord } from "./files.js";
import { writeExecutionReport } from "./execution-report.js";
import type { AttemptReports } from "./reports.js";
import { writeCheckpoint } from "./checkpoint.js";
import { attemptTraceId } from "./trace.js";

export interface Recorded {
  result: AgentResult;
  /** The verdict's errors, joined. */
  error?: string;
  /** The record commit. */
  recordSha: string;
}

export async function recordAttempt(
  a: TaskAttempt,
  end: AgentEnd,
  work: CollectedWork,
  completed: CompletedWalkthrough,
  verdict: Verdict,
  reports: AttemptReports = {},
): Promise<Recorded> {
  const { git, sessionDir } = a;
  const { runId, taskId, attempt } = a.ids;
  const { exitCode } = verdict;
  const masker = maskerOf(a.deps);
  const error = verdict.errors.length ? masker.mask(verdict.errors.join("; ")) : undefined;
  emitEnd(a, exitCode, error, completed);
  const result = await writeResult(a, end, work, completed, exitCode, error, reports);
  await writeManifest(a, end, exitCode, error);
  await writeSignal({
    sessionDir,
    layer: "orch",
    name: `job-${taskId}`,
    status: signalStatusOf(exitCode),
    artifactPath: path.join(sessionDir, "result.json"),
    traceId: attemptTraceId(a.ids),
    createdAt: new Date(end.tAgent),
    completedAt: new Date(a.now()),
    extra: { exit_code: exitCode },
  });
  await writeExecutionReport(sessionDir, {
    runId,
    taskId,
    attempt,
    agentType: a.node.agentType,
    agent: end.outcome.agent ?? a.deps.agent.name,
    ...(a.input.context.agent?.switched ? { switched: a.input.context.agent.switched } : {}),
    ...(result.model ? { model: result.model } : {}),
    traceId: attemptTraceId(a.ids),
    exitCode,
    ...(error ? { error } : {}),
    ...(end.supervised.stopped ? { stopped: end.supervised.stopped } : {}),
    t0: a.t0,
    tAgent: end.tAgent,
    tAgentEnd: end.tAgentEnd,
    tNow: a.now(),
    spend: {
      ...(result.cost_usd !== undefined ? { costUsd: result.cost_usd } : {}),
      ...(result.turns !== undefined ? { turns: result.turns } : {}),
      ...(a.spend.spent.tokens !== undefined ? { tokens: a.spend.spent.tokens } : {}),
      ...(result.proxy?.cost_usd !== undefined ? { proxyCostUsd: result.proxy.cost_usd } : {}),
      ...(end.budgetExceeded ? { budget: end.budgetExceeded } : {}),
    },
    live: a.live.entries,
  });
  // The session is published twice: as the record folder and as the workflow artifact. Masked once, here.
  await maskFolder(sessionDir, masker);
  // The record folder is in the agent's checkout: written only where no link of the agent's leads.
  const recordDir = path.join(a.input.workspace, a.recordRel);
  assertNoLinks(a.input.workspace, recordDir);
  await copyForRecord(sessionDir, recordDir);
  // -f: a repository may ignore .forge/runs; the record is committed regardless.
  await git.run(["add", "--force", "--", a.recordRel]);
  const recordSha = await git.commit(
    messageWithTrailers(`forge(${taskId}): record attempt ${attempt} (exit ${exitCode}: ${exitMeaning(exitCode)})`, error, [
      [TRAILERS.run, runId],
      [TRAILERS.task, taskId],
      [TRAILERS.attempt, String(attempt)],
      [TRAILERS.agent, end.outcome.agent ?? a.deps.agent.name],
      [TRAILERS.exit, String(exitCode)],
      ...(a.input.context.iteration ? [[TRAILERS.iteration, String(a.input.context.iteration)] as [string, string]] : []),
    ]),
  );
  mark(a, "record_commit");
  return { result, ...(error ? { error } : {}), recordSha };
}

/** The attempt's last event: completed, or failed (retryable unless the code says a person or the plan must act). */
function emitEnd(a: TaskAttempt, exitCode: number, error: string | undefined, completed: CompletedWalkthrough): void {
  const { events } = a;
  if (succeeded(exitCode)) {
    events.emit("task.completed", {
      agentId: events.agentId,
      status: completed.ok ? completed.frontmatter.status : "completed",
      ...(completed.ok ? { confidence: completed.frontmatter.confidence } : {}),
      attempt: a.ids.attempt,
    });
  } else {
    events.emit("task.failed", {
      agentId: events.agentId,
      error: error ?? exitMeaning(exitCode),
      attemptId: a.ids.attempt,
      exitCode,
      retryable: retryable(exitCode),
    });
  }
}

/** `result.json`: what the App reads of the attempt; the question, refinement and Change Request only with their exit codes. */
async function writeResult(
  a: TaskAttempt,
  end: AgentEnd,
  work: CollectedWork,
  completed: CompletedWalkthrough,
  exitCode: number,
  error: string | undefined,
  reports: AttemptReports,
): Promise<AgentResult> {
  const { config, deps, sessionDir, recordRel } = a;
  const { runId, taskId, attempt } = a.ids;
  const { outcome } = end;
  // The agent's reports, never read through a link (src/agent/agent-files.ts): a refused one is absent.
  const warn = (m: string) => void a.warnings.push(m);
  const question = outcome.question ?? (await readAgentText(sessionDir, path.join(sessionDir, "question.md"), warn));
  const refinement = outcome.refinement ?? (await readAgentText(sessionDir, path.join(sessionDir, "refinement.md"), warn));
  // The Change Request as reports.ts completed it (in the session's change-request.md): only with its exit code.
  const cr = exitCode === EXIT_CODES.NEEDS_ESCALATION ? reports.changeRequest : undefined;
  // The attempt's last checkpoint: where its stages stopped, at the head the record commit sits on.
  const progress = outcome.progress;
  const checkpoint = progress ? await writeCheckpoint(a, progress, work.headForFacts, true).catch(() => undefined) : undefined;
  // Its strings are published: the App posts the question, carries the refinement to the next dispatch, shows the error.
  const result: AgentResult = agentResultSchema.parse(
    maskerOf(a.deps).maskDeep({
      version: 1,
      run_id: runId,
      task_id: taskId,
      attempt,
      exit_code: exitCode,
      branch: a.branch,
      ...(work.workSha ? { head_sha: work.workSha } : {}),
      ...squashedField(a),
      ...(completed.ok ? { walkthrough_path: walkthroughPath(runId, taskId, attempt), walkthrough: completed.frontmatter } : {}),
      ...(error ? { error } : {}),
      ...(refinement && exitCode === EXIT_CODES.NEEDS_REFINEMENT ? { refinement: refinement.trim() } : {}),
      ...(question && exitCode === EXIT_CODES.HUMAN_INPUT ? { question: question.trim() } : {}),
      ...(cr ? { change_request_path: `${recordRel}/change-request.md`, change_request: cr } : {}),
      ...(outcome.rateLimitedUntil ? { rate_limited_until: outcome.rateLimitedUntil } : {}),
      started_at: new Date(end.tAgent).toISOString(),
      finished_at: new Date(a.now()).toISOString(),
      agent: outcome.agent ?? deps.agent.name,
      ...((outcome.model ?? config.agent.model) ? { model: outcome.model ?? config.agent.model } : {}),
      ...spendFields(a, end),
      ...(outcome.turns !== undefined ? { turns: outcome.turns } : {}),
      agent_ms: Math.max(0, Math.round(end.tAgentEnd - end.tAgent)),
      ...(outcome.sentinel ? { sentinel: outcome.sentinel } : {}),
      ...(checkpoint ? { checkpoint } : {}),
      ...(outcome.subAgents ? { sub_agents: outcome.subAgents } : {}),
    }),
  );
  await writeFile(path.join(sessionDir, "result.json"), `${JSON.stringify(result, null, 2)}\n`);
  return result;
}

/** The stage manifest at the top of the record: the agent layer's, else a one-stage one. */
async function writeManifest(a: TaskAttempt, end: AgentEnd, exitCode: number, error: string | undefined): Promise<void> {
  const manifest = path.join(a.sessionDir, "manifest.json");
  const theirs = end.outcome.manifestPath;
  const warn = (m: string) => void a.warnings.push(m);
  const text = theirs && theirs !== manifest ? await readAgentText(a.sessionDir, theirs, warn) : undefined;
  if (text !== undefined) await writeFile(manifest, text);
  if ((await readAgentText(a.sessionDir, manifest, warn)) !== undefined) return;
  // One stage, counted as the stage runner counts its stages: a partial success (12) is neither passed nor failed.
  const status = stageStatusOf(exitCode);
  const summary = { total: 1, passed: status === "success" ? 1 : 0, failed: status === "failure" ? 1 : 0, exit_code: exitCode };
  await writeFile(
    manifest,
    `${JSON.stringify({ orchestrator: `forge-${a.node.agentType}`, stages: [{ name: "agent", status, exit_code: exitCode, ...(error ? { error } : {}) }], summary }, null, 2)}\n`,
  );
}

/** The attempt's spend for result.json: the adapter's figures and the spend meter's, the higher; and a budget stop. */
function spendFields(a: TaskAttempt, end: AgentEnd): Pick<AgentResult, "cost_usd" | "tokens" | "budget_exceeded" | "proxy"> {
  const metered = a.spend.spent;
  const proxy = a.spend.proxy;
  const usd = [end.outcome.costUsd, metered.usd].filter((x): x is number => x !== undefined);
  const b = end.budgetExceeded;
  return {
    ...(usd.length ? { cost_usd: Math.max(...usd) } : {}),
    ...(metered.split ? { tokens: { ...metered.split } } : {}),
    ...(proxy
      ? {
          proxy: {
            requests: proxy.requests,
            input_tokens: proxy.input,
            output_tokens: proxy.output,
            ...(proxy.usd !== undefined ? { cost_usd: proxy.usd } : {}),
          },
        }
      : {}),
    ...(b
      ? {
          budget_exceeded: {
            ...(b.limit.usd !== undefined ? { limit_usd: b.limit.usd } : {}),
            ...(b.limit.tokens !== undefined ? { limit_tokens: b.limit.tokens } : {}),
            ...(b.spent.usd !== undefined ? { spent_usd: b.spent.usd } : {}),
            ...(b.spent.tokens !== undefined ? { spent_tokens: b.spent.tokens } : {}),
          },
        }
      : {}),
  };
}

/** A refinery on a linear branch: each upstream the runner squashed, and the commit that holds it (the App's containment check). */
function squashedField(a: TaskAttempt): Pick<AgentResult, "squashed"> {
  const squashed = a.built.taskContext.squashed ?? [];
  if (!squashed.length) return {};
  return { squashed: squashed.map((s) => ({ branch: s.branch, head_sha: s.head, commit_sha: s.commit })) };
}
