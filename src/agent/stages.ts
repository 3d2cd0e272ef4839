/**
 * Layer 2 (seed 001): the stage sequence of an agent type, in tool-composition mode — plain code,
 * no model, zero depth. Each stage is one Layer-1 session (the type's system prompt + a stage prompt
 * saying WHAT to do) or a step Forge does itself (git merges, the test command, plan validation).
 *
 * Rules (seed 001 §5): exit 1 → the stage is retried once with the failure in its prompt; 2 → abort,
 * never retried; 3 → abort with the question; 10 → abort with the refinement document; 11 → abort
 * with the Change Request; 12 → go on, the result is partial; 20/21 → abort; a rate limit → abort
 * with the reset time. The stage manifest of seed 001 §3 is written to `<sessionDir>/manifest.json`.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { describeFrontMatterProblem, readFrontMatter, writeFrontMatter } from "../core/front-matter.js";
import { loadPlan } from "../core/plan/load.js";
import { validatePlan } from "../core/plan/validate.js";
import { abortMerge, concludeMerge, finishSubBranch, mergeRef, startSubBranch } from "./branches.js";
import { ENV, traceIdFrom } from "./depth.js";
import { pickEnv } from "./env.js";
import { loadSystemPrompt, type LoadPromptOptions } from "./prompts.js";
import { quoteUntrusted } from "./secrets.js";
import { writeFileAtomic } from "./signals.js";
import { defaultReportPaths, spawnAgent } from "./spawn.js";
import type { AgentKind, ForgeExitCode, ProgressEvent, ReportPaths, SpawnOptions, SpawnResult } from "./types.js";
import { parseAgentWalkthrough } from "./walkthrough.js";

/** Agent types that run a stage sequence. */
export type StagedAgentType = "1" | "2" | "3" | "refinery" | "captain";
export const STAGED_AGENT_TYPES: readonly StagedAgentType[] = ["1", "2", "3", "refinery", "captain"];

export const STAGE_NAMES = ["single", "implement", "verify", "walkthrough", "plan", "work", "merge", "test", "fix", "write", "validate"] as const;
export type StageName = (typeof STAGE_NAMES)[number];

/** Stages each type may use. `single` is one session doing everything, walkthrough included. */
const STAGES_FOR: Record<StagedAgentType, readonly StageName[]> = {
  "1": ["single", "implement", "verify", "walkthrough"],
  "2": ["single", "implement", "verify", "walkthrough"],
  "3": ["single", "plan", "work", "implement", "verify", "walkthrough"],
  refinery: ["single", "merge", "test", "fix", "verify", "walkthrough"],
  captain: ["single", "write", "validate", "walkthrough"],
};

export const DEFAULT_STAGES: Record<StagedAgentType, readonly StageName[]> = {
  "1": ["implement", "verify", "walkthrough"],
  "2": ["implement", "verify", "walkthrough"],
  "3": ["plan", "work", "walkthrough"],
  refinery: ["merge", "test", "fix", "walkthrough"],
  captain: ["write", "validate"],
};

export function defaultStages(type: StagedAgentType): StageName[] {
  return [...DEFAULT_STAGES[type]];
}

/** `.forge/stages.yml` in the repository: `{ "1": [implement, walkthrough], refinery: [...] }`. */
export const stageConfigSchema = z
  .object(Object.fromEntries(STAGED_AGENT_TYPES.map((t) => [t, z.array(z.enum(STAGE_NAMES)).min(1).optional()])) as Record<StagedAgentType, z.ZodOptional<z.ZodArray<z.ZodEnum<{ [K in StageName]: K }>>>>)
  .strict()
  .superRefine((cfg, ctx) => {
    for (const type of STAGED_AGENT_TYPES) {
      for (const stage of cfg[type] ?? []) {
        if (!STAGES_FOR[type].includes(stage)) ctx.addIssue({ code: "custom", path: [type], message: `stage '${stage}' is not available to type ${type}` });
      }
    }
  })
  .describe("Stage sequences per agent type; missing types keep Forge's defaults.");
export type StageConfig = z.infer<typeof stageConfigSchema>;

export const STAGE_CONFIG_FILE = ".forge/stages.yml";

