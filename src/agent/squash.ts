/**
 * Squashing an upstream onto a refinery's branch when the branch must keep a linear history
 * (docs/executor.md#merging-under-the-repositorys-rules): `git merge --squash` of the upstream's
 * verified head, committed by the runner as one commit with a single parent — no merge commit ever
 * reaches the branch. The runner records each one (`SquashRecord`, result.json `squashed`): the App
 * counts an upstream contained by that record, its own word, never by a commit message.
 */
import { conflictedFiles, git, gitOk, identity, parseMarkerFiles, type GitRun } from "./branches.js";

/** An upstream squashed onto the branch: its branch, the head squashed, and the commit that holds it. */
export interface SquashRecord {
  branch: string;
  head: string;
  /** The runner's squash commit, or the head that already held the upstream's content (nothing to commit). */
  commit: string;
}

/** How squashing a head went: committed (or already held), or stopped on conflicts left in the work tree. */
export type SquashResult = { squashed: true; commit: string; changed: boolean } | { squashed: false; conflicts: string[] };

/** The message of the runner's squash commit of an upstream: what it holds and from where. */
export function squashMessage(refinery: string, upstream: { branch: string; head: string; taskId?: string }): string {
  return [
    `forge(${refinery}): squash ${upstream.taskId ?? upstream.branch}`,
    "",
    `The work of ${upstream.branch} at ${upstream.head}, squashed by Forge: the repository keeps a linear history.`,
    "",
  ].join("\n");
}

/**
 * Squashes `head` onto the checked-out branch (`git merge --squash`) and commits it with `message`
 * on top of the current head. Nothing to commit — the branch already holds that content — is a
 * squash too: the commit named is the head. On a conflict the squash is left in progress for a
 * resolver; then `concludeSquash` or `abandonSquash`.
 */
export async function squashHead(cwd: string, head: string, message: string, run: GitRun = git): Promise<SquashResult> {
  const parent = await gitOk(cwd, ["rev-parse", "HEAD"], run);
  const r = await run(cwd, [...(await identity(cwd, run)), "merge", "--squash", "--no-commit", head]);
  if (r.code !== 0) {
    const conflicts = await conflictedFiles(cwd, run);
    if (conflicts.length === 0) {
      await abandonSquash(cwd, parent, run);
      throw new Error(`git merge --squash ${head} failed (${r.code}): ${(r.stderr || r.stdout).trim().split("\n").slice(-3).join(" | ")}`);
    }
    return { squashed: false, conflicts };
  }
  return commitSquash(cwd, parent, message, run);
}

/**
 * Finishes a squash whose conflicts were resolved in the work tree (fails when markers remain). Its
 * parent is the head before the squash, whatever a resolver did to HEAD meanwhile: what the resolver
 * committed is folded into the squash commit.
 */
export async function concludeSquash(cwd: string, parent: string, message: string, run: GitRun = git): Promise<SquashResult> {
  if ((await gitOk(cwd, ["rev-parse", "HEAD"], run)) !== parent) await gitOk(cwd, ["reset", "--soft", "--quiet", parent], run);
  await gitOk(cwd, ["add", "-A"], run);
  const left = await conflictedFiles(cwd, run);
  const markers = await run(cwd, ["diff", "--cached", "--check"]);
  if (left.length > 0 || /conflict marker/i.test(markers.stdout))
    return { squashed: false, conflicts: left.length > 0 ? left : parseMarkerFiles(markers.stdout) };
  return commitSquash(cwd, parent, message, run);
}

/** Drops a squash in progress: the branch back at `parent`, the work tree clean of it. */
export async function abandonSquash(cwd: string, parent: string, run: GitRun = git): Promise<void> {
  await gitOk(cwd, ["reset", "--hard", "--quiet", parent], run);
}

async function commitSquash(cwd: string, parent: string, message: string, run: GitRun): Promise<SquashResult> {
  const staged = await run(cwd, ["diff", "--cached", "--quiet", parent]);
  if (staged.code === 0) return { squashed: true, commit: parent, changed: false };
  await gitOk(cwd, [...(await identity(cwd, run)), "commit", "-q", "--no-verify", "-m", message], run);
  return { squashed: true, commit: await gitOk(cwd, ["rev-parse", "HEAD"], run), changed: true };
}
