// The events ref changes cause in the local GitHub: `create`, `delete` and `push` (with each commit's
// paths), pull requests synchronized or merged by a push, and the check suites a push requests.
import * as git from "../git/index.js";
import { now, type Repo } from "../state.js";
import { ACTIONS_APP_ID } from "./apps.js";
import type { ActContext, SimCore } from "./index.js";

export interface RefChange {
  ref: string;
  before: string | null;
  after: string | null;
}

export const ZERO = "0".repeat(40);

export async function refsChangedNow(core: SimCore, repo: Repo, changes: RefChange[], ctx: ActContext): Promise<void> {
  const causedByWorkflowRun = ctx.token?.workflowRunId;
  const sender = core.model.user(ctx.actor);
  repo.pushedAt = now();
  for (const ch of changes) {
    const isBranch = ch.ref.startsWith("refs/heads/");
    const isTag = ch.ref.startsWith("refs/tags/");
    if (!isBranch && !isTag) continue; // refs/forge/… and other namespaces emit nothing on GitHub
    const short = ch.ref.replace(/^refs\/(heads|tags)\//, "");
    const refType = isBranch ? "branch" : "tag";
    if (!ch.before && ch.after) {
      core.bus.emit(
        "create",
        null,
        {
          ref: short,
          ref_type: refType,
          master_branch: repo.defaultBranch,
          description: repo.description,
          pusher_type: "user",
          repository: core.model.repo(repo),
          sender,
        },
        { repo, causedByWorkflowRun },
      );
    }
    if (ch.before && !ch.after) {
      core.bus.emit(
        "delete",
        null,
        { ref: short, ref_type: refType, pusher_type: "user", repository: core.model.repo(repo), sender },
        { repo, causedByWorkflowRun },
      );
    }
    const commits = ch.after ? await git.pushCommits(repo.gitDir, ch.before ?? undefined, ch.after) : [];
    const forced = !!(ch.before && ch.after && !(await git.isAncestor(repo.gitDir, ch.before, ch.after)));
    const base = `${core.baseUrl}/${repo.owner.login}/${repo.name}`;
    const hookCommits = await Promise.all(
      commits.map(async (c) => {
        const paths = await git.changedPaths(repo.gitDir, c.parents[0], c.sha);
        return {
          id: c.sha,
          tree_id: c.tree,
          distinct: true,
          message: c.message.replace(/\n$/, ""),
          timestamp: c.committer.date,
          url: `${base}/commit/${c.sha}`,
          author: { name: c.author.name, email: c.author.email, ...username(core, c.author.email) },
          committer: { name: c.committer.name, email: c.committer.email, ...username(core, c.committer.email) },
          ...paths,
        };
      }),
    );
    core.bus.emit(
      "push",
      null,
      {
        ref: ch.ref,
        before: ch.before ?? ZERO,
        after: ch.after ?? ZERO,
        created: !ch.before,
        deleted: !ch.after,
        forced,
        base_ref: null,
        compare:
          ch.before && ch.after
            ? `${base}/compare/${ch.before.slice(0, 12)}...${ch.after.slice(0, 12)}`
            : `${base}/commit/${(ch.after ?? ch.before)!.slice(0, 12)}`,
        commits: hookCommits,
        head_commit: hookCommits.at(-1) ?? null,
        repository: core.model.repo(repo, { timestamps: "unix" }),
        pusher: { name: ctx.actor.login, email: core.email(ctx.actor) },
        sender,
      },
      { repo, causedByWorkflowRun },
    );

    if (!isBranch) continue;
    // Pull requests whose head moved → synchronize; whose base moved → base sha and merged-by-push.
    for (const issue of core.state.issuesOf(repo.id)) {
      const p = issue.pull;
      if (!p || issue.state !== "open") continue;
      if (p.headRepoId === undefined && p.headRef === short && ch.after && p.headSha !== ch.after) {
        const before = p.headSha;
        p.headSha = ch.after;
        issue.updatedAt = now();
        core.bus.emit(
          "pull_request",
          "synchronize",
          {
            number: issue.number,
            before,
            after: ch.after,
            pull_request: await core.pullPayload(repo, issue),
            repository: core.model.repo(repo),
            sender,
          },
          { repo, causedByWorkflowRun },
        );
      }
      if (p.baseRef === short && ch.after) {
        p.baseSha = ch.after;
        if (await git.isAncestor(repo.gitDir, p.headSha, ch.after)) {
          // A push that brings the head into the base merges the PR (GitHub marks it merged).
          await core.markMerged(repo, issue, ctx, p.headSha);
        }
      }
    }
    if (ch.after) await requestCheckSuites(core, repo, short, ch.before, ch.after, ctx);
    // A push to a fork's branch moves the head of the PRs it has open in other repositories.
    for (const issue of core.state.issues.values()) {
      const p = issue.pull;
      if (!p || issue.state !== "open" || p.headRepoId !== repo.id || p.headRef !== short || !ch.after || p.headSha === ch.after) continue;
      const base = core.state.repos.get(issue.repoId);
      if (!base) continue;
      const before = p.headSha;
      await core.fetchPullHead(base, issue);
      p.headSha = ch.after;
      issue.updatedAt = now();
      core.bus.emit(
        "pull_request",
        "synchronize",
        {
          number: issue.number,
          before,
          after: ch.after,
          pull_request: await core.pullPayload(base, issue),
          repository: core.model.repo(base),
          sender,
        },
        { repo: base, causedByWorkflowRun },
      );
    }
  }
}

function username(core: SimCore, email: string): { username?: string } {
  const m = /^(\d+)\+[^@]+@users\.noreply\./.exec(email);
  const u = m ? core.state.userById(Number(m[1])) : undefined;
  return u ? { username: u.login } : {};
}

/**
 * On a push GitHub creates a check suite per App that has checks:write and sends it
 * `check_suite.requested` ("This default flow sends the check_suite event (with requested action) to
 * all GitHub Apps that have the checks:write permission" — docs.github.com/rest/guides/using-the-rest-api-to-interact-with-checks;
 * such Apps are subscribed to `check_suite` whether they listed it or not).
 */
async function requestCheckSuites(
  core: SimCore,
  repo: Repo,
  branch: string,
  before: string | null,
  after: string,
  ctx: ActContext,
): Promise<void> {
  for (const inst of core.state.installationsFor(repo)) {
    if (inst.permissions.checks !== "write" || inst.appId === ACTIONS_APP_ID) continue;
    const suite = core.ensureSuite(repo, inst.appId, after, branch, before);
    core.bus.emit(
      "check_suite",
      "requested",
      {
        check_suite: { ...core.model.suite(repo, suite, core.prsFor(repo, after)), head_commit: await core.headCommit(repo, after) },
        repository: core.model.repo(repo),
        sender: core.model.user(ctx.actor),
      },
      { repo, onlyAppId: inst.appId, causedByWorkflowRun: ctx.token?.workflowRunId },
    );
  }
}

export async function headCommit(core: SimCore, repo: Repo, sha: string): Promise<Record<string, unknown>> {
  const c = await git.readCommit(repo.gitDir, sha);
  return {
    id: c.sha,
    tree_id: c.tree,
    message: c.message.replace(/\n$/, ""),
    timestamp: c.committer.date,
    author: { name: c.author.name, email: c.author.email },
    committer: { name: c.committer.name, email: c.committer.email },
  };
}
