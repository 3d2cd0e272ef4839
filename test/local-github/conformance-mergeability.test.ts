// Conformance of a pull request's mergeability and of updating its branch, as GitHub documents them:
// `mergeable` is computed in a background job — null (`mergeable_state` "unknown") at the first read
// after the head or the base changed, the value at a later one
// (docs.github.com/rest/guides/using-the-rest-api-to-interact-with-your-git-database#checking-mergeability-of-pull-requests);
// `mergeable_state` and GraphQL's `mergeable`/`mergeStateStatus` as GitHub reports them; and
// PUT …/pulls/{n}/update-branch (docs.github.com/rest/pulls/pulls#update-a-pull-request-branch).
// Every call goes through plain @octokit/rest; the local GitHub validates requests and answers
// against GitHub's description (strict under vitest). The job's time runs on a test clock.
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSim, type Sim } from "../../src/local-github/server.js";
import type { EmittedEvent } from "../../src/local-github/webhooks.js";
import { TestClock } from "../helpers/clock.js";
import { appKeys } from "./support/helpers.js";

const owner = "acme";
const JOB_MS = 2000;
const clock = new TestClock();
let sim: Sim;
let admin: Octokit;
let alice: Octokit;
const events: EmittedEvent[] = [];

beforeAll(async () => {
  sim = await createSim({ clock, mergeabilityMs: JOB_MS });
  sim.onEvent((e) => events.push(e));
  admin = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken(owner) });
  alice = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken("alice") });
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

async function put(repo: string, branch: string, path: string, content: string): Promise<string> {
  const { data } = await alice.rest.repos.createOrUpdateFileContents({
    owner,
    repo,
    path,
    branch,
    message: path,
    content: Buffer.from(content).toString("base64"),
    ...(await shaOf(repo, branch, path)),
  });
  return data.commit.sha!;
}

async function shaOf(repo: string, ref: string, path: string): Promise<{ sha?: string }> {
  try {
    const { data } = await alice.rest.repos.getContent({ owner, repo, path, ref });
    return Array.isArray(data) ? {} : { sha: data.sha };
  } catch {
    return {};
  }
}

/** A repository with `files` on main, a branch `feature` with `change` on it, and its pull request into main. */
async function repoWithPull(
  name: string,
  change: Record<string, string> = { "f.txt": "f\n" },
  opts: { draft?: boolean; files?: Record<string, string> } = {},
): Promise<{ repo: string; number: number; head: string; base: string }> {
  await sim.control.createRepo({ owner, name, files: { "README.md": `# ${name}\n`, ...opts.files }, collaborators: { alice: "write" } });
  const { data: main } = await alice.rest.git.getRef({ owner, repo: name, ref: "heads/main" });
  await alice.rest.git.createRef({ owner, repo: name, ref: "refs/heads/feature", sha: main.object.sha });
  let head = main.object.sha;
  for (const [path, content] of Object.entries(change)) head = await put(name, "feature", path, content);
  const { data: pr } = await alice.rest.pulls.create({
    owner,
    repo: name,
    head: "feature",
    base: "main",
    title: "Feature",
    draft: opts.draft,
  });
  expect(pr.mergeable).toBeNull();
  return { repo: name, number: pr.number, head, base: main.object.sha };
}

async function read(repo: string, number: number): Promise<[boolean | null, string]> {
  const { data } = await alice.rest.pulls.get({ owner, repo, pull_number: number });
  return [data.mergeable, data.mergeable_state];
}

/** What a read answers once GitHub's job is done. */
async function computed(repo: string, number: number): Promise<[boolean | null, string]> {
  await read(repo, number);
  await clock.advance(JOB_MS);
  return read(repo, number);
}

const GRAPHQL_PULL = `query ($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) { pullRequest(number: $number) { mergeable mergeStateStatus } }
}`;

async function graphqlState(repo: string, number: number): Promise<{ mergeable: string; mergeStateStatus: string }> {
  const data = await alice.graphql<{ repository: { pullRequest: { mergeable: string; mergeStateStatus: string } } }>(GRAPHQL_PULL, {
    owner,
    name: repo,
    number,
    baseUrl: sim.url + "/api",
  });
  return data.repository.pullRequest;
}

