// Conformance of the ruleset rules that judge a write's commits and a merge's way
// (docs.github.com/repositories/configuring-branches-and-merges-in-your-repository/managing-rulesets/available-rules-for-rulesets):
// required_signatures (GitHub's own commits are signed and pass: merge and squash commits, API
// commits with no author; a rebase merge's are not), merge_queue, the metadata patterns (commit
// message, author and committer email, branch and tag names) and `pull_request.allowed_merge_methods`.
// Every call goes through plain @octokit/rest and real git; the simulator validates requests and
// responses against GitHub's description.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSim, type Sim } from "../../src/local-github/server.js";
import { appKeys, startReceiver, type Receiver } from "./support/helpers.js";
import { cloneOf, refusedWith } from "./support/rules.js";

const owner = "acme";
let sim: Sim;
let receiver: Receiver;
let admin: Octokit;
let alice: Octokit;
let bot: Octokit;
let appId: number;

beforeAll(async () => {
  sim = await createSim({ workflowExecutor: "noop" });
  receiver = await startReceiver("r");
  admin = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken(owner) });
  alice = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken("alice") });
  const app = sim.control.registerApp({
    slug: "forge-rules",
    publicKeyPem: appKeys().publicKeyPem,
    webhookUrl: receiver.url,
    webhookSecret: "r",
    permissions: { contents: "write", pull_requests: "write" },
    events: ["push"],
  });
  appId = app.id;
  bot = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.installationToken(sim.control.install(app.id, owner, "all").id) });
});

afterAll(async () => {
  await sim?.close();
  await receiver?.close();
});

type Rule = { type: string; parameters?: Record<string, unknown> };

/** An active ruleset of the repository's owner. */
async function ruleset(
  repo: string,
  name: string,
  rules: Rule[],
  include: string[] = ["~DEFAULT_BRANCH"],
  extra: { target?: "branch" | "tag"; bypass_actors?: Array<Record<string, unknown>> } = {},
): Promise<number> {
  const { data } = await admin.request("POST /repos/{owner}/{repo}/rulesets", {
    owner,
    repo,
    name,
    target: extra.target ?? "branch",
    enforcement: "active",
    conditions: { ref_name: { include, exclude: [] } },
    rules: rules as never,
    ...(extra.bypass_actors ? { bypass_actors: extra.bypass_actors as never } : {}),
  });
  return data.id;
}

/** A repository with `main` and a pull request of `feature` (one commit by alice, with an author given: unsigned) into it. */
async function repoWithPull(name: string): Promise<{ number: number; head: string }> {
  await sim.control.createRepo({ owner, name, files: { "README.md": `# ${name}\n` }, collaborators: { alice: "write" } });
  const { data: main } = await alice.rest.git.getRef({ owner, repo: name, ref: "heads/main" });
  await alice.rest.git.createRef({ owner, repo: name, ref: "refs/heads/feature", sha: main.object.sha });
  const { data: put } = await alice.rest.repos.createOrUpdateFileContents({
    owner,
    repo: name,
    path: "f.txt",
    branch: "feature",
    message: "f",
    content: Buffer.from("f\n").toString("base64"),
    author: { name: "Alice", email: "alice@example.test" },
  });
  const { data: pr } = await alice.rest.pulls.create({ owner, repo: name, head: "feature", base: "main", title: "Feature" });
  return { number: pr.number, head: put.commit.sha! };
}

