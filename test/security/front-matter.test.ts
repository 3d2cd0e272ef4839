// Trust I, item 1: no code from front matter, anywhere. gray-matter evaluates a block opened by
// `---js` / `---javascript` (and picks any engine named on the opening line); Forge reads YAML only.
// Every entry point that reads a Markdown file with front matter is fed a block that would run code
// — set a global, write a file, run a command — and must report a problem naming the file at line 1
// without running anything.
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import matter from "gray-matter";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AgentRunner } from "../../action/src/agent-runner.js";
import { captainPlanJob } from "../../action/src/captain/index.js";
import { buildTaskContext } from "../../action/src/task-context.js";
import type { JobReport } from "../../action/src/main.js";
import { readSubtasks, runStages, type RunStagesOptions } from "../../src/agent/stages/index.js";
import { completeWalkthrough, parseAgentWalkthrough, splitFrontmatter } from "../../src/agent/walkthrough.js";
import { readFrontMatter, writeFrontMatter } from "../../src/core/front-matter.js";
import { attemptDir } from "../../src/core/layout.js";
import { loadPlan } from "../../src/core/plan/load.js";
import { parsePlan, parseTaskFile } from "../../src/core/plan/parse.js";
import { validatePlan } from "../../src/core/plan/validate.js";
import { runForge } from "../cli/helpers.js";
import { loadPlanStages } from "../../src/demo/plan-stages.js";
import { makeWorld, RUN, sh, taskFile, testConfig, type World } from "../action/world.js";
import { commandAgent, runJob } from "../action/job.js";
import { FAKE_AGENT } from "../agent/helpers.js";

declare global {
  var __forgePwned: unknown;
}

const ROOT = path.resolve(import.meta.dirname, "../..");
const REFUSED = (lang: string) => `front matter language '${lang}' is not allowed: Forge reads YAML only`;

/** Sets a global when evaluated. */
const PWN_GLOBAL = "---js\n{ x: (globalThis.__forgePwned = 1) }\n---\n";
/** Writes `marker` when evaluated. */
const pwnWrite = (marker: string) => `---javascript\n{ x: require('fs').writeFileSync(${JSON.stringify(marker)}, 'pwned') }\n---\n`;
/** Runs a command that creates `marker` when evaluated. */
const pwnExec = (marker: string) => `---js\n{ x: require('child_process').execSync(${JSON.stringify(`touch '${marker}'`)}) }\n---\n`;

const TASK_BODY = "\n## Description\n\nDo it.\n\n## Context\n\nNone.\n\n## Instructions\n\nWrite it.\n";
const WALKTHROUGH_BODY = "\n## Summary\n\nDone.\n\n## Approach\n\nDirect.\n\n## Issues Encountered\n\nNone.\n\n## Testing\n\nRan it.\n";

/** The file a payload would write. */
const markerDir = mkdtempSync(path.join(tmpdir(), "forge-front-matter-marker-"));
const marker = path.join(markerDir, "pwned");
let dir: string;
const worlds: World[] = [];

beforeEach(() => {
  delete globalThis.__forgePwned;
  dir = mkdtempSync(path.join(tmpdir(), "forge-front-matter-"));
});

afterEach(() => {
  const ran = { global: globalThis.__forgePwned, file: existsSync(marker) };
  delete globalThis.__forgePwned;
  rmSync(marker, { force: true });
  rmSync(dir, { recursive: true, force: true });
  while (worlds.length) worlds.pop()!.cleanup();
  // Nothing ran, whatever the test checked.
  expect(ran).toEqual({ global: undefined, file: false });
});

afterAll(() => rmSync(markerDir, { recursive: true, force: true }));

/** Every payload, with the language it names. */
const payloads = () =>
  [
    ["js, setting a global", PWN_GLOBAL, "js"],
    ["javascript, writing a file", pwnWrite(marker), "javascript"],
    ["js, running a command", pwnExec(marker), "js"],
  ] as const;

function notRun(): void {
  expect(globalThis.__forgePwned).toBeUndefined();
  expect(existsSync(marker)).toBe(false);
}

