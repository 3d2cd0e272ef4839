// The simulator reads and writes git objects itself (batch readers, loose objects, graph walks,
// tree comparison). Each result is compared here with what the git commands it replaces answer,
// over a seeded history with branches, criss-cross merges, file/folder swaps, modes and removals.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as git from "../../src/local-github/git/index.js";
import { viaGit } from "./support/via-git.js";

let root: string;
let dir: string;
const commits: string[] = [];
const id = (n: number) => ({
  name: "Forge Test",
  email: "1+forge@users.noreply.github.com",
  date: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString().replace(/\.\d{3}Z$/, "Z"),
});

/** Deterministic PRNG (mulberry32). */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PATHS = ["a.txt", "a/b.txt", "a/c/d.txt", "a-b.txt", "a.b/x", "z", "dir/file", "dir", "x/y/z/w.md", "x/y.md", "bin/run.sh", "link"];

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "forge-sim-gittest-"));
  dir = join(root, "r.git");
  await git.initBare(dir, "main");
  const rand = rng(7);
  const tips = new Map<string, string | undefined>([
    ["main", undefined],
    ["b1", undefined],
    ["b2", undefined],
  ]);
  for (let i = 0; i < 60; i++) {
    const branch = [...tips.keys()][Math.floor(rand() * tips.size)]!;
    const tip = tips.get(branch) ?? tips.get("main");
    let parents = tip ? [tip] : [];
    let tree: string;
    const other = [...tips.values()].filter((t): t is string => !!t && t !== tip)[Math.floor(rand() * 2)];
    if (tip && other && rand() < 0.2) {
      // a merge (criss-cross merges happen as branches merge each other)
      const merged = await git.mergeTrees(dir, tip, other);
      if (!merged) continue;
      tree = merged;
      parents = [tip, other];
    } else {
      const changes: git.TreeChange[] = [];
      for (let k = 0; k < 1 + Math.floor(rand() * 3); k++) {
        const path = PATHS[Math.floor(rand() * PATHS.length)]!;
        if (rand() < 0.25) changes.push({ path, sha: null });
        else {
          const mode = path === "bin/run.sh" ? "100755" : path === "link" ? "120000" : "100644";
          changes.push({ path, mode, sha: await git.hashBlob(dir, Buffer.from(`${path} ${i} ${k}\n`)) });
        }
      }
      const base = tip ? (await git.readCommit(dir, tip)).tree : undefined;
      // Paths that are a file in one change and a folder in another are not a valid index.
      const ours = await git.buildTree(dir, base, changes).catch(() => undefined);
      const theirs = await viaGit.buildTree(dir, base, changes).catch(() => undefined);
      expect(ours, `tree of commit ${i}`).toBe(theirs);
      if (!ours) continue;
      tree = ours;
    }
    const sha = await git.commitTree(dir, tree, parents, `c${i}\n`, id(i), id(i));
    await git.updateRef(dir, `refs/heads/${branch}`, sha, "");
    tips.set(branch, sha);
    commits.push(sha);
  }
});

afterAll(() => {
  git.closeReaders(root);
  rmSync(root, { recursive: true, force: true });
});

