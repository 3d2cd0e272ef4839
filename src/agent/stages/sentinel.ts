/**
 * The refinery's verification and its sentinel loop. The test stage runs the test command (or has a
 * sentinel executor verify when there is none); when it fails, the fix stage loops: a sentinel
 * writer writes a test specification once, then each cycle verifies, a sentinel auditor grades the
 * results (PASS or WARN end the loop), a consolidator writes the fix list and the refinery fixes it.
 * The loop ends after `maxSentinelCycles` (default 3; the last fix is judged by a final retest), or
 * earlier when two consecutive cycles leave as many blocking items as before them. Still failing,
 * the refinery explains it as a Change Request (exit 11).
 */
import { readAgentText, writeInAgentFolder } from "../agent-files.js";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { EXIT_CODES, needsOthers } from "../../core/exit-codes.js";
import { ENV } from "../depth.js";
import { pickEnv } from "../env.js";
import { runRepoCommand } from "../repo-command.js";
import { writeFileAtomic } from "../signals.js";
import type { SpawnResult } from "../types.js";
import { writeChangeRequest } from "./change-request.js";
import { isAbort, progress, session, SessionLog, type StageContext, type StageOutcome, type StageSession } from "./context.js";
import { boundedFixLoop, type Grade, type LoopCheck, type LoopEnd } from "./fix-loop.js";
import { stagePrompt } from "./prompt.js";
import { reportProblems } from "./reports.js";

export interface VerificationResults {
  checks: Array<{ name: string; tool: string; passed: boolean; errors: number; output?: string }>;
  overall: "PASS" | "FAIL";
  blocking_count: number;
}

export interface Verification {
  results: VerificationResults;
  /** `verification-results.json` of the cycle. */
  file: string;
  /** The sentinel executor's session, when there is no test command. */
  result?: StageSession;
}

/** Where the fix stage's cycles go: `test-spec.md`, `cycle-N/`, `final/`, `grade.txt`, `summary.json`. */
export function sentinelDir(c: StageContext): string {
  return path.join(c.sessionDir, "sentinel");
}

/** The test stage: a failing test is not this stage's failure; the fix stage takes it from there, and is skipped on a pass. */
export async function initialTest(c: StageContext): Promise<StageOutcome> {
  const v = await verification(c, path.join(sentinelDir(c), "initial"));
  const passed = v.results.overall === "PASS";
  progress(c, `initial verification: ${v.results.overall}`);
  const log = new SessionLog();
  if (v.result) log.add(v.result);
  if (v.result && isAbort(v.result)) return log.endWith(v.result);
  return {
    exitCode: EXIT_CODES.SUCCESS,
    attempts: Math.max(1, log.attempts),
    sessionDirs: log.dirs,
    artifact: v.file,
    ...(passed ? { skipNext: "fix" as const } : {}),
  };
}

/** Runs the task's test command in `cycleDir` (as the agent's user, its output and results kept there): a fact, not an agent's claim. */
export async function runTestCommand(c: StageContext, cycleDir: string, command: string): Promise<Verification> {
  const { task, options } = c;
  await mkdir(cycleDir, { recursive: true });
  const file = path.join(cycleDir, "verification-results.json");
  // The test command runs the agents' code: as the agent's user, with the agent's plain
  // environment (no keys or tokens), every process of it gone when it ends (src/agent/repo-command.ts).
  const testEnv = {
    ...pickEnv(c.env, options.spawn.passEnv ?? []),
    [ENV.trace]: c.traceId,
    FORGE_RUN_ID: task.runId,
    FORGE_TASK_ID: task.taskId,
  };
  const run = await runRepoCommand({
    command,
    cwd: c.workdir,
    env: testEnv,
    timeoutMs: options.testTimeoutMs ?? 20 * 60_000,
    scratchDir: path.join(cycleDir, "test-command"),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.spawn.runAs ? { runAs: options.spawn.runAs } : {}),
  });
  if (run.survivors?.length) progress(c, `test command: processes of the agent's user outlived every kill: ${run.survivors.join(", ")}`);
  await writeInAgentFolder(c.sessionDir, path.join(cycleDir, "test-output.log"), run.output);
  const results: VerificationResults = {
    checks: [{ name: "tests", tool: command, passed: run.code === 0, errors: run.code === 0 ? 0 : 1, output: run.output.slice(-4_000) }],
    overall: run.code === 0 ? "PASS" : "FAIL",
    blocking_count: run.code === 0 ? 0 : 1,
  };
  await writeFileAtomic(file, `${JSON.stringify(results, null, 2)}\n`);
  return { results, file };
}

