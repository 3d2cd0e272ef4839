// The runner's user of GitHub's hosted runners on this machine: the runner service is root, the steps
// run as a user with passwordless sudo. Tests that run the action through the sim runner start it as
// such a user (`createSimExecutor({ runAs })`), so what the action does with its sudo is tested as on
// GitHub. Made with a random name per test file, removed at the end.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";

export interface RunnerUser {
  user: string;
  uid: number;
  gid: number;
  home: string;
}

/** Whether a runner user with passwordless sudo is there to be had, and why not. */
export type RunnerUserPlan =
  | { kind: "create" } // root, sudo installed: create one
  | { kind: "self" } // not root, but this user has passwordless sudo: the action runs as this user
  | { kind: "skip"; reason: string };

export function runnerUserPlan(): RunnerUserPlan {
  const sudo = spawnSync("sudo", ["-n", "true"]);
  if (process.getuid?.() !== 0) {
    return sudo.status === 0
      ? { kind: "self" }
      : { kind: "skip", reason: "this needs root (to start the action as a user with passwordless sudo) or passwordless sudo" };
  }
  if (sudo.error) return { kind: "skip", reason: "sudo is not installed (apt-get install sudo)" };
  return { kind: "create" };
}

/** Runs a command; again after a moment when it fails (tests running at once contend for the lock on /etc/passwd). */
const run = (cmd: string, args: string[], tries = 1) => {
  for (let i = 1; ; i++) {
    const r = spawnSync(cmd, args, { encoding: "utf8" });
    if (r.status === 0) return r.stdout.trim();
    if (i >= tries) throw new Error(`${cmd} ${args.join(" ")}: ${r.error?.message ?? r.stderr}`);
    spawnSync("sleep", [String(0.1 * i)]);
  }
};

/** Creates `forge-runner-<hex>` with a home and a NOPASSWD sudoers entry (root only). */
export function createRunnerUser(): RunnerUser {
  const user = `forge-runner-${randomBytes(3).toString("hex")}`;
  run("useradd", ["--create-home", "--shell", "/bin/sh", user], 10);
  writeFileSync(`/etc/sudoers.d/${user}`, `${user} ALL=(ALL) NOPASSWD:ALL\n`, { mode: 0o440 });
  const u: RunnerUser = { user, uid: Number(run("id", ["-u", user])), gid: Number(run("id", ["-g", user])), home: `/home/${user}` };
  // As on a hosted runner: that user's sudo works without a password.
  run("setpriv", ["--reuid", String(u.uid), "--regid", String(u.gid), "--init-groups", "--", "sudo", "-n", "true"]);
  return u;
}

export function removeRunnerUser(u: RunnerUser): void {
  rmSync(`/etc/sudoers.d/${u.user}`, { force: true });
  try {
    run("userdel", ["--remove", u.user], 10);
  } catch {
    // Left for the machine's owner: a user without a password, its sudoers entry gone.
  }
}