/** The repository's stage config, or an empty one; a malformed file is an error with a clear message. */
export async function loadStageConfig(repoDir: string): Promise<StageConfig> {
  const file = path.join(repoDir, STAGE_CONFIG_FILE);
  const text = await readFile(file, "utf8").catch(() => undefined);
  if (text === undefined) return {};
  const parsed = stageConfigSchema.safeParse(parseYaml(text) ?? {});
  if (!parsed.success) throw new Error(`${STAGE_CONFIG_FILE}: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  return parsed.data;
}

export interface TaskContext {
  runId: string;
  taskId: string;
  attempt: number;
  title?: string;
  /** The task file (frontmatter + body). */
  task: string;
  spec?: string;
  plan?: string;
  /** The repository's AGENTS.md or CONTRIBUTING.md. */
  agentsMd?: string;
  dependencyWalkthroughs?: Array<{ taskId: string; text: string }>;
  /** The previous attempt's refinement document (exit 10). */
  refinement?: string;
  /** A person's answer to the previous attempt's question; outside text, sanitized here. */
  answer?: string;
  testCommand?: string;
  /** The attempt's branch, checked out in `workdir` (for sub-agent branches). */
  branch?: string;
  /** Refinery: upstream refs to merge, already fetched. */
  mergeRefs?: string[];
  /** Captain: the plan folder to write and validate, relative to `workdir`. */
  planDir?: string;
  /** Captain: the goal (an issue) or the Change Request to answer; outside text, sanitized here. */
  goal?: string;
}

export type StageSpawnOptions = Omit<SpawnOptions, "prompt" | "systemPrompt" | "agentType" | "cwd" | "sessionDir" | "name" | "signal" | "onProgress" | "reports">;

export interface RunStagesOptions {
  agentType: StagedAgentType;
  taskContext: TaskContext;
  workdir: string;
  sessionDir: string;
  spawn: StageSpawnOptions;
  /** Override the sequence (else the repository's `.forge/stages.yml`, else the defaults). */
  stages?: StageName[];
  /** Type 3: run each subtask on `<branch>-<sub>` and merge it back (needs taskContext.branch). */
  subBranches?: boolean;
  /** Epoch ms by which every stage must be done (wall-clock budget of the agent); past it → 21. */
  deadline?: number;
  /** Sentinel cycles of the refinery's fix stage (default 3). */
  maxSentinelCycles?: number;
  /** Test command time limit (default 20 min). */
  testTimeoutMs?: number;
  signal?: AbortSignal;
  onProgress?: (event: ProgressEvent) => void;
  /**
   * Awaited after each stage ends, before the next starts (no session is running then): the job
   * pipeline commits and pushes the work so far. Its errors are reported as progress, never fatal.
   */
  onStageEnd?: (stage: StageName, record: StageRecord) => Promise<void>;
  promptOptions?: LoadPromptOptions;
}

export interface StageRecord {
  name: string;
  status: "success" | "failure" | "partial" | "skipped";
  exit_code: ForgeExitCode;
  attempts: number;
  artifact?: string;
  error?: string;
  duration_ms: number;
  session_dirs: string[];
}

export interface StageManifest {
  orchestrator: string;
  version: 1;
  agent_type: StagedAgentType;
  run_id: string;
  task_id: string;
  attempt: number;
  trace_id: string;
  started_at: string;
  finished_at: string;
  stages: StageRecord[];
  summary: { total: number; passed: number; failed: number; skipped: number; exit_code: ForgeExitCode };
}

export interface StagesResult {
  exitCode: ForgeExitCode;
  manifest: StageManifest;
  manifestPath: string;
  walkthroughPath?: string;
  changeRequestPath?: string;
  question?: string;
  refinement?: string;
  rateLimitedUntil?: string;
  error?: string;
  model?: string;
  costUsd?: number;
  turns?: number;
}

/** What one stage came to. `stop` ends the sequence with `exitCode`. */
interface StageOutcome {
  exitCode: ForgeExitCode;
  attempts: number;
  artifact?: string;
  error?: string;
  skipped?: boolean;
  sessionDirs: string[];
  /** Skip the next stage (the refinery's fix when the tests passed). */
  skipNext?: StageName;
  result?: SpawnResult;
}

const STAGE_TEXT: Record<StageName, string> = {
  single: "Do the whole task: implement it, verify it against every acceptance criterion, then write the walkthrough.",
  implement: "Implement the task. Do not write the walkthrough yet; a later stage does.",
  verify:
    "Verify the work in the checkout against every acceptance criterion: run the test command, type checks and linters; fix what fails. Do not write the walkthrough yet.",
  walkthrough:
    "The work is done. Review it (`git status`, `git diff`), run the tests once more, and write the walkthrough. Change code only to fix something you find broken.",
  plan: "Plan the task: write one file per subtask in the subtask folder below (format in your instructions). Do not implement anything yet.",
  work: "",
  merge: "",
  test: "",
  fix: "",
  write: "Write the plan or the overlay the goal below asks for, then validate it until it is valid. Also write the walkthrough describing it.",
  validate: "",
};

export async function runStages(options: RunStagesOptions): Promise<StagesResult> {
  const ctx = options.taskContext;
  const type = options.agentType;
  const sessionDir = path.resolve(options.sessionDir);
  await mkdir(sessionDir, { recursive: true });
  const parentEnv = options.spawn.env ?? process.env;
  // One trace for every stage and sub-agent of this attempt.
  const traceId = traceIdFrom(parentEnv);
  const env: NodeJS.ProcessEnv = { ...parentEnv, [ENV.trace]: traceId };
  await writeFile(path.join(sessionDir, ".trace"), `${traceId}\n`, "utf8");
  const reports: ReportPaths = defaultReportPaths(sessionDir);
  const started = new Date();
  if (options.stages) for (const s of options.stages) if (!STAGES_FOR[type].includes(s)) throw new Error(`stage '${s}' is not available to type ${type}`);
  let stageNames: readonly StageName[];
  let configError: string | undefined;
  try {
    stageNames = options.stages ?? (await loadStageConfig(options.workdir))[type] ?? defaultStages(type);
  } catch (err) {
    // The repository's config is wrong: say so where the user sees it (the attempt's error), run nothing.
    stageNames = [];
    configError = (err as Error).message;
  }

  const records: StageRecord[] = [];
  const out: Omit<StagesResult, "exitCode" | "manifest" | "manifestPath"> = {};
  let costUsd = 0;
  let turns = 0;
  let sawCost = false;
  let partial = false;
  let final: ForgeExitCode | undefined;
  let skipNext: StageName | undefined;
  const prompts = new Map<AgentKind, string>();

  const progress = (summary: string) => {
    try {
      options.onProgress?.({ at: new Date().toISOString(), kind: "system", summary, traceId, depth: 0, name: "stages" });
    } catch {
      /* observers never break the run */
    }
  };

  const systemPrompt = async (kind: AgentKind) => {
    let text = prompts.get(kind);
    if (text === undefined) {
      text = (await loadSystemPrompt(kind, { repoDir: options.workdir, ...options.promptOptions })).text;
      prompts.set(kind, text);
    }
    return text;
  };

  let seq = 0;
  /** One session; `caller` makes the hierarchy check apply (type 3's subtasks, the refinery's helpers). */
  const session = async (stage: string, kind: AgentKind, prompt: string, caller?: AgentKind): Promise<SpawnResult> => {
    seq++;
    const dir = path.join(sessionDir, "stages", `${String(seq).padStart(2, "0")}-${stage}`);
    const remaining = options.deadline !== undefined ? options.deadline - Date.now() : undefined;
    const timeoutMs = remaining !== undefined ? Math.max(1, Math.min(options.spawn.timeoutMs ?? Infinity, remaining)) : options.spawn.timeoutMs;
    const r = await spawnAgent({
      ...options.spawn,
      env,
      ...(caller ? { caller } : {}),
      // Which task this is, for command agents (the prompt says it too).
      extraEnv: { FORGE_RUN_ID: ctx.runId, FORGE_TASK_ID: ctx.taskId, FORGE_ATTEMPT: String(ctx.attempt), ...options.spawn.extraEnv },
      agentType: kind,
      prompt,
      systemPrompt: await systemPrompt(kind),
      cwd: options.workdir,
      sessionDir: dir,
      name: stage,
      reports,
      ...(timeoutMs !== undefined && Number.isFinite(timeoutMs) ? { timeoutMs } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    });
    if (r.costUsd !== undefined) {
      costUsd += r.costUsd;
      sawCost = true;
    }
    turns += r.turns ?? 0;
    if (r.model) out.model = r.model;
    return r;
  };

  /** A session retried once on exit 1 (not on a rate limit, which already waited what it could). */
  const retried = async (stage: string, kind: AgentKind, prompt: string, check?: (r: SpawnResult) => Promise<string | undefined>): Promise<StageOutcome> => {
    const dirs: string[] = [];
    let attempt = 0;
    let current = prompt;
    for (;;) {
      attempt++;
      let r = await session(attempt === 1 ? stage : `${stage}-retry`, kind, current);
      dirs.push(r.sessionDir);
      let problem: string | undefined;
      if ((r.exitCode === 0 || r.exitCode === 12) && check) {
        problem = await check(r);
        if (problem) r = { ...r, exitCode: 1, status: "failure", error: { code: "stage_check_failed", message: problem } };
      }
      if (r.exitCode === 1 && !r.rateLimitedUntil && attempt === 1) {
        progress(`stage ${stage} failed (${r.error?.message ?? "exit 1"}); retrying once`);
        current = `${prompt}\n\n## Previous attempt failed\n\nThe previous attempt at this stage failed with:\n\n${r.error?.message ?? "exit code 1"}\n\nFix the cause and complete the stage.`;
        continue;
      }
      return {
        exitCode: r.exitCode,
        attempts: attempt,
        sessionDirs: dirs,
        result: r,
        ...(r.error ? { error: r.error.message } : {}),
        ...(r.reports.walkthrough ? { artifact: r.reports.walkthrough } : {}),
      };
    }
  };

  const walkthroughCheck = async (): Promise<string | undefined> => {
    const text = await readFile(reports.walkthrough, "utf8").catch(() => undefined);
    if (text === undefined) return `no walkthrough was written at ${reports.walkthrough}`;
    const parsed = parseAgentWalkthrough(text, reports.walkthrough);
    return parsed.problems.length > 0 ? `the walkthrough is invalid: ${parsed.problems.join("; ")}` : undefined;
  };

  const base = (stage: StageName) => stagePrompt(ctx, stage, reports, STAGE_TEXT[stage], options.workdir);

  const runStage = async (stage: StageName): Promise<StageOutcome> => {
    switch (stage) {
      case "single":
        return retried(stage, type, base(stage), type === "captain" ? undefined : walkthroughCheck);
      case "implement":
      case "verify":
        return retried(stage, type, base(stage));
      case "walkthrough": {
        const o = await retried(stage, type, base(stage), walkthroughCheck);
        return o.exitCode === 0 || o.exitCode === 12 ? { ...o, artifact: reports.walkthrough } : o;
      }
      case "plan":
        return retried(stage, type, `${base(stage)}\n\n## Subtask folder\n\n${subtaskDir(sessionDir)}`, async () => {
          const subtasks = await readSubtasks(subtaskDir(sessionDir));
          if (subtasks.length === 0) return `no subtask files were written in ${subtaskDir(sessionDir)}`;
          const refused = subtasks.flatMap((sub) => (sub.problem ? [sub.problem] : []));
          return refused.length ? `subtask files Forge cannot read: ${refused.join("; ")}` : undefined;
        });
      case "work":
        return workSubtasks();
      case "merge":
        return mergeUpstream();
      case "test":
        return initialTest();
      case "fix":
        return sentinelLoop();
      case "write":
        return retried(stage, type, `${base(stage)}${ctx.planDir ? `\n\n## Plan folder\n\n${ctx.planDir}` : ""}`);
      case "validate":
        return validateWithSelfHeal();
    }
  };

  // ------------------------------------------------------------ type 3: the subtasks

  const workSubtasks = async (): Promise<StageOutcome> => {
    const dir = subtaskDir(sessionDir);
    const subtasks = await readSubtasks(dir);
    const dirs: string[] = [];
    let done = 0;
    let failed = 0;
    let attempts = 0;
    const refused: string[] = [];
    for (const sub of subtasks) {
      if (sub.status === "done") {
        done++;
        continue;
      }
      if (sub.problem) {
        // Never worked, never rewritten: its front matter is not YAML.
        progress(`subtask ${sub.id} refused: ${sub.problem}`);
        refused.push(sub.problem);
        failed++;
        continue;
      }
      const kind: AgentKind = sub.agentType === "2" ? "2" : "1";
      let subBranch: string | undefined;
      if (options.subBranches && ctx.branch) subBranch = await startSubBranch(options.workdir, ctx.branch, `${sub.id}`);
      const prompt = [
        `# Subtask ${sub.id}: ${sub.title}`,
        `Part of task ${ctx.taskId} (run ${ctx.runId}, attempt ${ctx.attempt}). Do this subtask only, verify it, and end with the exit line. Do not write the task's walkthrough.`,
        `## The subtask\n\n${sub.body.trim()}`,
        `## The whole task, for context\n\n${ctx.task.trim()}`,
      ].join("\n\n");
      progress(`subtask ${sub.id} (type ${kind})`);
      const r = await session(`work-${sub.id}`, kind, prompt, "3");
      attempts++;
      dirs.push(r.sessionDir);
      if (r.exitCode === 2 || r.exitCode === 20 || r.exitCode === 21 || r.rateLimitedUntil) {
        if (subBranch && ctx.branch) await finishSubBranch(options.workdir, ctx.branch, subBranch, `forge(${ctx.taskId}): subtask ${sub.id} (partial)`).catch(() => undefined);
        return { exitCode: r.exitCode, attempts, sessionDirs: dirs, result: r, ...(r.error ? { error: `subtask ${sub.id}: ${r.error.message}` } : {}) };
      }
      let ok = r.exitCode === 0 || r.exitCode === 12;
      let note = ok ? "done" : `failed: ${r.error?.message ?? `exit ${r.exitCode}`}`;
      if (subBranch && ctx.branch) {
        const merged = await finishSubBranch(options.workdir, ctx.branch, subBranch, `forge(${ctx.taskId}): subtask ${sub.id}`);
        if (!merged.merged) {
          await abortMerge(options.workdir);
          ok = false;
          note = `failed: merging ${subBranch} conflicted in ${merged.conflicts.join(", ")}`;
        }
      }
      if (ok) done++;
      else failed++;
      await setSubtaskStatus(sub.file, ok ? "done" : "failed", note);
    }
    if (subtasks.length === 0) return { exitCode: 1, attempts, sessionDirs: dirs, error: "no subtasks to work" };
    const exitCode: ForgeExitCode = failed === 0 ? 0 : done === 0 ? 1 : 12;
    return { exitCode, attempts, sessionDirs: dirs, artifact: dir, ...(failed > 0 ? { error: `${failed} of ${subtasks.length} subtasks failed${refused.length ? ` (${refused.join("; ")})` : ""}` } : {}) };
  };

  // ------------------------------------------------------------ refinery

  const mergeUpstream = async (): Promise<StageOutcome> => {
    const dirs: string[] = [];
    let attempts = 0;
    const log: string[] = [];
    for (const ref of ctx.mergeRefs ?? []) {
      const m = await mergeRef(options.workdir, ref, `Merge ${ref} into ${ctx.branch ?? "the refinery branch"}`);
      if (m.merged) {
        log.push(`${ref}: merged`);
        continue;
      }
      progress(`merging ${ref} conflicted in ${m.conflicts.join(", ")}; a sub-agent resolves it`);
      const prompt = [
        `# Resolve merge conflicts`,
        `Task ${ctx.taskId} (run ${ctx.runId}, attempt ${ctx.attempt}) is merging \`${ref}\` and git stopped on conflicts in:`,
        m.conflicts.map((f) => `- ${f}`).join("\n"),
        `Resolve every conflict so that the intent of both sides survives: edit the files until no conflict marker (<<<<<<<, =======, >>>>>>>) is left and the code builds. Do not commit; Forge concludes the merge. End with the exit line.`,
        `## The refinery's task, for context\n\n${ctx.task.trim()}`,
      ].join("\n\n");
      const r = await session(`merge-resolve`, "1", prompt, "refinery");
      attempts++;
      dirs.push(r.sessionDir);
      const concluded = r.exitCode === 0 ? await concludeMerge(options.workdir) : { merged: false as const, conflicts: m.conflicts };
      if (!concluded.merged) {
        await abortMerge(options.workdir);
        if (r.exitCode === 2 || r.exitCode === 20 || r.exitCode === 21 || r.rateLimitedUntil) {
          return { exitCode: r.exitCode, attempts, sessionDirs: dirs, result: r, error: `merging ${ref}: ${r.error?.message ?? "stopped"}` };
        }
        const cr = await writeChangeRequest(reports.changeRequest, ctx, {
          title: `Upstream work conflicts at ${ctx.taskId}`,
          reason: `Merging ${ref} conflicts in ${concluded.conflicts.join(", ")} and the conflict could not be resolved automatically.`,
          description: `The refinery ${ctx.taskId} merged its upstream branches in order. ${log.join("; ") || "No branch had been merged yet"}; then ${ref} conflicted in:\n\n${concluded.conflicts.map((f) => `- ${f}`).join("\n")}`,
          impact: "The refinery cannot integrate its upstream tasks; every task that depends on it waits.",
          resolution: "Amend the plan so that the conflicting tasks agree on the shared files (an interface task first, or one task owning the files), or resolve the conflict by hand.",
        });
        return { exitCode: 11, attempts, sessionDirs: dirs, artifact: cr, error: `merging ${ref} conflicted in ${concluded.conflicts.join(", ")}` };
      }
      log.push(`${ref}: merged after resolving ${m.conflicts.length} conflicted file(s)`);
    }
    const artifact = path.join(sessionDir, "merge-log.txt");
    await writeFile(artifact, `${log.join("\n")}\n`, "utf8");
    return { exitCode: 0, attempts, sessionDirs: dirs, artifact };
  };

  const sentinelDir = path.join(sessionDir, "sentinel");

  /** Runs the test command, or has the sentinel executor verify when there is none. */
  const verification = async (cycleDir: string, specPath?: string): Promise<{ results: VerificationResults; file: string; result?: SpawnResult }> => {
    await mkdir(cycleDir, { recursive: true });
    const file = path.join(cycleDir, "verification-results.json");
    if (ctx.testCommand) {
      // The test command runs the repository's code: it gets the agent's plain environment, no keys or tokens.
      const testEnv = { ...pickEnv(env, options.spawn.passEnv ?? []), [ENV.trace]: traceId, FORGE_RUN_ID: ctx.runId, FORGE_TASK_ID: ctx.taskId };
      const run = await runShell(ctx.testCommand, options.workdir, options.testTimeoutMs ?? 20 * 60_000, testEnv, options.signal);
      await writeFile(path.join(cycleDir, "test-output.log"), run.output, "utf8");
      const results: VerificationResults = {
        checks: [{ name: "tests", tool: ctx.testCommand, passed: run.code === 0, errors: run.code === 0 ? 0 : 1, output: run.output.slice(-4_000) }],
        overall: run.code === 0 ? "PASS" : "FAIL",
        blocking_count: run.code === 0 ? 0 : 1,
      };
      await writeFileAtomic(file, `${JSON.stringify(results, null, 2)}\n`);
      return { results, file };
    }
    const prompt = [
      `# Verify task ${ctx.taskId}`,
      `Run the checks of the specification, and the repository's own tests, type checks and linters.`,
      `## Files\n\n- Test specification: ${specPath ?? "(none: use the task's acceptance criteria)"}\n- Write the results to: ${file}`,
      `## The task\n\n${ctx.task.trim()}`,
    ].join("\n\n");
    const r = await session("sentinel-executor", "sentinel-executor", prompt);
    const results = await readJson<VerificationResults>(file);
    return { results: results ?? { checks: [], overall: "FAIL", blocking_count: 1 }, file, result: r };
  };

  const initialTest = async (): Promise<StageOutcome> => {
    const v = await verification(path.join(sentinelDir, "initial"));
    const passed = v.results.overall === "PASS";
    progress(`initial verification: ${v.results.overall}`);
    if (v.result && isAbort(v.result)) return { exitCode: v.result.exitCode, attempts: 1, sessionDirs: [v.result.sessionDir], result: v.result };
    // A failing test is not this stage's failure: the fix stage's sentinel loop takes it from here.
    return { exitCode: 0, attempts: 1, sessionDirs: v.result ? [v.result.sessionDir] : [], artifact: v.file, ...(passed ? { skipNext: "fix" as const } : {}) };
  };

  const sentinelLoop = async (): Promise<StageOutcome> => {
    const maxCycles = options.maxSentinelCycles ?? 3;
    const dirs: string[] = [];
    let attempts = 0;
    const spec = path.join(sentinelDir, "test-spec.md");
    const upstream = (ctx.dependencyWalkthroughs ?? []).map((w) => `### ${w.taskId}\n\n${w.text.trim()}`).join("\n\n");
    const w = await session(
      "sentinel-writer",
      "sentinel-writer",
      [
        `# Test specification for ${ctx.taskId}`,
        `Write the test specification to: ${spec}`,
        `## The refinery's task\n\n${ctx.task.trim()}`,
        upstream ? `## Upstream walkthroughs\n\n${upstream}` : "",
      ]
        .filter(Boolean)
        .join("\n\n"),
    );
    attempts++;
    dirs.push(w.sessionDir);
    if (isAbort(w)) return { exitCode: w.exitCode, attempts, sessionDirs: dirs, result: w, error: w.error?.message ?? "" };
    const specPath = existsSync(spec) ? spec : undefined;

    const blocking: number[] = [];
    const remaining: number[] = [];
    let grade: "PASS" | "WARN" | "FAIL" = "FAIL";
    let lastFixList: string | undefined;
    let cycle = 0;
    let v = await verification(path.join(sentinelDir, "cycle-1"), specPath);
    for (;;) {
      cycle++;
      const cycleDir = path.join(sentinelDir, `cycle-${cycle}`);
      if (v.result) {
        dirs.push(v.result.sessionDir);
        attempts++;
        if (isAbort(v.result)) return { exitCode: v.result.exitCode, attempts, sessionDirs: dirs, result: v.result };
      }
      blocking.push(v.results.blocking_count);
      if (v.results.overall === "PASS") {
        grade = "PASS";
        break;
      }
      const audit = path.join(cycleDir, "audit-report.md");
      const a = await session(
        "sentinel-auditor",
        "sentinel-auditor",
        [`# Audit cycle ${cycle} of ${ctx.taskId}`, `## Files\n\n- Test specification: ${specPath ?? "(none)"}\n- Verification results: ${v.file}\n- Write the audit report to: ${audit}`, `## The task\n\n${ctx.task.trim()}`].join("\n\n"),
      );
      attempts++;
      dirs.push(a.sessionDir);
      if (isAbort(a)) return { exitCode: a.exitCode, attempts, sessionDirs: dirs, result: a };
      const auditGrade = /^\s*Grade:\s*(PASS|WARN|FAIL)\b/im.exec((await readFile(audit, "utf8").catch(() => "")) ?? "")?.[1] as "PASS" | "WARN" | "FAIL" | undefined;
      if (auditGrade === "PASS" || auditGrade === "WARN") {
        grade = auditGrade;
        break;
      }
      const fixList = path.join(cycleDir, "fix-list.json");
      const c = await session(
        "sentinel-consolidator",
        "sentinel-consolidator",
        [`# Fix list, cycle ${cycle} of ${ctx.taskId}`, `## Files\n\n- Audit report: ${audit}\n- Verification results: ${v.file}\n- Write the fix list to: ${fixList}`].join("\n\n"),
      );
      attempts++;
      dirs.push(c.sessionDir);
      if (isAbort(c)) return { exitCode: c.exitCode, attempts, sessionDirs: dirs, result: c };
      lastFixList = existsSync(fixList) ? fixList : undefined;
      // How much is left: the fix list's blocking items, or the failed checks when there is no list
      // (a single test command only says pass or fail).
      const fixes = lastFixList ? (await readJson<{ fixes?: Array<{ severity?: string }> }>(lastFixList))?.fixes : undefined;
      remaining.push(Array.isArray(fixes) ? fixes.filter((f) => f.severity !== "warning").length : v.results.blocking_count);
      // No improvement over two consecutive cycles: more of the same will not help (seed 001 §8).
      if (remaining.length >= 3 && remaining[remaining.length - 1]! >= remaining[remaining.length - 3]!) break;
      const fixPrompt = [
        stagePrompt(ctx, "fix", reports, `Sentinel cycle ${cycle}: fix the blocking items of the fix list, smallest safe change each, then re-run the checks. Do not write the walkthrough yet.`, options.workdir),
        `## Sentinel files\n\n- Fix list: ${lastFixList ?? "(none written; use the audit report)"}\n- Audit report: ${audit}\n- Verification results: ${v.file}`,
      ].join("\n\n");
      const f = await session(`fix-${cycle}`, "refinery", fixPrompt);
      attempts++;
      dirs.push(f.sessionDir);
      if (isAbort(f) || f.exitCode === 3 || f.exitCode === 10 || f.exitCode === 11) {
        return { exitCode: f.exitCode, attempts, sessionDirs: dirs, result: f, ...(f.error ? { error: f.error.message } : {}) };
      }
      // Retest. After the last cycle's fix the retest is final: it decides the grade.
      v = await verification(path.join(sentinelDir, cycle < maxCycles ? `cycle-${cycle + 1}` : "final"), specPath);
      if (cycle >= maxCycles) {
        if (v.result) {
          dirs.push(v.result.sessionDir);
          attempts++;
          if (isAbort(v.result)) return { exitCode: v.result.exitCode, attempts, sessionDirs: dirs, result: v.result };
        }
        blocking.push(v.results.blocking_count);
        if (v.results.overall === "PASS") grade = "PASS";
        break;
      }
    }
    await writeFile(path.join(sentinelDir, "grade.txt"), `${grade}\n`, "utf8");
    await writeFile(path.join(sentinelDir, "summary.json"), `${JSON.stringify({ cycles: cycle, grade, blocking_counts: blocking }, null, 2)}\n`, "utf8");
    progress(`sentinel: ${grade} after ${cycle} cycle(s)`);
    if (grade !== "FAIL") return { exitCode: 0, attempts, sessionDirs: dirs, artifact: path.join(sentinelDir, "summary.json") };

    // Still failing: the refinery explains it as a Change Request (exit 11).
    const crPrompt = [
      stagePrompt(
        ctx,
        "fix",
        reports,
        `The sentinel loop ended after ${cycle} cycle(s) with blocking problems left. Write the change-request file explaining what in the plan must change, then end with FORGE_EXIT=11.`,
        options.workdir,
      ),
      `## Sentinel files\n\n- Last fix list: ${lastFixList ?? "(none)"}\n- Last verification results: ${v.file}`,
    ].join("\n\n");
    const cr = await session("change-request", "refinery", crPrompt);
    attempts++;
    dirs.push(cr.sessionDir);
    if (!existsSync(reports.changeRequest)) {
      await writeChangeRequest(reports.changeRequest, ctx, {
        title: `Verification keeps failing at ${ctx.taskId}`,
        reason: `The sentinel loop ran ${cycle} cycle(s); blocking problems per cycle: ${blocking.join(", ")}.`,
        description: `Verification of the integrated upstream work still fails. See the last verification results and fix list in the attempt's session folder.`,
        impact: "The refinery cannot pass; every task that depends on it waits.",
        resolution: "Amend the plan with tasks that fix the failing checks, or review the failures by hand.",
      });
    }
    return { exitCode: 11, attempts, sessionDirs: dirs, artifact: reports.changeRequest, error: `verification still fails after ${cycle} sentinel cycle(s)` };
  };

  // ------------------------------------------------------------ captain

  const validateWithSelfHeal = async (): Promise<StageOutcome> => {
    const planDir = ctx.planDir ? path.resolve(options.workdir, ctx.planDir) : undefined;
    if (!planDir) return { exitCode: 1, attempts: 0, sessionDirs: [], error: "no plan folder to validate (taskContext.planDir)" };
    const dirs: string[] = [];
    let attempts = 0;
    for (let heal = 0; ; heal++) {
      const problems = await loadPlan(planDir)
        .then((p) => validatePlan(p).map((x) => `${x.file}${x.line !== undefined ? `:${x.line}` : ""}${x.field ? ` ${x.field}` : ""} — ${x.message}`))
        .catch((err: unknown) => [`the plan cannot be read: ${(err as Error).message}`]);
      const report = path.join(sessionDir, `validate-${heal + 1}.txt`);
      await writeFile(report, problems.length === 0 ? "OK\n" : `${problems.join("\n")}\n`, "utf8");
      if (problems.length === 0) return { exitCode: 0, attempts: Math.max(1, attempts), sessionDirs: dirs, artifact: report };
      if (heal >= 2) {
        const doc = [
          "# Refinement Request",
          "## Summary",
          `The plan in ${ctx.planDir} is still invalid after ${heal} correction(s).`,
          "## Context",
          `- Stage: validate\n- Artifact: ${ctx.planDir}\n- Attempt: ${heal + 1} of ${heal + 1} (self-heal exhausted)`,
          "## Issue",
          "`forge validate` reports problems the captain could not fix.",
          "## Diagnostics",
          problems.map((p) => `- ${p}`).join("\n"),
          "## Suggested Resolution",
          "Fix the listed problems by hand, or retry with clearer instructions.",
        ].join("\n\n");
        await writeFile(reports.refinement, `${doc}\n`, "utf8");
        out.refinement = doc;
        return { exitCode: 10, attempts, sessionDirs: dirs, artifact: reports.refinement, error: `${problems.length} validation problem(s) left` };
      }
      progress(`plan invalid (${problems.length} problem(s)); the captain corrects it`);
      const r = await session(
        `write-fix-${heal + 1}`,
        "captain",
        [
          stagePrompt(ctx, "write", reports, "`forge validate` found problems in the plan. Fix every one of them, validate again, and update the walkthrough.", options.workdir),
          `## Plan folder\n\n${ctx.planDir}`,
          `## Problems\n\n${problems.map((p) => `- ${p}`).join("\n")}`,
        ].join("\n\n"),
      );
      attempts++;
      dirs.push(r.sessionDir);
      if (isAbort(r)) return { exitCode: r.exitCode, attempts, sessionDirs: dirs, result: r };
    }
  };

  // ------------------------------------------------------------ the sequence

  for (const stage of stageNames) {
    if (skipNext === stage) {
      skipNext = undefined;
      records.push({ name: stage, status: "skipped", exit_code: 0, attempts: 0, duration_ms: 0, session_dirs: [] });
      continue;
    }
    skipNext = undefined;
    if (options.signal?.aborted) {
      final = 20;
      out.error = "cancelled";
      break;
    }
    if (options.deadline !== undefined && Date.now() >= options.deadline) {
      final = 21;
      out.error = `the agent's time budget ran out before stage ${stage}`;
      break;
    }
    progress(`stage ${stage} started`);
    const t0 = Date.now();
    const o = await runStage(stage);
    const rec: StageRecord = {
      name: stage,
      status: o.exitCode === 0 ? "success" : o.exitCode === 12 ? "partial" : "failure",
      exit_code: o.exitCode,
      attempts: o.attempts,
      duration_ms: Date.now() - t0,
      session_dirs: o.sessionDirs.map((d) => path.relative(sessionDir, d) || "."),
      ...(o.artifact ? { artifact: path.relative(sessionDir, o.artifact) || o.artifact } : {}),
      ...(o.error ? { error: o.error } : {}),
    };
    records.push(rec);
    progress(`stage ${stage}: ${rec.status} (exit ${o.exitCode})`);
    if (options.onStageEnd) {
      try {
        await options.onStageEnd(stage, rec);
      } catch (err) {
        progress(`after stage ${stage}: ${(err as Error).message}`);
      }
    }
    if (o.skipNext) skipNext = o.skipNext;
    if (o.exitCode === 0) continue;
    if (o.exitCode === 12) {
      partial = true;
      continue;
    }
    final = o.exitCode;
    if (o.error) out.error = `${stage}: ${o.error}`;
    if (o.result?.rateLimitedUntil) out.rateLimitedUntil = o.result.rateLimitedUntil;
    if (o.exitCode === 3) out.question = (await readFile(reports.question, "utf8").catch(() => undefined)) ?? o.result?.result ?? "The agent needs a person's input.";
    if (o.exitCode === 10) out.refinement ??= (await readFile(reports.refinement, "utf8").catch(() => undefined)) ?? o.result?.result ?? o.error ?? "";
    if (o.exitCode === 11 && existsSync(reports.changeRequest)) out.changeRequestPath = reports.changeRequest;
    break;
  }

  if (configError) {
    final = 1;
    out.error = configError;
  }
  const exitCode: ForgeExitCode = final ?? (partial ? 12 : 0);
  if ((exitCode === 0 || exitCode === 12) && existsSync(reports.walkthrough)) out.walkthroughPath = reports.walkthrough;
  if (sawCost) out.costUsd = Math.round(costUsd * 1e6) / 1e6;
  if (turns > 0) out.turns = turns;
  const manifest: StageManifest = {
    orchestrator: `forge-stages-${type}`,
    version: 1,
    agent_type: type,
    run_id: ctx.runId,
    task_id: ctx.taskId,
    attempt: ctx.attempt,
    trace_id: traceId,
    started_at: started.toISOString(),
    finished_at: new Date().toISOString(),
    stages: records,
    summary: {
      total: stageNames.length,
      passed: records.filter((r) => r.status === "success").length,
      failed: records.filter((r) => r.status === "failure").length,
      skipped: records.filter((r) => r.status === "skipped").length,
      exit_code: exitCode,
    },
  };
  const manifestPath = path.join(sessionDir, "manifest.json");
  await writeFileAtomic(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  return { exitCode, manifest, manifestPath, ...out };
}

// ---------------------------------------------------------------- helpers

function isAbort(r: SpawnResult): boolean {
  return r.exitCode === 2 || r.exitCode === 20 || r.exitCode === 21 || r.rateLimitedUntil !== undefined;
}

export interface VerificationResults {
  checks: Array<{ name: string; tool: string; passed: boolean; errors: number; output?: string }>;
  overall: "PASS" | "FAIL";
  blocking_count: number;
}

async function readJson<T>(file: string): Promise<T | undefined> {
  const text = await readFile(file, "utf8").catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}

function runShell(command: string, cwd: string, timeoutMs: number, env: NodeJS.ProcessEnv, signal?: AbortSignal): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile("sh", ["-c", command], { cwd, env, timeout: timeoutMs, maxBuffer: 32 * 1024 * 1024, ...(signal ? { signal } : {}) }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === "number" ? (err as { code: number }).code : 1) : 0;
      resolve({ code, output: `${String(stdout)}${stderr ? `\n[stderr]\n${String(stderr)}` : ""}` });
    });
  });
}

