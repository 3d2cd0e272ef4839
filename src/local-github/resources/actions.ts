// GitHub Actions as the local GitHub sends it: workflows, workflow runs, jobs.
import type { CommitInfo } from "../git/index.js";
import type { Job, Repo, WorkflowFile, WorkflowRun } from "../state.js";
import { nodeId, type O } from "./ids.js";
import type { Model } from "./index.js";

export function workflow(model: Model, repo: Repo, w: WorkflowFile): O {
  return {
    id: w.id,
    node_id: nodeId("Workflow", w.id),
    name: w.name,
    path: w.path,
    state: "active",
    created_at: w.createdAt,
    updated_at: w.createdAt,
    url: `${model.api}/repos/${repo.owner.login}/${repo.name}/actions/workflows/${w.id}`,
    html_url: `${model.web()}/${repo.owner.login}/${repo.name}/blob/${repo.defaultBranch}/${w.path}`,
    badge_url: `${model.web()}/${repo.owner.login}/${repo.name}/workflows/${encodeURIComponent(w.name)}/badge.svg`,
  };
}

export function run(model: Model, repo: Repo, r: WorkflowRun, headCommit: CommitInfo | null): O {
  const u = `${model.api}/repos/${repo.owner.login}/${repo.name}/actions/runs/${r.id}`;
  return {
    id: r.id,
    name: r.name,
    node_id: nodeId("WorkflowRun", r.id),
    check_suite_id: r.checkSuiteId,
    check_suite_node_id: nodeId("CheckSuite", r.checkSuiteId),
    head_branch: r.headBranch,
    head_sha: r.headSha,
    path: r.path,
    display_title: r.displayTitle,
    run_number: r.runNumber,
    run_attempt: r.runAttempt,
    event: r.event,
    status: r.status,
    conclusion: r.conclusion,
    workflow_id: r.workflowId,
    url: u,
    html_url: `${model.web()}/${repo.owner.login}/${repo.name}/actions/runs/${r.id}`,
    pull_requests: [],
    created_at: r.createdAt,
    updated_at: r.updatedAt,
    run_started_at: r.runStartedAt,
    actor: model.user(r.actor),
    triggering_actor: model.user(r.triggeringActor),
    jobs_url: `${u}/jobs`,
    logs_url: `${u}/logs`,
    check_suite_url: `${model.api}/repos/${repo.owner.login}/${repo.name}/check-suites/${r.checkSuiteId}`,
    artifacts_url: `${u}/artifacts`,
    cancel_url: `${u}/cancel`,
    rerun_url: `${u}/rerun`,
    previous_attempt_url: null,
    workflow_url: `${model.api}/repos/${repo.owner.login}/${repo.name}/actions/workflows/${r.workflowId}`,
    head_commit: headCommit
      ? {
          id: headCommit.sha,
          tree_id: headCommit.tree,
          message: headCommit.message.replace(/\n$/, ""),
          timestamp: headCommit.committer.date,
          author: { name: headCommit.author.name, email: headCommit.author.email },
          committer: { name: headCommit.committer.name, email: headCommit.committer.email },
        }
      : null,
    repository: model.minimalRepo(repo),
    head_repository: model.minimalRepo(model.state.repos.get(r.headRepoId) ?? repo),
    referenced_workflows: [],
  };
}

export function job(model: Model, repo: Repo, run: WorkflowRun, j: Job): O {
  const base = `${model.api}/repos/${repo.owner.login}/${repo.name}`;
  return {
    id: j.id,
    run_id: run.id,
    run_url: `${base}/actions/runs/${run.id}`,
    run_attempt: run.runAttempt,
    node_id: nodeId("CheckRun", j.id),
    head_sha: run.headSha,
    url: `${base}/actions/jobs/${j.id}`,
    html_url: `${model.web()}/${repo.owner.login}/${repo.name}/actions/runs/${run.id}/job/${j.id}`,
    status: j.status,
    conclusion: j.conclusion,
    created_at: j.createdAt,
    started_at: j.startedAt,
    completed_at: j.completedAt,
    name: j.name,
    steps: j.steps.map((s) => ({ ...s })),
    check_run_url: `${base}/check-runs/${j.checkRunId}`,
    labels: ["ubuntu-latest"],
    runner_id: j.status === "queued" ? null : 1,
    runner_name: j.status === "queued" ? null : "forge-sim-runner",
    runner_group_id: j.status === "queued" ? null : 1,
    runner_group_name: j.status === "queued" ? null : "Default",
    workflow_name: run.name,
    head_branch: run.headBranch,
  };
}
