// GraphQL at /api/graphql: documents are validated against GitHub's schema
// (@octokit/graphql-schema) and the mutations Forge uses behave as documented.
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSim, type Sim } from "../../src/local-github/server.js";
import { appKeys, startReceiver, type Receiver } from "./support/helpers.js";

let sim: Sim;
let receiver: Receiver;
let gh: Octokit;
let reader: Octokit;

beforeAll(async () => {
  sim = await createSim();
  receiver = await startReceiver("g");
  await sim.control.createRepo({ owner: "acme", name: "w", files: { "a.txt": "a\n" }, collaborators: { rita: "read" } });
  const app = sim.control.registerApp({
    slug: "forge-gql",
    publicKeyPem: appKeys().publicKeyPem,
    webhookUrl: receiver.url,
    webhookSecret: "g",
    permissions: { contents: "write", pull_requests: "write" },
    events: ["pull_request", "push"],
  });
  const inst = sim.control.install(app.id, "acme", "all");
  gh = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.installationToken(inst.id) });
  reader = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken("rita") });
});

afterAll(async () => {
  await sim?.close();
  await receiver?.close();
});

async function gqlError(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error("the GraphQL call succeeded");
}

describe("GraphQL", () => {
  it("marks a draft PR ready for review and back, with webhooks", async () => {
    const { data: main } = await gh.rest.git.getRef({ owner: "acme", repo: "w", ref: "heads/main" });
    await gh.rest.git.createRef({ owner: "acme", repo: "w", ref: "refs/heads/t1", sha: main.object.sha });
    await gh.rest.repos.createOrUpdateFileContents({
      owner: "acme",
      repo: "w",
      path: "b.txt",
      message: "b",
      content: "Yg==",
      branch: "t1",
    });
    const { data: pr } = await gh.rest.pulls.create({ owner: "acme", repo: "w", head: "t1", base: "main", title: "t1", draft: true });
    const ready = await gh.graphql<{ markPullRequestReadyForReview: { pullRequest: { isDraft: boolean; number: number } } }>(
      "mutation($id: ID!) { markPullRequestReadyForReview(input: { pullRequestId: $id }) { pullRequest { isDraft number } } }",
      { id: pr.node_id },
    );
    expect(ready.markPullRequestReadyForReview.pullRequest).toEqual({ isDraft: false, number: pr.number });
    expect((await gh.rest.pulls.get({ owner: "acme", repo: "w", pull_number: pr.number })).data.draft).toBe(false);
    await gh.graphql("mutation($id: ID!) { convertPullRequestToDraft(input: { pullRequestId: $id }) { pullRequest { isDraft } } }", {
      id: pr.node_id,
    });
    const q = await gh.graphql<{ repository: { pullRequest: { isDraft: boolean; headRefOid: string }; ref: { target: { oid: string } } } }>(
      'query($n: Int!) { repository(owner: "acme", name: "w") { pullRequest(number: $n) { isDraft headRefOid } ref(qualifiedName: "refs/heads/main") { target { oid } } } }',
      { n: pr.number },
    );
    expect(q.repository.pullRequest.isDraft).toBe(true);
    expect(q.repository.ref.target.oid).toBe(main.object.sha);
    // A person with read access cannot.
    expect(
      await gqlError(
        reader.graphql("mutation($id: ID!) { markPullRequestReadyForReview(input: { pullRequestId: $id }) { pullRequest { isDraft } } }", {
          id: pr.node_id,
        }),
      ),
    ).toMatch(/permissions/);
    await sim.idle();
    const actions = receiver.received.filter((h) => h.event === "pull_request").map((h) => h.action);
    expect(actions).toEqual(["opened", "ready_for_review", "converted_to_draft"]);
    expect(receiver.received.every((h) => h.signatureValid && !h.schemaError)).toBe(true);
  });

  it("createCommitOnBranch is a strict compare-and-swap on expectedHeadOid", async () => {
    const { data: main } = await gh.rest.git.getRef({ owner: "acme", repo: "w", ref: "heads/main" });
    const mutation = `mutation($input: CreateCommitOnBranchInput!) { createCommitOnBranch(input: $input) { commit { oid } ref { name target { oid } } } }`;
    const input = (expected: string, text: string) => ({
      branch: { repositoryNameWithOwner: "acme/w", branchName: "main" },
      expectedHeadOid: expected,
      message: { headline: "journal write", body: "seq 1" },
      fileChanges: {
        additions: [{ path: "state/journal.json", contents: Buffer.from(text).toString("base64") }],
        deletions: [{ path: "a.txt" }],
      },
    });
    const res = await gh.graphql<{ createCommitOnBranch: { commit: { oid: string }; ref: { name: string; target: { oid: string } } } }>(
      mutation,
      { input: input(main.object.sha, "{}") },
    );
    const sha = res.createCommitOnBranch.commit.oid;
    expect(res.createCommitOnBranch.ref).toEqual({ name: "main", target: { oid: sha } });
    const { data: c } = await gh.rest.git.getCommit({ owner: "acme", repo: "w", commit_sha: sha });
    expect(c.parents.map((p) => p.sha)).toEqual([main.object.sha]);
    expect(c.message).toBe("journal write\n\nseq 1");
    const { data: file } = await gh.rest.repos.getContent({ owner: "acme", repo: "w", path: "state/journal.json" });
    expect(Buffer.from((file as { content: string }).content, "base64").toString()).toBe("{}");
    expect(await gqlError(gh.rest.repos.getContent({ owner: "acme", repo: "w", path: "a.txt" }))).toMatch(/Not Found/);
    // The same expected head again lost the race.
    expect(await gqlError(gh.graphql(mutation, { input: input(main.object.sha, '{"x":1}') }))).toMatch(/Expected branch to point to/);
    await sim.idle();
    expect(receiver.received.some((h) => h.event === "push" && h.payload.after === sha)).toBe(true);
  });

  it("rejects documents that GitHub's schema rejects, and names fields it does not model", async () => {
    expect(await gqlError(gh.graphql('{ repository(owner: "acme", name: "w") { noSuchField } }'))).toMatch(
      /Cannot query field "noSuchField" on type "Repository"/,
    );
    expect(await gqlError(gh.graphql('{ repository(owner: "acme", name: "w") { stargazerCount } }'))).toMatch(
      /Repository\.stargazerCount is not implemented by Forge's local GitHub/,
    );
    expect(await gqlError(gh.graphql('mutation { addStar(input: { starrableId: "x" }) { clientMutationId } }'))).toMatch(
      /Mutation\.addStar is not implemented/,
    );
    expect(sim.violations).toEqual([]);
  });
});