export function subtaskDir(sessionDir: string): string {
  return path.join(sessionDir, "subtasks");
}

export interface Subtask {
  id: string;
  title: string;
  agentType: "1" | "2";
  status: string;
  body: string;
  file: string;
  /** Set when the file's front matter is not YAML (`---js`, …): `file:1: …`. Such a subtask is never worked. */
  problem?: string;
}

/** A subtask file's front matter (a mapping) and body; unreadable YAML leaves the whole text as the body. */
function readSubtaskFile(file: string, text: string): { data: Record<string, unknown>; body: string; problem?: string } {
  const fm = readFrontMatter(file, text);
  if (fm.problem?.kind === "language") return { data: {}, body: text, problem: describeFrontMatterProblem(fm.problem) };
  if (fm.problem) return { data: {}, body: text };
  const data = fm.data !== null && typeof fm.data === "object" && !Array.isArray(fm.data) ? (fm.data as Record<string, unknown>) : {};
  return { data, body: fm.body };
}

/** Subtask files `NN-<slug>.md` in name order. */
export async function readSubtasks(dir: string): Promise<Subtask[]> {
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith(".md")).sort();
  const out: Subtask[] = [];
  for (const name of names) {
    const file = path.join(dir, name);
    // A subtask without readable frontmatter is still work to do; one whose frontmatter is not YAML is not.
    const { data, body, problem } = readSubtaskFile(file, await readFile(file, "utf8"));
    const id = String(data.id ?? name.replace(/\.md$/, "")).toLowerCase().replace(/[^a-z0-9._-]+/g, "-");
    out.push({
      id,
      title: String(data.title ?? id),
      agentType: String(data.agent_type ?? data.type ?? "1") === "2" ? "2" : "1",
      status: String(data.status ?? "pending"),
      body,
      file,
      ...(problem ? { problem } : {}),
    });
  }
  return out;
}

