/**
 * The agent as its own OS user (see docs/runner.md#isolation). An agent runs Bash; running it as the
 * runner's user would let it read the environment of the runner's own processes
 * (`/proc/<pid>/environ`: the job token, the model key) and use the runner's `sudo`. So each job
 * creates its own unprivileged user `forge-agent-<8 hex>` — no groups, no `sudo`, `no_new_privs` —
 * and runs every agent session and every command of the repository (the test command) as that user,
 * with only the directories it works in handed over to it for the session, taken back before the
 * runner's own git touches them. After each session every process of that user is killed (a
 * `setsid` daemon leaves the process group, not the uid); at the end of the job the user is removed
 * and the folder modes the runner changed are restored (`releaseAgentUser`).
 *
 * It needs root or passwordless `sudo` (GitHub's hosted runners have it). `agent.isolation`:
 * `auto` (default) isolates when it can and says so when it cannot; `user` fails the job when it
 * cannot; `none` runs the agent as the runner's user.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { access, chmod, open, readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";

const execP = promisify(execFile);
/** System tools (`useradd`, `setpriv`) live in sbin folders a non-login PATH may lack. */
const SYSTEM_PATH = [process.env.PATH ?? "", "/usr/local/sbin", "/usr/sbin", "/sbin", "/usr/bin", "/bin"].filter(Boolean).join(":");
const exec = (cmd: string, args: string[], o: { encoding: "utf8" } = { encoding: "utf8" }) =>
  execP(cmd, args, { ...o, env: { ...process.env, PATH: SYSTEM_PATH } });

/** Every job's agent user is named `forge-agent-` and 8 random hex digits. */
export const AGENT_USER_PREFIX = "forge-agent-";
const AGENT_USER_NAME = /^forge-agent-[0-9a-f]{8}$/;

export type IsolationMode = "auto" | "user" | "none";

export interface AgentUser {
  user: string;
  uid: number;
  gid: number;
  /** How the runner acts as another user: it is root, or it has passwordless sudo. */
  via: "root" | "sudo";
  /** The runner's own uid and gid, to take the directories back. */
  owner: { uid: number; gid: number };
  /** Folders whose mode `handOver` changed (the search bit for others), with their mode before: restored at the end of the job. */
  changedModes: Map<string, number>;
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
 * This job's agent user, created now (`forge-agent-<8 hex>`, no home, no login shell); undefined
 * for `none`, or for `auto` when the runner is neither root nor allowed passwordless sudo (`warn`
 * says so). Release it with `releaseAgentUser` at the end of the job.
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
    await exec("setpriv", ["--version"]);
    const user = await createUser(via);
    const id = async (flag: string) => Number((await exec("id", [flag, user])).stdout.trim());
    const [agentUid, agentGid] = [await id("-u"), await id("-g")];
    if (!(agentUid > 0) || agentUid === uid) throw new Error(`${user} has uid ${agentUid}`);
    return { user, uid: agentUid, gid: agentGid, via, owner: { uid: uid ?? 0, gid: process.getgid?.() ?? 0 }, changedModes: new Map() };
  } catch (err) {
    const why = `the agent's own user could not be prepared (${err instanceof Error ? err.message.split("\n")[0] : String(err)}): useradd and setpriv (Debian's passwd and util-linux) are needed`;
    if (mode === "user") throw new IsolationError(`agent.isolation is 'user', but ${why}.`);
    warn(`${why}; the agent runs as the runner's user.`);
    return undefined;
  }
}

/**
 * Creates a system user with a fresh name; its name. Another name when one is taken; again after a
 * moment when `useradd` failed otherwise (jobs on one machine contend for the lock on /etc/passwd).
 */
