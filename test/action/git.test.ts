import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { basicAuthHeader, messageWithTrailers, Git, type GitRetry } from "../../action/src/git.js";
import { isProtectedPath, revertProtectedChanges } from "../../action/src/protected-paths.js";
import { TRAILERS } from "../../src/core/layout.js";

const dir = mkdtempSync(path.join(tmpdir(), "forge-git-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function repo(name: string): Git {
  const d = path.join(dir, name);
  mkdirSync(d);
  execFileSync("git", ["init", "--quiet", d]);
  return new Git({ dir: d, remote: path.join(dir, "none.git"), identity: { name: "Forge", email: "forge@example.invalid" }, tempDir: dir });
}

describe("the runner's private folder", () => {
  it("is made on first use in the folder given, and close() removes it, the default network repository with it", async () => {
    const owned = path.join(dir, "owned");
    mkdirSync(owned);
    const origin = path.join(dir, "private-origin.git");
    execFileSync("git", ["init", "--quiet", "--bare", origin]);
    const d = path.join(dir, "private-work");
    execFileSync("git", ["init", "--quiet", d]);
    const g = new Git({ dir: d, remote: origin, identity: { name: "Forge", email: "forge@example.invalid" }, tempDir: owned });
    expect(readdirSync(owned)).toEqual([]);
    writeFileSync(path.join(d, "a"), "a");
    await g.run(["add", "a"]);
    await g.commit("a\n");
    await g.run(["push", "origin", "HEAD:refs/heads/main"]);
    const made = readdirSync(owned);
    expect(made).toHaveLength(1);
    expect(made[0]).toMatch(/^forge-git-private-/);
    expect(readdirSync(path.join(owned, made[0]!)).sort()).toEqual(["net.git", "repo"]);
    g.close();
    expect(readdirSync(owned)).toEqual([]);
    g.close();
  });
});

describe("commit messages and trailers", () => {
  it("puts the trailers in the last paragraph, where git interpret-trailers finds them", async () => {
    const msg = messageWithTrailers("forge(t1): Add the thing\nwith a newline", "Partial work.", [
      [TRAILERS.run, "r1"],
      [TRAILERS.task, "t1"],
      [TRAILERS.attempt, "2"],
      [TRAILERS.agent, "claude"],
      [TRAILERS.exit, "21"],
    ]);
    expect(msg).toBe(
      "forge(t1): Add the thing with a newline\n\nPartial work.\n\nForge-Run: r1\nForge-Task: t1\nForge-Attempt: 2\nForge-Agent: claude\nForge-Exit: 21\n",
    );
    const parsed = execFileSync("git", ["interpret-trailers", "--parse"], { input: msg, encoding: "utf8" });
    expect(parsed).toBe("Forge-Run: r1\nForge-Task: t1\nForge-Attempt: 2\nForge-Agent: claude\nForge-Exit: 21\n");
    const g = repo("trailers");
    writeFileSync(path.join(g.dir, "a"), "a");
    await g.run(["add", "a"]);
    const sha = await g.commit(
      messageWithTrailers("forge(t1): T", undefined, [
        ["Task", "t1"],
        ["Attempt", "1"],
        ["Agent", "command"],
      ]),
    );
    expect(await g.out(["log", "-1", "--format=%(trailers:key=Attempt,valueonly)", sha])).toBe("1");
    expect(await g.out(["log", "-1", "--format=%an <%ae>", sha])).toBe("Forge <forge@example.invalid>");
  });

  it("hands the token only to network commands, through a credential helper, never in a repository's config or a local command's environment", async () => {
    expect(basicAuthHeader("ghs_abc")).toBe(`AUTHORIZATION: basic ${Buffer.from("x-access-token:ghs_abc").toString("base64")}`);
    const d = repo("auth").dir;
    const slept: number[] = [];
    const retries: GitRetry[] = [];
    const g = new Git({
      dir: d,
      remote: "http://127.0.0.1:9/none.git",
      token: "ghs_secret123",
      identity: { name: "F", email: "f@x" },
      tempDir: dir,
      clock: { sleep: async (ms) => void slept.push(ms) },
      onRetry: (r) => retries.push(r),
    });
    // A local command sees neither the token nor the credential helper.
    expect(await g.out(["config", "--get-all", "credential.helper"]).catch(() => "")).toBe("");
    expect(await g.out(["var", "-l"])).not.toContain("ghs_secret123");
    // A failing fetch does not leak the token into the error; nothing lands in the work repository's config.
    const err = await g.fetchBranch("main").catch((e: Error) => e);
    expect(String(err)).toContain("127.0.0.1:9");
    expect(String(err)).not.toContain("ghs_secret123");
    // A refused connection can pass: the fetch was tried five times, and no try's message holds the token.
    expect(retries.map((r) => r.attempt)).toEqual([1, 2, 3, 4]);
    expect(slept).toHaveLength(4);
    for (const r of retries) expect(r.error).not.toContain("ghs_secret123");
    expect(await g.out(["config", "--local", "--list"])).not.toMatch(/extraheader|credential|ghs_/);
  });
});

describe("protected paths", () => {
  it.each([
    [".forge/plans/p/plan.md", true],
    [".forge/plans/p/tasks/t.md", true],
    [".github/workflows/ci.yml", true],
    ["./.github/workflows/x/y.yml", true],
    [".forge/runs/r/t/1/walkthrough.md", false],
    [".github/forge.yml", true],
    ["AGENTS.md", true],
    ["pkg/sub/AGENTS.md", true],
    ["CLAUDE.md", true],
    ["docs/CLAUDE.md", true],
    [".claude/settings.json", true],
    [".codex/config.toml", true],
    [".mcp.json", true],
    [".gitattributes", true],
    ["src/.gitattributes", true],
    [".gitmodules", true],
    [".forge/prompts/2.md", true],
    [".forge/stages.yml", true],
    ["AGENTS.override.md", true],
    ["pkg/AGENTS.override.md", true],
    ["GEMINI.md", true],
    [".gemini/settings.json", true],
    [".cursorrules", true],
    [".cursor/rules/a.mdc", true],
    [".agents/skills/x/SKILL.md", true],
    [".env", true],
    ["web/.env.production", true],
    [".envrc", true],
    ["src/env.ts", false],
    ["docs/environment.md", false],
    ["docs/agents.md", false],
    ["src/claude.ts", false],
    ["src/.forge/plans/x", false],
  ])("%s → %s", (p, expected) => expect(isProtectedPath(p)).toBe(expected));

  it("reverts additions, edits and deletions of protected files and reports each", async () => {
    const g = repo("protect");
    const w = (rel: string, text: string) => {
      mkdirSync(path.dirname(path.join(g.dir, rel)), { recursive: true });
      writeFileSync(path.join(g.dir, rel), text);
    };
    w(".forge/plans/p/plan.md", "plan\n");
    w(".github/workflows/ci.yml", "ci\n");
    w("src/a.ts", "a\n");
    await g.run(["add", "-A"]);
    const base = await g.commit("base\n");
    w(".forge/plans/p/plan.md", "changed\n");
    w(".github/workflows/new.yml", "new\n");
    rmSync(path.join(g.dir, ".github/workflows/ci.yml"));
    w("src/a.ts", "a2\n");
    await g.run(["add", "--all"]);
    const refused = await revertProtectedChanges(g, base);
    expect(refused).toEqual([
      { path: ".forge/plans/p/plan.md", change: "M" },
      { path: ".github/workflows/ci.yml", change: "D" },
      { path: ".github/workflows/new.yml", change: "A" },
    ]);
    expect(await g.stagedChanges(base)).toEqual([{ status: "M", path: "src/a.ts" }]);
    expect(await g.out(["status", "--porcelain"])).toBe("M  src/a.ts");
  });
});
