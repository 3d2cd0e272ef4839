// Live progress: while the agent works, the job's check run `forge · <task> · live` shows the current
// stage, the last tool calls, turns and spend so far — updated at most once per interval (30 s in
// production, shortened here), only when something changed — and is completed with the attempt's
// exit code. A job without `checks: write` goes on without it, with one warning.
import path from "node:path";
import { writeFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import type { JobReport } from "../../action/src/main.js";
import { agentWalkthrough, makeWorld, testConfig, type World } from "./world.js";
import { runJob, stagesAgent } from "./job.js";

let world: World | undefined;
afterEach(() => world?.cleanup());

const use = (tool: string, n: number) =>
  JSON.stringify({
    type: "assistant",
    message: { id: `m${n}`, content: [{ type: "tool_use", id: `tu${n}`, name: tool, input: { command: `step ${n}` } }] },
  });

async function run(w: World, intervalMs: number): Promise<{ report: JobReport; ms: number }> {
  const script = path.join(w.dir, "agent.sh");
  const lines = ["#!/bin/sh", "mkdir -p src", `echo "$FORGE_SPAWN_NAME" >> src/a.txt`];
  for (let i = 1; i <= 6; i++) lines.push(`printf '%s\\n' '${use(i % 2 ? "Bash" : "Edit|<b>@octocat`x`</b>", i)}'`, "sleep 0.15");
  lines.push(
    `printf '{"cost_usd": 0.42}' > "$FORGE_SPEND_FILE"`,
    `cat > "$FORGE_WALKTHROUGH_PATH" <<'WT'\n${agentWalkthrough({ files_changed: [] })}WT`,
  );
  writeFileSync(script, lines.join("\n"), { mode: 0o755 });
  const t0 = Date.now();
  const report = await runJob(w, stagesAgent(script), {
    config: testConfig({ heartbeat_interval_seconds: 0.1, stale_threshold_seconds: 10 }),
    deps: { liveCheckIntervalMs: intervalMs },
  });
  return { report, ms: Date.now() - t0 };
}

describe("the live check run", () => {
  it("shows stage, last tool calls, turns and spend while the agent works, at most once per interval, and ends with the exit code", async () => {
    const w = (world = makeWorld());
    w.github.withChecks();
    const interval = 400;
    const { report, ms } = await run(w, interval);
    if (report.kind !== "attempt") throw new Error(report.kind);
    expect(report.exitCode, report.result.error).toBe(0);
    // The check run follows the branch's head — the start commit, the work pushed after each stage,
    // the record commit — since GitHub shows a pull request the check runs of its head only; each one
    // left behind is completed, naming the commit it continues on.
    const checks = w.github.checkRuns;
    expect(checks.length).toBe(1 + report.progressPushes + 1);
    expect(new Set(checks.map((c) => c.name))).toEqual(new Set(["forge · t1 · live"]));
    expect(new Set(checks.map((c) => c.headSha)).size).toBe(checks.length);
    for (let i = 0; i < checks.length - 1; i++) {
      const left = checks[i]!.outputs.at(-1)!;
      expect(left.conclusion).toBe("neutral");
      expect(left.title).toBe(`Continued on ${checks[i + 1]!.headSha.slice(0, 12)}`);
    }
    const check = checks.at(-1)!;
    expect(check.headSha).toBe(report.headSha);
    const outputs = checks.flatMap((c) => c.outputs.filter((o) => !o.title.startsWith("Continued on")));
    const updates = outputs.slice(1, -1);
    expect(updates.length).toBeGreaterThanOrEqual(1);
    // Never two updates of one check run closer than the interval (the final one, and a move, may come at any time).
    for (const c of checks) {
      const own = c.outputs.filter((o) => !o.title.startsWith("Continued on"));
      for (let i = 1; i < own.length - (c === check ? 1 : 0); i++)
        expect(own[i]!.at - own[i - 1]!.at).toBeGreaterThanOrEqual(interval - 50);
    }
    const during = updates.map((o) => o.summary).join("\n");
    expect(during).toMatch(/\*\*Stage:\*\* `(implement|verify|walkthrough)`/);
    expect(during).toMatch(/- \d+ s · `\w+` · `Bash`/);
    expect(updates.some((o) => /· \d+ turns ·/.test(o.title))).toBe(true);
    // Agent text is data: no backtick breaks out of its code span, no live @mention, no HTML.
    expect(during).not.toMatch(/@octocat/);
    expect(during).toContain("`Edit|<b>@\u200Boctocat x </b>`");
    const last = check.outputs.at(-1)!;
    expect(check.outputs).toHaveLength(2);
    expect(last.conclusion).toBe("success");
    expect(last.title).toBe("Attempt 1 ended: exit 0 (success)");
    expect(last.summary).toContain("**Spend so far:** $0.42");
    expect(last.summary).toMatch(
      /Execution report: \[execution-report.md\]\(https:\/\/github.example\/acme\/demo\/blob\/[0-9a-f]{40}\/\.forge\/runs\/r1\/t1\/1\/execution-report\.md\)/,
    );
    // The overhead: API calls per minute of the task, at this interval and at the default 30 s.
    const calls = checks.reduce((n, c) => n + c.outputs.length, 0);
    expect(calls).toBeLessThanOrEqual(Math.ceil(ms / interval) + 2 + 2 * (checks.length - 1));
    console.log(
      `live check run: ${calls} API calls in ${(ms / 1000).toFixed(1)} s at a ${interval} ms interval; at the default 30 s: at most 2 updates per agent minute + 2 per attempt (${(2 + 2 / 10).toFixed(1)} calls per task-minute for a 10-minute attempt)`,
    );
  });

  it("without checks: write the job goes on, with one warning and no further calls", async () => {
    const w = (world = makeWorld());
    w.github.withChecks(true);
    const { report } = await run(w, 100);
    if (report.kind !== "attempt") throw new Error(report.kind);
    expect(report.exitCode, report.result.error).toBe(0);
    expect(w.github.calls.filter((c) => c.includes("CheckRun"))).toEqual(["createCheckRun forge · t1 · live"]);
    expect(report.warnings.filter((m) => m.startsWith("live progress is off"))).toHaveLength(1);
  });
});
