/**
 * Real `git` for the job: fetch, commit and push with the job token — without ever running the
 * agent's git configuration with it.
 *
 * The work tree and its `.git` are the agent's: it can set hooks, `core.fsmonitor`, filter drivers,
 * `core.hooksPath`, re-point `origin` (`url`, `pushurl`, `url.<x>.insteadOf`) or add proxies. So:
 * - **local commands** (add, commit, checkout, log…) run in the work tree with no credential in their
 *   environment (an allowlist, not the job's), hooks, fsmonitor, the untracked cache and signing
 *   off, and no global or system configuration — and before each one the repository's control
 *   files (`.git/config`, `config.worktree`, `info/attributes`, alternates…) are made the runner's
 *   again, from the snapshot it took before any agent ran (git-guard.ts): no filter, textconv or
 *   merge driver, pager, editor or include the agent configured ever runs;
 * - **network commands** (fetch, push, ls-remote) never run in the agent's repository: they run in a
 *   private bare repository of the runner's (`netDir`, clean configuration, the work repository's
 *   objects as an alternate and its objects an alternate of the work repository), against the URL
 *   the runner built from `GITHUB_SERVER_URL`/`GITHUB_REPOSITORY` — never `origin` — and the token
 *   reaches them through a one-shot credential helper that answers only for that URL's host, in the
 *   environment of that one git process. Fetched refs and the shallow boundary are copied into the
 *   work repository afterwards.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { readAgentFileSync } from "../../src/agent/agent-files.js";
import { realClock, type Clock } from "../../src/core/clock.js";
import { GitError, gitFailureKind } from "../../src/core/git-error.js";
import { delayMs, GIT_REMOTE_BACKOFF, type BackoffPolicy } from "../../src/core/retry.js";
import { guardRepository, replaceFile, snapshotRepository, type RepoSnapshot } from "./git-guard.js";

export interface GitResult {
  stdout: string;
  stderr: string;
  code: number;
}

export interface GitOptions {
  /** Working tree. */
  dir: string;
  /** Where fetches and pushes go (the runner builds it from GITHUB_SERVER_URL and GITHUB_REPOSITORY); `origin` is never read. */
  remote: string;
  /** Token for fetch and push over HTTP(S); none for file:// remotes in tests. */
  token?: string;
  /** Author and committer of the runner's commits. */
  identity: { name: string; email: string };
  /** The runner's private repository for network commands (default: `net.git` in the private folder). */
  netDir?: string;
  /**
   * Where the runner's private folder (its snapshot of the work repository's configuration, and the
   * default `netDir`) is made, on first use (default: the OS temp folder). `close()` removes it.
   */
  tempDir?: string;
  /** How a network command that failed for a reason that can pass is tried again (default: `GIT_REMOTE_BACKOFF`). */
  backoff?: BackoffPolicy;
  /** What the waits between tries sleep on (default: real time); tests move it. */
  clock?: Pick<Clock, "sleep">;
  /** The jitter's random number in [0, 1) (default: `Math.random`). */
  random?: () => number;
  /** Told before each wait: what failed (masked) and when the next try comes. */
  onRetry?: (retry: GitRetry) => void;
}

/** One network command that failed for a reason that can pass, about to be tried again. */
export interface GitRetry {
  /** `fetch`, `push` or `ls-remote`. */
  command: string;
  /** The try that failed (1 for the first). */
  attempt: number;
  /** Tries in all. */
  attempts: number;
  /** The wait before the next try. */
  delayMs: number;
  /** git's message, the token masked. */
  error: string;
}

export function basicAuthHeader(token: string): string {
  return `AUTHORIZATION: basic ${Buffer.from(`x-access-token:${token}`, "utf8").toString("base64")}`;
}

/** Host variables a git process of the runner keeps (nothing of the job's credentials). */
const KEEP_ENV =
  /^(PATH|HOME|USER|LANG|TZ|TMPDIR|TEMP|TMP|SSL_CERT_FILE|SSL_CERT_DIR|NODE_EXTRA_CA_CERTS|HTTPS?_PROXY|NO_PROXY|https?_proxy|no_proxy|SYSTEMROOT)$/;

