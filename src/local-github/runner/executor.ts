// The sim runner's job executor: runs one job of a workflow in a workspace directory, the way a
// GitHub-hosted runner would, with no HTTP and no GitHub. See README.md beside this file.
import { randomUUID } from "node:crypto";
import { existsSync, rmSync, statSync } from "node:fs";
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import type { ChildProcess } from "node:child_process";
import {
  evaluateCondition,
  ExpressionError,
  interpolate,
  interpolateString,
  type ExpressionContext,
  type ExprValue,
  type JobStatus,
} from "./expressions.js";
import { Masker, parseKeyValueFile, parsePathFile, parseWorkflowCommand, FileCommandError } from "./file-commands.js";
import { killGroup, runProcess, type ProcessResult } from "./process.js";
import { ActionFailedError, BUILTIN_ACTIONS, type BuiltinAction, type ExecResult } from "./builtin-actions.js";
import {
  parseDispatchInputs,
  parseWorkflow,
  resolveConcurrency,
  resolvePermissions,
  selectJob,
  type Concurrency,
  type Permissions,
  type StepSpec,
  type WorkflowSpec,
} from "./workflow.js";

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
  | { type: "started"; step: StepResult }
  | { type: "completed"; step: StepResult }
  | { type: "log"; step: StepResult; line: string };

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

