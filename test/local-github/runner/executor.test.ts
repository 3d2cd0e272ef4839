import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { describeJob, runJob } from "../../../src/local-github/runner/executor.js";
import { baseContext, dispatch, git, makeBareRepo, removeDir, tempDir } from "./test-helpers.js";

let root: string;
let workspace: string;
beforeEach(() => {
  root = tempDir();
  workspace = path.join(root, "ws");
});
afterEach(() => removeDir(root));

describe("runJob: environment and contexts", () => {
  it("sets GITHUB_*, RUNNER_* and the event file; GITHUB_TOKEN only where passed", async () => {
    const wf = dispatch(
      "      task_id: { required: true }\n      dry: { type: boolean, default: true }",
      `    steps:
      - id: dump
        run: env | grep -E '^(GITHUB_|RUNNER_|CI=)' | sort > "$RUNNER_TEMP/env.txt"
      - env:
          GITHUB_TOKEN: \${{ secrets.GITHUB_TOKEN }}
        run: test "$GITHUB_TOKEN" = "\${{ github.token }}" && echo "token passed"
      - run: cp "$GITHUB_EVENT_PATH" "$RUNNER_TEMP/event-copy.json"
`,
    );
    const runnerTemp = path.join(root, "tmp");
    const r = await runJob({ workflowText: wf, inputs: { task_id: "t9" }, context: baseContext(), workspace, runnerTemp });
    expect(r.conclusion).toBe("success");
    const env = Object.fromEntries(
      readFileSync(path.join(runnerTemp, "env.txt"), "utf8")
        .trim()
        .split("\n")
        .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
    );
    expect(env).toMatchObject({
      CI: "true",
      GITHUB_ACTIONS: "true",
      GITHUB_WORKSPACE: workspace,
      GITHUB_REPOSITORY: "acme/app",
      GITHUB_REF: "refs/heads/main",
      GITHUB_REF_NAME: "main",
      GITHUB_SHA: "0123456789abcdef0123456789abcdef01234567",
      GITHUB_RUN_ID: "4242",
      GITHUB_RUN_ATTEMPT: "2",
      GITHUB_SERVER_URL: "http://127.0.0.1:9",
      GITHUB_API_URL: "http://127.0.0.1:9/api/v3",
      GITHUB_GRAPHQL_URL: "http://127.0.0.1:9/api/graphql",
      GITHUB_EVENT_NAME: "workflow_dispatch",
      GITHUB_ACTOR: "octocat",
      GITHUB_JOB: "agent",
      GITHUB_WORKFLOW: "Forge agent",
      GITHUB_ACTION: "dump",
      RUNNER_OS: "Linux",
      RUNNER_TEMP: runnerTemp,
      RUNNER_NAME: "forge-sim-runner",
    });
    expect(env.RUNNER_TOOL_CACHE).toBeTruthy();
    for (const f of ["GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STEP_SUMMARY", "GITHUB_STATE"])
      expect(env[f]).toContain(runnerTemp);
    expect(env.GITHUB_TOKEN).toBeUndefined();
    expect(r.steps[1]!.log).toContain("token passed");
    // The dispatch payload: inputs as strings, as GitHub sends them.
    const event = JSON.parse(readFileSync(path.join(runnerTemp, "event-copy.json"), "utf8")) as { inputs: unknown; ref: string };
    expect(event.inputs).toEqual({ task_id: "t9", dry: "true" });
    expect(event.ref).toBe("refs/heads/main");
  });

  it("passes outputs, env and PATH between steps through the env files, heredocs included", async () => {
    const wf = dispatch(
      "",
      `    env:
      LEVEL: job
    outputs:
      result: \${{ steps.second.outputs.joined }}
    steps:
      - id: first
        run: |
          mkdir -p "$RUNNER_TEMP/bin"
          printf '#!/bin/sh\\necho from-path-tool\\n' > "$RUNNER_TEMP/bin/forge-tool"
          chmod +x "$RUNNER_TEMP/bin/forge-tool"
          echo "$RUNNER_TEMP/bin" >> "$GITHUB_PATH"
          echo "single=one" >> "$GITHUB_OUTPUT"
          { echo "multi<<ghadelimiter_123"; echo "line 1"; echo "line=2"; echo "ghadelimiter_123"; } >> "$GITHUB_OUTPUT"
          echo "FROM_STEP=carried" >> "$GITHUB_ENV"
          echo "### Summary from first" >> "$GITHUB_STEP_SUMMARY"
      - id: second
        env:
          STEP_VAR: \${{ env.FROM_STEP }}-\${{ env.LEVEL }}
        run: |
          echo "joined=\${{ steps.first.outputs.single }}|$FROM_STEP|$STEP_VAR|$(forge-tool)" >> "$GITHUB_OUTPUT"
          echo "\${{ steps.first.outputs.multi }}" > "$RUNNER_TEMP/multi.txt"
`,
    );
    const runnerTemp = path.join(root, "tmp");
    const r = await runJob({ workflowText: wf, context: baseContext(), workspace, runnerTemp });
    expect(r.conclusion).toBe("success");
    expect(r.steps[0]!.outputs).toEqual({ single: "one", multi: "line 1\nline=2" });
    expect(r.steps[1]!.outputs.joined).toBe("one|carried|carried-job|from-path-tool");
    expect(readFileSync(path.join(runnerTemp, "multi.txt"), "utf8")).toBe("line 1\nline=2\n");
    expect(r.outputs).toEqual({ result: "one|carried|carried-job|from-path-tool" });
    expect(r.summary).toBe("### Summary from first\n");
  });

  it("removes a RUNNER_TEMP it created when the job ends", async () => {
    const wf = dispatch("", `    steps:\n      - id: t\n        run: echo "dir=$RUNNER_TEMP" >> "$GITHUB_OUTPUT"\n`);
    const r = await runJob({ workflowText: wf, context: baseContext(), workspace });
    const dir = r.steps[0]!.outputs.dir!;
    expect(dir).toMatch(/forge-runner-/);
    expect(existsSync(dir)).toBe(false);
  });

  it("fails a step whose heredoc is never closed", async () => {
    const wf = dispatch("", `    steps:\n      - run: printf 'x<<EOF\\nnever closed\\n' >> "$GITHUB_OUTPUT"\n`);
    const r = await runJob({ workflowText: wf, context: baseContext(), workspace });
    expect(r.conclusion).toBe("failure");
    expect(r.steps[0]!.error).toMatch(/Matching delimiter not found 'EOF'/);
  });

  it("masks secrets, the token and ::add-mask:: values in logs", async () => {
    const wf = dispatch(
      "",
      `    steps:
      - run: |
          echo "key=\${{ secrets.ANTHROPIC_API_KEY }} token=\${{ github.token }}"
          echo "::add-mask::runtime-secret-42"
          echo "later: runtime-secret-42"
          echo "::warning title=Careful::watch out"
`,
    );
    const r = await runJob({ workflowText: wf, context: baseContext(), workspace });
    const log = r.steps[0]!.log.join("\n");
    expect(log).not.toContain("sk-ant-secret-value");
    expect(log).not.toContain("ghs_testtoken123456");
    expect(log).not.toContain("runtime-secret-42");
    expect(log).toContain("key=*** token=***");
    expect(log).toContain("later: ***");
    expect(r.steps[0]!.annotations).toEqual([{ level: "warning", message: "watch out", properties: { title: "Careful" } }]);
  });
});

