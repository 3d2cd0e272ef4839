// Dispatch → job started → job completed for a no-op workflow run by the sim runner, measured from
// the workflow_job webhooks the App receives. Also checks GitHub's rule that events caused by a
// workflow's GITHUB_TOKEN are delivered but start no workflows.
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimExecutor, type SimExecutor } from "../../src/local-github/runner/sim-executor.js";
import { createSim, type Sim } from "../../src/local-github/server.js";
import { appKeys, startReceiver, type Receiver } from "./support/helpers.js";

const NOOP = `name: noop
on:
  workflow_dispatch:
    inputs:
      n: { required: true }
permissions:
  issues: write
jobs:
  noop:
    runs-on: ubuntu-latest
    steps:
      - run: "true"
`;
const COMMENTER = `name: commenter
on: workflow_dispatch
permissions:
  issues: write
jobs:
  comment:
    runs-on: ubuntu-latest
    steps:
      - run: |
          curl -sf -X POST -H "authorization: token \${{ github.token }}" -H "content-type: application/json" \\
            -d '{"body":"from the workflow"}' "\${{ github.api_url }}/repos/\${{ github.repository }}/issues/1/comments" > /dev/null
`;

let sim: Sim;
let executor: SimExecutor;
let receiver: Receiver;
let gh: Octokit;

beforeAll(async () => {
  sim = await createSim();
  receiver = await startReceiver("l");
  await sim.control.createRepo({
    owner: "acme",
    name: "lat",
    files: { ".github/workflows/noop.yml": NOOP, ".github/workflows/commenter.yml": COMMENTER },
  });
  const app = sim.control.registerApp({
    slug: "forge-lat",
    publicKeyPem: appKeys().publicKeyPem,
    webhookUrl: receiver.url,
    webhookSecret: "l",
    permissions: { actions: "write", issues: "write" },
    events: ["workflow_job", "workflow_run", "issue_comment"],
  });
  const inst = sim.control.install(app.id, "acme", "all");
  executor = createSimExecutor({ concurrency: 2 });
  sim.onWorkflowDispatch(executor.handler);
  gh = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.installationToken(inst.id) });
});

afterAll(async () => {
  await sim?.close();
  await receiver?.close();
  executor?.dispose();
});

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

describe("dispatch latency of a no-op workflow", () => {
  it("measures dispatch → job started → job completed", async () => {
    const started: number[] = [];
    const completed: number[] = [];
    // Run 0 warms up (schema compilation, first runner start) and is not counted.
    for (let i = 0; i < 6; i++) {
      const t0 = performance.now();
      const res = await gh.request("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", {
        owner: "acme",
        repo: "lat",
        workflow_id: "noop.yml",
        ref: "main",
        inputs: { n: String(i) },
        return_run_details: true,
      });
      const runId = (res.data as unknown as { workflow_run_id: number }).workflow_run_id;
      const isJob = (action: string) => (h: { event: string; action: string | null; payload: Record<string, unknown> }) =>
        h.event === "workflow_job" && h.action === action && (h.payload.workflow_job as { run_id: number }).run_id === runId;
      await receiver.waitFor(isJob("in_progress"), 15_000);
      const s = performance.now() - t0;
      const done = await receiver.waitFor(isJob("completed"), 15_000);
      if (i > 0) {
        started.push(s);
        completed.push(performance.now() - t0);
      }
      expect((done.payload.workflow_job as { conclusion: string }).conclusion).toBe("success");
    }
    console.log(
      `no-op workflow: median dispatch → job started ${median(started).toFixed(0)} ms, → job completed ${median(completed).toFixed(0)} ms (n=${started.length})`,
    );
    expect(median(completed)).toBeLessThan(10_000);
    expect(receiver.received.every((h) => h.signatureValid && !h.schemaError)).toBe(true);
  });

  it("delivers events caused by the GITHUB_TOKEN, marked as starting no workflows", async () => {
    await gh.rest.issues.create({ owner: "acme", repo: "lat", title: "tracker" });
    const seen: boolean[] = [];
    const off = sim.onEvent((e) => {
      if (e.event === "issue_comment") seen.push(e.startsWorkflows);
    });
    await gh.rest.actions.createWorkflowDispatch({ owner: "acme", repo: "lat", workflow_id: "commenter.yml", ref: "main" });
    const hook = await receiver.waitFor((h) => h.event === "issue_comment", 15_000);
    off();
    expect((hook.payload.comment as { body: string }).body).toBe("from the workflow");
    expect((hook.payload.sender as { login: string }).login).toBe("github-actions[bot]");
    expect(seen).toEqual([false]);
    expect(sim.violations).toEqual([]);
  });
});
