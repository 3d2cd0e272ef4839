// Thin, promise-based access to the simulator's bare repositories through the git CLI.
//
// Every REST operation that touches repository content is answered from a real bare repository,
// so what Forge reads over the API and what a runner clones over HTTP are the same objects.
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface GitIdentity {
  name: string;
  email: string;
  /** ISO-8601 date */
  date: string;
}

export class GitError extends Error {
  constructor(
    message: string,
    readonly code: number | null,
    readonly stderr: string,
  ) {
    super(message);
  }
}

const baseEnv = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_TERMINAL_PROMPT: "0",
  LC_ALL: "C",
  HOME: tmpdir(),
};

const SHA = /^[0-9a-f]{40}$/;
const cache = new Map<string, Promise<unknown>>();

/**
 * Git objects are immutable, so any answer computed only from full object ids can be kept. This
 * spares the many git processes pull request payloads and webhooks would otherwise spawn.
 */
function memo<T>(gitDir: string, op: string, ids: string[], extra: string, fn: () => Promise<T>): Promise<T> {
  if (!ids.every((id) => SHA.test(id))) return fn();
  const key = `${gitDir}\0${op}\0${ids.join(",")}\0${extra}`;
  const hit = cache.get(key) as Promise<T> | undefined;
  if (hit) return hit;
  if (cache.size > 20_000) cache.clear();
  const p = fn();
  cache.set(key, p);
  p.catch(() => cache.delete(key));
  return p;
}

export function runGit(
  gitDir: string,
  args: string[],
  opts: { input?: string | Buffer; env?: Record<string, string>; allowFail?: boolean; encoding?: "buffer" } = {},
): Promise<{ stdout: Buffer; stderr: string; code: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", args, { env: { ...baseEnv, GIT_DIR: gitDir, ...opts.env } });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (d: Buffer) => out.push(d));
    child.stderr.on("data", (d: Buffer) => err.push(d));
    child.on("error", reject);
    child.on("close", (code) => {
      const stdout = Buffer.concat(out);
      const stderr = Buffer.concat(err).toString("utf8");
      if (code !== 0 && !opts.allowFail) reject(new GitError(`git ${args.join(" ")} failed: ${stderr.trim()}`, code, stderr));
      else resolve({ stdout, stderr, code: code ?? -1 });
    });
    child.stdin.on("error", () => undefined);
    if (opts.input !== undefined) child.stdin.end(opts.input);
    else child.stdin.end();
  });
}

async function git(gitDir: string, args: string[], input?: string | Buffer, env?: Record<string, string>): Promise<string> {
  const r = await runGit(gitDir, args, { input, env });
  return r.stdout.toString("utf8");
}

export function initBare(dir: string, defaultBranch: string): Promise<void> {
  return new Promise((resolve, reject) =>
    execFile("git", ["init", "--bare", "--quiet", `--initial-branch=${defaultBranch}`, dir], { env: baseEnv }, (e) => {
      if (e) return reject(e);
      // Pushes over smart HTTP need receive-pack enabled; the simulator authenticates itself.
      runGit(dir, ["config", "http.receivepack", "true"]).then(() => resolve(), reject);
    }),
  );
}

export async function resolveRef(gitDir: string, ref: string): Promise<string | undefined> {
  const r = await runGit(gitDir, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], { allowFail: true });
  return r.code === 0 ? r.stdout.toString().trim() : undefined;
}

export async function objectType(gitDir: string, sha: string): Promise<string | undefined> {
  if (!/^[0-9a-f]{4,40}$/.test(sha)) return undefined;
  const key = `${gitDir}\0type\0${sha}`;
  const hit = cache.get(key) as Promise<string> | undefined;
  if (hit) return hit;
  const r = await runGit(gitDir, ["cat-file", "-t", sha], { allowFail: true });
  if (r.code !== 0) return undefined; // absent now, maybe written later: not cached
  const type = r.stdout.toString().trim();
  if (SHA.test(sha)) cache.set(key, Promise.resolve(type));
  return type;
}

export async function listRefs(gitDir: string, prefix = "refs/"): Promise<Map<string, string>> {
  const out = await git(gitDir, ["for-each-ref", "--format=%(refname) %(objectname)", prefix]);
  const refs = new Map<string, string>();
  for (const line of out.split("\n")) {
    const [name, sha] = line.split(" ");
    if (name && sha) refs.set(name, sha);
  }
  return refs;
}

/** Atomic compare-and-swap of a ref (old = undefined → must not exist; "" → any). */
export async function updateRef(gitDir: string, ref: string, sha: string, old?: string): Promise<boolean> {
  const args = ["update-ref", ref, sha];
  if (old !== "") args.push(old ?? "0".repeat(40));
  const r = await runGit(gitDir, args, { allowFail: true });
  return r.code === 0;
}