describe("runJob: steps as another user (runAs)", () => {
  // As on GitHub's hosted runners: the runner is root, the steps run as a user of their own.
  it.runIf(process.getuid?.() === 0)(
    "runs every step as that user, in a workspace and temp folder of its own, and reads its file commands",
    async () => {
      const nobody = { uid: 65534, gid: 65534, user: "nobody" };
      const wf = dispatch(
        "",
        `    steps:
      - id: who
        run: |
          echo "uid=$(id -u)" >> "$GITHUB_OUTPUT"
          echo "$HOME $USER" > "$GITHUB_WORKSPACE/who.txt"
          touch "$RUNNER_TEMP/made"
`,
      );
      const runnerTemp = path.join(root, "tmp");
      const r = await runJob({ workflowText: wf, context: baseContext(), workspace, runnerTemp, runAs: nobody });
      expect(r.conclusion, JSON.stringify(r.steps.map((s) => s.log))).toBe("success");
      expect(r.steps[0]!.outputs).toEqual({ uid: "65534" });
      expect(readFileSync(path.join(workspace, "who.txt"), "utf8")).toBe(`${runnerTemp} nobody\n`);
      expect(statSync(path.join(runnerTemp, "made")).uid).toBe(65534);
      expect(statSync(workspace).uid).toBe(65534);
    },
  );
});

