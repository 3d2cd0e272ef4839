// Workflow files read as GitHub reads them (GitHub's own parser, @actions/workflow-parser): what it
// refuses is refused here with its messages, and a valid file gives the runner its jobs, steps,
// ids and conditions; workflow_dispatch inputs are checked as GitHub checks them.
import { describe, expect, it } from "vitest";
import { DispatchInputError, dispatchErrorBody, parseDispatchInputs } from "../../../src/local-github/runner/dispatch-inputs.js";
import { readWorkflow, resolvePermissions, selectJob, WorkflowError } from "../../../src/local-github/runner/workflow.js";

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

/** The WorkflowError a file GitHub refuses gives. */
async function refused(text: string): Promise<WorkflowError> {
  const err: unknown = await readWorkflow(text, ".github/workflows/ci.yml").then(
    () => undefined,
    (e: unknown) => e,
  );
  if (err instanceof WorkflowError) return err;
  throw new Error(`expected a WorkflowError, got ${String(err)}`);
}

describe("workflow_dispatch inputs", () => {
  it("applies defaults and types", async () => {
    const r = parseDispatchInputs(await readWorkflow(wf), { run_id: "r1", task_id: "t1" });
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

  it("accepts booleans and numbers sent as strings or JSON values", async () => {
    const r = parseDispatchInputs(await readWorkflow(wf), {
      run_id: "r",
      task_id: "t",
      dry_run: "true",
      verbose: true,
      budget: "2.5",
      agent: "codex",
    });
    expect(r.inputs.dry_run).toBe(true);
    expect(r.inputs.verbose).toBe(true);
    expect(r.inputs.budget).toBe(2.5);
    expect(r.inputs.agent).toBe("codex");
  });

  it("refuses unknown inputs with GitHub's 422 message", async () => {
    const w = await readWorkflow(wf);
    const err = refusal(() => parseDispatchInputs(w, { run_id: "r", task_id: "t", foo: "1", bar: "2" }));
    expect(err.status).toBe(422);
    expect(err.message).toBe('Unexpected inputs provided: ["foo", "bar"]');
    expect(dispatchErrorBody(err)).toEqual({
      message: 'Unexpected inputs provided: ["foo", "bar"]',
      documentation_url: "https://docs.github.com/rest/actions/workflows#create-a-workflow-dispatch-event",
      status: "422",
    });
  });

  it("refuses a missing required input", async () => {
    const w = await readWorkflow(wf);
    expect(refusal(() => parseDispatchInputs(w, { run_id: "r" })).message).toBe("Required input 'task_id' not provided");
    expect(refusal(() => parseDispatchInputs(w, { run_id: "r", task_id: "" })).message).toBe("Required input 'task_id' not provided");
  });

  it("refuses a value outside a choice and a non-boolean", async () => {
    const w = await readWorkflow(wf);
    expect(refusal(() => parseDispatchInputs(w, { run_id: "r", task_id: "t", agent: "gpt" })).message).toMatch(
      /not in the list of allowed values/,
    );
    expect(refusal(() => parseDispatchInputs(w, { run_id: "r", task_id: "t", dry_run: "yes" })).message).toMatch(/is not a valid boolean/);
  });

  it("refuses a workflow without a workflow_dispatch trigger", async () => {
    const push = await readWorkflow("on: push\njobs:\n  a:\n    runs-on: x\n    steps: [{ run: 'true' }]\n");
    expect(refusal(() => parseDispatchInputs(push, {})).message).toBe("Workflow does not have 'workflow_dispatch' trigger");
    const both = await readWorkflow("on: [push, workflow_dispatch]\njobs:\n  a:\n    runs-on: x\n    steps: [{ run: 'true' }]\n");
    expect(parseDispatchInputs(both, {}).inputs).toEqual({});
  });
});

describe("workflow files GitHub refuses are refused, with its parser's messages", () => {
  const job = (extra: string) => `on: push\njobs:\n  build:\n    runs-on: ubuntu-latest\n${extra}    steps:\n      - run: "true"\n`;
  const cases: Array<[string, string, string]> = [
    ["an unknown key at job level", job("    foo: 1\n"), ".github/workflows/ci.yml (Line: 5, Col: 5): Unexpected value 'foo'"],
    [
      "an unknown event",
      "on: pushh\njobs:\n  a:\n    runs-on: x\n    steps: [{ run: 'true' }]\n",
      ".github/workflows/ci.yml (Line: 1, Col: 5): Unexpected value 'pushh'",
    ],
    [
      "an expression syntax error",
      "on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - run: echo ${{ inputs.a + 1 }}\n",
      ".github/workflows/ci.yml (Line: 6, Col: 14): Unexpected symbol: '+'. Located at position 10 within expression: inputs.a + 1",
    ],
    [
      "an if: that does not parse",
      "on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - run: 'true'\n        if: failure() ||\n",
      ".github/workflows/ci.yml (Line: 7, Col: 13): Unexpected end of expression: '||'",
    ],
    [
      "a context GitHub does not allow there (steps in a job's env)",
      job("    env:\n      A: ${{ steps.x.outputs.y }}\n"),
      ".github/workflows/ci.yml (Line: 6, Col: 10): Unrecognized named-value: 'steps'",
    ],
    [
      "a job without runs-on",
      "on: push\njobs:\n  a:\n    steps: [{ run: 'true' }]\n",
      "(Line: 4, Col: 5): Required property is missing: runs-on",
    ],
    [
      "a step with neither run nor uses",
      "on: push\njobs:\n  a:\n    runs-on: x\n    steps: [{ name: x }]\n",
      "(Line: 5, Col: 13): There's not enough info to determine what you meant. Add one of these properties: run, shell, uses, with, working-directory",
    ],
    [
      "needs: an unknown job",
      "on: push\njobs:\n  a:\n    runs-on: x\n    steps: [{ run: 'true' }]\n  b:\n    runs-on: x\n    needs: nope\n    steps: [{ run: 'true' }]\n",
      "(Line: 8, Col: 12): Job 'b' depends on unknown job 'nope'.",
    ],
    ["no on:", "jobs:\n  a:\n    runs-on: x\n    steps: [{ run: 'true' }]\n", "(Line: 1, Col: 1): Required property is missing: on"],
  ];
  for (const [what, text, message] of cases) {
    it(`refuses ${what}`, async () => {
      const err = await refused(text);
      expect(err.message).toMatch(/^The workflow is not valid\. /);
      expect(err.message).toContain(message);
      expect(err.path).toBe(".github/workflows/ci.yml");
    });
  }

  it("refuses a file that is not YAML, and names the first line at fault", async () => {
    const err = await refused("on: [push\n");
    expect(err.message).toContain("Flow sequence in block collection must be sufficiently indented and end with a ]");
    const foo = await refused(job("    foo: 1\n    bar: 2\n"));
    expect(foo.line).toBe(5);
    expect(foo.problems.map((p) => p.reason)).toEqual(["Unexpected value 'foo'", "Unexpected value 'bar'"]);
  });

  it("words a refused dispatch as GitHub's API does (no file name, errors joined)", async () => {
    const err = await refused(job("    foo: 1\n    bar: 2\n"));
    expect(err.dispatchRefusal()).toBe(
      "Invalid Argument - failed to parse workflow: (Line: 5, Col: 5): Unexpected value 'foo', (Line: 6, Col: 5): Unexpected value 'bar'",
    );
  });
});

describe("a valid workflow as the runner reads it", () => {
  it("selects the job and resolves permissions", async () => {
    const parsed = await readWorkflow(wf);
    const [id, job] = selectJob(parsed);
    expect(id).toBe("agent");
    const p = resolvePermissions(parsed, job)!;
    expect(p.contents).toBe("write");
    expect(p["pull-requests"]).toBe("write");
    expect(p.issues).toBe("none");
    const ro = await readWorkflow("on: push\npermissions: read-all\njobs:\n  a:\n    runs-on: x\n    steps: [{ run: 'true' }]\n");
    expect(resolvePermissions(ro, ro.jobs.a!)!.checks).toBe("read");
    expect(() => selectJob(parsed, "nope")).toThrow(/no job 'nope'/);
  });

  it("gives each step GitHub's id (GITHUB_ACTION) and condition", async () => {
    const w = await readWorkflow(`on: push
jobs:
  a:
    runs-on: x
    if: github.ref == 'refs/heads/main'
    steps:
      - uses: actions/checkout@v4
      - run: "true"
      - id: mine
        run: "true"
        if: \${{ always() }}
      - run: "true"
`);
    const job = w.jobs.a!;
    expect(job.if).toBe("success() && (github.ref == 'refs/heads/main')");
    expect(job.steps.map((s) => s.contextId)).toEqual(["__actions_checkout", "__run", "mine", "__run_2"]);
    expect(job.steps.map((s) => s.if)).toEqual(["success()", "success()", "always()", "success()"]);
    expect(job.steps[2]!.id).toBe("mine");
  });
});