describe("the core's front-matter reader", () => {
  it.each([
    ["---js\n{ x: (globalThis.__forgePwned = 1) }\n---\nbody", "js"],
    ["---javascript\n{ x: (globalThis.__forgePwned = 1) }\n---\n", "javascript"],
    ["--- js\n{ x: (globalThis.__forgePwned = 1) }\n---\n", "js"],
    ["---js\r\n{ x: (globalThis.__forgePwned = 1) }\r\n---\r\n", "js"],
    ["\uFEFF---js\n{ x: (globalThis.__forgePwned = 1) }\n---\n", "js"],
    ["---js", "js"],
    ["---coffee\nx: (globalThis.__forgePwned = 1)\n---\n", "coffee"],
    ["---json\n{}\n---\n", "json"],
    ["---yaml\na: 1\n---\n", "yaml"],
  ])("refuses %j at line 1 of the file, never evaluated", (text, lang) => {
    const fm = readFrontMatter("notes/x.md", text);
    notRun();
    expect(fm.problem).toEqual({ kind: "language", file: "notes/x.md", line: 1, message: REFUSED(lang) });
    expect(fm.present).toBe(true);
    expect(fm.data).toBeUndefined();
    expect(fm.yaml).toBe("");
  });

  it.each(payloads())("refuses a block in %s", (_name, text, lang) => {
    const fm = readFrontMatter("tasks/x.md", text);
    notRun();
    expect(fm.problem).toMatchObject({ kind: "language", file: "tasks/x.md", line: 1, message: REFUSED(lang) });
  });

  it("reads YAML with the core schema, and never returns gray-matter's cached result", () => {
    const text = "---\nid: a\nwhen: 2026-01-01\n---\nbody\n";
    // A result gray-matter would hand back from its cache (keyed by the text alone).
    const cache = (matter as unknown as { cache: Record<string, unknown> }).cache;
    cache[text] = { data: { id: "evil" }, content: "evil" };
    try {
      const fm = readFrontMatter("tasks/a.md", text);
      expect(fm).toMatchObject({ present: true, closed: true, data: { id: "a", when: "2026-01-01" }, body: "body\n", bodyLine: 5 });
      expect(fm.problem).toBeUndefined();
    } finally {
      delete cache[text];
    }
  });

  it("writes a block without ever reading the body (Change Request documents, subtask status)", () => {
    const out = writeFrontMatter(pwnWrite(marker), { title: "t", status: "failed" });
    notRun();
    expect(out).toBe(`---\ntitle: t\nstatus: failed\n---\n${pwnWrite(marker)}`);
    // Read back: the YAML block, and the would-be code as the body's text.
    expect(readFrontMatter("cr.md", out)).toMatchObject({ data: { title: "t", status: "failed" }, body: pwnWrite(marker) });
    notRun();
  });
});

describe("plan task files and overlays (core parse, the App's plan check)", () => {
  it.each(payloads())("a task file in %s is refused at line 1", (_name, text, lang) => {
    const task = parseTaskFile("tasks/evil.md", `${text}${TASK_BODY}`);
    notRun();
    expect(task.data).toBeUndefined();
    expect(task.refused).toEqual({ message: REFUSED(lang), line: 1 });
    const plan = parsePlan({
      planId: "p",
      files: new Map([["tasks/evil.md", `${text}${TASK_BODY}`]]),
      dirs: new Set(["tasks"]),
      unreadable: [],
    });
    notRun();
    expect(validatePlan(plan)).toContainEqual({ file: "tasks/evil.md", line: 1, message: REFUSED(lang), rule: "unreadable-yaml" });
  });

  it.each(payloads())("an overlay in %s is refused at line 1", (_name, text, lang) => {
    const plan = parsePlan({
      planId: "p",
      files: new Map([["overlays/overlay-001.md", text]]),
      dirs: new Set(["overlays"]),
      unreadable: [],
    });
    notRun();
    expect(plan.overlays[0]).toMatchObject({ hasFrontmatter: true, refused: { message: REFUSED(lang), line: 1 } });
    expect(plan.overlays[0]!.data).toBeUndefined();
    expect(validatePlan(plan)).toContainEqual({
      file: "overlays/overlay-001.md",
      line: 1,
      message: REFUSED(lang),
      rule: "unreadable-yaml",
    });
  });
});

