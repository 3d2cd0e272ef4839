/**
 * Steps 1 and 2 of a task job. Is this dispatch the one the App is waiting for (the journal has
 * this attempt RUNNING)? If not, the job ends neutral with nothing touched. Then the task branch,
 * as the App prepared it, is checked out — unless it already ends with this attempt's record
 * commit (a person re-ran a finished job): an attempt ends once.
 */
import { attemptDir, branchName, integrationBranch } from "../../../src/core/layout.js";
import { readAndCheckDispatch } from "../dispatch-check.js";
import { JobError, neutralReport, type NeutralReport } from "../job.js";
import { attemptStartHead } from "../start-head.js";
import { mark, type CheckedOut, type TaskJob } from "./context.js";

export async function checkoutAttempt(job: TaskJob): Promise<CheckedOut | NeutralReport> {
  const { config, git, github, log } = job;
  const { runId, taskId, attempt } = job.ids;
  // The task branch is fetched while the journal is read (into a remote-tracking ref only: a
  // neutral exit still leaves the repository and GitHub untouched).
  const expectedBranch = branchName(config, runId, taskId, attempt);
  const prefetch = git.fetchBranch(expectedBranch).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))));
  const iteration = job.input.context.iteration ?? 0;
  const check = await readAndCheckDispatch(github, runId, taskId, attempt, iteration);
  if (!check.current) {
    await prefetch;
    return neutralReport(log, `Forge · ${taskId} · attempt ${attempt}`, check.reason);
  }
  const { journal, task, node } = check;
  // The branch and the PR's base come from the run's templates, never from the journal: anything
  // with the job's token can write the journal, and the job cannot verify its seal.
  const branch = expectedBranch;
  const base = integrationBranch(config, runId);
  const named = check.followup?.branch ?? task.attempt?.branch;
  if (named !== undefined && named !== branch)
    throw new JobError(`the journal names the branch ${named} for ${taskId} attempt ${attempt}, but the run's template names ${branch}`);
  if (journal.integrationBranch !== base)
    throw new JobError(`the journal names the integration branch ${journal.integrationBranch}, but the run's template names ${base}`);
  mark(job, "journal");

  const tip = await prefetch;
  if (tip instanceof Error) throw tip;
  if (!tip) throw new JobError(`the task branch ${branch} does not exist on the remote; the App creates it before dispatching`);
  const recorded = await git.out([
    "log",
    "-1",
    "--format=%(trailers:key=Forge-Run,valueonly,separator=%x2C)|%(trailers:key=Forge-Task,valueonly,separator=%x2C)|%(trailers:key=Forge-Attempt,valueonly,separator=%x2C)|%(trailers:key=Forge-Exit,valueonly,separator=%x2C)|%(trailers:key=Forge-Iteration,valueonly,separator=%x2C)",
    tip,
  ]);
  const [rRun, rTask, rAttempt, rExit, rIteration] = recorded.split("|");
  // A revision starts from the previous revision's record commit: only its own record ends it.
  const sameRevision = Number(rIteration?.trim() || 0) === iteration;
  if (rRun === runId && rTask === taskId && rAttempt === String(attempt) && rExit && sameRevision) {
    return neutralReport(
      log,
      `Forge · ${taskId} · attempt ${attempt}`,
      `attempt ${attempt} of ${taskId} already ended with exit ${rExit} (record commit ${tip.slice(0, 12)})`,
      "",
    );
  }
  await git.run(["checkout", "--quiet", "--force", "-B", branch, `refs/remotes/origin/${branch}`]);
  // What this attempt changed is measured from where its branch started, before any of its commits:
  // a re-run finds the progress pushes of the run before it on the branch (start-head.ts).
  const startHead = await attemptStartHead(git, branch, tip, job.ids);
  if (startHead !== tip) log.info(`The branch carries earlier work of this attempt; changes are measured from ${startHead.slice(0, 12)}.`);
  mark(job, "checkout");
  return {
    journal,
    task,
    node,
    ...(check.followup ? { followup: check.followup } : {}),
    branch,
    base,
    recordRel: attemptDir(runId, taskId, attempt),
    tip,
    startHead,
  };
}
