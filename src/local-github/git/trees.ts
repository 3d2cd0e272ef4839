// Trees of the local GitHub's bare repositories: listed (`git ls-tree`), the entry at a path, and
// new trees built from changes to a base tree or from a working folder.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GitError } from "../../core/git-error.js";
import { objectInfo, serializeTree, typeOfMode, writeObject, type RawTreeEntry } from "../objects.js";
import { git, memo, runGit, SHA } from "./run.js";
import { objectType, readCommit, readTreeEntries } from "./store.js";

export interface TreeEntry {
  mode: string;
  type: "blob" | "tree" | "commit";
  sha: string;
  path: string;
  size?: number;
}

export async function lsTree(gitDir: string, treeish: string, recursive = false, path?: string): Promise<TreeEntry[]> {
  if (SHA.test(treeish) && path === undefined)
    return memo(gitDir, "ls-tree", [treeish], String(recursive), () => lsTreeObjects(gitDir, treeish, recursive));
  return memo(gitDir, "ls-tree", [treeish], `${recursive}\0${path ?? ""}`, () => lsTreeUncached(gitDir, treeish, recursive, path));
}

/** `git ls-tree -l [-r -t]` of a tree or commit id, read through the batch readers. */
async function lsTreeObjects(gitDir: string, sha: string, recursive: boolean): Promise<TreeEntry[]> {
  const out: TreeEntry[] = [];
  const walk = async (tree: string, prefix: string): Promise<void> => {
    const entries = await readTreeEntries(gitDir, tree);
    const sizes = await Promise.all(
      entries.map((e) => (typeOfMode(e.mode) === "blob" ? objectInfo(gitDir, e.sha).then((i) => i?.size) : undefined)),
    );
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      const entry: TreeEntry = { mode: e.mode, type: typeOfMode(e.mode), sha: e.sha, path: prefix + e.name };
      if (sizes[i] !== undefined) entry.size = sizes[i];
      out.push(entry);
      if (recursive && entry.type === "tree") await walk(e.sha, `${entry.path}/`);
    }
  };
  await walk(sha, "");
  return out;
}

export async function lsTreeUncached(gitDir: string, treeish: string, recursive: boolean, path?: string): Promise<TreeEntry[]> {
  const args = ["ls-tree", "-l", "-z"];
  if (recursive) args.push("-r", "-t");
  args.push(treeish);
  if (path !== undefined) args.push("--", path);
  const out = await git(gitDir, args);
  return out
    .split("\0")
    .filter(Boolean)
    .map((line) => {
      const tab = line.indexOf("\t");
      const [mode, type, sha, size] = line.slice(0, tab).split(/\s+/);
      const entry: TreeEntry = { mode: mode!, type: type as TreeEntry["type"], sha: sha!, path: line.slice(tab + 1) };
      if (size && size !== "-") entry.size = Number(size);
      return entry;
    });
}

/** Entry at `path` in a commit's tree, or undefined. */
export async function entryAt(gitDir: string, commit: string, path: string): Promise<TreeEntry | undefined> {
  const clean = path.replace(/^\/+|\/+$/g, "");
  if (SHA.test(commit)) {
    // Walk the trees from the commit, one cached object read per level.
    const o = await objectType(gitDir, commit);
    if (o !== "commit" && o !== "tree") return entryAtGit(gitDir, commit, clean);
    let tree = o === "commit" ? (await readCommit(gitDir, commit)).tree : commit;
    if (clean === "") return { mode: "040000", type: "tree", sha: tree, path: "" };
    const parts = clean.split("/");
    for (let i = 0; i < parts.length; i++) {
      const e = (await readTreeEntries(gitDir, tree)).find((x) => x.name === parts[i]);
      if (!e) return undefined;
      if (i === parts.length - 1) {
        const entry: TreeEntry = { mode: e.mode, type: typeOfMode(e.mode), sha: e.sha, path: clean };
        if (entry.type === "blob") entry.size = (await objectInfo(gitDir, e.sha))?.size;
        return entry;
      }
      if (typeOfMode(e.mode) !== "tree") return undefined;
      tree = e.sha;
    }
    return undefined;
  }
  return entryAtGit(gitDir, commit, clean);
}

