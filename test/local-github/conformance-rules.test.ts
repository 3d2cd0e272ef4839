// Conformance of the rules a pull request merge and a push meet: rulesets' required_linear_history,
// pull_request and required_status_checks (with strict_required_status_checks_policy), their bypass
// actors, the update and delete routes, and branch protection's `strict` and linear history. Every
// call goes through plain @octokit/rest; the simulator validates requests and responses against
// GitHub's description (strict mode under vitest turns a violating response into a 500).
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSim, type Sim } from "../../src/local-github/server.js";

const owner = "acme";
let sim: Sim;
let admin: Octokit;
let alice: Octokit;
let bob: Octokit;

beforeAll(async () => {
  sim = await createSim({ workflowExecutor: "noop" });
  admin = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken(owner) });
  alice = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken("alice") });
  bob = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken("bob") });
});

afterAll(async () => {
  await sim?.close();
});

async function refusedWith(p: Promise<unknown>, expected: number): Promise<string> {
  try {
    await p;
  } catch (e) {
    const err = e as { status: number; response?: { data?: { message?: string } } };
    expect(err.status).toBe(expected);
    return err.response?.data?.message ?? "";
  }
  throw new Error("the call went through");
}

function gitIn(cwd: string, args: string[], token?: string): Promise<string> {
  const auth = token ? ["-c", `http.extraHeader=Authorization: Basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`] : [];
  const env = { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@x", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@x" };
  return new Promise((resolve, reject) =>
    execFile("git", [...auth, ...args], { cwd, env }, (err, stdout, stderr) =>
      err ? reject(Object.assign(err, { stderr })) : resolve(stdout),
    ),
  );
}

/** A repository with `main` and a branch `name` one commit ahead of it, and a pull request of it into main. */
async function repoWithPull(name: string, branch = "feature"): Promise<{ repo: string; number: number; head: string }> {
  await sim.control.createRepo({ owner, name, files: { "README.md": `# ${name}\n` }, collaborators: { alice: "write", bob: "write" } });
  const { data: main } = await alice.rest.git.getRef({ owner, repo: name, ref: "heads/main" });
  await alice.rest.git.createRef({ owner, repo: name, ref: `refs/heads/${branch}`, sha: main.object.sha });
  const { data: put } = await alice.rest.repos.createOrUpdateFileContents({
    owner,
    repo: name,
    path: "f.txt",
    branch,
    message: "f",
    content: Buffer.from("f\n").toString("base64"),
  });
  const { data: pr } = await alice.rest.pulls.create({ owner, repo: name, head: branch, base: "main", title: "Feature" });
  return { repo: name, number: pr.number, head: put.commit.sha! };
}

/** Moves main ahead with a commit of its own (so the pull request's head no longer contains its tip). */
async function advanceMain(repo: string): Promise<void> {
  await admin.rest.repos.createOrUpdateFileContents({
    owner,
    repo,
    path: "other.txt",
    branch: "main",
    message: "other",
    content: Buffer.from("o\n").toString("base64"),
  });
}

