// One job of a workflow from its start to its result: the folders and event file a runner
// prepares, the job's `env:`, `if:` and timeout, the cancellation, its steps in order (then the
// post steps of its node actions, in reverse), its `outputs:`. The state its steps share lives
// here; each step is a StepRun (step.ts).
import { rmSync } from "node:fs";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { ChildProcess } from "node:child_process";
import type { JobConclusion, JobResult, RunContext, RunJobOptions, StepResult } from "./executor.js";
import { parseDispatchInputs } from "./dispatch-inputs.js";
import {
  evaluateCondition,
  evaluateStringMap,
  evaluateTemplate,
  type ExpressionContext,
  type ExprValue,
  type JobStatus,
} from "./expressions.js";
import { Masker } from "./file-commands.js";
import { buildEvent, githubContext, refName } from "./github-context.js";
import type { ActionDef } from "./load-action.js";
import { killGroup } from "./process.js";
import { giveFolders } from "./run-as.js";
import { minutesToMs, nowIso, StepRun } from "./step.js";
import {
  readWorkflow,
  resolveConcurrency,
  resolvePermissions,
  selectJob,
  type JobSpec,
  type Permissions,
  type RunDefaults,
  type StepSpec,
  type WorkflowSpec,
} from "./workflow.js";

/** What startJob() lets the job see of its handle: a kill(), and where the steps so far go. */
export interface ExecHooks {
  isKilled(): boolean;
  track(child: ChildProcess): void;
  steps: StepResult[];
}

/** A node action's post step, queued by its main step and run at the end of the job. */
export interface PostStep {
  action: ActionDef;
  step: StepSpec;
  number: number;
  state: Record<string, string>;
  inputs: Record<string, string>;
  env: Record<string, string>;
}

