// A job whose steps run as another OS user than the runner's own (`RunJobOptions.runAs`): as on
// GitHub's hosted runners, where the runner service is root and the steps run as `runner`, a user
// with passwordless sudo. The executor must be root to start them so; the job's folders become that
// user's, and each folder above them gets the search bit for others so the user can reach them.
import { chmod, chown, lstat, readdir, stat } from "node:fs/promises";
import path from "node:path";

export interface StepUser {
  uid: number;
  gid: number;
  /** Its name, for USER and LOGNAME. */
  user?: string;
  /** Its HOME (default: the job's RUNNER_TEMP). */
  home?: string;
}

/** Gives `dirs` (recursively, links not followed) to the user, and lets it reach them. */
export async function giveFolders(u: StepUser, dirs: readonly string[]): Promise<void> {
  for (const dir of dirs) {
    for (let a = path.dirname(path.resolve(dir)); a !== path.dirname(a); a = path.dirname(a)) {
      const s = await stat(a);
      if ((s.mode & 0o001) === 0) await chmod(a, s.mode | 0o001);
    }
    await chownTree(dir, u);
  }
}

async function chownTree(p: string, u: StepUser): Promise<void> {
  const s = await lstat(p);
  if (s.isSymbolicLink()) return;
  await chown(p, u.uid, u.gid);
  if (!s.isDirectory()) return;
  for (const name of await readdir(p)) await chownTree(path.join(p, name), u);
}
