// The runner's budget: an agent whose spend crosses its attempt's cap is stopped as a stalled one is
// — its work committed and pushed — with a typed outcome (exit 20, result.json `budget_exceeded`);
// spend comes from the adapter's own accounting (a command agent's FORGE_SPEND_FILE here, Claude
// Code's reported cost and Codex's priced tokens in the meter's unit tests).
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { JobReport } from "../../action/src/main.js";
import { SpendMeter } from "../../action/src/task/spend.js";
import { attemptDir } from "../../src/core/layout.js";
import { agentWalkthrough, makeWorld, RUN, sh, testConfig, type World } from "./world.js";
import { commandAgent, runJob as runJobIn } from "./job.js";

let world: World | undefined;
afterEach(() => world?.cleanup());

function runJob(w: World, script: string, context: Record<string, unknown>, config: Record<string, unknown> = {}): Promise<JobReport> {
  return runJobIn(w, commandAgent(w, script), {
    config: testConfig({ heartbeat_interval_seconds: 0.2, stale_threshold_seconds: 5, ...config }),
    input: { context },
  });
}

// Spends $0.40 a step, working on: crosses a $1 cap at the third step.
const SPENDER = [
  "mkdir -p src",
  "i=0",
  "while true; do",
  '  i=$((i+1)); echo "step $i" >> src/work.txt',
  `  printf '{"cost_usd": %s, "input_tokens": %s, "output_tokens": %s}' "$(echo "$i * 0.4" | bc -l)" $((i*1000)) $((i*100)) > "$FORGE_SPEND_FILE"`,
  '  echo "working on step $i"; sleep 0.1',
  "done",
].join("\n");

describe("budgets in the runner", () => {
  it("stops an agent past its attempt's cap, keeps and pushes its work, and says so in result.json, .live-report and the execution report", async () => {
    const w = (world = makeWorld());
    const report = await runJob(w, SPENDER, { budget: { usd: 1 } });
    if (report.kind !== "attempt") throw new Error(report.kind);
    expect(report.exitCode).toBe(20);
    expect(report.result.error).toMatch(/the agent was stopped: spent \$1\.\d\d of its \$1\.00 budget/);
    expect(report.result.budget_exceeded).toMatchObject({ limit_usd: 1 });
    expect(report.result.budget_exceeded!.spent_usd!).toBeGreaterThan(1);
    expect(report.result.cost_usd!).toBeGreaterThanOrEqual(report.result.budget_exceeded!.spent_usd!);
    expect(report.result.tokens!.input).toBeGreaterThanOrEqual(3000);
    // The work so far is the work commit, pushed: nothing is lost.
    expect(sh(w.origin, ["show", `${report.workSha!}:src/work.txt`])).toMatch(/^step 1\nstep 2\nstep 3\b/);
    expect(sh(w.origin, ["rev-parse", `refs/heads/${w.branch}`])).toBe(report.headSha);
    expect(sh(w.origin, ["log", "-1", "--format=%b", report.workSha!])).toMatch(/kept when the agent was stopped \(budget\)/);
    const dir = attemptDir(RUN, "t1", 1);
    expect(w.show(report.headSha, `${dir}/.live-report`)).toMatch(/"status":"budget","detail":"spent \$1\.\d\d of its \$1\.00 budget"/);
    expect(w.show(report.headSha, `${dir}/execution-report.md`)).toContain("| Budget | stopped at its cap: $1.00 |");
  });

  it("takes the cap from the config when the dispatch names none, and counts tokens too", async () => {
    const w = (world = makeWorld());
    const report = await runJob(w, SPENDER, {}, { budgets: { attempt_tokens: 2500 } });
    if (report.kind !== "attempt") throw new Error(report.kind);
    expect(report.exitCode).toBe(20);
    expect(report.result.budget_exceeded).toMatchObject({ limit_tokens: 2500 });
    expect(report.result.error).toMatch(/used \d+ of its 2500 tokens/);
  });

  it("an agent within its cap ends as it would have: its spend is reported, nothing stopped", async () => {
    const w = (world = makeWorld());
    const script = [
      "mkdir -p src && echo done > src/a.txt",
      `printf '{"cost_usd": 0.25}' > "$FORGE_SPEND_FILE"`,
      `cat > "$FORGE_WALKTHROUGH_PATH" <<'WT'\n${agentWalkthrough({ files_changed: [] })}WT`,
    ].join("\n");
    const report = await runJob(w, script, { budget: { usd: 1 } });
    if (report.kind !== "attempt") throw new Error(report.kind);
    expect(report.exitCode, report.result.error).toBe(0);
    expect(report.result.cost_usd).toBe(0.25);
    expect(report.result.budget_exceeded).toBeUndefined();
  });
});

describe("the spend meter", () => {
  const file = path.join("/nonexistent", "spend.json");
  it("adds Claude Code's reported cost per session, prices Codex's tokens with the config's table, and takes the highest source", () => {
    const m = new SpendMeter(
      file,
      { "gpt-x": { input_per_mtok: 2, output_per_mtok: 8 }, default: { input_per_mtok: 1, output_per_mtok: 1 } },
      "gpt-x",
    );
    m.onProgress({ summary: "r", kind: "result", stage: "implement", costUsd: 0.1 }, 1);
    m.onProgress({ summary: "r", kind: "result", stage: "implement", costUsd: 0.3 }, 1); // the session's running total
    m.onProgress({ summary: "r", kind: "result", stage: "verify", costUsd: 0.2 }, 2);
    expect(m.spent.usd).toBeCloseTo(0.5);
    const codex = new SpendMeter(file, { "gpt-x": { input_per_mtok: 2, output_per_mtok: 8 } }, "gpt-x");
    codex.onProgress({ summary: "t", kind: "result", tokens: { input: 100_000, output: 10_000 } }, 1);
    codex.onProgress({ summary: "t", kind: "result", tokens: { input: 100_000, output: 10_000 } }, 1);
    expect(codex.spent).toEqual({ usd: 0.56, tokens: 220_000, split: { input: 200_000, output: 20_000 } });
    expect(codex.over({ usd: 0.5 })).toMatchObject({ limit: { usd: 0.5 } });
    expect(codex.over({ usd: 1, tokens: 300_000 })).toBeUndefined();
    // The proxy's figure counts too: tokens it read, priced by the table.
    const usage = {
      requests: 2,
      inputTokens: 300_000,
      outputTokens: 0,
      cacheCreationTokens: 0,
      cacheReadTokens: 0,
      byModel: { "gpt-x": { inputTokens: 300_000, outputTokens: 0, cacheCreationTokens: 0, cacheReadTokens: 0 } },
    };
    const proxied = new SpendMeter(file, { "gpt-x": { input_per_mtok: 2, output_per_mtok: 8 } }, "gpt-x", () => usage);
    expect(proxied.proxy).toEqual({ requests: 2, input: 300_000, output: 0, usd: 0.6 });
    expect(proxied.spent).toMatchObject({ usd: 0.6, tokens: 300_000 });
    // A model the table does not price, and no default: tokens count, dollars are unknown.
    expect(new SpendMeter(file, {}, "other").price(1, 1)).toBeUndefined();
  });
});
