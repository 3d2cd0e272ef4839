// The attempt's observability files: `.live-report` (one JSON line per stage and tool event, written
// while the agent works) and `execution-report.md` (stages, exit codes, signals, timings, spend),
// both in the record folder and the session artifact.
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { LiveEntry } from "../../action/src/live-report.js";
import type { JobReport } from "../../action/src/main.js";
import { renderExecutionReport } from "../../action/src/task/execution-report.js";
import { modelPlan } from "../../src/core/tiers.js";
import { attemptDir } from "../../src/core/layout.js";
import { agentWalkthrough, makeWorld, RUN, testConfig, type World } from "./world.js";
import { runJob, stagesAgent } from "./job.js";

let world: World | undefined;
afterEach(() => world?.cleanup());

/** A command agent that speaks Claude Code's stream-json: one tool call (its name chosen by the test), a result with its cost. */
function streamJsonAgent(tool: string): string {
  const use = JSON.stringify({
    type: "assistant",
    message: { content: [{ type: "tool_use", id: "tu1", name: tool, input: { command: "echo hi > src/a.txt" } }] },
  });
  const result = JSON.stringify({ type: "user", message: { content: [{ type: "tool_result", tool_use_id: "tu1", content: "ok" }] } });
  const end = JSON.stringify({ type: "result", subtype: "success", result: "done", total_cost_usd: 0.0125, num_turns: 2 });
  return [
    "mkdir -p src",
    `echo "stage $FORGE_SPAWN_NAME" >> src/a.txt`,
    `printf '%s\\n' '${use}'`,
    `printf '%s\\n' '${result}'`,
    `cat > "$FORGE_WALKTHROUGH_PATH" <<'WT'\n${agentWalkthrough({ files_changed: [] })}WT`,
    `printf '%s\\n' '${end}'`,
  ].join("\n");
}

async function runAttempt(w: World, script: string): Promise<JobReport> {
  const file = path.join(w.dir, "agent.sh");
  (await import("node:fs")).writeFileSync(file, `#!/bin/sh\n${script}\n`, { mode: 0o755 });
  // Model tiers without models of the command adapter's: each stage's tier is in the report.
  const models = modelPlan("command", {});
  return runJob(w, stagesAgent(file, { models }), { config: testConfig({ heartbeat_interval_seconds: 1, stale_threshold_seconds: 10 }) });
}

