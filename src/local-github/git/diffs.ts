// What changes between two commits in the local GitHub: per-file diffs with line counts and patches
// (compare, pull request files), and the paths added, removed and modified (push payloads).
import type { RawTreeEntry } from "../objects.js";
import { mergeBase } from "./history.js";
import { resolveRef } from "./refs.js";
import { git, memo } from "./run.js";
import { objectType, readCommit, readTreeEntries } from "./store.js";

export interface FileDiff {
  filename: string;
  previous_filename?: string;
  status: "added" | "removed" | "modified" | "renamed" | "copied" | "changed" | "unchanged";
  additions: number;
  deletions: number;
  sha: string;
  patch?: string;
}

/**
 * What a pull request changes, as GitHub lists its files: from the merge base of its base branch and
 * head (for a merged one, the merge commit's first parent) to its head.
 */
export async function pullRequestFiles(
  gitDir: string,
  p: { baseRef: string; baseSha: string; headSha: string; merged: boolean; mergeCommitSha: string | null },
  withPatch = true,
): Promise<FileDiff[]> {
  const base = (await resolveRef(gitDir, `refs/heads/${p.baseRef}`)) ?? p.baseSha;
  const mb =
    p.merged && p.mergeCommitSha ? (await readCommit(gitDir, p.mergeCommitSha)).parents[0] : await mergeBase(gitDir, base, p.headSha);
  // GitHub lists a renamed file once, by its new name, with `previous_filename`.
  return mb ? diffFiles(gitDir, mb, p.headSha, withPatch, true) : [];
}

/** Per-file diff between two commits (as GitHub's compare and pull files report it); `renames` as a pull request's files list them. */
export async function diffFiles(gitDir: string, base: string, head: string, withPatch = true, renames = false): Promise<FileDiff[]> {
  const files = await memo(gitDir, "diff", [base, head], `${withPatch}:${renames}`, () =>
    diffFilesUncached(gitDir, base, head, withPatch, renames),
  );
  return files.map((f) => ({ ...f }));
}

/** Each file's patch in a whole diff (from its first hunk on), by its new path. */
export function patchesByFile(full: string): Map<string, string> {
  const patches = new Map<string, string>();
  for (const chunk of full.split(/^(?=diff --git )/m)) {
    const lines = chunk.split("\n");
    const m = /^diff --git a\/(.*) b\/(.*)$/.exec(lines[0] ?? "");
    if (!m) continue;
    const at = lines.findIndex((l) => l.startsWith("@@"));
    patches.set(m[2]!, at < 0 ? "" : lines.slice(at).join("\n").replace(/\n$/, ""));
  }
  return patches;
}

const RAW = /^:\d{6} \d{6} [0-9a-f]{40} ([0-9a-f]{40}) ([A-Z])\d*$/;
const NUMSTAT = /^(\d+|-)\t(\d+|-)\t([^]*)$/;

/**
 * Per-file statuses and line counts from one `git diff-tree` (plumbing: outside a repository it
 * fails, where porcelain `git diff` would silently compare paths on disk), plus one for patches.
 */
async function diffFilesUncached(gitDir: string, base: string, head: string, withPatch: boolean, renames: boolean): Promise<FileDiff[]> {
  const detect = renames ? "-M" : "--no-renames";
  const [out, full] = await Promise.all([
    git(gitDir, ["diff-tree", "-r", "-z", detect, "--no-abbrev", "--raw", "--numstat", base, head]),
    withPatch ? git(gitDir, ["diff-tree", "-r", detect, "-p", "-U3", base, head]) : Promise.resolve(""),
  ]);
  const stats = new Map<string, [number, number]>();
  const raws: Array<{ name: string; previous?: string; sha: string; st: string }> = [];
  const items = out.split("\0");
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    const r = RAW.exec(item);
    if (r && i + 1 < items.length) {
      // A rename names both paths, the old first.
      if (r[2] === "R") {
        const previous = items[++i]!;
        raws.push({ name: items[++i]!, previous, sha: r[1]!, st: r[2] });
      } else raws.push({ name: items[++i]!, sha: r[1]!, st: r[2]! });
      continue;
    }
    const n = NUMSTAT.exec(item);
    if (!n) continue;
    // A rename's numstat has an empty path, then both paths.
    let name = n[3]!;
    if (name === "") {
      i += 2;
      name = items[i]!;
    }
    stats.set(name, [n[1] === "-" ? 0 : Number(n[1]), n[2] === "-" ? 0 : Number(n[2])]);
  }
  const patches = patchesByFile(full);
  return raws.map(({ name, previous, sha, st }) => {
    const [additions, deletions] = stats.get(name) ?? [0, 0];
    const status = st === "A" ? "added" : st === "D" ? "removed" : st === "R" ? "renamed" : "modified";
    const entry: FileDiff = { filename: name, status, additions, deletions, sha: status === "removed" ? "0".repeat(40) : sha };
    if (previous !== undefined) entry.previous_filename = previous;
    if (withPatch) entry.patch = patches.get(name) ?? "";
    return entry;
  });
}

