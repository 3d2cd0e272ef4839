// The history of the local GitHub's repositories: ancestors walked in process, ancestry, merge
// bases, three-way merges of trees, commit lists and counts.
import { GitError } from "../../core/git-error.js";
import { git, memo, runGit } from "./run.js";
import { objectType, readCommit, type CommitInfo } from "./store.js";

/** Histories larger than this are left to git's own graph walks. */
const WALK_LIMIT = 5000;

/**
 * Every commit reachable from `tip` (itself included), read through the batch reader; undefined
 * when the history exceeds WALK_LIMIT. Kept per tip, as commits never change.
 */
async function ancestors(gitDir: string, tip: string): Promise<Set<string> | undefined> {
  return memo(gitDir, "ancestors", [tip], "", async () => {
    const seen = new Set<string>([tip]);
    let frontier = [tip];
    while (frontier.length) {
      if (seen.size > WALK_LIMIT) return undefined;
      const commits = await Promise.all(frontier.map((s) => readCommit(gitDir, s)));
      frontier = [];
      for (const c of commits) {
        for (const p of c.parents) {
          if (seen.has(p)) continue;
          seen.add(p);
          frontier.push(p);
        }
      }
    }
    return seen;
  });
}

export async function isAncestor(gitDir: string, ancestor: string, descendant: string): Promise<boolean> {
  return memo(gitDir, "is-ancestor", [ancestor, descendant], "", async () => {
    if ((await objectType(gitDir, ancestor)) === "commit" && (await objectType(gitDir, descendant)) === "commit") {
      const all = await ancestors(gitDir, descendant);
      if (all) return all.has(ancestor);
    }
    const r = await runGit(gitDir, ["merge-base", "--is-ancestor", ancestor, descendant], { allowFail: true });
    return r.code === 0;
  });
}

export async function mergeBase(gitDir: string, a: string, b: string): Promise<string | undefined> {
  return memo(gitDir, "merge-base", [a, b], "", () => mergeBaseUncached(gitDir, a, b));
}

async function mergeBaseUncached(gitDir: string, a: string, b: string): Promise<string | undefined> {
  if ((await objectType(gitDir, a)) === "commit" && (await objectType(gitDir, b)) === "commit") {
    const [ancA, ancB] = await Promise.all([ancestors(gitDir, a), ancestors(gitDir, b)]);
    if (ancA && ancB) {
      const common = [...ancA].filter((c) => ancB.has(c));
      if (!common.length) return undefined;
      // The best common ancestors: those no other common ancestor descends from.
      const below = new Set<string>();
      for (const c of common) {
        const anc = await ancestors(gitDir, c);
        if (!anc) return mergeBaseGit(gitDir, a, b);
        for (const x of anc) if (x !== c) below.add(x);
      }
      const best = common.filter((c) => !below.has(c));
      // Criss-cross histories have several; git picks among them, so it answers those.
      if (best.length === 1) return best[0];
    }
  }
  return mergeBaseGit(gitDir, a, b);
}

export async function mergeBaseGit(gitDir: string, a: string, b: string): Promise<string | undefined> {
  const r = await runGit(gitDir, ["merge-base", a, b], { allowFail: true });
  return r.code === 0 ? r.stdout.toString().trim() : undefined;
}

/** Three-way merge without a work tree; returns the merged tree or undefined on conflict. */
export async function mergeTrees(gitDir: string, ours: string, theirs: string): Promise<string | undefined> {
  return memo(gitDir, "merge-tree", [ours, theirs], "", () => mergeTreesUncached(gitDir, ours, theirs));
}

async function mergeTreesUncached(gitDir: string, ours: string, theirs: string): Promise<string | undefined> {
  const args = ["merge-tree", "--write-tree", "--no-messages", ours, theirs];
  const r = await runGit(gitDir, args, { allowFail: true });
  if (r.code === 0) return r.stdout.toString().split("\n")[0]!.trim();
  if (r.code === 1) return undefined;
  throw new GitError(`git merge-tree failed: ${r.stderr}`, args, r.code, r.stderr);
}

/** Commits reachable from `head` and not from `base`, oldest first. */
/** Whether the commits `after` brings that `before` (or, for a new ref, no existing ref) has not include a merge commit. */
export async function bringsMergeCommits(gitDir: string, before: string | null, after: string): Promise<boolean> {
  const range = before ? [after, `^${before}`] : [after, "--not", "--all"];
  const r = await runGit(gitDir, ["rev-list", "--min-parents=2", "--max-count=1", ...range], { allowFail: true });
  return r.code === 0 && r.stdout.toString().trim() !== "";
}

export async function revList(gitDir: string, base: string | undefined, head: string, limit = 250): Promise<string[]> {
  const range = base ? [`${base}..${head}`] : [head];
  const out = await git(gitDir, ["rev-list", "--reverse", `--max-count=${limit}`, ...range]);
  return out.split("\n").filter(Boolean);
}

export async function countCommits(gitDir: string, base: string, head: string): Promise<number> {
  return memo(gitDir, "count", [base, head], "", async () => {
    if ((await objectType(gitDir, base)) === "commit" && (await objectType(gitDir, head)) === "commit") {
      const [ancBase, ancHead] = await Promise.all([ancestors(gitDir, base), ancestors(gitDir, head)]);
      if (ancBase && ancHead) return [...ancHead].filter((c) => !ancBase.has(c)).length;
    }
    return Number((await git(gitDir, ["rev-list", "--count", `${base}..${head}`])).trim());
  });
}

/** Commits between two tips for push payloads (newest last), at most 20 as GitHub sends. */
export async function pushCommits(gitDir: string, before: string | undefined, after: string): Promise<CommitInfo[]> {
  const shas = await revList(gitDir, before && !/^0+$/.test(before) ? before : undefined, after, 20);
  return Promise.all(shas.map((s) => readCommit(gitDir, s)));
}
