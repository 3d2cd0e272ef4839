/**
 * The task sentinel (docs/runner.md#the-task-sentinel): after a type 1, 2 or 3 task's own stages, an
 * agent of another role — `sentinel`, which did not write the code — checks the work against the
 * task's acceptance criteria and its tests. Each cycle Forge runs the task's test command (a fact,
 * not a claim) and the sentinel grades the checkout in an audit report (`Grade: PASS|WARN|FAIL`) with
 * a fix list; a FAIL has the implementer (a session of the task's own type) fix the list, and the
 * sentinel checks again, in the refinery's bounded loop (fix-loop.ts). Still failing after the last
 * cycle, the stage ends with exit 10 and a refinement document built from the sentinel's findings:
 * the next attempt starts from them.
 */
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { EXIT_CODES, needsOthers } from "../../core/exit-codes.js";
import { readAgentText, writeInAgentFolder } from "../agent-files.js";
import { REFINEMENT_HEADING } from "../refinement.js";
import { isAbort, progress, retried, session, SessionLog, type StageContext, type StageOutcome } from "./context.js";
import { boundedFixLoop, type Grade, type LoopCheck } from "./fix-loop.js";
import { stagePrompt } from "./prompt.js";
import { blockingFixes, readGrade, runTestCommand, sentinelDir, writeSentinelSummary, type Verification } from "./sentinel.js";
import type { SentinelVerdict } from "./types.js";

/** The role that checks a task: its own system prompt (prompts/sentinel.md), its own model tier when one is set. */
export const SENTINEL_ROLE = "sentinel" as const;

/** Fix cycles of the task sentinel when the config says nothing (`sentinel.max_cycles`). */
export const DEFAULT_TASK_SENTINEL_CYCLES = 2;

interface TaskCheck extends LoopCheck {
  audit: string;
  fixList?: string;
  tests?: Verification;
}

/** The `sentinel` stage. */
export async function taskSentinel(c: StageContext): Promise<StageOutcome> {
  const log = new SentinelLog();
  const maxCycles = c.options.sentinel?.maxCycles ?? DEFAULT_TASK_SENTINEL_CYCLES;
  const end = await boundedFixLoop<TaskCheck>({
    maxCycles,
    check: (cycle) => check(c, log, cycle),
    fix: (cycle, found) => fix(c, log, cycle, found),
  });
  if ("stop" in end) return end.stop;
  const verdict: SentinelVerdict = {
    role: SENTINEL_ROLE,
    grade: end.grade,
    cycles: end.cycles,
    fixes: log.fixes,
    blocking_counts: end.blocking,
  };
  c.out.sentinel = verdict;
  const summary = await writeSentinelSummary(c, { ...verdict });
  if (end.grade !== "FAIL") return { exitCode: EXIT_CODES.SUCCESS, attempts: log.attempts, sessionDirs: log.dirs, artifact: summary };
  await writeInAgentFolder(c.sessionDir, c.reports.refinement, await refinement(c, verdict, end.last));
  return {
    exitCode: EXIT_CODES.NEEDS_REFINEMENT,
    attempts: log.attempts,
    sessionDirs: log.dirs,
    artifact: summary,
    error: `the sentinel still finds blocking problems after ${end.cycles} cycle(s)`,
  };
}

/** The sessions of the stage, and how many fixes the implementer made. */
class SentinelLog extends SessionLog {
  fixes = 0;
}

