// Refs of the local GitHub's bare repositories: read from the ref files as git writes them, listed,
// resolved to commits, updated and deleted atomically by git.
import type { Dirent } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { runGit, SHA } from "./run.js";
import { objectType } from "./store.js";

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

/** Whether git takes `ref` as a full ref name (`git check-ref-format`: no `..`, no component ending in `.lock`, …). */
export async function validRefName(gitDir: string, ref: string): Promise<boolean> {
  const r = await runGit(gitDir, ["check-ref-format", ref], { allowFail: true });
  return r.code === 0;
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