describe("forge validate", () => {
  function evilPlan(files: Record<string, string>): string {
    const plan = path.join(dir, "tiny-lru");
    cpSync(path.join(ROOT, "examples/plans/tiny-lru"), plan, { recursive: true });
    for (const [rel, text] of Object.entries(files)) writeFileSync(path.join(plan, rel), text);
    return plan;
  }

  it("reports a task file and an overlay whose front matter is not YAML, running nothing (loadPlan from disk)", async () => {
    const plan = evilPlan({ "tasks/stats.md": pwnExec(marker), "overlays/overlay-001.md": pwnWrite(marker) });
    const problems = validatePlan(await loadPlan(plan));
    notRun();
    expect(problems).toEqual(
      expect.arrayContaining([
        { file: "tasks/stats.md", line: 1, message: REFUSED("js"), rule: "unreadable-yaml" },
        { file: "overlays/overlay-001.md", line: 1, message: REFUSED("javascript"), rule: "unreadable-yaml" },
      ]),
    );
  });

  it("the command prints the file and line 1 and exits 1", async () => {
    evilPlan({ "tasks/stats.md": `${PWN_GLOBAL}${TASK_BODY}`, "tasks/ttl.md": `${pwnWrite(marker)}${TASK_BODY}` });
    const r = await runForge(["validate", "tiny-lru"], dir);
    notRun();
    expect(r.code).toBe(1);
    expect(r.out).toContain(`tiny-lru/tasks/stats.md:1 — ${REFUSED("js")}\n`);
    expect(r.out).toContain(`tiny-lru/tasks/ttl.md:1 — ${REFUSED("javascript")}\n`);
    const json = await runForge(["validate", "tiny-lru", "--json"], dir);
    notRun();
    expect((JSON.parse(json.out) as { problems: unknown[] }).problems).toContainEqual({
      file: "tiny-lru/tasks/stats.md",
      line: 1,
      message: REFUSED("js"),
      rule: "unreadable-yaml",
    });
  });
});

describe("walkthroughs", () => {
  it.each(payloads())("the agent's walkthrough in %s is refused, naming the file", (_name, text, lang) => {
    const parsed = parseAgentWalkthrough(`${text}${WALKTHROUGH_BODY}`, "session/walkthrough.md");
    notRun();
    expect(parsed.data).toBeUndefined();
    expect(parsed.problems[0]).toBe(`frontmatter: refused (session/walkthrough.md:1 — ${REFUSED(lang)})`);
    const done = completeWalkthrough(`${text}${WALKTHROUGH_BODY}`, {
      task_id: "t1",
      run_id: "r1",
      attempt: 1,
      branch: "b",
      base_ref: "main",
      head_sha: "a".repeat(40),
      time_spent_minutes: 1,
      files_changed: [],
    });
    notRun();
    expect(done.ok).toBe(false);
    if (!done.ok) expect(done.error).toBe(`the walkthrough's frontmatter is refused: walkthrough.md:1 — ${REFUSED(lang)}`);
    expect(splitFrontmatter(`${text}${WALKTHROUGH_BODY}`)).toBeUndefined();
    notRun();
  });
});

function stagesOptions(extra: Partial<RunStagesOptions> & { plan: Record<string, unknown> }): RunStagesOptions {
  const planFile = path.join(dir, "plan.json");
  const state = path.join(dir, "state");
  const repo = path.join(dir, "repo");
  mkdirSync(state, { recursive: true });
  mkdirSync(repo, { recursive: true });
  writeFileSync(planFile, JSON.stringify(extra.plan));
  const { plan: _plan, ...rest } = extra;
  return {
    agentType: "2",
    taskContext: { runId: "r1", taskId: "t1", attempt: 1, task: "---\nid: t1\ntitle: T\n---\n## Description\nDo T." },
    workdir: repo,
    sessionDir: path.join(dir, "session"),
    spawn: {
      adapter: "command",
      command: process.execPath,
      args: [FAKE_AGENT],
      env: { PATH: process.env.PATH },
      extraEnv: { FAKE_PLAN: planFile, FAKE_STATE: state },
      forgeCli: false,
    },
    ...rest,
  };
}

