// Captain dispatches (`_captain-<crId>`): current while the run's Change Request waits; the agent
// writes the overlay in the plan folder; the job validates it, commits it on the Captain's branch
// and opens a PR to the default branch that links the CR issue. No task record.
// Plan Captains (`_captain-plan-<issue>`, from `/forge plan`): no run; the agent writes a new plan
// folder from the issue; the job validates it, commits only that folder on forge/_plan-<issue> and
// opens a PR to the default branch naming the issue.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentRunner, AgentRunRequest } from "../../action/src/agent-runner.js";
import { captainPlanJob, checkCaptainDispatch, planIdFromTitle } from "../../action/src/captain/index.js";
import { CAPTAIN_ID, CAPTAIN_PLAN_ID } from "../../src/core/layout.js";
import { actionInputSchema } from "../../action/src/inputs.js";
import type { JobReport } from "../../action/src/main.js";
import type { Journal } from "../../src/core/journal.js";
import { loadPlanStages } from "../../src/demo/plan-stages.js";
import { makeWorld, RUN, sh, taskFile, testConfig, type World } from "./world.js";
import { runJob } from "./job.js";

let world: World | undefined;
afterEach(() => world?.cleanup());

const CR = {
  id: "cr-1",
  emittedBy: "t1",
  attempt: 1,
  title: "Split the parser",
  reason: "The tokenizer needs its own task.",
  affectedTasks: ["t1"],
  status: "pending" as const,
  issueNumber: 7,
};

async function captainWorld(): Promise<{ w: World; files: Record<string, string> }> {
  const stages = await loadPlanStages(path.resolve("examples/plans/textkit"));
  const w = makeWorld({
    tasks: [{ id: "t1" }],
    files: stages.baseFiles,
    journal: (j) => {
      j.planId = stages.planId;
      j.changeRequests.push({ ...CR });
    },
  });
  world = w;
  // The App's DispatchCaptain: the Captain's branch cut from the default branch.
  sh(w.origin, ["branch", `forge/${RUN}/_captain-cr-1`, "main"]);
  return { w, files: stages.captainFiles(1, "cr-1") };
}

function run(w: World, agent: AgentRunner, taskId = "_captain-cr-1"): Promise<JobReport> {
  return runJob(w, agent, {
    config: testConfig({ heartbeat_interval_seconds: 1, stale_threshold_seconds: 10 }),
    input: { taskId, context: { changeRequest: "cr-1", planDir: ".forge/plans/x", reason: CR.reason, issue: 7 } },
  });
}

const writing = (files: Record<string, string>, seen: AgentRunRequest[] = [], exitCode = 0): AgentRunner => ({
  name: "command",
  async run(req) {
    seen.push(req);
    for (const [rel, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(req.workdir, rel)), { recursive: true });
      writeFileSync(path.join(req.workdir, rel), text);
    }
    return { exitCode };
  },
});

describe("Captain dispatches", () => {
  it("are current while the CR is pending or approved, once", () => {
    const j = { status: "running", runId: RUN, changeRequests: [CR] } as unknown as Journal;
    expect(checkCaptainDispatch(j, "_captain-cr-1", 1)).toMatchObject({ current: true, cr: { id: "cr-1" } });
    expect(checkCaptainDispatch({ ...j, changeRequests: [{ ...CR, status: "approved" }] }, "_captain-cr-1", 1).current).toBe(true);
    expect(checkCaptainDispatch({ ...j, changeRequests: [{ ...CR, status: "applied" }] }, "_captain-cr-1", 1)).toMatchObject({
      current: false,
      reason: "Change Request cr-1 is applied, not pending or approved",
    });
    expect(checkCaptainDispatch(j, "_captain-cr-2", 1)).toMatchObject({ current: false, reason: `run ${RUN} has no Change Request cr-2` });
    expect(checkCaptainDispatch(j, "_captain-cr-1", 2).current).toBe(false);
  });

  it("commit the overlay on the Captain's branch and open a PR to the default branch linking the CR issue", async () => {
    const { w, files } = await captainWorld();
    const seen: AgentRunRequest[] = [];
    // The Captain also touches a workflow and a file outside the plan: both are left out.
    const report = await run(w, writing({ ...files, ".github/workflows/ci.yml": "name: pwned\n", "notes.txt": "x\n" }, seen));
    expect(report.kind).toBe("captain");
    if (report.kind !== "captain") return;
    expect(report.exitCode, report.error).toBe(0);
    expect(seen[0]).toMatchObject({ agentType: "captain", taskContext: { planDir: ".forge/plans/textkit", taskId: "_captain-cr-1" } });
    expect(seen[0]!.taskContext.goal).toContain("The tokenizer needs its own task.");
    const branch = `forge/${RUN}/_captain-cr-1`;
    const changed = sh(w.origin, ["diff", "--name-only", "main", `refs/heads/${branch}`])
      .split("\n")
      .sort();
    expect(changed).toEqual(Object.keys(files).sort());
    expect(report.overlay).toMatch(/^\.forge\/plans\/textkit\/overlays\/overlay-001\.md$/);
    expect(report.warnings.join("\n")).toMatch(/left out \(protected paths among them\): .*\.github\/workflows\/ci\.yml/);
    const pr = w.github.pulls[0]!;
    expect(pr).toMatchObject({ head: branch, base: "main", draft: false });
    expect(pr.body).toContain("#7");
    // No task record for the Captain.
    expect(changed.some((f) => f.startsWith(".forge/runs/"))).toBe(false);
  });

  it("an invalid plan opens no PR (exit 10, the problems named)", async () => {
    const { w } = await captainWorld();
    const report = await run(w, writing({ ".forge/plans/textkit/overlays/overlay-001.md": "not an overlay\n" }));
    if (report.kind !== "captain") throw new Error(report.kind);
    expect(report.exitCode).toBe(10);
    expect(report.error).toMatch(/not valid/);
    expect(w.github.pulls).toEqual([]);
  });

  it("a Captain that ends in success or partial success without writing an overlay is sent back (exit 10), and opens no PR", async () => {
    for (const code of [0, 12]) {
      const { w } = await captainWorld();
      const report = await run(w, writing({}, [], code));
      if (report.kind !== "captain") throw new Error(report.kind);
      expect(report.exitCode, `agent exit ${code}`).toBe(10);
      expect(report.error).toMatch(/no overlay was written/);
      expect(w.github.pulls).toEqual([]);
    }
  });

  it("a CR already applied: neutral, nothing touched", async () => {
    const { w } = await captainWorld();
    const j = JSON.parse(JSON.stringify(w.journal)) as Journal;
    j.changeRequests[0]!.status = "applied";
    w.writeJournal(j);
    const report = await run(w, writing({}));
    expect(report).toMatchObject({ kind: "neutral", reason: "Change Request cr-1 is applied, not pending or approved" });
  });
});

