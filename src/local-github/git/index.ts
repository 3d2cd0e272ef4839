// Thin, promise-based access to the simulator's bare repositories through the git CLI.
//
// Every REST operation that touches repository content is answered from a real bare repository,
// so what Forge reads over the API and what a runner clones over HTTP are the same objects.
//
// The folder, by subject:
//   index.ts    the entry importers use
//   run.ts      running git: environment, process counts, `initBare`, the memo of answers by object id
//   store.ts    objects read through the batch readers: types, blobs, tree entries, commits parsed
//   refs.ts     refs read from the ref files, listed, resolved, updated and deleted
//   trees.ts    `lsTree`, `entryAt`, trees built from changes or from a folder
//   commits.ts  commits written
//   history.ts  ancestors, ancestry, merge bases, merges of trees, commit lists and counts
//   diffs.ts    per-file diffs and changed paths between commits

export { closeReaders } from "../objects.js";
export { gitProcesses, initBare, runGit } from "./run.js";
export { hashBlob, objectType, readBlob, readCommit, readCommitRaw, type CommitInfo, type GitIdentity } from "./store.js";
export { deleteRef, listRefs, readRefFile, resolveRef, updateRef, validRefName } from "./refs.js";
export { buildTree, entryAt, lsTree, treeFromFolder, type TreeChange, type TreeEntry } from "./trees.js";
export { commitTree, type CommitSign } from "./commits.js";
export { bringsMergeCommits, countCommits, isAncestor, mergeBase, mergeTrees, pushCommits, revList } from "./history.js";
export { changedPaths, diffFiles, pullRequestFiles, type FileDiff } from "./diffs.js";
