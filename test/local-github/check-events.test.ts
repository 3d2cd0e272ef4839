// Who hears checks (src/local-github/domain/check-events.ts, after
// docs.github.com/webhooks/webhook-events-and-payloads#check_run and #check_suite): a workflow run is
// a check suite of GitHub Actions (App 15368) and each job a check run, and their `check_run`
// created/completed and `check_suite` completed reach every App that may read checks and repository
// hooks; `requested`/`rerequested` reach only the App asked; an App without Checks hears nothing of
// them; an App with Checks write hears them without subscribing. Another App (a CI service's) posts
// check runs and commit statuses with its own token, and required status checks count them as GitHub
// does — by name, or only from the App a rule names (`app_id`, `integration_id`). Every payload is
// checked against GitHub's webhook description by the receivers.
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACTIONS_APP_ID } from "../../src/local-github/domain/index.js";
import type { CiApp } from "../../src/local-github/ci-app.js";
import { createSim, type Sim } from "../../src/local-github/server.js";
import { appKeys, startReceiver, type ReceivedHook, type Receiver } from "./support/helpers.js";

const owner = "acme";
const repo = "lights";
const full = `${owner}/${repo}`;

const CI = `name: ci
on: push
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: "true"
  lint:
    runs-on: ubuntu-latest
    steps:
      - run: "false"
`;

let sim: Sim;
let admin: Octokit;
const receivers: Record<"reader" | "blind" | "ci" | "repoHook", Receiver> = {} as never;
let ci: CiApp;

function register(slug: string, url: string, permissions: Record<string, "read" | "write">, events: string[]): number {
  const app = sim.control.registerApp({
    slug,
    publicKeyPem: appKeys().publicKeyPem,
    webhookUrl: url,
    webhookSecret: "s",
    permissions,
    events,
  });
  sim.control.install(app.id, owner, [full]);
  return app.id;
}

/** `event.action` of what `r` heard about `sha` (a check run's or a suite's head), in order. */
function heard(r: Receiver, sha: string): string[] {
  return r.received
    .filter((h) => h.event.startsWith("check_") && headOf(h) === sha)
    .map((h) => `${h.event}.${h.action}:${appOf(h)}:${nameOf(h)}`)
    .sort();
}
const headOf = (h: ReceivedHook) => ((h.payload.check_run ?? h.payload.check_suite) as { head_sha: string }).head_sha;
const appOf = (h: ReceivedHook) => ((h.payload.check_run ?? h.payload.check_suite) as { app: { slug: string } }).app.slug;
const nameOf = (h: ReceivedHook) =>
  h.event === "check_run"
    ? `${(h.payload.check_run as { name: string }).name}=${(h.payload.check_run as { conclusion: string | null }).conclusion}`
    : `suite=${(h.payload.check_suite as { conclusion: string | null }).conclusion}`;

/** A commit on `branch` (made from main if new) by the repository's owner: on GitHub, a push. */
async function push(branch: string, path: string, content: string): Promise<string> {
  if (branch !== "main" && (await admin.rest.repos.getBranch({ owner, repo, branch }).catch(() => undefined)) === undefined) {
    const { data: main } = await admin.rest.repos.getBranch({ owner, repo, branch: "main" });
    await admin.rest.git.createRef({ owner, repo, ref: `refs/heads/${branch}`, sha: main.commit.sha });
  }
  const { data } = await admin.rest.repos.createOrUpdateFileContents({
    owner,
    repo,
    path,
    branch,
    message: `add ${path}`,
    content: Buffer.from(content).toString("base64"),
  });
  return data.commit.sha!;
}

beforeAll(async () => {
  sim = await createSim({ workflowExecutor: "none" });
  // The repository's CI: job `test` passes, `lint` fails.
  sim.onWorkflowDispatch((d) => {
    for (const name of ["test", "lint"]) {
      d.startJob(name);
      d.completeJob(name, name === "lint" ? "failure" : "success");
    }
    d.complete();
  });
  for (const k of ["reader", "blind", "ci", "repoHook"] as const) receivers[k] = await startReceiver("s");
  await sim.control.createRepo({ owner, name: repo, files: { "README.md": "# lights\n", ".github/workflows/ci.yml": CI } });
  admin = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken(owner) });
  // Checks read, subscribed: hears created/completed of everyone's checks, never a request.
  register("reader", receivers.reader.url, { checks: "read", statuses: "read" }, ["check_run", "check_suite", "status"]);
  // Subscribed, but without the Checks permission: hears no check.
  register("blind", receivers.blind.url, { issues: "read" }, ["check_run", "check_suite", "status"]);
  // A CI service's App: Checks write, subscribed to nothing — Checks write subscribes it all the same.
  ci = sim.control.ciApp({ account: owner, slug: "circle", repositories: [full], webhookUrl: receivers.ci.url, webhookSecret: "s" });
  sim.control.addRepoHook(full, receivers.repoHook.url, "s", ["check_run", "check_suite"]);
});

