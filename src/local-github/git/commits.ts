// Commits written in the local GitHub's bare repositories: in process, as `git commit-tree` would,
// or by git itself when it would rewrite the values.
import { writeObject } from "../objects.js";
import { signatureHeader } from "../signing.js";
import { git, SHA } from "./run.js";
import { objectType, type GitIdentity } from "./store.js";

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

/** Signs a commit's payload (the object without its signature): GitHub's own signature (../signing.ts). */
export type CommitSign = (payload: string) => string;

/** The commit object with `sign`'s signature of its payload in a `gpgsig` header, after the committer. */
function signed(head: string, message: string, sign: CommitSign): string {
  return `${head}\n${signatureHeader(sign(`${head}\n\n${message}`))}\n\n${message}`;
}

/**
 * Writes a commit object as `git commit-tree` does; values git would rewrite (crud in names,
 * dates without a zone) and missing trees or parents are left to git itself. With `sign`, the
 * commit carries its signature (GitHub signs the commits it creates).
 */
export async function commitTree(
  gitDir: string,
  tree: string,
  parents: string[],
  message: string,
  author: GitIdentity,
  committer: GitIdentity,
  sign?: CommitSign,
): Promise<string> {
  const a = identLine(author);
  const c = identLine(committer);
  if (a && c && SHA.test(tree) && parents.every((p) => SHA.test(p))) {
    const types = await Promise.all([objectType(gitDir, tree), ...parents.map((p) => objectType(gitDir, p))]);
    if (types[0] === "tree" && types.slice(1).every((t) => t === "commit")) {
      const head = [`tree ${tree}`, ...parents.map((p) => `parent ${p}`), `author ${a}`, `committer ${c}`].join("\n");
      return writeObject(gitDir, "commit", Buffer.from(sign ? signed(head, message, sign) : `${head}\n\n${message}`, "utf8"));
    }
  }
  const sha = await commitTreeWithGit(gitDir, tree, parents, message, author, committer);
  if (!sign) return sha;
  // git wrote the values as it reads them: that commit, signed.
  const raw = await git(gitDir, ["cat-file", "commit", sha]);
  const split = raw.indexOf("\n\n");
  return writeObject(gitDir, "commit", Buffer.from(signed(raw.slice(0, split), raw.slice(split + 2), sign), "utf8"));
}

export async function commitTreeWithGit(
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