const HOST_ENV_KEYS = ["PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "TZ", "TMPDIR", "TERM"];

function defaultGraphqlUrl(apiUrl: string): string {
  const u = apiUrl.replace(/\/$/, "");
  return u.endsWith("/api/v3") ? `${u.slice(0, -"/api/v3".length)}/api/graphql` : `${u}/graphql`;
}

function refName(ref: string): { name: string; type: "branch" | "tag" | "" } {
  if (ref.startsWith("refs/heads/")) return { name: ref.slice("refs/heads/".length), type: "branch" };
  if (ref.startsWith("refs/tags/")) return { name: ref.slice("refs/tags/".length), type: "tag" };
  return { name: ref, type: "" };
}

function minutesToMs(value: unknown, what: string): number | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${what} must be a positive number of minutes, got '${String(value)}'`);
  return n * 60_000;
}

function asStringRecord(v: Record<string, unknown> | undefined): Record<string, unknown> {
  return v && typeof v === "object" ? v : {};
}

interface ActionDef {
  kind: "node" | "builtin";
  name: string;
  dir?: string;
  main?: string;
  post?: string;
  postIf?: string;
  inputs: Record<string, { default?: unknown; required?: boolean }>;
  builtin?: BuiltinAction;
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
 * token), its `concurrency` groups, its timeout. `inputs` are validated as for a dispatch.
 */
export function describeJob(options: Pick<RunJobOptions, "workflowText" | "jobId" | "inputs" | "context">): {
  jobId: string;
  jobName: string;
  permissions: Permissions | null;
  concurrency: { workflow: Concurrency | null; job: Concurrency | null };
  timeoutMinutes: number;
} {
  const wf = parseWorkflow(options.workflowText);
  const [jobId, job] = selectJob(wf, options.jobId);
  const dispatch = (options.context.eventName ?? "workflow_dispatch") === "workflow_dispatch"
    ? parseDispatchInputs(options.workflowText, options.inputs)
    : { inputs: {}, eventInputs: {} };
  const ctx: ExpressionContext = {
    contexts: {
      github: githubContext(options.context, wf, jobId, "", "", buildEvent(options.context, dispatch.eventInputs)),
      inputs: dispatch.inputs,
      vars: { ...(options.context.vars ?? {}) },
    },
  };
  const timeout = interpolate(job["timeout-minutes"] ?? 360, ctx);
  return {
    jobId,
    jobName: interpolateString(job.name ?? jobId, ctx),
    permissions: resolvePermissions(wf, job),
    concurrency: resolveConcurrency(wf, job, ctx),
    timeoutMinutes: Number(timeout),
  };
}

function buildEvent(context: RunContext, eventInputs: Record<string, string>): Record<string, unknown> {
  if (context.event) return context.event;
  const [owner, name] = context.repository.split("/");
  // The workflow_dispatch payload: inputs (all strings), ref, repository, sender, workflow.
  return {
    inputs: eventInputs,
    ref: context.ref,
    repository: {
      name,
      full_name: context.repository,
      owner: { login: owner },
      html_url: `${context.serverUrl.replace(/\/$/, "")}/${context.repository}`,
    },
    sender: { login: context.actor },
    workflow: context.workflowPath ?? "",
  };
}

function githubContext(
  context: RunContext,
  wf: WorkflowSpec,
  jobId: string,
  workspace: string,
  eventPath: string,
  event: Record<string, unknown>,
): Record<string, ExprValue> {
  const { name: ref_name, type: ref_type } = refName(context.ref);
  const workflowName = wf.name ?? context.workflowPath ?? "workflow";
  return {
    action: "",
    action_path: "",
    actor: context.actor,
    api_url: context.apiUrl,
    base_ref: "",
    event: event as ExprValue,
    event_name: context.eventName ?? "workflow_dispatch",
    event_path: eventPath,
    graphql_url: context.graphqlUrl ?? defaultGraphqlUrl(context.apiUrl),
    head_ref: "",
    job: jobId,
    ref: context.ref,
    ref_name,
    ref_type,
    repository: context.repository,
    repository_owner: context.repository.split("/")[0] ?? "",
    retention_days: "90",
    run_attempt: String(context.runAttempt ?? 1),
    run_id: String(context.runId),
    run_number: String(context.runNumber ?? 1),
    server_url: context.serverUrl,
    sha: context.sha,
    token: context.token,
    triggering_actor: context.triggeringActor ?? context.actor,
    workflow: workflowName,
    workflow_ref: `${context.repository}/${context.workflowPath ?? ""}@${context.ref}`,
    workspace,
  };
}

function nowIso(): string {
  return new Date().toISOString();
}

interface ExecHooks {
  isKilled(): boolean;
  track(child: ChildProcess): void;
  steps: StepResult[];
}

async function executeJob(options: RunJobOptions, signal: AbortSignal, hooks: ExecHooks): Promise<JobResult> {
  const startedAt = nowIso();
  const context = options.context;
  const wf = parseWorkflow(options.workflowText);
  const [jobId, job] = selectJob(wf, options.jobId);
  const eventName = context.eventName ?? "workflow_dispatch";
  const dispatch = eventName === "workflow_dispatch"
    ? parseDispatchInputs(options.workflowText, options.inputs)
    : { inputs: {} as Record<string, ExprValue>, eventInputs: {} as Record<string, string> };

  const workspace = path.resolve(options.workspace);
  await mkdir(workspace, { recursive: true });
  // GitHub empties RUNNER_TEMP at the end of every job; a folder we made ourselves goes too
  // (unless the runner is killed: no cleanup then). A caller's own runnerTemp is left for it to read.
  const ownTemp = options.runnerTemp === undefined;
  const runnerTemp = options.runnerTemp ?? (await mkdtemp(path.join(tmpdir(), "forge-runner-")));
  await mkdir(runnerTemp, { recursive: true });
  const toolCache = options.toolCache ?? path.join(runnerTemp, "_tool");
  await mkdir(toolCache, { recursive: true });
  const commandsDir = path.join(runnerTemp, "_runner_file_commands");
  await mkdir(commandsDir, { recursive: true });
  const eventDir = path.join(runnerTemp, "_github_workflow");
  await mkdir(eventDir, { recursive: true });
  const eventPath = path.join(eventDir, "event.json");
  const event = buildEvent(context, dispatch.eventInputs);
  await writeFile(eventPath, JSON.stringify(event, null, 2));

  const runnerName = options.runnerName ?? "forge-sim-runner";
  const killGraceMs = options.killGraceMs ?? 7_500;
  const cancelTimeoutMs = options.cancelTimeoutMs ?? 5 * 60_000;
  const gitUrl = context.gitUrl ?? `${context.serverUrl.replace(/\/$/, "")}/${context.repository}.git`;

  const masker = new Masker();
  masker.add(context.token);
  for (const v of Object.values(context.secrets ?? {})) masker.add(v);

  const github = githubContext(context, wf, jobId, workspace, eventPath, event);
  const runner: Record<string, ExprValue> = {
    name: runnerName,
    os: "Linux",
    arch: process.arch === "arm64" ? "ARM64" : "X64",
    temp: runnerTemp,
    tool_cache: toolCache,
    environment: "self-hosted",
    debug: "",
  };
  const secrets: Record<string, ExprValue> = { ...(context.secrets ?? {}), GITHUB_TOKEN: context.token };
  const vars: Record<string, ExprValue> = { ...(context.vars ?? {}) };
  const stepsCtx: Record<string, ExprValue> = {};

  const exprCtx = (env: Record<string, string>, jobStatus?: JobStatus): ExpressionContext => ({
    contexts: { github, inputs: dispatch.inputs, secrets, vars, env, steps: stepsCtx, runner },
    ...(jobStatus ? { jobStatus } : {}),
  });

  const steps: StepResult[] = hooks.steps;
  const summaries: string[] = [];
  let jobStatus: JobStatus = "success";
  let jobTimedOut = false;
  let jobError: string | undefined;

  const permissions = resolvePermissions(wf, job);
  let concurrency: JobResult["concurrency"] = { workflow: null, job: null };

  const finish = (conclusion: JobConclusion, outputs: Record<string, string> = {}): JobResult => {
    // Mask again with every secret known at the end: a value masked by ::add-mask:: may have been
    // printed (e.g. in the script echo) before it was registered.
    for (const s of steps) s.log = s.log.map((l) => masker.mask(l));
    if (ownTemp) rmSync(runnerTemp, { recursive: true, force: true });
    return {
    jobId,
    jobName: typeof job.name === "string" && !job.name.includes("${{") ? job.name : jobId,
    conclusion,
    steps: steps.map((s) => ({ ...s })),
    outputs,
    summary: summaries.join(""),
    ...(jobError ? { error: masker.mask(jobError) } : {}),
    permissions,
    concurrency,
    runnerName,
    startedAt,
    completedAt: nowIso(),
    };
  };

  // Job-level env and `if:`; an invalid expression here fails the job before any step.
  const jobEnv: Record<string, string> = {};
  try {
    concurrency = resolveConcurrency(wf, job, exprCtx({}));
    for (const [k, v] of Object.entries(asStringRecord(wf.env))) jobEnv[k] = interpolateString(v, exprCtx({ ...jobEnv }));
    for (const [k, v] of Object.entries(asStringRecord(job.env))) jobEnv[k] = interpolateString(v, exprCtx({ ...jobEnv }));
    if (job.if !== undefined && !evaluateCondition(job.if, { ...exprCtx(jobEnv), jobStatus: "success" })) {
      return finish("skipped");
    }
    for (const key of ["strategy", "services", "container", "uses"] as const) {
      if (job[key] !== undefined) throw new Error(`jobs.${jobId}.${key} is not supported by the Forge sim runner`);
    }
  } catch (err) {
    jobError = (err as Error).message;
    return finish("failure");
  }

  let jobTimeoutMs: number;
  try {
    jobTimeoutMs = minutesToMs(interpolate(job["timeout-minutes"], exprCtx(jobEnv)), "timeout-minutes") ?? 360 * 60_000;
  } catch (err) {
    jobError = (err as Error).message;
    return finish("failure");
  }
  const jobAbort = new AbortController();
  const onCancel = () => {
    if (jobStatus !== "cancelled") jobStatus = "cancelled";
    jobAbort.abort();
  };
  if (signal.aborted) onCancel();
  else signal.addEventListener("abort", onCancel, { once: true });
  const jobTimer = setTimeout(() => {
    jobTimedOut = true;
    onCancel();
  }, jobTimeoutMs);
  jobTimer.unref();

  const addedEnv: Record<string, string> = {};
  const addedPath: string[] = [];
  const stepGroups: number[] = [];
  const posts: Array<{ action: ActionDef; step: StepSpec; number: number; state: Record<string, string>; inputs: Record<string, string>; env: Record<string, string> }> = [];

  const hostEnv: Record<string, string> = {};
  for (const k of HOST_ENV_KEYS) if (process.env[k] !== undefined) hostEnv[k] = process.env[k]!;
  Object.assign(hostEnv, options.env ?? {});

  const baseEnv = (): Record<string, string> => {
    const { name: ref_name, type: ref_type } = refName(context.ref);
    return {
      ...hostEnv,
      CI: "true",
      GITHUB_ACTIONS: "true",
      GITHUB_ACTOR: context.actor,
      GITHUB_ACTOR_ID: "",
      GITHUB_API_URL: context.apiUrl,
      GITHUB_BASE_REF: "",
      GITHUB_EVENT_NAME: eventName,
      GITHUB_EVENT_PATH: eventPath,
      GITHUB_GRAPHQL_URL: String(github.graphql_url),
      GITHUB_HEAD_REF: "",
      GITHUB_JOB: jobId,
      GITHUB_REF: context.ref,
      GITHUB_REF_NAME: ref_name,
      GITHUB_REF_PROTECTED: "false",
      GITHUB_REF_TYPE: ref_type,
      GITHUB_REPOSITORY: context.repository,
      GITHUB_REPOSITORY_OWNER: context.repository.split("/")[0] ?? "",
      GITHUB_RETENTION_DAYS: "90",
      GITHUB_RUN_ATTEMPT: String(context.runAttempt ?? 1),
      GITHUB_RUN_ID: String(context.runId),
      GITHUB_RUN_NUMBER: String(context.runNumber ?? 1),
      GITHUB_SERVER_URL: context.serverUrl,
      GITHUB_SHA: context.sha,
      GITHUB_TRIGGERING_ACTOR: context.triggeringActor ?? context.actor,
      GITHUB_WORKFLOW: String(github.workflow),
      GITHUB_WORKFLOW_REF: String(github.workflow_ref),
      GITHUB_WORKSPACE: workspace,
      RUNNER_ARCH: String(runner.arch),
      RUNNER_ENVIRONMENT: "self-hosted",
      RUNNER_NAME: runnerName,
      RUNNER_OS: "Linux",
      RUNNER_TEMP: runnerTemp,
      RUNNER_TOOL_CACHE: toolCache,
    };
  };

  const defaults = { ...(wf.defaults?.run ?? {}), ...(job.defaults?.run ?? {}) };
  const jobSteps = job.steps ?? [];
  const idCounts = new Map<string, number>();
  const autoId = (base: string): string => {
    const n = (idCounts.get(base) ?? 0) + 1;
    idCounts.set(base, n);
    return n === 1 ? base : `${base}_${n}`;
  };

  const runOne = async (
    spec: StepSpec,
    number: number,
    kind: StepResult["kind"],
    post?: (typeof posts)[number],
  ): Promise<void> => {
    const usesName = spec.uses?.split("@")[0] ?? "";
    const contextualId = spec.id ?? (spec.run !== undefined ? autoId("__run") : autoId(`__${usesName.replace(/[^A-Za-z0-9]+/g, "_").replace(/^_+/, "")}`));
    const env0 = { ...jobEnv, ...addedEnv };
    let displayName: string;
    try {
      displayName = spec.name !== undefined ? interpolateString(spec.name, exprCtx(env0)) : spec.run !== undefined ? `Run ${spec.run.split("\n")[0]!.trim()}` : `Run ${spec.uses ?? ""}`;
    } catch {
      displayName = String(spec.name);
    }
    if (kind === "post") displayName = `Post ${displayName.replace(/^Run /, "")}`;
    const step: StepResult = {
      number,
      id: spec.id ?? null,
      name: masker.mask(displayName),
      kind,
      status: "completed",
      outcome: "skipped",
      conclusion: "skipped",
      outputs: {},
      exitCode: null,
      timedOut: false,
      log: [],
      summary: "",
      annotations: [],
      startedAt: null,
      completedAt: null,
    };
    steps.push(step);
    const emit = (e: StepEvent) => {
      if (hooks.isKilled() || !options.onStep) return;
      try {
        options.onStep(e);
      } catch (err) {
        // A listener's bug must not change the job's outcome.
        console.error(`onStep listener failed: ${(err as Error).message}`);
      }
    };
    const recordStep = () => {
      if (spec.id && kind !== "post") stepsCtx[spec.id] = { outputs: { ...step.outputs }, outcome: step.outcome, conclusion: step.conclusion };
    };

    // `if:` — post steps use the action's `post-if` (default always()).
    let run: boolean;
    // Whether this step runs because of a cancellation (an always()/cancelled() step): such a step
    // is not stopped by the cancel again. Decided with its `if:`, so a cancel that lands while the
    // step is being set up still stops it.
    const runsAfterCancel = jobStatus === "cancelled";
    try {
      const condition = kind === "post" ? (post?.action.postIf ?? "always()") : spec.if;
      run = evaluateCondition(condition, { ...exprCtx(env0), jobStatus });
    } catch (err) {
      step.startedAt = nowIso();
      step.error = (err as Error).message;
      step.log.push(`##[error]${masker.mask(step.error)}`);
      step.outcome = step.conclusion = "failure";
      step.completedAt = nowIso();
      jobStatus = jobStatus === "cancelled" ? jobStatus : "failure";
      recordStep();
      emit({ type: "completed", step });
      return;
    }
    if (!run) {
      recordStep();
      emit({ type: "completed", step });
      return;
    }

    step.startedAt = nowIso();
    step.status = "in_progress";
    emit({ type: "started", step });
    const log = (line: string) => {
      const masked = masker.mask(line);
      step.log.push(masked);
      emit({ type: "log", step, line: masked });
    };

    // Per-step file commands.
    const files = {
      GITHUB_OUTPUT: path.join(commandsDir, `set_output_${randomUUID()}`),
      GITHUB_ENV: path.join(commandsDir, `set_env_${randomUUID()}`),
      GITHUB_PATH: path.join(commandsDir, `add_path_${randomUUID()}`),
      GITHUB_STEP_SUMMARY: path.join(commandsDir, `step_summary_${randomUUID()}`),
      GITHUB_STATE: path.join(commandsDir, `save_state_${randomUUID()}`),
    };
    await Promise.all(Object.values(files).map((f) => writeFile(f, "")));

    let failure: string | undefined;
    let proc: ProcessResult | undefined;
    let outputsFromBuiltin: Record<string, string> = {};
    let stopCommandsToken: string | null = null;

    const onLine = (line: string) => {
      if (stopCommandsToken !== null) {
        if (line.trim() === `::${stopCommandsToken}::`) stopCommandsToken = null;
        log(line);
        return;
      }
      const cmd = parseWorkflowCommand(line);
      if (cmd) {
        switch (cmd.command) {
          case "add-mask":
            masker.add(cmd.value);
            log(`::add-mask::***`);
            return;
          case "error":
          case "warning":
          case "notice":
            step.annotations.push({ level: cmd.command, message: masker.mask(cmd.value), properties: cmd.properties });
            log(`##[${cmd.command}]${cmd.value}`);
            return;
          case "stop-commands":
            stopCommandsToken = cmd.value;
            log(line);
            return;
          case "debug":
            return;
          default:
            break;
        }
      }
      log(line);
    };

    try {
      // Environment: machine + GITHUB_* + job env + GITHUB_ENV so far + step env.
      const ctxEnv = { ...jobEnv, ...addedEnv };
      const stepEnv: Record<string, string> = {};
      for (const [k, v] of Object.entries(asStringRecord(spec.env))) stepEnv[k] = interpolateString(v, exprCtx({ ...ctxEnv, ...stepEnv }));
      const env: Record<string, string> = { ...baseEnv(), ...jobEnv, ...addedEnv, ...stepEnv, ...files, GITHUB_ACTION: contextualId };
      if (addedPath.length > 0) env.PATH = [...addedPath, env.PATH ?? ""].join(path.delimiter);
      const allCtxEnv = { ...ctxEnv, ...stepEnv };

      // The job's own timeout is the job timer's business (it cancels, and the job ends timed_out);
      // a step has its own timeout-minutes, and steps run after a cancel are capped by cancelTimeoutMs.
      const stepTimeout = minutesToMs(interpolate(spec["timeout-minutes"], exprCtx(allCtxEnv)), "timeout-minutes");
      const stepDeadline = Date.now() + Math.min(stepTimeout ?? Infinity, runsAfterCancel ? cancelTimeoutMs : Infinity);
      // After a cancellation, steps that still run (always()) are not stopped by it again.
      const stepSignal = runsAfterCancel ? undefined : jobAbort.signal;

      const exec = async (command: string, args: string[], cwd: string, extraEnv: Record<string, string> = {}): Promise<ExecResult> => {
        const lines: string[] = [];
        const r = await runProcess({
          command,
          args,
          cwd,
          env: { ...env, ...extraEnv },
          onLine: (l) => {
            lines.push(l);
            onLine(l);
          },
          // A step that runs several commands (checkout) shares one deadline among them.
          timeoutMs: Math.max(0, stepDeadline - Date.now()),
          ...(stepSignal ? { signal: stepSignal } : {}),
          killGraceMs,
          onSpawn: (c) => {
            hooks.track(c);
            if (c.pid !== undefined) stepGroups.push(c.pid);
            if (hooks.isKilled()) killGroup(c.pid, "SIGKILL");
          },
        });
        return { ...r, lines };
      };

      if (kind === "post" && post) {
        // Post step of a node action: same inputs, plus STATE_* from its main step.
        const stateEnv = Object.fromEntries(Object.entries(post.state).map(([k, v]) => [`STATE_${k}`, v]));
        const inputEnv = Object.fromEntries(Object.entries(post.inputs).map(([k, v]) => [inputEnvName(k), v]));
        proc = await exec(process.execPath, [path.join(post.action.dir!, post.action.post!)], workspace, {
          ...post.env,
          ...inputEnv,
          ...stateEnv,
          GITHUB_ACTION_PATH: post.action.dir!,
        });
      } else if (spec.run !== undefined) {
        const script = interpolateString(spec.run, exprCtx(allCtxEnv));
        const shellSpec = spec.shell ?? defaults.shell;
        const { command, args, ext } = resolveShell(shellSpec === undefined ? undefined : interpolateString(shellSpec, exprCtx(allCtxEnv)));
        const wd0 = spec["working-directory"] ?? defaults["working-directory"];
        const cwd = wd0 === undefined ? workspace : path.resolve(workspace, interpolateString(wd0, exprCtx(allCtxEnv)));
        if (!existsSync(cwd) || !statSync(cwd).isDirectory()) throw new ActionFailedError(`No such file or directory: working-directory '${cwd}'`);
        const scriptPath = path.join(runnerTemp, `${randomUUID()}${ext}`);
        await writeFile(scriptPath, script);
        for (const l of script.replace(/\n$/, "").split("\n")) step.log.push(masker.mask(`##[command]${l}`));
        proc = await exec(command, args.map((a) => a.replace("{0}", scriptPath)), cwd);
      } else {
        const uses = interpolateString(spec.uses!, exprCtx(allCtxEnv));
        const action = await loadAction(uses, workspace, options.actions, options.localActions);
        const withValues: Record<string, string> = {};
        for (const [k, v] of Object.entries(asStringRecord(spec.with))) withValues[k] = interpolateString(v, exprCtx(allCtxEnv));
        const known = Object.keys(action.inputs);
        const unexpected = Object.keys(withValues).filter((k) => !known.some((n) => n.toLowerCase() === k.toLowerCase()));
        if (unexpected.length > 0) {
          // GitHub's runner warns and runs anyway.
          const message = `Unexpected input(s) '${unexpected.join("', '")}', valid inputs are ['${known.join("', '")}']`;
          step.annotations.push({ level: "warning", message, properties: {} });
          log(`##[warning]${message}`);
        }
        const inputs: Record<string, string> = {};
        for (const [name, def] of Object.entries(action.inputs)) {
          const given = Object.keys(withValues).find((k) => k.toLowerCase() === name.toLowerCase());
          if (given !== undefined) inputs[name] = withValues[given]!;
          else if (def.default !== undefined) inputs[name] = interpolateString(def.default, exprCtx(allCtxEnv));
          else inputs[name] = "";
        }
        for (const k of unexpected) inputs[k] = withValues[k]!;
        log(`Run ${uses}`);
        if (action.kind === "builtin") {
          const out = await action.builtin!.run({
            inputs,
            workspace,
            repository: context.repository,
            ref: context.ref,
            sha: context.sha,
            serverUrl: context.serverUrl,
            gitUrl,
            token: context.token,
            exec: (command, args, o) => exec(command, args, o?.cwd ?? workspace),
            log,
            mask: (s) => masker.add(s),
          });
          outputsFromBuiltin = out?.outputs ?? {};
          if (jobAbort.signal.aborted && jobStatus === "cancelled" && stepSignal) proc = { exitCode: null, signal: null, stoppedBy: jobTimedOut ? "timed_out" : "cancelled" };
        } else {
          const inputEnv = Object.fromEntries(Object.entries(inputs).map(([k, v]) => [inputEnvName(k), v]));
          proc = await exec(process.execPath, [path.join(action.dir!, action.main!)], workspace, {
            ...inputEnv,
            GITHUB_ACTION_PATH: action.dir!,
          });
          if (action.post) posts.push({ action, step: spec, number, state: {}, inputs, env: stepEnv });
        }
      }
    } catch (err) {
      if (err instanceof ExpressionError || err instanceof ActionFailedError || err instanceof Error) {
        failure = err.message;
        if (!runsAfterCancel && jobAbort.signal.aborted && jobStatus === "cancelled" && !(err instanceof ExpressionError)) {
          proc = { exitCode: null, signal: null, stoppedBy: jobTimedOut ? "timed_out" : "cancelled" };
        }
      } else {
        failure = String(err);
      }
    }

    if (hooks.isKilled()) return;

    // Read the file commands, whatever the outcome (GitHub does too).
    try {
      const outText = await readFile(files.GITHUB_OUTPUT, "utf8");
      for (const [k, v] of parseKeyValueFile(outText, "GITHUB_OUTPUT")) step.outputs[k] = v;
      const envText = await readFile(files.GITHUB_ENV, "utf8");
      for (const [k, v] of parseKeyValueFile(envText, "GITHUB_ENV")) {
        if (k.toUpperCase() === "NODE_OPTIONS") {
          // GitHub refuses NODE_OPTIONS from GITHUB_ENV.
          log(`##[warning]Can't store NODE_OPTIONS output parameter using '$GITHUB_ENV' command.`);
          continue;
        }
        addedEnv[k] = v;
      }
      addedPath.unshift(...parsePathFile(await readFile(files.GITHUB_PATH, "utf8")).reverse());
      const state = parseKeyValueFile(await readFile(files.GITHUB_STATE, "utf8"), "GITHUB_STATE");
      const pending = posts.find((p) => p.number === number);
      if (pending) for (const [k, v] of state) pending.state[k] = v;
      step.summary = await readFile(files.GITHUB_STEP_SUMMARY, "utf8");
      if (step.summary) summaries.push(step.summary);
    } catch (err) {
      if (err instanceof FileCommandError) failure ??= err.message;
      else throw err;
    }
    Object.assign(step.outputs, outputsFromBuiltin);

    let outcome: StepConclusion;
    if (proc?.stoppedBy === "cancelled" || (proc?.stoppedBy === "timed_out" && jobTimedOut)) {
      outcome = "cancelled";
      log(jobTimedOut ? `##[error]The job has exceeded the maximum execution time` : "##[error]The operation was canceled.");
    } else if (proc?.stoppedBy === "timed_out") {
      outcome = "failure";
      step.timedOut = true;
      log(`##[error]The action '${displayName}' has timed out after ${spec["timeout-minutes"] as string} minutes.`);
    } else if (failure !== undefined) {
      outcome = "failure";
      step.error = masker.mask(failure);
      log(`##[error]${failure}`);
    } else if (proc?.spawnError) {
      outcome = "failure";
      step.error = proc.spawnError.message;
      log(`##[error]${proc.spawnError.message}`);
    } else if (proc && proc.exitCode !== 0) {
      outcome = "failure";
      step.exitCode = proc.exitCode;
      log(`##[error]Process completed with exit code ${proc.exitCode ?? proc.signal}.`);
    } else {
      outcome = "success";
      if (proc) step.exitCode = proc.exitCode;
    }
    if (proc && step.exitCode === null) step.exitCode = proc.exitCode;
    step.outcome = outcome;
    let continueOnError = false;
    try {
      continueOnError = outcome === "failure" && isTrue(interpolate(spec["continue-on-error"] ?? false, exprCtx({ ...jobEnv, ...addedEnv })));
    } catch {
      continueOnError = false;
    }
    step.conclusion = continueOnError ? "success" : outcome;
    if (step.conclusion === "failure" && jobStatus === "success") jobStatus = "failure";
    if (outcome === "cancelled") jobStatus = "cancelled";
    step.completedAt = nowIso();
    step.status = "completed";
    recordStep();
    emit({ type: "completed", step });
  };

  try {
    let number = 0;
    for (const spec of jobSteps) {
      if (hooks.isKilled()) break;
      await runOne(spec, ++number, spec.run !== undefined ? "run" : "action");
    }
    for (const p of [...posts].reverse()) {
      if (hooks.isKilled()) break;
      await runOne(p.step, ++number, "post", p);
    }
  } finally {
    clearTimeout(jobTimer);
    signal.removeEventListener("abort", onCancel);
    // Like the runner's orphan-process cleanup at the end of a job.
    for (const pid of stepGroups) killGroup(pid, "SIGKILL");
  }
  if (hooks.isKilled()) return new Promise<never>(() => {});

  const outputs: Record<string, string> = {};
  for (const [k, v] of Object.entries(asStringRecord(job.outputs))) {
    try {
      outputs[k] = interpolateString(v, exprCtx({ ...jobEnv, ...addedEnv }));
    } catch (err) {
      jobError ??= (err as Error).message;
      jobStatus = jobStatus === "success" ? "failure" : jobStatus;
    }
  }
  const conclusion: JobConclusion = jobTimedOut ? "timed_out" : jobStatus;
  return finish(conclusion, outputs);
}

