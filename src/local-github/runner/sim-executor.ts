// The glue between the local GitHub's runs (`sim.onWorkflowDispatch`: dispatched, and started by
// push or pull_request) and the job executor: every job of a run goes through a runner pool, with a token minted for
// that job, its steps and logs reported back to the run, and cancellation wired to the run's signal.
import { realClock, type Clock } from "../../core/clock.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { DispatchedRun, DispatchHandler } from "../workflows/index.js";
import { describeJob, RunnerLostError, type Annotation, type JobConclusion, type RunContext, type RunJobOptions } from "./executor.js";
import { createRunnerPool, type QueuedJob, type RunnerPool } from "./pool.js";
import { sourceOf } from "./expressions.js";
import { readWorkflow, type StepSpec } from "./workflow.js";

export interface SimExecutorOptions {
  /** Runners available at once (default 4). Ignored when `pool` is given. */
  concurrency?: number;
  pool?: RunnerPool;
  /** Where job workspaces go (default: a temporary folder). */
  workspaceRoot?: string;
  /** Keep each job's workspace after it completes (default false). */
  keepWorkspaces?: boolean;
  /** Repository secrets and variables (`secrets.*`, `vars.*`), by repository full name or for all ("*"). */
  secrets?: Record<string, Record<string, string>>;
  vars?: Record<string, Record<string, string>>;
  /** Machine environment for the steps (see RunJobOptions.env). */
  env?: Record<string, string>;
  killGraceMs?: number;
  /** The OS user the steps run as (see RunJobOptions.runAs; the executor must be root). */
  runAs?: RunJobOptions["runAs"];
  actions?: RunJobOptions["actions"];
  /** Remote actions served from local folders (see RunJobOptions.localActions). */
  localActions?: RunJobOptions["localActions"];
  /** After a runner is killed, how long GitHub takes to fail the job (default 0 ms here; minutes on GitHub). */
  lostRunnerDelayMs?: number;
  /** What that delay is waited on (src/core/clock.ts; real time by default). The steps' own timeouts bound real processes: real time. */
  clock?: Clock;
}

export interface ActiveJob {
  runId: number;
  jobName: string;
  job: QueuedJob;
}

export interface SimExecutor {
  /** Pass to `sim.onWorkflowDispatch`. */
  handler: DispatchHandler;
  pool: RunnerPool;
  /** Jobs queued or running now: `kill()` one to simulate a runner dying mid-job. */
  active(): ActiveJob[];
  /** Removes the workspace root if the executor created it (call after the sim is closed). */
  dispose(): void;
}

/** The step names GitHub shows before a job runs (no expressions evaluated). */
function staticStepName(step: StepSpec): string {
  if (typeof step.name === "string") return step.name;
  if (step.run !== undefined) return `Run ${sourceOf(step.run).split("\n")[0]!.trim()}`;
  return `Run ${step.uses ?? ""}`;
}

/** Something holding or awaiting a concurrency group: a run, or a job. */
interface Slot {
  cancel(message: string): void;
}

interface Group {
  running: Slot | null;
  pending: { slot: Slot; resolve: (admitted: boolean) => void } | null;
}

/**
 * `concurrency:` as GitHub applies it ("Control the concurrency of workflows and jobs"): at most
 * one running and one pending per group in a repository; a newly queued one replaces (cancels) the
 * pending one; with `cancel-in-progress` it also cancels the running one.
 */
class ConcurrencyGroups {
  private readonly groups = new Map<string, Group>();

  /** Resolves true when the slot may run, false when it was cancelled while pending. */
  enter(key: string, group: string, cancelInProgress: boolean, slot: Slot, signal: AbortSignal): Promise<boolean> {
    let g = this.groups.get(key);
    if (!g) {
      g = { running: null, pending: null };
      this.groups.set(key, g);
    }
    if (!g.running) {
      g.running = slot;
      return Promise.resolve(true);
    }
    const message = `Canceling since a higher priority waiting request for '${group}' exists`;
    if (cancelInProgress) g.running.cancel(message);
    const replaced = g.pending;
    if (replaced) {
      g.pending = null;
      replaced.resolve(false);
      replaced.slot.cancel(message);
    }
    const entry = g;
    return new Promise<boolean>((resolve) => {
      entry.pending = { slot, resolve };
      signal.addEventListener(
        "abort",
        () => {
          if (entry.pending?.slot === slot) {
            entry.pending = null;
            resolve(false);
          }
        },
        { once: true },
      );
    });
  }

