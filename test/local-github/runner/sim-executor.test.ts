// The executor plugged into the local GitHub: a dispatched workflow checks the repository out over
// smart HTTP with the job's token, runs a local node action, and pushes a branch back.
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSim, type Sim } from "../../../src/local-github/server.js";
import { createSimExecutor, type SimExecutor } from "../../../src/local-github/runner/sim-executor.js";

let sim: Sim;
let executor: SimExecutor;
let gh: Octokit;

const WORKFLOW = `name: Forge agent
on:
  workflow_dispatch:
    inputs:
      task_id: { required: true }
      sleep: { default: "0" }
permissions:
  contents: write
concurrency:
  group: agent-\${{ inputs.task_id }}
  cancel-in-progress: false
jobs:
  agent:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - id: hello
        uses: ./.github/actions/hello
        with:
          task-id: \${{ inputs.task_id }}
      - name: Push the work
        run: |
          sleep "\${{ inputs.sleep }}"
          git config user.name "Forge Agent"
          git config user.email "agent@forge.invalid"
          git checkout -q -b "forge/\${{ inputs.task_id }}/\${{ github.run_id }}"
          echo "\${{ steps.hello.outputs.greeting }}" > out.txt
          git add out.txt
          git commit -qm "agent work for \${{ inputs.task_id }}"
          git push -q origin HEAD
          echo "pushed with \${{ secrets.FORGE_SECRET }}"
`;

const LATEST_WINS = `on:
  workflow_dispatch:
    inputs:
      sleep: { default: "0" }
concurrency:
  group: latest-wins
  cancel-in-progress: true
jobs:
  only:
    runs-on: ubuntu-latest
    steps:
      - run: sleep "\${{ inputs.sleep }}"
`;

const ACTION = `name: hello
inputs:
  task-id: { required: true }
outputs:
  greeting: { description: greeting }
runs:
  using: node20
  main: index.cjs
`;
const ACTION_MAIN = `require("fs").appendFileSync(process.env.GITHUB_OUTPUT, "greeting=hello " + process.env["INPUT_TASK-ID"] + "\\n");\n`;

beforeAll(async () => {
  sim = await createSim();
  await sim.control.createRepo({
    owner: "acme",
    name: "widgets",
    files: {
      "README.md": "# widgets\n",
      ".github/workflows/forge-agent.yml": WORKFLOW,
      ".github/actions/hello/action.yml": ACTION,
      ".github/actions/hello/index.cjs": ACTION_MAIN,
      ".github/workflows/latest-wins.yml": LATEST_WINS,
    },
  });
  executor = createSimExecutor({ concurrency: 2, secrets: { "acme/widgets": { FORGE_SECRET: "very-secret-value" } }, killGraceMs: 200 });
  sim.onWorkflowDispatch(executor.handler);
  gh = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken("acme") });
});

afterAll(async () => {
  await sim?.close();
  executor?.dispose();
});

async function dispatch(inputs: Record<string, string>, workflow = "forge-agent.yml"): Promise<number> {
  const res = await gh.request("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", {
    owner: "acme",
    repo: "widgets",
    workflow_id: workflow,
    ref: "main",
    inputs,
    return_run_details: true,
  });
  return (res.data as unknown as { workflow_run_id: number }).workflow_run_id;
}

