// hashFiles(), the expression function GitHub's runner adds (its hashFiles script, on @actions/glob):
// the SHA-256 of the SHA-256 digests of the files the patterns match under GITHUB_WORKSPACE, in the
// glob's depth-first order; '' when nothing matches. Patterns are relative to the workspace; `!`
// excludes what earlier patterns matched; a pattern matching a folder matches the files below it;
// dot files match; symbolic links are not followed into folders.
import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import picomatch from "picomatch";

interface Pattern {
  negate: boolean;
  /** The path (relative to the workspace) at or below which the pattern can match, '' for the workspace. */
  root: string;
  test: (rel: string) => boolean;
}

function compile(line: string, workspace: string): Pattern | undefined {
  let p = line.trim();
  if (p === "" || p.startsWith("#")) return undefined;
  let negate = false;
  while (p.startsWith("!")) {
    negate = !negate;
    p = p.slice(1).trim();
  }
  if (path.isAbsolute(p)) p = path.relative(workspace, p);
  p = path.posix.normalize(p.split(path.sep).join("/")).replace(/\/$/, "");
  if (p === "." || p === "") p = "**";
  const segments = p.split("/");
  const literal = segments.findIndex((s) => /[*?[]/.test(s));
  const root = (literal < 0 ? segments : segments.slice(0, literal)).join("/");
  const options = { dot: true, nobrace: true, noextglob: true, nonegate: true };
  // A pattern that matches a folder matches everything below it (@actions/glob's implicit descendants).
  const self = picomatch(p, options);
  const below = picomatch(`${p}/**`, options);
  return { negate, root, test: (rel) => self(rel) || below(rel) };
}

function matches(patterns: Pattern[], rel: string): boolean {
  let matched = false;
  for (const p of patterns) if (p.test(rel)) matched = !p.negate;
  return matched;
}

/** The file at `rel` (relative to the workspace), or the files below it depth first in the order folders list them. */
function* walk(workspace: string, rel: string): Generator<string> {
  let isDir: boolean;
  try {
    isDir = lstatSync(path.join(workspace, rel)).isDirectory();
  } catch {
    return;
  }
  if (!isDir) {
    yield rel;
    return;
  }
  for (const name of readdirSync(path.join(workspace, rel))) yield* walk(workspace, rel ? `${rel}/${name}` : name);
}

export function hashFiles(workspace: string, args: string[]): string {
  const patterns = args
    .flatMap((a) => a.split("\n"))
    .map((l) => compile(l, workspace))
    .filter((p): p is Pattern => p !== undefined);
  // Each folder a pattern can match below is searched once, in the order of the patterns; one inside another is not searched again.
  const roots: string[] = [];
  for (const p of patterns) {
    if (p.negate || p.root.startsWith("..")) continue;
    if (roots.some((r) => r === "" || p.root === r || p.root.startsWith(`${r}/`))) continue;
    roots.push(p.root);
  }
  const result = createHash("sha256");
  let count = 0;
  for (const root of roots) {
    for (const rel of walk(workspace, root)) {
      if (!matches(patterns, rel)) continue;
      result.update(
        createHash("sha256")
          .update(readFileSync(path.join(workspace, rel)))
          .digest(),
      );
      count++;
    }
  }
  return count > 0 ? result.digest("hex") : "";
}
