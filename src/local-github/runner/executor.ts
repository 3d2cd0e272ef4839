// The sim runner's job executor: runs one job of a workflow in a workspace directory, the way a
// GitHub-hosted runner would, with no HTTP and no GitHub. See README.md beside this file. This file
// is the public surface (types, startJob, runJob, describeJob); a job runs in job.ts, a step in step.ts.
import type { ChildProcess } from "node:child_process";
import type { StepUser } from "./run-as.js";
import type { BuiltinAction } from "./builtin-actions.js";
import { parseDispatchInputs } from "./dispatch-inputs.js";
import { evaluateString, evaluateTemplate, type ExpressionContext } from "./expressions.js";
import { buildEvent, githubContext } from "./github-context.js";
import { JobRun, type ExecHooks } from "./job.js";
import { killGroup } from "./process.js";
import { readWorkflow, resolveConcurrency, resolvePermissions, selectJob, type Concurrency, type Permissions } from "./workflow.js";

export { inputEnvName, resolveShell } from "./step.js";

export interface RunContext {
  /** `owner/name`. */
  repository: string;
  /** Fully qualified, e.g. `refs/heads/forge/r1/t1/1`. */
  ref: string;
  sha: string;
  /** e.g. `http://127.0.0.1:4000` (GITHUB_SERVER_URL). */
  serverUrl: string;
  /** e.g. `http://127.0.0.1:4000/api/v3` (GITHUB_API_URL). */
  apiUrl: string;
  /** Defaults to `<serverUrl>/api/graphql` for a `/api/v3` apiUrl (GHES layout), else `<apiUrl>/graphql`. */
  graphqlUrl?: string;
  /** Clone URL of `repository`; defaults to `<serverUrl>/<repository>.git`. A `file://` URL works too. */
  gitUrl?: string;
  /** The job's GITHUB_TOKEN (`github.token`, `secrets.GITHUB_TOKEN`); masked in logs. */
  token: string;
  runId: number | string;
  runNumber?: number;
  runAttempt?: number;
  actor: string;
  triggeringActor?: string;
  /** Defaults to `workflow_dispatch`. */
  eventName?: string;
  /** The webhook payload of the triggering event (GITHUB_EVENT_PATH). Built for workflow_dispatch when absent. */
  event?: Record<string, unknown>;
  secrets?: Record<string, string>;
  vars?: Record<string, string>;
  /** e.g. `.github/workflows/forge-agent.yml`; used for GITHUB_WORKFLOW_REF and the default workflow name. */
  workflowPath?: string;
}

export type StepConclusion = "success" | "failure" | "cancelled" | "skipped";
export type JobConclusion = "success" | "failure" | "cancelled" | "timed_out" | "skipped";

export interface Annotation {
  level: "error" | "warning" | "notice";
  message: string;
  properties: Record<string, string>;
}

export interface StepResult {
  /** 1-based, as GitHub numbers steps (the runner's "Set up job" is not counted). */
  number: number;
  id: string | null;
  name: string;
  kind: "run" | "action" | "post";
  /** `in_progress` only while the step runs (or in RunnerLostError.steps, for the step the runner died in). */
  status: "in_progress" | "completed";
  /** Before continue-on-error. */
  outcome: StepConclusion;
  /** After continue-on-error. */
  conclusion: StepConclusion;
  outputs: Record<string, string>;
  exitCode: number | null;
  timedOut: boolean;
  /** Why the step failed without an exit code (an expression error, a missing action…). */
  error?: string;
  /** Masked log lines. */
  log: string[];
  summary: string;
  annotations: Annotation[];
  startedAt: string | null;
  completedAt: string | null;
}

export interface JobResult {
  jobId: string;
  jobName: string;
  conclusion: JobConclusion;
  steps: StepResult[];
  /** The job's `outputs:`, evaluated after the steps. */
  outputs: Record<string, string>;
  /** The job summary: every step's GITHUB_STEP_SUMMARY, in order. */
  summary: string;
  /** A job-level failure that no step owns (bad `if:`, bad `env:`). */
  error?: string;
  permissions: Permissions | null;
  concurrency: { workflow: Concurrency | null; job: Concurrency | null };
  runnerName: string;
  startedAt: string;
  completedAt: string;
}

export type StepEvent =
  { type: "started"; step: StepResult } | { type: "completed"; step: StepResult } | { type: "log"; step: StepResult; line: string };

