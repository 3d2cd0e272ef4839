// The glue between the local GitHub's dispatch path (`sim.onWorkflowDispatch`) and the job
// executor: every job of a dispatched run goes through a runner pool, with a token minted for
// that job, its steps and logs reported back to the run, and cancellation wired to the run's signal.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { DispatchedRun, DispatchHandler } from "../workflows.js";
import { RunnerLostError, type JobConclusion, type RunJobOptions } from "./executor.js";
import { createRunnerPool, type QueuedJob, type RunnerPool } from "./pool.js";
import { parseWorkflow, type StepSpec } from "./workflow.js";

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
  actions?: RunJobOptions["actions"];
  /** After a runner is killed, how long GitHub takes to fail the job (default 0 ms here; minutes on GitHub). */
  lostRunnerDelayMs?: number;
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
  if (step.run !== undefined) return `Run ${step.run.split("\n")[0]!.trim()}`;
  return `Run ${step.uses ?? ""}`;
}

export function createSimExecutor(options: SimExecutorOptions = {}): SimExecutor {
  const pool = options.pool ?? createRunnerPool({ concurrency: options.concurrency ?? 4 });
  const ownRoot = options.workspaceRoot === undefined;
  const root = options.workspaceRoot ?? mkdtempSync(path.join(tmpdir(), "forge-sim-runner-"));
  const active = new Set<ActiveJob>();

  const runOne = async (d: DispatchedRun, jobId: string, jobName: string, stepNames: string[]): Promise<void> => {
    const fullName = `${d.repo.owner.login}/${d.repo.name}`;
    const dir = mkdtempSync(path.join(root, `run-${d.run.id}-${jobId}-`));
    let started = false;
    const ensureStarted = () => {
      if (!started) {
        started = true;
        d.startJob(jobName, stepNames);
      }
    };
    const job = pool.submit({
      workflowText: d.yaml,
      jobId,
      inputs: d.inputs,
      context: {
        repository: fullName,
        ref: d.ref,
        sha: d.sha,
        serverUrl: d.serverUrl,
        apiUrl: d.apiUrl,
        gitUrl: d.cloneUrl,
        token: d.token(jobName),
        runId: d.run.id,
        runNumber: d.run.runNumber,
        runAttempt: d.run.runAttempt,
        actor: d.actor.login,
        triggeringActor: d.run.triggeringActor.login,
        secrets: { ...(options.secrets?.["*"] ?? {}), ...(options.secrets?.[fullName] ?? {}) },
        vars: { ...(options.vars?.["*"] ?? {}), ...(options.vars?.[fullName] ?? {}) },
        workflowPath: d.run.path,
      },
      workspace: path.join(dir, "work"),
      runnerTemp: path.join(dir, "temp"),
      signal: d.signal,
      ...(options.env ? { env: options.env } : {}),
      ...(options.killGraceMs !== undefined ? { killGraceMs: options.killGraceMs } : {}),
      ...(options.actions ? { actions: options.actions } : {}),
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
    active.add(entry);
    void job.started.then(ensureStarted);
    let conclusion: JobConclusion;
    try {
      const result = await job.result;
      ensureStarted();
      if (result.error) d.log(jobName, `##[error]${result.error}\n`);
      conclusion = result.conclusion;
    } catch (err) {
      if (!(err instanceof RunnerLostError)) throw err;
      // GitHub notices a vanished runner only after a while, then fails the job.
      await new Promise((r) => setTimeout(r, options.lostRunnerDelayMs ?? 0));
      ensureStarted();
      d.log(jobName, "##[error]The runner has received a shutdown signal. This can happen when the runner service is stopped, or a manually started runner is canceled.\n");
      conclusion = "failure";
    } finally {
      active.delete(entry);
      if (!options.keepWorkspaces) rmSync(dir, { recursive: true, force: true });
    }
    d.completeJob(jobName, conclusion);
  };

  const handler: DispatchHandler = async (d) => {
    const wf = parseWorkflow(d.yaml);
    // Jobs without `needs` run side by side, as on GitHub; `needs` is not supported by the sim runner.
    await Promise.all(
      Object.entries(wf.jobs).map(([jobId, job]) => {
        const jobName = typeof job.name === "string" && !job.name.includes("${{") ? job.name : jobId;
        if (job.needs !== undefined) {
          d.startJob(jobName);
          d.log(jobName, `##[error]jobs.${jobId}.needs is not supported by the Forge sim runner\n`);
          d.completeJob(jobName, "failure");
          return Promise.resolve();
        }
        return runOne(d, jobId, jobName, (job.steps ?? []).map(staticStepName));
      }),
    );
    d.complete();
  };

  return {
    handler,
    pool,
    active: () => [...active],
    dispose: () => {
      if (ownRoot && !options.keepWorkspaces) rmSync(root, { recursive: true, force: true });
    },
  };
}