describe("required_signatures", () => {
  // "Require signed commits: … contributors and bots can only push commits that have been signed and
  // verified to the branch"; GitHub signs what it creates itself.
  it("a push of unsigned commits is refused (GH013, the commits found); GitHub's own commits pass; a new branch of existing commits goes", async () => {
    await sim.control.createRepo({ owner, name: "signed", files: { "README.md": "# s\n" }, collaborators: { alice: "write" } });
    await ruleset("signed", "signatures", [{ type: "required_signatures" }], ["~ALL"]);
    const c = await cloneOf(`${sim.gitUrl}/${owner}/signed.git`, sim.control.userToken("alice"));
    try {
      writeFileSync(join(c.dir, "a.txt"), "a\n");
      await c.git(["add", "a.txt"]);
      await c.git(["commit", "-q", "-m", "unsigned"]);
      const sha = (await c.git(["rev-parse", "HEAD"])).trim();
      const refused = await c.push("HEAD:main");
      expect(refused).toContain("GH013: Repository rule violations found for refs/heads/main.");
      expect(refused).toContain(`Review all repository rules at ${sim.url}/${owner}/signed/rules?ref=refs%2Fheads%2Fmain`);
      expect(refused).toContain("- Commits must have verified signatures.");
      expect(refused).toContain("Found 1 violation:");
      expect(refused).toContain(sha);
      // A new branch at a commit the repository has brings no new commit: it goes.
      expect(await c.push("origin/main:refs/heads/copy")).toBe("");
    } finally {
      c.close();
    }
    // The contents API signs a commit made with no author or committer given, and refuses one with an author (409).
    const put = (author?: { name: string; email: string }) =>
      alice.rest.repos.createOrUpdateFileContents({
        owner,
        repo: "signed",
        path: author ? "b.txt" : "c.txt",
        message: "web",
        content: Buffer.from("c\n").toString("base64"),
        ...(author ? { author } : {}),
      });
    expect(await refusedWith(put({ name: "A", email: "a@example.test" }), 409)).toContain("Commits must have verified signatures.");
    const { data: made } = await put();
    const { data: commit } = await alice.rest.git.getCommit({ owner, repo: "signed", commit_sha: made.commit.sha! });
    expect(commit.verification).toMatchObject({ verified: true, reason: "valid" });
    expect(commit.verification?.signature).toContain("-----BEGIN PGP SIGNATURE-----");
    // An App's commit through the Git database with no author is signed too ("Signature verification for bots").
    const { data: tip } = await bot.rest.git.getRef({ owner, repo: "signed", ref: "heads/main" });
    const { data: base } = await bot.rest.git.getCommit({ owner, repo: "signed", commit_sha: tip.object.sha });
    const { data: byApp } = await bot.rest.git.createCommit({
      owner,
      repo: "signed",
      message: "bot",
      tree: base.tree.sha,
      parents: [tip.object.sha],
    });
    expect(byApp.verification?.verified).toBe(true);
    await bot.rest.git.updateRef({ owner, repo: "signed", ref: "heads/main", sha: byApp.sha });
  });

  it("a pull request merges by squash (GitHub's signed commit); a merge commit bringing unsigned commits and a rebase are refused (405)", async () => {
    const { number } = await repoWithPull("signed-pr");
    await ruleset("signed-pr", "signatures", [{ type: "required_signatures" }]);
    const merge = (merge_method: "merge" | "squash" | "rebase") =>
      alice.rest.pulls.merge({ owner, repo: "signed-pr", pull_number: number, merge_method });
    for (const m of ["merge", "rebase"] as const) {
      const msg = await refusedWith(merge(m), 405);
      expect(msg).toContain("Repository rule violations found");
      expect(msg).toContain("Commits must have verified signatures.");
    }
    const { data } = await merge("squash");
    const { data: squash } = await alice.rest.git.getCommit({ owner, repo: "signed-pr", commit_sha: data.sha });
    expect(squash.verification?.verified).toBe(true);
  });
});

describe("merge_queue", () => {
  // "Require merge queue": only the queue merges. A direct merge answers 405, a direct update 422
  // ("Changes must be made through the merge queue").
  it("a direct merge is refused (405), so is a direct update of the branch; the ruleset's bypass actor merges", async () => {
    const { number } = await repoWithPull("queued");
    const queue = {
      type: "merge_queue",
      parameters: {
        check_response_timeout_minutes: 60,
        grouping_strategy: "ALLGREEN",
        max_entries_to_build: 5,
        max_entries_to_merge: 5,
        merge_method: "SQUASH",
        min_entries_to_merge: 1,
        min_entries_to_merge_wait_minutes: 5,
      },
    };
    const id = await ruleset("queued", "queue", [queue]);
    expect((await alice.rest.repos.getBranchRules({ owner, repo: "queued", branch: "main" })).data.map((r) => r.type)).toEqual([
      "merge_queue",
    ]);
    const merge = (as: Octokit) => as.rest.pulls.merge({ owner, repo: "queued", pull_number: number, merge_method: "squash" });
    const msg = await refusedWith(merge(alice), 405);
    expect(msg).toBe("Repository rule violations found\n\nChanges must be made through the merge queue\n");
    expect(await refusedWith(merge(bot), 405)).toContain("Changes must be made through the merge queue");
    const { data: feature } = await alice.rest.git.getRef({ owner, repo: "queued", ref: "heads/feature" });
    expect(
      await refusedWith(alice.rest.git.updateRef({ owner, repo: "queued", ref: "heads/main", sha: feature.object.sha }), 422),
    ).toContain("Changes must be made through the merge queue");
    // The App on the bypass list merges directly.
    await admin.rest.repos.updateRepoRuleset({
      owner,
      repo: "queued",
      ruleset_id: id,
      bypass_actors: [{ actor_id: appId, actor_type: "Integration", bypass_mode: "always" }],
    });
    expect((await merge(bot)).data.merged).toBe(true);
  });
});

