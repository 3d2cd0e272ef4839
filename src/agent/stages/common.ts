/** The stages that are one session of the agent's own type, shared by every type that lists them. */
import { succeeded } from "../../core/exit-codes.js";
import { retried, walkthroughCheck, type StageContext, type StageOutcome, type StageStep } from "./context.js";
import { basePrompt } from "./prompt.js";

/** The whole task in one session, walkthrough included (checked). */
export const singleStage: StageStep = (c) => retried(c, "single", c.type, basePrompt(c, "single"), walkthroughCheck(c));

export const implementStage: StageStep = (c) => retried(c, "implement", c.type, basePrompt(c, "implement"));

export const verifyStage: StageStep = (c) => retried(c, "verify", c.type, basePrompt(c, "verify"));

/**
 * Reviews the work and writes the walkthrough, which must be there and valid; it is the stage's
 * artifact. A partial end (12) here reports partial work and is not tried again: writing the report
 * a second time would not finish the work.
 */
export async function walkthroughStage(c: StageContext): Promise<StageOutcome> {
  const o = await retried(c, "walkthrough", c.type, basePrompt(c, "walkthrough"), walkthroughCheck(c), { partial: false });
  return succeeded(o.exitCode) ? { ...o, artifact: c.reports.walkthrough } : o;
}