describe("ruleset rules on pull request merges", () => {
  // docs.github.com/en/repositories/configuring-branches-and-merges-in-your-repository/managing-rulesets/available-rules-for-rulesets#require-linear-history:
  // "Prevent merge commits from being pushed to matching refs" — a merge with merge_method "merge" is refused, squash and rebase go.
  it("required_linear_history refuses merge commits (a PR merge by `merge`, a push bringing one); squash merges", async () => {
    const { repo, number, head } = await repoWithPull("linear");
    await admin.rest.repos.createRepoRuleset({
      owner,
      repo,
      name: "linear",
      target: "branch",
      enforcement: "active",
      conditions: { ref_name: { include: ["~ALL"], exclude: [] } },
      rules: [{ type: "required_linear_history" }],
    });
    expect((await alice.rest.repos.getBranchRules({ owner, repo, branch: "main" })).data.map((r) => r.type)).toEqual([
      "required_linear_history",
    ]);
    const merge = (merge_method: "merge" | "squash" | "rebase") =>
      alice.rest.pulls.merge({ owner, repo, pull_number: number, merge_method });
    const msg = await refusedWith(merge("merge"), 405);
    expect(msg).toContain("Repository rule violations found");
    expect(msg).toContain("This branch must not contain merge commits.");
    // A push whose new commits include a merge commit: GH013 names the rule.
    const work = mkdtempSync(join(tmpdir(), "forge-rules-linear-"));
    try {
      const token = sim.control.userToken("alice");
      await gitIn(work, ["clone", "-q", `${sim.gitUrl}/${owner}/${repo}.git`, "w"], token);
      const dir = join(work, "w");
      await gitIn(dir, ["checkout", "-q", "-b", "side", "origin/main"]);
      await gitIn(dir, ["commit", "-q", "--allow-empty", "-m", "side"]);
      await gitIn(dir, ["merge", "-q", "--no-ff", "--no-edit", "origin/feature"]);
      const refused = await gitIn(dir, ["push", "-q", "origin", "HEAD:side"], token).then(
        () => "",
        (e: { stderr: string }) => e.stderr,
      );
      expect(refused).toContain("GH013: Repository rule violations found for refs/heads/side.");
      expect(refused).toContain("This branch must not contain merge commits.");
      // A linear push goes.
      await gitIn(dir, ["reset", "-q", "--hard", "HEAD~1"]);
      await gitIn(dir, ["push", "-q", "origin", "HEAD:side"], token);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
    const { data } = await merge("squash");
    expect(data.merged).toBe(true);
    const { data: commit } = await alice.rest.git.getCommit({ owner, repo, commit_sha: data.sha });
    expect(commit.parents.map((p) => p.sha)).not.toContain(head);
    expect(commit.parents).toHaveLength(1);
  });

  // available-rules-for-rulesets#require-a-pull-request-before-merging: "Required approvals … the
  // number of approving reviews required before the pull request can be merged".
  it("pull_request: a merge without enough approvals of people with write access is refused (405); a bypass actor in pull_request mode merges", async () => {
    const { repo, number } = await repoWithPull("reviewed");
    const { data: set } = await admin.rest.repos.createRepoRuleset({
      owner,
      repo,
      name: "reviews",
      target: "branch",
      enforcement: "active",
      conditions: { ref_name: { include: ["~DEFAULT_BRANCH"], exclude: [] } },
      rules: [
        {
          type: "pull_request",
          parameters: {
            required_approving_review_count: 1,
            dismiss_stale_reviews_on_push: true,
            require_code_owner_review: false,
            require_last_push_approval: false,
            required_review_thread_resolution: false,
          },
        },
      ],
    });
    const merge = () => alice.rest.pulls.merge({ owner, repo, pull_number: number, merge_method: "squash" });
    const msg = await refusedWith(merge(), 405);
    expect(msg).toContain("Repository rule violations found");
    expect(msg).toContain("At least 1 approving review is required by reviewers with write access.");
    // Update (docs.github.com/rest/repos/rules#update-a-repository-ruleset): administrators (role id 5) may bypass through pull requests.
    const { data: updated } = await admin.rest.repos.updateRepoRuleset({
      owner,
      repo,
      ruleset_id: set.id,
      bypass_actors: [{ actor_id: 5, actor_type: "RepositoryRole", bypass_mode: "pull_request" }],
    });
    expect(updated.rules?.map((r) => r.type)).toEqual(["pull_request"]); // what the body left out is kept
    expect(updated.bypass_actors?.[0]?.bypass_mode).toBe("pull_request");
    // A writer may not change it.
    expect(
      await refusedWith(alice.rest.repos.updateRepoRuleset({ owner, repo, ruleset_id: set.id, enforcement: "disabled" }), 403),
    ).toBeTruthy();
    // The writers are still refused; the administrator merges through the pull request without an approval.
    expect(await refusedWith(merge(), 405)).toContain("At least 1 approving review");
    expect((await admin.rest.pulls.merge({ owner, repo, pull_number: number, merge_method: "squash" })).data.merged).toBe(true);
    // Delete (docs.github.com/rest/repos/rules#delete-a-repository-ruleset): 204, then 404.
    expect((await admin.rest.repos.deleteRepoRuleset({ owner, repo, ruleset_id: set.id })).status).toBe(204);
    expect(await refusedWith(admin.rest.repos.getRepoRuleset({ owner, repo, ruleset_id: set.id }), 404)).toBe("Not Found");
    expect(await refusedWith(admin.rest.repos.deleteRepoRuleset({ owner, repo, ruleset_id: set.id }), 404)).toBe("Not Found");
  });

  it("pull_request: an approval of the head from a writer lets the merge through", async () => {
    const { repo, number } = await repoWithPull("approved");
    await admin.rest.repos.createRepoRuleset({
      owner,
      repo,
      name: "reviews",
      target: "branch",
      enforcement: "active",
      conditions: { ref_name: { include: ["refs/heads/main"], exclude: [] } },
      rules: [
        {
          type: "pull_request",
          parameters: {
            required_approving_review_count: 1,
            dismiss_stale_reviews_on_push: false,
            require_code_owner_review: false,
            require_last_push_approval: false,
            required_review_thread_resolution: false,
          },
        },
      ],
    });
    const merge = () => alice.rest.pulls.merge({ owner, repo, pull_number: number, merge_method: "squash" });
    expect(await refusedWith(merge(), 405)).toContain("At least 1 approving review is required by reviewers with write access.");
    await bob.rest.pulls.createReview({ owner, repo, pull_number: number, event: "APPROVE" });
    expect((await merge()).data.merged).toBe(true);
  });
});

describe("ruleset status checks on pull request merges", () => {
  // available-rules-for-rulesets#require-status-checks-to-pass-before-merging, and "Require branches
  // to be up to date before merging" (strict_required_status_checks_policy).
  it("required_status_checks: contexts must be green on the head; strict: the head must contain the base's tip", async () => {
    const { repo, number, head } = await repoWithPull("checked");
    await admin.rest.repos.createRepoRuleset({
      owner,
      repo,
      name: "checks",
      target: "branch",
      enforcement: "active",
      conditions: { ref_name: { include: ["~DEFAULT_BRANCH"], exclude: [] } },
      rules: [
        {
          type: "required_status_checks",
          parameters: { required_status_checks: [{ context: "ci" }], strict_required_status_checks_policy: true },
        },
      ],
    });
    const merge = () => alice.rest.pulls.merge({ owner, repo, pull_number: number, merge_method: "squash" });
    expect(await refusedWith(merge(), 405)).toContain('Required status check "ci" is expected.');
    await alice.rest.repos.createCommitStatus({ owner, repo, sha: head, state: "failure", context: "ci" });
    expect(await refusedWith(merge(), 405)).toContain('Required status check "ci" is failing.');
    await alice.rest.repos.createCommitStatus({ owner, repo, sha: head, state: "success", context: "ci" });
    await advanceMain(repo);
    expect(await refusedWith(merge(), 405)).toContain("Head branch is out of date. Review and try the merge again.");
    // Brought up to date (main merged into the head) and green again: it merges.
    const { data: up } = await alice.rest.repos.merge({ owner, repo, base: "feature", head: "main" });
    await alice.rest.repos.createCommitStatus({ owner, repo, sha: up.sha, state: "success", context: "ci" });
    expect((await merge()).data.merged).toBe(true);
  });
});

describe("branch protection on pull request merges", () => {
  // docs.github.com/en/repositories/configuring-branches-and-merges-in-your-repository/managing-protected-branches/about-protected-branches#require-status-checks-before-merging:
  // strict — "the branch must be up to date with the base branch before merging".
  // …#require-linear-history: "any pull requests merged into the protected branch must use a squash merge or a rebase merge".
  it("strict refuses a head behind its base (405); linear history refuses merge_method merge with GitHub's text", async () => {
    const { repo, number } = await repoWithPull("strict");
    await admin.rest.repos.updateBranchProtection({
      owner,
      repo,
      branch: "main",
      required_status_checks: { strict: true, contexts: [] },
      enforce_admins: true,
      required_pull_request_reviews: null,
      restrictions: null,
      required_linear_history: true,
    });
    await advanceMain(repo);
    const merge = (merge_method: "merge" | "squash") => alice.rest.pulls.merge({ owner, repo, pull_number: number, merge_method });
    expect(await refusedWith(merge("squash"), 405)).toBe("Head branch is out of date. Review and try the merge again.");
    await alice.rest.repos.merge({ owner, repo, base: "feature", head: "main" });
    expect(await refusedWith(merge("merge"), 405)).toBe("This branch must not contain merge commits.");
    expect((await merge("squash")).data.merged).toBe(true);
    expect(sim.violations.filter((v) => v.kind !== "request")).toEqual([]);
  });
});
