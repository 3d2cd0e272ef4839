import { describe, expect, it } from "vitest";
import {
  DispatchInputError,
  dispatchErrorBody,
  parseDispatchInputs,
  parseWorkflow,
  resolvePermissions,
  selectJob,
  WorkflowError,
} from "../../../src/local-github/runner/workflow.js";

const wf = `
on:
  workflow_dispatch:
    inputs:
      run_id: { description: Run, required: true, type: string }
      task_id: { required: true }
      attempt: { required: false, default: "1" }
      dry_run: { type: boolean, default: false }
      verbose: { type: boolean }
      agent: { type: choice, options: [claude, codex, command], default: claude }
      budget: { type: number, default: 5 }
jobs:
  agent:
    runs-on: ubuntu-latest
    permissions: { contents: write, pull-requests: write }
    steps: [{ run: "true" }]
`;

function refusal(fn: () => unknown): DispatchInputError {
  try {
    fn();
  } catch (err) {
    if (err instanceof DispatchInputError) return err;
    throw err;
  }
  throw new Error("expected a DispatchInputError");
}

describe("workflow_dispatch inputs", () => {
  it("applies defaults and types", () => {
    const r = parseDispatchInputs(wf, { run_id: "r1", task_id: "t1" });
    expect(r.inputs).toEqual({ run_id: "r1", task_id: "t1", attempt: "1", dry_run: false, verbose: false, agent: "claude", budget: 5 });
    // github.event.inputs keeps every value a string
    expect(r.eventInputs).toEqual({
      run_id: "r1",
      task_id: "t1",
      attempt: "1",
      dry_run: "false",
      verbose: "false",
      agent: "claude",
      budget: "5",
    });
  });

  it("accepts booleans and numbers sent as strings or JSON values", () => {
    const r = parseDispatchInputs(wf, { run_id: "r", task_id: "t", dry_run: "true", verbose: true, budget: "2.5", agent: "codex" });
    expect(r.inputs.dry_run).toBe(true);
    expect(r.inputs.verbose).toBe(true);
    expect(r.inputs.budget).toBe(2.5);
    expect(r.inputs.agent).toBe("codex");
  });

  it("refuses unknown inputs with GitHub's 422 message", () => {
    const err = refusal(() => parseDispatchInputs(wf, { run_id: "r", task_id: "t", foo: "1", bar: "2" }));
    expect(err.status).toBe(422);
    expect(err.message).toBe('Unexpected inputs provided: ["foo", "bar"]');
    expect(dispatchErrorBody(err)).toEqual({
      message: 'Unexpected inputs provided: ["foo", "bar"]',
      documentation_url: "https://docs.github.com/rest/actions/workflows#create-a-workflow-dispatch-event",
      status: "422",
    });
  });

  it("refuses a missing required input", () => {
    expect(refusal(() => parseDispatchInputs(wf, { run_id: "r" })).message).toBe("Required input 'task_id' not provided");
    expect(refusal(() => parseDispatchInputs(wf, { run_id: "r", task_id: "" })).message).toBe("Required input 'task_id' not provided");
  });

  it("refuses a value outside a choice and a non-boolean", () => {
    expect(refusal(() => parseDispatchInputs(wf, { run_id: "r", task_id: "t", agent: "gpt" })).message).toMatch(
      /not in the list of allowed values/,
    );
    expect(refusal(() => parseDispatchInputs(wf, { run_id: "r", task_id: "t", dry_run: "yes" })).message).toMatch(/is not a valid boolean/);
  });

  it("refuses a workflow without a workflow_dispatch trigger", () => {
    const push = "on: push\njobs:\n  a:\n    steps: [{ run: 'true' }]\n";
    expect(refusal(() => parseDispatchInputs(push, {})).message).toBe("Workflow does not have 'workflow_dispatch' trigger");
    expect(parseDispatchInputs("on: [push, workflow_dispatch]\njobs:\n  a:\n    steps: [{ run: 'true' }]\n", {}).inputs).toEqual({});
  });
});

describe("workflow parsing", () => {
  it("rejects malformed workflows", () => {
    expect(() => parseWorkflow("jobs: {}")).toThrow(WorkflowError);
    expect(() => parseWorkflow("on: push\njobs:\n  a:\n    steps: [{ name: x }]\n")).toThrow(/exactly one of 'run' or 'uses'/);
    expect(() => parseWorkflow("on: [push\n")).toThrow(/Invalid workflow file/);
  });

  it("selects the job and resolves permissions", () => {
    const parsed = parseWorkflow(wf);
    const [id, job] = selectJob(parsed);
    expect(id).toBe("agent");
    const p = resolvePermissions(parsed, job)!;
    expect(p.contents).toBe("write");
    expect(p["pull-requests"]).toBe("write");
    expect(p.issues).toBe("none");
    const ro = parseWorkflow("on: push\npermissions: read-all\njobs:\n  a:\n    steps: [{ run: 'true' }]\n");
    expect(resolvePermissions(ro, ro.jobs.a!)!.checks).toBe("read");
    expect(() => selectJob(parsed, "nope")).toThrow(/no job 'nope'/);
  });
});
