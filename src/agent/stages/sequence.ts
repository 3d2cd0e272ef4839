/**
 * Runs a type's stages in order and writes the stage manifest (`<sessionDir>/manifest.json`).
 *
 * Exit codes: 0 goes on; 12 (after the stage's own retry) goes on, and the sequence ends partial;
 * anything else stops the sequence with that code — 1 (after the stage's own retry), 2, 3 with the
 * question, 10 with the refinement document, 11 with the Change Request, 20, 21 (after the stage's
 * own retry when its session ran out of its own time), or a rate limit with its reset time.
 * Cancellation (20) and the deadline (21) are checked before each stage.
 */
import { readAgentText } from "../agent-files.js";
import { existsSync } from "node:fs";
import path from "node:path";
import { writeFileAtomic } from "../signals.js";
import { EXIT_CODES, stageStatusOf, succeeded, type ExitCode } from "../../core/exit-codes.js";
import type { StageName, StagedAgentType } from "./config.js";
import { progress, type StageContext, type StageOutcome, type StageStep, type StageSteps } from "./context.js";
import { ENV } from "../depth.js";
import type { StageManifest, StageProgress, StageRecord, StagesResult } from "./types.js";

/** Every type's steps. */
export type StepTables = { readonly [T in StagedAgentType]: StageSteps<T> };

/** How the stages went: their records, and the code that stopped them, if one did. */
export interface SequenceRun {
  records: StageRecord[];
  final?: ExitCode;
  partial: boolean;
}

export async function runSequence(c: StageContext, steps: StepTables, names: readonly StageName[]): Promise<SequenceRun> {
  const run: SequenceRun = { records: [], partial: false };
  let skipNext: StageName | undefined;
  const resume = c.options.resume;
  // A resumed attempt starts at the stage the earlier attempt left pending (docs/executor.md#resuming).
  let resumeAt = resume?.stage !== undefined && names.includes(resume.stage) ? names.indexOf(resume.stage) : 0;
  if (resume?.stage !== undefined && resumeAt === 0 && names[0] !== resume.stage) {
    progress(c, `stage ${resume.stage} is not in this sequence (${names.join(", ")}): every stage runs`);
    delete c.at.resumeSession;
    delete c.at.resumeFile;
  }
  for (const stage of names) {
    if (resumeAt > 0) {
      resumeAt--;
      run.records.push({
        name: stage,
        status: "skipped",
        done_by_attempt: resume!.fromAttempt,
        exit_code: EXIT_CODES.SUCCESS,
        attempts: 0,
        duration_ms: 0,
        session_dirs: [],
      });
      progress(c, `stage ${stage}: done by attempt ${resume!.fromAttempt}`);
      continue;
    }
    if (skipNext === stage) {
      skipNext = undefined;
      run.records.push({ name: stage, status: "skipped", exit_code: EXIT_CODES.SUCCESS, attempts: 0, duration_ms: 0, session_dirs: [] });
      continue;
    }
    skipNext = undefined;
    const halt = haltBefore(c, stage);
    if (halt) {
      run.final = halt;
      break;
    }
    const o = await runStage(c, stepFor(steps, c.type, stage), stage, run, names);
    if (o.skipNext) skipNext = o.skipNext;
    if (o.exitCode === EXIT_CODES.SUCCESS) continue;
    if (o.exitCode === EXIT_CODES.PARTIAL_SUCCESS || passedOver(c, stage, o)) {
      run.partial = true;
      continue;
    }
    run.final = o.exitCode;
    await stoppedBy(c, stage, o);
    break;
  }
  return run;
}

/**
 * A stage that is not required (`required: false` in .forge/stages.yml) and failed — exit 1, or its own
 * time limit — is passed over: the sequence goes on, partial. Every other end stops it as ever.
 */
function passedOver(c: StageContext, stage: StageName, o: StageOutcome): boolean {
  if (c.settings[stage]?.required !== false) return false;
  if (o.exitCode !== EXIT_CODES.FAILURE && o.exitCode !== EXIT_CODES.TIMEOUT) return false;
  if (o.result?.rateLimitedUntil || c.options.signal?.aborted) return false;
  if (o.exitCode === EXIT_CODES.TIMEOUT && c.options.deadline !== undefined && Date.now() >= c.options.deadline) return false;
  progress(c, `stage ${stage} is not required: going on without it`);
  return true;
}

function stepFor(steps: StepTables, type: StagedAgentType, stage: StageName): StageStep {
  const step = (steps[type] as Partial<Record<StageName, StageStep>>)[stage];
  if (!step) throw new Error(`stage '${stage}' is not available to type ${type}`);
  return step;
}

/** Cancelled (20) or out of time (21) before `stage` starts. */
function haltBefore(c: StageContext, stage: StageName): ExitCode | undefined {
  if (c.options.signal?.aborted) {
    c.out.error = "cancelled";
    return EXIT_CODES.INTERRUPTED;
  }
  if (c.options.deadline !== undefined && Date.now() >= c.options.deadline) {
    c.out.error = `the agent's time budget ran out before stage ${stage}`;
    return EXIT_CODES.TIMEOUT;
  }
  return undefined;
}

