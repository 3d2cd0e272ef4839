/**
 * Real `git` for the job: fetch, commit and push with the job token.
 *
 * The token is handed to git the way actions/checkout does it — an `AUTHORIZATION: basic
 * base64(x-access-token:<token>)` http.extraheader (GitHub accepts the token as the password of
 * HTTP basic auth) — but through GIT_CONFIG_COUNT/KEY/VALUE environment variables of each git
 * process rather than `-c` arguments or the repository's config: arguments show in `ps` to the agent
 * running beside us, and a persisted config would hand the token to the agent, which must never see it.
 */
import { spawn } from "node:child_process";
import { GitError } from "../../src/core/git-error.js";

export interface GitResult {
  stdout: string;
  stderr: string;
  code: number;
}

export interface GitOptions {
  /** Working tree. */
  dir: string;
  /** Token for fetch and push over HTTP(S); none for file:// remotes in tests. */
  token?: string;
  /** Author and committer of the runner's commits. */
  identity: { name: string; email: string };
}

export function basicAuthHeader(token: string): string {
  return `AUTHORIZATION: basic ${Buffer.from(`x-access-token:${token}`, "utf8").toString("base64")}`;
}

export class Git {
  readonly dir: string;
  readonly #token: string | undefined;
  readonly #identity: { name: string; email: string };

  constructor(options: GitOptions) {
    this.dir = options.dir;
    this.#token = options.token;
    this.#identity = options.identity;
  }

  /** Values that must never appear in logs: the token and its header. */
  secrets(): string[] {
    return this.#token ? [this.#token, basicAuthHeader(this.#token).slice("AUTHORIZATION: basic ".length)] : [];
  }

  #env(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      GIT_TERMINAL_PROMPT: "0",
      LC_ALL: "C",
      GIT_AUTHOR_NAME: this.#identity.name,
      GIT_AUTHOR_EMAIL: this.#identity.email,
      GIT_COMMITTER_NAME: this.#identity.name,
      GIT_COMMITTER_EMAIL: this.#identity.email,
    };
    if (this.#token) {
      env.GIT_CONFIG_COUNT = "1";
      env.GIT_CONFIG_KEY_0 = "http.extraheader";
      env.GIT_CONFIG_VALUE_0 = basicAuthHeader(this.#token);
    }
    return env;
  }

  run(args: string[], opts: { allowFail?: boolean; input?: string } = {}): Promise<GitResult> {
    return new Promise((resolve, reject) => {
      const child = spawn("git", args, { cwd: this.dir, env: this.#env(), stdio: ["pipe", "pipe", "pipe"] });
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

/** A commit message with a trailer block (git interpret-trailers reads the last paragraph). */
export function messageWithTrailers(subject: string, body: string | undefined, trailers: Array<[string, string]>): string {
  const parts = [subject.replace(/\s*\n\s*/g, " ").trim()];
  if (body && body.trim()) parts.push(body.trim());
  parts.push(trailers.map(([k, v]) => `${k}: ${v.replace(/\s*\n\s*/g, " ")}`).join("\n"));
  return `${parts.join("\n\n")}\n`;
}
