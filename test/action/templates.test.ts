// The workflow templates users install, read the way GitHub reads them (GitHub's own parser, as the sim runner reads them):
// the dispatch inputs the App sends, the job token's scopes, the concurrency group, the timeout.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { DISPATCH_INPUTS } from "../../src/core/layout.js";
import { forgeConfigSchema } from "../../src/core/schemas/config.js";
import { describeJob } from "../../src/local-github/runner/executor.js";
import { parseDispatchInputs } from "../../src/local-github/runner/dispatch-inputs.js";
import { readWorkflow } from "../../src/local-github/runner/workflow.js";

const agent = readFileSync("templates/workflows/forge-agent.yml", "utf8");
const tick = readFileSync("templates/workflows/forge-tick.yml", "utf8");
const context = {
  repository: "acme/demo",
  ref: "refs/heads/forge/r1/t1/2",
  sha: "a".repeat(40),
  serverUrl: "https://github.com",
  apiUrl: "https://api.github.com",
  token: "t",
  runId: 1,
  actor: "forge[bot]",
};
const inputs = {
  [DISPATCH_INPUTS.runId]: "r1",
  [DISPATCH_INPUTS.taskId]: "t1",
  [DISPATCH_INPUTS.attempt]: "2",
  [DISPATCH_INPUTS.context]: '{"answer":"yes"}',
};

describe("templates/workflows/forge-agent.yml", () => {
  it("accepts exactly the dispatch inputs of layout.ts; run_id, task_id and attempt are required", async () => {
    const wf = await readWorkflow(agent);
    expect(parseDispatchInputs(wf, inputs).eventInputs).toEqual(inputs);
    expect(parseDispatchInputs(wf, { run_id: "r1", task_id: "t1", attempt: "1" }).inputs.context).toBe("");
    expect(() => parseDispatchInputs(wf, { run_id: "r1", task_id: "t1" })).toThrow("Required input 'attempt' not provided");
    expect(() => parseDispatchInputs(wf, { ...inputs, extra: "x" })).toThrow('Unexpected inputs provided: ["extra"]');
  });

  it("gives the job token contents, pull-requests and checks (its live check run) write, and nothing else", async () => {
    const job = await describeJob({ workflowText: agent, inputs, context });
    const granted = Object.entries(job.permissions ?? {}).filter(([, level]) => level !== "none");
    expect(Object.fromEntries(granted)).toEqual({ contents: "write", "pull-requests": "write", checks: "write" });
  });

  it("runs one job per run/task/attempt and stops before the job's own limit", async () => {
    const job = await describeJob({ workflowText: agent, inputs, context });
    expect(job.concurrency.workflow).toMatchObject({ group: "forge-agent-r1-t1-2", cancelInProgress: false });
    // Above the agent's wall clock (timeouts.agent_minutes), so the runner stops the agent first and keeps its work.
    expect(job.timeoutMinutes).toBe(forgeConfigSchema.parse({}).timeouts.job_minutes);
    expect(job.timeoutMinutes).toBeGreaterThan(forgeConfigSchema.parse({}).timeouts.agent_minutes);
  });

  it("checks out without persisting the token and passes the inputs to the action", () => {
    const steps = (parseYaml(agent) as { jobs: { agent: { steps: Array<{ uses?: string; with?: Record<string, unknown> }> } } }).jobs.agent
      .steps;
    expect(steps[0]).toMatchObject({
      uses: expect.stringMatching(/^actions\/checkout@[0-9a-f]{40}$/),
      with: { "persist-credentials": false },
    });
    const forge = steps.find((s) => s.uses?.endsWith("/action@v1"))!;
    expect(forge.with).toEqual({
      "run-id": "${{ inputs.run_id }}",
      "task-id": "${{ inputs.task_id }}",
      attempt: "${{ inputs.attempt }}",
      context: "${{ inputs.context }}",
      "anthropic-api-key": "${{ secrets.ANTHROPIC_API_KEY }}",
    });
  });
});

describe("templates/workflows/forge-tick.yml", () => {
  it("runs Forge's action in tick mode on a schedule with a read-only job token, and nothing else", async () => {
    const wf = parseYaml(tick) as {
      on: { schedule: Array<{ cron: string }>; workflow_dispatch: unknown };
      jobs: { tick: { steps: Array<{ uses?: string; run?: string; with?: Record<string, unknown> }> } };
    };
    expect(wf.on.schedule[0]!.cron).toBe("*/10 * * * *");
    expect(wf.on).toHaveProperty("workflow_dispatch");
    // One step: no checkout, no setup-node, no install, no npx — nothing fetched by a bare name.
    expect(wf.jobs.tick.steps).toEqual([
      {
        name: "Reconcile active Forge runs",
        uses: "forge-dev/forge/action@v1",
        with: {
          mode: "tick",
          "app-id": "${{ secrets.FORGE_APP_ID }}",
          "app-private-key": "${{ secrets.FORGE_APP_PRIVATE_KEY }}",
        },
      },
    ]);
    const job = await describeJob({ workflowText: tick, context: { ...context, eventName: "schedule", event: {} } });
    const granted = Object.entries(job.permissions ?? {}).filter(([, level]) => level !== "none");
    expect(Object.fromEntries(granted)).toEqual({ contents: "read" });
    expect(job.concurrency.workflow).toMatchObject({ group: "forge-tick" });
  });
});
