// Thin, promise-based access to the simulator's bare repositories through the git CLI.
//
// Every REST operation that touches repository content is answered from a real bare repository,
// so what Forge reads over the API and what a runner clones over HTTP are the same objects.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, type Dirent } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GitError } from "../core/git-error.js";
import { spawnGit } from "./spawner.js";
import { objectInfo, parseTree, readObject, serializeTree, typeOfMode, writeObject, type RawTreeEntry } from "./objects.js";

export { closeReaders } from "./objects.js";

export interface GitIdentity {
  name: string;
  email: string;
  /** ISO-8601 date */
  date: string;
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

/** git processes spawned so far, by subcommand (for benchmarks) */
export const gitProcesses = new Map<string, number>();

export async function runGit(
  gitDir: string,
  args: string[],
  opts: { input?: string | Buffer; env?: Record<string, string>; allowFail?: boolean; encoding?: "buffer" } = {},
): Promise<{ stdout: Buffer; stderr: string; code: number }> {
  gitProcesses.set(args[0]!, (gitProcesses.get(args[0]!) ?? 0) + 1);
  const r = await spawnGit(baseEnv, args, { GIT_DIR: gitDir, ...opts.env }, opts.input);
  if (r.code !== 0 && !opts.allowFail) throw new GitError(`git ${args.join(" ")} failed: ${r.stderr.trim()}`, args, r.code, r.stderr);
  return r;
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

/**
 * The id a full ref name points at, read from the ref files as git writes them (a loose ref file,
 * else packed-refs); undefined when absent or symbolic. Both files are replaced by rename, so a
 * read sees the old or the new value, never a torn one.
 */
export async function readRefFile(gitDir: string, ref: string): Promise<string | undefined> {
  if (!/^refs\/[^\0\s]+$/.test(ref) || ref.split("/").some((p) => p === "" || p === "." || p === "..")) return undefined;
  try {
    const v = (await readFile(join(gitDir, ref), "utf8")).trim();
    return SHA.test(v) ? v : undefined;
  } catch (e) {
    if (
      (e as NodeJS.ErrnoException).code !== "ENOENT" &&
      (e as NodeJS.ErrnoException).code !== "ENOTDIR" &&
      (e as NodeJS.ErrnoException).code !== "EISDIR"
    )
      throw e;
  }
  try {
    const packed = await readFile(join(gitDir, "packed-refs"), "utf8");
    for (const line of packed.split("\n")) if (line.endsWith(` ${ref}`) && SHA.test(line.slice(0, 40))) return line.slice(0, 40);
  } catch {
    // no packed-refs
  }
  return undefined;
}

export async function resolveRef(gitDir: string, ref: string): Promise<string | undefined> {
  if (ref.startsWith("refs/heads/")) {
    // Branches point at commits; a full branch name is read without a process.
    const sha = await readRefFile(gitDir, ref);
    if (sha && (await objectType(gitDir, sha)) === "commit") return sha;
    if (sha) return undefined;
    // absent as a file: fall through (git decides, e.g. for names git would refuse)
  }
  const r = await runGit(gitDir, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], { allowFail: true });
  return r.code === 0 ? r.stdout.toString().trim() : undefined;
}

export async function objectType(gitDir: string, sha: string): Promise<string | undefined> {
  if (!/^[0-9a-f]{4,40}$/.test(sha)) return undefined;
  const key = `${gitDir}\0type\0${sha}`;
  const hit = cache.get(key) as Promise<string> | undefined;
  if (hit) return hit;
  const info = await objectInfo(gitDir, sha);
  if (!info) return undefined; // absent now, maybe written later: not cached
  const type = info.type;
  if (SHA.test(sha)) cache.set(key, Promise.resolve(type));
  return type;
}

/**
 * `git for-each-ref <prefix>` read from the ref files: loose refs (skipping lock files) over
 * packed-refs, sorted by name; a prefix matches whole path components, as git's patterns do.
 */
export async function listRefs(gitDir: string, prefix = "refs/"): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  try {
    const packed = await readFile(join(gitDir, "packed-refs"), "utf8");
    for (const line of packed.split("\n")) {
      if (SHA.test(line.slice(0, 40)) && line[40] === " ") found.set(line.slice(41).trim(), line.slice(0, 40));
    }
  } catch {
    // no packed-refs
  }
  const walk = async (rel: string): Promise<void> => {
    let names: Dirent[];
    try {
      names = await readdir(join(gitDir, rel), { withFileTypes: true });
    } catch {
      return; // removed meanwhile
    }
    await Promise.all(
      names.map(async (d) => {
        const name = `${rel}/${d.name}`;
        if (d.isDirectory()) return walk(name);
        if (d.name.endsWith(".lock")) return;
        try {
          const v = (await readFile(join(gitDir, name), "utf8")).trim();
          if (SHA.test(v)) found.set(name, v);
        } catch {
          // deleted meanwhile
        }
      }),
    );
  };
  await walk("refs");
  const want = (n: string) => n === prefix || n.startsWith(prefix.endsWith("/") ? prefix : `${prefix}/`);
  return new Map([...found].filter(([n]) => want(n)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export async function listRefsWithGit(gitDir: string, prefix = "refs/"): Promise<Map<string, string>> {
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
  return writeObject(gitDir, "blob", content);
}

/** Reads an object of the given type (peeling commits to trees when a tree is asked for). */
async function readTyped(gitDir: string, name: string, type: "blob" | "tree" | "commit"): Promise<Buffer> {
  const o = await readObject(gitDir, name);
  if (!o)
    throw new GitError(`git cat-file ${type} ${name} failed: fatal: Not a valid object name ${name}`, ["cat-file", type, name], 128, "");
  if (o.type === type) return o.body;
  if (type === "tree" && o.type === "commit") return readTyped(gitDir, parseCommit(name, o.body.toString("utf8")).tree, "tree");
  throw new GitError(`git cat-file ${type} ${name} failed: fatal: ${name} is a ${o.type}`, ["cat-file", type, name], 128, "");
}

export async function readBlob(gitDir: string, sha: string): Promise<Buffer> {
  return memo(gitDir, "blob", [sha], "", () => readTyped(gitDir, sha, "blob"));
}

async function readTreeEntries(gitDir: string, sha: string): Promise<RawTreeEntry[]> {
  return memo(gitDir, "tree", [sha], "", async () => parseTree(await readTyped(gitDir, sha, "tree")));
}

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
  return parseCommit(sha, (await readTyped(gitDir, sha, "commit")).toString("utf8"));
}

function parseCommit(sha: string, raw: string): CommitInfo {
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

/** ` <epoch> <±hhmm>` of an ISO-8601 date with a zone, as git reads it; undefined otherwise. */
function gitDate(iso: string): string | undefined {
  const m = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(Z|([+-])(\d\d):?(\d\d))$/.exec(iso);
  const ms = Date.parse(iso);
  if (!m || Number.isNaN(ms)) return undefined;
  const tz = m[1] === "Z" ? "+0000" : `${m[2]}${m[3]}${m[4]}`;
  return `${Math.floor(ms / 1000)} ${tz}`;
}

/** `name <email> epoch tz` when git would write exactly these values (no characters it strips). */
function identLine(id: GitIdentity): string | undefined {
  const isCrud = (ch: string) => ch.charCodeAt(0) <= 32 || ".,:;<>\"\\'".includes(ch);
  const clean = (v: string) => v !== "" && !isCrud(v[0]!) && !isCrud(v.at(-1)!) && !/[<>\n]/.test(v);
  const date = gitDate(id.date);
  if (!date || !clean(id.name) || !clean(id.email)) return undefined;
  return `${id.name} <${id.email}> ${date}`;
}

/**
 * Writes a commit object as `git commit-tree` does; values git would rewrite (crud in names,
 * dates without a zone) and missing trees or parents are left to git itself.
 */
export async function commitTree(
  gitDir: string,
  tree: string,
  parents: string[],
  message: string,
  author: GitIdentity,
  committer: GitIdentity,
): Promise<string> {
  const a = identLine(author);
  const c = identLine(committer);
  if (a && c && SHA.test(tree) && parents.every((p) => SHA.test(p))) {
    const types = await Promise.all([objectType(gitDir, tree), ...parents.map((p) => objectType(gitDir, p))]);
    if (types[0] === "tree" && types.slice(1).every((t) => t === "commit")) {
      const head = [`tree ${tree}`, ...parents.map((p) => `parent ${p}`), `author ${a}`, `committer ${c}`].join("\n");
      return writeObject(gitDir, "commit", Buffer.from(`${head}\n\n${message}`, "utf8"));
    }
  }
  return commitTreeWithGit(gitDir, tree, parents, message, author, committer);
}

async function commitTreeWithGit(
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

/** Applies changes to a base tree through a throwaway index and writes the new tree. */
export async function buildTreeWithIndex(gitDir: string, baseTree: string | undefined, changes: TreeChange[]): Promise<string> {
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

async function mergeBaseGit(gitDir: string, a: string, b: string): Promise<string | undefined> {
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
  return mb ? diffFiles(gitDir, mb, p.headSha, withPatch) : [];
}

/** Per-file diff between two commits (as GitHub's compare and pull files report it). */
export async function diffFiles(gitDir: string, base: string, head: string, withPatch = true): Promise<FileDiff[]> {
  const files = await memo(gitDir, "diff", [base, head], String(withPatch), () => diffFilesUncached(gitDir, base, head, withPatch));
  return files.map((f) => ({ ...f }));
}

const RAW = /^:\d{6} \d{6} [0-9a-f]{40} ([0-9a-f]{40}) ([A-Z])\d*$/;
const NUMSTAT = /^(\d+|-)\t(\d+|-)\t([^]*)$/;

/**
 * Per-file statuses and line counts from one `git diff-tree` (plumbing: outside a repository it
 * fails, where porcelain `git diff` would silently compare paths on disk), plus one for patches.
 */
async function diffFilesUncached(gitDir: string, base: string, head: string, withPatch: boolean): Promise<FileDiff[]> {
  const [out, full] = await Promise.all([
    git(gitDir, ["diff-tree", "-r", "-z", "--no-renames", "--no-abbrev", "--raw", "--numstat", base, head]),
    withPatch ? git(gitDir, ["diff-tree", "-r", "--no-renames", "-p", "-U3", base, head]) : Promise.resolve(""),
  ]);
  const stats = new Map<string, [number, number]>();
  const raws: Array<{ name: string; sha: string; st: string }> = [];
  const items = out.split("\0");
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    const r = RAW.exec(item);
    if (r && i + 1 < items.length) {
      raws.push({ name: items[++i]!, sha: r[1]!, st: r[2]! });
      continue;
    }
    const n = NUMSTAT.exec(item);
    if (n) stats.set(n[3]!, [n[1] === "-" ? 0 : Number(n[1]), n[2] === "-" ? 0 : Number(n[2])]);
  }
  const patches = new Map<string, string>();
  for (const chunk of full.split(/^(?=diff --git )/m)) {
    const lines = chunk.split("\n");
    const m = /^diff --git a\/(.*) b\/(.*)$/.exec(lines[0] ?? "");
    if (!m) continue;
    const at = lines.findIndex((l) => l.startsWith("@@"));
    patches.set(m[2]!, at < 0 ? "" : lines.slice(at).join("\n").replace(/\n$/, ""));
  }
  return raws.map(({ name, sha, st }) => {
    const [additions, deletions] = stats.get(name) ?? [0, 0];
    const status = st === "A" ? "added" : st === "D" ? "removed" : "modified";
    const entry: FileDiff = { filename: name, status, additions, deletions, sha: status === "removed" ? "0".repeat(40) : sha };
    if (withPatch) entry.patch = patches.get(name) ?? "";
    return entry;
  });
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

async function changedPathsGit(
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