describe("observability files of an attempt", () => {
  it("keeps .live-report as JSON lines, one per stage start and end, tool event and push, and commits it with execution-report.md", async () => {
    const w = (world = makeWorld());
    const report = await runAttempt(w, streamJsonAgent("Bash"));
    if (report.kind !== "attempt") throw new Error(report.kind);
    expect(report.exitCode, report.result.error).toBe(0);
    const dir = attemptDir(RUN, "t1", 1);
    const lines = (w.show(w.branch, `${dir}/.live-report`) ?? "")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as LiveEntry);
    const stages = ["implement", "verify", "walkthrough"];
    for (const stage of stages) {
      expect(lines.filter((l) => l.stage === stage && l.layer === "stage").map((l) => l.status)).toEqual([
        "start",
        "tool_use",
        "tool_result",
        "end",
      ]);
      expect(lines.find((l) => l.stage === stage && l.status === "tool_use")?.tool).toBe("Bash");
    }
    // The runner's own steps: the agent's start and end, a push after every stage that changed something.
    expect(lines[0]).toMatchObject({ layer: "job", stage: "agent", status: "start" });
    expect(lines.at(-1)).toMatchObject({ layer: "job", stage: "agent", status: "end", detail: "exit 0" });
    expect(lines.filter((l) => l.status === "push").map((l) => l.stage)).toEqual(["implement", "verify", "walkthrough"]);
    expect(new Set(lines.map((l) => l.trace_id)).size).toBe(1);
    const at = lines.map((l) => Date.parse(l.at));
    expect(at).toEqual([...at].sort((a, b) => a - b));

    const md = w.show(w.branch, `${dir}/execution-report.md`) ?? "";
    expect(md).toContain("# Execution report — `t1` attempt 1");
    expect(md).toContain("| Outcome | exit 0: success |");
    const tiers = { implement: "high", verify: "low", walkthrough: "medium" };
    for (const stage of stages)
      expect(md).toMatch(new RegExp(`\\| ${stage} \\| success \\| 0 \\| 1 \\| ${tiers[stage as keyof typeof tiers]} \\| \\d+\\.\\d s \\|`));
    // The walkthrough says which model each stage ran on (here: the tiers, the CLI choosing the model).
    expect(report.result.walkthrough?.models).toEqual([
      { stage: "implement", role: "implementer", tier: "high" },
      { stage: "verify", role: "verifier", tier: "low" },
      { stage: "walkthrough", role: "analyst", tier: "medium" },
    ]);
    // Three sessions at $0.0125 each, as the adapter reported them.
    expect(md).toContain("| Spend (the adapter's figure) | $0.0375 |");
    expect(md).toContain("| Turns | 6 |");
    expect(md).toContain("## Activity (3 tool calls,");
    expect(md).toMatch(/- `agent\/stages\/01-implement\/\.signals\/exec-implement\.done`/);
    // The artifact is the session folder: the same two files.
    const session = path.join(w.temp, "forge-session-t1-1");
    expect(readFileSync(path.join(session, "execution-report.md"), "utf8")).toBe(md);
    expect(readFileSync(path.join(session, ".live-report"), "utf8").trim().split("\n")).toHaveLength(lines.length);
  });

  it("shows an agent's tool name as data: one line, cut, table separators escaped, no Forge marker, no @mention", async () => {
    const w = (world = makeWorld());
    const hostile = "X|<!-- forge:run r0 -->@octocat\\n".padEnd(300, "y");
    const report = await runAttempt(w, streamJsonAgent(hostile));
    if (report.kind !== "attempt") throw new Error(report.kind);
    const md = w.show(w.branch, `${attemptDir(RUN, "t1", 1)}/execution-report.md`) ?? "";
    expect(md).not.toContain("forge:run");
    expect(md).not.toMatch(/@octocat/);
    expect(md).toContain("X\\|");
    for (const line of md.split("\n").filter((l) => l.includes("tool_use"))) expect(line.split(/(?<!\\)\|/).length).toBe(7);
  });

  it("shows the model and tier each stage ran on", () => {
    const md = renderExecutionReport(
      {
        runId: "r1",
        taskId: "t1",
        attempt: 1,
        agentType: "1",
        agent: "claude",
        traceId: "0123456789abcdef",
        exitCode: 0,
        t0: 0,
        tAgent: 0,
        tAgentEnd: 1_000,
        tNow: 1_000,
        spend: {},
        live: [],
      },
      [
        { name: "implement", status: "success", exit_code: 0, attempts: 1, model: "opus", tier: "high", duration_ms: 500 },
        { name: "verify", status: "success", exit_code: 0, attempts: 2, model: "my|model", duration_ms: 400 },
        { name: "walkthrough", status: "success", exit_code: 0, attempts: 1, tier: "medium", duration_ms: 100 },
      ],
      [],
    );
    expect(md).toContain("| Stage | Status | Exit | Attempts | Model | Time | Error |");
    expect(md).toContain("| implement | success | 0 | 1 | opus (high) | 0.5 s |  |");
    expect(md).toContain("| verify | success | 0 | 2 | my\\|model | 0.4 s |  |");
    expect(md).toContain("| walkthrough | success | 0 | 1 | medium | 0.1 s |  |");
  });

  it("names why the runner stopped the agent, and says when no spend was reported", () => {
    const md = renderExecutionReport(
      {
        runId: "r1",
        taskId: "t1",
        attempt: 2,
        agentType: "2",
        agent: "command",
        traceId: "0123456789abcdef",
        exitCode: 21,
        stopped: { reason: "stalled", detail: "no progress for 2 heartbeats" },
        t0: 0,
        tAgent: 1_000,
        tAgentEnd: 61_000,
        tNow: 62_500,
        spend: {},
        live: [],
      },
      [],
      [],
    );
    expect(md).toContain("| Outcome | exit 21: timed out / stalled |");
    expect(md).toContain("| Stopped by the runner | stalled: no progress for 2 heartbeats |");
    expect(md).toContain("| Agent | 60.0 s |");
    expect(md).toContain("| Spend | not reported by the adapter |");
    expect(md).toContain("No stage manifest.");
  });
});