describe("mergeable, computed in the background", () => {
  it("null while GitHub computes it, the value once its job is done; a push to the head or the base starts it again", async () => {
    const { repo, number } = await repoWithPull("mergeable-job");
    // The job started at the create: a read before it is done answers null and "unknown".
    expect(await read(repo, number)).toEqual([null, "unknown"]);
    await clock.advance(JOB_MS - 1);
    expect(await read(repo, number)).toEqual([null, "unknown"]);
    await clock.advance(1);
    expect(await read(repo, number)).toEqual([true, "clean"]);
    // The head moves: the synchronize payload and the first read say null, a later read the value.
    events.length = 0;
    await put(repo, "feature", "g.txt", "g\n");
    const sync = events.find((e) => e.event === "pull_request" && e.action === "synchronize");
    expect((sync?.payload.pull_request as { mergeable: unknown }).mergeable).toBeNull();
    expect(await computed(repo, number)).toEqual([true, "clean"]);
    // The base moves (a conflicting change): null first, then false and "dirty".
    await put(repo, "main", "f.txt", "other\n");
    expect(await read(repo, number)).toEqual([null, "unknown"]);
    await clock.advance(JOB_MS);
    expect(await read(repo, number)).toEqual([false, "dirty"]);
  });

  it("GraphQL: mergeable UNKNOWN then MERGEABLE or CONFLICTING, mergeStateStatus UNKNOWN then CLEAN or DIRTY", async () => {
    const { repo, number } = await repoWithPull("mergeable-graphql");
    expect(await graphqlState(repo, number)).toEqual({ mergeable: "UNKNOWN", mergeStateStatus: "UNKNOWN" });
    await clock.advance(JOB_MS);
    expect(await graphqlState(repo, number)).toEqual({ mergeable: "MERGEABLE", mergeStateStatus: "CLEAN" });
    await put(repo, "main", "f.txt", "other\n");
    expect(await graphqlState(repo, number)).toEqual({ mergeable: "UNKNOWN", mergeStateStatus: "UNKNOWN" });
    await clock.advance(JOB_MS);
    expect(await graphqlState(repo, number)).toEqual({ mergeable: "CONFLICTING", mergeStateStatus: "DIRTY" });
  });
});

describe("mergeable_state", () => {
  it("draft, blocked by a required check, behind under strict protection, unstable with a failing check that is not required, clean", async () => {
    const draft = await repoWithPull("state-draft", undefined, { draft: true });
    expect(await computed(draft.repo, draft.number)).toEqual([true, "draft"]);

    const { repo, number, head } = await repoWithPull("state-protected");
    await admin.rest.repos.updateBranchProtection({
      owner,
      repo,
      branch: "main",
      required_status_checks: { strict: true, contexts: ["ci"] },
      enforce_admins: true,
      required_pull_request_reviews: null,
      restrictions: null,
    });
    // The required check has not reported: blocked.
    expect(await computed(repo, number)).toEqual([true, "blocked"]);
    await alice.rest.repos.createCommitStatus({ owner, repo, sha: head, context: "ci", state: "success" });
    expect(await read(repo, number)).toEqual([true, "clean"]);
    // A check that is not required fails: unstable.
    await alice.rest.repos.createCommitStatus({ owner, repo, sha: head, context: "lint", state: "failure" });
    expect(await read(repo, number)).toEqual([true, "unstable"]);
    // The base moves: strict protection wants the head to contain it.
    await admin.rest.repos.createOrUpdateFileContents({ owner, repo, path: "other.txt", branch: "main", message: "o", content: "bw==" });
    expect(await computed(repo, number)).toEqual([true, "behind"]);
  });

  it("a ruleset's required approvals block; its strict required status checks make a head that lacks the base's tip behind", async () => {
    const { repo, number, head } = await repoWithPull("state-ruleset");
    const { data: set } = await admin.rest.repos.createRepoRuleset({
      owner,
      repo,
      name: "main",
      target: "branch",
      enforcement: "active",
      conditions: { ref_name: { include: ["~DEFAULT_BRANCH"], exclude: [] } },
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
        {
          type: "required_status_checks",
          parameters: { required_status_checks: [{ context: "ci" }], strict_required_status_checks_policy: true },
        },
      ],
    });
    await alice.rest.repos.createCommitStatus({ owner, repo, sha: head, context: "ci", state: "success" });
    expect(await computed(repo, number)).toEqual([true, "blocked"]);
    await admin.rest.pulls.createReview({ owner, repo, pull_number: number, event: "APPROVE" });
    expect(await read(repo, number)).toEqual([true, "clean"]);
    await admin.rest.repos.createOrUpdateFileContents({ owner, repo, path: "other.txt", branch: "main", message: "o", content: "bw==" });
    expect(await computed(repo, number)).toEqual([true, "behind"]);
    await admin.rest.repos.deleteRepoRuleset({ owner, repo, ruleset_id: set.id });
  });
});