describe("runJob: step control", () => {
  it("honours if:, continue-on-error, failure() and always(), and records outcome vs conclusion", async () => {
    const wf = dispatch(
      "",
      `    steps:
      - id: flaky
        continue-on-error: true
        run: exit 3
      - id: after
        run: echo "outcome=\${{ steps.flaky.outcome }} conclusion=\${{ steps.flaky.conclusion }}"
      - id: boom
        run: exit 1
      - run: echo should not run
      - if: failure()
        run: echo on failure
      - if: always() && inputs.task_id == 'T1'
        run: echo always
      - if: success()
        run: echo never
`,
    );
    const r = await runJob({ workflowText: wf, context: baseContext(), workspace });
    expect(r.conclusion).toBe("failure");
    expect(r.steps.map((s) => [s.outcome, s.conclusion])).toEqual([
      ["failure", "success"],
      ["success", "success"],
      ["failure", "failure"],
      ["skipped", "skipped"],
      ["success", "success"],
      ["success", "success"],
      ["skipped", "skipped"],
    ]);
    expect(r.steps[0]!.exitCode).toBe(3);
    expect(r.steps[1]!.log).toContain("outcome=failure conclusion=success");
    expect(r.steps[2]!.log).toContain("##[error]Process completed with exit code 1.");
  });

  it("uses bash -e by default and pipefail with shell: bash; honours working-directory", async () => {
    mkdirSync(path.join(workspace, "sub"), { recursive: true });
    const wf = dispatch(
      "",
      `    steps:
      - run: false | true
      - working-directory: sub
        run: pwd
      - shell: bash
        run: false | true
`,
    );
    const r = await runJob({ workflowText: wf, context: baseContext(), workspace });
    expect(r.steps.map((s) => s.outcome)).toEqual(["success", "success", "failure"]);
    expect(r.steps[1]!.log).toContain(path.join(workspace, "sub"));
  });

  it("fails a step whose expression fails as GitHub evaluates it, and one with an unknown remote action", async () => {
    const wf = dispatch(
      "",
      `    steps:
      - run: echo \${{ fromJSON('{nope') }}
      - if: always()
        uses: someone/else@v1
`,
    );
    const r = await runJob({ workflowText: wf, context: baseContext(), workspace });
    expect(r.conclusion).toBe("failure");
    expect(r.steps[0]!.error).toMatch(
      /^The template is not valid\. \.github\/workflows\/forge-agent\.yml \(Line: \d+, Col: \d+\): Error parsing JSON when evaluating fromJson/,
    );
    expect(r.steps[1]!.error).toMatch(/Action 'someone\/else@v1' is not available/);
  });

  it("reports job permissions and evaluated concurrency groups", async () => {
    const wf = dispatch(
      "      run_id: { required: true }\n      task_id: { required: true }",
      `    permissions:
      contents: write
      checks: read
    concurrency:
      group: forge-\${{ inputs.run_id }}-\${{ inputs.task_id }}
      cancel-in-progress: true
    timeout-minutes: 30
    steps: [{ run: "true" }]
`,
    );
    const d = await describeJob({ workflowText: wf, inputs: { run_id: "r1", task_id: "t2" }, context: baseContext() });
    expect(d.permissions).toMatchObject({ contents: "write", checks: "read", issues: "none" });
    expect(d.concurrency.job).toEqual({ group: "forge-r1-t2", cancelInProgress: true });
    expect(d.timeoutMinutes).toBe(30);
  });
});

