/**
 * The state one stage sequence shares across its stages, as one explicit object, and the session
 * primitives every stage is built from: `session` (one agent session in its own folder, its cost and
 * turns added up, tried once more when it ran out of its own time), `retried` (a stage's session
 * tried once more on exit 1, a timeout or a partial end) and `progress`.
 */
import { readAgentText } from "../agent-files.js";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { ENV, traceIdFrom } from "../depth.js";
import { loadSystemPrompt } from "../prompts.js";
import { defaultReportPaths, spawnAgent } from "../spawn/index.js";
import { abortsTheStage, EXIT_CODES, succeeded, type ExitCode } from "../../core/exit-codes.js";
import type { AgentKind, ReportPaths, SpawnResult } from "../types.js";
import { parseAgentWalkthrough } from "../walkthrough.js";
import { REPORT_INVALID, withValidReport } from "./reports.js";
import { COMPACTION_TEXT, NOTES_FILE } from "./prompt.js";
import type { StageName, StageSettings, StagedAgentType, StagesOf } from "./config.js";
import { chooseModel, MODELS_ENV, modelsEnvValue, type ModelChoice } from "../../core/tiers.js";
import type { RunStagesOptions, StagesResultExtras, TaskContext } from "./types.js";

export interface StageContext {
  readonly options: RunStagesOptions;
  readonly type: StagedAgentType;
  /** The task the stages work on (`options.taskContext`). */
  readonly task: TaskContext;
  readonly workdir: string;
  /** Absolute: every session's folder, the manifest and the stage artifacts go below it. */
  readonly sessionDir: string;
  /** The progress notes the stages share (`FORGE_NOTES_FILE`), beside the walkthrough. */
  readonly notesFile: string;
  /** The parent environment with this attempt's trace id: one trace for every stage and sub-agent. */
  readonly env: NodeJS.ProcessEnv;
  readonly traceId: string;
  readonly reports: ReportPaths;
  readonly startedAt: Date;
  /** What the sessions so far added up to. */
  readonly tally: { sessions: number; costUsd: number; sawCost: boolean; turns: number };
  /** What the result carries besides the exit code and the manifest, filled in as the stages go. */
  readonly out: StagesResultExtras;
  /** System prompts loaded so far, per agent kind. */
  readonly prompts: Map<AgentKind, string>;
  /** Each stage's own settings from `.forge/stages.yml` (its model, retries, whether it is required). */
  readonly settings: Partial<Record<StageName, StageSettings>>;
  /** The model of each stage's sessions of the task's own kind, as chosen (the manifest's `model`, `tier`, `role`). */
  readonly models: Map<StageName, ModelChoice>;
  /**
   * The stage running, the last session of the task's own kind (a checkpoint's `agent_session`), and
   * the session a resumed attempt's first session of its kind continues (taken by that session).
   */
  readonly at: {
    stage?: StageName;
    last?: { id: string; stage: StageName };
    resumeSession?: string;
    resumeFile?: { path: string; root: string };
  };
}

/** What one stage came to. */
export interface StageOutcome {
  exitCode: ExitCode;
  attempts: number;
  artifact?: string;
  error?: string;
  skipped?: boolean;
  sessionDirs: string[];
  /** Skip the next stage (the refinery's fix when the tests passed). */
  skipNext?: StageName;
  result?: SpawnResult;
}

export type StageStep = (c: StageContext) => Promise<StageOutcome>;

/** One step per stage a type may run: the compiler names the one missing. */
export type StageSteps<T extends StagedAgentType> = { readonly [S in StagesOf<T>]: StageStep };

/** Creates the session folder and its `.trace`, and the context the stages share. */
export async function openStageContext(options: RunStagesOptions): Promise<StageContext> {
  const sessionDir = path.resolve(options.sessionDir);
  await mkdir(sessionDir, { recursive: true });
  const parentEnv = options.spawn.env ?? process.env;
  const traceId = traceIdFrom(parentEnv);
  // A resumed attempt's depth budget is restored from its checkpoint: never more left than it had.
  const depth = Number(parentEnv[ENV.depth] ?? 0);
  const restored = options.resume?.depthUsed;
  const depthEnv = restored !== undefined && restored > (Number.isInteger(depth) ? depth : 0) ? { [ENV.depth]: String(restored) } : {};
  await writeFile(path.join(sessionDir, ".trace"), `${traceId}\n`, "utf8");
  const notesFile = path.join(sessionDir, NOTES_FILE);
  await startNotes(notesFile, options);
  return {
    notesFile,
    options,
    type: options.agentType,
    task: options.taskContext,
    workdir: options.workdir,
    sessionDir,
    env: { ...parentEnv, ...depthEnv, [ENV.trace]: traceId },
    traceId,
    reports: defaultReportPaths(sessionDir),
    startedAt: new Date(),
    tally: { sessions: 0, costUsd: 0, sawCost: false, turns: 0 },
    out: {},
    prompts: new Map(),
    settings: {},
    models: new Map(),
    at: options.resume?.session
      ? { resumeSession: options.resume.session.id, ...(options.resume.session.file ? { resumeFile: options.resume.session.file } : {}) }
      : {},
  };
}

