// What the conformance tests of the repository's rules share: a refused call's status and message,
// and git run as a person with a token (a clone, commits, a push whose refusal is read).
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";

/** The message of a call GitHub refuses with `expected`; fails the test when it went through or answered otherwise. */
export async function refusedWith(p: Promise<unknown>, expected: number): Promise<string> {
  try {
    await p;
  } catch (e) {
    const err = e as { status: number; response?: { data?: { message?: string } } };
    expect(err.status).toBe(expected);
    return err.response?.data?.message ?? "";
  }
  throw new Error("the call went through");
}

/** git in `cwd` with the token as actions/checkout sends it; rejects with git's stderr. */
export function gitIn(cwd: string, args: string[], token?: string, env: Record<string, string> = {}): Promise<string> {
  const auth = token ? ["-c", `http.extraHeader=Authorization: Basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`] : [];
  const ids = { GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@x.test", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@x.test" };
  return new Promise((resolve, reject) =>
    execFile("git", [...auth, ...args], { cwd, env: { ...process.env, ...ids, ...env }, maxBuffer: 64 << 20 }, (err, stdout, stderr) =>
      err ? reject(Object.assign(err, { stderr })) : resolve(stdout),
    ),
  );
}

/** A clone of `url` in a fresh folder, its work tree and a way to push and read a refusal; `close` removes it. */
export async function cloneOf(
  url: string,
  token: string,
): Promise<{
  dir: string;
  git: (args: string[], env?: Record<string, string>) => Promise<string>;
  push: (spec: string) => Promise<string>;
  close: () => void;
}> {
  const work = mkdtempSync(join(tmpdir(), "forge-rules-"));
  await gitIn(work, ["clone", "-q", url, "w"], token);
  const dir = join(work, "w");
  return {
    dir,
    git: (args, env) => gitIn(dir, args, token, env),
    // "" when the push went through, git's stderr (GitHub's `remote:` lines) when it was refused.
    push: (spec) =>
      gitIn(dir, ["push", "-q", "origin", spec], token).then(
        () => "",
        (e: { stderr: string }) => e.stderr || "refused without a message",
      ),
    close: () => rmSync(work, { recursive: true, force: true }),
  };
}