describe("runJob: local node actions", () => {
  it("passes INPUT_* (upper-cased, spaces to _), applies defaults, reads outputs, runs post with state", async () => {
    const actionDir = path.join(workspace, ".github", "actions", "forge-echo");
    mkdirSync(actionDir, { recursive: true });
    writeFileSync(
      path.join(actionDir, "action.yml"),
      `name: forge-echo
inputs:
  task-id: { required: true }
  display name: { default: "shown" }
  token: { default: "\${{ github.token }}" }
outputs:
  greeting: { description: x }
runs:
  using: node20
  main: main.cjs
  post: post.cjs
`,
    );
    // Writes outputs the way @actions/core does: a heredoc with a random delimiter.
    writeFileSync(
      path.join(actionDir, "main.cjs"),
      `const fs = require("fs");
const d = "ghadelimiter_" + Math.random().toString(16).slice(2);
const taskId = process.env["INPUT_TASK-ID"];
const name = process.env["INPUT_DISPLAY_NAME"];
fs.appendFileSync(process.env.GITHUB_OUTPUT, "greeting<<" + d + "\\nhello " + taskId + "\\nfrom " + name + "\\n" + d + "\\n");
fs.appendFileSync(process.env.GITHUB_STATE, "started=" + taskId + "\\n");
console.log("token is " + process.env.INPUT_TOKEN);
console.log("action path " + process.env.GITHUB_ACTION_PATH);
`,
    );
    writeFileSync(path.join(actionDir, "post.cjs"), `console.log("post sees " + process.env.STATE_started);\n`);
    const wf = dispatch(
      "",
      `    steps:
      - id: greet
        uses: ./.github/actions/forge-echo
        with:
          task-id: \${{ inputs.task_id }}
          unknown-one: x
      - run: echo "\${{ steps.greet.outputs.greeting }}" | tail -1
`,
    );
    const r = await runJob({ workflowText: wf, context: baseContext(), workspace });
    expect(r.conclusion).toBe("success");
    expect(r.steps[0]!.outputs.greeting).toBe("hello t1\nfrom shown");
    expect(r.steps[0]!.log).toContain("token is ***");
    expect(r.steps[0]!.log).toContain(`action path ${actionDir}`);
    expect(r.steps[0]!.annotations[0]!.message).toMatch(/Unexpected input\(s\) 'unknown-one'/);
    expect(r.steps[1]!.log).toContain("from shown");
    expect(r.steps[2]!.kind).toBe("post");
    expect(r.steps[2]!.log).toContain("post sees t1");
  });

  it("serves a remote action name from a local folder through localActions", async () => {
    const actionDir = path.join(root, "forge-action");
    mkdirSync(actionDir, { recursive: true });
    writeFileSync(
      path.join(actionDir, "action.yml"),
      "name: f\ninputs:\n  run-id: { required: true }\nruns:\n  using: node24\n  main: main.cjs\n",
    );
    writeFileSync(
      path.join(actionDir, "main.cjs"),
      `console.log("run " + process.env["INPUT_RUN-ID"] + " from " + process.env.GITHUB_ACTION_PATH);\n`,
    );
    const wf = dispatch("", `    steps:\n      - uses: forge-dev/forge/action@v1\n        with: { run-id: r7 }\n`);
    const r = await runJob({ workflowText: wf, context: baseContext(), workspace, localActions: { "forge-dev/forge/action": actionDir } });
    expect(r.conclusion).toBe("success");
    expect(r.steps[0]!.log).toContain(`run r7 from ${actionDir}`);
  });

  it("refuses composite and docker actions loudly", async () => {
    const actionDir = path.join(workspace, "act");
    mkdirSync(actionDir, { recursive: true });
    writeFileSync(path.join(actionDir, "action.yml"), "name: c\nruns:\n  using: composite\n  steps: []\n");
    const wf = dispatch("", `    steps:\n      - uses: ./act\n`);
    const r = await runJob({ workflowText: wf, context: baseContext(), workspace });
    expect(r.steps[0]!.error).toMatch(/runs.using 'composite'.*only node20 and node24/);
  });
});

describe("runJob: actions/checkout", () => {
  it("clones a local bare repository at the ref and sha", async () => {
    const { bare, sha } = makeBareRepo(root, { "README.md": "# app\n", "src/a.txt": "A\n" }, "forge/r1/t1/1");
    const wf = dispatch(
      "",
      `    steps:
      - id: co
        uses: actions/checkout@v4
      - run: cat src/a.txt && git rev-parse --abbrev-ref HEAD
`,
    );
    const r = await runJob({
      workflowText: wf,
      context: baseContext({ ref: "refs/heads/forge/r1/t1/1", sha, gitUrl: `file://${bare}` }),
      workspace,
    });
    expect(r.conclusion, JSON.stringify(r.steps.map((s) => s.log))).toBe("success");
    expect(readFileSync(path.join(workspace, "README.md"), "utf8")).toBe("# app\n");
    expect(git(workspace, "rev-parse", "HEAD")).toBe(sha);
    expect(r.steps[0]!.outputs).toEqual({ ref: "refs/heads/forge/r1/t1/1", commit: sha });
    expect(r.steps[1]!.log).toEqual(expect.arrayContaining(["A", "forge/r1/t1/1"]));
    expect(r.steps[0]!.log.join("\n")).not.toContain("ghs_testtoken123456");
  });

  it("fails when the ref does not exist", async () => {
    const { bare } = makeBareRepo(root, { "a.txt": "a" });
    const wf = dispatch("", `    steps:\n      - uses: actions/checkout@v4\n        with: { ref: no-such-branch }\n`);
    const r = await runJob({ workflowText: wf, context: baseContext({ gitUrl: `file://${bare}` }), workspace });
    expect(r.conclusion).toBe("failure");
    expect(r.steps[0]!.error).toMatch(/The process 'git' failed/);
  });
});
