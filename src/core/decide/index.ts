/**
 * The executor as a pure reducer: no I/O, no clock, no randomness. The same journal, input, time
 * and config always give the same result: the next journal, the events, the effects to carry out,
 * the transitions made and the inputs refused.
 */
import type { Input } from "../inputs.js";
import type { Journal } from "../journal.js";
import type { ForgeConfig } from "../schemas/config.js";
import { apply } from "./handlers.js";
import { Step, type Decision } from "./step.js";
import { settle } from "./tick.js";

export { agentId } from "./names.js";
export { branchName } from "../layout.js";
export { startRun, type NewRun } from "./start-run.js";
export type { Decision, Rejection, Transition } from "./step.js";

/** Apply the input (each leaf of a batch in turn), then settle: complete the run, or dispatch what is ready. */
export function decide(journal: Journal, input: Input, now: number, config: ForgeConfig): Decision {
  const step = new Step(journal, now, config);
  const leaves = input.kind === "batch" ? input.inputs : [input];
  leaves.forEach((leaf, k) => {
    step.leaf = k;
    apply(step, leaf);
  });
  settle(step);
  return step.finish();
}
