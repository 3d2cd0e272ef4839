// One step of a job, as GitHub's runner runs it: its `if:`, its environment and per-step file
// commands, its process (a `run:` script, a node action, a built-in action, or a node action's
// post step), the workflow commands in its output, and its outcome. The job's shared state (env
// added by earlier steps, the job status, the masker) is the JobRun's (job.ts).
import { randomUUID } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { ActionFailedError, type ExecResult } from "./builtin-actions.js";
import type { StepConclusion, StepEvent, StepResult } from "./executor.js";
import {
  evaluateCondition,
  evaluateString,
  evaluateStringMap,
  evaluateTemplate,
  ExpressionError,
  sourceOf,
  type ExprValue,
} from "./expressions.js";
import {
  createStepFiles,
  FileCommandError,
  parseKeyValueFile,
  parsePathFile,
  parseWorkflowCommand,
  type StepFiles,
} from "./file-commands.js";
import type { JobRun, PostStep } from "./job.js";
import { loadAction, type ActionDef } from "./load-action.js";
import { killGroup, runProcess, type ProcessResult } from "./process.js";
import type { StepSpec } from "./workflow.js";

export function nowIso(): string {
  return new Date().toISOString();
}

export function minutesToMs(value: unknown, what: string): number | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${what} must be a positive number of minutes, got '${String(value)}'`);
  return n * 60_000;
}

function isTrue(v: ExprValue): boolean {
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

/** Runs a command of the step: its environment, its share of the step's deadline, the job's cancel. */
type Exec = (command: string, args: string[], cwd: string, extraEnv?: Record<string, string>) => Promise<ExecResult>;

export class StepRun {
  readonly step: StepResult;
  private readonly displayName: string;
  /** GITHUB_ACTION: the step's id, or `__run`, `__actions_checkout`… numbered as GitHub does. */
  private readonly contextualId: string;
  /** The env its `if:` and name see: the job's, plus GITHUB_ENV so far. */
  private readonly env0: Record<string, string>;
  /**
   * Whether this step runs because of a cancellation (an always()/cancelled() step): such a step
   * is not stopped by the cancel again. Decided with its `if:`, so a cancel that lands while the
   * step is being set up still stops it.
   */
  private runsAfterCancel = false;
  private stopCommandsToken: string | null = null;
  private failure: string | undefined;
  private proc: ProcessResult | undefined;
  private outputsFromBuiltin: Record<string, string> = {};
  /** Its `timeout-minutes`, evaluated. */
  private timeoutMinutes: ExprValue = null;

  constructor(
    private readonly job: JobRun,
    private readonly spec: StepSpec,
    private readonly number: number,
    private readonly kind: StepResult["kind"],
    private readonly post?: PostStep,
  ) {
    this.contextualId = spec.contextId;
    this.env0 = { ...job.jobEnv, ...job.addedEnv };
    let displayName: string;
    try {
      displayName =
        spec.name !== undefined
          ? evaluateString(spec.name, job.exprCtx(this.env0))
          : spec.run !== undefined
            ? `Run ${sourceOf(spec.run).split("\n")[0]!.trim()}`
            : `Run ${spec.uses ?? ""}`;
    } catch {
      displayName = sourceOf(spec.name);
    }
    if (kind === "post") displayName = `Post ${displayName.replace(/^Run /, "")}`;
    this.displayName = displayName;
    this.step = {
      number,
      id: spec.id ?? null,
      name: job.masker.mask(displayName),
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
    job.steps.push(this.step);
  }

  async run(): Promise<void> {
    if (!this.shouldRun()) return;
    const step = this.step;
    step.startedAt = nowIso();
    step.status = "in_progress";
    this.emit({ type: "started", step });
    const files = await createStepFiles(this.job.commandsDir, this.job.options.runAs);
    try {
      await this.execute(files);
    } catch (err) {
      if (err instanceof ExpressionError || err instanceof ActionFailedError || err instanceof Error) {
        this.failure = err.message;
        if (
          !this.runsAfterCancel &&
          this.job.jobAbort.signal.aborted &&
          this.job.jobStatus === "cancelled" &&
          !(err instanceof ExpressionError)
        ) {
          this.proc = this.stoppedByJob();
        }
      } else {
        this.failure = String(err);
      }
    }
    if (this.job.hooks.isKilled()) return;
    await this.readFileCommands(files);
    Object.assign(step.outputs, this.outputsFromBuiltin);
    this.conclude();
  }

  private emit(e: StepEvent): void {
    const { hooks, options } = this.job;
    if (hooks.isKilled() || !options.onStep) return;
    try {
      options.onStep(e);
    } catch (err) {
      // A listener's bug must not change the job's outcome.
      console.error(`onStep listener failed: ${(err as Error).message}`);
    }
  }

  private log(line: string): void {
    const masked = this.job.masker.mask(line);
    this.step.log.push(masked);
    this.emit({ type: "log", step: this.step, line: masked });
  }

  /** `steps.<id>` for later steps' expressions (post steps are not recorded). */
  private recordStep(): void {
    const step = this.step;
    if (this.spec.id && this.kind !== "post")
      this.job.stepsCtx[this.spec.id] = { outputs: { ...step.outputs }, outcome: step.outcome, conclusion: step.conclusion };
  }

  /** A process result for a step the job's cancel (or timeout) stopped. */
  private stoppedByJob(): ProcessResult {
    return { exitCode: null, signal: null, stoppedBy: this.job.jobTimedOut ? "timed_out" : "cancelled" };
  }

  /** `if:` — post steps use the action's `post-if` (default always()). A step that does not run is completed here. */
  private shouldRun(): boolean {
    const job = this.job;
    const step = this.step;
    this.runsAfterCancel = job.jobStatus === "cancelled";
    let run: boolean;
    try {
      // A post step's `post-if` as written (GitHub adds no success() to it); the parser made a step's `if:` GitHub's.
      const condition = this.kind === "post" ? (this.post?.action.postIf ?? "always()") : this.spec.if;
      run = evaluateCondition(condition, { ...job.exprCtx(this.env0), jobStatus: job.jobStatus });
    } catch (err) {
      step.startedAt = nowIso();
      step.error = (err as Error).message;
      step.log.push(`##[error]${job.masker.mask(step.error)}`);
      step.outcome = step.conclusion = "failure";
      step.completedAt = nowIso();
      job.jobStatus = job.jobStatus === "cancelled" ? job.jobStatus : "failure";
      this.recordStep();
      this.emit({ type: "completed", step });
      return false;
    }
    if (!run) {
      this.recordStep();
      this.emit({ type: "completed", step });
    }
    return run;
  }

  /** A line the step printed: workflow commands (`::add-mask::`, `::error::`, `::stop-commands::`…) are applied. */
  private onLine(line: string): void {
    if (this.stopCommandsToken !== null) {
      if (line.trim() === `::${this.stopCommandsToken}::`) this.stopCommandsToken = null;
      this.log(line);
      return;
    }
    const cmd = parseWorkflowCommand(line);
    if (cmd) {
      switch (cmd.command) {
        case "add-mask":
          this.job.masker.add(cmd.value);
          this.log(`::add-mask::***`);
          return;
        case "error":
        case "warning":
        case "notice":
          this.step.annotations.push({ level: cmd.command, message: this.job.masker.mask(cmd.value), properties: cmd.properties });
          this.log(`##[${cmd.command}]${cmd.value}`);
          return;
        case "stop-commands":
          this.stopCommandsToken = cmd.value;
          this.log(line);
          return;
        case "debug":
          return;
        default:
          break;
      }
    }
    this.log(line);
  }

  /** The step's environment and deadline, then its process: post step, `run:` script, or `uses:` action. */
  private async execute(files: StepFiles): Promise<void> {
    const job = this.job;
    const spec = this.spec;
    // Environment: machine + GITHUB_* + job env + GITHUB_ENV so far + step env.
    const ctxEnv = { ...job.jobEnv, ...job.addedEnv };
    const stepEnv = evaluateStringMap(spec.env, (soFar) => job.exprCtx({ ...ctxEnv, ...soFar }));
    const env: Record<string, string> = {
      ...job.baseEnv(),
      ...job.jobEnv,
      ...job.addedEnv,
      ...stepEnv,
      ...files,
      GITHUB_ACTION: this.contextualId,
    };
    if (job.addedPath.length > 0) env.PATH = [...job.addedPath, env.PATH ?? ""].join(path.delimiter);
    const allCtxEnv = { ...ctxEnv, ...stepEnv };

    // The job's own timeout is the job timer's business (it cancels, and the job ends timed_out);
    // a step has its own timeout-minutes, and steps run after a cancel are capped by cancelTimeoutMs.
    this.timeoutMinutes = evaluateTemplate(spec["timeout-minutes"], job.exprCtx(allCtxEnv));
    const stepTimeout = minutesToMs(this.timeoutMinutes, "timeout-minutes");
    // eslint-disable-next-line no-restricted-properties -- a step's timeout bounds its real processes
    const stepDeadline = Date.now() + Math.min(stepTimeout ?? Infinity, this.runsAfterCancel ? job.cancelTimeoutMs : Infinity);
    // After a cancellation, steps that still run (always()) are not stopped by it again.
    const stepSignal = this.runsAfterCancel ? undefined : job.jobAbort.signal;
    const exec: Exec = (command, args, cwd, extraEnv = {}) =>
      this.exec({ ...env, ...extraEnv }, stepDeadline, stepSignal, command, args, cwd);

    if (this.kind === "post" && this.post) this.proc = await this.runPost(exec, this.post);
    else if (spec.run !== undefined) this.proc = await this.runScript(exec, allCtxEnv);
    else await this.runUses(exec, allCtxEnv, stepEnv, stepSignal);
  }

  private async exec(
    env: Record<string, string>,
    deadline: number,
    signal: AbortSignal | undefined,
    command: string,
    args: string[],
    cwd: string,
  ): Promise<ExecResult> {
    const { hooks } = this.job;
    const lines: string[] = [];
    const r = await runProcess({
      command,
      args,
      cwd,
      env,
      ...(this.job.options.runAs ? { runAs: this.job.options.runAs } : {}),
      onLine: (l) => {
        lines.push(l);
        this.onLine(l);
      },
      // A step that runs several commands (checkout) shares one deadline among them.
      // eslint-disable-next-line no-restricted-properties -- a step's timeout bounds its real processes
      timeoutMs: Math.max(0, deadline - Date.now()),
      ...(signal ? { signal } : {}),
      killGraceMs: this.job.killGraceMs,
      onSpawn: (c) => {
        hooks.track(c);
        if (c.pid !== undefined) this.job.stepGroups.push(c.pid);
        if (hooks.isKilled()) killGroup(c.pid, "SIGKILL");
      },
    });
    return { ...r, lines };
  }

  /** Post step of a node action: same inputs, plus STATE_* from its main step. */
  private runPost(exec: Exec, post: PostStep): Promise<ExecResult> {
    const stateEnv = Object.fromEntries(Object.entries(post.state).map(([k, v]) => [`STATE_${k}`, v]));
    const inputEnv = Object.fromEntries(Object.entries(post.inputs).map(([k, v]) => [inputEnvName(k), v]));
    return exec(process.execPath, [path.join(post.action.dir!, post.action.post!)], this.job.workspace, {
      ...post.env,
      ...inputEnv,
      ...stateEnv,
      GITHUB_ACTION_PATH: post.action.dir!,
    });
  }

  /** `run:` — the script written to RUNNER_TEMP and run by its shell in its working directory. */
  private async runScript(exec: Exec, ctxEnv: Record<string, string>): Promise<ExecResult> {
    const { job, spec } = this;
    const script = evaluateString(spec.run, job.exprCtx(ctxEnv));
    const shellSpec = spec.shell ?? job.defaults.shell;
    const { command, args, ext } = resolveShell(shellSpec === undefined ? undefined : evaluateString(shellSpec, job.exprCtx(ctxEnv)));
    const wd0 = spec["working-directory"] ?? job.defaults["working-directory"];
    const cwd = wd0 === undefined ? job.workspace : path.resolve(job.workspace, evaluateString(wd0, job.exprCtx(ctxEnv)));
    if (!existsSync(cwd) || !statSync(cwd).isDirectory())
      throw new ActionFailedError(`No such file or directory: working-directory '${cwd}'`);
    const scriptPath = path.join(job.runnerTemp, `${randomUUID()}${ext}`);
    await writeFile(scriptPath, script);
    for (const l of script.replace(/\n$/, "").split("\n")) this.step.log.push(job.masker.mask(`##[command]${l}`));
    return exec(
      command,
      args.map((a) => a.replace("{0}", scriptPath)),
      cwd,
    );
  }

  /** `uses:` — a built-in action in process, or a node action (its post step queued for the job's end). */
  private async runUses(
    exec: Exec,
    ctxEnv: Record<string, string>,
    stepEnv: Record<string, string>,
    stepSignal: AbortSignal | undefined,
  ): Promise<void> {
    const { job, spec } = this;
    // `uses:` is never an expression on GitHub (the parser refuses one).
    const uses = spec.uses!;
    const action = await loadAction(uses, job.workspace, job.options.actions, job.options.localActions);
    const inputs = this.actionInputs(action, ctxEnv);
    this.log(`Run ${uses}`);
    if (action.kind === "builtin") {
      const { context } = job;
      const out = await action.builtin!.run({
        inputs,
        workspace: job.workspace,
        repository: context.repository,
        ref: context.ref,
        sha: context.sha,
        serverUrl: context.serverUrl,
        gitUrl: job.gitUrl,
        token: context.token,
        exec: (command, args, o) => exec(command, args, o?.cwd ?? job.workspace),
        log: (line) => this.log(line),
        mask: (s) => job.masker.add(s),
      });
      this.outputsFromBuiltin = out?.outputs ?? {};
      if (job.jobAbort.signal.aborted && job.jobStatus === "cancelled" && stepSignal) this.proc = this.stoppedByJob();
    } else {
      const inputEnv = Object.fromEntries(Object.entries(inputs).map(([k, v]) => [inputEnvName(k), v]));
      this.proc = await exec(process.execPath, [path.join(action.dir!, action.main!)], job.workspace, {
        ...inputEnv,
        GITHUB_ACTION_PATH: action.dir!,
      });
      if (action.post) job.posts.push({ action, step: spec, number: this.number, state: {}, inputs, env: stepEnv });
    }
  }

  /** The action's inputs: `with:` (names case-insensitive), else its defaults; unexpected ones warned about and passed on. */
  private actionInputs(action: ActionDef, ctxEnv: Record<string, string>): Record<string, string> {
    const { job } = this;
    const withValues = evaluateStringMap(this.spec.with, () => job.exprCtx(ctxEnv));
    const known = Object.keys(action.inputs);
    const unexpected = Object.keys(withValues).filter((k) => !known.some((n) => n.toLowerCase() === k.toLowerCase()));
    if (unexpected.length > 0) {
      // GitHub's runner warns and runs anyway.
      const message = `Unexpected input(s) '${unexpected.join("', '")}', valid inputs are ['${known.join("', '")}']`;
      this.step.annotations.push({ level: "warning", message, properties: {} });
      this.log(`##[warning]${message}`);
    }
    const inputs: Record<string, string> = {};
    for (const [name, def] of Object.entries(action.inputs)) {
      const given = Object.keys(withValues).find((k) => k.toLowerCase() === name.toLowerCase());
      if (given !== undefined) inputs[name] = withValues[given]!;
      else if (def.default !== undefined) inputs[name] = evaluateString(def.default, job.exprCtx(ctxEnv));
      else inputs[name] = "";
    }
    for (const k of unexpected) inputs[k] = withValues[k]!;
    return inputs;
  }

  /** Reads the file commands, whatever the outcome (GitHub does too). */
  private async readFileCommands(files: StepFiles): Promise<void> {
    const { job, step } = this;
    try {
      const outText = await readFile(files.GITHUB_OUTPUT, "utf8");
      for (const [k, v] of parseKeyValueFile(outText, "GITHUB_OUTPUT")) step.outputs[k] = v;
      const envText = await readFile(files.GITHUB_ENV, "utf8");
      for (const [k, v] of parseKeyValueFile(envText, "GITHUB_ENV")) {
        if (k.toUpperCase() === "NODE_OPTIONS") {
          // GitHub refuses NODE_OPTIONS from GITHUB_ENV.
          this.log(`##[warning]Can't store NODE_OPTIONS output parameter using '$GITHUB_ENV' command.`);
          continue;
        }
        job.addedEnv[k] = v;
      }
      job.addedPath.unshift(...parsePathFile(await readFile(files.GITHUB_PATH, "utf8")).reverse());
      const state = parseKeyValueFile(await readFile(files.GITHUB_STATE, "utf8"), "GITHUB_STATE");
      const pending = job.posts.find((p) => p.number === this.number);
      if (pending) for (const [k, v] of state) pending.state[k] = v;
      step.summary = await readFile(files.GITHUB_STEP_SUMMARY, "utf8");
      if (step.summary) job.summaries.push(step.summary);
    } catch (err) {
      if (err instanceof FileCommandError) this.failure ??= err.message;
      else throw err;
    }
  }

  /** Outcome, continue-on-error and conclusion; the job's status follows. */
  private conclude(): void {
    const { job, step, proc, failure } = this;
    let outcome: StepConclusion;
    if (proc?.stoppedBy === "cancelled" || (proc?.stoppedBy === "timed_out" && job.jobTimedOut)) {
      outcome = "cancelled";
      this.log(job.jobTimedOut ? `##[error]The job has exceeded the maximum execution time` : "##[error]The operation was canceled.");
    } else if (proc?.stoppedBy === "timed_out") {
      outcome = "failure";
      step.timedOut = true;
      this.log(`##[error]The action '${this.displayName}' has timed out after ${String(this.timeoutMinutes)} minutes.`);
    } else if (failure !== undefined) {
      outcome = "failure";
      step.error = job.masker.mask(failure);
      this.log(`##[error]${failure}`);
    } else if (proc?.spawnError) {
      outcome = "failure";
      step.error = proc.spawnError.message;
      this.log(`##[error]${proc.spawnError.message}`);
    } else if (proc && proc.exitCode !== 0) {
      outcome = "failure";
      step.exitCode = proc.exitCode;
      this.log(`##[error]Process completed with exit code ${proc.exitCode ?? proc.signal}.`);
    } else {
      outcome = "success";
      if (proc) step.exitCode = proc.exitCode;
    }
    if (proc && step.exitCode === null) step.exitCode = proc.exitCode;
    step.outcome = outcome;
    let continueOnError = false;
    try {
      continueOnError =
        outcome === "failure" &&
        isTrue(evaluateTemplate(this.spec["continue-on-error"] ?? false, job.exprCtx({ ...job.jobEnv, ...job.addedEnv })));
    } catch {
      continueOnError = false;
    }
    step.conclusion = continueOnError ? "success" : outcome;
    if (step.conclusion === "failure" && job.jobStatus === "success") job.jobStatus = "failure";
    if (outcome === "cancelled") job.jobStatus = "cancelled";
    step.completedAt = nowIso();
    step.status = "completed";
    this.recordStep();
    this.emit({ type: "completed", step });
  }
}
