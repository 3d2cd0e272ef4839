// Conformance of an organisation's rulesets (docs.github.com/rest/orgs/rules): created, listed,
// read, updated and deleted by the organisation's owners or an App with the organisation's
// Administration permission (404 for anyone else); `conditions.repository_name` (include, exclude,
// `~ALL`) and `ref_name` choose where they apply; applied together with a repository's own — in its
// rulesets list (`includes_parents`), its branch rules (`ruleset_source_type: "Organization"`) and
// the writes they refuse — with bypass actors.
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSim, type Sim } from "../../src/local-github/server.js";
import { appKeys, startReceiver, type Receiver } from "./support/helpers.js";
import { refusedWith } from "./support/rules.js";

const org = "acmeorg";
let sim: Sim;
let receiver: Receiver;
let boss: Octokit;
let alice: Octokit;

beforeAll(async () => {
  sim = await createSim({ workflowExecutor: "noop" });
  receiver = await startReceiver("o");
  sim.control.setOrgOwner(org, "boss");
  boss = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken("boss") });
  alice = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken("alice") });
  for (const name of ["app1", "app2", "tools"])
    await sim.control.createRepo({ owner: org, name, files: { "README.md": `# ${name}\n` }, collaborators: { alice: "write" } });
});

afterAll(async () => {
  await sim?.close();
  await receiver?.close();
});

/** A pull request of a branch one commit ahead of main, in `repo`. */
async function pullIn(repo: string, branch: string): Promise<number> {
  const { data: main } = await alice.rest.git.getRef({ owner: org, repo, ref: "heads/main" });
  await alice.rest.git.createRef({ owner: org, repo, ref: `refs/heads/${branch}`, sha: main.object.sha });
  await alice.rest.repos.createOrUpdateFileContents({
    owner: org,
    repo,
    path: `${branch}.txt`,
    branch,
    message: branch,
    content: Buffer.from("x\n").toString("base64"),
  });
  return (await alice.rest.pulls.create({ owner: org, repo, head: branch, base: "main", title: branch })).data.number;
}

const linear = {
  name: "org linear",
  target: "branch" as const,
  enforcement: "active" as const,
  conditions: {
    ref_name: { include: ["~DEFAULT_BRANCH"], exclude: [] },
    repository_name: { include: ["app*"], exclude: ["app2"] },
  },
  rules: [{ type: "required_linear_history" as const }],
};

