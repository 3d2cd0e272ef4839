/**
 * The reconciler: rebuilds what webhooks should have told the App from GitHub's objects — workflow
 * runs, branch heads, PRs, CR issues — so a lost webhook or a lost journal write is repaired, not
 * fatal. It runs on a timer in a long-lived server and as `forge tick` from a scheduled workflow.
 */
import type { LeafInput } from "../core/inputs.js";
import type { GitHubPort } from "../github/port.js";
import { crCloseCounts } from "./cr-close.js";
import type { Engine } from "./engine/index.js";
import { agentWorkflowPath, endedJobInput, notTheAttemptsJob, recordOf } from "./normalize.js";

export async function reconcileRun(port: GitHubPort, engine: Engine, runId: string, _now: number): Promise<LeafInput[]> {
  const loaded = await engine.state(runId);
  if (!loaded || loaded.state.journal.status !== "running") return [];
  const { journal, config } = loaded.state;
  const inputs: LeafInput[] = [];
  const running = journal.tasks.filter((t) => t.status === "RUNNING" && t.branch);
  if (running.length) {
    // One call for every job of the run. Only the agent workflow's dispatched runs in this repository
    // are jobs of attempts, and an attempt whose run is recorded is that run
    // (docs/architecture.md#trust-boundaries).
    const runs = await port.listWorkflowRuns(config.workflow, { createdAfter: journal.createdAt.slice(0, 19) + "Z" });
    const repositoryId = await port.repositoryId();
    const workflowPath = agentWorkflowPath(config);
    for (const t of running) {
      // Newest first, as GitHub lists them.
      const run = runs.find(
        (r) =>
          r.headBranch === t.branch &&
          // A revision's branch holds its attempt's earlier jobs too: only newer runs are its own.
          r.id > (t.priorRunId ?? 0) &&
          notTheAttemptsJob(r, { repositoryId, workflowPath, recordedRunId: t.workflowRunId }) === undefined,
      );
      if (!run) continue;
      const ref = { runId, taskId: t.id, attempt: t.attempt };
      if (run.status === "in_progress")
        inputs.push({ kind: "agent.started", ...ref, workflowRunId: run.id }, { kind: "agent.heartbeat", ...ref });
      else if (run.status === "completed") inputs.push(await endedJobInput(port, ref, t.branch!, run, t.iteration));
    }
  }
  for (const t of journal.tasks) {
    if (t.status === "DONE" && t.branch) {
      const head = await port.branchHead(t.branch);
      if (head) {
        const commit = await port.commit(head);
        inputs.push({
          kind: "branch.pushed",
          taskId: t.id,
          attempt: t.attempt,
          headSha: recordOf(commit.message) ? (commit.parents[0] ?? head) : head,
        });
      }
    }
    if (t.status === "MERGE_READY" && t.branch) {
      const pr = await port.findPullRequest(t.branch, "closed");
      if (pr?.merged && pr.mergeSha)
        inputs.push({ kind: "pr.merged", taskId: t.id, attempt: t.attempt, number: pr.number, mergeSha: pr.mergeSha });
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