async function waitForRun(runId: number, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { data } = await gh.rest.actions.getWorkflowRun({ owner: "acme", repo: "widgets", run_id: runId });
    if (data.status === "completed") return data;
    if (Date.now() > deadline) throw new Error(`run ${runId} still ${data.status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("the sim runner behind the local GitHub's workflow_dispatch", () => {
  it("runs a dispatched job: HTTP checkout with the job token, a local action, a push back", async () => {
    const t0 = performance.now();
    const runId = await dispatch({ task_id: "t1" });
    const run = await waitForRun(runId);
    const elapsed = performance.now() - t0;
    const { data: jobs } = await gh.rest.actions.listJobsForWorkflowRun({ owner: "acme", repo: "widgets", run_id: runId });
    expect(run.conclusion, JSON.stringify(jobs.jobs[0]?.steps)).toBe("success");
    expect(jobs.jobs[0]!.steps!.map((s) => [s.name, s.conclusion])).toEqual([
      ["Run actions/checkout@v4", "success"],
      ["Run ./.github/actions/hello", "success"],
      ["Push the work", "success"],
    ]);
    // The push really landed in the sim's repository.
    const { data: file } = await gh.rest.repos.getContent({ owner: "acme", repo: "widgets", path: "out.txt", ref: `forge/t1/${runId}` });
    expect(Buffer.from((file as { content: string }).content, "base64").toString()).toBe("hello t1\n");
    const log = sim.core.state.runs.get(runId)!.jobs[0]!.log;
    expect(log).toContain("pushed with ***");
    expect(log).not.toContain("very-secret-value");
    console.log(`dispatch → completed (checkout, node action, commit, push): ${elapsed.toFixed(0)} ms`);
  });

  it("refuses a dispatch with an unknown input (422) and cancels a running job", async () => {
    await expect(dispatch({ task_id: "t2", nope: "x" })).rejects.toMatchObject({ status: 422 });
    const runId = await dispatch({ task_id: "t3", sleep: "20" });
    // Wait until the long step is running, then cancel through the API.
    const deadline = Date.now() + 10_000;
    while (!sim.core.state.runs.get(runId)!.jobs[0]!.log.includes("Push the work")) {
      if (Date.now() > deadline) throw new Error("job never reached its last step");
      await new Promise((r) => setTimeout(r, 50));
    }
    await gh.rest.actions.cancelWorkflowRun({ owner: "acme", repo: "widgets", run_id: runId });
    const run = await waitForRun(runId);
    expect(run.conclusion).toBe("cancelled");
  });

  it("applies concurrency groups: one running, the newest pending, older pending runs cancelled", async () => {
    const first = await dispatch({ task_id: "c1", sleep: "1" });
    const second = await dispatch({ task_id: "c1" });
    const third = await dispatch({ task_id: "c1" });
    const [r1, r2, r3] = [await waitForRun(first), await waitForRun(second), await waitForRun(third)];
    expect([r1.conclusion, r2.conclusion, r3.conclusion], sim.core.state.runs.get(third)!.jobs[0]!.log).toEqual([
      "success",
      "cancelled",
      "success",
    ]);
    const runs = sim.core.state.runs;
    expect(runs.get(second)!.jobs[0]!.log).toContain("Canceling since a higher priority waiting request for 'agent-c1' exists");
    expect(runs.get(second)!.jobs[0]!.log).not.toContain("Push the work");
    // The third waited for the first to finish.
    expect(Date.parse(runs.get(third)!.jobs[0]!.startedAt!)).toBeGreaterThanOrEqual(Date.parse(runs.get(first)!.jobs[0]!.completedAt!));
  });

  it("cancels the running run of a cancel-in-progress group when a new one arrives", async () => {
    const first = await dispatch({ sleep: "20" }, "latest-wins.yml");
    const deadline = Date.now() + 10_000;
    while (!sim.core.state.runs.get(first)!.jobs[0]!.log.includes("sleep")) {
      if (Date.now() > deadline) throw new Error("first run never started its step");
      await new Promise((r) => setTimeout(r, 50));
    }
    const second = await dispatch({ sleep: "0" }, "latest-wins.yml");
    const [r1, r2] = [await waitForRun(first), await waitForRun(second)];
    expect([r1.conclusion, r2.conclusion]).toEqual(["cancelled", "success"]);
    expect(sim.core.state.runs.get(first)!.jobs[0]!.log).toContain(
      "Canceling since a higher priority waiting request for 'latest-wins' exists",
    );
  });

  it("fails the job when its runner is killed mid-job", async () => {
    const runId = await dispatch({ task_id: "t4", sleep: "20" });
    const deadline = Date.now() + 10_000;
    while (!sim.core.state.runs.get(runId)!.jobs[0]!.log.includes("Push the work")) {
      if (Date.now() > deadline) throw new Error("job never reached its last step");
      await new Promise((r) => setTimeout(r, 50));
    }
    const active = executor.active().find((a) => a.runId === runId)!;
    active.job.kill();
    const run = await waitForRun(runId);
    expect(run.conclusion).toBe("failure");
    expect(sim.core.state.runs.get(runId)!.jobs[0]!.log).toContain("The runner has received a shutdown signal");
  });
});
