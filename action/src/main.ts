/**
 * The Action's job, as data in and data out: `main({ config, input, deps })` routes the dispatch to
 * its job kind by the task id it names. No `@actions/core`, no `process.env`: the runner
 * (runner.ts) reads those and reports the outcome.
 *
 * Job kinds, tried in order (the first that claims the id runs):
 * - plan Captain `_captain-plan-<issue>` (`/forge plan` on an issue): a new plan folder as a PR to
 *   the default branch (captain/plan.ts). Tried before the Captain, whose pattern matches its id too.
 * - Captain `_captain-<crId>`: an overlay answering a Change Request, on its own branch with its own PR (captain/overlay.ts).
 * - task: any other id — one attempt of a plan task or a follow-up (task/job.ts).
 * The scheduled tick is not a job kind: it is the action's other mode (`mode: tick`, entry.ts), which
 * loads the App's reconciler (dist/tick.js) and never reaches `main`.
 */
import { CAPTAIN_ID, CAPTAIN_PLAN_ID } from "../../src/core/layout.js";
import { captainDispatchJob, captainPlanJob } from "./captain/index.js";
import { resolveDispatchContext } from "./dispatch-context.js";
import type { JobArgs, JobReport } from "./job.js";
import { maskedGitHub, maskerOf, maskReport } from "./publish.js";
import { taskJob } from "./task/job.js";

export type { AttemptReport, JobArgs, JobReport, JobLogger, MainDeps, MainInput, NeutralReport, Timings } from "./job.js";
export { JobError } from "./job.js";

export interface JobKind {
  readonly name: string;
  claims(taskId: string): boolean;
  run(args: JobArgs): Promise<JobReport>;
}

export const JOB_KINDS: readonly JobKind[] = [
  {
    name: "plan Captain",
    claims: (id) => CAPTAIN_PLAN_ID.test(id),
    run: (args) => captainPlanJob({ ...args, context: args.input.context }),
  },
  { name: "Captain", claims: (id) => CAPTAIN_ID.test(id), run: captainDispatchJob },
  { name: "task", claims: () => true, run: taskJob },
];

export function jobKindOf(taskId: string): JobKind {
  return JOB_KINDS.find((k) => k.claims(taskId))!;
}

export async function main(args: JobArgs): Promise<JobReport> {
  // Long context fields travel in a file on the run's state branch: every job kind gets them back.
  const context = await resolveDispatchContext(args.input.context, args.input.runId, args.deps.github);
  const input = context === args.input.context ? args.input : { ...args.input, context };
  // Everything the job publishes is masked: what it writes through GitHub's API here, the record
  // folder and result.json in the task job (task/record.ts), the report the runner publishes below.
  const masker = maskerOf(args.deps);
  const deps = { ...args.deps, masker, github: maskedGitHub(args.deps.github, masker) };
  return maskReport(await jobKindOf(input.taskId).run({ ...args, input, deps }), masker);
}
