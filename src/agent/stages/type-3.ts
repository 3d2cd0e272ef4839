/**
 * Type 3: plans the task as subtask files, then has each worked by a type 1 or 2 session (see
 * subtasks.ts); `implement`, `verify` and `walkthrough` are its own sessions as for types 1 and 2.
 */
import { implementStage, singleStage, verifyStage, walkthroughStage } from "./common.js";
import { retried, type StageContext, type StageOutcome, type StageSteps } from "./context.js";
import { basePrompt } from "./prompt.js";
import { taskSentinel } from "./task-sentinel.js";
import { subtaskDir, subtaskFilesProblem, workSubtasks } from "./subtasks.js";

/** Writes the subtask files; the stage fails (and is retried once) when none is written or one cannot be read. */
async function planStage(c: StageContext): Promise<StageOutcome> {
  const dir = subtaskDir(c.sessionDir);
  return retried(c, "plan", c.type, `${basePrompt(c, "plan")}\n\n## Subtask folder\n\n${dir}`, () => subtaskFilesProblem(dir));
}

export const TYPE_3_STEPS: StageSteps<"3"> = {
  single: singleStage,
  plan: planStage,
  work: workSubtasks,
  implement: implementStage,
  verify: verifyStage,
  walkthrough: walkthroughStage,
  sentinel: taskSentinel,
};