/**
 * The progress notes at the start of a sequence: the ones of the attempt a resumed one continues
 * (carried in its record, masked), under a heading saying so, or an empty file with a title.
 */
async function startNotes(file: string, options: RunStagesOptions): Promise<void> {
  const { taskId, attempt } = options.taskContext;
  const inherited = options.resume?.notes?.trim();
  const head = `# Progress notes — task ${taskId}, attempt ${attempt}\n`;
  const text = inherited
    ? `${head}\n## Inherited from attempt ${options.resume!.fromAttempt}\n\n${inherited.replace(/^# Progress notes[^\n]*\n+/, "")}\n`
    : head;
  await writeFile(file, text, "utf8");
}

/** A system progress event; observers never break the run. */
export function progress(c: StageContext, summary: string): void {
  try {
    c.options.onProgress?.({ at: new Date().toISOString(), kind: "system", summary, traceId: c.traceId, depth: 0, name: "stages" });
  } catch {
    /* observers never break the run */
  }
}

async function systemPrompt(c: StageContext, kind: AgentKind): Promise<string> {
  let text = c.prompts.get(kind);
  if (text === undefined) {
    text = (await loadSystemPrompt(kind, { repoDir: c.workdir, ...c.options.promptOptions })).text;
    // Claude Code compacts a long session by itself: its summary is told what to keep.
    if (c.options.spawn.adapter === "claude") text = `${text.trimEnd()}\n\n${COMPACTION_TEXT}\n`;
    c.prompts.set(kind, text);
  }
  return text;
}

/** A session as a stage sees it: the try that counts, and the folders of the tries before it. */
export type StageSession = SpawnResult & { earlierSessionDirs?: string[] };

/**
 * One session in `stages/NN-<stage>`, within the stage's time limit (`spawn.timeoutMs`) and what is
 * left of the deadline; `caller` makes the hierarchy check apply (type 3's subtasks, the refinery's
 * helpers). A session that ran out of its own time (`timedOutOnItsOwn`) was killed; it is tried once
 * more as `<stage>-retry`, told so, unless `once` (the caller has its own rule for a retry).
 */
export async function session(
  c: StageContext,
  stage: string,
  kind: AgentKind,
  prompt: string,
  caller?: AgentKind,
  once = false,
): Promise<StageSession> {
  const first = await sessionOnce(c, stage, kind, prompt, caller);
  let r: StageSession = first;
  if (!once && timedOutOnItsOwn(c, first)) {
    const again = RETRY_REASONS.timeout(first);
    progress(c, `${stage} ${again.summary}; trying it once more`);
    const second = await sessionOnce(c, `${stage}-retry`, kind, `${prompt}\n\n${again.section}`, caller);
    r = { ...second, earlierSessionDirs: [first.sessionDir] };
  }
  // Exit 10 and 11 stand on their document: an invalid one goes back to the agent once (reports.ts).
  const fixed = await withValidReport(
    c,
    stage,
    r,
    (fixStage, fixPrompt) => sessionOnce(c, fixStage, kind, fixPrompt, caller),
    (m) => progress(c, m),
  );
  return fixed === r ? r : { ...fixed, earlierSessionDirs: [...(r.earlierSessionDirs ?? []), r.sessionDir] };
}

/**
 * A session stopped by its own time limit — the stage's wall clock or the idle limit — and not by
 * the agent's whole budget (the deadline has not passed) or a cancel: the hierarchy's stage timeout,
 * which kills the session and tries it once more.
 */
export function timedOutOnItsOwn(c: StageContext, r: SpawnResult): boolean {
  if (r.exitCode !== EXIT_CODES.TIMEOUT || r.timedOut === undefined) return false;
  if (c.options.signal?.aborted) return false;
  return c.options.deadline === undefined || Date.now() < c.options.deadline;
}