  leave(key: string, slot: Slot): void {
    const g = this.groups.get(key);
    if (!g || g.running !== slot) return;
    g.running = null;
    const next = g.pending;
    if (next) {
      g.pending = null;
      g.running = next.slot;
      next.resolve(true);
    } else {
      this.groups.delete(key);
    }
  }
}

/** What the functions below share: the options, the pool, the workspace root, the jobs running, the groups. */
interface ExecutorState {
  options: SimExecutorOptions;
  pool: RunnerPool;
  root: string;
  active: Set<ActiveJob>;
  groups: ConcurrencyGroups;
}

function contextOf({ options }: ExecutorState, d: DispatchedRun, jobName: string | null): RunContext {
  const fullName = `${d.repo.owner.login}/${d.repo.name}`;
  return {
    repository: fullName,
    ref: d.ref,
    sha: d.sha,
    serverUrl: d.serverUrl,
    apiUrl: d.apiUrl,
    gitUrl: d.cloneUrl,
    // Minting a token is left to the moment a job really starts.
    token: jobName === null ? "" : d.token(jobName),
    runId: d.run.id,
    runNumber: d.run.runNumber,
    runAttempt: d.run.runAttempt,
    actor: d.actor.login,
    triggeringActor: d.run.triggeringActor.login,
    eventName: d.event,
    ...(d.eventPayload ? { event: d.eventPayload } : {}),
    // "With the exception of GITHUB_TOKEN, secrets are not passed to the runner when a workflow is
    // triggered from a forked repository."
    // The executor's own secrets, then the repository's stored ones (the REST API's and the control API's).
    secrets: d.fromFork ? {} : { ...(options.secrets?.["*"] ?? {}), ...(options.secrets?.[fullName] ?? {}), ...d.secrets },
    vars: { ...(options.vars?.["*"] ?? {}), ...(options.vars?.[fullName] ?? {}) },
    workflowPath: d.run.path,
  };
}

/** One job of a run: its job-level concurrency group first (wait, or give way to a newer job), then the pool. */
async function runOne(
  s: ExecutorState,
  d: DispatchedRun,
  jobId: string,
  jobName: string,
  stepNames: string[],
  runSignal: AbortSignal,
): Promise<void> {
  const fullName = `${d.repo.owner.login}/${d.repo.name}`;
  // Job-level concurrency: wait for the group, or give way to a newer job.
  const concurrency = (await describeJob({ workflowText: d.yaml, jobId, inputs: d.inputs, context: contextOf(s, d, null) })).concurrency
    .job;
  const abort = new AbortController();
  const onRunAbort = () => abort.abort();
  if (runSignal.aborted) abort.abort();
  else runSignal.addEventListener("abort", onRunAbort, { once: true });
  const slot: Slot = {
    cancel: (message) => {
      d.log(jobName, `${message}\n`);
      abort.abort();
    },
  };
  const groupKey = concurrency ? `${fullName}\u0000${concurrency.group}` : null;
  try {
    if (groupKey && concurrency && !(await s.groups.enter(groupKey, concurrency.group, concurrency.cancelInProgress, slot, abort.signal))) {
      d.completeJob(jobName, "cancelled");
      return;
    }
    await runAdmitted(s, d, jobId, jobName, stepNames, abort.signal);
  } finally {
    runSignal.removeEventListener("abort", onRunAbort);
    if (groupKey) s.groups.leave(groupKey, slot);
  }
}