describe("metadata patterns", () => {
  // "Metadata restrictions": operator starts_with / ends_with / contains / regex, `negate`; the
  // rule's `name` is how it appears to people.
  it("commit message and author email patterns refuse the commits that break them (GH013 with the rule's name or its pattern)", async () => {
    await sim.control.createRepo({ owner, name: "patterns", files: { "README.md": "# p\n" }, collaborators: { alice: "write" } });
    await ruleset(
      "patterns",
      "conventional",
      [
        {
          type: "commit_message_pattern",
          parameters: { operator: "regex", pattern: "^(feat|fix)(\\(.+\\))?: ", negate: false, name: "Conventional commits" },
        },
        { type: "commit_message_pattern", parameters: { operator: "contains", pattern: "WIP", negate: true } },
        { type: "commit_author_email_pattern", parameters: { operator: "ends_with", pattern: "@x.test", negate: false } },
        { type: "committer_email_pattern", parameters: { operator: "contains", pattern: "noreply", negate: true } },
      ],
      ["~ALL"],
    );
    const c = await cloneOf(`${sim.gitUrl}/${owner}/patterns.git`, sim.control.userToken("alice"));
    try {
      const commit = async (message: string, env: Record<string, string> = {}) => {
        await c.git(["commit", "-q", "--allow-empty", "-m", message], env);
        return (await c.git(["rev-parse", "HEAD"])).trim();
      };
      const bad = await commit("update things");
      let refused = await c.push("HEAD:main");
      expect(refused).toContain("- Conventional commits");
      expect(refused).toContain(bad);
      await c.git(["reset", "-q", "--hard", "origin/main"]);
      await commit("feat: WIP half done");
      refused = await c.push("HEAD:main");
      expect(refused).toContain("- Commit message must not contain a matching pattern: WIP");
      expect(refused).not.toContain("Conventional commits");
      await c.git(["reset", "-q", "--hard", "origin/main"]);
      await commit("fix(core): a fix", { GIT_AUTHOR_EMAIL: "mallory@elsewhere.test" });
      expect(await c.push("HEAD:main")).toContain("- Commit author email must end with a matching pattern: @x.test");
      await c.git(["reset", "-q", "--hard", "origin/main"]);
      await commit("fix: committed elsewhere", { GIT_COMMITTER_EMAIL: "bot@users.noreply.example.test" });
      expect(await c.push("HEAD:main")).toContain("- Committer email must not contain a matching pattern: noreply");
      await c.git(["reset", "-q", "--hard", "origin/main"]);
      await commit("feat(core): a feature");
      expect(await c.push("HEAD:main")).toBe("");
    } finally {
      c.close();
    }
  });

  it("branch and tag name patterns refuse the names that break them, through the refs API (422) and pushes", async () => {
    await sim.control.createRepo({ owner, name: "names", files: { "README.md": "# n\n" }, collaborators: { alice: "write" } });
    await ruleset(
      "names",
      "branches",
      [{ type: "branch_name_pattern", parameters: { operator: "regex", pattern: "^(main|feature/.+)$", negate: false } }],
      ["~ALL"],
    );
    await ruleset(
      "names",
      "tags",
      [{ type: "tag_name_pattern", parameters: { operator: "starts_with", pattern: "v", negate: false } }],
      ["~ALL"],
      { target: "tag" },
    );
    const { data: main } = await alice.rest.git.getRef({ owner, repo: "names", ref: "heads/main" });
    const create = (ref: string) => alice.rest.git.createRef({ owner, repo: "names", ref, sha: main.object.sha });
    expect(await refusedWith(create("refs/heads/misc"), 422)).toContain(
      "Branch name must match a given regex pattern: ^(main|feature/.+)$",
    );
    await create("refs/heads/feature/ok");
    const c = await cloneOf(`${sim.gitUrl}/${owner}/names.git`, sim.control.userToken("alice"));
    try {
      expect(await c.push("HEAD:refs/tags/release-1")).toContain("- Tag name must start with a matching pattern: v");
      expect(await c.push("HEAD:refs/tags/v1.0.0")).toBe("");
    } finally {
      c.close();
    }
  });
});

describe("pull_request.allowed_merge_methods", () => {
  it("a merge by a method the rule leaves out is refused (405); an allowed one goes", async () => {
    const { number } = await repoWithPull("methods");
    await ruleset("methods", "squash only", [
      {
        type: "pull_request",
        parameters: {
          allowed_merge_methods: ["squash"],
          dismiss_stale_reviews_on_push: false,
          require_code_owner_review: false,
          require_last_push_approval: false,
          required_approving_review_count: 0,
          required_review_thread_resolution: false,
        },
      },
    ]);
    const merge = (merge_method: "merge" | "squash") =>
      alice.rest.pulls.merge({ owner, repo: "methods", pull_number: number, merge_method });
    const msg = await refusedWith(merge("merge"), 405);
    expect(msg).toContain("Repository rule violations found");
    expect(msg).toContain("Merge method merge is not allowed");
    expect((await merge("squash")).data.merged).toBe(true);
    // A direct push to a branch that requires pull requests is refused too.
    const { data: feature } = await alice.rest.git.getRef({ owner, repo: "methods", ref: "heads/feature" });
    expect(
      await refusedWith(alice.rest.git.updateRef({ owner, repo: "methods", ref: "heads/main", sha: feature.object.sha, force: true }), 422),
    ).toContain("Changes must be made through a pull request.");
    expect(sim.violations.filter((v) => v.kind !== "request")).toEqual([]);
  });
});
