// The Captain jobs of the Action: the Captain of a Change Request (overlay.ts) writes the plan
// folder's next overlay and opens its PR; the plan Captain (plan.ts) writes a new plan folder from an
// issue. shared.ts holds what both do: the report, the agent under supervision, the plan folder
// staged alone and validated, the PR.
export type { CaptainReport } from "./shared.js";
export type { CaptainCheck, CaptainContext } from "./overlay.js";
export { captainDispatchJob, captainJob, checkCaptainDispatch } from "./overlay.js";
export type { CaptainPlanContext } from "./plan.js";
export { captainPlanJob, planIdFromTitle } from "./plan.js";