afterAll(async () => {
  await sim.close();
  await Promise.all(Object.values(receivers).map((r) => r.close()));
});

describe("GitHub Actions' checks", () => {
  it("a workflow run's jobs and suite reach every App that reads checks and the repository's hooks; requests reach only the App asked", async () => {
    const sha = await push("main", "a.txt", "a\n");
    const expected = [
      "check_run.completed:github-actions:lint=failure",
      "check_run.completed:github-actions:test=success",
      "check_run.created:github-actions:lint=null",
      "check_run.created:github-actions:test=null",
      "check_suite.completed:github-actions:suite=failure",
    ];
    for (const r of [receivers.reader, receivers.ci, receivers.repoHook])
      await r.waitFor((h) => h.event === "check_suite" && h.action === "completed" && appOf(h) === "github-actions" && headOf(h) === sha);
    await sim.idle();
    // The CI App hears its own suite requested for the push — and nobody else does.
    expect(heard(receivers.reader, sha)).toEqual(expected);
    expect(heard(receivers.repoHook, sha)).toEqual(expected);
    expect(heard(receivers.ci, sha)).toEqual([...expected, "check_suite.requested:circle:suite=null"].sort());
    expect(heard(receivers.blind, sha)).toEqual([]);
    // Actions' check runs and suite are GitHub Actions' (App 15368), on the pushed head and branch.
    const suite = receivers.reader.received.find((h) => h.event === "check_suite" && headOf(h) === sha)!.payload.check_suite as {
      app: { id: number };
      head_branch: string;
    };
    expect(suite).toMatchObject({ app: { id: ACTIONS_APP_ID }, head_branch: "main" });
    // The workflow run and its suite say the same.
    const { data: runs } = await admin.rest.actions.listWorkflowRunsForRepo({ owner, repo, head_sha: sha });
    expect(runs.workflow_runs.map((r) => [r.conclusion, r.check_suite_id])).toEqual([["failure", (suite as unknown as { id: number }).id]]);
    for (const r of Object.values(receivers)) expect(r.received.filter((h) => h.schemaError || !h.signatureValid)).toEqual([]);
    expect(sim.violations).toEqual([]);
  });
});

describe("another App's checks and statuses", () => {
  it("its check runs reach every App that reads checks; a rerequest reaches it alone", async () => {
    const sha = await push("feature", "b.txt", "b\n");
    const id = await ci.checkRun(full, sha, "circle: build", { status: "in_progress" });
    await ci.updateCheckRun(full, id, { conclusion: "failure", title: "2 tests failed", summary: "see the log" });
    for (const r of [receivers.reader, receivers.repoHook])
      await r.waitFor((h) => h.event === "check_suite" && h.action === "completed" && appOf(h) === "circle" && headOf(h) === sha);
    const mine = (r: Receiver) => heard(r, sha).filter((e) => e.includes(":circle:"));
    const expected = [
      "check_run.completed:circle:circle: build=failure",
      "check_run.created:circle:circle: build=null",
      "check_suite.completed:circle:suite=failure",
    ];
    expect(mine(receivers.reader)).toEqual(expected);
    expect(mine(receivers.repoHook)).toEqual(expected);
    expect(mine(receivers.ci)).toEqual([...expected, "check_suite.requested:circle:suite=null"].sort());
    expect(heard(receivers.blind, sha)).toEqual([]);
    // A person asks for it again: only its App hears (and no repository hook).
    const rerequest = (h: ReceivedHook) => h.event === "check_run" && h.action === "rerequested";
    const before = {
      reader: receivers.reader.received.filter(rerequest).length,
      hook: receivers.repoHook.received.filter(rerequest).length,
    };
    await admin.rest.checks.rerequestRun({ owner, repo, check_run_id: id });
    await receivers.ci.waitFor(rerequest);
    await sim.idle();
    expect(receivers.reader.received.filter(rerequest)).toHaveLength(before.reader);
    expect(receivers.repoHook.received.filter(rerequest)).toHaveLength(before.hook);
    // Its output is what the Checks API lists.
    const { data } = await admin.rest.checks.listForRef({ owner, repo, ref: sha, app_id: ci.id });
    expect(data.check_runs.map((c) => [c.name, c.conclusion, c.output.title, c.app?.slug])).toEqual([
      ["circle: build", "failure", "2 tests failed", "circle"],
    ]);
    expect(sim.violations).toEqual([]);
  });

  it("its commit statuses reach the Apps that read statuses, posted by its bot", async () => {
    const sha = await push("feature", "c.txt", "c\n");
    await ci.status(full, sha, "circleci: test", "failure", { description: "3 tests failed", targetUrl: "https://ci.example/41" });
    const got = await receivers.reader.waitFor((h) => h.event === "status" && (h.payload as { sha: string }).sha === sha);
    expect(got.payload).toMatchObject({ context: "circleci: test", state: "failure", sender: { login: "circle[bot]" } });
    expect(receivers.blind.received.filter((h) => h.event === "status")).toEqual([]);
  });
});

