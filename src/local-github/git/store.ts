// Objects of the local GitHub's bare repositories, read through the batch readers: an object's
// type, blobs (and writing them), the entries of trees, commits parsed.
import { GitError } from "../../core/git-error.js";
import { objectInfo, parseTree, readObject, writeObject, type RawTreeEntry } from "../objects.js";
import { splitSignature } from "../signing.js";
import { cache, memo, SHA } from "./run.js";

export interface GitIdentity {
  name: string;
  email: string;
  /** ISO-8601 date */
  date: string;
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

export async function readTreeEntries(gitDir: string, sha: string): Promise<RawTreeEntry[]> {
  return memo(gitDir, "tree", [sha], "", async () => parseTree(await readTyped(gitDir, sha, "tree")));
}

export interface CommitInfo {
  sha: string;
  tree: string;
  parents: string[];
  author: GitIdentity;
  committer: GitIdentity;
  message: string;
  /** its `gpgsig` signature and the payload it signs, when it carries one */
  signed?: { signature: string; payload: string };
}

function parseIdent(line: string): GitIdentity {
  const m = /^(.*) <(.*)> (\d+) ([+-]\d{4})$/.exec(line);
  if (!m) return { name: line, email: "", date: new Date(0).toISOString() };
  return { name: m[1]!, email: m[2]!, date: new Date(Number(m[3]) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z") };
}

/** A commit object's text as stored (its signature included). */
export async function readCommitRaw(gitDir: string, sha: string): Promise<string> {
  return memo(gitDir, "commit-raw", [sha], "", async () => (await readTyped(gitDir, sha, "commit")).toString("utf8"));
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
  const signed = splitSignature(raw);
  if (signed) info.signed = signed;
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