function isTrue(v: unknown): boolean {
  return v === true || v === "true";
}

/** `INPUT_<NAME>`: upper-cased, spaces to underscores (as the runner and @actions/core agree). */
export function inputEnvName(name: string): string {
  return `INPUT_${name.replace(/ /g, "_").toUpperCase()}`;
}

/**
 * `shell:` as GitHub maps it (Workflow syntax → jobs.<id>.steps[*].shell): unspecified is
 * `bash -e {0}`; `bash` is `bash --noprofile --norc -eo pipefail {0}`; `sh` is `sh -e {0}`; a
 * custom shell must contain `{0}`.
 */
export function resolveShell(shell: string | undefined): { command: string; args: string[]; ext: string } {
  if (shell === undefined || shell === "") return { command: "bash", args: ["-e", "{0}"], ext: ".sh" };
  if (shell === "bash") return { command: "bash", args: ["--noprofile", "--norc", "-eo", "pipefail", "{0}"], ext: ".sh" };
  if (shell === "sh") return { command: "sh", args: ["-e", "{0}"], ext: ".sh" };
  if (shell.includes("{0}")) {
    const [command, ...args] = shell.trim().split(/\s+/);
    return { command: command!, args, ext: command === "node" ? ".js" : "" };
  }
  throw new ActionFailedError(`shell '${shell}' is not supported by the Forge sim runner (use bash, sh, or a command with {0})`);
}