export async function deleteRef(gitDir: string, ref: string, old?: string): Promise<boolean> {
  const r = await runGit(gitDir, ["update-ref", "-d", ref, ...(old ? [old] : [])], { allowFail: true });
  return r.code === 0;
}

export async function hashBlob(gitDir: string, content: Buffer): Promise<string> {
  return (await git(gitDir, ["hash-object", "-w", "--stdin"], content)).trim();
}

export async function readBlob(gitDir: string, sha: string): Promise<Buffer> {
  return memo(gitDir, "blob", [sha], "", async () => (await runGit(gitDir, ["cat-file", "blob", sha])).stdout);
}

export interface TreeEntry {
  mode: string;
  type: "blob" | "tree" | "commit";
  sha: string;
  path: string;
  size?: number;
}

export async function lsTree(gitDir: string, treeish: string, recursive = false, path?: string): Promise<TreeEntry[]> {
  return memo(gitDir, "ls-tree", [treeish], `${recursive}\0${path ?? ""}`, () => lsTreeUncached(gitDir, treeish, recursive, path));
}

async function lsTreeUncached(gitDir: string, treeish: string, recursive: boolean, path?: string): Promise<TreeEntry[]> {
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
  if (clean === "") {
    const sha = (await git(gitDir, ["rev-parse", `${commit}^{tree}`])).trim();
    return { mode: "040000", type: "tree", sha, path: "" };
  }
  const entries = await lsTree(gitDir, commit, false, clean);
  return entries.find((e) => e.path === clean);
}

export interface CommitInfo {
  sha: string;
  tree: string;
  parents: string[];
  author: GitIdentity;
  committer: GitIdentity;
  message: string;
}

