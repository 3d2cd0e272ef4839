/**
 * Types 1 and 2: the task in one session (`single`) or as implement → verify → walkthrough, each
 * stage a session of the agent's own type, then the task sentinel (task-sentinel.ts) of another role. The two differ only in their system prompt and in what
 * they may spawn, both of which follow the type; their stages are the same.
 */
import { implementStage, singleStage, verifyStage, walkthroughStage } from "./common.js";
import type { StageSteps } from "./context.js";
import { taskSentinel } from "./task-sentinel.js";

export const TYPE_1_STEPS: StageSteps<"1"> = {
  single: singleStage,
  implement: implementStage,
  verify: verifyStage,
  walkthrough: walkthroughStage,
  sentinel: taskSentinel,
};

export const TYPE_2_STEPS: StageSteps<"2"> = TYPE_1_STEPS;