async function entryAtGit(gitDir: string, commit: string, clean: string): Promise<TreeEntry | undefined> {
  if (clean === "") {
    const sha = (await git(gitDir, ["rev-parse", `${commit}^{tree}`])).trim();
    return { mode: "040000", type: "tree", sha, path: "" };
  }
  const entries = await lsTree(gitDir, commit, false, clean);
  return entries.find((e) => e.path === clean);
}

export interface TreeChange {
  path: string;
  mode?: string;
  /** undefined or null → remove the path */
  sha?: string | null;
}

/**
 * Applies changes to a base tree and writes the new trees, as `read-tree` + `update-index
 * --index-info` + `write-tree` would: a blob at a path replaces whatever is there (a file where a
 * folder was and the reverse), removing a path removes everything below it, and folders left
 * empty disappear.
 */
export async function buildTree(gitDir: string, baseTree: string | undefined, changes: TreeChange[]): Promise<string> {
  interface Node {
    entries: Map<string, { mode: string; sha: string } | Node>;
  }
  const isNode = (x: unknown): x is Node => typeof x === "object" && x !== null && "entries" in x;
  const load = async (sha: string | undefined): Promise<Node> => {
    const node: Node = { entries: new Map() };
    if (sha) for (const e of await readTreeEntries(gitDir, sha)) node.entries.set(e.name, { mode: e.mode, sha: e.sha });
    return node;
  };
  const root = await load(baseTree);
  const child = async (node: Node, name: string, create: boolean): Promise<Node | undefined> => {
    const cur = node.entries.get(name);
    if (isNode(cur)) return cur;
    if (cur && cur.mode === "040000") {
      const n = await load(cur.sha);
      node.entries.set(name, n);
      return n;
    }
    if (!create) return undefined;
    const n: Node = { entries: new Map() };
    node.entries.set(name, n);
    return n;
  };
  for (const c of changes) {
    const parts = c.path
      .replace(/^\/+|\/+$/g, "")
      .split("/")
      .filter(Boolean);
    if (!parts.length) continue;
    // git refuses these paths in an index ("invalid path"), so the tree never holds them.
    if (parts.some((p) => p === "." || p === ".." || p.toLowerCase() === ".git" || p.includes("\0")))
      throw new GitError(`error: invalid path '${c.path}'`, ["update-index", "--index-info"], 128, `error: invalid path '${c.path}'`);
    let node: Node | undefined = root;
    for (const p of parts.slice(0, -1)) {
      node = await child(node, p, !!c.sha);
      if (!node) break;
    }
    if (!node) continue;
    const leaf = parts.at(-1)!;
    if (c.sha) {
      const mode = (c.mode ?? "100644").padStart(6, "0");
      if (mode === "040000") node.entries.set(leaf, await load(c.sha));
      else node.entries.set(leaf, { mode, sha: c.sha });
    } else node.entries.delete(leaf);
  }
  const write = async (node: Node): Promise<string | undefined> => {
    const out: RawTreeEntry[] = [];
    for (const [name, e] of node.entries) {
      if (isNode(e)) {
        const sha = await write(e);
        if (sha) out.push({ mode: "040000", name, sha });
      } else out.push({ mode: e.mode, name, sha: e.sha });
    }
    if (!out.length && node !== root) return undefined;
    return writeObject(gitDir, "tree", serializeTree(out));
  };
  return (await write(root))!;
}

/** Writes the tree of a working folder (all files, .git excluded). */
export async function treeFromFolder(gitDir: string, folder: string): Promise<string> {
  const tmp = mkdtempSync(join(tmpdir(), "forge-sim-index-"));
  const env = { GIT_INDEX_FILE: join(tmp, "index"), GIT_WORK_TREE: folder };
  try {
    await runGit(gitDir, ["add", "-A", "--force", "."], { env: { ...env } });
    return (await git(gitDir, ["write-tree"], undefined, env)).trim();
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
