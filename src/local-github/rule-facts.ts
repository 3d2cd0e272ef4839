// What the commits of a ref write are, as the repository's rules look at them: the commits the write
// brings (those the ref did not have — for a new ref, those no ref had), each with its signature
// checked, its author's and committer's addresses, its message and the files it adds or changes
// with their sizes. Read by git itself with the environment given, so a push's objects are read in
// the quarantine its pre-receive hook sees (`GIT_OBJECT_DIRECTORY`, `GIT_ALTERNATE_OBJECT_DIRECTORIES`)
// as well as in the repository.
import picomatch from "picomatch";
import { runGit } from "./git/run.js";
import type { CommitSigner } from "./signing.js";

/** A repository as the rules read it: its git directory, and the environment that shows a push's objects. */
export interface GitView {
  gitDir: string;
  env?: Record<string, string>;
}

export interface CommitFacts {
  sha: string;
  parents: number;
  authorEmail: string;
  committerEmail: string;
  message: string;
  /** it carries GitHub's own signature (./signing.ts) */
  verified: boolean;
}

export interface FileFacts {
  /** the first new commit that adds or changes it */
  sha: string;
  path: string;
  /** bytes; undefined for a submodule */
  size: number | undefined;
}

/** How many commits of one write the rules look at (a push of a whole history is judged by its newest). */
const COMMITS_CHECKED = 1000;

async function gitOut(view: GitView, args: string[], input?: string): Promise<string> {
  const r = await runGit(view.gitDir, args, { ...(input !== undefined ? { input } : {}), ...(view.env ? { env: view.env } : {}) });
  return r.stdout.toString("utf8");
}

/** Whether `ancestor` is an ancestor of `descendant` (a write that fast-forwards). */
export async function isAncestorIn(view: GitView, ancestor: string, descendant: string): Promise<boolean> {
  const r = await runGit(view.gitDir, ["merge-base", "--is-ancestor", ancestor, descendant], {
    allowFail: true,
    ...(view.env ? { env: view.env } : {}),
  });
  return r.code === 0;
}

/** Whether the commits `after` brings over `before` (for a new ref: over every ref) include a merge commit. */
export async function bringsMergeCommitsIn(view: GitView, before: string | null, after: string): Promise<boolean> {
  const range = before ? [after, `^${before}`] : [after, "--not", "--all"];
  return (await gitOut(view, ["rev-list", "--min-parents=2", "--max-count=1", ...range])).trim() !== "";
}

/** The commits a write of `after` over `before` brings, oldest first (for a new ref: those on no ref). */
export async function newCommits(view: GitView, before: string | null, after: string): Promise<string[]> {
  const range = before ? [after, `^${before}`] : [after, "--not", "--all"];
  const out = await gitOut(view, ["rev-list", "--reverse", `--max-count=${COMMITS_CHECKED}`, ...range]);
  return out.split("\n").filter(Boolean);
}

/** Parses the objects `git cat-file --batch` prints: `<sha> <type> <size>\n<body>\n`, one after another. */
function batchObjects(out: Buffer): Map<string, string> {
  const objects = new Map<string, string>();
  let at = 0;
  while (at < out.length) {
    const nl = out.indexOf(10, at);
    if (nl < 0) break;
    const [sha, type, size] = out.subarray(at, nl).toString("utf8").split(" ");
    if (type === "missing" || size === undefined) {
      at = nl + 1;
      continue;
    }
    const end = nl + 1 + Number(size);
    objects.set(sha!, out.subarray(nl + 1, end).toString("utf8"));
    at = end + 1;
  }
  return objects;
}

/** The facts of each commit, in the order given. */
export async function commitFacts(view: GitView, shas: readonly string[], signer: CommitSigner): Promise<CommitFacts[]> {
  if (!shas.length) return [];
  const r = await runGit(view.gitDir, ["cat-file", "--batch"], { input: `${shas.join("\n")}\n`, ...(view.env ? { env: view.env } : {}) });
  const raw = batchObjects(r.stdout);
  return shas.map((sha) => {
    const text = raw.get(sha) ?? "";
    const split = text.indexOf("\n\n");
    const header = split < 0 ? text : text.slice(0, split);
    const email = (key: string) => new RegExp(`^${key} .* <([^>]*)> \\d+ [+-]\\d{4}$`, "m").exec(header)?.[1] ?? "";
    return {
      sha,
      parents: (header.match(/^parent /gm) ?? []).length,
      authorEmail: email("author"),
      committerEmail: email("committer"),
      message: split < 0 ? "" : text.slice(split + 2),
      verified: signer.verify(text).verified,
    };
  });
}