/** Runs the test command, or has the sentinel executor verify when there is none. */
async function verification(c: StageContext, cycleDir: string, specPath?: string): Promise<Verification> {
  const { task } = c;
  if (task.testCommand) return runTestCommand(c, cycleDir, task.testCommand);
  await mkdir(cycleDir, { recursive: true });
  const file = path.join(cycleDir, "verification-results.json");
  const prompt = [
    `# Verify task ${task.taskId}`,
    `Run the checks of the specification, and the repository's own tests, type checks and linters.`,
    `## Files\n\n- Test specification: ${specPath ?? "(none: use the task's acceptance criteria)"}\n- Write the results to: ${file}`,
    `## The task\n\n${task.task.trim()}`,
  ].join("\n\n");
  const r = await session(c, "sentinel-executor", "sentinel-executor", prompt);
  const results = await readJson<VerificationResults>(c, file);
  return { results: results ?? { checks: [], overall: "FAIL", blocking_count: 1 }, file, result: r };
}

/** One cycle's check: the verification, and when it failed the auditor's grade and the consolidator's fix list. */
interface RefineryCheck extends LoopCheck {
  v: Verification;
  audit?: string;
  fixList?: string;
}

/** The loop's state across its cycles. */
interface SentinelRun {
  readonly log: SessionLog;
  specPath?: string;
  lastFixList?: string;
  /** The latest verification. */
  v?: Verification;
}

/** The fix stage: the shared bounded loop (fix-loop.ts), checked by the sentinel roles, fixed by the refinery. */
export async function sentinelLoop(c: StageContext): Promise<StageOutcome> {
  const run: SentinelRun = { log: new SessionLog() };
  const w = await writeTestSpec(c, run);
  if (isAbort(w)) return run.log.endWith(w, w.error?.message ?? "");
  const end = await boundedFixLoop<RefineryCheck>({
    maxCycles: c.options.maxSentinelCycles ?? 3,
    check: (cycle) => refineryCheck(c, run, cycle),
    fix: (cycle, found) => refineryFix(c, run, cycle, found),
  });
  if ("stop" in end) return end.stop;
  return sentinelVerdict(c, run, end);
}

/** The sentinel writer's session: the test specification the cycles verify against. */
async function writeTestSpec(c: StageContext, run: SentinelRun): Promise<SpawnResult> {
  const { task } = c;
  const spec = path.join(sentinelDir(c), "test-spec.md");
  const upstream = (task.dependencyWalkthroughs ?? []).map((w) => `### ${w.taskId}\n\n${w.text.trim()}`).join("\n\n");
  const prompt = [
    `# Test specification for ${task.taskId}`,
    `Write the test specification to: ${spec}`,
    `## The refinery's task\n\n${task.task.trim()}`,
    upstream ? `## Upstream walkthroughs\n\n${upstream}` : "",
  ]
    .filter(Boolean)
    .join("\n\n");
  const w = run.log.add(await session(c, "sentinel-writer", "sentinel-writer", prompt));
  if (existsSync(spec)) run.specPath = spec;
  return w;
}