export async function changedPaths(
  gitDir: string,
  parent: string | undefined,
  sha: string,
): Promise<{ added: string[]; removed: string[]; modified: string[] }> {
  const r = await memo(gitDir, "changed", parent ? [parent, sha] : [sha], "", () => changedPathsUncached(gitDir, parent, sha));
  return { added: [...r.added], removed: [...r.removed], modified: [...r.modified] };
}

/**
 * Paths added, removed and modified between two trees (`git diff --name-status --no-renames`),
 * comparing tree objects and skipping subtrees whose ids match; in git's path order.
 */
async function compareTrees(
  gitDir: string,
  a: string | undefined,
  b: string | undefined,
  prefix: string,
  res: { added: string[]; removed: string[]; modified: string[] },
): Promise<void> {
  const [ea, eb] = await Promise.all([a ? readTreeEntries(gitDir, a) : [], b ? readTreeEntries(gitDir, b) : []]);
  const key = (e: RawTreeEntry) => Buffer.from(e.mode === "040000" ? `${e.name}/` : e.name, "utf8");
  const rows = new Map<string, { a?: RawTreeEntry; b?: RawTreeEntry }>();
  for (const e of ea) rows.set(e.name, { a: e });
  for (const e of eb) rows.set(e.name, { ...rows.get(e.name), b: e });
  // git walks both trees in tree order; a name that is a file on one side and a folder on the
  // other yields the file's line and the folder's paths at their own places in that order.
  const items: Array<{ k: Buffer; name: string; a?: RawTreeEntry; b?: RawTreeEntry }> = [];
  for (const [name, r] of rows) {
    const ta = r.a && r.a.mode === "040000";
    const tb = r.b && r.b.mode === "040000";
    if (r.a && r.b && ta !== tb) {
      items.push({ k: key(r.a), name, a: r.a });
      items.push({ k: key(r.b), name, b: r.b });
    } else items.push({ k: key((r.a ?? r.b)!), name, ...r });
  }
  items.sort((x, y) => Buffer.compare(x.k, y.k));
  for (const it of items) {
    const path = prefix + it.name;
    const isTree = (e?: RawTreeEntry) => !!e && e.mode === "040000";
    if (isTree(it.a) || isTree(it.b)) {
      if (it.a?.sha === it.b?.sha) continue;
      await compareTrees(gitDir, isTree(it.a) ? it.a!.sha : undefined, isTree(it.b) ? it.b!.sha : undefined, `${path}/`, res);
    } else if (it.a && it.b) {
      if (it.a.sha !== it.b.sha || it.a.mode !== it.b.mode) res.modified.push(path);
    } else if (it.a) res.removed.push(path);
    else res.added.push(path);
  }
}

async function changedPathsUncached(
  gitDir: string,
  parent: string | undefined,
  sha: string,
): Promise<{ added: string[]; removed: string[]; modified: string[] }> {
  if ((await objectType(gitDir, sha)) === "commit" && (!parent || (await objectType(gitDir, parent)) === "commit")) {
    const res = { added: [] as string[], removed: [] as string[], modified: [] as string[] };
    const tree = (await readCommit(gitDir, sha)).tree;
    const parentTree = parent ? (await readCommit(gitDir, parent)).tree : undefined;
    await compareTrees(gitDir, parentTree, tree, "", res);
    return res;
  }
  return changedPathsGit(gitDir, parent, sha);
}

export async function changedPathsGit(
  gitDir: string,
  parent: string | undefined,
  sha: string,
): Promise<{ added: string[]; removed: string[]; modified: string[] }> {
  const out = parent
    ? await git(gitDir, ["diff", "--name-status", "-z", "--no-renames", parent, sha])
    : await git(gitDir, ["diff-tree", "--root", "--name-status", "-z", "--no-renames", "-r", sha]);
  const items = out.split("\0").filter(Boolean);
  const res = { added: [] as string[], removed: [] as string[], modified: [] as string[] };
  let i = parent ? 0 : 1; // diff-tree --root prints the commit sha first
  for (; i + 1 < items.length; i += 2) {
    const st = items[i]!;
    const name = items[i + 1]!;
    if (st === "A") res.added.push(name);
    else if (st === "D") res.removed.push(name);
    else res.modified.push(name);
  }
  return res;
}
