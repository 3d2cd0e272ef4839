// Workflow files GitHub refuses, refused by the local GitHub as GitHub refuses them (its own parser,
// @actions/workflow-parser, decides): a push runs such a file as a run that fails at once — no jobs,
// no check runs, the annotation "Invalid workflow file" on the file's line with "The workflow is
// not valid. <the parser's messages>" — and the workflow is listed under its path; a dispatch of
// it is answered 422 "Invalid Argument - failed to parse workflow: …" and starts nothing.
// (Run pages: "Invalid workflow file: .github/workflows/build.yml#L41 — The workflow is not valid.
// .github/workflows/build.yml (Line: 41, Col: 17): Unexpected value 'read'"; `gh workflow run`:
// "HTTP 422: Invalid Argument - failed to parse workflow: (Line: 65, Col: 26): Unexpected symbol: '??'…".)
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSim, type Sim } from "../../src/local-github/server.js";

const OWNER = "acme";
const REPO = "ci";

const VALID = `name: CI
on: push
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: "true"
`;
// `foo` is no job key (line 6, column 5).
const UNKNOWN_KEY = `name: Unknown key
on: [push, workflow_dispatch]
jobs:
  test:
    runs-on: ubuntu-latest
    foo: bar
    steps:
      - run: "true"
`;
// Only the conversion finds this one: an if: that is not an expression.
const BAD_IF = `name: Bad if
on:
  workflow_dispatch:
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: "true"
        if: failure() ||
`;
const NOT_YAML = "on: [push\njobs: {}\n";

let sim: Sim;
let gh: Octokit;

beforeAll(async () => {
  sim = await createSim({ workflowExecutor: "noop" });
  await sim.control.createRepo({
    owner: OWNER,
    name: REPO,
    files: {
      ".github/workflows/ci.yml": VALID,
      ".github/workflows/unknown-key.yml": UNKNOWN_KEY,
      ".github/workflows/bad-if.yml": BAD_IF,
      ".github/workflows/not-yaml.yml": NOT_YAML,
    },
  });
  gh = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken(OWNER) });
});

afterAll(async () => {
  await sim?.close();
});

async function runsOn(branch: string, n: number) {
  for (let i = 0; i < 200; i++) {
    await sim.idle();
    const { data } = await gh.rest.actions.listWorkflowRunsForRepo({ owner: OWNER, repo: REPO, branch });
    if (data.workflow_runs.length >= n && data.workflow_runs.every((r) => r.status === "completed")) return data.workflow_runs;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`the runs on ${branch} did not complete`);
}

describe("workflow files GitHub refuses, on the local GitHub", () => {
  it("a push runs each refused file as a run failed at once, with no jobs and GitHub's annotation; the valid one runs", async () => {
    const sha = (await gh.rest.git.getRef({ owner: OWNER, repo: REPO, ref: "heads/main" })).data.object.sha;
    await gh.rest.git.createRef({ owner: OWNER, repo: REPO, ref: "refs/heads/topic", sha });
    // ci.yml and unknown-key.yml name push; not-yaml.yml has no readable `on:` (a failed run on every push); bad-if.yml is dispatch-only.
    const runs = await runsOn("topic", 3);
    expect(runs.map((r) => [r.path, r.name, r.event, r.status, r.conclusion]).sort()).toEqual([
      [".github/workflows/ci.yml", "CI", "push", "completed", "success"],
      [".github/workflows/not-yaml.yml", ".github/workflows/not-yaml.yml", "push", "completed", "failure"],
      [".github/workflows/unknown-key.yml", ".github/workflows/unknown-key.yml", "push", "completed", "failure"],
    ]);

    const refused = runs.find((r) => r.path.endsWith("unknown-key.yml"))!;
    const { data: jobs } = await gh.rest.actions.listJobsForWorkflowRun({ owner: OWNER, repo: REPO, run_id: refused.id });
    expect(jobs.total_count).toBe(0);
    const { data: checks } = await gh.rest.checks.listForRef({ owner: OWNER, repo: REPO, ref: sha });
    expect(checks.check_runs.map((c) => c.name)).toEqual(["test"]);
    expect(sim.core.state.runs.get(refused.id)!.annotations).toEqual([
      {
        path: ".github/workflows/unknown-key.yml",
        startLine: 6,
        endLine: 6,
        level: "failure",
        title: "Invalid workflow file",
        message: "The workflow is not valid. .github/workflows/unknown-key.yml (Line: 6, Col: 5): Unexpected value 'foo'",
      },
    ]);
    const notYaml = runs.find((r) => r.path.endsWith("not-yaml.yml"))!;
    expect(sim.core.state.runs.get(notYaml.id)!.annotations![0]!.message).toMatch(
      /^The workflow is not valid\. \.github\/workflows\/not-yaml\.yml: .*Flow sequence/,
    );
  });

  it("lists a refused workflow under its path, as GitHub does when it cannot read its name", async () => {
    const { data } = await gh.rest.actions.listRepoWorkflows({ owner: OWNER, repo: REPO });
    expect(data.workflows.map((w) => [w.path, w.name]).sort()).toEqual([
      [".github/workflows/bad-if.yml", ".github/workflows/bad-if.yml"],
      [".github/workflows/ci.yml", "CI"],
      [".github/workflows/not-yaml.yml", ".github/workflows/not-yaml.yml"],
      [".github/workflows/unknown-key.yml", ".github/workflows/unknown-key.yml"],
    ]);
  });

  it("answers a dispatch of a refused file 422 with the parser's messages, and starts nothing", async () => {
    const before = (await gh.rest.actions.listWorkflowRunsForRepo({ owner: OWNER, repo: REPO })).data.total_count;
    for (const [file, message] of [
      ["bad-if.yml", "Invalid Argument - failed to parse workflow: (Line: 9, Col: 13): Unexpected end of expression: '||'"],
      ["unknown-key.yml", "Invalid Argument - failed to parse workflow: (Line: 6, Col: 5): Unexpected value 'foo'"],
    ] as const) {
      const err = (await gh.rest.actions.createWorkflowDispatch({ owner: OWNER, repo: REPO, workflow_id: file, ref: "main" }).then(
        () => undefined,
        (e: unknown) => e,
      )) as { status?: number; response?: { data?: { message?: string } } } | undefined;
      expect(err?.status, file).toBe(422);
      expect(err?.response?.data?.message, file).toBe(message);
    }
    await sim.idle();
    expect((await gh.rest.actions.listWorkflowRunsForRepo({ owner: OWNER, repo: REPO })).data.total_count).toBe(before);
    expect(sim.violations).toEqual([]);
  });
});
