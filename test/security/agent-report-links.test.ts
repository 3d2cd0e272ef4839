/**
 * Attack: the agent's reports are files in folders it owns — its question, refinement, Change
 * Request, walkthrough (in its session or in the record folder), spend file. It makes each a
 * symbolic link to a file only the runner may read (the runner's `/proc/self/environ` holds the job
 * token; here a secret file outside the agent's folders). Before, the runner read through the link,
 * put the text in `result.json` (which the App posts as the question or carries to the next
 * dispatch), committed it and made it the PR body.
 *
 * Now every file the runner reads from the agent's folders goes through `readAgentFile`
 * (src/agent/agent-files.ts: `O_NOFOLLOW`, no link below the folder, a regular file inside it), and
 * once the agent has ended the links it left in its session folder are removed, with a warning. A
 * linked report is absent; the secret appears nowhere the job publishes.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentRunner } from "../../action/src/agent-runner.js";
import { captainPlanJob } from "../../action/src/captain/index.js";
import { AgentFileRefusedError, readAgentFile, readAgentText } from "../../src/agent/agent-files.js";
import { runStages } from "../../src/agent/stages/index.js";
import { EXIT_CODES } from "../../src/core/exit-codes.js";
import { newAttempt } from "../../src/core/journal.js";
import { cleanupTempDirs, FAKE_AGENT, fakeWorld } from "../agent/helpers.js";
import { agentWalkthrough, makeWorld, RUN, sh, testConfig, type World } from "../action/world.js";
import { runScriptJob } from "../action/job.js";

const SECRET = "TOPSECRET-runner-only-7f3a9c";
let world: World | undefined;
afterEach(() => {
  world?.cleanup();
  world = undefined;
  cleanupTempDirs();
});

/** Runs one task job whose agent runs `script`; returns the report and every text the job published. */
async function runJob(w: World, script: string) {
  const report = await runScriptJob(w, "link-agent", script);
  // Everything the record commit holds, every PR body, the summary and the result.
  const record = sh(w.origin, ["ls-tree", "-r", "--name-only", report.headSha])
    .split("\n")
    .filter((f) => f.startsWith(".forge/runs/"))
    .map((f) => w.show(report.headSha, f) ?? "")
    .join("\n");
  const published = [record, JSON.stringify(report.result), report.summary, ...w.github.pulls.flatMap((p) => [p.title, ...p.bodies])].join(
    "\n",
  );
  return { report, published };
}

function secretFile(w: World, text: string): string {
  const file = path.join(w.dir, "runner-only", "secret.txt");
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}

const work = "mkdir -p src && printf 'hello\\n' > src/out.txt";

describe("the runner reads no report of the agent's through a link", () => {
  it.each([
    ["question", "FORGE_QUESTION_FILE", EXIT_CODES.HUMAN_INPUT],
    ["refinement", "FORGE_REFINEMENT_FILE", EXIT_CODES.NEEDS_REFINEMENT],
    ["Change Request", "FORGE_CHANGE_REQUEST_FILE", EXIT_CODES.NEEDS_ESCALATION],
  ])("a %s linked to a file only the runner may read is absent; the secret is published nowhere", async (_name, variable, exit) => {
    const w = (world = makeWorld());
    const secret = secretFile(w, `${SECRET}\n`);
    const { report, published } = await runJob(w, [work, `ln -s '${secret}' "$${variable}"`, `exit ${exit}`].join("\n"));
    expect(published).not.toContain(SECRET);
    expect(report.result.question).toBeUndefined();
    expect(report.result.refinement).toBeUndefined();
    expect(report.result.change_request_path).toBeUndefined();
    expect(report.warnings.join("\n")).toMatch(/link/);
  });

  it("a walkthrough linked to a file only the runner may read is no walkthrough: the attempt fails, the PR body does not carry it", async () => {
    const w = (world = makeWorld());
    const secret = secretFile(
      w,
      agentWalkthrough({}, `## Summary\n\n${SECRET}\n\n## Approach\n\nx\n\n## Issues Encountered\n\nx\n\n## Testing\n\nx\n`),
    );
    const { report, published } = await runJob(w, [work, `ln -s '${secret}' "$FORGE_WALKTHROUGH_PATH"`].join("\n"));
    expect(published).not.toContain(SECRET);
    expect(report.exitCode).toBe(EXIT_CODES.FAILURE);
    expect(report.result.error).toMatch(/walkthrough/);
  });

  it("a walkthrough left as a link in the record folder of the checkout is not taken", async () => {
    const w = (world = makeWorld());
    const secret = secretFile(
      w,
      agentWalkthrough({}, `## Summary\n\n${SECRET}\n\n## Approach\n\nx\n\n## Issues Encountered\n\nx\n\n## Testing\n\nx\n`),
    );
    const record = `.forge/runs/${RUN}/t1/1`;
    const { report, published } = await runJob(
      w,
      [work, `mkdir -p '${record}'`, `ln -s '${secret}' '${record}/walkthrough.md'`].join("\n"),
    );
    expect(published).not.toContain(SECRET);
    expect(report.exitCode).toBe(EXIT_CODES.FAILURE);
    expect(report.warnings.join("\n")).toMatch(/refused to read .*walkthrough\.md.*link/);
  });

  it("a spend file linked to another file is not read: the spend it names is not taken", async () => {
    const w = (world = makeWorld());
    const secret = secretFile(w, `{"cost_usd": 123.45}\n`);
    const { report } = await runJob(
      w,
      [work, `ln -s '${secret}' "$FORGE_SPEND_FILE"`, `cat > "$FORGE_WALKTHROUGH_PATH" <<'WT'\n${agentWalkthrough()}WT`].join("\n"),
    );
    expect(report.exitCode, report.result.error).toBe(0);
    expect(report.result.cost_usd).toBeUndefined();
  });
});