describe("the stage sequence (agent layer)", () => {
  it("the walkthrough stage refuses a walkthrough whose front matter is not YAML, naming the file", async () => {
    const file = path.join(dir, "session", "walkthrough.md");
    const out = await runStages(
      stagesOptions({ stages: ["walkthrough"], plan: { walkthrough: { write: { [file]: `${pwnExec(marker)}${WALKTHROUGH_BODY}` } } } }),
    );
    notRun();
    expect(out.exitCode).toBe(1);
    expect(out.manifest.stages[0]).toMatchObject({
      name: "walkthrough",
      attempts: 2,
      error: expect.stringContaining(`${file}:1 — ${REFUSED("js")}`),
    });
  });

  it("type 3's plan stage refuses subtask files whose front matter is not YAML, and never works them", async () => {
    const subtasks = path.join(dir, "session", "subtasks");
    const evil = path.join(subtasks, "01-evil.md");
    const write = path.join(subtasks, "02-write.md");
    const out = await runStages(
      stagesOptions({
        agentType: "3",
        plan: {
          "3:plan": { write: { [evil]: `${pwnExec(marker)}Do it.\n`, [write]: `${pwnWrite(marker)}Do it.\n` } },
          "1:*": { exit: 0 },
          "3:walkthrough": { walkthrough: true },
        },
      }),
    );
    notRun();
    expect(out.exitCode).toBe(1);
    expect(out.manifest.stages.map((s) => s.name)).toEqual(["plan"]);
    expect(out.manifest.stages[0]!.error).toContain(`${evil}:1 — ${REFUSED("js")}`);
    expect(out.manifest.stages[0]!.error).toContain(`${write}:1 — ${REFUSED("javascript")}`);
    const subs = await readSubtasks(subtasks);
    notRun();
    expect(subs.map((s) => s.problem)).toEqual([`${evil}:1 — ${REFUSED("js")}`, `${write}:1 — ${REFUSED("javascript")}`]);
  });
});