async function createUser(via: "root" | "sudo"): Promise<string> {
  for (let i = 0; ; i++) {
    const user = `${AGENT_USER_PREFIX}${randomBytes(4).toString("hex")}`;
    try {
      await privileged(via, "useradd", ["--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", user]);
      return user;
    } catch (err) {
      if (i >= 5 || (err as NodeJS.ErrnoException).code === "ENOENT") throw err;
      await pause(50 + Math.random() * 200 * (i + 1));
    }
  }
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

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

/** Interpreters whose first file argument is the program they run (that file must be readable). */
const INTERPRETERS = new Set(["node", "nodejs", "sh", "bash", "dash", "python", "python3", "perl", "ruby", "tsx", "deno", "bun"]);

/** `command` as the spawn would find it on `PATH`; undefined when it is nowhere (the spawn says so itself). */
async function resolveCommand(command: string, PATH: string | undefined): Promise<string | undefined> {
  if (command.includes("/")) return path.resolve(command);
  for (const dir of (PATH ?? "").split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, command);
    if (
      await access(candidate).then(
        () => true,
        () => false,
      )
    )
      return candidate;
  }
  return undefined;
}

/** The first `n` bytes of `file` (empty when it cannot be read). */
async function firstBytes(file: string, n: number): Promise<string> {
  const fh = await open(file, "r").catch(() => undefined);
  if (!fh) return "";
  try {
    const { buffer, bytesRead } = await fh.read(Buffer.alloc(n), 0, n, 0);
    return buffer.subarray(0, bytesRead).toString();
  } catch {
    return "";
  } finally {
    await fh.close();
  }
}

/** Whether the agent's user passes `test <flag> <file>` (its own uid and groups: ACLs and modes as the kernel sees them). */
async function agentPasses(u: AgentUser, flag: "-r" | "-x", file: string): Promise<boolean> {
  const { command, args } = asAgentUser(u, "test", [flag, file], { PATH: SYSTEM_PATH });
  return execP(command, args, { env: { ...process.env, PATH: SYSTEM_PATH } }).then(
    () => true,
    () => false,
  );
}

/** The first folder on `file`'s path that others may not search (the usual reason the agent cannot reach it), with its mode. */
async function closedFolder(file: string): Promise<string | undefined> {
  const chain: string[] = [];
  for (let a = path.dirname(file); a !== path.dirname(a); a = path.dirname(a)) chain.unshift(a);
  for (const dir of chain) {
    const s = await stat(dir).catch(() => undefined);
    if (s && (s.mode & 0o001) === 0) return `${dir} has mode ${(s.mode & 0o7777).toString(8).padStart(4, "0")}`;
  }
  return undefined;
}

/**
 * Why the agent's user cannot start `command args` (undefined when it can): the command must be
 * executable by it, and the program an interpreter runs (`node agent.mjs`) readable. A folder the
 * runner made with mode 0700 (mkdtemp) is the usual cause, and the message names it: run as the
 * runner's user, the same session would have worked, so the job says why instead of failing
 * obscurely inside the agent.
 */
export async function unreachableCommand(
  u: AgentUser,
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<string | undefined> {
  const resolved = await resolveCommand(command, env.PATH);
  if (!resolved) return undefined;
  const checks: Array<["-r" | "-x", string]> = [["-x", resolved]];
  // A script (`#!`) is read by its interpreter, as the agent's user.
  if ((await firstBytes(resolved, 2)) === "#!") checks.push(["-r", resolved]);
  if (INTERPRETERS.has(path.basename(resolved))) {
    const program = args.find((a) => !a.startsWith("-"));
    if (
      program &&
      (await stat(path.resolve(program)).then(
        (s) => s.isFile(),
        () => false,
      ))
    )
      checks.push(["-r", path.resolve(program)]);
  }
  for (const [flag, file] of checks) {
    if (await agentPasses(u, flag, file)) continue;
    const folder = await closedFolder(file);
    return (
      `the agent's command ${file} cannot be ${flag === "-x" ? "run" : "read"} by the agent's own OS user ${u.user} ` +
      `(agent.isolation runs every agent session as that user)${folder ? `: ${folder}` : ""}. ` +
      "Install the agent where every user can read it (chmod o+rx on its folders), or set agent.isolation: none in .github/forge.yml."
    );
  }
  return undefined;
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
      if (!s || s.uid !== u.owner.uid || (s.mode & 0o001) !== 0) continue;
      const changed = await chmod(a, s.mode | 0o001).then(
        () => true,
        () => false,
      );
      if (changed && !u.changedModes.has(a)) u.changedModes.set(a, s.mode & 0o7777);
    }
  }
  if (unique.length) await privileged(u.via, "chown", ["-R", `${u.uid}:${u.gid}`, "--", ...unique]);
}