// The plan Captain's world: an issue, a plan Captain job on it, and an agent that writes a plan.
const ISSUE = { issue: 7, title: "CSV export", body: "Export the report as CSV: one `toCsv(rows)` function with tests." };

function planWorld(): World {
  const w = makeWorld();
  world = w;
  // The App's `/forge plan`: forge/_plan-<issue> cut from the default branch.
  sh(w.origin, ["branch", "forge/_plan-7", "main"]);
  return w;
}

const runPlan = (w: World, agent: AgentRunner, context: Record<string, unknown> = ISSUE, runId = "_plan-7") =>
  captainPlanJob({
    config: testConfig({ heartbeat_interval_seconds: 1, stale_threshold_seconds: 10 }),
    input: {
      runId,
      taskId: "_captain-plan-7",
      attempt: 1,
      context: {},
      repository: "acme/demo",
      serverUrl: "https://github.example",
      workspace: w.workspace,
      tempDir: w.temp,
    },
    deps: { github: w.github, git: w.git, agent },
    context,
  });

/** A Captain that writes a plan (valid unless `broken`) in the folder the job names, plus strays. */
const planner = (seen: AgentRunRequest[], opts: { broken?: boolean } = {}): AgentRunner => ({
  name: "command",
  async run(req) {
    seen.push(req);
    const dir = req.taskContext.planDir!;
    const planId = path.basename(dir);
    const files: Record<string, string> = {
      [`${dir}/plan.md`]: "# CSV export\n\nOne function and its tests.\n",
      [`${dir}/tasks/to-csv.md`]: taskFile({ id: "to-csv", title: "toCsv" }),
      [`${dir}/dag.json`]: `${JSON.stringify({ version: 1, planId, nodes: [{ id: "to-csv", type: "task", agentType: "1", dependencies: opts.broken ? ["missing"] : [] }], metadata: { createdAt: "2026-11-22T08:00:00Z", createdBy: "captain", totalTasks: 1, totalRefineries: 0 } }, null, 2)}\n`,
      ".github/workflows/ci.yml": "name: pwned\n",
      "notes.txt": "x\n",
    };
    for (const [rel, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(req.workdir, rel)), { recursive: true });
      writeFileSync(path.join(req.workdir, rel), text);
    }
    return { exitCode: 0 };
  },
});