/** Counts the verification's executor session; returns how the stage ends when it aborted. */
function countVerification(run: SentinelRun, v: Verification): StageOutcome | undefined {
  if (!v.result) return undefined;
  run.log.add(v.result);
  return isAbort(v.result) ? run.log.endWith(v.result) : undefined;
}

/** Verifies; on a failure (before the final retest) the auditor grades it and the consolidator writes the fix list. */
async function refineryCheck(c: StageContext, run: SentinelRun, cycle: number | "final"): Promise<RefineryCheck | { stop: StageOutcome }> {
  const { task } = c;
  const cycleDir = path.join(sentinelDir(c), cycle === "final" ? "final" : `cycle-${cycle}`);
  const v = await verification(c, cycleDir, run.specPath);
  run.v = v;
  const stop = countVerification(run, v);
  if (stop) return { stop };
  const blocking = v.results.blocking_count;
  if (v.results.overall === "PASS") return { grade: "PASS", blocking, remaining: 0, v };
  // After the last fix the retest alone decides.
  if (cycle === "final") return { grade: "FAIL", blocking, remaining: blocking, v };
  const audit = path.join(cycleDir, "audit-report.md");
  const a = run.log.add(
    await session(
      c,
      "sentinel-auditor",
      "sentinel-auditor",
      [
        `# Audit cycle ${cycle} of ${task.taskId}`,
        `## Files\n\n- Test specification: ${run.specPath ?? "(none)"}\n- Verification results: ${v.file}\n- Write the audit report to: ${audit}`,
        `## The task\n\n${task.task.trim()}`,
      ].join("\n\n"),
    ),
  );
  if (isAbort(a)) return { stop: run.log.endWith(a) };
  const auditGrade = await readGrade(c, audit);
  if (auditGrade === "PASS" || auditGrade === "WARN") return { grade: auditGrade, blocking, remaining: 0, v, audit };
  const fixList = path.join(cycleDir, "fix-list.json");
  const s = run.log.add(
    await session(
      c,
      "sentinel-consolidator",
      "sentinel-consolidator",
      [
        `# Fix list, cycle ${cycle} of ${task.taskId}`,
        `## Files\n\n- Audit report: ${audit}\n- Verification results: ${v.file}\n- Write the fix list to: ${fixList}`,
      ].join("\n\n"),
    ),
  );
  if (isAbort(s)) return { stop: run.log.endWith(s) };
  run.lastFixList = existsSync(fixList) ? fixList : undefined;
  // How much is left: the fix list's blocking items, or the failed checks when there is no list
  // (a single test command only says pass or fail).
  const left = run.lastFixList ? await blockingFixes(c, run.lastFixList) : undefined;
  return { grade: "FAIL", blocking, remaining: left ?? blocking, v, audit, ...(run.lastFixList ? { fixList: run.lastFixList } : {}) };
}

/** The refinery fixes the cycle's fix list. */
async function refineryFix(c: StageContext, run: SentinelRun, cycle: number, found: RefineryCheck): Promise<StageOutcome | undefined> {
  const fixPrompt = [
    stagePrompt(
      c.task,
      "fix",
      c.reports,
      `Sentinel cycle ${cycle}: fix the blocking items of the fix list, smallest safe change each, then re-run the checks. Do not write the walkthrough yet.`,
      c.workdir,
    ),
    `## Sentinel files\n\n- Fix list: ${found.fixList ?? "(none written; use the audit report)"}\n- Audit report: ${found.audit ?? "(none)"}\n- Verification results: ${found.v.file}`,
  ].join("\n\n");
  const f = run.log.add(await session(c, `fix-${cycle}`, "refinery", fixPrompt));
  if (isAbort(f) || needsOthers(f.exitCode)) return run.log.endWith(f, f.error?.message);
  return undefined;
}