async function loadAction(
  uses: string,
  workspace: string,
  extra: Record<string, BuiltinAction> | undefined,
  localActions: Record<string, string> | undefined,
): Promise<ActionDef> {
  const mapped = uses.includes("@") ? localActions?.[uses.split("@")[0]!] : undefined;
  if (uses.startsWith("./") || uses.startsWith("../") || mapped !== undefined) {
    const dir = mapped !== undefined ? path.resolve(mapped) : path.resolve(workspace, uses);
    const file = ["action.yml", "action.yaml"].map((f) => path.join(dir, f)).find((f) => existsSync(f));
    if (!file) throw new ActionFailedError(`Can't find 'action.yml' or 'action.yaml' under '${dir}'. Did you forget to run actions/checkout before running your local action?`);
    const doc = parseYaml(await readFile(file, "utf8")) as {
      name?: string;
      inputs?: Record<string, { default?: unknown; required?: boolean }>;
      runs?: { using?: string; main?: string; post?: string; pre?: string; "post-if"?: string };
    };
    const using = doc?.runs?.using;
    if (using !== "node20" && using !== "node24") {
      throw new ActionFailedError(`Action '${uses}' uses runs.using '${String(using)}': the Forge sim runner runs only node20 and node24 actions`);
    }
    if (!doc.runs?.main) throw new ActionFailedError(`Action '${uses}' has no runs.main`);
    if (doc.runs.pre) throw new ActionFailedError(`Action '${uses}' has runs.pre, which the Forge sim runner does not run`);
    return {
      kind: "node",
      name: doc.name ?? uses,
      dir,
      main: doc.runs.main,
      ...(doc.runs.post ? { post: doc.runs.post } : {}),
      ...(doc.runs["post-if"] ? { postIf: doc.runs["post-if"] } : {}),
      inputs: doc.inputs ?? {},
    };
  }
  const name = uses.split("@")[0]!;
  const builtin = extra?.[name] ?? BUILTIN_ACTIONS[name];
  if (!builtin || !uses.includes("@")) {
    throw new ActionFailedError(`Action '${uses}' is not available in the Forge sim runner (it runs local ./ actions, ${Object.keys(BUILTIN_ACTIONS).join(", ")}, actions passed in options.actions and folders mapped by options.localActions)`);
  }
  return { kind: "builtin", name, inputs: builtin.inputs, builtin };
}