describe("the simulator's own git reads agree with git", () => {
  it("tree listings, plain and recursive", async () => {
    for (const c of commits) {
      for (const recursive of [false, true]) {
        expect(await git.lsTree(dir, c, recursive)).toEqual(await viaGit.lsTree(dir, c, recursive));
      }
    }
  });

  it("entries at a path", async () => {
    for (const c of commits.slice(-15)) {
      for (const p of [...PATHS, "a", "a/c", "x/y", "", "missing", "a.txt/x"]) {
        const ours = await git.entryAt(dir, c, p);
        const listed = p === "" ? undefined : (await viaGit.lsTree(dir, c, false, p)).find((e) => e.path === p);
        if (p === "") expect(ours?.sha).toBe((await git.readCommit(dir, c)).tree);
        else expect(ours).toEqual(listed);
      }
    }
  });

  it("changed paths between commits", async () => {
    for (let i = 0; i < commits.length; i++) {
      const info = await git.readCommit(dir, commits[i]!);
      expect(await git.changedPaths(dir, info.parents[0], commits[i]!)).toEqual(
        await viaGit.changedPaths(dir, info.parents[0], commits[i]!),
      );
      const other = commits[(i * 7) % commits.length]!;
      expect(await git.changedPaths(dir, other, commits[i]!)).toEqual(await viaGit.changedPaths(dir, other, commits[i]!));
    }
  });

  it("file diffs with line counts and patches", async () => {
    for (let i = 1; i < commits.length; i += 2) {
      const base = commits[(i * 5) % i]!;
      for (const withPatch of [false, true])
        expect(await git.diffFiles(dir, base, commits[i]!, withPatch)).toEqual(await viaGit.diffFiles(dir, base, commits[i]!, withPatch));
    }
  });

  it("ancestry, merge bases and commit counts", async () => {
    for (let i = 0; i < commits.length; i += 3) {
      for (let j = 0; j < commits.length; j += 4) {
        const a = commits[i]!;
        const b = commits[j]!;
        expect(await git.isAncestor(dir, a, b)).toBe(await viaGit.isAncestor(dir, a, b));
        const ours = await git.mergeBase(dir, a, b);
        const theirs = await viaGit.mergeBase(dir, a, b);
        expect(ours).toBe(theirs);
        expect(await git.countCommits(dir, a, b)).toBe(await viaGit.countCommits(dir, a, b));
      }
    }
  });

  it("refs, resolved and listed", async () => {
    await git.updateRef(dir, "refs/heads/feature/x", commits[3]!);
    await git.updateRef(dir, "refs/tags/v1", commits[4]!);
    await git.runGit(dir, ["pack-refs", "--all"]);
    await git.updateRef(dir, "refs/heads/main", commits.at(-1)!, "");
    for (const prefix of ["refs/", "refs/heads/", "refs/heads/feature", "refs/heads/feat", "refs/tags/v1", "refs/heads/main"]) {
      expect([...(await git.listRefs(dir, prefix))]).toEqual([...(await viaGit.listRefs(dir, prefix))]);
    }
    for (const ref of [
      "refs/heads/main",
      "refs/heads/feature/x",
      "refs/heads/b1",
      "refs/heads/nope",
      "refs/heads/../HEAD",
      "main",
      "refs/tags/v1",
    ]) {
      expect(await git.resolveRef(dir, ref)).toBe(await viaGit.resolveRef(dir, ref));
    }
  });

  it("commit objects byte for byte", async () => {
    const tree = (await git.readCommit(dir, commits.at(-1)!)).tree;
    const people = [
      { name: "github-actions[bot]", email: "41898282+github-actions[bot]@users.noreply.github.com", date: "2026-03-01T10:20:30Z" },
      { name: "Zoë Ünicode", email: "z@example.com", date: "2026-03-01T10:20:30+02:00" },
      { name: "Late Night", email: "late@example.com", date: "2026-03-01T23:59:59.123-0530" },
      { name: " spaced. ", email: "<odd>@example.com", date: "2026-03-01T10:20:30Z" },
      { name: "No Zone", email: "nz@example.com", date: "2026-03-01T10:20:30" },
    ];
    for (const p of people) {
      for (const message of ["one line\n", "subject\n\nbody\n", "no newline", ""]) {
        const parents = [commits.at(-1)!, commits.at(-2)!].slice(0, message.length % 3);
        expect(await git.commitTree(dir, tree, parents, message, p, people[0]!)).toBe(
          await viaGit.commitTree(dir, tree, parents, message, p, people[0]!),
        );
      }
    }
  });

  it("blobs read back and unknown objects are absent", async () => {
    const sha = await git.hashBlob(dir, Buffer.from([0, 1, 2, 10, 255]));
    expect([...(await git.readBlob(dir, sha))]).toEqual([0, 1, 2, 10, 255]);
    expect(await git.objectType(dir, sha)).toBe("blob");
    expect(await git.objectType(dir, "0123456789012345678901234567890123456789")).toBeUndefined();
    expect((await git.runGit(dir, ["fsck", "--strict"])).code).toBe(0);
  });
});