async function sessionOnce(c: StageContext, stage: string, kind: AgentKind, prompt: string, caller?: AgentKind): Promise<SpawnResult> {
  const { options, task } = c;
  c.tally.sessions++;
  const dir = path.join(c.sessionDir, "stages", `${String(c.tally.sessions).padStart(2, "0")}-${stage}`);
  const remaining = options.deadline !== undefined ? options.deadline - Date.now() : undefined;
  // A resumed attempt's first session of its own kind continues the earlier attempt's agent session.
  const resumeSession = kind === c.type ? c.at.resumeSession : undefined;
  const resumeFile = resumeSession ? c.at.resumeFile : undefined;
  if (resumeSession) {
    delete c.at.resumeSession;
    delete c.at.resumeFile;
  }
  const timeoutMs =
    remaining !== undefined ? Math.max(1, Math.min(options.spawn.timeoutMs ?? Infinity, remaining)) : options.spawn.timeoutMs;
  const choice = modelFor(c, kind);
  // A plan of models decides alone: a tier without a model of the adapter's is the CLI's own default.
  const { model: fallbackModel, ...spawnRest } = options.spawn;
  const model = choice ? choice.model : fallbackModel;
  const r = await spawnAgent({
    ...spawnRest,
    ...(model !== undefined ? { model } : {}),
    ...(choice?.tier ? { modelTier: choice.tier } : {}),
    env: c.env,
    ...(caller ? { caller } : {}),
    // Which task this is, for command agents (the prompt says it too); the models sub-agents take.
    extraEnv: {
      FORGE_RUN_ID: task.runId,
      FORGE_TASK_ID: task.taskId,
      FORGE_ATTEMPT: String(task.attempt),
      FORGE_NOTES_FILE: c.notesFile,
      ...(options.models ? { [MODELS_ENV]: modelsEnvValue(options.models) } : {}),
      ...options.spawn.extraEnv,
    },
    agentType: kind,
    prompt,
    systemPrompt: await systemPrompt(c, kind),
    cwd: c.workdir,
    sessionDir: dir,
    name: stage,
    reports: c.reports,
    ...(timeoutMs !== undefined && Number.isFinite(timeoutMs) ? { timeoutMs } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    ...(resumeSession ? { resumeSession } : {}),
    ...(resumeFile ? { resumeFile } : {}),
  });
  if (kind === c.type && r.sessionId && c.at.stage) c.at.last = { id: r.sessionId, stage: c.at.stage };
  if (r.costUsd !== undefined) {
    c.tally.costUsd += r.costUsd;
    c.tally.sawCost = true;
  }
  c.tally.turns += r.turns ?? 0;
  if (r.model) c.out.model = r.model;
  return r;
}

/**
 * The model of a session of `kind` in the running stage (docs/runner.md#model-tiers), when the caller
 * gave a plan of models; the choice of the task's own kind is kept for the stage's record.
 */
function modelFor(c: StageContext, kind: AgentKind): ModelChoice | undefined {
  const plan = c.options.models;
  if (!plan) return undefined;
  const stage = c.at.stage;
  const own = kind === c.type;
  const choice = chooseModel(plan, kind, stage, {
    stageSpec: own && stage ? c.settings[stage]?.model : undefined,
    taskSpec: own ? c.options.taskModel : undefined,
  });
  if (own && stage && !c.models.has(stage)) c.models.set(stage, choice);
  return choice;
}

/** Checks a session that said it succeeded; a problem turns it into exit 1. */
export type SessionCheck = (r: SpawnResult) => Promise<string | undefined>;

/** Why a stage's session is tried once more, in the progress line and in the next try's prompt. */
interface RetryReason {
  summary: string;
  section: string;
}

const RETRY_REASONS = {
  failed: (r: SpawnResult): RetryReason => ({
    summary: `failed (${r.error?.message ?? "exit 1"})`,
    section: `## Previous attempt failed\n\nThe previous attempt at this stage failed with:\n\n${r.error?.message ?? "exit code 1"}\n\nFix the cause and complete the stage.`,
  }),
  timeout: (r: SpawnResult): RetryReason => ({
    summary: `timed out (${r.error?.message ?? "exit 21"}) and was stopped`,
    section: `## Previous attempt timed out\n\nThe previous attempt at this stage was stopped: ${r.error?.message ?? "it ran out of time"}. What it changed is still in the working tree. Continue from there in smaller steps and complete the stage in time.`,
  }),
  partial: (r: SpawnResult): RetryReason => ({
    summary: `ended partial${r.error ? ` (${r.error.message})` : ""}`,
    section: `## Previous attempt was partial\n\nThe previous attempt at this stage ended partial (exit 12)${r.error ? `: ${r.error.message}` : ""}. What it finished is in the working tree and stays. Complete what is left of the stage.`,
  }),
};

/** Why `r` is worth one more try of its stage, if it is: exit 1, its own timeout, or a partial end (when `partial`). */
function retryReason(c: StageContext, r: SpawnResult, partial: boolean): RetryReason | undefined {
  if (r.rateLimitedUntil) return undefined;
  // A document still invalid after its correction went back to the agent once already: no second time.
  if (r.error?.code === REPORT_INVALID) return undefined;
  if (r.exitCode === EXIT_CODES.FAILURE) return RETRY_REASONS.failed(r);
  if (timedOutOnItsOwn(c, r)) return RETRY_REASONS.timeout(r);
  if (partial && r.exitCode === EXIT_CODES.PARTIAL_SUCCESS) return RETRY_REASONS.partial(r);
  return undefined;
}

/**
 * A stage's session, tried once more (the orchestrator's rules, docs/runner.md#stage-rules)
 * when it failed (exit 1, or a success `check` finds a problem with), ran out of its own time
 * (killed), or ended partial (12, unless `partial: false`), with the reason in its prompt — never
 * after a rate limit, which already waited what it could. One retry per stage whatever the reason,
 * unless the stage's `retry` in .forge/stages.yml says how many.
 * After a partial first try what succeeded stays: the stage is partial unless the retry finished it
 * (0) or ended it for a reason of its own (2, 3, 10, 11, 20, or the deadline).
 */
export async function retried(
  c: StageContext,
  stage: string,
  kind: AgentKind,
  prompt: string,
  check?: SessionCheck,
  rules: { partial?: boolean } = {},
): Promise<StageOutcome> {
  // A session whose report went back to the agent: both folders are the stage's.
  const dirsOf = (r: StageSession) => [...(r.earlierSessionDirs ?? []), r.sessionDir];
  // The stage's `retry` in .forge/stages.yml (default 1): how many more tries after the first.
  const retries = (c.at.stage !== undefined ? c.settings[c.at.stage]?.retry : undefined) ?? 1;
  let r = await checked(c, await session(c, stage, kind, prompt, undefined, true), check);
  const dirs = dirsOf(r);
  let wasPartial = r.exitCode === EXIT_CODES.PARTIAL_SUCCESS;
  for (let n = 1; n <= retries; n++) {
    const why = retryReason(c, r, rules.partial ?? true);
    if (!why) break;
    progress(c, `stage ${stage} ${why.summary}; ${retries === 1 ? "retrying once" : `retry ${n} of ${retries}`}`);
    r = await checked(c, await session(c, `${stage}-retry`, kind, `${prompt}\n\n${why.section}`, undefined, true), check);
    dirs.push(...dirsOf(r));
    if (wasPartial && (r.exitCode === EXIT_CODES.FAILURE || timedOutOnItsOwn(c, r)))
      r = {
        ...r,
        exitCode: EXIT_CODES.PARTIAL_SUCCESS,
        status: "partial",
        error: { code: "partial", message: `partial; the retry did not finish it: ${r.error?.message ?? `exit ${r.exitCode}`}` },
      };
    wasPartial ||= r.exitCode === EXIT_CODES.PARTIAL_SUCCESS;
  }
  return outcomeOf(r, dirs);
}

/** A session that said it succeeded, checked: a problem turns it into exit 1. */
async function checked(c: StageContext, r: StageSession, check?: SessionCheck): Promise<StageSession> {
  if (!succeeded(r.exitCode) || !check) return r;
  const problem = await check(r);
  return problem ? { ...r, exitCode: EXIT_CODES.FAILURE, status: "failure", error: { code: "stage_check_failed", message: problem } } : r;
}

function outcomeOf(r: SpawnResult, dirs: string[]): StageOutcome {
  return {
    exitCode: r.exitCode,
    attempts: dirs.length,
    sessionDirs: dirs,
    result: r,
    ...(r.error ? { error: r.error.message } : {}),
    ...(r.reports.walkthrough ? { artifact: r.reports.walkthrough } : {}),
  };
}

/** The walkthrough the stage should have written: missing or invalid is a problem. */
export function walkthroughCheck(c: StageContext): SessionCheck {
  const file = c.reports.walkthrough;
  return async () => {
    const text = await readAgentText(c.sessionDir, file, (m) => progress(c, m));
    if (text === undefined) return `no walkthrough was written at ${file}`;
    const parsed = parseAgentWalkthrough(text, file);
    return parsed.problems.length > 0 ? `the walkthrough is invalid: ${parsed.problems.join("; ")}` : undefined;
  };
}

/** A session that ends the stage whatever it was doing: never retried, never worked around. */
export function isAbort(r: SpawnResult): boolean {
  return abortsTheStage(r.exitCode) || r.rateLimitedUntil !== undefined;
}

/** The sessions a multi-session stage ran so far: their folders and how many. */
export class SessionLog {
  readonly dirs: string[] = [];
  attempts = 0;

  /** Adds a session and the tries before it (a session tried again after its own timeout). */
  add(r: StageSession): StageSession {
    for (const d of [...(r.earlierSessionDirs ?? []), r.sessionDir]) {
      this.attempts++;
      this.dirs.push(d);
    }
    return r;
  }

  /** The stage ends with this session's exit code. */
  endWith(r: SpawnResult, error?: string): StageOutcome {
    return { exitCode: r.exitCode, attempts: this.attempts, sessionDirs: this.dirs, result: r, ...(error !== undefined ? { error } : {}) };
  }
}
