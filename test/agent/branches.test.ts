import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, onTestFinished } from "vitest";
import { abortMerge, concludeMerge, finishSubBranch, mergeRef, startSubBranch, subBranchName } from "../../src/agent/branches.js";
import { cleanupTempDirs, tempDir } from "./helpers.js";

afterEach(cleanupTempDirs);

const git = (cwd: string, ...args: string[]) => execFileSync("git", ["-C", cwd, ...args], { encoding: "utf8" }).trim();

function repo(): string {
  const r = tempDir();
  git(r, "init", "-q", "-b", "forge/r1/t1/2");
  // No identity configured: Forge's commits must still work.
  writeFileSync(path.join(r, "f.txt"), "one\n");
  git(r, "-c", "user.name=T", "-c", "user.email=t@e", "add", "-A");
  git(r, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-q", "-m", "base");
  return r;
}

describe("sub-agent branches", () => {
  it("names them <branch>-<sub>, never <branch>/<sub>", () => {
    expect(subBranchName("forge/r1/t1/2", "API Layer")).toBe("forge/r1/t1/2-api-layer");
    expect(subBranchName("forge/r1/t1/2", "..")).toBe("forge/r1/t1/2-sub");
  });

  it("cuts a sub-branch from the parent, commits the sub-agent's work and merges it back", async () => {
    const r = repo();
    // No global identity either (this machine has one): Forge falls back to its own.
    const saved = { global: process.env.GIT_CONFIG_GLOBAL, system: process.env.GIT_CONFIG_NOSYSTEM };
    process.env.GIT_CONFIG_GLOBAL = "/dev/null";
    process.env.GIT_CONFIG_NOSYSTEM = "1";
    onTestFinished(() => {
      if (saved.global === undefined) delete process.env.GIT_CONFIG_GLOBAL;
      else process.env.GIT_CONFIG_GLOBAL = saved.global;
      if (saved.system === undefined) delete process.env.GIT_CONFIG_NOSYSTEM;
      else process.env.GIT_CONFIG_NOSYSTEM = saved.system;
    });
    const sub = await startSubBranch(r, "forge/r1/t1/2", "docs");
    expect(git(r, "rev-parse", "--abbrev-ref", "HEAD")).toBe("forge/r1/t1/2-docs");
    writeFileSync(path.join(r, "docs.md"), "# d\n");
    const m = await finishSubBranch(r, "forge/r1/t1/2", sub, "forge(t1): docs");
    expect(m).toMatchObject({ merged: true, changed: true });
    expect(git(r, "rev-parse", "--abbrev-ref", "HEAD")).toBe("forge/r1/t1/2");
    expect(readFileSync(path.join(r, "docs.md"), "utf8")).toBe("# d\n");
    expect(git(r, "log", "--format=%an %s", "-1")).toBe("Forge Merge forge/r1/t1/2-docs into forge/r1/t1/2");
    expect(git(r, "log", "--format=%an %s", "-1", sub)).toBe("Forge forge(t1): docs");
    await expect(startSubBranch(r, "forge/r1/t1/9", "x")).rejects.toThrow(/expected forge\/r1\/t1\/9 to be checked out/);
  });

  it("leaves a conflicting merge for a resolver, refuses to conclude with markers left, and can abort", async () => {
    const r = repo();
    git(r, "checkout", "-q", "-b", "other");
    writeFileSync(path.join(r, "f.txt"), "theirs\n");
    git(r, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-q", "-am", "theirs");
    git(r, "checkout", "-q", "forge/r1/t1/2");
    writeFileSync(path.join(r, "f.txt"), "ours\n");
    git(r, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-q", "-am", "ours");
    const m = await mergeRef(r, "other");
    expect(m).toEqual({ merged: false, conflicts: ["f.txt"] });
    expect(await concludeMerge(r)).toMatchObject({ merged: false, conflicts: ["f.txt"] });
    await abortMerge(r);
    expect(readFileSync(path.join(r, "f.txt"), "utf8")).toBe("ours\n");
    const again = await mergeRef(r, "other");
    expect(again.merged).toBe(false);
    writeFileSync(path.join(r, "f.txt"), "ours\ntheirs\n");
    expect(await concludeMerge(r)).toMatchObject({ merged: true });
    expect(git(r, "log", "-1", "--format=%P").split(" ")).toHaveLength(2);
  });
});