async function setSubtaskStatus(file: string, status: "done" | "failed", note: string): Promise<void> {
  const { data, body } = readSubtaskFile(file, await readFile(file, "utf8"));
  await writeFileAtomic(file, writeFrontMatter(body, { ...data, status, forge_note: note }));
}

interface CrText {
  title: string;
  reason: string;
  description: string;
  impact: string;
  resolution: string;
}

/** A Change Request document (DESIGN.md §2) written by Forge itself when the agent wrote none. */
async function writeChangeRequest(file: string, ctx: TaskContext, cr: CrText): Promise<string> {
  const fm = {
    title: cr.title,
    reason: cr.reason,
    emitted_by: ctx.taskId,
    affected_tasks: [ctx.taskId],
    suggested_action: "AMEND",
    priority: "HIGH",
    suggested_changes: cr.resolution,
  };
  await writeFileAtomic(
    file,
    writeFrontMatter(`## Description\n\n${cr.description}\n\n## Impact Assessment\n\n${cr.impact}\n\n## Proposed Resolution\n\n${cr.resolution}\n`, fm),
  );
  return file;
}

/** The WHAT of a stage: the stage's instruction, where the reports go, and the task's context. */
export function stagePrompt(ctx: TaskContext, stage: string, reports: ReportPaths, instruction: string, workdir?: string): string {
  const parts: string[] = [
    `# Task ${ctx.taskId}${ctx.title ? `: ${ctx.title}` : ""}`,
    `Run \`${ctx.runId}\`, task \`${ctx.taskId}\`, attempt ${ctx.attempt}. Stage: **${stage}**.`,
    `## This stage\n\n${instruction}`,
    [
      "## Report files",
      "",
      `- Walkthrough: ${reports.walkthrough}`,
      `- Question for a person (exit 3): ${reports.question}`,
      `- Refinement document (exit 10): ${reports.refinement}`,
      `- Change Request (exit 11): ${reports.changeRequest}`,
      ...(workdir ? [`- Repository checkout: ${workdir}`] : []),
    ].join("\n"),
    `## The task\n\n${ctx.task.trim()}`,
  ];
  if (ctx.goal) parts.push(`## Goal\n\n${quoteUntrusted("goal", ctx.goal)}`);
  if (ctx.testCommand) parts.push(`## Test command\n\n\`${ctx.testCommand}\``);
  if (ctx.spec) parts.push(`## Spec\n\n${ctx.spec.trim()}`);
  if (ctx.plan) parts.push(`## The plan\n\n${ctx.plan.trim()}`);
  if (ctx.dependencyWalkthroughs?.length) {
    parts.push(`## Walkthroughs of the tasks this one depends on\n\n${ctx.dependencyWalkthroughs.map((w) => `### ${w.taskId}\n\n${w.text.trim()}`).join("\n\n")}`);
  }
  if (ctx.agentsMd) parts.push(`## Repository conventions (AGENTS.md)\n\n${ctx.agentsMd.trim()}`);
  if (ctx.refinement) parts.push(`## What the previous attempt must fix (its refinement document)\n\n${ctx.refinement.trim()}`);
  if (ctx.answer) parts.push(`## A person's answer to the previous attempt's question\n\n${quoteUntrusted("answer", ctx.answer)}`);
  return parts.join("\n\n");
}
