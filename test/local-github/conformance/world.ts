/**
 * The one world of the conformance test (conformance.test.ts): a local GitHub in strict mode with a
 * repository, an App installed on it with a webhook receiver, and clients for the App, its
 * installation, a writer and a reader. Every part of the test works on it, so that the last test can
 * prove every implemented operation answered a success.
 */
import { execFile } from "node:child_process";
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, expect } from "vitest";
import { createSim, type Sim } from "../../../src/local-github/server.js";
import { appJwt, appKeys, startReceiver, type Receiver } from "../support/helpers.js";

export const owner = "acme";
export const repo = "gadgets";
export const WORKFLOW = `name: Forge agent
run-name: forge \${{ inputs.task_id }}/\${{ github.event.inputs.attempt }}
on:
  workflow_dispatch:
    inputs:
      task_id:
        description: task
        required: true
      attempt:
        required: false
        default: "1"
      mode:
        type: choice
        options: [fast, slow]
        default: fast
permissions:
  contents: write
  pull-requests: write
jobs:
  agent:
    runs-on: ubuntu-latest
    steps:
      - run: echo hi
`;

export interface ConformanceWorld {
  sim: Sim;
  receiver: Receiver;
  /** The App's installation. */
  gh: Octokit;
  /** The App itself (its JWT). */
  asApp: Octokit;
  /** alice, who may write. */
  person: Octokit;
  /** rita, who may read. */
  reader: Octokit;
  appId: number;
  installationId: number;
}

/** Filled in by `useConformanceWorld`'s beforeAll. */
export const w = {} as ConformanceWorld;

/** Status of a failing Octokit call. */
export async function status(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return 200;
  } catch (e) {
    return (e as { status: number }).status;
  }
}

/**
 * A pull request's `mergeable` once GitHub's background job has computed it: the first read after
 * its head or base changed answers null, a later one the value.
 */
export async function mergeableOf(number: number): Promise<{ mergeable: boolean | null; mergeable_state: string }> {
  for (let i = 0; ; i++) {
    const { data } = await w.gh.rest.pulls.get({ owner, repo, pull_number: number });
    if (data.mergeable !== null || i >= 60) return { mergeable: data.mergeable, mergeable_state: data.mergeable_state };
    expect(data.mergeable_state).toBe("unknown");
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts the world before the file's tests and closes it after them. */
export function useConformanceWorld(): void {
  beforeAll(async () => {
    // GitHub computes `mergeable` in a background job; here it takes 100 ms of real time.
    w.sim = await createSim({ workflowExecutor: "noop", mergeabilityMs: 100 });
    w.receiver = await startReceiver("hook-secret");
    await w.sim.control.createRepo({
      owner,
      name: repo,
      files: { "README.md": "# gadgets\n", "src/a.txt": "a\n", ".github/workflows/forge-agent.yml": WORKFLOW },
      collaborators: { alice: "write", rita: "read" },
    });
    const keys = appKeys();
    w.appId = w.sim.control.registerApp({
      slug: "forge-conf",
      publicKeyPem: keys.publicKeyPem,
      webhookUrl: w.receiver.url,
      webhookSecret: "hook-secret",
      permissions: { contents: "write", pull_requests: "write", issues: "write", checks: "write", actions: "write", statuses: "write" },
      events: [
        "push",
        "create",
        "delete",
        "pull_request",
        "pull_request_review",
        "issues",
        "issue_comment",
        "check_run",
        "check_suite",
        "workflow_run",
        "workflow_job",
        "workflow_dispatch",
        "sub_issues",
        "issue_dependencies",
      ],
    }).id;
    w.installationId = w.sim.control.install(w.appId, owner, [`${owner}/${repo}`]).id;
    w.asApp = new Octokit({ baseUrl: w.sim.apiUrl, auth: appJwt(w.appId, keys.privateKeyPem) });
    const { data } = await w.asApp.rest.apps.createInstallationAccessToken({ installation_id: w.installationId });
    w.gh = new Octokit({ baseUrl: w.sim.apiUrl, auth: data.token });
    w.person = new Octokit({ baseUrl: w.sim.apiUrl, auth: w.sim.control.userToken("alice") });
    w.reader = new Octokit({ baseUrl: w.sim.apiUrl, auth: w.sim.control.userToken("rita") });
  });

  afterAll(async () => {
    await w.sim?.close();
    await w.receiver?.close();
  });
}

/** A git command against the simulator, asynchronous (the server answering it runs in this process). */
export function gitIn(cwd: string, args: string[], token?: string): Promise<string> {
  const auth = token ? ["-c", `http.extraheader=AUTHORIZATION: basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`] : [];
  return new Promise((resolve, reject) =>
    execFile(
      "git",
      [...auth, ...args],
      {
        cwd,
        encoding: "utf8",
        env: {
          ...process.env,
          GIT_TERMINAL_PROMPT: "0",
          GIT_CONFIG_NOSYSTEM: "1",
          HOME: cwd,
          GIT_AUTHOR_NAME: "Agent",
          GIT_AUTHOR_EMAIL: "agent@forge.invalid",
          GIT_COMMITTER_NAME: "Agent",
          GIT_COMMITTER_EMAIL: "agent@forge.invalid",
        },
      },
      (err, stdout, stderr) => (err ? reject(Object.assign(err, { stderr })) : resolve(stdout)),
    ),
  );
}

/** The stderr of a git command that must fail. */
export async function gitRefused(cwd: string, args: string[], token: string): Promise<string> {
  try {
    await gitIn(cwd, args, token);
  } catch (e) {
    return String((e as { stderr: string }).stderr);
  }
  throw new Error(`git ${args.join(" ")} succeeded`);
}

/** The message of a failing Octokit call, checking its status. */
export async function refusedWith(p: Promise<unknown>, expected: number): Promise<string> {
  try {
    await p;
  } catch (e) {
    const err = e as { status: number; response?: { data?: { message?: string } } };
    expect(err.status).toBe(expected);
    return err.response?.data?.message ?? "";
  }
  throw new Error("the call went through");
}

/** An App with the Administration and Secrets permissions, installed on the owner's repositories (Forge's doctor reads these). */
let doctors = 0;
export async function doctorApp(permissions: Record<string, "read" | "write">): Promise<Octokit> {
  const k = appKeys();
  const id = w.sim.control.registerApp({
    slug: `forge-doctor-${++doctors}`,
    publicKeyPem: k.publicKeyPem,
    permissions,
    events: [],
  }).id;
  const inst = w.sim.control.install(id, owner, "all");
  return new Octokit({ baseUrl: w.sim.apiUrl, auth: w.sim.control.installationToken(inst.id) });
}

/** Polls a run until it completes (a refused run completes right after the dispatch answered). */
export async function completedRun(kit: Octokit, name: string, runId: number): Promise<{ conclusion: string | null }> {
  for (let i = 0; i < 200; i++) {
    const { data } = await kit.rest.actions.getWorkflowRun({ owner, repo: name, run_id: runId });
    if (data.status === "completed") return data;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`run ${runId} did not complete`);
}
