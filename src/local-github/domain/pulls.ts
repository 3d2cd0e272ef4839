// Check suites and pull requests as the local GitHub's core keeps them: suites per App and commit,
// the pull requests of a commit, a pull request's payload with its counts, and a pull request merged.
import * as git from "../git/index.js";
import { mergeStateOf } from "../mergeability.js";
import { now, type Issue, type Repo } from "../state.js";
import type { ActContext, SimCore } from "./index.js";

export function ensureSuite(
  core: SimCore,
  repo: Repo,
  appId: number,
  headSha: string,
  headBranch: string | null,
  before: string | null = null,
) {
  for (const s of core.state.suites.values()) if (s.repoId === repo.id && s.appId === appId && s.headSha === headSha) return s;
  const t = now();
  const s = {
    id: core.state.id(),
    repoId: repo.id,
    appId,
    headSha,
    headBranch,
    before,
    after: headSha,
    status: "queued" as const,
    conclusion: null,
    createdAt: t,
    updatedAt: t,
  };
  core.state.suites.set(s.id, s);
  return s;
}

/** A check suite of its own (GitHub gives every workflow run one). */
export function newSuite(core: SimCore, repo: Repo, appId: number, headSha: string, headBranch: string | null) {
  const t = now();
  const s = {
    id: core.state.id(),
    repoId: repo.id,
    appId,
    headSha,
    headBranch,
    before: null,
    after: headSha,
    status: "queued" as const,
    conclusion: null,
    createdAt: t,
    updatedAt: t,
  };
  core.state.suites.set(s.id, s);
  return s;
}

/** pull-request-minimal entries for open PRs whose head is `sha`. */
export function prsFor(core: SimCore, repo: Repo, sha: string): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const i of core.state.issuesOf(repo.id)) {
    // GitHub lists only pull requests whose head is in this repository here.
    if (!i.pull || i.state !== "open" || i.pull.headSha !== sha || i.pull.headRepoId !== undefined) continue;
    const r = { id: repo.id, url: `${core.model.api}/repos/${repo.owner.login}/${repo.name}`, name: repo.name };
    out.push({
      id: i.id,
      number: i.number,
      url: `${core.model.api}/repos/${repo.owner.login}/${repo.name}/pulls/${i.number}`,
      head: { ref: i.pull.headRef, sha: i.pull.headSha, repo: r },
      base: { ref: i.pull.baseRef, sha: i.pull.baseSha, repo: r },
    });
  }
  return out;
}

export async function pullPayload(core: SimCore, repo: Repo, issue: Issue): Promise<Record<string, unknown>> {
  // A read: GitHub answers `mergeable` null (and starts its job) when the head or the base changed (../mergeability.ts).
  const mergeable = await core.mergeability.read(repo, issue);
  const mergeableState = await mergeStateOf(core, repo, issue, mergeable);
  const body = core.model.pull(repo, issue, { full: true, mergeable, mergeableState });
  await core.fillPullCounts(repo, issue, body);
  return body;
}

export async function fillPullCounts(core: SimCore, repo: Repo, issue: Issue, body: Record<string, unknown>): Promise<void> {
  const p = issue.pull!;
  const base = p.merged ? undefined : await git.resolveRef(repo.gitDir, `refs/heads/${p.baseRef}`);
  const mb = base ? await git.mergeBase(repo.gitDir, base, p.headSha) : undefined;
  if (!mb) return;
  const files = await git.diffFiles(repo.gitDir, mb, p.headSha, false);
  body.commits = await git.countCommits(repo.gitDir, mb, p.headSha);
  body.additions = files.reduce((n, f) => n + f.additions, 0);
  body.deletions = files.reduce((n, f) => n + f.deletions, 0);
  body.changed_files = files.length;
  (body.base as Record<string, unknown>).sha = base;
}

export async function markMerged(core: SimCore, repo: Repo, issue: Issue, ctx: ActContext, mergeSha: string): Promise<void> {
  const p = issue.pull!;
  const t = now();
  p.merged = true;
  p.mergedAt = t;
  p.mergedBy = ctx.actor;
  p.mergeCommitSha = mergeSha;
  issue.state = "closed";
  issue.closedAt = t;
  issue.closedBy = ctx.actor;
  issue.updatedAt = t;
  core.bus.emit(
    "pull_request",
    "closed",
    {
      number: issue.number,
      pull_request: await core.pullPayload(repo, issue),
      repository: core.model.repo(repo),
      sender: core.model.user(ctx.actor),
    },
    { repo, causedByWorkflowRun: ctx.token?.workflowRunId },
  );
}
