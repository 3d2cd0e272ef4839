/**
 * Step 5 of a task job: the agent, under heartbeats and time limits. Progress notes go to the
 * attempt's events with each heartbeat; a stage end pushes the work so far. The verdict starts
 * here: the agent's exit code, or the code of why it was stopped.
 */
import { kindModel } from "../../../src/core/agents.js";
import { EXIT_CODES } from "../../../src/core/exit-codes.js";
import type { AgentRunOutcome, AgentRunRequest } from "../agent-runner.js";
import { STAGE_NAMES, type StageName } from "../../../src/core/stages.js";
import { sentinelSetting } from "../../../src/core/sentinel.js";
import { carriedNotes, carriedSessionFile } from "./carried-session.js";
import { attemptDir } from "../../../src/core/layout.js";
import { exitCodeOfStop, supervise, type Supervised } from "../supervisor.js";
import { LIVE_KINDS } from "../live-report.js";
import { pushProgress } from "./branch.js";
import type { Spent } from "./spend.js";
import type { TaskAttempt } from "./context.js";

/** How the attempt stands: its exit code and the errors behind it, adjusted by the steps after the agent. */
export interface Verdict {
  exitCode: number;
  readonly errors: string[];
}

export interface AgentEnd {
  supervised: Supervised;
  outcome: AgentRunOutcome;
  /** When the agent started and ended (the job's clock). */
  tAgent: number;
  tAgentEnd: number;
  /** The runner stopped the agent at its budget: the cap and what it had spent. */
  budgetExceeded?: { limit: Spent; spent: Spent };
}

/** The attempt's cap from the config alone (a dispatch without one: an older App, or a test). */
function capOf(config: TaskAttempt["config"]): Spent | undefined {
  const { attempt_usd, attempt_tokens } = config.budgets;
  if (attempt_usd === undefined && attempt_tokens === undefined) return undefined;
  return {
    ...(attempt_usd !== undefined ? { usd: attempt_usd } : {}),
    ...(attempt_tokens !== undefined ? { tokens: attempt_tokens } : {}),
  };
}