describe("PUT /repos/{owner}/{repo}/pulls/{pull_number}/update-branch", () => {
  const CI = `name: ci\non: push\njobs:\n  ci:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ok\n`;

  it("202: the base is merged into the head by the caller, with push and synchronize, and the push starts the repository's CI", async () => {
    const { repo, number, head } = await repoWithPull("update-ok", undefined, { files: { ".github/workflows/ci.yml": CI } });
    const base = await put(repo, "main", "other.txt", "o\n");
    // The CI the head's push started has not run (no runner here): a check that is not required and not done.
    expect(await computed(repo, number)).toEqual([true, "unstable"]);
    events.length = 0;
    const { status, data } = await alice.rest.pulls.updateBranch({ owner, repo, pull_number: number, expected_head_sha: head });
    expect(status).toBe(202);
    expect(data).toEqual({ message: "Updating pull request branch.", url: `${sim.url}/${owner}/${repo}/pull/${number}` });
    const { data: pr } = await alice.rest.pulls.get({ owner, repo, pull_number: number });
    const { data: commit } = await alice.rest.git.getCommit({ owner, repo, commit_sha: pr.head.sha });
    expect(commit.parents.map((p) => p.sha)).toEqual([head, base]);
    expect(commit.message).toBe("Merge branch 'main' into feature");
    expect(commit.author.name).toBe("alice");
    // As a push of the caller's: push, then synchronize from the old head to the new one.
    const push = events.find((e) => e.event === "push" && e.payload.ref === "refs/heads/feature");
    expect(push?.payload).toMatchObject({ before: head, after: pr.head.sha, sender: { login: "alice" } });
    const sync = events.find((e) => e.event === "pull_request" && e.action === "synchronize");
    expect(sync?.payload).toMatchObject({ before: head, after: pr.head.sha, sender: { login: "alice" } });
    await sim.idle();
    const { data: runs } = await alice.rest.actions.listWorkflowRunsForRepo({ owner, repo, event: "push", head_sha: pr.head.sha });
    expect(runs.workflow_runs.map((r) => r.path)).toEqual([".github/workflows/ci.yml"]);
    // The new head has everything of the base: nothing more to bring in (422), and mergeability is computed anew.
    expect(await read(repo, number)).toEqual([null, "unknown"]);
    expect(await refusedWith(alice.rest.pulls.updateBranch({ owner, repo, pull_number: number }), 422)).toBe(
      "There are no new commits on the base branch.",
    );
  });

  it("422 when expected_head_sha is not the head, or when merging the base conflicts; the branch stays where it was", async () => {
    const { repo, number, head, base } = await repoWithPull("update-refused");
    await put(repo, "main", "other.txt", "o\n");
    expect(await refusedWith(alice.rest.pulls.updateBranch({ owner, repo, pull_number: number, expected_head_sha: base }), 422)).toBe(
      "expected head sha didn't match current head ref.",
    );
    await put(repo, "main", "f.txt", "conflicting\n");
    expect(await refusedWith(alice.rest.pulls.updateBranch({ owner, repo, pull_number: number, expected_head_sha: head }), 422)).toBe(
      "merge conflict between base and head",
    );
    expect((await alice.rest.pulls.get({ owner, repo, pull_number: number })).data.head.sha).toBe(head);
  });

  it("an App needs Contents write on the head's repository (403); a protected head branch refuses the write as any push", async () => {
    const { repo, number } = await repoWithPull("update-perms");
    await put(repo, "main", "other.txt", "o\n");
    const keys = appKeys();
    const app = sim.control.registerApp({
      slug: "reader-app",
      publicKeyPem: keys.publicKeyPem,
      webhookUrl: "http://127.0.0.1:9/unused",
      webhookSecret: "s",
      permissions: { contents: "read", pull_requests: "write" },
      events: [],
    });
    const inst = sim.control.install(app.id, owner, [`${owner}/${repo}`]);
    const asApp = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.installationToken(inst.id) });
    expect(await refusedWith(asApp.rest.pulls.updateBranch({ owner, repo, pull_number: number }), 403)).toBe(
      "Resource not accessible by integration",
    );
    await admin.rest.repos.updateBranchProtection({
      owner,
      repo,
      branch: "feature",
      required_status_checks: null,
      enforce_admins: true,
      required_pull_request_reviews: { required_approving_review_count: 1 },
      restrictions: null,
    });
    expect(await refusedWith(alice.rest.pulls.updateBranch({ owner, repo, pull_number: number }), 422)).toContain(
      "Protected branch update failed for refs/heads/feature.",
    );
  });
});