describe("the checkout's own files", () => {
  it("a dependency's walkthrough that is a link (an earlier agent committed it) is not read into the next agent's prompt", async () => {
    const w = (world = makeWorld({
      tasks: [{ id: "a" }, { id: "t1", dependencies: ["a"] }],
      taskId: "t1",
      journal: (j) => {
        Object.assign(j.tasks[0]!, { status: "MERGED", attempts: 1, attempt: newAttempt("forge/r1/a/1", "2026-11-22T09:00:00.000Z") });
        Object.assign(j.tasks[1]!, {
          status: "RUNNING",
          attempts: 1,
          attempt: newAttempt("forge/r1/t1/1", "2026-11-22T09:00:00.000Z"),
          blockers: 0,
        });
      },
    }));
    const secret = secretFile(w, `---\nstatus: completed\n---\n## Summary\n\n${SECRET}\n`);
    // What a checkout holds when an earlier agent committed a link at the dependency's walkthrough path.
    const depWalkthrough = path.join(w.workspace, `.forge/runs/${RUN}/a/1/walkthrough.md`);
    mkdirSync(path.dirname(depWalkthrough), { recursive: true });
    symlinkSync(secret, depWalkthrough);
    const { report, published } = await runJob(
      w,
      [work, `cp "$FORGE_PROMPT_FILE" src/context-seen.md`, `cat > "$FORGE_WALKTHROUGH_PATH" <<'WT'\n${agentWalkthrough()}WT`].join("\n"),
    );
    expect(report.exitCode, report.result.error).toBe(0);
    expect(w.show(report.headSha, "src/context-seen.md")).not.toContain(SECRET);
    expect(published).not.toContain(SECRET);
  });
});

describe("a Captain's plan folder", () => {
  it("holding a task file linked to a file only the runner may read is refused before the validator reads it", async () => {
    const w = (world = makeWorld());
    sh(w.origin, ["branch", "forge/_plan-7", "main"]);
    // A file the validator would quote from, were it read: front matter that is not YAML.
    const secret = secretFile(w, `---\nid: [${SECRET}\n---\nbody\n`);
    const planner: AgentRunner = {
      name: "command",
      async run(req) {
        const dir = path.join(req.workdir, req.taskContext.planDir!);
        mkdirSync(path.join(dir, "tasks"), { recursive: true });
        writeFileSync(path.join(dir, "plan.md"), "# CSV export\n");
        writeFileSync(
          path.join(dir, "dag.json"),
          JSON.stringify({
            version: 1,
            planId: path.basename(dir),
            nodes: [{ id: "to-csv", type: "task", agentType: "1", dependencies: [] }],
          }),
        );
        symlinkSync(secret, path.join(dir, "tasks", "to-csv.md"));
        return { exitCode: 0 };
      },
    };
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
      deps: { github: w.github, git: w.git, agent: planner },
      context: { issue: 7, title: "CSV export", body: "Export as CSV." },
    });
    if (report.kind !== "captain") throw new Error(report.reason);
    expect(report.exitCode).toBe(EXIT_CODES.NEEDS_REFINEMENT);
    expect(report.error).toMatch(/to-csv\.md is a symbolic link/);
    expect(JSON.stringify(report)).not.toContain(SECRET);
    expect(w.github.pulls).toEqual([]);
  });
});

