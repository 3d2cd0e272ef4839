/**
 * The task's pull request: opened early as a draft (step 4) so people can follow along while the
 * agent works, and at the end showing the walkthrough — ready for review on a success (step 9).
 */
import { exitMeaning, succeeded } from "../../../src/core/exit-codes.js";
import { LABELS, walkthroughPath } from "../../../src/core/layout.js";
import type { CompletedWalkthrough } from "../../../src/agent/walkthrough.js";
import { messageWithTrailers } from "../git.js";
import type { PullRef } from "../github.js";
import { renderPrBody, renderStatusBody } from "../render.js";
import { attemptTrailers } from "../start-head.js";
import { pushHead } from "./branch.js";
import type { TaskAttempt } from "./context.js";

/**
 * Why the pull request could not be opened, for the job's warnings: GitHub's words, and where the
 * repository refuses pull requests from the job's token (its Actions setting "Allow GitHub Actions
 * to create and approve pull requests" off, GitHub's default), which setting and what follows.
 */
export function pullRefused(err: unknown): string {
  const message = (err as Error).message;
  if (!/not permitted to create or approve pull requests/i.test(message)) return message;
  return `${message} The repository's Actions setting "Allow GitHub Actions to create and approve pull requests" is off (Settings → Actions → General → Workflow permissions), so the job's token may not open it: Forge's App opens it once the work is verified, or give the Forge step a token of its own in github-token.`;
}

/** The PR body while no walkthrough is there: the attempt's state. */
export function statusBody(
  a: TaskAttempt,
  state: "running" | "ended",
  extra: { exitCode?: number; error?: string; headSha?: string; notes?: string[] } = {},
): string {
  const { runId, taskId, attempt } = a.ids;
  return renderStatusBody({
    state,
    title: a.prTitle,
    runId,
    taskId,
    attempt,
    exitCode: extra.exitCode ?? 0,
    error: extra.error ?? "",
    branch: a.branch,
    baseBranch: a.base,
    ...(extra.headSha ? { headSha: extra.headSha } : {}),
    ...(a.input.jobUrl ? { jobUrl: a.input.jobUrl } : {}),
    ...(extra.notes ? { notes: extra.notes } : {}),
  });
}

/**
 * Sets `branchState.prOpening`: the PR of an earlier run of this attempt, or a new draft opened
 * while the agent already works. A failure to open it is a warning, never the job's failure.
 */
export async function openDraftPr(a: TaskAttempt, existingPr: PullRef | undefined | Error): Promise<void> {
  const { git, github, warnings, branchState } = a;
  if (existingPr instanceof Error) {
    warnings.push(`could not look for the task's pull request: ${existingPr.message}`);
    branchState.prOpening = Promise.resolve(undefined);
    return;
  }
  if (existingPr) {
    branchState.prOpening = Promise.resolve(existingPr);
    return;
  }
  if (revisesClosedPr(a)) {
    branchState.prOpening = Promise.resolve(undefined);
    return;
  }
  // GitHub refuses a PR whose head has no commit over its base (422 "No commits between …",
  // docs.github.com/rest/pulls/pulls#create-a-pull-request), and a fresh task branch is its
  // base: an empty start commit, made before the agent touches the index, gives the PR something
  // to show until the work arrives. It is pushed by sha, so whatever the agent does to HEAD meanwhile
  // does not matter.
  const startCommit = await git.commit(
    messageWithTrailers(`forge(${a.ids.taskId}): start attempt ${a.ids.attempt}`, undefined, [
      ...attemptTrailers(a.ids),
      ["Agent", a.deps.agent.name],
    ]),
    { allowEmpty: true },
  );
  branchState.prOpening = (async () => {
    await pushHead(a, startCommit);
    const pr = await github.createPull({ head: a.branch, base: a.base, title: a.prTitle, body: statusBody(a, "running"), draft: true });
    // The label lets people (and the App) filter Forge's PRs; a PR without it still works.
    await github
      .addLabels(pr.number, [LABELS.task])
      .catch((err: unknown) => void warnings.push(`could not label the pull request: ${(err as Error).message}`));
    return pr;
  })().catch((err: unknown) => {
    warnings.push(`could not open the draft pull request: ${pullRefused(err)}`);
    return undefined;
  });
}

/**
 * The PR when the early draft could not be opened (a push or a call that failed while the agent
 * worked): opened now over the pushed work, or found — the App opens a task's missing PR itself
 * when it comes to merge it. Without it the attempt's work would wait for a PR no one opens.
 */
export async function openPrAfterPush(a: TaskAttempt): Promise<PullRef | undefined> {
  const { github, warnings } = a;
  try {
    const found = await github.findOpenPull(a.branch, a.base);
    if (found) return found;
    if (revisesClosedPr(a)) return undefined;
    const pr = await github
      .createPull({ head: a.branch, base: a.base, title: a.prTitle, body: statusBody(a, "running"), draft: true })
      // Opened by the App meanwhile: GitHub answers 422 for a second PR of the same head and base.
      .catch(async (err: unknown) => (await github.findOpenPull(a.branch, a.base)) ?? Promise.reject(err));
    await github
      .addLabels(pr.number, [LABELS.task])
      .catch((err: unknown) => void warnings.push(`could not label the pull request: ${(err as Error).message}`));
    return pr;
  } catch (err) {
    warnings.push(`could not open the pull request: ${pullRefused(err)}`);
    return undefined;
  }
}

/**
 * A revision works on its attempt's PR: when that PR is no longer open (merged — by the App before
 * the review that asked for this revision reached it — or closed by a person), no second PR is
 * opened for the same attempt. The work stays on the branch and the warning says so; the App, which
 * knows the PR merged, settles the attempt.
 */
function revisesClosedPr(a: TaskAttempt): boolean {
  const { prNumber, iteration } = a.input.context;
  if (prNumber === undefined || iteration === undefined) return false;
  if (!a.warnings.some((w) => w.includes(`#${prNumber} is not open`)))
    a.warnings.push(
      `this revision's pull request #${prNumber} is not open (merged or closed): no second pull request is opened; the revision's work is on ${a.branch}`,
    );
  return true;
}

/** Step 9: the PR shows the walkthrough (or the attempt's state without one); a success is ready for review. Both calls at once. */
export async function publishPr(
  a: TaskAttempt,
  pr: PullRef,
  end: { exitCode: number; error: string | undefined; completed: CompletedWalkthrough; recordSha: string; notes: string[] },
): Promise<void> {
  const { exitCode, error, completed, recordSha, notes } = end;
  const { runId, taskId, attempt } = a.ids;
  const wtUrl = `${a.input.serverUrl.replace(/\/$/, "")}/${a.input.repository}/blob/${recordSha}/${walkthroughPath(runId, taskId, attempt)}`;
  const body = completed.ok
    ? renderPrBody({
        title: a.prTitle,
        frontmatter: completed.frontmatter,
        body: completed.body,
        walkthroughUrl: wtUrl,
        baseBranch: a.base,
        exitCode,
        notes,
        ...(a.built.frontmatter.issue !== undefined ? { issue: a.built.frontmatter.issue } : {}),
      })
    : statusBody(a, "ended", { exitCode, error: error ?? exitMeaning(exitCode), headSha: recordSha, notes });
  const report = (what: string) => (err: unknown) => void a.warnings.push(`could not ${what}: ${(err as Error).message}`);
  await Promise.all([
    a.github.updatePull(pr.number, { body }).catch(report("update the pull request")),
    succeeded(exitCode) && completed.ok ? a.github.markReadyForReview(pr).catch(report("mark the pull request ready")) : Promise.resolve(),
  ]);
}