/** The files the commits add or change (against their first parent; merge commits' own changes are not listed), with their sizes. */
export async function fileFacts(view: GitView, shas: readonly string[]): Promise<FileFacts[]> {
  if (!shas.length) return [];
  const out = await gitOut(view, ["diff-tree", "-r", "-z", "--root", "--no-renames", "--stdin"], `${shas.join("\n")}\n`);
  const files: Array<{ sha: string; path: string; blob: string; mode: string }> = [];
  const tokens = out.split("\0");
  let commit = "";
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (/^[0-9a-f]{40}$/.test(t)) commit = t;
    else if (t.startsWith(":")) {
      const [, mode, , blob, status] = t.slice(1).split(" ");
      const path = tokens[++i] ?? "";
      if (status !== "D" && !files.some((f) => f.path === path && f.blob === blob))
        files.push({ sha: commit, path, blob: blob!, mode: mode! });
    }
  }
  const blobs = [...new Set(files.filter((f) => f.mode !== "160000").map((f) => f.blob))];
  const sizes = new Map<string, number>();
  if (blobs.length)
    for (const line of (await gitOut(view, ["cat-file", "--batch-check"], `${blobs.join("\n")}\n`)).split("\n")) {
      const [sha, , size] = line.split(" ");
      if (sha && size) sizes.set(sha, Number(size));
    }
  return files.map((f) => ({ sha: f.sha, path: f.path, size: f.mode === "160000" ? undefined : sizes.get(f.blob) }));
}

// ---------------------------------------------------------------- metadata patterns

/** A metadata rule's parameters (commit_message_pattern and the other *_pattern rules). */
export interface PatternParams {
  name?: string;
  negate?: boolean;
  operator: "starts_with" | "ends_with" | "contains" | "regex";
  pattern: string;
}

/** Whether `value` passes the rule: the pattern matches it (does not, with `negate`). */
export function patternHolds(p: PatternParams, value: string): boolean {
  let matched: boolean;
  if (p.operator === "starts_with") matched = value.startsWith(p.pattern);
  else if (p.operator === "ends_with") matched = value.endsWith(p.pattern);
  else if (p.operator === "contains") matched = value.includes(p.pattern);
  else {
    try {
      matched = new RegExp(p.pattern, "u").test(value);
    } catch {
      matched = false; // a pattern that is no regular expression matches nothing
    }
  }
  return p.negate ? !matched : matched;
}

const OPERATOR_WORDS: Record<PatternParams["operator"], string> = {
  starts_with: "start with a matching pattern",
  ends_with: "end with a matching pattern",
  contains: "contain a matching pattern",
  regex: "match a given regex pattern",
};

const SUBJECTS: Record<string, string> = {
  commit_message_pattern: "Commit message",
  commit_author_email_pattern: "Commit author email",
  committer_email_pattern: "Committer email",
  branch_name_pattern: "Branch name",
  tag_name_pattern: "Tag name",
};

/**
 * What a refused pattern rule says: its `name` ("how this rule will appear to users") when given,
 * else `<subject> must [not] <operator>: <pattern>`.
 */
export function patternMessage(type: string, p: PatternParams): string {
  if (p.name) return p.name;
  return `${SUBJECTS[type] ?? type} must ${p.negate ? "not " : ""}${OPERATOR_WORDS[p.operator] ?? "match"}: ${p.pattern}`;
}

// ---------------------------------------------------------------- file rules (push rulesets)

/** `restricted_file_paths` are fnmatch patterns of paths from the repository's root. */
export function pathRestricted(patterns: readonly string[], path: string): boolean {
  return patterns.some((p) => picomatch.isMatch(path, p, { dot: true }));
}

/** `restricted_file_extensions`, given as `.exe`, `exe` or `*.exe`. */
export function extensionRestricted(extensions: readonly string[], path: string): boolean {
  const name = path.slice(path.lastIndexOf("/") + 1).toLowerCase();
  return extensions.some((e) => {
    const ext = e.replace(/^\*/, "").toLowerCase();
    return ext !== "" && name.endsWith(ext.startsWith(".") ? ext : `.${ext}`);
  });
}