/** Runs one stage, records it, and gives the caller's `onStageEnd` its turn (its errors are progress, never fatal). */
async function runStage(
  c: StageContext,
  step: StageStep,
  stage: StageName,
  run: SequenceRun,
  names: readonly StageName[],
): Promise<StageOutcome> {
  progress(c, `stage ${stage} started`);
  c.at.stage = stage;
  const t0 = Date.now();
  const o = await step(c);
  const rec: StageRecord = {
    name: stage,
    status: stageStatusOf(o.exitCode),
    exit_code: o.exitCode,
    attempts: o.attempts,
    ...(c.settings[stage]?.required === false ? { required: false as const } : {}),
    ...modelOfStage(c, stage),
    duration_ms: Date.now() - t0,
    session_dirs: o.sessionDirs.map((d) => path.relative(c.sessionDir, d) || "."),
    ...(o.artifact ? { artifact: path.relative(c.sessionDir, o.artifact) || o.artifact } : {}),
    ...(o.error ? { error: o.error } : {}),
  };
  run.records.push(rec);
  progress(c, `stage ${stage}: ${rec.status} (exit ${o.exitCode})`);
  if (c.options.onStageEnd) {
    try {
      await c.options.onStageEnd(stage, rec, stageProgress(c, names, run.records));
    } catch (err) {
      progress(c, `after stage ${stage}: ${(err as Error).message}`);
    }
  }
  return o;
}

/** The model the stage's sessions of the task's own kind ran on, for its record. */
function modelOfStage(c: StageContext, stage: StageName): Pick<StageRecord, "model" | "tier" | "role"> {
  const m = c.models.get(stage);
  if (!m) return {};
  return { ...(m.model !== undefined ? { model: m.model } : {}), ...(m.tier ? { tier: m.tier } : {}), role: m.role };
}

/** What the result says about the stage that stopped the sequence: its error, reset time, question, refinement or Change Request. */
async function stoppedBy(c: StageContext, stage: StageName, o: StageOutcome): Promise<void> {
  const { out, reports } = c;
  // The agent's reports, never read through a link (src/agent/agent-files.ts): a refused one is absent.
  const warn = (m: string) => progress(c, m);
  if (o.error) out.error = `${stage}: ${o.error}`;
  if (o.result?.rateLimitedUntil) out.rateLimitedUntil = o.result.rateLimitedUntil;
  if (o.exitCode === EXIT_CODES.HUMAN_INPUT)
    out.question = (await readAgentText(c.sessionDir, reports.question, warn)) ?? o.result?.result ?? "The agent needs a person's input.";
  if (o.exitCode === EXIT_CODES.NEEDS_REFINEMENT)
    out.refinement ??= (await readAgentText(c.sessionDir, reports.refinement, warn)) ?? o.result?.result ?? o.error ?? "";
  if (o.exitCode === EXIT_CODES.NEEDS_ESCALATION && existsSync(reports.changeRequest)) out.changeRequestPath = reports.changeRequest;
}

/**
 * Where the sequence stands after `records`: the stages done (ended well, or done by the attempt a
 * resumed one continues), the ones still to run — a stage that failed or was stopped among them, first —
 * the last session of the task's own kind, and the depth.
 */
export function stageProgress(c: StageContext, names: readonly StageName[], records: readonly StageRecord[]): StageProgress {
  const completed: StageProgress["completed"] = [];
  for (const r of records) {
    // A stage passed over (not required) is not run again by a resumed attempt.
    const ok =
      r.status === "success" || r.status === "partial" || r.status === "skipped" || (r.required === false && r.status === "failure");
    if (!ok) break;
    completed.push({ name: r.name as StageName, exit_code: r.exit_code });
  }
  const done = new Set(completed.map((x) => x.name));
  const last = c.at.last;
  const depthUsed = Number(c.env[ENV.depth] ?? 0);
  return {
    completed,
    pending: names.filter((n) => !done.has(n)),
    ...(last ? { session: { adapter: c.options.spawn.adapter, id: last.id, stage: last.stage } } : {}),
    depthUsed: Number.isInteger(depthUsed) && depthUsed >= 0 ? depthUsed : 0,
    depthMax: c.options.spawn.maxDepth ?? 3,
    traceId: c.traceId,
  };
}

/** The result and the manifest; `configError` (a malformed `.forge/stages.yml`) fails the attempt with its message. */
export async function finishStages(
  c: StageContext,
  names: readonly StageName[],
  run: SequenceRun,
  configError?: string,
): Promise<StagesResult> {
  const { out, tally, task } = c;
  let final = run.final;
  if (configError) {
    final = EXIT_CODES.FAILURE;
    out.error = configError;
  }
  const exitCode: ExitCode = final ?? (run.partial ? EXIT_CODES.PARTIAL_SUCCESS : EXIT_CODES.SUCCESS);
  if (succeeded(exitCode) && existsSync(c.reports.walkthrough)) out.walkthroughPath = c.reports.walkthrough;
  if (tally.sawCost) out.costUsd = Math.round(tally.costUsd * 1e6) / 1e6;
  if (tally.turns > 0) out.turns = tally.turns;
  const { records } = run;
  const manifest: StageManifest = {
    orchestrator: `forge-stages-${c.type}`,
    version: 1,
    agent_type: c.type,
    run_id: task.runId,
    task_id: task.taskId,
    attempt: task.attempt,
    trace_id: c.traceId,
    started_at: c.startedAt.toISOString(),
    finished_at: new Date().toISOString(),
    stages: records,
    summary: {
      total: names.length,
      passed: records.filter((r) => r.status === "success").length,
      failed: records.filter((r) => r.status === "failure").length,
      skipped: records.filter((r) => r.status === "skipped").length,
      exit_code: exitCode,
    },
  };
  const manifestPath = path.join(c.sessionDir, "manifest.json");
  await writeFileAtomic(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  const models = [...c.models].map(([stage, m]) => ({
    stage,
    role: m.role,
    ...(m.tier ? { tier: m.tier } : {}),
    ...(m.model !== undefined ? { model: m.model } : {}),
  }));
  return {
    exitCode,
    manifest,
    manifestPath,
    ...out,
    ...(models.length ? { models } : {}),
    ...(configError ? {} : { progress: stageProgress(c, names, records) }),
  };
}
