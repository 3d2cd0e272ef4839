// `forge spawn` from inside an agent of a Forge job: the sub-agent works in its own git worktree on
// `<branch>-<sub>` and is merged back into the parent's branch (see docs/runner.md#sub-agent-branches). Real git, a real
// `forge` CLI on the parent agent's PATH.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { spawnAgent } from "../../src/agent/spawn/index.js";
import { cleanupTempDirs, forgeCliFromSource, tempDir } from "./helpers.js";

afterEach(cleanupTempDirs);

const BRANCH = "forge/r1/t1/1";
const git = (cwd: string, args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function repo(files: Record<string, string> = {}): { dir: string; repo: string } {
  const dir = tempDir("forge-subwt-");
  const r = path.join(dir, "repo");
  execFileSync("git", ["init", "-q", "-b", "main", r]);
  git(r, ["config", "user.email", "t@example.com"]);
  git(r, ["config", "user.name", "T"]);
  writeFileSync(path.join(r, "README.md"), "# demo\n");
  for (const [f, t] of Object.entries(files)) writeFileSync(path.join(r, f), t);
  git(r, ["add", "-A"]);
  git(r, ["commit", "-qm", "base"]);
  git(r, ["checkout", "-qb", BRANCH]);
  return { dir, repo: r };
}

/** A type 2 parent (the runner's session) whose shell runs `forge spawn` with a shell child. */
async function parentSpawning(
  w: { dir: string; repo: string },
  before: string,
  child: string,
  env: Record<string, string> = { FORGE_BRANCH: BRANCH },
) {
  const out = path.join(w.dir, "child.json");
  const parent = [
    before,
    `forge spawn --adapter command --command sh --arg -c --arg ${q(child)} --agent-type 1 --name fix --prompt 'fix it' --output-format json > ${q(out)} || true`,
  ].join("\n");
  const r = await spawnAgent({
    adapter: "command",
    command: "sh",
    args: ["-c", parent],
    agentType: "2",
    prompt: "parent work",
    cwd: w.repo,
    sessionDir: path.join(w.dir, "session"),
    name: "implement",
    maxDepth: 3,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" },
    extraEnv: env,
    forgeCli: forgeCliFromSource(),
  });
  expect(r.exitCode, r.error?.message).toBe(0);
  return JSON.parse(readFileSync(out, "utf8")) as Record<string, unknown> & {
    branch?: Record<string, unknown>;
    error?: { code: string; message: string };
  };
}

describe("forge spawn inside a Forge job: sub-agents on their own branches", () => {
  it("runs the sub-agent in its own worktree on <branch>-<sub>, cut from the parent's work, and merges it back", async () => {
    const w = repo();
    const seen = path.join(w.dir, "seen");
    const child = `pwd > ${q(`${seen}-cwd`)}; cat parent.txt > ${q(`${seen}-parent`)}; echo child > child.txt`;
    const json = await parentSpawning(w, "echo parent > parent.txt", child);
    expect(json.exit_code, JSON.stringify(json.error)).toBe(0);
    expect(json.branch).toMatchObject({ branch: `${BRANCH}-fix`, parent_branch: BRANCH, merged: true });
    // Not the parent's checkout: a worktree elsewhere, gone once merged.
    const childCwd = readFileSync(`${seen}-cwd`, "utf8").trim();
    expect(childCwd).not.toBe(w.repo);
    expect(childCwd.startsWith(w.repo)).toBe(false);
    expect(existsSync(childCwd)).toBe(false);
    expect(git(w.repo, ["worktree", "list", "--porcelain"]).match(/^worktree /gm)).toHaveLength(1);
    // The sub-agent started from the parent's work so far.
    expect(readFileSync(`${seen}-parent`, "utf8")).toBe("parent\n");
    // The parent's branch: a merge of the sub-branch, carrying the sub-agent's file; nothing left over.
    expect(git(w.repo, ["symbolic-ref", "--short", "HEAD"])).toBe(BRANCH);
    expect(git(w.repo, ["rev-parse", "HEAD^2"])).toBe(git(w.repo, ["rev-parse", `${BRANCH}-fix`]));
    expect(git(w.repo, ["show", "HEAD:child.txt"])).toBe("child");
    expect(git(w.repo, ["show", "HEAD:parent.txt"])).toBe("parent");
    expect(git(w.repo, ["status", "--porcelain"])).toBe("");
    expect(json.branch!.head).toBe(git(w.repo, [`rev-parse`, `${BRANCH}-fix`]));
  }, 60_000);

  it("reports a conflicted merge back in the JSON (exit 1), leaves the parent's tree clean and keeps the work on the sub-branch", async () => {
    const w = repo({ "shared.txt": "base\n" });
    // While the sub-agent works, the parent's branch moves on the same line.
    const child = `echo child > shared.txt; printf 'parent\\n' > ${q(path.join(w.repo, "shared.txt"))}; git -C ${q(w.repo)} commit -qam parent-edit`;
    const json = await parentSpawning(w, "true", child);
    expect(json.exit_code).toBe(1);
    expect(json.error?.code).toBe("merge_conflict");
    expect(json.error?.message).toContain(`git merge ${BRANCH}-fix`);
    expect(json.branch).toMatchObject({ branch: `${BRANCH}-fix`, merged: false, conflicts: ["shared.txt"] });
    expect(existsSync(path.join(w.repo, ".git", "MERGE_HEAD"))).toBe(false);
    expect(git(w.repo, ["status", "--porcelain"])).toBe("");
    expect(readFileSync(path.join(w.repo, "shared.txt"), "utf8")).toBe("parent\n");
    expect(git(w.repo, ["show", `${BRANCH}-fix:shared.txt`])).toBe("child");
  }, 60_000);

  it("outside a Forge job (no task branch) the sub-agent works where it is asked, as before", async () => {
    const w = repo();
    const seen = path.join(w.dir, "seen-cwd");
    const json = await parentSpawning(w, "true", `pwd > ${q(seen)}; echo child > child.txt`, {});
    expect(json.exit_code).toBe(0);
    expect(json.branch).toBeUndefined();
    expect(readFileSync(seen, "utf8").trim()).toBe(w.repo);
    expect(git(w.repo, ["status", "--porcelain"])).toBe("?? child.txt");
  }, 60_000);
});
