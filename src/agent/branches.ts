/**
 * Sub-agent branches (see docs/runner.md#sub-agent-branches): a sub-agent of the attempt on `<branch>` works on
 * `<branch>-<sub>` — `<branch>/<sub>` cannot exist in git beside `<branch>` — cut from the parent's
 * head and merged back into it. The job pipeline decides when to use them and whether to push them.
 */
import { execFile } from "node:child_process";
import { GitError } from "../core/git-error.js";

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function git(cwd: string, args: string[], env?: NodeJS.ProcessEnv): Promise<GitResult> {
  return new Promise((resolve) => {
    execFile("git", args, { cwd, env: env ?? process.env, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === "number" ? (err as { code: number }).code : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/**
 * Runs git in a checkout. The stages that run in the runner's process (a refinery's merges, a type
 * 3's sub-branches) get the runner's hardened git (action/src/git.ts: the repository's control files
 * the runner's, no credential in reach); `forge spawn`, which the agent runs, uses plain `git`.
 */
export type GitRun = (cwd: string, args: string[]) => Promise<GitResult>;

export async function gitOk(cwd: string, args: string[], run: GitRun = git): Promise<string> {
  const r = await run(cwd, args);
  if (r.code !== 0) throw gitFailed(args, r);
  return r.stdout.trim();
}

/** A failed git command as a `GitError`: its last three lines of output (stderr, else stdout) in the message. */
function gitFailed(args: string[], result: GitResult): GitError {
  const tail = (result.stderr || result.stdout).trim().split("\n").slice(-3).join(" | ");
  return new GitError(`git ${args.join(" ")} failed (${result.code}): ${tail}`, args, result.code, result.stderr);
}

/** `-c user.name/-c user.email` when the repository has no identity, so Forge's commits never fail on it. */
export async function identity(cwd: string, run: GitRun = git): Promise<string[]> {
  const email = await run(cwd, ["config", "user.email"]);
  return email.code === 0 && email.stdout.trim() ? [] : ["-c", "user.name=Forge", "-c", "user.email=forge@users.noreply.github.com"];
}

export function subBranchName(parentBranch: string, sub: string): string {
  const slug =
    sub
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, "-")
      .replace(/^[-.]+|[-.]+$/g, "") || "sub";
  return `${parentBranch}-${slug}`;
}

export async function currentBranch(cwd: string, run: GitRun = git): Promise<string> {
  return gitOk(cwd, ["rev-parse", "--abbrev-ref", "HEAD"], run);
}

/** Creates `<parent>-<sub>` at the parent's head and checks it out. The parent must be checked out. */
export async function startSubBranch(cwd: string, parentBranch: string, sub: string, run: GitRun = git): Promise<string> {
  const name = subBranchName(parentBranch, sub);
  const head = await currentBranch(cwd, run);
  if (head !== parentBranch) throw new Error(`expected ${parentBranch} to be checked out, found ${head}`);
  await gitOk(cwd, ["checkout", "-q", "-B", name], run);
  return name;
}

/** Stages and commits everything in the work tree; returns the new head, or null when there was nothing to commit. */
export async function commitAll(cwd: string, message: string, run: GitRun = git): Promise<string | null> {
  await gitOk(cwd, ["add", "-A"], run);
  const staged = await run(cwd, ["diff", "--cached", "--quiet"]);
  if (staged.code === 0) return null;
  await gitOk(cwd, [...(await identity(cwd, run)), "commit", "-q", "--no-verify", "-m", message], run);
  return gitOk(cwd, ["rev-parse", "HEAD"], run);
}

/** How a merge in a local checkout went (a server-side merge is the GitHub port's `MergeResult`). */
export type LocalMergeResult = { merged: true; head: string; changed: boolean } | { merged: false; conflicts: string[] };

/** Files with unresolved conflicts. */
export async function conflictedFiles(cwd: string, run: GitRun = git): Promise<string[]> {
  const out = await run(cwd, ["diff", "--name-only", "--diff-filter=U"]);
  return out.stdout
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
}

/**
 * Merges `ref` into the checked-out branch (`--no-ff`). On a conflict the merge is left in progress
 * so a sub-agent can resolve it; call `concludeMerge` or `abortMerge` afterwards.
 */
export async function mergeRef(cwd: string, ref: string, message?: string, run: GitRun = git): Promise<LocalMergeResult> {
  const before = await gitOk(cwd, ["rev-parse", "HEAD"], run);
  const r = await run(cwd, [...(await identity(cwd, run)), "merge", "--no-ff", "--no-edit", ...(message ? ["-m", message] : []), ref]);
  if (r.code !== 0) {
    const conflicts = await conflictedFiles(cwd, run);
    if (conflicts.length === 0) throw gitFailed(["merge", ref], r);
    return { merged: false, conflicts };
  }
  const head = await gitOk(cwd, ["rev-parse", "HEAD"], run);
  return { merged: true, head, changed: head !== before };
}

/** Finishes a merge whose conflicts were resolved in the work tree; fails when markers remain. */
export async function concludeMerge(cwd: string, run: GitRun = git): Promise<LocalMergeResult> {
  await gitOk(cwd, ["add", "-A"], run);
  const left = await conflictedFiles(cwd, run);
  const markers = await run(cwd, ["diff", "--cached", "--check"]);
  if (left.length > 0 || /conflict marker/i.test(markers.stdout)) {
    return { merged: false, conflicts: left.length > 0 ? left : parseMarkerFiles(markers.stdout) };
  }
  await gitOk(cwd, [...(await identity(cwd, run)), "commit", "-q", "--no-verify", "--no-edit"], run);
  return { merged: true, head: await gitOk(cwd, ["rev-parse", "HEAD"], run), changed: true };
}

export function parseMarkerFiles(check: string): string[] {
  return [
    ...new Set(
      check
        .split("\n")
        .filter((l) => /conflict marker/i.test(l))
        .map((l) => l.split(":")[0]!),
    ),
  ];
}

export async function abortMerge(cwd: string, run: GitRun = git): Promise<void> {
  await run(cwd, ["merge", "--abort"]);
}

/**
 * Commits what the sub-agent left on `subBranch`, checks the parent out again and merges the
 * sub-branch into it.
 */
export async function finishSubBranch(
  cwd: string,
  parentBranch: string,
  subBranch: string,
  message: string,
  run: GitRun = git,
): Promise<LocalMergeResult> {
  await commitAll(cwd, message, run);
  await gitOk(cwd, ["checkout", "-q", parentBranch], run);
  return mergeRef(cwd, subBranch, `Merge ${subBranch} into ${parentBranch}`, run);
}

// ------------------------------------------------------------ `forge spawn` sub-agents in worktrees

/**
 * Where a `forge spawn` sub-agent works when its parent runs inside a Forge job: its own git worktree
 * (outside the checkout, so the parent's files are never touched while it works) on
 * `<parent branch>-<sub>`, cut from the parent's head.
 */
export interface SubWorktree {
  /** The parent's checkout (its top level). */
  repoDir: string;
  /** The worktree. */
  dir: string;
  parentBranch: string;
  branch: string;
  /** The parent's head the sub-branch was cut from. */
  base: string;
}

/** What happened to a sub-agent's branch (`forge spawn`'s JSON `branch`). */
export interface SubBranchReport {
  branch: string;
  parent_branch: string;
  merged: boolean;
  /** The sub-branch's head (the sub-agent's work, kept whatever happened to the merge). */
  head: string;
  /** Files that conflicted when merging into the parent's branch (the merge was aborted; the work stays on `branch`). */
  conflicts?: string[];
  /** Why it was not merged, when it was not. */
  error?: string;
}

/**
 * The checkout `cwd` is in, when it is on the task branch `taskBranch` or one of its sub-branches
 * (`<taskBranch>-…`): where a parent agent inside a Forge job works.
 */
export async function forgeCheckoutOf(
  cwd: string,
  taskBranch: string | undefined,
): Promise<{ repoDir: string; branch: string } | undefined> {
  if (!taskBranch) return undefined;
  const top = await git(cwd, ["rev-parse", "--show-toplevel"]);
  if (top.code !== 0) return undefined;
  const repoDir = top.stdout.trim();
  const branch = await git(repoDir, ["symbolic-ref", "--quiet", "--short", "HEAD"]);
  const name = branch.stdout.trim();
  if (branch.code !== 0 || !(name === taskBranch || name.startsWith(`${taskBranch}-`))) return undefined;
  return { repoDir, branch: name };
}

async function branchExists(cwd: string, name: string): Promise<boolean> {
  return (await git(cwd, ["show-ref", "--verify", "--quiet", `refs/heads/${name}`])).code === 0;
}

/**
 * Commits the parent's pending work (so the sub-agent starts from it, and the merge back is not
 * refused over local changes), creates `<parent>-<sub>` (`-2`, `-3`, … when taken) at the parent's
 * head and adds a worktree for it in `worktreeDir`.
 */
export async function startSubWorktree(
  repoDir: string,
  parentBranch: string,
  sub: string,
  worktreeDir: string,
  parentMessage: string,
): Promise<SubWorktree> {
  await commitAll(repoDir, parentMessage);
  const base = await gitOk(repoDir, ["rev-parse", "HEAD"]);
  const first = subBranchName(parentBranch, sub);
  let branch = first;
  for (let n = 2; await branchExists(repoDir, branch); n++) branch = `${first}-${n}`;
  await gitOk(repoDir, ["worktree", "add", "--quiet", "-b", branch, worktreeDir, base]);
  return { repoDir, dir: worktreeDir, parentBranch, branch, base };
}

/**
 * Commits what the sub-agent left in its worktree, removes the worktree (the branch stays) and, when
 * `merge`, merges the sub-branch into the parent's branch in the parent's checkout. A conflicted
 * merge is aborted — the parent's tree is left as it was — and reported with its files; the work
 * stays on the sub-branch for the parent to merge by hand.
 */
export async function finishSubWorktree(
  wt: SubWorktree,
  message: string,
  merge: { merge: true } | { merge: false; reason: string },
): Promise<SubBranchReport> {
  await commitAll(wt.dir, message).catch(() => null);
  const head = (await git(wt.dir, ["rev-parse", "HEAD"])).stdout.trim() || wt.base;
  await git(wt.repoDir, ["worktree", "remove", "--force", wt.dir]);
  await git(wt.repoDir, ["worktree", "prune"]);
  const report = { branch: wt.branch, parent_branch: wt.parentBranch, head };
  if (!merge.merge) return { ...report, merged: false, error: merge.reason };
  const current = await git(wt.repoDir, ["symbolic-ref", "--quiet", "--short", "HEAD"]);
  if (current.stdout.trim() !== wt.parentBranch) {
    return {
      ...report,
      merged: false,
      error: `the parent's checkout is no longer on ${wt.parentBranch} (found ${current.stdout.trim() || "a detached HEAD"}); merge ${wt.branch} by hand`,
    };
  }
  try {
    const m = await mergeRef(wt.repoDir, wt.branch, `Merge ${wt.branch} into ${wt.parentBranch}`);
    if (m.merged) return { ...report, merged: true };
    await abortMerge(wt.repoDir);
    return {
      ...report,
      merged: false,
      conflicts: m.conflicts,
      error: `merging ${wt.branch} into ${wt.parentBranch} conflicted in ${m.conflicts.join(", ")}; the merge was aborted and the work stays on ${wt.branch} (git merge ${wt.branch} to resolve it)`,
    };
  } catch (err) {
    return { ...report, merged: false, error: `could not merge ${wt.branch} into ${wt.parentBranch}: ${(err as Error).message}` };
  }
}
