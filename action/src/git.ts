/**
 * Real `git` for the job: fetch, commit and push with the job token — without ever running the
 * agent's git configuration with it.
 *
 * The work tree and its `.git` are the agent's: it can set hooks, `core.fsmonitor`, filter drivers,
 * `core.hooksPath`, re-point `origin` (`url`, `pushurl`, `url.<x>.insteadOf`) or add proxies. So:
 * - **local commands** (add, commit, checkout, log…) run in the work tree with no credential in their
 *   environment (an allowlist, not the job's), hooks, fsmonitor, the untracked cache and signing
 *   off, and no global or system configuration;
 * - **network commands** (fetch, push, ls-remote) never run in the agent's repository: they run in a
 *   private bare repository of the runner's (`netDir`, clean configuration, the work repository's
 *   objects as an alternate and its objects an alternate of the work repository), against the URL
 *   the runner built from `GITHUB_SERVER_URL`/`GITHUB_REPOSITORY` — never `origin` — and the token
 *   reaches them through a one-shot credential helper that answers only for that URL's host, in the
 *   environment of that one git process. Fetched refs and the shallow boundary are copied into the
 *   work repository afterwards.
 */
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { appendFile, mkdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { GitError } from "../../src/core/git-error.js";

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
  /** The runner's private repository for network commands (default: a new temp folder). */
  netDir?: string;
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
  readonly #netDir: string;
  #netReady: Promise<string> | undefined;

  constructor(options: GitOptions) {
    this.dir = options.dir;
    this.remote = options.remote;
    this.#token = options.token;
    this.#identity = options.identity;
    this.#netDir = options.netDir ?? path.join(mkdtempSync(path.join(tmpdir(), "forge-git-")), "net.git");
  }

  /** Values that must never appear in logs: the token and its header. */
  secrets(): string[] {
    return this.#token ? [this.#token, basicAuthHeader(this.#token).slice("AUTHORIZATION: basic ".length)] : [];
  }

  #env(network: boolean): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => KEEP_ENV.test(k)));
    Object.assign(env, {
      GIT_TERMINAL_PROMPT: "0",
      GIT_ASKPASS: "true",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      LC_ALL: "C",
      GIT_AUTHOR_NAME: this.#identity.name,
      GIT_AUTHOR_EMAIL: this.#identity.email,
      GIT_COMMITTER_NAME: this.#identity.name,
      GIT_COMMITTER_EMAIL: this.#identity.email,
    });
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

  #spawn(args: string[], opts: { allowFail?: boolean; input?: string; cwd: string; network: boolean }): Promise<GitResult> {
    return new Promise((resolve, reject) => {
      const child = spawn("git", args, { cwd: opts.cwd, env: this.#env(opts.network), stdio: ["pipe", "pipe", "pipe"] });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout.on("data", (d: Buffer) => out.push(d));
      child.stderr.on("data", (d: Buffer) => err.push(d));
      child.on("error", reject);
      child.on("close", (code) => {
        const r = { stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8"), code: code ?? -1 };
        if (r.code !== 0 && !opts.allowFail) {
          let stderr = r.stderr.trim();
          for (const s of this.secrets()) stderr = stderr.split(s).join("***");
          reject(new GitError(`git ${args[0]} failed (exit ${r.code}): ${stderr}`, args, code, stderr));
        } else resolve(r);
      });
      child.stdin.on("error", () => undefined);
      child.stdin.end(opts.input ?? "");
    });
  }

  /**
   * Runs git. Local commands run in the work tree; `fetch`, `push` and `ls-remote` run in the
   * runner's private repository against `remote` (the name `origin` in their arguments stands for it).
   */
  run(args: string[], opts: { allowFail?: boolean; input?: string } = {}): Promise<GitResult> {
    if (NETWORK.has(args[0]!)) return this.#network(args, opts);
    return this.#spawn(args, { ...opts, cwd: this.dir, network: false });
  }

  /** The work repository's git dir (absolute). */
  async #workGitDir(): Promise<string> {
    return (await this.#spawn(["rev-parse", "--absolute-git-dir"], { cwd: this.dir, network: false })).stdout.trim();
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
    await ensureLine(path.join(work, "objects/info/alternates"), path.join(net, "objects"));
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
        if (m)
          mapped[i] =
            `${m[1]}${(await this.#spawn(["rev-parse", "--verify", `${m[2]}^{commit}`], { cwd: this.dir, network: false })).stdout.trim()}:${m[3]}`;
      }
    }
    // The private repository takes the work repository's shallow boundary, and gives it back after a fetch.
    const workShallow = path.join(work, "shallow");
    const netShallow = path.join(net, "shallow");
    const shallow = await readFile(workShallow, "utf8").catch(() => "");
    await writeFile(netShallow, shallow);
    const r = await this.#spawn([command, ...mapped], { ...opts, cwd: net, network: true });
    if (command === "fetch") {
      const after = await readFile(netShallow, "utf8").catch(() => "");
      if (after !== shallow) await writeFile(workShallow, after);
      for (const spec of mapped) {
        const m = /^\+?[^:]+:(refs\/.+)$/.exec(spec);
        if (!m) continue;
        const sha = await this.#spawn(["rev-parse", "--verify", "--quiet", m[1]!], { cwd: net, network: false, allowFail: true });
        if (sha.code === 0) await this.#spawn(["update-ref", m[1]!, sha.stdout.trim()], { cwd: this.dir, network: false });
      }
    }
    return r;
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
      let stderr = r.stderr.trim();
      for (const s of this.secrets()) stderr = stderr.split(s).join("***");
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

/** Adds `line` to a list file (an alternates file) unless it is there. */
async function ensureLine(file: string, line: string): Promise<void> {
  const text = await readFile(file, "utf8").catch(() => "");
  if (text.split("\n").includes(line)) return;
  await mkdir(path.dirname(file), { recursive: true });
  await appendFile(file, `${text && !text.endsWith("\n") ? "\n" : ""}${line}\n`);
}

/** A commit message with a trailer block (git interpret-trailers reads the last paragraph). */
export function messageWithTrailers(subject: string, body: string | undefined, trailers: Array<[string, string]>): string {
  const parts = [subject.replace(/\s*\n\s*/g, " ").trim()];
  if (body && body.trim()) parts.push(body.trim());
  parts.push(trailers.map(([k, v]) => `${k}: ${v.replace(/\s*\n\s*/g, " ")}`).join("\n"));
  return `${parts.join("\n\n")}\n`;
}
