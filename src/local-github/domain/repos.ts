// Repositories of the local GitHub: created (with a first commit from files or a folder), forked,
// and the heads of pull requests from forks fetched into their base.
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import * as git from "../git/index.js";
import { now, type Issue, type Repo, type Role } from "../state.js";
import type { SimCore } from "./index.js";
import { actionsPermissionsOf } from "../actions-permissions.js";

export interface SeedRepoOptions {
  owner: string;
  name: string;
  defaultBranch?: string;
  private?: boolean;
  description?: string;
  /** files of the first commit (path → content) */
  files?: Record<string, string>;
  /** or a folder whose files make the first commit */
  fromDir?: string;
  collaborators?: Record<string, Role>;
  labels?: Array<{ name: string; color?: string; description?: string }>;
  /**
   * "Allow GitHub Actions to create and approve pull requests" (Settings → Actions → General), on
   * as Forge's README asks when the runner opens the task PRs with the job's token; off by default,
   * as GitHub's is (../actions-permissions.ts).
   */
  actionsMayCreatePullRequests?: boolean;
}

export async function createRepo(core: SimCore, o: SeedRepoOptions): Promise<Repo> {
  if (core.state.repoByName(o.owner, o.name)) throw new Error(`repository ${o.owner}/${o.name} exists`);
  const owner = core.ensureUser(o.owner);
  const branch = o.defaultBranch ?? "main";
  const dir = core.gitDir(owner.login, o.name);
  mkdirSync(dirname(dir), { recursive: true });
  await git.initBare(dir, branch);
  const t = now();
  const repo: Repo = {
    id: core.state.id(),
    owner,
    name: o.name,
    private: o.private ?? false,
    defaultBranch: branch,
    gitDir: dir,
    collaborators: new Map(Object.entries(o.collaborators ?? {})),
    labels: new Map(),
    nextNumber: 1,
    createdAt: t,
    updatedAt: t,
    pushedAt: t,
    description: o.description ?? null,
  };
  if (o.actionsMayCreatePullRequests) actionsPermissionsOf(repo).canApprovePullRequestReviews = true;
  for (const login of repo.collaborators.keys()) core.ensureUser(login);
  for (const l of o.labels ?? [])
    repo.labels.set(l.name, {
      id: core.state.id(),
      name: l.name,
      color: l.color ?? "ededed",
      description: l.description ?? null,
      default: false,
    });
  core.state.repos.set(repo.id, repo);
  let tree: string | undefined;
  if (o.fromDir) tree = await git.treeFromFolder(dir, o.fromDir);
  else if (o.files) {
    const changes: git.TreeChange[] = [];
    for (const [path, content] of Object.entries(o.files)) changes.push({ path, sha: await git.hashBlob(dir, Buffer.from(content)) });
    tree = await git.buildTree(dir, undefined, changes);
  }
  if (tree) {
    const id = { name: owner.login, email: core.email(owner), date: t };
    const sha = await git.commitTree(dir, tree, [], "Initial commit\n", id, id);
    await git.updateRef(dir, `refs/heads/${branch}`, sha);
  }
  return repo;
}

/**
 * A fork of `source` owned by `owner` (same name): its own bare repository holding the source's
 * default branch (what GitHub's fork button copies unless told otherwise). Pull requests from its
 * branches into `source` are "from a fork".
 */
export async function fork(core: SimCore, source: Repo, owner: string): Promise<Repo> {
  if (core.state.repoByName(owner, source.name)) throw new Error(`repository ${owner}/${source.name} exists`);
  const user = core.ensureUser(owner);
  const dir = core.gitDir(user.login, source.name);
  mkdirSync(dirname(dir), { recursive: true });
  await git.initBare(dir, source.defaultBranch);
  const head = `refs/heads/${source.defaultBranch}`;
  if (await git.resolveRef(source.gitDir, head)) await git.runGit(dir, ["fetch", "--quiet", source.gitDir, `+${head}:${head}`]);
  const t = now();
  const repo: Repo = {
    id: core.state.id(),
    owner: user,
    name: source.name,
    private: source.private,
    defaultBranch: source.defaultBranch,
    gitDir: dir,
    collaborators: new Map(),
    labels: new Map(),
    nextNumber: 1,
    createdAt: t,
    updatedAt: t,
    pushedAt: t,
    description: source.description,
    forkOf: source.id,
  };
  core.state.repos.set(repo.id, repo);
  return repo;
}

/**
 * A pull request's head commit as the base repository sees it. GitHub keeps every PR's head at
 * `refs/pull/<n>/head` of the base repository; the simulator needs it only for PRs from forks,
 * whose commits it fetches there so every read of the base repository finds them.
 */
export async function fetchPullHead(core: SimCore, base: Repo, issue: Issue): Promise<string | undefined> {
  const p = issue.pull!;
  const head = p.headRepoId !== undefined ? core.state.repos.get(p.headRepoId) : undefined;
  if (!head) return git.resolveRef(base.gitDir, `refs/heads/${p.headRef}`);
  const sha = await git.resolveRef(head.gitDir, `refs/heads/${p.headRef}`);
  if (!sha) return undefined;
  await git.runGit(base.gitDir, ["fetch", "--quiet", head.gitDir, `+refs/heads/${p.headRef}:refs/pull/${issue.number}/head`]);
  return sha;
}