describe("organisation rulesets", () => {
  it("owners create, list, read, update and delete them; others are answered 404; they name repositories by name", async () => {
    // A member who is not an owner, and a person outside the organisation, see nothing.
    expect(await refusedWith(alice.rest.repos.createOrgRuleset({ org, ...linear }), 404)).toBe("Not Found");
    expect(await refusedWith(alice.rest.repos.getOrgRulesets({ org }), 404)).toBe("Not Found");
    const { data: set } = await boss.rest.repos.createOrgRuleset({ org, ...linear });
    expect(set).toMatchObject({ name: "org linear", source_type: "Organization", source: org, enforcement: "active" });
    expect(set.conditions).toMatchObject({ repository_name: { include: ["app*"], exclude: ["app2"] } });
    expect((await boss.rest.repos.getOrgRulesets({ org })).data.map((r) => r.id)).toEqual([set.id]);
    expect((await boss.rest.repos.getOrgRuleset({ org, ruleset_id: set.id })).data.name).toBe("org linear");
    // Names are unique in the organisation.
    expect(await refusedWith(boss.rest.repos.createOrgRuleset({ org, ...linear }), 422)).toBe("Validation Failed");
    // "Require merge queue" is no rule of an organisation's ruleset: the request is refused.
    await refusedWith(
      boss.request("POST /orgs/{org}/rulesets", {
        org,
        name: "queue",
        enforcement: "active",
        rules: [{ type: "merge_queue", parameters: {} }] as never,
      }),
      422,
    );

    // app1 is named, app2 excluded, tools not included.
    const branchRules = async (repo: string) => (await alice.rest.repos.getBranchRules({ owner: org, repo, branch: "main" })).data;
    expect(await branchRules("app1")).toEqual([
      { type: "required_linear_history", ruleset_source_type: "Organization", ruleset_source: org, ruleset_id: set.id },
    ]);
    expect(await branchRules("app2")).toEqual([]);
    expect(await branchRules("tools")).toEqual([]);
    // The repository's own list includes its organisation's (`includes_parents`, true by default).
    const listed = await alice.rest.repos.getRepoRulesets({ owner: org, repo: "app1" });
    expect(listed.data.map((r) => [r.name, r.source_type, r.source])).toEqual([["org linear", "Organization", org]]);
    expect((await alice.rest.repos.getRepoRulesets({ owner: org, repo: "app1", includes_parents: false })).data).toEqual([]);
    expect((await alice.rest.repos.getRepoRuleset({ owner: org, repo: "app1", ruleset_id: set.id })).data.source_type).toBe("Organization");
    // Changed at the organisation only: the repository's route does not change it.
    expect(await refusedWith(boss.rest.repos.updateRepoRuleset({ owner: org, repo: "app1", ruleset_id: set.id, name: "x" }), 404)).toBe(
      "Not Found",
    );

    // Updated: every repository whose name starts with "app".
    const { data: all } = await boss.rest.repos.updateOrgRuleset({
      org,
      ruleset_id: set.id,
      conditions: { ref_name: { include: ["~DEFAULT_BRANCH"], exclude: [] }, repository_name: { include: ["~ALL"], exclude: ["tools"] } },
    });
    expect(all.rules?.map((r) => r.type)).toEqual(["required_linear_history"]); // what the body left out is kept
    expect((await branchRules("app2")).map((r) => r.type)).toEqual(["required_linear_history"]);
    expect(await branchRules("tools")).toEqual([]);

    // Deleted: 204, then 404, and the repositories' rules are gone.
    expect((await boss.rest.repos.deleteOrgRuleset({ org, ruleset_id: set.id })).status).toBe(204);
    expect(await refusedWith(boss.rest.repos.getOrgRuleset({ org, ruleset_id: set.id }), 404)).toBe("Not Found");
    expect(await branchRules("app1")).toEqual([]);
  });

  it("applied together with the repository's own rulesets; the organisation's bypass actors (its admins) are exempt", async () => {
    const number = await pullIn("app1", "feature");
    const { data: set } = await boss.rest.repos.createOrgRuleset({ org, ...linear, name: "org linear 2" });
    await boss.request("POST /repos/{owner}/{repo}/rulesets", {
      owner: org,
      repo: "app1",
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
      ] as never,
    });
    const rules = (await alice.rest.repos.getBranchRules({ owner: org, repo: "app1", branch: "main" })).data;
    expect(rules.map((r) => [r.type, r.ruleset_source_type])).toEqual([
      ["pull_request", "Repository"],
      ["required_linear_history", "Organization"],
    ]);
    const merge = (as: Octokit, merge_method: "merge" | "squash") =>
      as.rest.pulls.merge({ owner: org, repo: "app1", pull_number: number, merge_method });
    // Both levels refuse a merge commit without an approval: the approval first (checked before the commit is made).
    expect(await refusedWith(merge(alice, "merge"), 405)).toContain("At least 1 approving review is required");
    await boss.rest.pulls.createReview({ owner: org, repo: "app1", pull_number: number, event: "APPROVE" });
    expect(await refusedWith(merge(alice, "merge"), 405)).toContain("This branch must not contain merge commits.");
    // The organisation's admins bypass its ruleset (`OrganizationAdmin`): boss merges with a merge commit.
    await boss.rest.repos.updateOrgRuleset({
      org,
      ruleset_id: set.id,
      bypass_actors: [{ actor_id: null, actor_type: "OrganizationAdmin", bypass_mode: "always" }],
    });
    expect((await boss.rest.repos.getOrgRuleset({ org, ruleset_id: set.id })).data.current_user_can_bypass).toBe("always");
    expect((await merge(boss, "merge")).data.merged).toBe(true);
  });

  it("an App installed on the organisation with its Administration permission manages them; without it, 404", async () => {
    const register = (slug: string, permissions: Record<string, "read" | "write">) => {
      const app = sim.control.registerApp({
        slug,
        publicKeyPem: appKeys().publicKeyPem,
        webhookUrl: receiver.url,
        webhookSecret: "o",
        permissions,
        events: [],
      });
      return new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.installationToken(sim.control.install(app.id, org, "all").id) });
    };
    const admin = register("org-admin", { organization_administration: "write", contents: "read" });
    const plain = register("org-plain", { contents: "write" });
    const body = { org, ...linear, name: "by an App" };
    expect(await refusedWith(plain.rest.repos.createOrgRuleset(body), 404)).toBe("Not Found");
    const { data: set } = await admin.rest.repos.createOrgRuleset(body);
    expect((await admin.rest.repos.getOrgRulesets({ org })).data.map((r) => r.name)).toContain("by an App");
    expect((await admin.rest.repos.deleteOrgRuleset({ org, ruleset_id: set.id })).status).toBe(204);
    expect(sim.violations.filter((v) => v.kind !== "request")).toEqual([]);
  });
});