describe("plan Captain dispatches (/forge plan)", () => {
  it("are told apart from CR Captains, and name the plan after the issue", () => {
    expect(CAPTAIN_PLAN_ID.test("_captain-plan-7")).toBe(true);
    expect(CAPTAIN_PLAN_ID.test("_captain-cr-1")).toBe(false);
    // It also matches CAPTAIN_ID, which is why main tests CAPTAIN_PLAN_ID first.
    expect(CAPTAIN_ID.test("_captain-plan-7")).toBe(true);
    expect(planIdFromTitle("CSV export: the Report (v2)!", 7)).toBe("csv-export-the-report-v2");
    expect(planIdFromTitle("Crème brûlée", 7)).toBe("creme-brulee");
    expect(planIdFromTitle("!!!", 7)).toBe("issue-7");
  });

  it("commit only the new plan folder on forge/_plan-<issue> and open a PR to the default branch naming the issue", async () => {
    const w = planWorld();
    const seen: AgentRunRequest[] = [];
    const report = await runPlan(w, planner(seen));
    if (report.kind !== "captain") throw new Error(report.reason);
    expect(report.exitCode, report.error).toBe(0);
    expect(report.plan).toBe(".forge/plans/csv-export");
    expect(seen[0]).toMatchObject({
      agentType: "captain",
      taskContext: { planDir: ".forge/plans/csv-export", taskId: "_captain-plan-7", runId: "_plan-7" },
    });
    expect(seen[0]!.taskContext.goal).toContain("toCsv(rows)");
    expect(seen[0]!.taskContext.task).toContain("forge validate .forge/plans/csv-export");
    const changed = sh(w.origin, ["diff", "--name-only", "main", "refs/heads/forge/_plan-7"]).split("\n").sort();
    expect(changed).toEqual([
      ".forge/plans/csv-export/dag.json",
      ".forge/plans/csv-export/plan.md",
      ".forge/plans/csv-export/tasks/to-csv.md",
    ]);
    expect(report.warnings.join("\n")).toMatch(/left out \(protected paths among them\): .*\.github\/workflows\/ci\.yml/);
    expect(w.github.pulls).toHaveLength(1);
    expect(w.github.pulls[0]).toMatchObject({
      head: "forge/_plan-7",
      base: "main",
      draft: false,
      title: "forge(_captain-plan-7): plan csv-export from #7",
    });
    expect(w.github.pulls[0]!.body).toContain("#7");
    expect(w.github.pulls[0]!.body).toContain("/forge run csv-export");

    // Run again (a re-run of the job): the branch holds the plan already, nothing changes.
    const again = await runPlan(w, planner([]));
    expect(again).toMatchObject({ kind: "neutral", reason: expect.stringContaining("already holds the plan of #7") });
    expect(w.github.pulls).toHaveLength(1);
  });

  it("a plan that forge validate refuses opens no PR (exit 10, the problems named)", async () => {
    const w = planWorld();
    const report = await runPlan(w, planner([], { broken: true }));
    if (report.kind !== "captain") throw new Error(report.reason);
    expect(report.exitCode).toBe(10);
    expect(report.error).toMatch(/not valid: .*missing/);
    expect(w.github.pulls).toEqual([]);
    expect(sh(w.origin, ["rev-parse", "refs/heads/forge/_plan-7"])).toBe(sh(w.origin, ["rev-parse", "refs/heads/main"]));
  });

  it("without the issue's text, or for another run or issue, the agent never runs", async () => {
    const w = planWorld();
    const seen: AgentRunRequest[] = [];
    const bare = await runPlan(w, planner(seen), { issue: 7 });
    expect(bare).toMatchObject({ kind: "captain", exitCode: 2, error: expect.stringContaining("no text of issue #7") });
    expect(await runPlan(w, planner(seen), ISSUE, "r1")).toMatchObject({
      kind: "neutral",
      reason: "a plan Captain for #7 runs as _plan-7, not r1",
    });
    expect(await runPlan(w, planner(seen), { ...ISSUE, issue: 8 })).toMatchObject({
      kind: "neutral",
      reason: "the dispatch context names issue #8, not #7",
    });
    expect(seen).toEqual([]);
    expect(w.github.pulls).toEqual([]);
  });

  it("the App's /forge plan dispatch inputs are accepted by the action, and main() runs the plan Captain", async () => {
    // Exactly what the App's `/forge plan` handler dispatches (src/app/app.ts).
    const dispatched = { run_id: "_plan-7", task_id: "_captain-plan-7", attempt: "1", context: JSON.stringify(ISSUE) };
    const parsed = actionInputSchema.safeParse({
      githubToken: "ghs_x",
      runId: dispatched.run_id,
      taskId: dispatched.task_id,
      attempt: dispatched.attempt,
      context: dispatched.context,
      adapter: "",
      model: "",
      command: "",
      anthropicApiKey: "",
      openaiApiKey: "",
      geminiApiKey: "",
      gitUserName: "forge[bot]",
      gitUserEmail: "forge@example.com",
    });
    expect(parsed.error?.issues).toBeUndefined();
    const w = planWorld();
    const seen: AgentRunRequest[] = [];
    const report = await runJob(w, planner(seen), {
      config: testConfig({ heartbeat_interval_seconds: 1, stale_threshold_seconds: 10 }),
      input: { runId: parsed.data!.runId, taskId: parsed.data!.taskId, attempt: parsed.data!.attempt, context: parsed.data!.context },
    });
    expect(report).toMatchObject({ kind: "captain", exitCode: 0, plan: ".forge/plans/csv-export" });
    expect(w.github.pulls[0]).toMatchObject({
      head: "forge/_plan-7",
      base: "main",
      title: "forge(_captain-plan-7): plan csv-export from #7",
    });
  });
});