export interface RunJobOptions {
  workflowText: string;
  /** Required when the workflow has more than one job. */
  jobId?: string;
  /** Raw `workflow_dispatch` inputs (validated and defaulted here, as the API did before). */
  inputs?: Record<string, unknown>;
  context: RunContext;
  /** GITHUB_WORKSPACE; created if missing. */
  workspace: string;
  /** RUNNER_TEMP; a fresh temporary folder when absent. */
  runnerTemp?: string;
  /** RUNNER_TOOL_CACHE; `<runnerTemp>/_tool` when absent. */
  toolCache?: string;
  runnerName?: string;
  /** Aborting cancels the job like the Cancel button: the running step is stopped, `always()` steps still run. */
  signal?: AbortSignal;
  onStep?: (event: StepEvent) => void;
  /** Machine environment every step inherits (e.g. PATH additions, HOME). Defaults to a few host variables. */
  env?: Record<string, string>;
  /** Delay between SIGTERM and SIGKILL when a step is stopped. GitHub's runner waits several seconds. */
  killGraceMs?: number;
  /**
   * The OS user every step runs as (as GitHub's hosted runners run steps as `runner`); the executor
   * must be root. The workspace and RUNNER_TEMP become that user's.
   */
  runAs?: StepUser;
  /** Time allowed to each step that runs after a cancellation or job timeout (GitHub: cancel-timeout-minutes, 5). */
  cancelTimeoutMs?: number;
  /** Extra remote actions by name without `@ref` (e.g. `forge/setup`); actions/checkout and actions/setup-node are built in. */
  actions?: Record<string, BuiltinAction>;
  /**
   * Remote node actions served from a local folder, by name without `@ref`:
   * `{ "forge-dev/forge/action": "/path/to/forge/action" }` runs that folder's action.yml for
   * `uses: forge-dev/forge/action@v1` — no need to vendor the action into the repository.
   */
  localActions?: Record<string, string>;
}

/** The runner vanished mid-job (`JobHandle.kill()`): nothing was cleaned up and no conclusion was reported. */
export class RunnerLostError extends Error {
  /** Steps as far as they got. */
  readonly steps: StepResult[];
  constructor(steps: StepResult[]) {
    super("The runner has lost communication with the server (killed mid-job)");
    this.name = "RunnerLostError";
    this.steps = steps;
  }
}

export interface JobHandle {
  /** Settles with the job's result, or rejects with RunnerLostError after kill(). */
  result: Promise<JobResult>;
  /** Same as aborting `signal`. */
  cancel(): void;
  /** Simulates the runner dying: SIGKILL to the running step's process group, no later steps, no post steps. */
  kill(): void;
}

async function executeJob(options: RunJobOptions, signal: AbortSignal, hooks: ExecHooks): Promise<JobResult> {
  const job = await JobRun.start(options, signal, hooks);
  return job.run();
}

/** Start a job; see RunJobOptions. Throws synchronously for nothing: errors arrive through `result`. */
export function startJob(options: RunJobOptions): JobHandle {
  const controller = new AbortController();
  if (options.signal) {
    if (options.signal.aborted) controller.abort();
    else options.signal.addEventListener("abort", () => controller.abort(), { once: true });
  }
  let killed = false;
  const children = new Set<ChildProcess>();
  let rejectLost: (err: RunnerLostError) => void = () => {};
  const lost = new Promise<never>((_, reject) => {
    rejectLost = reject;
  });
  lost.catch(() => {});
  const stepsSoFar: StepResult[] = [];

  const result = Promise.race([
    executeJob(options, controller.signal, {
      isKilled: () => killed,
      track: (c) => {
        children.add(c);
        c.once("exit", () => children.delete(c));
      },
      steps: stepsSoFar,
    }),
    lost,
  ]);
  return {
    result,
    cancel: () => controller.abort(),
    kill: () => {
      if (killed) return;
      killed = true;
      for (const c of children) killGroup(c.pid, "SIGKILL");
      rejectLost(new RunnerLostError(stepsSoFar.map((s) => ({ ...s }))));
    },
  };
}

/** Run a job to its end. */
export function runJob(options: RunJobOptions): Promise<JobResult> {
  return startJob(options).result;
}

/**
 * What the server needs before it starts a job: which job, its `permissions` (to mint a scoped
 * token), its `concurrency` groups, its timeout. `inputs` are validated as for a dispatch; a
 * workflow GitHub refuses rejects with its WorkflowError.
 */
export async function describeJob(options: Pick<RunJobOptions, "workflowText" | "jobId" | "inputs" | "context">): Promise<{
  jobId: string;
  jobName: string;
  permissions: Permissions | null;
  concurrency: { workflow: Concurrency | null; job: Concurrency | null };
  timeoutMinutes: number;
}> {
  const wf = await readWorkflow(options.workflowText, options.context.workflowPath);
  const [jobId, job] = selectJob(wf, options.jobId);
  const dispatch =
    (options.context.eventName ?? "workflow_dispatch") === "workflow_dispatch"
      ? parseDispatchInputs(wf, options.inputs)
      : { inputs: {}, eventInputs: {} };
  const ctx: ExpressionContext = {
    contexts: {
      github: githubContext(options.context, wf, jobId, "", "", buildEvent(options.context, dispatch.eventInputs)),
      inputs: dispatch.inputs,
      vars: { ...(options.context.vars ?? {}) },
    },
  };
  const timeout = evaluateTemplate(job["timeout-minutes"] ?? 360, ctx);
  return {
    jobId,
    jobName: evaluateString(job.name ?? jobId, ctx),
    permissions: resolvePermissions(wf, job),
    concurrency: resolveConcurrency(wf, job, ctx),
    timeoutMinutes: Number(timeout),
  };
}
