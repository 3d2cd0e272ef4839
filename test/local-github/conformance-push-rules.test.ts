// Conformance of the push rules (docs.github.com/repositories/configuring-branches-and-merges-in-your-repository/managing-rulesets/available-rules-for-rulesets,
// "Restrict file paths", "Restrict file path length", "Restrict file extensions", "Restrict file
// size"): a push ruleset (target `push`, no ref conditions) refuses a push whose new commits add or
// change such files, on any ref — GH013 with the files found — and so does a branch ruleset holding
// the same rules on its branches; the contents API answers 409. A bypass actor pushes.
import { writeFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSim, type Sim } from "../../src/local-github/server.js";
import { cloneOf, refusedWith } from "./support/rules.js";

const owner = "acme";
const repo = "pushes";
let sim: Sim;
let admin: Octokit;
let alice: Octokit;

beforeAll(async () => {
  sim = await createSim({ workflowExecutor: "noop" });
  admin = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken(owner) });
  alice = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken("alice") });
  await sim.control.createRepo({ owner, name: repo, files: { "README.md": "# p\n" }, collaborators: { alice: "write" } });
});

afterAll(async () => {
  await sim?.close();
});

describe("push rulesets", () => {
  it("restricted paths, extensions, path lengths and sizes are refused on every ref (GH013 naming the files); other pushes go", async () => {
    const { data: set } = await admin.request("POST /repos/{owner}/{repo}/rulesets", {
      owner,
      repo,
      name: "files",
      target: "push",
      enforcement: "active",
      rules: [
        { type: "file_path_restriction", parameters: { restricted_file_paths: ["secrets/**"] } },
        { type: "file_extension_restriction", parameters: { restricted_file_extensions: ["*.exe"] } },
        { type: "max_file_path_length", parameters: { max_file_path_length: 30 } },
        { type: "max_file_size", parameters: { max_file_size: 1 } },
      ] as never,
    });
    // A push ruleset names no refs.
    expect(set.conditions).toBeNull();
    const c = await cloneOf(`${sim.gitUrl}/${owner}/${repo}.git`, sim.control.userToken("alice"));
    try {
      const add = async (files: Record<string, string | Buffer>) => {
        for (const [path, content] of Object.entries(files)) {
          mkdirSync(dirname(join(c.dir, path)), { recursive: true });
          writeFileSync(join(c.dir, path), content);
        }
        await c.git(["add", "-A"]);
        await c.git(["commit", "-q", "-m", "files"]);
      };
      const reset = () => c.git(["reset", "-q", "--hard", "origin/main"]);
      await add({ "secrets/key.pem": "k\n", "tool.exe": "MZ\n" });
      let refused = await c.push("HEAD:refs/heads/topic");
      expect(refused).toContain("GH013: Repository rule violations found for refs/heads/topic.");
      expect(refused).toContain("- Changes to restricted file paths are not allowed.");
      expect(refused).toContain("secrets/key.pem");
      expect(refused).toContain("- Files with restricted file extensions are not allowed.");
      expect(refused).toContain("tool.exe");
      await reset();
      await add({ "a/very/long/path/that/goes/on/and/on.txt": "x\n" });
      refused = await c.push("HEAD:refs/tags/t1");
      expect(refused).toContain("GH013: Repository rule violations found for refs/tags/t1.");
      expect(refused).toContain("- File paths must not be longer than 30 characters.");
      await reset();
      await add({ "big.bin": Buffer.alloc(1_500_000, 7) });
      refused = await c.push("HEAD:main");
      expect(refused).toContain("- Files must not be larger than 1 MB.");
      expect(refused).toContain("big.bin (1.43 MB)");
      // A file removed in a later commit was still pushed: the rules look at every new commit.
      await c.git(["rm", "-q", "big.bin"]);
      await c.git(["commit", "-q", "-m", "gone again"]);
      expect(await c.push("HEAD:main")).toContain("big.bin (1.43 MB)");
      await reset();
      await add({ "src/ok.txt": "fine\n" });
      expect(await c.push("HEAD:main")).toBe("");
    } finally {
      c.close();
    }
    // The contents API answers 409 with the rule named.
    const put = alice.rest.repos.createOrUpdateFileContents({
      owner,
      repo,
      path: "secrets/token.txt",
      message: "t",
      content: Buffer.from("t\n").toString("base64"),
    });
    expect(await refusedWith(put, 409)).toBe("Repository rule violations found\n\nChanges to restricted file paths are not allowed.\n");
    // The repository's administrators on the bypass list push what the rules refuse others.
    await admin.rest.repos.updateRepoRuleset({
      owner,
      repo,
      ruleset_id: set.id,
      bypass_actors: [{ actor_id: 5, actor_type: "RepositoryRole", bypass_mode: "always" }],
    });
    const mine = await cloneOf(`${sim.gitUrl}/${owner}/${repo}.git`, sim.control.userToken(owner));
    try {
      mkdirSync(join(mine.dir, "secrets"));
      writeFileSync(join(mine.dir, "secrets/admin.pem"), "a\n");
      await mine.git(["add", "-A"]);
      await mine.git(["commit", "-q", "-m", "admin"]);
      expect(await mine.push("HEAD:main")).toBe("");
    } finally {
      mine.close();
    }
    expect((await admin.rest.repos.deleteRepoRuleset({ owner, repo, ruleset_id: set.id })).status).toBe(204);
  });

  it("a branch ruleset holding a push rule applies it to its branches only", async () => {
    await admin.request("POST /repos/{owner}/{repo}/rulesets", {
      owner,
      repo,
      name: "small files on releases",
      target: "branch",
      enforcement: "active",
      conditions: { ref_name: { include: ["refs/heads/release/*"], exclude: [] } },
      rules: [{ type: "max_file_size", parameters: { max_file_size: 1 } }] as never,
    });
    const c = await cloneOf(`${sim.gitUrl}/${owner}/${repo}.git`, sim.control.userToken("alice"));
    try {
      writeFileSync(join(c.dir, "large.dat"), Buffer.alloc(1_200_000, 1));
      await c.git(["add", "-A"]);
      await c.git(["commit", "-q", "-m", "large"]);
      expect(await c.push("HEAD:refs/heads/release/1")).toContain("- Files must not be larger than 1 MB.");
      expect(await c.push("HEAD:refs/heads/work")).toBe("");
    } finally {
      c.close();
    }
    expect(sim.violations.filter((v) => v.kind !== "request")).toEqual([]);
  });
});
