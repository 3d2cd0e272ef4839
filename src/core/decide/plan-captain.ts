/**
 * `/forge plan` on an issue: a plan Captain writes a plan from the issue as a pull request. It has
 * no run — a run begins when its plan is merged — so there is no journal to decide against; what
 * it is dispatched with is still decided here, from the core's names and dispatch inputs, and the
 * App carries it out idempotently (docs/executor.md#plan-captains).
 */
import { cutDispatchContext } from "../dispatch-inputs.js";
import { DISPATCH_INPUTS, planCaptainBranch, planCaptainId, planRunId } from "../layout.js";

/** Outside text handed to an agent is cut at this length (docs/architecture.md#trust-boundaries). */
export const OUTSIDE_TEXT_LIMIT = 20_000;

export interface PlanCaptainRequest {
  issue: number;
  title: string;
  body: string;
}

/** Where a plan Captain works (`forge/_plan-<issue>`, cut from the default branch) and the inputs of its dispatch. */
export interface PlanCaptainDispatch {
  branch: string;
  inputs: Record<string, string>;
}

export function planCaptainDispatch(req: PlanCaptainRequest): PlanCaptainDispatch {
  const base = {
    [DISPATCH_INPUTS.runId]: planRunId(req.issue),
    [DISPATCH_INPUTS.taskId]: planCaptainId(req.issue),
    [DISPATCH_INPUTS.attempt]: "1",
  };
  // No run, so no state branch to hold a long text: the body is cut to fit GitHub's limit on inputs.
  // GitHub keeps an issue title under 256 characters; the cut only guards the limit on inputs.
  const title = req.title.slice(0, 1_024);
  const context = cutDispatchContext(base, { issue: req.issue, title, body: req.body.slice(0, OUTSIDE_TEXT_LIMIT) }, "body");
  return { branch: planCaptainBranch(req.issue), inputs: { ...base, [DISPATCH_INPUTS.context]: JSON.stringify(context) } };
}
