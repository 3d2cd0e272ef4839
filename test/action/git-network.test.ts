// The runner's git over HTTP when the network or the server fails on the way: fetches and pushes
// are tried again with the executor loop's backoff (2 s base, 60 s cap, 5 tries, jitter) on a
// clock the test holds, and only when the failure can pass — a 5xx, a dropped connection — never
// for a refusal: a push that is not a fast-forward, a rule's GH013, a token without write access.
// The failures are the local GitHub's own (faults.ts `gitFaults`), answered by its git endpoint.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Git, type GitRetry } from "../../action/src/git.js";
import { GIT_REMOTE_BACKOFF } from "../../src/core/retry.js";
import { createSim, type Sim } from "../../src/local-github/server.js";

const OWNER = "acme";
const REPO = "net";
let sim: Sim;
let dir: string;
let token: string;
let n = 0;

beforeAll(async () => {
  sim = await createSim({ workflowExecutor: "noop" });
  await sim.control.createRepo({
    owner: OWNER,
    name: REPO,
    files: { "README.md": "# net\n" },
    collaborators: { reader: "read", writer: "write" },
  });
  token = sim.control.userToken(OWNER);
  dir = mkdtempSync(path.join(tmpdir(), "forge-git-net-"));
});
afterAll(async () => {
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => void sim.control.resetFaults());

/** A work repository holding main, a Git of the runner's for it, and what its waits slept. */
async function runnerGit(opts: { token?: string; random?: () => number } = {}) {
  const work = path.join(dir, `w${++n}`);
  execFileSync("git", ["init", "--quiet", work]);
  const slept: number[] = [];
  const retries: GitRetry[] = [];
  const git = new Git({
    dir: work,
    remote: `${sim.gitUrl}/${OWNER}/${REPO}.git`,
    token: opts.token ?? token,
    identity: { name: "Forge", email: "forge@example.invalid" },
    tempDir: dir,
    clock: { sleep: async (ms) => void slept.push(ms) },
    random: opts.random ?? (() => 0.5),
    onRetry: (r) => retries.push(r),
  });
  const main = (await git.fetchBranch("main"))!;
  await git.run(["checkout", "--quiet", "-B", "work", main]);
  return { git, work, slept, retries, main };
}

async function commitFile(g: { git: Git; work: string }, file: string, text: string): Promise<string> {
  writeFileSync(path.join(g.work, file), text);
  await g.git.run(["add", file]);
  return g.git.commit(`add ${file}\n`);
}

/** The branch's tip in the local GitHub's repository ("" when there is no such branch). */
function remoteHead(branch: string): string {
  const gitDir = sim.core.state.repoByName(OWNER, REPO)!.gitDir;
  try {
    return execFileSync("git", ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}`], { cwd: gitDir, encoding: "utf8" }).trim();
  } catch {
    return "";
  }
}

describe("git that survives a blip", () => {
  it("tries a push again after a 500 and a dropped connection, waiting 2 s then 4 s (plus jitter) on the job's clock", async () => {
    const g = await runnerGit();
    const sha = await commitFile(g, "a.txt", "a\n");
    sim.control.faults({
      gitFaults: [
        { on: "push", answer: 500 },
        { on: "push", answer: "reset" },
      ],
    });
    await g.git.push("topic-a");
    expect(remoteHead("topic-a")).toBe(sha);
    // Both failures were answered, and the third try got through.
    expect(sim.core.faults.config.gitFaults).toEqual([]);
    expect(sim.core.faults.log.filter((l) => l.startsWith("git "))).toEqual(["git push 500", "git push reset"]);
    // delay = min(2 s · 2^retry + jitter(0, 2 s), 60 s), jitter 0.5 here.
    expect(g.slept).toEqual([3_000, 5_000]);
    expect(g.retries.map((r) => [r.command, r.attempt, r.attempts])).toEqual([
      ["push", 1, 5],
      ["push", 2, 5],
    ]);
    expect(g.retries[0]!.error).toMatch(/HTTP 500|returned error: 500/);
    expect(g.retries[1]!.error).toMatch(/transfer closed|remote end hung up/);
    // The token reached each try's git process only: no retry's message carries it.
    for (const r of g.retries) expect(r.error).not.toContain(token);
  });

  it("tries a fetch again after a 503", async () => {
    const g = await runnerGit();
    const sha = await commitFile(g, "b.txt", "b\n");
    await g.git.push("topic-b");
    sim.control.faults({ gitFaults: [{ on: "fetch", answer: 503 }] });
    expect(await g.git.fetchBranch("topic-b", 5)).toBe(sha);
    expect(g.retries.map((r) => r.command)).toEqual(["fetch"]);
    expect(g.slept).toHaveLength(1);
  });

  it("gives up after five tries, with the last failure's message and the waits capped at 60 s", async () => {
    const g = await runnerGit({ random: () => 0.999 });
    await commitFile(g, "c.txt", "c\n");
    sim.control.faults({ gitFaults: Array.from({ length: 6 }, () => ({ on: "push" as const, answer: 502 })) });
    const err = await g.git.push("topic-c").catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect(String(err)).toMatch(/git push failed.*(HTTP 502|returned error: 502)/s);
    expect(g.retries).toHaveLength(GIT_REMOTE_BACKOFF.attempts - 1);
    expect(sim.core.faults.config.gitFaults).toHaveLength(1);
    // 2 s · 2^k + ~2 s of jitter: 4, 6, 10, 18 s — each within the cap.
    expect(g.slept).toEqual([3_998, 5_998, 9_998, 17_998]);
    expect(remoteHead("topic-c")).toBe("");
  });

  it("caps a wait at 60 s", async () => {
    const g = await runnerGit();
    const far = new Git({
      dir: g.work,
      remote: `${sim.gitUrl}/${OWNER}/${REPO}.git`,
      token,
      identity: { name: "Forge", email: "forge@example.invalid" },
      tempDir: dir,
      backoff: { ...GIT_REMOTE_BACKOFF, attempts: 8 },
      clock: { sleep: async (ms) => void g.slept.push(ms) },
      random: () => 0,
    });
    await commitFile(g, "d.txt", "d\n");
    sim.control.faults({ gitFaults: Array.from({ length: 7 }, () => ({ on: "push" as const, answer: 500 })) });
    await far.push("topic-d");
    expect(g.slept).toEqual([2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000]);
  });
});

describe("a refusal is never tried again", () => {
  it("a push that is not a fast-forward fails at once", async () => {
    const g = await runnerGit();
    await commitFile(g, "e.txt", "one\n");
    await g.git.push("topic-e");
    await g.git.run(["reset", "--quiet", "--hard", g.main]);
    await commitFile(g, "e.txt", "two\n");
    const err = await g.git.push("topic-e").catch((e: Error) => e);
    expect(String(err)).toMatch(/rejected|non-fast-forward|fetch first/);
    expect(g.retries).toEqual([]);
    expect(g.slept).toEqual([]);
  });

  it("a rule's refusal (GH013) fails at once", async () => {
    const admin = new Octokit({ baseUrl: sim.apiUrl, auth: token });
    const { data: set } = await admin.request("POST /repos/{owner}/{repo}/rulesets", {
      owner: OWNER,
      repo: REPO,
      name: "no secrets",
      target: "push",
      enforcement: "active",
      rules: [{ type: "file_path_restriction", parameters: { restricted_file_paths: ["secrets/**"] } }] as never,
    });
    try {
      // The rule applies to pushers who cannot bypass it: a collaborator with write access.
      const g = await runnerGit({ token: sim.control.userToken("writer") });
      execFileSync("mkdir", ["-p", path.join(g.work, "secrets")]);
      await commitFile(g, "secrets/key.pem", "k\n");
      const err = await g.git.push("topic-f").catch((e: Error) => e);
      expect(String(err)).toContain("GH013");
      expect(g.retries).toEqual([]);
      expect(g.slept).toEqual([]);
    } finally {
      await admin.request("DELETE /repos/{owner}/{repo}/rulesets/{ruleset_id}", { owner: OWNER, repo: REPO, ruleset_id: set.id });
    }
  });

  it("a token without write access (403) fails at once, and its error does not hold the token", async () => {
    const reader = sim.control.userToken("reader");
    const g = await runnerGit({ token: reader });
    await commitFile(g, "g.txt", "g\n");
    const err = await g.git.push("topic-g").catch((e: Error) => e);
    expect(String(err)).toMatch(/403|denied/);
    expect(String(err)).not.toContain(reader);
    expect(g.retries).toEqual([]);
    expect(g.slept).toEqual([]);
  });
});