/** One check: the test command (when the task has one), then the sentinel's audit. */
async function check(c: StageContext, log: SentinelLog, cycle: number | "final"): Promise<TaskCheck | { stop: StageOutcome }> {
  const dir = path.join(sentinelDir(c), cycle === "final" ? "final" : `cycle-${cycle}`);
  await mkdir(dir, { recursive: true });
  const tests = c.task.testCommand ? await runTestCommand(c, dir, c.task.testCommand) : undefined;
  if (tests) progress(c, `sentinel ${cycle}: test command ${tests.results.overall}`);
  const audit = path.join(dir, "audit-report.md");
  const fixList = path.join(dir, "fix-list.json");
  const prompt = [
    stagePrompt(
      c.task,
      "sentinel",
      c.reports,
      [
        `You are the task's sentinel: another agent wrote this work. Check the checkout against every acceptance criterion of the task and run its tests.`,
        `Write the audit report (first line \`Grade: PASS\`, \`Grade: WARN\` or \`Grade: FAIL\`) and, on FAIL, the fix list. Change no file of the repository.`,
      ].join(" "),
      c.workdir,
    ),
    [
      `## Sentinel files`,
      ``,
      `- Check: ${cycle}`,
      `- Write the audit report to: ${audit}`,
      `- Write the fix list to: ${fixList}`,
      `- The implementer's walkthrough: ${c.reports.walkthrough}${existsSync(c.reports.walkthrough) ? "" : " (not written)"}`,
      `- Test command results (Forge ran it): ${tests ? `${tests.file} (${tests.results.overall})` : "(the task has no test command)"}`,
      ...(c.task.baseRef ? [`- The work's base ref: ${c.task.baseRef}`] : []),
    ].join("\n"),
  ].join("\n\n");
  // Checked like any stage: exit 1 (or no grade) → tried once more; still no verdict → the stage fails.
  const s = await retried(c, `sentinel-${cycle}`, SENTINEL_ROLE, prompt, async () =>
    (await readGrade(c, audit)) ? undefined : `the sentinel wrote no audit report with a Grade line at ${audit}`,
  );
  log.attempts += s.attempts;
  log.dirs.push(...s.sessionDirs);
  if (s.exitCode !== EXIT_CODES.SUCCESS) return { stop: { ...s, attempts: log.attempts, sessionDirs: log.dirs } };
  let grade: Grade = (await readGrade(c, audit)) ?? "FAIL";
  const testsFailed = tests?.results.overall === "FAIL";
  if (testsFailed && grade !== "FAIL") {
    // The test command's exit code is a fact: no grade passes a failing test.
    progress(c, `sentinel ${cycle}: graded ${grade}, but the test command fails: FAIL`);
    grade = "FAIL";
  }
  const listed = existsSync(fixList) ? await blockingFixes(c, fixList) : undefined;
  const blocking = grade === "FAIL" ? Math.max(listed ?? 0, testsFailed ? 1 : 0, 1) : 0;
  return { grade, blocking, remaining: blocking, audit, ...(existsSync(fixList) ? { fixList } : {}), ...(tests ? { tests } : {}) };
}

/** The implementer — a session of the task's own type — fixes what the sentinel found. */
async function fix(c: StageContext, log: SentinelLog, cycle: number, found: TaskCheck): Promise<StageOutcome | undefined> {
  const prompt = [
    stagePrompt(
      c.task,
      "sentinel-fix",
      c.reports,
      `An independent sentinel checked your work against the task's acceptance criteria and found blocking problems (cycle ${cycle}). Fix each blocking item of the fix list with the smallest safe change, run the tests again, and update the walkthrough where your fix changes what it says. The sentinel checks again after you.`,
      c.workdir,
    ),
    `## Sentinel files\n\n- Fix list: ${found.fixList ?? "(none written; use the audit report)"}\n- Audit report: ${found.audit}${found.tests ? `\n- Test command results: ${found.tests.file}` : ""}`,
  ].join("\n\n");
  const f = log.add(await session(c, `sentinel-fix-${cycle}`, c.type, prompt));
  log.fixes++;
  if (isAbort(f) || needsOthers(f.exitCode)) return log.endWith(f, f.error?.message);
  return undefined;
}

/** The refinement document of a FAIL: what the sentinel found, for the next attempt. */
async function refinement(c: StageContext, v: SentinelVerdict, last: TaskCheck): Promise<string> {
  const rel = (f: string) => path.relative(c.sessionDir, f);
  const audit = (await readAgentText(c.sessionDir, last.audit)) ?? "";
  return [
    `# ${REFINEMENT_HEADING}`,
    `## Summary\n\nThe task's sentinel still finds blocking problems after ${v.cycles} fix cycle(s).`,
    `## Context\n\nStage: sentinel. Artifact: ${rel(last.audit)}. Attempt: ${c.task.attempt}.`,
    `## Issue\n\nThe work does not meet the task's acceptance criteria or its tests, as an agent that did not write it checked them; blocking problems per check: ${v.blocking_counts.join(", ")}.`,
    `## Diagnostics\n\n${
      [
        last.tests ? `- Test command: ${last.tests.results.overall}` : "",
        `- The sentinel's last audit report:\n\n${audit.slice(0, 8_000).replace(/^/gm, "    ")}`,
      ]
        .filter(Boolean)
        .join("\n") || "- (none)"
    }`,
    `## Suggested Resolution\n\nFix the findings of the audit report, run the task's tests, and check every acceptance criterion before ending.`,
  ].join("\n\n");
}
