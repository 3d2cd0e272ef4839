// The runner: inputs validated with actionable messages, outputs and summary written through
// @actions/core's files, one setFailed.
import { readdirSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { createCommandRunner } from "../../action/src/agent-runner.js";
import { actionInputSchema, describeIssues, ENV_NAMES, INPUT_NAMES, jobEnvSchema } from "../../action/src/inputs.js";
import { agentLimits, run } from "../../action/src/runner.js";
import { forgeConfigSchema } from "../../src/core/schemas/config.js";
import { agentWalkthrough, makeWorld, RUN, scriptAgent, type World } from "./world.js";
import { runnerProcess, serveOrigin, setInputs, workflowEnv } from "./job.js";

const { out, summaryFile, summary } = runnerProcess();
let world: World | undefined;
afterEach(() => {
  world?.cleanup();
  world = undefined;
});

const defaults = {
  "github-token": "ghs_test_token_value",
  "run-id": RUN,
  "task-id": "t1",
  attempt: "1",
  context: "",
  adapter: "",
  model: "",
  command: "",
  "anthropic-api-key": "",
  "openai-api-key": "",
  "gemini-api-key": "",
  "git-user-name": "github-actions[bot]",
  "git-user-email": "41898282+github-actions[bot]@users.noreply.github.com",
};

describe("inputs", () => {
  it("names each bad input and says what to do", () => {
    const r = actionInputSchema.safeParse({
      githubToken: "",
      runId: "bad id",
      taskId: "T1",
      attempt: "0",
      context: "{oops",
      adapter: "gpt",
      model: "",
      command: "",
      anthropicApiKey: "",
      openaiApiKey: "",
      geminiApiKey: "",
      gitUserName: "x",
      gitUserEmail: "y",
    });
    expect(r.success).toBe(false);
    if (r.success) return;
    const text = describeIssues(r.error, INPUT_NAMES);
    expect(text).toContain("- input 'github-token' — is empty: pass `${{ github.token }}`");
    expect(text).toContain("- input 'run-id' — must be letters, digits");
    expect(text).toContain("- input 'task-id' — must match [a-z0-9]");
    expect(text).toContain("- input 'attempt' — must be a whole number from 1");
    expect(text).toContain("- input 'context' — is not JSON");
    expect(text).toContain("- input 'adapter' — ");
  });

  it("parses the dispatch context", () => {
    const base = {
      githubToken: "t",
      runId: "r1",
      taskId: "t1",
      attempt: "3",
      adapter: "",
      model: "",
      command: "",
      anthropicApiKey: "",
      openaiApiKey: "",
      geminiApiKey: "",
      gitUserName: "x",
      gitUserEmail: "y",
    };
    expect(actionInputSchema.parse({ ...base, context: '{"answer":"use pg"}' })).toMatchObject({
      attempt: 3,
      context: { answer: "use pg" },
      adapter: undefined,
    });
    const badContext = actionInputSchema.safeParse({ ...base, context: '{"answer":1,"x":2}' });
    expect(badContext.success).toBe(false);
    if (!badContext.success) {
      expect(describeIssues(badContext.error, INPUT_NAMES)).toContain("- input 'context' answer — ");
      expect(describeIssues(badContext.error, INPUT_NAMES)).toContain("- input 'context' x — unknown field");
    }
    // What the App sends a follow-up and a refinery whose upstream merge conflicted
    // (src/app/effects/branches-and-dispatch.ts).
    expect(
      actionInputSchema.parse({ ...base, taskId: "_followup-2", attempt: "1", context: '{"followup":"Fix the bug","sourceTaskId":"t1"}' }),
    ).toMatchObject({ taskId: "_followup-2", context: { followup: "Fix the bug", sourceTaskId: "t1" } });
    expect(actionInputSchema.parse({ ...base, context: '{"conflicts":["forge/r1/a/1"]}' }).context).toEqual({
      conflicts: ["forge/r1/a/1"],
    });
    // A Captain dispatch and its context (src/app/effects/branches-and-dispatch.ts dispatchCaptain).
    expect(
      actionInputSchema.parse({
        ...base,
        taskId: "_captain-cr-1",
        attempt: "1",
        context: '{"changeRequest":"cr-1","planDir":".forge/plans/p","reason":"x","issue":7}',
      }),
    ).toMatchObject({ taskId: "_captain-cr-1", context: { changeRequest: "cr-1", issue: 7 } });
    expect(actionInputSchema.safeParse({ ...base, taskId: "_captain-" }).success).toBe(false);
  });
});

describe("the job environment", () => {
  it("names each variable that is missing or wrong", () => {
    const r = jobEnvSchema.safeParse({ repository: "no-slash", serverUrl: "https://github.com", apiUrl: "x", runnerTemp: "/tmp" });
    expect(r.success).toBe(false);
    if (r.success) return;
    const text = describeIssues(r.error, ENV_NAMES, (name) => name);
    expect(text).toContain("- GITHUB_REPOSITORY — must be owner/name");
    expect(text).toContain("- GITHUB_API_URL — must be a URL");
    expect(text).toContain("- GITHUB_WORKSPACE — ");
  });
});

describe("run()", () => {
  it("fails once, with every problem listed, when inputs are invalid", async () => {
    setInputs({ ...defaults, attempt: "first", "task-id": "" });
    await run();
    const errors = out.filter((l) => l.startsWith("::error::"));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("The Forge action's inputs are invalid:%0A- input 'task-id'");
    expect(errors[0]).toContain("input 'attempt' — must be a whole number from 1");
    expect(process.exitCode).toBe(1);
  });

  it("gives the agent layer the config's time limits: the agent's, its idle limit, and a stage's own (30 min by default)", () => {
    expect(agentLimits(forgeConfigSchema.parse({}))).toEqual({ idleTimeoutMs: 600_000, timeoutMs: 3_600_000, stageTimeoutMs: 1_800_000 });
    expect(agentLimits(forgeConfigSchema.parse({ timeouts: { stage_minutes: 5 } })).stageTimeoutMs).toBe(300_000);
  });

  it("runs an attempt and writes the outputs and the job summary", async () => {
    world = makeWorld();
    const w = world;
    const agent = scriptAgent(
      w,
      "agent",
      `mkdir -p src && echo hi > src/out.txt\ncat > "$FORGE_WALKTHROUGH_PATH" <<'WT'\n${agentWalkthrough()}WT`,
    );
    const serverUrl = serveOrigin(w);
    const outputFile = workflowEnv(w, defaults, summaryFile, { GITHUB_SERVER_URL: serverUrl });
    await run({ github: w.github, agent: createCommandRunner({ command: agent, env: { PATH: process.env.PATH ?? "" } }) });
    expect(out.filter((l) => l.startsWith("::error::"))).toEqual([]);
    const outputs = readFileSync(outputFile, "utf8");
    expect(outputs).toMatch(/exit-code<<.*\n0\n/);
    expect(outputs).toMatch(/pr-number<<.*\n1\n/);
    expect(outputs).toMatch(/result-path<<.*\n\.forge\/runs\/r1\/t1\/1\/result\.json\n/);
    expect(outputs).toMatch(/head-sha<<.*\n[0-9a-f]{40}\n/);
    // The token is masked in the log and never printed.
    expect(out.join("")).toContain("::add-mask::ghs_test_token_value");
    expect(out.filter((l) => !l.startsWith("::add-mask::")).join("")).not.toContain("ghs_test_token_value");
    expect(summary()).toContain("forge(t1): Task t1");
    expect(summary()).toContain("exit 0: success");
    expect(w.github.pulls[0]!.bodies[0]).toContain(`${serverUrl}/acme/demo/actions/runs/77`);
    // The runner's git made its private folder in the runner's temp folder, and removed it at the end.
    expect(readdirSync(w.temp).filter((f) => f.startsWith("forge-git-private-"))).toEqual([]);
  });

  it("ends neutral, and not failed, when the dispatch is not current", async () => {
    world = makeWorld();
    const w = world;
    // A server the job reaches (its branch is fetched meanwhile): an unreachable one is a blip its git would wait out.
    const outputFile = workflowEnv(w, { ...defaults, attempt: "5" }, summaryFile, { GITHUB_SERVER_URL: serveOrigin(w) });
    await run({ github: w.github, agent: createCommandRunner({ command: "false", env: {} }) });
    expect(process.exitCode).toBeUndefined();
    expect(out.join("")).toContain("::notice::Forge: nothing to do — task t1 is at attempt 1, not 5.");
    expect(readFileSync(outputFile, "utf8")).toMatch(/neutral<<.*\ntrue\n/);
  });
});
