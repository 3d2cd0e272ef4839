// The project's own CI in the demo, read back from GitHub and put in words: its workflows (`CI` and
// `Tests`, src/demo/project.ts) run on every push to main and to an attempt's branch and on the
// final PR, beside Forge's own jobs (workflow_dispatch). A run still going on a branch is cancelled
// when a newer push to the branch supersedes it (the `CI` workflow's `concurrency`,
// cancel-in-progress): the App creates an attempt's branch and merges upstream work into a
// refinery's, and the runner pushes the attempt's start, work and record commits one after another.
import type { Octokit } from "@octokit/rest";
import { DEMO_OWNER, DEMO_REPO } from "./project.js";
import type { DemoFeedback } from "./review.js";

/** The project's CI runs of the demo, counted by where they ran and how they ended. */
export interface CiRuns {
  total: number;
  /** On pushes to attempts' branches (forge/<run>/<task>/<attempt>), to main, and on pull requests. */
  where: { branches: number; main: number; pullRequests: number };
  success: number;
  failure: number;
  /** Superseded by a newer push to the same branch. */
  cancelled: number;
  /** Still queued or running when the demo read them (the final PR's tests, often). */
  unfinished: number;
}

/** Every workflow run of the demo repository that is not one of Forge's jobs, counted. */
export async function readCiRuns(user: Octokit): Promise<CiRuns> {
  const runs = await user.paginate(user.rest.actions.listWorkflowRunsForRepo, { owner: DEMO_OWNER, repo: DEMO_REPO, per_page: 100 });
  const ci = runs.filter((r) => r.event !== "workflow_dispatch");
  const count = (p: (r: (typeof ci)[number]) => boolean) => ci.filter(p).length;
  return {
    total: ci.length,
    where: {
      branches: count((r) => r.event === "push" && r.head_branch !== "main"),
      main: count((r) => r.event === "push" && r.head_branch === "main"),
      pullRequests: count((r) => r.event === "pull_request"),
    },
    success: count((r) => r.conclusion === "success"),
    failure: count((r) => r.conclusion === "failure"),
    cancelled: count((r) => r.conclusion === "cancelled"),
    unfinished: count((r) => r.status !== "completed"),
  };
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** What "the project's CI ran N times" means, in one sentence. */
export function ciRunsInWords(c: CiRuns): string {
  // Every count, zero or not: the sentence keeps one shape from run to run (README.md's sample is one).
  const ended = [
    `${c.success} passed`,
    `${c.failure} failed`,
    `${c.cancelled} cancelled because a newer push to the same branch superseded them`,
    `${c.unfinished} still running when the demo read them`,
  ];
  const other = c.total - c.success - c.failure - c.cancelled - c.unfinished;
  if (other > 0) ended.push(`${other} ended otherwise`);
  return (
    `The project's own CI (its workflows, not Forge's jobs) ran ${plural(c.total, "time")}: ` +
    `${c.where.branches} on pushes to attempts' branches (the App creates each branch and merges upstream work into a refinery's; the runner pushes each attempt's start, work and record commits), ` +
    `${c.where.main} on pushes to main and ${c.where.pullRequests} on pull requests to it; ${ended.join(", ")}.`
  );
}

/** The CI fix in words: which head failed the required check and why, the fix revision, and the branch's CI runs counted. */
export function ciFixInWords(f: NonNullable<DemoFeedback["ciFix"]>): string {
  const pr = f.pr !== undefined ? ` #${f.pr}` : "";
  const failed = f.failedHead
    ? `the required check \`${f.failedCheck}\` failed on ${f.task}'s head ${f.failedHead}, which left a work-in-progress marker`
    : `the required check \`${f.failedCheck}\` failed on ${f.task}'s first head`;
  const fixed = f.fixedHead
    ? `fix revision ${f.iteration} deleted it on the same PR${pr} and \`${f.failedCheck}\` passed on ${f.fixedHead}`
    : `fix revision ${f.iteration} on the same PR${pr}`;
  const { total, success, failure, cancelled } = f.runs;
  const rest = total - success - failure - cancelled;
  const counts = [
    `${success} passed`,
    `${failure} failed`,
    `${cancelled} cancelled by a newer push to the branch`,
    ...(rest ? [`${rest} otherwise`] : []),
  ];
  return `CI fix: ${failed}; ${fixed}; ${f.status}. The project's CI ran ${plural(total, "time")} on the branch, once per push: ${counts.join(", ")}.`;
}
