import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import matter from "gray-matter";
import { parseAgentChangeRequest } from "../../src/agent/change-request.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { walkthroughFrontmatterSchema } from "../../src/core/schemas/walkthrough.js";
import { parseScriptedTask, runScriptedAgent, ScriptedTaskError, type AgentIo } from "../../src/fake-agents/scripted-agent.js";
import { runJob } from "../../src/local-github/runner/executor.js";
import { baseContext } from "../local-github/runner/test-helpers.js";

const BIN = fileURLToPath(new URL("../../src/fake-agents/bin/forge-scripted-agent.mjs", import.meta.url));

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "forge-scripted-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const task = (directives: string, extra = "") => `---
id: t-greet
title: Add a greeting
type: "1"
dependencies: []
acceptance_criteria: [greet() says hello]
estimated_complexity: small
artifacts: [docs/greet.md, src/greet.ts]
---

## Description

Add greet().

## Context

None.

## Instructions

\`\`\`ts file=src/greet.ts
export const greet = (name: string) => \`hello \${name}\`;
\`\`\`
${extra}
\`\`\`forge-scripted-agent
${directives}
\`\`\`
`;

function io(attempt: number, extra: Partial<AgentIo> = {}): AgentIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { cwd: dir, attempt, stdout: (l) => out.push(l), stderr: (l) => err.push(l), out, err, ...extra };
}

describe("scripted agent: reading the task", () => {
  it("takes files from fenced blocks, artifacts and directives, deterministically", () => {
    const t = parseScriptedTask(task('files:\n  src/extra.txt: "extra\\n"', '\n```json path=config/a.json\n{ "a": 1 }\n```\n'));
    expect(t.id).toBe("t-greet");
    expect(t.files.map(([p]) => p)).toEqual(["config/a.json", "docs/greet.md", "src/extra.txt", "src/greet.ts"]);
    expect(Object.fromEntries(t.files)["src/greet.ts"]).toBe("export const greet = (name: string) => `hello ${name}`;\n");
    expect(Object.fromEntries(t.files)["docs/greet.md"]).toBe(
      "# Add a greeting\n\nProduced by the Forge scripted agent for task t-greet: Add a greeting.\n",
    );
    expect(parseScriptedTask(task(""))).toEqual(parseScriptedTask(task("")));
  });

  it("refuses paths that leave the working directory and unknown outcomes", () => {
    expect(() => parseScriptedTask(task("files:\n  ../escape.txt: x"))).toThrow(ScriptedTaskError);
    expect(() => parseScriptedTask(task("default: explode"))).toThrow(/outcome must be one of/);
  });
});

describe("scripted agent: directives", () => {
  it("fails on the attempts it is told to, then succeeds and writes a valid walkthrough", async () => {
    const t = parseScriptedTask(task("attempts:\n  1: { outcome: fail, message: tests failed }"));
    const first = io(1);
    expect(await runScriptedAgent(t, first)).toBe(1);
    expect(first.err).toEqual(["Error: tests failed"]);
    expect(existsSync(path.join(dir, "src/greet.ts"))).toBe(false);

    const wt = path.join(dir, "out", "walkthrough.md");
    const second = io(2, { walkthroughFile: wt });
    expect(await runScriptedAgent(t, second)).toBe(0);
    expect(readFileSync(path.join(dir, "src/greet.ts"), "utf8")).toContain("hello ${name}");
    expect(existsSync(path.join(dir, "docs/greet.md"))).toBe(true);
    const { data, content } = matter(readFileSync(wt, "utf8"));
    // The runner fills in what it measures; the rest must already be valid.
    const completed = walkthroughFrontmatterSchema.parse({
      ...data,
      run_id: "r1",
      branch: "forge/r1/t-greet/2",
      base_ref: "main",
      head_sha: "a".repeat(40),
      time_spent_minutes: 1,
    });
    expect(completed.files_changed.map((f) => f.path)).toEqual(["docs/greet.md", "src/greet.ts"]);
    for (const s of ["## Summary", "## Approach", "## Issues Encountered", "## Testing"]) expect(content).toContain(s);
  });

  it("asks a question (exit 3), escalates (exit 11) and exits with a chosen code", async () => {
    const t = parseScriptedTask(
      task(
        "attempts:\n  1: { outcome: ask, question: Which database? }\n  2: { outcome: escalate, reason: The spec contradicts t-db }\n  3: { outcome: exit, code: 12 }",
      ),
    );
    const q = io(1, { questionFile: path.join(dir, "signals/question.md") });
    expect(await runScriptedAgent(t, q)).toBe(3);
    expect(readFileSync(path.join(dir, "signals/question.md"), "utf8")).toBe("Which database?\n");
    expect(q.out).toContain("QUESTION: Which database?");

    const cr = io(2, { changeRequestFile: path.join(dir, "signals/cr.md") });
    expect(await runScriptedAgent(t, cr)).toBe(11);
    const crDoc = matter(readFileSync(path.join(dir, "signals/cr.md"), "utf8"));
    expect(crDoc.data).toMatchObject({ reason: "The spec contradicts t-db", affected_tasks: ["t-greet"], suggested_action: "AMEND" });
    // A document the runner accepts (src/agent/change-request.ts).
    expect(parseAgentChangeRequest(readFileSync(path.join(dir, "signals/cr.md"), "utf8")).problems).toEqual([]);

    expect(await runScriptedAgent(t, io(3))).toBe(12);
    expect(existsSync(path.join(dir, "src/greet.ts"))).toBe(true);
  });

  it("hits a rate limit with Claude Code's wording and exit 1, writing nothing", async () => {
    const t = parseScriptedTask(task("default: rate_limit"));
    const r = io(1);
    expect(await runScriptedAgent(t, r)).toBe(1);
    expect(r.out.at(-1)).toBe("Claude AI usage limit reached, resets at 3pm (America/New_York)");
    expect(existsSync(path.join(dir, "src"))).toBe(false);
  });

  it("speaks Claude Code's stream-json when asked", async () => {
    const t = parseScriptedTask(task(""));
    const r = io(1, { streamJson: true });
    expect(await runScriptedAgent(t, r)).toBe(0);
    const events = r.out.map((l) => JSON.parse(l) as { type: string; subtype?: string; is_error?: boolean });
    expect(events[0]).toMatchObject({ type: "system", subtype: "init" });
    expect(events.at(-1)).toMatchObject({ type: "result", subtype: "success", is_error: false });
  });
});

