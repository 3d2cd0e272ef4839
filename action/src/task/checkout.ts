/**
 * Steps 1 and 2 of a task job. Is this dispatch the one the App is waiting for (the journal has
 * this attempt RUNNING)? If not, the job ends neutral with nothing touched. Then the task branch,
 * as the App prepared it, is checked out — unless it already ends with this attempt's record
 * commit (a person re-ran a finished job): an attempt ends once.
 */
import { attemptDir, branchName, branchParser, integrationBranch } from "../../../src/core/layout.js";
import { readAndCheckDispatch } from "../dispatch-check.js";
import { JobError, neutralReport, type NeutralReport } from "../job.js";
import { attemptStartHead } from "../start-head.js";
import { mark, type CheckedOut, type TaskJob } from "./context.js";

export async function checkoutAttempt(job: TaskJob): Promise<CheckedOut | NeutralReport> {
  const { config, git, github, log } = job;
  const { runId, taskId, attempt } = job.ids;
  // The task branch is fetched while the journal is read (into a remote-tracking ref only: a
  // neutral exit still leaves the repository and GitHub untouched).
  // A resumed attempt works on the branch of the attempt it continues (docs/executor.md#resuming): one
  // the template names for an earlier attempt of the task, which the journal says.
  const resumed = job.input.context.resume;
  const ownBranch = branchName(config, runId, taskId, attempt);
  const fetchTip = (b: string) => git.fetchBranch(b).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))));
  const prefetch = resumed ? undefined : fetchTip(ownBranch);
  const iteration = job.input.context.iteration ?? 0;
  const check = await readAndCheckDispatch(github, runId, taskId, attempt, iteration);
  if (!check.current) {
    await prefetch;
    return neutralReport(log, `Forge · ${taskId} · attempt ${attempt}`, check.reason);
  }
  const { journal, task, node } = check;
  // The branch and the PR's base come from the run's templates, never from the journal alone: anything
  // with the job's token can write the journal, and the job cannot verify its seal.
  const named = check.followup?.branch ?? task.attempt?.branch;
  const earlier = Array.from({ length: attempt - 1 }, (_, k) => branchName(config, runId, taskId, k + 1));
  const branch = resumed && named !== undefined && earlier.includes(named) ? named : ownBranch;
  const base = integrationBranch(config, runId);
  if (named !== undefined && named !== branch)
    throw new JobError(
      `the journal names the branch ${named} for ${taskId} attempt ${attempt}, but the run's template names ${branch}${resumed ? " (or an earlier attempt's)" : ""}`,
    );
  // An agent the dispatch names is the one the journal gave the attempt (docs/runner.md#agents-per-task):
  // a dispatch that names another is not the App's.
  const told = job.input.context.agent?.adapter;
  if (told !== undefined && task.attempt?.agent !== told)
    throw new JobError(
      `the dispatch names the agent ${told} for ${taskId} attempt ${attempt}, but the journal gives it ${task.attempt?.agent ?? "none"}`,
    );
  if (journal.integrationBranch !== base)
    throw new JobError(`the journal names the integration branch ${journal.integrationBranch}, but the run's template names ${base}`);
  mark(job, "journal");

  const tip = await (prefetch ?? fetchTip(branch));
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
  // A resumed attempt measures from where its branch started too: the earlier attempts' work on it is the PR's.
  const startHead = await attemptStartHead(git, branch, tip, job.ids, resumed ? lineageStart(config, runId, taskId, branch) : undefined);
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

/** The attempt whose branch `branch` is: a resumed attempt's commits and every earlier attempt's from it on are the branch's work. */
function lineageStart(config: TaskJob["config"], runId: string, taskId: string, branch: string): number | undefined {
  return branchParser(config)(branch)?.attempt;
}