function parseIdent(line: string): GitIdentity {
  const m = /^(.*) <(.*)> (\d+) ([+-]\d{4})$/.exec(line);
  if (!m) return { name: line, email: "", date: new Date(0).toISOString() };
  return { name: m[1]!, email: m[2]!, date: new Date(Number(m[3]) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z") };
}

export async function readCommit(gitDir: string, sha: string): Promise<CommitInfo> {
  return memo(gitDir, "commit", [sha], "", () => readCommitUncached(gitDir, sha));
}

async function readCommitUncached(gitDir: string, sha: string): Promise<CommitInfo> {
  const raw = await git(gitDir, ["cat-file", "commit", sha]);
  const split = raw.indexOf("\n\n");
  const header = raw.slice(0, split);
  const message = raw.slice(split + 2);
  const info: CommitInfo = { sha, tree: "", parents: [], message, author: parseIdent(""), committer: parseIdent("") };
  for (const line of header.split("\n")) {
    const sp = line.indexOf(" ");
    const k = line.slice(0, sp);
    const v = line.slice(sp + 1);
    if (k === "tree") info.tree = v;
    else if (k === "parent") info.parents.push(v);
    else if (k === "author") info.author = parseIdent(v);
    else if (k === "committer") info.committer = parseIdent(v);
  }
  return info;
}

function identEnv(prefix: "AUTHOR" | "COMMITTER", id: GitIdentity): Record<string, string> {
  return {
    [`GIT_${prefix}_NAME`]: id.name,
    [`GIT_${prefix}_EMAIL`]: id.email,
    [`GIT_${prefix}_DATE`]: id.date,
  };
}

export async function commitTree(
  gitDir: string,
  tree: string,
  parents: string[],
  message: string,
  author: GitIdentity,
  committer: GitIdentity,
): Promise<string> {
  const args = ["commit-tree", tree, ...parents.flatMap((p) => ["-p", p])];
  return (await git(gitDir, args, message, { ...identEnv("AUTHOR", author), ...identEnv("COMMITTER", committer) })).trim();
}

export interface TreeChange {
  path: string;
  mode?: string;
  /** undefined or null → remove the path */
  sha?: string | null;
}

/** Applies changes to a base tree through a throwaway index and writes the new tree. */
export async function buildTree(gitDir: string, baseTree: string | undefined, changes: TreeChange[]): Promise<string> {
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

export async function isAncestor(gitDir: string, ancestor: string, descendant: string): Promise<boolean> {
  return memo(gitDir, "is-ancestor", [ancestor, descendant], "", async () => {
    const r = await runGit(gitDir, ["merge-base", "--is-ancestor", ancestor, descendant], { allowFail: true });
    return r.code === 0;
  });
}


export async function mergeBase(gitDir: string, a: string, b: string): Promise<string | undefined> {
  return memo(gitDir, "merge-base", [a, b], "", () => mergeBaseUncached(gitDir, a, b));
}

async function mergeBaseUncached(gitDir: string, a: string, b: string): Promise<string | undefined> {
  const r = await runGit(gitDir, ["merge-base", a, b], { allowFail: true });
  return r.code === 0 ? r.stdout.toString().trim() : undefined;
}

/** Three-way merge without a work tree; returns the merged tree or undefined on conflict. */
export async function mergeTrees(gitDir: string, ours: string, theirs: string): Promise<string | undefined> {
  return memo(gitDir, "merge-tree", [ours, theirs], "", () => mergeTreesUncached(gitDir, ours, theirs));
}

async function mergeTreesUncached(gitDir: string, ours: string, theirs: string): Promise<string | undefined> {
  const r = await runGit(gitDir, ["merge-tree", "--write-tree", "--no-messages", ours, theirs], { allowFail: true });
  if (r.code === 0) return r.stdout.toString().split("\n")[0]!.trim();
  if (r.code === 1) return undefined;
  throw new GitError(`git merge-tree failed: ${r.stderr}`, r.code, r.stderr);
}

/** Commits reachable from `head` and not from `base`, oldest first. */
export async function revList(gitDir: string, base: string | undefined, head: string, limit = 250): Promise<string[]> {
  const range = base ? [`${base}..${head}`] : [head];
  const out = await git(gitDir, ["rev-list", "--reverse", `--max-count=${limit}`, ...range]);
  return out.split("\n").filter(Boolean);
}

export async function countCommits(gitDir: string, base: string, head: string): Promise<number> {
  return memo(gitDir, "count", [base, head], "", async () => Number((await git(gitDir, ["rev-list", "--count", `${base}..${head}`])).trim()));
}

export interface FileDiff {
  filename: string;
  previous_filename?: string;
  status: "added" | "removed" | "modified" | "renamed" | "copied" | "changed" | "unchanged";
  additions: number;
  deletions: number;
  sha: string;
  patch?: string;
}

/** Per-file diff between two commits (as GitHub's compare and pull files report it). */
export async function diffFiles(gitDir: string, base: string, head: string, withPatch = true): Promise<FileDiff[]> {
  const files = await memo(gitDir, "diff", [base, head], String(withPatch), () => diffFilesUncached(gitDir, base, head, withPatch));
  return files.map((f) => ({ ...f }));
}

async function diffFilesUncached(gitDir: string, base: string, head: string, withPatch: boolean): Promise<FileDiff[]> {
  const numstat = await git(gitDir, ["diff", "--numstat", "-z", "--no-renames", base, head]);
  const raw = await git(gitDir, ["diff", "--raw", "-z", "--no-renames", "--no-abbrev", base, head]);
  const stats = new Map<string, [number, number]>();
  const parts = numstat.split("\0").filter(Boolean);
  for (const p of parts) {
    const [a, d, ...name] = p.split("\t");
    stats.set(name.join("\t"), [a === "-" ? 0 : Number(a), d === "-" ? 0 : Number(d)]);
  }
  // One diff for every file's patch, split at each file's header.
  const patches = new Map<string, string>();
  if (withPatch) {
    const full = await git(gitDir, ["diff", "--no-color", "--no-renames", "-U3", base, head]);
    for (const chunk of full.split(/^(?=diff --git )/m)) {
      const lines = chunk.split("\n");
      const m = /^diff --git a\/(.*) b\/(.*)$/.exec(lines[0] ?? "");
      if (!m) continue;
      const at = lines.findIndex((l) => l.startsWith("@@"));
      patches.set(m[2]!, at < 0 ? "" : lines.slice(at).join("\n").replace(/\n$/, ""));
    }
  }
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

/** Commits between two tips for push payloads (newest last), at most 20 as GitHub sends. */
export async function pushCommits(gitDir: string, before: string | undefined, after: string): Promise<CommitInfo[]> {
  const shas = await revList(gitDir, before && !/^0+$/.test(before) ? before : undefined, after, 20);
  return Promise.all(shas.map((s) => readCommit(gitDir, s)));
}

export async function changedPaths(gitDir: string, parent: string | undefined, sha: string): Promise<{ added: string[]; removed: string[]; modified: string[] }> {
  const r = await memo(gitDir, "changed", parent ? [parent, sha] : [sha], "", () => changedPathsUncached(gitDir, parent, sha));
  return { added: [...r.added], removed: [...r.removed], modified: [...r.modified] };
}

async function changedPathsUncached(gitDir: string, parent: string | undefined, sha: string): Promise<{ added: string[]; removed: string[]; modified: string[] }> {
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
