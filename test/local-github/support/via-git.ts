// Git's own answers, through the git command, to what the local GitHub's git layer
// (src/local-github/git/) computes in process: test/local-github/git.test.ts holds one to the other.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { commitTreeWithGit } from "../../../src/local-github/git/commits.js";
import { changedPathsGit, patchesByFile, type FileDiff } from "../../../src/local-github/git/diffs.js";
import { mergeBaseGit } from "../../../src/local-github/git/history.js";
import { git, runGit } from "../../../src/local-github/git/run.js";
import { lsTreeUncached, type TreeChange } from "../../../src/local-github/git/trees.js";

async function listRefsWithGit(gitDir: string, prefix = "refs/"): Promise<Map<string, string>> {
  const out = await git(gitDir, ["for-each-ref", "--format=%(refname) %(objectname)", prefix]);
  const refs = new Map<string, string>();
  for (const line of out.split("\n")) {
    const [name, sha] = line.split(" ");
    if (name && sha) refs.set(name, sha);
  }
  return refs;
}

/** Applies changes to a base tree through a throwaway index and writes the new tree. */
async function buildTreeWithIndex(gitDir: string, baseTree: string | undefined, changes: TreeChange[]): Promise<string> {
  const tmp = mkdtempSync(join(tmpdir(), "forge-sim-index-"));
  const env = { GIT_INDEX_FILE: join(tmp, "index") };
  try {
    if (baseTree) await runGit(gitDir, ["read-tree", baseTree], { env });
    else await runGit(gitDir, ["read-tree", "--empty"], { env });
    const lines: string[] = [];
    for (const c of changes) {
      if (c.sha) lines.push(`${c.mode ?? "100644"} ${c.sha}\t${c.path}`);
      else lines.push(`0 ${"0".repeat(40)}\t${c.path}`);
    }
    // Removing a directory path means removing every entry below it.
    const removals = changes.filter((c) => !c.sha).map((c) => c.path);
    if (removals.length) {
      const present = (await git(gitDir, ["ls-files", "-z"], undefined, env)).split("\0").filter(Boolean);
      for (const r of removals) for (const p of present) if (p.startsWith(`${r}/`)) lines.push(`0 ${"0".repeat(40)}\t${p}`);
    }
    if (lines.length) await runGit(gitDir, ["update-index", "--index-info"], { input: lines.join("\n") + "\n", env });
    return (await git(gitDir, ["write-tree"], undefined, env)).trim();
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

async function diffFilesPorcelain(gitDir: string, base: string, head: string, withPatch: boolean): Promise<FileDiff[]> {
  const numstat = await git(gitDir, ["diff", "--numstat", "-z", "--no-renames", base, head]);
  const raw = await git(gitDir, ["diff", "--raw", "-z", "--no-renames", "--no-abbrev", base, head]);
  const stats = new Map<string, [number, number]>();
  const parts = numstat.split("\0").filter(Boolean);
  for (const p of parts) {
    const [a, d, ...name] = p.split("\t");
    stats.set(name.join("\t"), [a === "-" ? 0 : Number(a), d === "-" ? 0 : Number(d)]);
  }
  // One diff for every file's patch, split at each file's header.
  const patches = withPatch
    ? patchesByFile(await git(gitDir, ["diff", "--no-color", "--no-renames", "-U3", base, head]))
    : new Map<string, string>();
  const files: FileDiff[] = [];
  const items = raw.split("\0");
  for (let i = 0; i + 1 < items.length; i += 2) {
    const meta = items[i]!;
    const name = items[i + 1]!;
    if (!meta.startsWith(":")) continue;
    const [, , , newSha, st] = meta.slice(1).split(" ");
    const [additions, deletions] = stats.get(name) ?? [0, 0];
    const status = st === "A" ? "added" : st === "D" ? "removed" : "modified";
    const entry: FileDiff = { filename: name, status, additions, deletions, sha: status === "removed" ? "0".repeat(40) : newSha! };
    if (withPatch) entry.patch = patches.get(name) ?? "";
    files.push(entry);
  }
  return files;
}

/** The git-process versions of what this module computes itself, for the tests comparing the two. */
export const viaGit = {
  lsTree: lsTreeUncached,
  listRefs: listRefsWithGit,
  buildTree: buildTreeWithIndex,
  changedPaths: changedPathsGit,
  diffFiles: diffFilesPorcelain,
  commitTree: commitTreeWithGit,
  mergeBase: mergeBaseGit,
  async isAncestor(gitDir: string, a: string, b: string): Promise<boolean> {
    return (await runGit(gitDir, ["merge-base", "--is-ancestor", a, b], { allowFail: true })).code === 0;
  },
  async countCommits(gitDir: string, base: string, head: string): Promise<number> {
    return Number((await git(gitDir, ["rev-list", "--count", `${base}..${head}`])).trim());
  },
  async resolveRef(gitDir: string, ref: string): Promise<string | undefined> {
    const r = await runGit(gitDir, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], { allowFail: true });
    return r.code === 0 ? r.stdout.toString().trim() : undefined;
  },
};