describe("required status checks count another App's reports as GitHub does", () => {
  /** A pull request of a new branch into main; merging it as the owner, the status GitHub answers. */
  async function pull(branch: string): Promise<{ number: number; sha: string; merge(): Promise<number> }> {
    const sha = await push(branch, `${branch}.txt`, `${branch}\n`);
    const { data: pr } = await admin.rest.pulls.create({ owner, repo, head: branch, base: "main", title: branch });
    const merge = async () => {
      try {
        return (await admin.rest.pulls.merge({ owner, repo, pull_number: pr.number, merge_method: "squash" })).status;
      } catch (e) {
        return (e as { status: number }).status;
      }
    };
    return { number: pr.number, sha, merge };
  }

  it("a ruleset's check with its integration_id counts only that App's check run or status; without one, any", async () => {
    const { data: set } = await admin.rest.repos.createRepoRuleset({
      owner,
      repo,
      name: "checks",
      target: "branch",
      enforcement: "active",
      conditions: { ref_name: { include: ["~DEFAULT_BRANCH"], exclude: [] } },
      rules: [
        {
          type: "required_status_checks",
          parameters: {
            strict_required_status_checks_policy: false,
            required_status_checks: [{ context: "circle: build", integration_id: ci.id }, { context: "deploy" }],
          },
        },
      ],
    });
    const p = await pull("ruled");
    // A person's green status of the App's check does not count; nor does nothing at all.
    await admin.rest.repos.createCommitStatus({ owner, repo, sha: p.sha, context: "circle: build", state: "success" });
    await admin.rest.repos.createCommitStatus({ owner, repo, sha: p.sha, context: "deploy", state: "success" });
    expect(await p.merge()).toBe(405);
    // The App's own green status counts (a status "must originate from" it: posted with its token).
    await ci.status(full, p.sha, "circle: build", "success");
    expect(await p.merge()).toBe(200);
    await admin.rest.repos.deleteRepoRuleset({ owner, repo, ruleset_id: set.id });
  });

  it("branch protection pins a check given without app_id to the App that last reported it; -1 takes any source", async () => {
    // "circle: build" was last reported by the CI App (above): the protection names it.
    await admin.rest.repos.updateBranchProtection({
      owner,
      repo,
      branch: "main",
      required_status_checks: { strict: false, contexts: [], checks: [{ context: "circle: build" }, { context: "anyone", app_id: -1 }] },
      enforce_admins: true,
      required_pull_request_reviews: null,
      restrictions: null,
    });
    const { data: prot } = await admin.rest.repos.getBranchProtection({ owner, repo, branch: "main" });
    expect(prot.required_status_checks?.checks).toEqual([
      { context: "circle: build", app_id: ci.id },
      { context: "anyone", app_id: null },
    ]);
    const p = await pull("guarded");
    await admin.rest.repos.createCommitStatus({ owner, repo, sha: p.sha, context: "anyone", state: "success" });
    // A person's green status of that name does not count; the pinned App's check run does, once green.
    await admin.rest.repos.createCommitStatus({ owner, repo, sha: p.sha, context: "circle: build", state: "success" });
    expect(await p.merge()).toBe(405);
    const id = await ci.checkRun(full, p.sha, "circle: build", { status: "in_progress" });
    expect(await p.merge()).toBe(405);
    await ci.updateCheckRun(full, id, { conclusion: "success", title: "ok", summary: "all green" });
    expect(await p.merge()).toBe(200);
    await admin.rest.repos.deleteBranchProtection({ owner, repo, branch: "main" });
    expect(sim.violations.filter((v) => v.kind !== "request")).toEqual([]);
  });
});
