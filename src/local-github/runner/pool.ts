// A queue of jobs with a concurrency limit, like a fleet of N runners: jobs wait `queued` until a
// runner is free, then run through startJob.
import { readWorkflow, selectJob } from "./workflow.js";
import { RunnerLostError, startJob, type JobHandle, type JobResult, type RunJobOptions } from "./executor.js";

export type QueuedJobState = "queued" | "in_progress" | "completed";

export interface QueuedJob {
  readonly id: number;
  /** Resolves when a runner picks the job up (never, if it is cancelled while queued). */
  readonly started: Promise<void>;
  /** The job's result; rejects with RunnerLostError after kill(). */
  readonly result: Promise<JobResult>;
  state(): QueuedJobState;
  /** Cancel: a queued job completes `cancelled` without running; a running one as JobHandle.cancel(). */
  cancel(): void;
  /** The runner dies: see JobHandle.kill(). A queued job is dropped the same way. */
  kill(): void;
}

export interface RunnerPool {
  submit(options: RunJobOptions): QueuedJob;
  readonly running: number;
  readonly queued: number;
  /** Resolves when nothing is queued or running. */
  idle(): Promise<void>;
}

async function cancelledResult(options: RunJobOptions): Promise<JobResult> {
  let jobId = options.jobId ?? "";
  try {
    jobId = selectJob(await readWorkflow(options.workflowText, options.context.workflowPath), options.jobId)[0];
  } catch {
    // keep what we have
  }
  const now = new Date().toISOString();
  return {
    jobId,
    jobName: jobId,
    conclusion: "cancelled",
    steps: [],
    outputs: {},
    summary: "",
    permissions: null,
    concurrency: { workflow: null, job: null },
    runnerName: "",
    startedAt: now,
    completedAt: now,
  };
}

export function createRunnerPool({ concurrency }: { concurrency: number }): RunnerPool {
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error("concurrency must be a positive integer");
  let running = 0;
  let nextId = 1;
  const waiting: Array<() => void> = [];
  let idleWaiters: Array<() => void> = [];

  const checkIdle = () => {
    if (running === 0 && waiting.length === 0) {
      const w = idleWaiters;
      idleWaiters = [];
      for (const f of w) f();
    }
  };
  const pump = () => {
    while (running < concurrency && waiting.length > 0) waiting.shift()!();
    checkIdle();
  };

  return {
    get running() {
      return running;
    },
    get queued() {
      return waiting.length;
    },
    idle() {
      return new Promise((resolve) => {
        idleWaiters.push(resolve);
        checkIdle();
      });
    },
    submit(options) {
      const id = nextId++;
      let state: QueuedJobState = "queued";
      let handle: JobHandle | null = null;
      let cancelledEarly = false;
      let resolveStarted!: () => void;
      const started = new Promise<void>((r) => (resolveStarted = r));
      let settle!: { resolve: (r: JobResult | Promise<JobResult>) => void; reject: (e: unknown) => void };
      const result = new Promise<JobResult>((resolve, reject) => (settle = { resolve, reject }));
      result.catch(() => {});

      const begin = () => {
        running++;
        state = "in_progress";
        handle = startJob(options);
        resolveStarted();
        handle.result.then(settle.resolve, settle.reject).finally(() => {
          state = "completed";
          running--;
          pump();
        });
      };
      const dequeue = (): boolean => {
        const i = waiting.indexOf(begin);
        if (i < 0) return false;
        waiting.splice(i, 1);
        state = "completed";
        cancelledEarly = true;
        checkIdle();
        return true;
      };
      waiting.push(begin);
      queueMicrotask(pump);

      return {
        id,
        started,
        result,
        state: () => state,
        cancel() {
          if (handle) handle.cancel();
          else if (!cancelledEarly && dequeue()) settle.resolve(cancelledResult(options));
        },
        kill() {
          if (handle) handle.kill();
          else if (!cancelledEarly && dequeue()) settle.reject(new RunnerLostError([]));
        },
      };
    },
  };
}
