// Squashing a refinery's upstreams onto a branch that must keep a linear history (src/agent/squash.ts):
// one single-parent commit per upstream, a head whose content the branch holds already counted, a
// conflict left for a resolver — and the merge stage that squashes instead of merging.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { concludeSquash, squashHead, squashMessage } from "../../src/agent/squash.js";
import { runStages } from "../../src/agent/stages/index.js";
import type { TaskContext } from "../../src/agent/stages/types.js";
import { cleanupTempDirs, fakeWorld, type FakeWorld } from "./helpers.js";
import { git, options, task } from "./stages-helpers.js";

afterEach(cleanupTempDirs);

/** The refinery's branch at a base, and two upstreams cut from it: `a` adds a file, `b` and `c` rewrite the same line. */
function world(): { w: FakeWorld; heads: Record<"a" | "b" | "c", string>; base: string } {
  const w = fakeWorld({}, { git: true });
  git(w.repo, "checkout", "-q", "-b", "forge/r1/ref/1");
  writeFileSync(path.join(w.repo, "shared.txt"), "base\n");
  git(w.repo, "add", "-A");
  git(w.repo, "commit", "-q", "-m", "base");
  const base = git(w.repo, "rev-parse", "HEAD");
  const heads = {} as Record<"a" | "b" | "c", string>;
  for (const [name, file, text] of [
    ["a", "a.txt", "from a\n"],
    ["b", "shared.txt", "from b\n"],
    ["c", "shared.txt", "from c\n"],
  ] as const) {
    git(w.repo, "checkout", "-q", "-b", `up-${name}`, base);
    writeFileSync(path.join(w.repo, file), text);
    git(w.repo, "add", "-A");
    git(w.repo, "commit", "-q", "-m", `work of ${name}`);
    heads[name] = git(w.repo, "rev-parse", "HEAD");
  }
  git(w.repo, "checkout", "-q", "forge/r1/ref/1");
  return { w, heads, base };
}

const parents = (cwd: string, sha: string) => git(cwd, "log", "-1", "--format=%P", sha).split(" ").filter(Boolean);

describe("squashHead", () => {
  it("commits an upstream's work as one commit with a single parent; squashing it again commits nothing and names the head", async () => {
    const { w, heads, base } = world();
    const message = squashMessage("ref", { branch: "up-a", head: heads.a, taskId: "a" });
    const first = await squashHead(w.repo, heads.a, message);
    expect(first).toMatchObject({ squashed: true, changed: true });
    if (!first.squashed) return;
    expect(parents(w.repo, first.commit)).toEqual([base]);
    expect(git(w.repo, "log", "-1", "--format=%B", first.commit)).toBe(
      `forge(ref): squash a\n\nThe work of up-a at ${heads.a}, squashed by Forge: the repository keeps a linear history.`,
    );
    expect(git(w.repo, "show", `${first.commit}:a.txt`)).toBe("from a");
    // The upstream's commit is no ancestor: its content is.
    expect(() => git(w.repo, "merge-base", "--is-ancestor", heads.a, "HEAD")).toThrow();
    const again = await squashHead(w.repo, heads.a, message);
    expect(again).toEqual({ squashed: true, commit: first.commit, changed: false });
    expect(git(w.repo, "rev-parse", "HEAD")).toBe(first.commit);
    expect(git(w.repo, "status", "--porcelain")).toBe("");
  });

  it("stops on a conflict, left for a resolver; the conclusion keeps the parent even when the resolver committed", async () => {
    const { w, heads } = world();
    const b = await squashHead(w.repo, heads.b, "squash b");
    expect(b.squashed).toBe(true);
    const parent = git(w.repo, "rev-parse", "HEAD");
    const c = await squashHead(w.repo, heads.c, "squash c");
    expect(c).toEqual({ squashed: false, conflicts: ["shared.txt"] });
    // Markers left: no conclusion.
    expect(await concludeSquash(w.repo, parent, "squash c")).toEqual({ squashed: false, conflicts: ["shared.txt"] });
    // The resolver resolves, then commits against its instructions: its commit is folded into the squash.
    writeFileSync(path.join(w.repo, "shared.txt"), "from b\nfrom c\n");
    git(w.repo, "add", "-A");
    git(w.repo, "-c", "user.name=x", "-c", "user.email=x@y", "commit", "-q", "-m", "the resolver's own commit");
    const done = await concludeSquash(w.repo, parent, "squash c");
    expect(done).toMatchObject({ squashed: true, changed: true });
    if (!done.squashed) return;
    expect(parents(w.repo, done.commit)).toEqual([parent]);
    expect(git(w.repo, "log", "-1", "--format=%s", done.commit)).toBe("squash c");
    expect(git(w.repo, "show", `${done.commit}:shared.txt`)).toBe("from b\nfrom c");
  });
});

describe("the refinery's merge stage on a linear branch", () => {
  const ctx = (squash: TaskContext["squash"]): TaskContext => ({
    runId: "r1",
    taskId: "ref",
    attempt: 1,
    task,
    branch: "forge/r1/ref/1",
    squash,
    squashed: [],
    testCommand: "true",
  });

  it("squashes each upstream (a sub-agent resolves the conflict), records each, and makes no merge commit", async () => {
    const { w, heads, base } = world();
    w.setPlan({ "1:merge-resolve": { resolveConflicts: true, commit: "resolved" }, "refinery:walkthrough": { walkthrough: true } });
    const taskContext = ctx([
      { branch: "up-b", head: heads.b, taskId: "b" },
      { branch: "up-c", head: heads.c, taskId: "c" },
    ]);
    const out = await runStages(options(w, { agentType: "refinery", taskContext }));
    expect(out.exitCode, JSON.stringify(out.manifest, null, 2)).toBe(0);
    expect(git(w.repo, "log", "--merges", "--format=%s")).toBe("");
    const log = git(w.repo, "log", "--format=%H %s", `${base}..HEAD`).split("\n");
    expect(log.map((l) => l.slice(41))).toEqual(["forge(ref): squash c", "forge(ref): squash b"]);
    const [c, b] = log.map((l) => l.slice(0, 40));
    expect(taskContext.squashed).toEqual([
      { branch: "up-b", head: heads.b, commit: b },
      { branch: "up-c", head: heads.c, commit: c },
    ]);
    expect(parents(w.repo, c!)).toEqual([b]);
    expect(git(w.repo, "show", "HEAD:shared.txt")).toBe("from b\nfrom c");
    expect(w.calls().map((x) => `${x.kind}:${x.name}`)).toEqual(["1:merge-resolve", "refinery:walkthrough"]);
  });

  it("a conflict the resolver cannot settle is dropped, recorded nowhere, and raises a Change Request", async () => {
    const { w, heads } = world();
    w.setPlan({ "1:merge-resolve": { exit: 1 } });
    const squashed = await squashHead(w.repo, heads.b, "squash b");
    expect(squashed.squashed).toBe(true);
    const before = git(w.repo, "rev-parse", "HEAD");
    const taskContext = ctx([{ branch: "up-c", head: heads.c }]);
    const out = await runStages(options(w, { agentType: "refinery", taskContext }));
    expect(out.exitCode).toBe(11);
    expect(taskContext.squashed).toEqual([]);
    expect(git(w.repo, "rev-parse", "HEAD")).toBe(before);
    expect(git(w.repo, "status", "--porcelain")).toBe("");
  });
});