/** A job admitted to run: submitted to the pool, its steps and logs reported to the run as they happen. */
async function runAdmitted(
  s: ExecutorState,
  d: DispatchedRun,
  jobId: string,
  jobName: string,
  stepNames: string[],
  signal: AbortSignal,
): Promise<void> {
  const { options } = s;
  const dir = mkdtempSync(path.join(s.root, `run-${d.run.id}-${jobId}-`));

  let started = false;
  const ensureStarted = () => {
    if (!started) {
      started = true;
      d.startJob(jobName, stepNames);
    }
  };
  const job = s.pool.submit({
    workflowText: d.yaml,
    jobId,
    inputs: d.inputs,
    context: contextOf(s, d, jobName),
    workspace: path.join(dir, "work"),
    runnerTemp: path.join(dir, "temp"),
    signal,
    ...(options.env ? { env: options.env } : {}),
    ...(options.killGraceMs !== undefined ? { killGraceMs: options.killGraceMs } : {}),
    ...(options.runAs ? { runAs: options.runAs } : {}),
    ...(options.actions ? { actions: options.actions } : {}),
    ...(options.localActions ? { localActions: options.localActions } : {}),
    runnerName: `forge-sim-runner-${d.run.id}-${jobId}`,
    onStep: (e) => {
      ensureStarted();
      if (e.type === "started") {
        d.step(jobName, e.step.number, "in_progress");
        d.log(jobName, `##[group]${e.step.name}\n`);
      } else if (e.type === "log") {
        d.log(jobName, `${e.line}\n`);
      } else {
        if (e.step.startedAt) d.log(jobName, "##[endgroup]\n");
        d.step(jobName, e.step.number, "completed", e.step.conclusion);
      }
    },
  });
  const entry: ActiveJob = { runId: d.run.id, jobName, job };
  s.active.add(entry);
  void job.started.then(ensureStarted);
  let conclusion: JobConclusion;
  let annotations: Annotation[] = [];
  try {
    const result = await job.result;
    ensureStarted();
    if (result.error) d.log(jobName, `##[error]${result.error}\n`);
    conclusion = result.conclusion;
    annotations = result.steps.flatMap((s) => s.annotations);
  } catch (err) {
    if (!(err instanceof RunnerLostError)) throw err;
    // GitHub notices a vanished runner only after a while, then fails the job.
    await (options.clock ?? realClock).sleep(options.lostRunnerDelayMs ?? 0);
    ensureStarted();
    d.log(
      jobName,
      "##[error]The runner has received a shutdown signal. This can happen when the runner service is stopped, or a manually started runner is canceled.\n",
    );
    conclusion = "failure";
  } finally {
    s.active.delete(entry);
    if (!options.keepWorkspaces) rmSync(dir, { recursive: true, force: true });
  }
  d.completeJob(jobName, conclusion, annotations);
}

/** A dispatched run: its workflow-level concurrency group, then every job side by side. */
async function handleDispatch(s: ExecutorState, d: DispatchedRun): Promise<void> {
  const wf = await readWorkflow(d.yaml, d.run.path);
  const fullName = `${d.repo.owner.login}/${d.repo.name}`;
  const jobs = Object.entries(wf.jobs).map(([jobId, job]) => ({
    jobId,
    job,
    jobName: typeof job.name === "string" ? job.name : jobId,
  }));

  // Workflow-level concurrency: the whole run waits for its group, or is replaced while waiting.
  const abort = new AbortController();
  const onRunAbort = () => abort.abort();
  if (d.signal.aborted) abort.abort();
  else d.signal.addEventListener("abort", onRunAbort, { once: true });
  const concurrency = (await describeJob({ workflowText: d.yaml, jobId: jobs[0]!.jobId, inputs: d.inputs, context: contextOf(s, d, null) }))
    .concurrency.workflow;
  const slot: Slot = {
    cancel: (message) => {
      for (const j of jobs) d.log(j.jobName, `${message}\n`);
      abort.abort();
    },
  };
  const groupKey = concurrency ? `${fullName}\u0000${concurrency.group}` : null;
  try {
    if (groupKey && concurrency && !(await s.groups.enter(groupKey, concurrency.group, concurrency.cancelInProgress, slot, abort.signal))) {
      for (const j of jobs) d.completeJob(j.jobName, "cancelled");
      d.complete("cancelled");
      return;
    }
    // Jobs without `needs` run side by side, as on GitHub; `needs` is not supported by the sim runner.
    await Promise.all(
      jobs.map(({ jobId, job, jobName }) => {
        if (job.needs !== undefined) {
          d.startJob(jobName);
          d.log(jobName, `##[error]jobs.${jobId}.needs is not supported by the Forge sim runner\n`);
          d.completeJob(jobName, "failure");
          return Promise.resolve();
        }
        return runOne(s, d, jobId, jobName, job.steps.map(staticStepName), abort.signal);
      }),
    );
  } finally {
    d.signal.removeEventListener("abort", onRunAbort);
    if (groupKey) s.groups.leave(groupKey, slot);
  }
  d.complete(abort.signal.aborted ? "cancelled" : undefined);
}

export function createSimExecutor(options: SimExecutorOptions = {}): SimExecutor {
  const pool = options.pool ?? createRunnerPool({ concurrency: options.concurrency ?? 4 });
  const ownRoot = options.workspaceRoot === undefined;
  const root = options.workspaceRoot ?? mkdtempSync(path.join(tmpdir(), "forge-sim-runner-"));
  const state: ExecutorState = { options, pool, root, active: new Set<ActiveJob>(), groups: new ConcurrencyGroups() };
  return {
    handler: (d) => handleDispatch(state, d),
    pool,
    active: () => [...state.active],
    dispose: () => {
      if (ownRoot && !options.keepWorkspaces) rmSync(root, { recursive: true, force: true });
    },
  };
}
