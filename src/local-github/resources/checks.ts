// Checks and statuses as the local GitHub sends them: check suites, check runs (fuller in webhooks),
// commit statuses.
import type { CheckRun, CheckSuite, CommitStatus, Repo } from "../state.js";
import { nodeId, type O } from "./ids.js";
import type { Model } from "./index.js";

export function suite(model: Model, repo: Repo, s: CheckSuite, prs: O[] = []): O {
  const app = model.state.apps.get(s.appId);
  const runs = [...model.state.checkRuns.values()].filter((r) => r.suiteId === s.id);
  return {
    id: s.id,
    node_id: nodeId("CheckSuite", s.id),
    head_branch: s.headBranch,
    head_sha: s.headSha,
    status: s.status,
    conclusion: s.conclusion,
    url: `${model.api}/repos/${repo.owner.login}/${repo.name}/check-suites/${s.id}`,
    before: s.before,
    after: s.after,
    pull_requests: prs,
    app: app ? model.app(app) : null,
    repository: model.minimalRepo(repo),
    created_at: s.createdAt,
    updated_at: s.updatedAt,
    head_commit: null,
    latest_check_runs_count: runs.length,
    check_runs_url: `${model.api}/repos/${repo.owner.login}/${repo.name}/check-suites/${s.id}/check-runs`,
    rerequestable: true,
    runs_rerequestable: true,
  };
}

export function checkRun(model: Model, repo: Repo, c: CheckRun, prs: O[] = []): O {
  const app = model.state.apps.get(c.appId);
  const suite = model.state.suites.get(c.suiteId)!;
  const u = `${model.api}/repos/${repo.owner.login}/${repo.name}/check-runs/${c.id}`;
  return {
    id: c.id,
    head_sha: c.headSha,
    node_id: nodeId("CheckRun", c.id),
    // GitHub reports a check run created without external_id as "" (the webhook schema requires a string).
    external_id: c.externalId ?? "",
    url: u,
    html_url: `${model.web()}/${repo.owner.login}/${repo.name}/runs/${c.id}`,
    // "If the integrator does not provide this, then the homepage of the GitHub app is used."
    details_url: c.detailsUrl ?? (app ? `${model.web()}/apps/${app.slug}` : null),
    status: c.status,
    conclusion: c.conclusion,
    started_at: c.startedAt,
    completed_at: c.completedAt,
    output: { ...c.output, annotations_url: `${u}/annotations` },
    name: c.name,
    check_suite: { id: suite.id },
    app: app ? model.app(app) : null,
    pull_requests: prs,
  };
}

/** check_run in webhooks carries a fuller check_suite. */
export function checkRunForHook(model: Model, repo: Repo, c: CheckRun, prs: O[] = []): O {
  const out = model.checkRun(repo, c, prs);
  const s = model.state.suites.get(c.suiteId)!;
  const app = model.state.apps.get(s.appId);
  out.check_suite = {
    id: s.id,
    node_id: nodeId("CheckSuite", s.id),
    head_branch: s.headBranch,
    head_sha: s.headSha,
    status: s.status,
    conclusion: s.conclusion,
    url: `${model.api}/repos/${repo.owner.login}/${repo.name}/check-suites/${s.id}`,
    before: s.before,
    after: s.after,
    pull_requests: prs,
    app: app ? model.app(app) : undefined,
    repository: model.minimalRepo(repo),
    created_at: s.createdAt,
    updated_at: s.updatedAt,
  };
  if (!app) delete (out.check_suite as O).app;
  return out;
}

export function status(model: Model, s: CommitStatus): O {
  const repo = model.state.repos.get(s.repoId)!;
  return {
    url: `${model.api}/repos/${repo.owner.login}/${repo.name}/statuses/${s.sha}`,
    avatar_url: `${model.web()}/avatars/u/${s.creator.id}`,
    id: s.id,
    node_id: nodeId("StatusContext", s.id),
    state: s.state,
    description: s.description,
    target_url: s.targetUrl,
    context: s.context,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
    creator: model.user(s.creator),
  };
}