export async function runAgent(a: TaskAttempt): Promise<{ end: AgentEnd; verdict: Verdict }> {
  const { config, deps, events, now, log, warnings } = a;
  const { attempt } = a.ids;
  const tAgent = now();
  const { live } = a;
  live.restart();
  // The live check run sits on the attempt's pushed start commit, once the draft PR's push landed.
  void a.branchState.prOpening.then(() => a.liveCheck.start(a.branchState.remoteHead)).catch(() => undefined);
  live.write({ layer: "job", stage: "agent", status: "start", detail: `${a.deps.agent.name} agent, type ${a.node.agentType}` });
  events.emit("task.started", { agentId: events.agentId, type: a.node.agentType, branch: a.branch, attempt });
  let progressNote: string | undefined;
  const meter = a.spend;
  const cap = a.input.context.budget ?? capOf(config);
  // The proxy refuses every model call once the cap is reached, even between the runner's checks.
  if (cap) deps.modelGate?.(() => meter.refusal(cap));
  let session = 0;
  // A resumed attempt's agent session: its conversation, carried in the earlier attempt's record on this branch.
  const r = a.input.context.resume;
  const carried = r?.session
    ? await carriedSessionFile(a.input.workspace, attemptDir(a.ids.runId, a.ids.taskId, r.fromAttempt), r.session)
    : undefined;
  // …and the progress notes that attempt's stages left in its record.
  const notes = r
    ? await carriedNotes(a.input.workspace, attemptDir(a.ids.runId, a.ids.taskId, r.fromAttempt), (m) => void a.warnings.push(m))
    : undefined;
  /** Stops the agent once its spend crossed the attempt's cap (checked on every event that may carry spend and every beat). */
  const checkBudget = (stop: (reason: "budget", detail: string) => void) => {
    const over = cap ? meter.over(cap) : undefined;
    if (!over || budgetStop) return;
    budgetStop = over;
    const what =
      over.limit.usd !== undefined && (over.spent.usd ?? 0) > over.limit.usd
        ? `spent $${(over.spent.usd ?? 0).toFixed(2)} of its $${over.limit.usd.toFixed(2)} budget`
        : `used ${over.spent.tokens ?? 0} of its ${over.limit.tokens ?? 0} tokens`;
    live.write({ layer: "job", stage: "agent", status: "budget", detail: what });
    stop("budget", what);
  };
  let budgetStop: ReturnType<typeof meter.over>;
  const taskModel = a.built.frontmatter.model ?? kindModel(a.node.agentType, config.agent);
  let stopNow: ((reason: "budget", detail: string) => void) | undefined;
  const supervised = await supervise(
    (ctl) => {
      stopNow = ctl.stop;
      return deps.agent
        .run({
          agentType: a.node.agentType,
          taskContext: a.built.taskContext,
          workdir: a.input.workspace,
          sessionDir: a.sessionDir,
          walkthroughPath: a.walkthroughSession,
          // The task's own model, else its kind's (`agent.kinds.<kind>.model`).
          ...(taskModel !== undefined ? { taskModel } : {}),
          signal: ctl.signal,
          ...(a.telemetry ? { traceparent: a.telemetry.traceparent } : {}),
          spendFile: meter.spendFile,
          // A task's work is checked by its sentinel unless the config or the task turns it off.
          sentinel: sentinelSetting(config, a.built.frontmatter),
          onProgress: (p) => {
            progressNote = p.summary;
            if (p.kind === "start") session++;
            meter.onProgress(p, session);
            if (p.costUsd !== undefined || p.tokens) checkBudget(ctl.stop);
            const status = p.kind ? LIVE_KINDS[p.kind] : undefined;
            if (status)
              live.write({
                layer: "stage",
                stage: p.stage ?? "agent",
                status,
                detail: p.summary,
                ...(p.tool ? { tool: p.tool } : {}),
                ...(p.turn !== undefined ? { turn: p.turn } : {}),
              });
            ctl.onProgress(p);
          },
          // The runner's own push is like a tool call in flight: silence is expected (only the idle limit applies).
          onStageEnd: async (stage, progress) => {
            ctl.onProgress({ summary: `pushing the work after stage ${stage}`, kind: "tool_use" });
            // The work so far and, on top, the checkpoint naming it (task/branch.ts, task/checkpoint.ts).
            await pushProgress(a, stage, progress).catch(
              (err: unknown) => void warnings.push(`could not push the work after stage ${stage}: ${(err as Error).message}`),
            );
            ctl.onProgress({ summary: `pushed the work after stage ${stage}`, kind: "tool_result" });
            live.write({ layer: "job", stage, status: "push", detail: `pushed the work after stage ${stage}` });
          },
          ...resumeRequest(a, carried, notes),
        })
        .catch((err: unknown): AgentRunOutcome => ({
          exitCode: EXIT_CODES.FAILURE,
          error: `the agent runner failed: ${(err as Error).message}`,
        }));
    },
    {
      heartbeatMs: config.heartbeat_interval_seconds * 1000,
      missedBeats: Math.max(1, Math.round(config.stale_threshold_seconds / config.heartbeat_interval_seconds)),
      idleMs: config.timeouts.idle_minutes * 60_000,
      wallClockMs: config.timeouts.agent_minutes * 60_000,
      ...(deps.cancel ? { cancel: deps.cancel } : {}),
      now,
      onBeat: (at) => {
        a.liveCheck.tick(at);
        meter.readFile();
        if (stopNow) checkBudget(stopNow);
        events.emit("task.heartbeat", { agentId: events.agentId, timestamp: new Date(at).toISOString() });
        if (progressNote) events.emit("task.progress", { attempt, message: progressNote });
        progressNote = undefined;
      },
      onStop: (reason, detail, _at, lastProgressAt) => {
        log.warning(`Stopping the agent: ${detail}.`);
        live.write({ layer: "job", stage: "agent", status: "stopped", detail: `${reason}: ${detail}` });
        if (reason !== "cancelled")
          events.emit("task.stale", {
            lastHeartbeat: new Date(lastProgressAt).toISOString(),
            threshold: config.stale_threshold_seconds,
            attempt,
          });
      },
    },
  );
  const tAgentEnd = now();
  meter.readFile();
  const outcome = supervised.outcome;
  live.write({ layer: "job", stage: "agent", status: "end", detail: `exit ${outcome.exitCode}` });
  const verdict: Verdict = { exitCode: outcome.exitCode, errors: [] };
  if (supervised.stopped) {
    let reason = supervised.stopped.reason;
    // GitHub stops a job that reaches timeout-minutes the way it cancels one (SIGINT to the step,
    // docs.github.com/actions/reference/workflow-cancellation-reference): near the job's limit it
    // is a timeout (retried), not a person's cancel.
    if (
      reason === "cancelled" &&
      a.input.jobStartedAt !== undefined &&
      now() - a.input.jobStartedAt >= config.timeouts.job_minutes * 60_000 * 0.97
    )
      reason = "wall_clock";
    verdict.exitCode = exitCodeOfStop(reason);
    verdict.errors.push(`the agent was stopped: ${supervised.stopped.detail}`);
  } else if (outcome.error) verdict.errors.push(outcome.error);
  return { end: { supervised, outcome, tAgent, tAgentEnd, ...(budgetStop ? { budgetExceeded: budgetStop } : {}) }, verdict };
}

/**
 * A resumed attempt (docs/executor.md#resuming), as the App dispatched it: the stage to start at, the
 * depth its checkpoint had used, and the agent session to continue — only one of this job's adapter.
 */
function resumeRequest(
  a: TaskAttempt,
  carried: string | undefined,
  notes: string | undefined,
): { resume?: NonNullable<AgentRunRequest["resume"]> } {
  const r = a.input.context.resume;
  if (!r) return {};
  const stage = r.stage !== undefined && (STAGE_NAMES as readonly string[]).includes(r.stage) ? (r.stage as StageName) : undefined;
  const session =
    r.session && r.session.adapter === a.deps.agent.name && stage !== undefined
      ? { id: r.session.id, stage, ...(carried ? { file: { path: carried, root: a.input.workspace } } : {}) }
      : undefined;
  return {
    resume: {
      fromAttempt: r.fromAttempt,
      ...(stage ? { stage } : {}),
      ...(session ? { session } : {}),
      ...(r.depthUsed !== undefined ? { depthUsed: r.depthUsed } : {}),
      ...(notes !== undefined ? { notes } : {}),
    },
  };
}