function runBin(args: string[], env: Record<string, string>, opts: { killAfterSilenceMs?: number } = {}) {
  return new Promise<{ code: number | null; signal: string | null; out: string; silentFor: number }>((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: dir, env: { PATH: process.env.PATH ?? "", ...env } });
    let out = "";
    let last = Date.now();
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
      last = Date.now();
    });
    let timer: NodeJS.Timeout | undefined;
    if (opts.killAfterSilenceMs) {
      timer = setInterval(() => {
        if (out.includes("Thinking") && Date.now() - last >= opts.killAfterSilenceMs!) child.kill("SIGTERM");
      }, 50);
    }
    child.on("close", (code, signal) => {
      if (timer) clearInterval(timer);
      resolve({ code, signal, out, silentFor: Date.now() - last });
    });
  });
}

describe("scripted agent: as a command", () => {
  it("reads FORGE_TASK_FILE and FORGE_ATTEMPT, and exits with the directive's code", async () => {
    writeFileSync(path.join(dir, "task.md"), task("attempts:\n  1: fail"));
    const a1 = await runBin([], { FORGE_TASK_FILE: "task.md", FORGE_ATTEMPT: "1" });
    expect(a1.code).toBe(1);
    const a2 = await runBin(["--task", "task.md", "--attempt", "2"], { FORGE_SIGNAL_DIR: "signals" });
    expect(a2.code).toBe(0);
    expect(a2.out).toContain("Wrote src/greet.ts");
    expect(existsSync(path.join(dir, "signals", "walkthrough.md"))).toBe(true);
  });

  it("stalls: goes silent and stays alive until it is killed", async () => {
    writeFileSync(path.join(dir, "task.md"), task("default: stall"));
    const r = await runBin(["task.md"], {}, { killAfterSilenceMs: 800 });
    expect(r.signal).toBe("SIGTERM");
    expect(r.out.trim().split("\n").at(-1)).toBe("Thinking…");
    // Partial work is on disk for the runner to commit.
    expect(existsSync(path.join(dir, "src/greet.ts"))).toBe(true);
  });

  it("runs as a workflow step in the sim runner", async () => {
    const ws = path.join(dir, "ws");
    const wf = `on:
  workflow_dispatch:
    inputs:
      attempt: { required: true }
jobs:
  agent:
    runs-on: ubuntu-latest
    steps:
      - run: mkdir -p .forge && cp "${path.join(dir, "task.md")}" .forge/task.md
      - id: agent
        env:
          FORGE_TASK_FILE: .forge/task.md
          FORGE_ATTEMPT: \${{ inputs.attempt }}
        run: node "${BIN}"
      - if: failure() && steps.agent.outcome == 'failure'
        run: echo "agent failed on attempt \${{ inputs.attempt }}"
`;
    writeFileSync(path.join(dir, "task.md"), task("attempts:\n  1: { outcome: fail, message: flaky test }"));
    const r1 = await runJob({ workflowText: wf, inputs: { attempt: "1" }, context: baseContext(), workspace: ws });
    expect(r1.conclusion).toBe("failure");
    expect(r1.steps[2]!.log).toContain("agent failed on attempt 1");
    const r2 = await runJob({ workflowText: wf, inputs: { attempt: "2" }, context: baseContext(), workspace: ws });
    expect(r2.conclusion).toBe("success");
    expect(readFileSync(path.join(ws, "src/greet.ts"), "utf8")).toContain("hello ${name}");
  });
});