/** Writes the grade and the summary; a FAIL ends in a Change Request (exit 11), written by Forge if the refinery wrote none. */
async function sentinelVerdict(c: StageContext, run: SentinelRun, end: LoopEnd<RefineryCheck>): Promise<StageOutcome> {
  const { task, reports } = c;
  const { log } = run;
  const { grade, cycles: cycle, blocking } = end;
  const dir = sentinelDir(c);
  await writeSentinelSummary(c, { grade, cycles: cycle, blocking_counts: blocking });
  if (grade !== "FAIL")
    return { exitCode: EXIT_CODES.SUCCESS, attempts: log.attempts, sessionDirs: log.dirs, artifact: path.join(dir, "summary.json") };

  const crPrompt = [
    stagePrompt(
      task,
      "fix",
      reports,
      `The sentinel loop ended after ${cycle} cycle(s) with blocking problems left. Write the change-request file explaining what in the plan must change, then end with FORGE_EXIT=11.`,
      c.workdir,
    ),
    `## Sentinel files\n\n- Last fix list: ${run.lastFixList ?? "(none)"}\n- Last verification results: ${run.v!.file}`,
  ].join("\n\n");
  log.add(await session(c, "change-request", "refinery", crPrompt));
  // The agent's own Change Request when it wrote a valid one (reports.ts); else Forge's.
  if (await reportProblems(c, EXIT_CODES.NEEDS_ESCALATION)) {
    await writeChangeRequest(reports.changeRequest, task, {
      title: `Verification keeps failing at ${task.taskId}`,
      reason: `The sentinel loop ran ${cycle} cycle(s); blocking problems per cycle: ${blocking.join(", ")}.`,
      description: `Verification of the integrated upstream work still fails. See the last verification results and fix list in the attempt's session folder.`,
      impact: "The refinery cannot pass; every task that depends on it waits.",
      resolution: "Amend the plan with tasks that fix the failing checks, or review the failures by hand.",
    });
  }
  return {
    exitCode: EXIT_CODES.NEEDS_ESCALATION,
    attempts: log.attempts,
    sessionDirs: log.dirs,
    artifact: reports.changeRequest,
    error: `verification still fails after ${cycle} sentinel cycle(s)`,
  };
}

/** `grade.txt` and `summary.json` in the sentinel folder: the loop's verdict. */
export async function writeSentinelSummary(
  c: StageContext,
  summary: { grade: Grade; cycles: number; blocking_counts: number[] } & Record<string, unknown>,
): Promise<string> {
  const dir = sentinelDir(c);
  const file = path.join(dir, "summary.json");
  // The stages' folder was the agents': never written through one of their links.
  await writeInAgentFolder(c.sessionDir, path.join(dir, "grade.txt"), `${summary.grade}\n`);
  await writeInAgentFolder(c.sessionDir, file, `${JSON.stringify(summary, null, 2)}\n`);
  progress(c, `sentinel: ${summary.grade} after ${summary.cycles} cycle(s)`);
  return file;
}

/** The `Grade:` line of an audit report, if it has one. */
export async function readGrade(c: StageContext, file: string): Promise<Grade | undefined> {
  const text = (await readAgentText(c.sessionDir, file, (m) => progress(c, m))) ?? "";
  return /^\s*Grade:\s*(PASS|WARN|FAIL)\b/im.exec(text)?.[1] as Grade | undefined;
}

/** The blocking items of a fix list (`severity` other than "warning"); undefined when it cannot be read. */
export async function blockingFixes(c: StageContext, file: string): Promise<number | undefined> {
  const fixes = (await readJson<{ fixes?: Array<{ severity?: string }> }>(c, file))?.fixes;
  return Array.isArray(fixes) ? fixes.filter((f) => f?.severity !== "warning").length : undefined;
}

/** An agent's JSON report in the stages' folder: never read through a link (src/agent/agent-files.ts). */
async function readJson<T>(c: StageContext, file: string): Promise<T | undefined> {
  const text = await readAgentText(c.sessionDir, file, (m) => progress(c, m));
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}