const HOST_ENV_KEYS = ["PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "TZ", "TMPDIR", "TERM"];

/** The folders and event file of a job, made before it starts. */
interface JobFolders {
  workspace: string;
  runnerTemp: string;
  /** RUNNER_TEMP was made here (and goes at the end of the job). */
  ownTemp: boolean;
  toolCache: string;
  commandsDir: string;
  eventPath: string;
  event: Record<string, unknown>;
}

interface JobStart extends JobFolders {
  startedAt: string;
  wf: WorkflowSpec;
  jobId: string;
  job: JobSpec;
  eventName: string;
  dispatch: { inputs: Record<string, ExprValue>; eventInputs: Record<string, string> };
}

async function prepareFolders(options: RunJobOptions, eventInputs: Record<string, string>): Promise<JobFolders> {
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
  const event = buildEvent(options.context, eventInputs);
  await writeFile(eventPath, JSON.stringify(event, null, 2));
  if (options.runAs) await giveFolders(options.runAs, [workspace, runnerTemp]);
  return { workspace, runnerTemp, ownTemp, toolCache, commandsDir, eventPath, event };
}

export class JobRun {
  readonly context: RunContext;
  readonly workspace: string;
  readonly runnerTemp: string;
  readonly commandsDir: string;
  readonly gitUrl: string;
  readonly killGraceMs: number;
  readonly cancelTimeoutMs: number;
  readonly masker = new Masker();
  /** `steps.<id>` of the expressions. */
  readonly stepsCtx: Record<string, ExprValue> = {};
  readonly steps: StepResult[];
  readonly summaries: string[] = [];
  /** The job's `env:` (with the workflow's), evaluated once. */
  readonly jobEnv: Record<string, string> = {};
  /** GITHUB_ENV and GITHUB_PATH of the steps so far. */
  readonly addedEnv: Record<string, string> = {};
  readonly addedPath: string[] = [];
  /** Process groups of the steps, killed at the end of the job like the runner's orphan cleanup. */
  readonly stepGroups: number[] = [];
  readonly posts: PostStep[] = [];
  readonly defaults: RunDefaults;
  /** Aborted by a cancel or the job's timeout: the running step is stopped. */
  readonly jobAbort = new AbortController();
  jobStatus: JobStatus = "success";
  jobTimedOut = false;
  private jobError: string | undefined;
  private readonly start: JobStart;
  private readonly runnerName: string;
  private readonly github: Record<string, ExprValue>;
  private readonly runner: Record<string, ExprValue>;
  private readonly secrets: Record<string, ExprValue>;
  private readonly vars: Record<string, ExprValue>;
  private readonly hostEnv: Record<string, string> = {};
  private readonly permissions: Permissions | null;
  private concurrency: JobResult["concurrency"] = { workflow: null, job: null };

  /** Reads the workflow (a file GitHub refuses throws its WorkflowError), picks the job, validates the dispatch inputs and prepares the folders. */
  static async start(options: RunJobOptions, signal: AbortSignal, hooks: ExecHooks): Promise<JobRun> {
    const startedAt = nowIso();
    const wf = await readWorkflow(options.workflowText, options.context.workflowPath);
    const [jobId, job] = selectJob(wf, options.jobId);
    const eventName = options.context.eventName ?? "workflow_dispatch";
    const dispatch =
      eventName === "workflow_dispatch"
        ? parseDispatchInputs(wf, options.inputs)
        : { inputs: {} as Record<string, ExprValue>, eventInputs: {} as Record<string, string> };
    const folders = await prepareFolders(options, dispatch.eventInputs);
    return new JobRun(options, signal, hooks, { startedAt, wf, jobId, job, eventName, dispatch, ...folders });
  }

  private constructor(
    readonly options: RunJobOptions,
    private readonly signal: AbortSignal,
    readonly hooks: ExecHooks,
    start: JobStart,
  ) {
    const context = options.context;
    this.start = start;
    this.context = context;
    this.workspace = start.workspace;
    this.runnerTemp = start.runnerTemp;
    this.commandsDir = start.commandsDir;
    this.runnerName = options.runnerName ?? "forge-sim-runner";
    this.killGraceMs = options.killGraceMs ?? 7_500;
    this.cancelTimeoutMs = options.cancelTimeoutMs ?? 5 * 60_000;
    this.gitUrl = context.gitUrl ?? `${context.serverUrl.replace(/\/$/, "")}/${context.repository}.git`;
    this.masker.add(context.token);
    for (const v of Object.values(context.secrets ?? {})) this.masker.add(v);
    this.github = githubContext(context, start.wf, start.jobId, start.workspace, start.eventPath, start.event);
    this.runner = {
      name: this.runnerName,
      os: "Linux",
      arch: process.arch === "arm64" ? "ARM64" : "X64",
      temp: start.runnerTemp,
      tool_cache: start.toolCache,
      environment: "self-hosted",
      debug: "",
    };
    this.secrets = { ...(context.secrets ?? {}), GITHUB_TOKEN: context.token };
    this.vars = { ...(context.vars ?? {}) };
    this.steps = hooks.steps;
    this.permissions = resolvePermissions(start.wf, start.job);
    for (const k of HOST_ENV_KEYS) if (process.env[k] !== undefined) this.hostEnv[k] = process.env[k]!;
    if (options.runAs) {
      const u = options.runAs;
      Object.assign(this.hostEnv, { HOME: u.home ?? start.runnerTemp }, u.user ? { USER: u.user, LOGNAME: u.user } : {});
    }
    Object.assign(this.hostEnv, options.env ?? {});
    this.defaults = { ...(start.wf.defaults?.run ?? {}), ...(start.job.defaults?.run ?? {}) };
  }

  /** The contexts of the job's expressions (the parser has refused those a place does not allow). */
  exprCtx(env: Record<string, string>, jobStatus?: JobStatus): ExpressionContext {
    return {
      contexts: {
        github: this.github,
        inputs: this.start.dispatch.inputs,
        secrets: this.secrets,
        vars: this.vars,
        env,
        steps: this.stepsCtx,
        runner: this.runner,
        job: { status: this.jobStatus, services: {} },
        // A job without a matrix: GitHub's strategy of one job, no matrix, no needs (jobs with `needs` are refused here).
        strategy: { "fail-fast": true, "job-index": 0, "job-total": 1, "max-parallel": 1 },
        matrix: null,
        needs: {},
      },
      workspace: this.workspace,
      ...(jobStatus ? { jobStatus } : {}),
    };
  }

  /** The machine's environment plus what GitHub's runner sets for every step. */
  baseEnv(): Record<string, string> {
    const { context, start, github, runner } = this;
    const { name: ref_name, type: ref_type } = refName(context.ref);
    return {
      ...this.hostEnv,
      CI: "true",
      GITHUB_ACTIONS: "true",
      GITHUB_ACTOR: context.actor,
      GITHUB_ACTOR_ID: "",
      GITHUB_API_URL: context.apiUrl,
      GITHUB_BASE_REF: String(github.base_ref),
      GITHUB_EVENT_NAME: start.eventName,
      GITHUB_EVENT_PATH: start.eventPath,
      GITHUB_GRAPHQL_URL: String(github.graphql_url),
      GITHUB_HEAD_REF: String(github.head_ref),
      GITHUB_JOB: start.jobId,
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
      GITHUB_WORKSPACE: this.workspace,
      RUNNER_ARCH: String(runner.arch),
      RUNNER_ENVIRONMENT: "self-hosted",
      RUNNER_NAME: this.runnerName,
      RUNNER_OS: "Linux",
      RUNNER_TEMP: this.runnerTemp,
      RUNNER_TOOL_CACHE: start.toolCache,
    };
  }

  async run(): Promise<JobResult> {
    const { job } = this.start;
    const skippedOrFailed = this.evaluateJobLevel();
    if (skippedOrFailed) return skippedOrFailed;
    let jobTimeoutMs: number;
    try {
      jobTimeoutMs = minutesToMs(evaluateTemplate(job["timeout-minutes"], this.exprCtx(this.jobEnv)), "timeout-minutes") ?? 360 * 60_000;
    } catch (err) {
      this.jobError = (err as Error).message;
      return this.finish("failure");
    }
    const onCancel = () => {
      if (this.jobStatus !== "cancelled") this.jobStatus = "cancelled";
      this.jobAbort.abort();
    };
    if (this.signal.aborted) onCancel();
    else this.signal.addEventListener("abort", onCancel, { once: true });
    // eslint-disable-next-line no-restricted-globals -- a job's timeout bounds its real processes
    const jobTimer = setTimeout(() => {
      this.jobTimedOut = true;
      onCancel();
    }, jobTimeoutMs);
    jobTimer.unref();

    try {
      await this.runSteps(job.steps ?? []);
    } finally {
      clearTimeout(jobTimer);
      this.signal.removeEventListener("abort", onCancel);
      // Like the runner's orphan-process cleanup at the end of a job.
      for (const pid of this.stepGroups) killGroup(pid, "SIGKILL");
    }
    if (this.hooks.isKilled()) return new Promise<never>(() => {});

    let outputs: Record<string, string> = {};
    try {
      outputs = evaluateStringMap(job.outputs, () => this.exprCtx({ ...this.jobEnv, ...this.addedEnv }));
    } catch (err) {
      this.jobError ??= (err as Error).message;
      this.jobStatus = this.jobStatus === "success" ? "failure" : this.jobStatus;
    }
    const conclusion: JobConclusion = this.jobTimedOut ? "timed_out" : this.jobStatus;
    return this.finish(conclusion, outputs);
  }

  /** Job-level env and `if:`; an invalid expression here fails the job before any step. A result when the job ends here. */
  private evaluateJobLevel(): JobResult | undefined {
    const { wf, job, jobId } = this.start;
    try {
      this.concurrency = resolveConcurrency(wf, job, this.exprCtx({}));
      Object.assign(
        this.jobEnv,
        evaluateStringMap(wf.env, () => this.exprCtx({})),
      );
      Object.assign(
        this.jobEnv,
        evaluateStringMap(job.env, () => this.exprCtx({ ...this.jobEnv })),
      );
      if (!evaluateCondition(job.if, { ...this.exprCtx(this.jobEnv), jobStatus: "success" })) return this.finish("skipped");
      for (const key of ["strategy", "services", "container", "uses"] as const) {
        if (job[key] !== undefined) throw new Error(`jobs.${jobId}.${key} is not supported by the Forge sim runner`);
      }
    } catch (err) {
      this.jobError = (err as Error).message;
      return this.finish("failure");
    }
    return undefined;
  }

  /** The steps in order, then the queued post steps in reverse; a killed runner runs nothing more. */
  private async runSteps(specs: StepSpec[]): Promise<void> {
    let number = 0;
    for (const spec of specs) {
      if (this.hooks.isKilled()) break;
      await new StepRun(this, spec, ++number, spec.run !== undefined ? "run" : "action").run();
    }
    for (const p of [...this.posts].reverse()) {
      if (this.hooks.isKilled()) break;
      await new StepRun(this, p.step, ++number, "post", p).run();
    }
  }

  private finish(conclusion: JobConclusion, outputs: Record<string, string> = {}): JobResult {
    const { job, jobId } = this.start;
    // Mask again with every secret known at the end: a value masked by ::add-mask:: may have been
    // printed (e.g. in the script echo) before it was registered.
    for (const s of this.steps) s.log = s.log.map((l) => this.masker.mask(l));
    if (this.start.ownTemp) rmSync(this.runnerTemp, { recursive: true, force: true });
    return {
      jobId,
      jobName: typeof job.name === "string" ? job.name : jobId,
      conclusion,
      steps: this.steps.map((s) => ({ ...s })),
      outputs,
      summary: this.summaries.join(""),
      ...(this.jobError ? { error: this.masker.mask(this.jobError) } : {}),
      permissions: this.permissions,
      concurrency: this.concurrency,
      runnerName: this.runnerName,
      startedAt: this.start.startedAt,
      completedAt: nowIso(),
    };
  }
}