describe("the action", () => {
  function world(o: Parameters<typeof makeWorld>[0] = {}): World {
    const w = makeWorld(o);
    worlds.push(w);
    return w;
  }

  it("refuses a task file at the pinned plan commit whose front matter is not YAML (the job's context)", async () => {
    const w = world({ files: { ".forge/plans/p1/tasks/t1.md": `${pwnWrite(marker)}${TASK_BODY}` } });
    const node = w.journal.plan.nodes[0]!;
    await expect(
      buildTaskContext({ github: w.github, journal: w.journal, node, attempt: 1, branch: w.branch, workdir: w.workspace, dispatch: {} }),
    ).rejects.toThrow(`the task file .forge/plans/p1/tasks/t1.md is invalid: ${REFUSED("javascript")}`);
    notRun();
  });

  it("records no walkthrough in result.json when the agent's walkthrough is not YAML, and fails naming the file", async () => {
    const w = world();
    const agent = commandAgent(
      w,
      `mkdir -p src && printf 'hello\\n' > src/out.txt\ncat > "$FORGE_WALKTHROUGH_PATH" <<'WT'\n${PWN_GLOBAL}${WALKTHROUGH_BODY}WT`,
    );
    const report: JobReport = await runJob(w, agent);
    notRun();
    if (report.kind !== "attempt") throw new Error(report.kind);
    expect(report.exitCode).not.toBe(0);
    expect(report.result.error).toContain(`walkthrough: the walkthrough's frontmatter is refused: walkthrough.md:1 — ${REFUSED("js")}`);
    expect(report.result.walkthrough).toBeUndefined();
    expect(report.result.walkthrough_path).toBeUndefined();
    const recorded = w.show(report.headSha!, `${attemptDir(RUN, "t1", 1)}/result.json`);
    expect(JSON.parse(recorded!)).not.toHaveProperty("walkthrough");
  });

  const writing = (files: (workdir: string, planDir: string) => Record<string, string>): AgentRunner => ({
    name: "command",
    async run(req) {
      for (const [rel, text] of Object.entries(files(req.workdir, req.taskContext.planDir!))) {
        mkdirSync(path.dirname(path.join(req.workdir, rel)), { recursive: true });
        writeFileSync(path.join(req.workdir, rel), text);
      }
      return { exitCode: 0 };
    },
  });

  it("the Captain's validation refuses an overlay whose front matter is not YAML: no PR", async () => {
    const stages = await loadPlanStages(path.resolve(ROOT, "examples/plans/textkit"));
    const w = world({
      tasks: [{ id: "t1" }],
      files: stages.baseFiles,
      journal: (j) => {
        j.planId = stages.planId;
        j.changeRequests.push({
          id: "cr-1",
          emittedBy: "t1",
          attempt: 1,
          title: "Split",
          reason: "Because.",
          affectedTasks: ["t1"],
          status: "pending",
          issueNumber: 7,
        });
      },
    });
    sh(w.origin, ["branch", `forge/${RUN}/_captain-cr-1`, "main"]);
    const files = stages.captainFiles(1, "cr-1");
    const overlay = Object.keys(files).find((f) => /overlays\/overlay-001\.md$/.test(f))!;
    const report = await runJob(
      w,
      writing(() => ({ ...files, [overlay]: pwnWrite(marker) })),
      {
        config: testConfig({ heartbeat_interval_seconds: 1, stale_threshold_seconds: 10 }),
        input: { taskId: "_captain-cr-1", context: { changeRequest: "cr-1", reason: "Because.", issue: 7 } },
      },
    );
    notRun();
    if (report.kind !== "captain") throw new Error(report.kind);
    expect(report.exitCode).toBe(10);
    expect(report.error).toContain(`overlays/overlay-001.md:1 — ${REFUSED("javascript")}`);
    expect(w.github.pulls).toEqual([]);
  });

  it("the plan Captain's validation refuses a task file whose front matter is not YAML: no PR", async () => {
    const w = world();
    sh(w.origin, ["branch", "forge/_plan-7", "main"]);
    const report = await captainPlanJob({
      config: testConfig({ heartbeat_interval_seconds: 1, stale_threshold_seconds: 10 }),
      input: {
        runId: "_plan-7",
        taskId: "_captain-plan-7",
        attempt: 1,
        context: {},
        repository: "acme/demo",
        serverUrl: "https://github.example",
        workspace: w.workspace,
        tempDir: w.temp,
      },
      deps: {
        github: w.github,
        git: w.git,
        agent: writing((_workdir, planDir) => ({
          [`${planDir}/plan.md`]: "# CSV\n",
          [`${planDir}/tasks/to-csv.md`]: `${pwnExec(marker)}${TASK_BODY}`,
          [`${planDir}/tasks/docs.md`]: taskFile({ id: "docs" }),
          [`${planDir}/dag.json`]: JSON.stringify({
            version: 1,
            planId: path.basename(planDir),
            nodes: [
              { id: "to-csv", type: "task", agentType: "1", dependencies: [] },
              { id: "docs", type: "task", agentType: "1", dependencies: [] },
            ],
            metadata: { createdAt: "2026-11-22T08:00:00Z", createdBy: "captain", totalTasks: 2, totalRefineries: 0 },
          }),
        })),
      },
      context: { issue: 7, title: "CSV export", body: "Export as CSV." },
    });
    notRun();
    if (report.kind !== "captain") throw new Error(report.reason);
    expect(report.exitCode).toBe(10);
    expect(report.error).toContain(`tasks/to-csv.md:1 — ${REFUSED("js")}`);
    expect(w.github.pulls).toEqual([]);
  });
});