describe("the agent layer reads no report through a link either", () => {
  // A refinement document read as absent is no refinement: exit 10 needs one, so the stage fails
  // once its correction wrote none either (src/agent/stages/reports.ts).
  it.each([
    ["question.md", EXIT_CODES.HUMAN_INPUT, "question", EXIT_CODES.HUMAN_INPUT],
    ["refinement.md", EXIT_CODES.NEEDS_REFINEMENT, "refinement", EXIT_CODES.FAILURE],
  ] as const)("a stage's %s linked to a file only the runner may read is not the stage's answer", async (file, exit, field, ends) => {
    const w = fakeWorld({ "2:implement": { exit } });
    const secret = path.join(w.dir, "runner-only.txt");
    writeFileSync(secret, `${SECRET}\n`);
    const sessionDir = path.join(w.dir, "session");
    mkdirSync(sessionDir, { recursive: true });
    symlinkSync(secret, path.join(sessionDir, file));
    const out = await runStages({
      agentType: "2",
      taskContext: { runId: "r1", taskId: "t1", attempt: 1, task: "---\nid: t1\ntitle: T\n---\n## Description\nDo T." },
      workdir: w.repo,
      sessionDir,
      spawn: {
        adapter: "command",
        command: process.execPath,
        args: [FAKE_AGENT],
        env: { PATH: process.env.PATH },
        extraEnv: { FAKE_PLAN: w.planFile, FAKE_STATE: w.state },
        forgeCli: false,
      },
    });
    expect(out.exitCode).toBe(ends);
    if (ends === EXIT_CODES.FAILURE)
      expect(out.error).toMatch(
        /the refinement document \(exit 10\) was invalid \(refinement\.md — missing: the file was not written\) and its correction ended with exit 0, not 10/,
      );
    expect(JSON.stringify(out)).not.toContain(SECRET);
    expect(out[field] ?? "").not.toContain(SECRET);
  });
});

describe("the runner writes no file through a link either", () => {
  it("a refinery's test output, merge log and sentinel grade land in the session, not where links the agent left point", async () => {
    const w = fakeWorld({ "refinery:walkthrough": { walkthrough: true } }, { git: true });
    execFileSync("git", ["-C", w.repo, "commit", "-q", "--allow-empty", "-m", "base"]);
    const victim = path.join(w.dir, "runner-file.txt");
    writeFileSync(victim, "the runner's own file\n");
    const sessionDir = path.join(w.dir, "session");
    mkdirSync(path.join(sessionDir, "sentinel", "initial"), { recursive: true });
    for (const rel of ["sentinel/initial/test-output.log", "merge-log.txt"]) symlinkSync(victim, path.join(sessionDir, rel));
    const out = await runStages({
      agentType: "refinery",
      taskContext: {
        runId: "r1",
        taskId: "t1",
        attempt: 1,
        task: "---\nid: t1\ntitle: T\n---\n## Description\nDo T.",
        mergeRefs: [],
        testCommand: "echo 'export NODE_OPTIONS=--require=/tmp/evil.js'",
      },
      workdir: w.repo,
      sessionDir,
      spawn: {
        adapter: "command",
        command: process.execPath,
        args: [FAKE_AGENT],
        env: { PATH: process.env.PATH },
        extraEnv: { FAKE_PLAN: w.planFile, FAKE_STATE: w.state },
        forgeCli: false,
      },
    });
    expect(out.exitCode, JSON.stringify(out.manifest)).toBe(0);
    expect(readFileSync(victim, "utf8")).toBe("the runner's own file\n");
    expect(readFileSync(path.join(sessionDir, "sentinel/initial/test-output.log"), "utf8")).toContain("NODE_OPTIONS");
  });
});

describe("readAgentFile", () => {
  it("reads a regular file inside its folder; refuses a link (last component or any folder below the root), a path outside, a FIFO", async () => {
    const w = (world = makeWorld());
    const root = path.join(w.dir, "session");
    mkdirSync(path.join(root, "sub"), { recursive: true });
    writeFileSync(path.join(root, "sub", "ok.md"), "fine");
    const secret = secretFile(w, SECRET);
    expect((await readAgentFile(root, path.join(root, "sub", "ok.md")))?.toString()).toBe("fine");
    expect(await readAgentFile(root, path.join(root, "missing.md"))).toBeUndefined();
    symlinkSync(secret, path.join(root, "link.md"));
    await expect(readAgentFile(root, path.join(root, "link.md"))).rejects.toBeInstanceOf(AgentFileRefusedError);
    symlinkSync(path.dirname(secret), path.join(root, "dir"));
    await expect(readAgentFile(root, path.join(root, "dir", "secret.txt"))).rejects.toBeInstanceOf(AgentFileRefusedError);
    await expect(readAgentFile(root, secret)).rejects.toBeInstanceOf(AgentFileRefusedError);
    await expect(readAgentFile(root, path.join(root, "..", "runner-only", "secret.txt"))).rejects.toBeInstanceOf(AgentFileRefusedError);
    execFileSync("mkfifo", [path.join(root, "fifo")]);
    await expect(readAgentFile(root, path.join(root, "fifo"))).rejects.toBeInstanceOf(AgentFileRefusedError);
    const warned: string[] = [];
    expect(await readAgentText(root, path.join(root, "link.md"), (m) => warned.push(m))).toBeUndefined();
    expect(warned.join("")).toMatch(/link\.md.*symbolic link.*treated as absent/);
  });
});
