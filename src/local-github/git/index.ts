// Thin, promise-based access to the simulator's bare repositories through the git CLI.
//
// Every REST operation that touches repository content is answered from a real bare repository,
// so what Forge reads over the API and what a runner clones over HTTP are the same objects.
//
// The folder, by subject:
//   index.ts    the entry importers use, and `viaGit`, git's own answers for tests to compare with
//   run.ts      running git: environment, process counts, `initBare`, the memo of answers by object id
//   store.ts    objects read through the batch readers: types, blobs, tree entries, commits parsed
//   refs.ts     refs read from the ref files, listed, resolved, updated and deleted
//   trees.ts    `lsTree`, `entryAt`, trees built from changes or from a folder
//   commits.ts  commits written
//   history.ts  ancestors, ancestry, merge bases, merges of trees, commit lists and counts
//   diffs.ts    per-file diffs and changed paths between commits
import { changedPathsGit, diffFilesPorcelain } from "./diffs.js";
import { mergeBaseGit } from "./history.js";
import { commitTreeWithGit } from "./commits.js";
import { listRefsWithGit } from "./refs.js";
import { git, runGit } from "./run.js";
import { buildTreeWithIndex, lsTreeUncached } from "./trees.js";

export { closeReaders } from "../objects.js";
export { gitProcesses, initBare, runGit } from "./run.js";
export { hashBlob, objectType, readBlob, readCommit, type CommitInfo, type GitIdentity } from "./store.js";
export { deleteRef, listRefs, listRefsWithGit, readRefFile, resolveRef, updateRef, validRefName } from "./refs.js";
export { buildTree, buildTreeWithIndex, entryAt, lsTree, treeFromFolder, type TreeChange, type TreeEntry } from "./trees.js";
export { commitTree } from "./commits.js";
export { countCommits, isAncestor, mergeBase, mergeTrees, pushCommits, revList } from "./history.js";
export { changedPaths, diffFiles, pullRequestFiles, type FileDiff } from "./diffs.js";

/** The git-process versions of what this module computes itself, for tests comparing the two. */
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
