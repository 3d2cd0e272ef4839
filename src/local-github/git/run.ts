// How the local GitHub runs git on its bare repositories: the environment, the processes counted by
// subcommand, a repository's creation, and the memo of answers computed only from object ids.
import { execFile } from "node:child_process";
import { tmpdir } from "node:os";
import { GitError } from "../../core/git-error.js";
import { spawnGit } from "../spawner.js";

const baseEnv = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_TERMINAL_PROMPT: "0",
  LC_ALL: "C",
  HOME: tmpdir(),
};

export const SHA = /^[0-9a-f]{40}$/;
export const cache = new Map<string, Promise<unknown>>();

/**
 * Git objects are immutable, so any answer computed only from full object ids can be kept. This
 * spares the many git processes pull request payloads and webhooks would otherwise spawn.
 */
export function memo<T>(gitDir: string, op: string, ids: string[], extra: string, fn: () => Promise<T>): Promise<T> {
  if (!ids.every((id) => SHA.test(id))) return fn();
  const key = `${gitDir}\0${op}\0${ids.join(",")}\0${extra}`;
  const hit = cache.get(key) as Promise<T> | undefined;
  if (hit) return hit;
  if (cache.size > 20_000) cache.clear();
  const p = fn();
  cache.set(key, p);
  p.catch(() => cache.delete(key));
  return p;
}

/** git processes spawned so far, by subcommand (for benchmarks) */
export const gitProcesses = new Map<string, number>();

export async function runGit(
  gitDir: string,
  args: string[],
  opts: { input?: string | Buffer; env?: Record<string, string>; allowFail?: boolean; encoding?: "buffer" } = {},
): Promise<{ stdout: Buffer; stderr: string; code: number }> {
  gitProcesses.set(args[0]!, (gitProcesses.get(args[0]!) ?? 0) + 1);
  const r = await spawnGit(baseEnv, args, { GIT_DIR: gitDir, ...opts.env }, opts.input);
  if (r.code !== 0 && !opts.allowFail) throw new GitError(`git ${args.join(" ")} failed: ${r.stderr.trim()}`, args, r.code, r.stderr);
  return r;
}

export async function git(gitDir: string, args: string[], input?: string | Buffer, env?: Record<string, string>): Promise<string> {
  const r = await runGit(gitDir, args, { input, env });
  return r.stdout.toString("utf8");
}

export function initBare(dir: string, defaultBranch: string): Promise<void> {
  return new Promise((resolve, reject) =>
    execFile("git", ["init", "--bare", "--quiet", `--initial-branch=${defaultBranch}`, dir], { env: baseEnv }, (e) => {
      if (e) return reject(e);
      // Pushes over smart HTTP need receive-pack enabled; the simulator authenticates itself.
      runGit(dir, ["config", "http.receivepack", "true"]).then(() => resolve(), reject);
    }),
  );
}