/** Configuration every runner git command runs with, over whatever the repository says. */
const HARDENED: Array<[string, string]> = [
  ["core.hooksPath", "/dev/null"],
  ["core.fsmonitor", "false"],
  ["core.untrackedCache", "false"],
  ["core.askPass", ""],
  ["commit.gpgSign", "false"],
  ["tag.gpgSign", "false"],
  ["protocol.ext.allow", "never"],
  ["protocol.file.allow", "always"],
  // Nothing of the agent's home or of a nested repository it made: attributes, reflogs (appended
  // through links), submodules' own git processes, tracking config written into .git/config.
  ["core.attributesFile", "/dev/null"],
  ["core.logAllRefUpdates", "false"],
  ["submodule.recurse", "false"],
  ["diff.ignoreSubmodules", "dirty"],
  ["branch.autoSetupMerge", "false"],
];

/**
 * The credential helper: answers `get` with the token from its own environment, and only for the
 * remote's protocol and host — a rewritten URL (`insteadOf`) or another host gets nothing.
 */
const CREDENTIAL_HELPER =
  '!f() { test "$1" = get || exit 0; p=; h=; while IFS= read -r l && [ -n "$l" ]; do case "$l" in protocol=*) p=${l#protocol=};; host=*) h=${l#host=};; esac; done; [ "$p://$h" = "$FORGE_GIT_ORIGIN" ] || exit 0; echo username=x-access-token; echo "password=$FORGE_GIT_TOKEN"; }; f';

const NETWORK = new Set(["fetch", "push", "ls-remote"]);

export class Git {
  readonly dir: string;
  readonly remote: string;
  readonly #token: string | undefined;
  readonly #identity: { name: string; email: string };
  readonly #netDirOption: string | undefined;
  readonly #tempDir: string;
  /** The runner's own folder (the snapshot of the work repository's configuration), made on first use. */
  #privateDirPath: string | undefined;
  #netReady: Promise<string> | undefined;
  #repo: Promise<RepoSnapshot | undefined> | undefined;
  readonly #backoff: BackoffPolicy;
  readonly #clock: Pick<Clock, "sleep">;
  readonly #random: () => number;
  readonly #onRetry: ((retry: GitRetry) => void) | undefined;
  /** Every network command tried again, in order (the job reports them). */
  readonly retries: GitRetry[] = [];

  constructor(options: GitOptions) {
    this.dir = options.dir;
    this.remote = options.remote;
    this.#token = options.token;
    this.#identity = options.identity;
    this.#backoff = options.backoff ?? GIT_REMOTE_BACKOFF;
    this.#clock = options.clock ?? realClock;
    this.#random = options.random ?? Math.random;
    this.#onRetry = options.onRetry;
    this.#netDirOption = options.netDir;
    this.#tempDir = options.tempDir ?? tmpdir();
  }