/** Takes the directories back after the session: the runner's git and files work on them again. */
export async function takeBack(u: AgentUser, dirs: readonly string[]): Promise<void> {
  const unique = [...new Set(dirs.map((d) => path.resolve(d)))];
  if (unique.length) await privileged(u.via, "chown", ["-R", `${u.owner.uid}:${u.owner.gid}`, "--", ...unique]);
}

/** Processes of `uid` still alive (zombies are dead already: only their parent's reaping is left). */
export async function agentProcesses(uid: number): Promise<number[]> {
  const out: number[] = [];
  for (const name of await readdir("/proc").catch(() => [] as string[])) {
    if (!/^\d+$/.test(name)) continue;
    const status = await readFile(`/proc/${name}/status`, "utf8").catch(() => "");
    const ids = /^Uid:\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)/m.exec(status);
    const state = /^State:\s+(\S)/m.exec(status)?.[1];
    if (ids && ids.slice(1).map(Number).includes(uid) && state !== "Z" && state !== "X") out.push(Number(name));
  }
  return out;
}

/**
 * Kills every process of the agent's user, not only a session's process group: a `setsid` child or
 * a daemon leaves the group, never the uid. `kill -KILL -1` sent *as that user* reaches every process
 * it owns at once (a forking process cannot outrun it); repeated until none is left. The shell
 * checks its own uid first: `kill -1` from any other user would reach that user's processes. Returns
 * the processes still alive after the tries (none, unless one is stuck in the kernel).
 */
export async function killAgentProcesses(u: AgentUser, tries = 20): Promise<number[]> {
  if (!(u.uid > 0) || u.uid === u.owner.uid) throw new IsolationError(`refusing to kill every process of uid ${u.uid}`);
  // Its environment is a bare PATH: the runner's own (the token, the key) would be readable by the
  // agent's processes in /proc while the kill runs as their user.
  const env = { PATH: SYSTEM_PATH };
  const kill = asAgentUser(u, "sh", ["-c", `[ "$(id -u)" = "${u.uid}" ] || exit 97; kill -s KILL -- -1 2>/dev/null; exit 0`], env);
  let left = await agentProcesses(u.uid);
  for (let i = 0; left.length > 0 && i < tries; i++) {
    await execP(kill.command, kill.args, { env }).catch(() => undefined);
    await pause(10 * (i + 1));
    left = await agentProcesses(u.uid);
  }
  return left;
}

/**
 * The end of the job's agent user: every process of it killed, the folder modes `handOver`
 * changed put back, files it left in the machine's shared temporary folders removed (a later user
 * may get the same uid), and the user deleted. Best effort, step by step; returns what failed.
 */
export async function releaseAgentUser(u: AgentUser): Promise<string[]> {
  const problems: string[] = [];
  const left = await killAgentProcesses(u).catch((err: unknown) => [String(err)]);
  if (left.length) problems.push(`processes of ${u.user} still alive: ${left.join(", ")}`);
  for (const [dir, mode] of u.changedModes) {
    await chmod(dir, mode).catch((err: unknown) => problems.push(`mode of ${dir} not restored: ${String(err)}`));
  }
  u.changedModes.clear();
  for (const dir of ["/tmp", "/var/tmp", "/dev/shm"]) {
    await privileged(u.via, "find", [dir, "-xdev", "-mindepth", "1", "-uid", String(u.uid), "-delete"]).catch(() => undefined);
  }
  // Again after a moment when userdel fails (jobs on one machine contend for the lock on /etc/passwd).
  for (let i = 0; AGENT_USER_NAME.test(u.user); i++) {
    const err = await privileged(u.via, "userdel", [u.user]).then(
      () => undefined,
      (e: unknown) => e,
    );
    if (err === undefined) break;
    if (i < 5) {
      await pause(50 + Math.random() * 200 * (i + 1));
      continue;
    }
    problems.push(`${u.user} not removed: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`);
    break;
  }
  return problems;
}
