/**
 * The reconciler: rebuilds what webhooks should have told the App from GitHub's objects — workflow
 * runs, branch heads, PRs, CR issues — so a lost webhook or a lost journal write is repaired, not
 * fatal. It runs on a timer in a long-lived server and as `forge tick` from a scheduled workflow.
 */
import type { LeafInput } from "../core/inputs.js";
import type { GitHubPort } from "../github/port.js";
import { parseLiveProgress, type LiveProgress } from "../core/live-progress.js";
import { crCloseCounts } from "./cr-close.js";
import type { Engine } from "./engine/index.js";
import { agentWorkflowPath, endedJobInput, notTheAttemptsJob, recordOf } from "./normalize.js";

/**
 * How far before the run's start (the App's clock) its jobs are looked for among the workflow's runs
 * (GitHub's clock, `created_at`): the two clocks differ — a host's drifts, a test's skips ahead — and
 * a job missed here is one the reconciler never finds. Only the attempt's own branch counts anyway.
 */
export const CLOCK_SKEW_MS = 10 * 60_000;

function runsSince(createdAt: string): string {
  const t = Date.parse(createdAt);
  return Number.isNaN(t) ? createdAt : new Date(t - CLOCK_SKEW_MS).toISOString().slice(0, 19) + "Z";
}

export async function reconcileRun(port: GitHubPort, engine: Engine, runId: string, _now: number): Promise<LeafInput[]> {
  const loaded = await engine.state(runId);
  if (!loaded || loaded.state.journal.status !== "running") return [];
  const { journal, config } = loaded.state;
  const inputs: LeafInput[] = [];
  const running = journal.tasks.filter((t) => t.status === "RUNNING" && t.attempt);
  if (running.length) {
    // One call for every job of the run. Only the agent workflow's dispatched runs in this repository
    // are jobs of attempts, and an attempt whose run is recorded is that run
    // (docs/architecture.md#trust-boundaries).
    const runs = await port.listWorkflowRuns(config.workflow, { createdAfter: runsSince(journal.createdAt) });
    const repositoryId = await port.repositoryId();
    const workflowPath = agentWorkflowPath(config);
    for (const t of running) {
      const a = t.attempt!;
      // Newest first, as GitHub lists them.
      const run = runs.find(
        (r) =>
          r.headBranch === a.branch &&
          // A revision's branch holds its attempt's earlier jobs too: only newer runs are its own.
          r.id > (a.revision.priorRunId ?? 0) &&
          notTheAttemptsJob(r, { repositoryId, workflowPath, recordedRunId: a.revision.workflowRunId }) === undefined,
      );
      if (!run) continue;
      const ref = { runId, taskId: t.id, attempt: t.attempts };
      if (run.status === "in_progress") {
        const progress = await liveProgressOf(port, runId, t.id, t.attempts, a.branch);
        inputs.push(
          { kind: "agent.started", ...ref, workflowRunId: run.id },
          { kind: "agent.heartbeat", ...ref, ...(progress ? { progress } : {}) },
        );
      } else if (run.status === "completed") inputs.push(await endedJobInput(port, ref, a.branch, run, a.revision.iteration));
    }
  }
  for (const t of journal.tasks) {
    const branch = t.attempt?.branch;
    if (t.status === "DONE" && branch) {
      const head = await port.branchHead(branch);
      if (head) {
        const commit = await port.commit(head);
        inputs.push({
          kind: "branch.pushed",
          taskId: t.id,
          attempt: t.attempts,
          headSha: recordOf(commit.message) ? (commit.parents[0] ?? head) : head,
        });
      }
    }
    if (t.status === "MERGE_READY" && branch) {
      const pr = await port.findPullRequest(branch, "closed");
      if (pr?.merged && pr.mergeSha)
        inputs.push({ kind: "pr.merged", taskId: t.id, attempt: t.attempts, number: pr.number, mergeSha: pr.mergeSha });
    }
  }
  for (const cr of journal.changeRequests) {
    const issue = cr.issueNumber;
    if ((cr.status === "pending" || cr.status === "approved") && issue !== undefined) {
      const i = await port.getIssue(issue);
      // Closed by someone who may reject it; a close by anyone else is undone (cr-close.ts).
      if (i.state === "closed" && (await crCloseCounts(port, issue, runId, cr.id, i.closedBy)))
        inputs.push({ kind: "cr.closed", crId: cr.id });
    }
  }
  inputs.push({ kind: "tick" });
  return inputs;
}

/**
 * The agent's progress as the attempt's job last wrote it on its live check run
 * (`forge · <taskId> · live` on the branch's head, src/core/live-progress.ts): one GET per running
 * attempt per sweep. Check run updates send no webhook; this is how heartbeats reach the App while
 * the job runs. Nothing when the job has made none (no `checks: write`) or GitHub does not answer.
 */
export async function liveProgressOf(
  port: GitHubPort,
  runId: string,
  taskId: string,
  attempt: number,
  branch: string,
): Promise<LiveProgress | undefined> {
  try {
    const externalId = `${runId}/${taskId}/${attempt}/live`;
    const runs = (await port.listCheckRuns(branch, `forge · ${taskId} · live`)).filter((c) => c.externalId === externalId);
    const newest = runs.sort((x, y) => y.id - x.id)[0];
    return parseLiveProgress(newest?.summary);
  } catch {
    return undefined;
  }
}