  get #privateDir(): string {
    this.#privateDirPath ??= mkdtempSync(path.join(this.#tempDir, "forge-git-private-"));
    return this.#privateDirPath;
  }

  get #netDir(): string {
    return this.#netDirOption ?? path.join(this.#privateDir, "net.git");
  }

  /**
   * Removes the runner's private folder, with the default `netDir` in it (a `netDir` the caller named
   * is the caller's: the work repository borrows fetched objects from it). For the end of the job, or
   * of a test: the work repository no longer reaches the objects fetched into a removed `netDir`. A
   * command run afterwards starts again from a new snapshot.
   */
  close(): void {
    const dir = this.#privateDirPath;
    this.#privateDirPath = undefined;
    this.#repo = undefined;
    this.#netReady = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
  }

  /** Values that must never appear in logs: the token and its header. */
  secrets(): string[] {
    return this.#token ? [this.#token, basicAuthHeader(this.#token).slice("AUTHORIZATION: basic ".length)] : [];
  }

  #env(network: boolean, repo?: RepoSnapshot): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => KEEP_ENV.test(k)));
    Object.assign(env, {
      GIT_TERMINAL_PROMPT: "0",
      GIT_ASKPASS: "true",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_NO_REPLACE_OBJECTS: "1",
      LC_ALL: "C",
      GIT_AUTHOR_NAME: this.#identity.name,
      GIT_AUTHOR_EMAIL: this.#identity.email,
      GIT_COMMITTER_NAME: this.#identity.name,
      GIT_COMMITTER_EMAIL: this.#identity.email,
    });
    if (repo) Object.assign(env, { GIT_DIR: repo.gitDir, GIT_WORK_TREE: repo.workTree });
    const config: Array<[string, string]> = [...HARDENED];
    if (network && this.#token) {
      config.push(["credential.helper", ""], ["credential.helper", CREDENTIAL_HELPER]);
      const u = new URL(this.remote);
      env.FORGE_GIT_ORIGIN = `${u.protocol.replace(/:$/, "")}://${u.host}`;
      env.FORGE_GIT_TOKEN = this.#token;
    }
    env.GIT_CONFIG_COUNT = String(config.length);
    config.forEach(([k, v], i) => {
      env[`GIT_CONFIG_KEY_${i}`] = k;
      env[`GIT_CONFIG_VALUE_${i}`] = v;
    });
    return env;
  }

  #spawn(
    args: string[],
    opts: { allowFail?: boolean; input?: string; cwd: string; network: boolean; repo?: RepoSnapshot },
  ): Promise<GitResult> {
    return new Promise((resolve, reject) => {
      const child = spawn("git", args, { cwd: opts.cwd, env: this.#env(opts.network, opts.repo), stdio: ["pipe", "pipe", "pipe"] });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout.on("data", (d: Buffer) => out.push(d));
      child.stderr.on("data", (d: Buffer) => err.push(d));
      child.on("error", reject);
      child.on("close", (code) => {
        const r = { stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8"), code: code ?? -1 };
        if (r.code !== 0 && !opts.allowFail) reject(this.#failure(args, r, code));
        else resolve(r);
      });
      child.stdin.on("error", () => undefined);
      child.stdin.end(opts.input ?? "");
    });
  }

  /** git's stderr with the token masked. */
  #masked(stderr: string): string {
    let out = stderr.trim();
    for (const s of this.secrets()) out = out.split(s).join("***");
    return out;
  }

  #failure(args: string[], r: GitResult, code: number | null = r.code): GitError {
    const stderr = this.#masked(r.stderr);
    return new GitError(`git ${args[0]} failed (exit ${r.code}): ${stderr}`, args, code, stderr);
  }

  /**
   * Runs git. Local commands run in the work tree; `fetch`, `push` and `ls-remote` run in the
   * runner's private repository against `remote` (the name `origin` in their arguments stands for it).
   */
  async run(args: string[], opts: { allowFail?: boolean; input?: string } = {}): Promise<GitResult> {
    if (NETWORK.has(args[0]!)) return this.#network(args, opts);
    const repo = await this.#guarded();
    const r = await this.#spawn(args, { ...opts, cwd: this.dir, network: false, ...(repo ? { repo } : {}) });
    if (!repo) this.#repo = undefined;
    // The runner's own changes to the configuration (a repository made, `origin` added) are taken
    // into its snapshot at once, while no agent runs.
    if (args[0] === "init" || args[0] === "remote") {
      this.#repo = undefined;
      await this.#guarded();
    }
    return r;
  }

  /** `run` for the agent layer's own merges and sub-branches (src/agent/branches.ts `GitRun`), in this work tree only. */
  forStages(): (cwd: string, args: string[]) => Promise<GitResult> {
    return async (cwd, args) => {
      if (path.resolve(cwd) !== path.resolve(this.dir))
        throw new GitError(`the runner's git works in ${this.dir}, not ${cwd}`, args, null, "");
      return this.run(args, { allowFail: true });
    };
  }

  /**
   * The work repository with its control files the runner's (git-guard.ts): the snapshot is taken at
   * the first command — before any agent ran — and written back before every command.
   */
  async #guarded(): Promise<RepoSnapshot | undefined> {
    this.#repo ??= snapshotRepository(
      (args, cwd) => this.#spawn(args, { cwd, network: false, allowFail: true }),
      this.dir,
      path.join(this.#privateDir, "repo"),
    );
    const repo = await this.#repo;
    if (repo) await guardRepository(repo);
    return repo;
  }

  /** The work repository's git dir (absolute). */
  async #workGitDir(): Promise<string> {
    const repo = await this.#guarded();
    if (!repo) throw new GitError(`${this.dir} is not a git repository`, ["rev-parse"], 128, "");
    return repo.gitDir;
  }

  /**
   * The private repository (created once), sharing objects with the work repository both ways —
   * checked on every use: the work tree may have been checked out again since.
   */
  async #net(): Promise<string> {
    const work = await this.#workGitDir();
    const net = this.#netDir;
    this.#netReady ??= (async () => {
      await mkdir(path.dirname(net), { recursive: true });
      await this.#spawn(["init", "--quiet", "--bare", net], { cwd: path.dirname(net), network: false });
      return net;
    })();
    await this.#netReady;
    await writeFile(path.join(net, "objects/info/alternates"), `${path.join(work, "objects")}\n`);
    const repo = (await this.#repo)!;
    if (!repo.alternates.includes(path.join(net, "objects"))) {
      repo.alternates.push(path.join(net, "objects"));
      await guardRepository(repo);
    }
    return net;
  }

  async #network(args: string[], opts: { allowFail?: boolean; input?: string }): Promise<GitResult> {
    const net = await this.#net();
    const work = await this.#workGitDir();
    const [command, ...rest] = args as [string, ...string[]];
    const mapped = rest.map((a) => (a === "origin" ? this.remote : a));
    if (command === "push") {
      // The source of each refspec is resolved in the work repository (`HEAD` there is not the private one's).
      for (let i = 0; i < mapped.length; i++) {
        const m = /^(\+?)([^:]+):(refs\/.+)$/.exec(mapped[i]!);
        if (m) mapped[i] = `${m[1]}${(await this.run(["rev-parse", "--verify", `${m[2]}^{commit}`])).stdout.trim()}:${m[3]}`;
      }
    }
    // The private repository takes the work repository's shallow boundary, and gives it back after a fetch.
    // The work repository's file is the agent's: read without following a link, replaced, never written through.
    const workShallow = path.join(work, "shallow");
    const netShallow = path.join(net, "shallow");
    const shallow = readShallow(work, workShallow);
    const r = await this.#tried([command, ...mapped], opts, async () => {
      await writeFile(netShallow, shallow);
      return this.#spawn([command, ...mapped], { ...opts, allowFail: true, cwd: net, network: true });
    });
    if (command === "fetch") {
      const after = readShallow(net, netShallow);
      if (after !== shallow) await replaceFile(workShallow, after);
      for (const spec of mapped) {
        const m = /^\+?[^:]+:(refs\/.+)$/.exec(spec);
        if (!m) continue;
        const sha = await this.#spawn(["rev-parse", "--verify", "--quiet", m[1]!], { cwd: net, network: false, allowFail: true });
        if (sha.code === 0) await this.run(["update-ref", m[1]!, sha.stdout.trim()]);
      }
    }
    return r;
  }

  /**
   * A network command tried until it succeeds, fails for a reason that cannot pass, or has had its
   * tries (docs/runner.md#the-runners-git): each try is a new git process with the same
   * environment — the token reaches it as it reached the first, and nothing else does — and the
   * waits between tries follow the backoff, with jitter, on the job's clock.
   */
  async #tried(args: string[], opts: { allowFail?: boolean }, once: () => Promise<GitResult>): Promise<GitResult> {
    const { attempts } = this.#backoff;
    for (let attempt = 1; ; attempt++) {
      const r = await once();
      if (r.code === 0) return r;
      if (attempt < attempts && gitFailureKind(r.stderr) === "transient") {
        const retry: GitRetry = {
          command: args[0]!,
          attempt,
          attempts,
          delayMs: delayMs(this.#backoff, attempt - 1, this.#random()),
          error: this.#masked(r.stderr),
        };
        this.retries.push(retry);
        this.#onRetry?.(retry);
        await this.#clock.sleep(retry.delayMs);
        continue;
      }
      if (opts.allowFail) return r;
      throw this.#failure(args, r);
    }
  }

  async out(args: string[]): Promise<string> {
    return (await this.run(args)).stdout.trim();
  }

  head(): Promise<string> {
    return this.out(["rev-parse", "HEAD"]);
  }

  /** Fetches one branch (shallow) and returns its tip, or undefined when the remote has no such branch. */
  async fetchBranch(branch: string, depth = 1): Promise<string | undefined> {
    const r = await this.run(
      ["fetch", "--no-tags", "--quiet", `--depth=${depth}`, "origin", `+refs/heads/${branch}:refs/remotes/origin/${branch}`],
      { allowFail: true },
    );
    if (r.code !== 0) {
      if (/couldn't find remote ref|not our ref|no such ref/i.test(r.stderr)) return undefined;
      const stderr = this.#masked(r.stderr);
      throw new GitError(`git fetch of ${branch} failed (exit ${r.code}): ${stderr}`, ["fetch"], r.code, stderr);
    }
    return this.out(["rev-parse", `refs/remotes/origin/${branch}`]);
  }

  /**
   * Fetches branches with the history a merge needs (a shallow checkout is deepened to full history:
   * a merge base below the shallow boundary would make git refuse the merge). Returns their
   * remote-tracking refs.
   */
  async fetchForMerge(branches: string[], current?: string): Promise<string[]> {
    const shallow = (await this.out(["rev-parse", "--is-shallow-repository"])) === "true";
    const refs = [...new Set([...(current ? [current] : []), ...branches])].map((b) => `+refs/heads/${b}:refs/remotes/origin/${b}`);
    await this.run(["fetch", "--no-tags", "--quiet", ...(shallow ? ["--unshallow"] : []), "origin", ...refs]);
    return branches.map((b) => `refs/remotes/origin/${b}`);
  }

  /** Paths changed between a commit and the index (staged), as `git diff --name-status`. */
  async stagedChanges(base: string): Promise<Array<{ status: string; path: string }>> {
    const raw = (await this.run(["diff", "--cached", "--name-status", "--no-renames", "-z", base])).stdout;
    const parts = raw.split("\0").filter((p) => p !== "");
    const out: Array<{ status: string; path: string }> = [];
    for (let i = 0; i + 1 < parts.length; i += 2) out.push({ status: parts[i]!, path: parts[i + 1]! });
    return out;
  }

  async changedFiles(from: string, to: string): Promise<string[]> {
    const raw = (await this.run(["diff", "--name-only", "--no-renames", "-z", from, to])).stdout;
    return raw.split("\0").filter((p) => p !== "");
  }

  /** Commits what is staged; the message's last paragraph holds the trailers. Returns the new sha. */
  async commit(message: string, opts: { allowEmpty?: boolean } = {}): Promise<string> {
    await this.run(["commit", "--quiet", "--no-verify", ...(opts.allowEmpty ? ["--allow-empty"] : []), "-F", "-"], { input: message });
    return this.head();
  }

  /**
   * Pushes HEAD to the branch without force: a push that would drop someone else's commits is
   * refused by the server ("non-fast-forward"), which is what we want.
   */
  async push(branch: string, commit = "HEAD"): Promise<void> {
    await this.run(["push", "--quiet", "--no-verify", "origin", `${commit}:refs/heads/${branch}`]);
  }
}

/** A repository's `shallow` file ("" when there is none, or when it is not a plain file). */
function readShallow(gitDir: string, file: string): string {
  try {
    return readAgentFileSync(gitDir, file)?.toString("utf8") ?? "";
  } catch {
    return "";
  }
}

/** A commit message with a trailer block (git interpret-trailers reads the last paragraph). */
export function messageWithTrailers(subject: string, body: string | undefined, trailers: Array<[string, string]>): string {
  const parts = [subject.replace(/\s*\n\s*/g, " ").trim()];
  if (body && body.trim()) parts.push(body.trim());
  parts.push(trailers.map(([k, v]) => `${k}: ${v.replace(/\s*\n\s*/g, " ")}`).join("\n"));
  return `${parts.join("\n\n")}\n`;
}
