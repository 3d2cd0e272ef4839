/**
 * The Captain: writes a plan folder or an overlay for the goal it is given, then Forge validates the
 * plan itself; the Captain corrects what validation finds, at most twice, before the stage ends with
 * a refinement document (exit 10) listing what is left.
 */
import { assertNoLinks, findLinks, writeInAgentFolder } from "../agent-files.js";
import path from "node:path";
import { EXIT_CODES } from "../../core/exit-codes.js";
import { loadPlan } from "../../core/plan/load.js";
import { validatePlan } from "../../core/plan/validate.js";
import { formatProblem } from "../../core/problems.js";
import { walkthroughStage } from "./common.js";
import { isAbort, progress, retried, session, SessionLog, type StageContext, type StageOutcome, type StageSteps } from "./context.js";
import { basePrompt, stagePrompt } from "./prompt.js";

/** Corrections the Captain gets before the validate stage gives up. */
const MAX_CORRECTIONS = 2;

/** The Captain's whole job in one session; its plan is what counts, so no walkthrough check. */
const singleStage = (c: StageContext) => retried(c, "single", c.type, basePrompt(c, "single"));

const writeStage = (c: StageContext) =>
  retried(c, "write", c.type, `${basePrompt(c, "write")}${c.task.planDir ? `\n\n## Plan folder\n\n${c.task.planDir}` : ""}`);

/**
 * The plan's problems as `file:line field — message`, or why it cannot be read (`forge validate`'s);
 * a folder under `workdir` that holds a link, or lies under one, is refused before anything is read.
 */
export async function planProblems(workdir: string, planDir: string): Promise<string[]> {
  // The Captain wrote the folder: the validator, which reads every task file, never follows its links.
  try {
    assertNoLinks(workdir, planDir);
  } catch (err) {
    return [(err as Error).message];
  }
  const links = findLinks(planDir);
  if (links.length) return links.map((l) => `${l} is a symbolic link: a plan folder holds files only`);
  return loadPlan(planDir)
    .then((p) => validatePlan(p).map((x) => formatProblem(x)))
    .catch((err: unknown) => [`the plan cannot be read: ${(err as Error).message}`]);
}

/** The validate stage: validation reports go to `validate-N.txt`; problems go back to the Captain. */
async function validateWithSelfHeal(c: StageContext): Promise<StageOutcome> {
  const { task } = c;
  const planDir = task.planDir ? path.resolve(c.workdir, task.planDir) : undefined;
  if (!planDir)
    return { exitCode: EXIT_CODES.FAILURE, attempts: 0, sessionDirs: [], error: "no plan folder to validate (taskContext.planDir)" };
  const log = new SessionLog();
  for (let heal = 0; ; heal++) {
    const problems = await planProblems(c.workdir, planDir);
    const report = path.join(c.sessionDir, `validate-${heal + 1}.txt`);
    await writeInAgentFolder(c.sessionDir, report, problems.length === 0 ? "OK\n" : `${problems.join("\n")}\n`);
    if (problems.length === 0)
      return { exitCode: EXIT_CODES.SUCCESS, attempts: Math.max(1, log.attempts), sessionDirs: log.dirs, artifact: report };
    if (heal >= MAX_CORRECTIONS) {
      await writeValidateRefinement(c, heal, problems);
      return {
        exitCode: EXIT_CODES.NEEDS_REFINEMENT,
        attempts: log.attempts,
        sessionDirs: log.dirs,
        artifact: c.reports.refinement,
        error: `${problems.length} validation problem(s) left`,
      };
    }
    progress(c, `plan invalid (${problems.length} problem(s)); the captain corrects it`);
    const prompt = [
      stagePrompt(
        task,
        "write",
        c.reports,
        "`forge validate` found problems in the plan. Fix every one of them, validate again, and update the walkthrough.",
        c.workdir,
      ),
      `## Plan folder\n\n${task.planDir}`,
      `## Problems\n\n${problems.map((p) => `- ${p}`).join("\n")}`,
    ].join("\n\n");
    const r = log.add(await session(c, `write-fix-${heal + 1}`, "captain", prompt));
    if (isAbort(r)) return log.endWith(r);
  }
}

/** The refinement document of a plan still invalid after `heal` corrections; it is also the result's. */
async function writeValidateRefinement(c: StageContext, heal: number, problems: string[]): Promise<void> {
  const doc = [
    "# Refinement Request",
    "## Summary",
    `The plan in ${c.task.planDir} is still invalid after ${heal} correction(s).`,
    "## Context",
    `- Stage: validate\n- Artifact: ${c.task.planDir}\n- Attempt: ${heal + 1} of ${heal + 1} (self-heal exhausted)`,
    "## Issue",
    "`forge validate` reports problems the captain could not fix.",
    "## Diagnostics",
    problems.map((p) => `- ${p}`).join("\n"),
    "## Suggested Resolution",
    "Fix the listed problems by hand, or retry with clearer instructions.",
  ].join("\n\n");
  await writeInAgentFolder(c.sessionDir, c.reports.refinement, `${doc}\n`);
  c.out.refinement = doc;
}

export const CAPTAIN_STEPS: StageSteps<"captain"> = {
  single: singleStage,
  write: writeStage,
  validate: validateWithSelfHeal,
  walkthrough: walkthroughStage,
};
