/**
 * The agent as its own OS user (see docs/runner.md#isolation). An agent runs Bash; running it as the
 * runner's user would let it read the environment of the runner's own processes
 * (`/proc/<pid>/environ`: the job token, the model key) and use the runner's `sudo`. So the runner
 * runs each top-level agent session as the unprivileged user `forge-agent` — no groups, no
 * `sudo`, `no_new_privs` — with only the directories it works in handed over to it for the session,
 * and takes them back before its own git touches them.
 *
 * It needs root or passwordless `sudo` (GitHub's hosted runners have it). `agent.isolation`:
 * `auto` (default) isolates when it can and says so when it cannot; `user` fails the job when it
 * cannot; `none` runs the agent as the runner's user.
 */
import { execFile } from "node:child_process";
import { chmod, stat } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";

const execP = promisify(execFile);
/** System tools (`useradd`, `setpriv`) live in sbin folders a non-login PATH may lack. */
const SYSTEM_PATH = [process.env.PATH ?? "", "/usr/local/sbin", "/usr/sbin", "/sbin", "/usr/bin", "/bin"].filter(Boolean).join(":");
const exec = (cmd: string, args: string[], o: { encoding: "utf8" } = { encoding: "utf8" }) =>
  execP(cmd, args, { ...o, env: { ...process.env, PATH: SYSTEM_PATH } });

export const AGENT_USER = "forge-agent";

export type IsolationMode = "auto" | "user" | "none";

export interface AgentUser {
  user: string;
  uid: number;
  gid: number;
  /** How the runner acts as another user: it is root, or it has passwordless sudo. */
  via: "root" | "sudo";
  /** The runner's own uid and gid, to take the directories back. */
  owner: { uid: number; gid: number };
}

export class IsolationError extends Error {}

/** Runs a privileged command (as root directly, else through `sudo -n`). */
async function privileged(via: "root" | "sudo", command: string, args: string[]): Promise<string> {
  const [cmd, argv] = via === "root" ? [command, args] : ["sudo", ["-n", "--", command, ...args]];
  return (await exec(cmd, argv)).stdout;
}

async function canSudo(): Promise<boolean> {
  try {
    await exec("sudo", ["-n", "true"]);
    return true;
  } catch {
    return false;
  }
}

/**
 * The agent's user, created when missing; undefined for `none`, or for `auto` when the runner is
 * neither root nor allowed passwordless sudo (`warn` says so).
 */
export async function prepareAgentUser(mode: IsolationMode, warn: (message: string) => void): Promise<AgentUser | undefined> {
  if (mode === "none") return undefined;
  const uid = process.getuid?.();
  const via = uid === 0 ? "root" : (await canSudo()) ? "sudo" : undefined;
  if (!via) {
    const why =
      "the agent cannot run as its own user here: that needs root or passwordless sudo (GitHub's hosted runners have it), so it runs as the runner's user and could read the job's token from the runner's processes";
    if (mode === "user") throw new IsolationError(`agent.isolation is 'user', but ${why}. Set agent.isolation: none to accept that.`);
    warn(`${why}. Set agent.isolation: none in .github/forge.yml to silence this warning.`);
    return undefined;
  }
  try {
    const id = async (flag: string) => Number((await exec("id", [flag, AGENT_USER])).stdout.trim());
    let agentUid: number;
    try {
      agentUid = await id("-u");
    } catch {
      await privileged(via, "useradd", ["--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", AGENT_USER]).catch(
        async (err: unknown) => {
          // Two jobs on one machine may create it at once.
          if (!(await id("-u").catch(() => undefined))) throw err;
        },
      );
      agentUid = await id("-u");
    }
    await exec("setpriv", ["--version"]);
    return { user: AGENT_USER, uid: agentUid, gid: await id("-g"), via, owner: { uid: uid ?? 0, gid: process.getgid?.() ?? 0 } };
  } catch (err) {
    const why = `the agent's own user could not be prepared (${err instanceof Error ? err.message.split("\n")[0] : String(err)}): useradd and setpriv (Debian's passwd and util-linux) are needed`;
    if (mode === "user") throw new IsolationError(`agent.isolation is 'user', but ${why}.`);
    warn(`${why}; the agent runs as the runner's user.`);
    return undefined;
  }
}

/**
 * The command line that runs `command args` as the agent's user: its uid and group only, no
 * supplementary groups, `no_new_privs` (no setuid program — `sudo` — can raise it again), umask 022.
 * The environment is the one given to the spawn.
 */
export function asAgentUser(u: AgentUser, command: string, args: string[], env: NodeJS.ProcessEnv): { command: string; args: string[] } {
  const setpriv = ["--reuid", String(u.uid), "--regid", String(u.gid), "--clear-groups", "--no-new-privs", "--", command, ...args];
  if (u.via === "root") return { command: "setpriv", args: setpriv };
  // sudo resets PATH (secure_path): the agent's PATH is given back explicitly.
  return { command: "sudo", args: ["-n", "-E", "--", "env", `PATH=${env.PATH ?? ""}`, "setpriv", ...setpriv] };
}

/** Sends a signal to a process group owned by the agent's user (the runner may not signal it itself). */
export async function signalAgentGroup(u: AgentUser, pgid: number, signal: NodeJS.Signals): Promise<void> {
  if (u.via === "root") {
    process.kill(-pgid, signal);
    return;
  }
  await privileged(u.via, "kill", [`-${signal.replace(/^SIG/, "")}`, "--", `-${pgid}`]).catch(() => undefined);
}

/**
 * Hands directories to the agent's user for a session (recursively), and lets it reach them: each
 * ancestor the runner owns gets the search bit for others (not read: nothing is listed).
 */
export async function handOver(u: AgentUser, dirs: readonly string[]): Promise<void> {
  const unique = [...new Set(dirs.map((d) => path.resolve(d)))];
  for (const dir of unique) {
    for (let a = path.dirname(dir); a !== path.dirname(a); a = path.dirname(a)) {
      const s = await stat(a).catch(() => undefined);
      if (s && s.uid === u.owner.uid && (s.mode & 0o001) === 0) await chmod(a, s.mode | 0o001).catch(() => undefined);
    }
  }
  if (unique.length) await privileged(u.via, "chown", ["-R", `${u.uid}:${u.gid}`, "--", ...unique]);
}

/** Takes the directories back after the session: the runner's git and files work on them again. */
export async function takeBack(u: AgentUser, dirs: readonly string[]): Promise<void> {
  const unique = [...new Set(dirs.map((d) => path.resolve(d)))];
  if (unique.length) await privileged(u.via, "chown", ["-R", `${u.owner.uid}:${u.owner.gid}`, "--", ...unique]);
}
