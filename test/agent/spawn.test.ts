// Layer 0 with the command adapter and the fake agent: depth budget, hierarchy, trace id through a
// real child `forge spawn`, environment hygiene, exit codes, report files, timeouts, cancellation,
// rate-limit backoff, masking, the signal file and the events file.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { afterEach, describe, expect, it } from "vitest";
import { explicitExitCode, spawnAgent } from "../../src/agent/spawn/index.js";
import type { ProgressEvent } from "../../src/agent/types.js";
import { cleanupTempDirs, FAKE_AGENT, fakeWorld, forgeCliFromSource } from "./helpers.js";

afterEach(cleanupTempDirs);

describe("spawnAgent — depth budget and hierarchy", () => {
  it("refuses at once with exit 2 when the depth budget is spent, running nothing", async () => {
    const w = fakeWorld({ "*": { exit: 0 } });
    const r = await spawnAgent(w.options({ maxDepth: 2, env: { PATH: process.env.PATH, FORGE_SPAWN_DEPTH: "2" } }));
    expect(r).toMatchObject({ exitCode: 2, status: "depth_exceeded", depth: 3, maxDepth: 2, error: { code: "depth_exceeded" } });
    expect(existsSync(path.join(w.state, "calls.log"))).toBe(false);
    expect(r.signalPath).toMatch(/\.signals\/exec-spawn\.fail$/);
  });

  it("never lets a child raise the budget an ancestor set", async () => {
    const w = fakeWorld({ "*": { exit: 0 } });
    const r = await spawnAgent(w.options({ maxDepth: 9, env: { PATH: process.env.PATH, FORGE_SPAWN_DEPTH: "1", FORGE_MAX_DEPTH: "1" } }));
    expect(r).toMatchObject({ exitCode: 2, maxDepth: 1 });
  });

  it("enforces the hierarchy for a caller Forge's own code names; FORGE_AGENT_TYPE alone is not believed", async () => {
    const w = fakeWorld({ "*": { exit: 0 } });
    const env = { PATH: process.env.PATH, FORGE_SPAWN_DEPTH: "1" };
    expect((await spawnAgent(w.options({ env, caller: "1", agentType: "1" }))).error?.code).toBe("spawn_not_allowed");
    expect((await spawnAgent(w.options({ env, caller: "2", agentType: "2" }))).exitCode).toBe(2);
    expect((await spawnAgent(w.options({ env, caller: "2" }))).error?.message).toMatch(/must name the type/);
    const ok = await spawnAgent(w.options({ env, caller: "3", agentType: "2" }));
    expect(ok).toMatchObject({ exitCode: 0, depth: 2 });
    expect(w.calls()).toHaveLength(1);
    // A process claiming a type through the environment, without the ticket Forge gives its agents.
    const claimed = await spawnAgent(w.options({ env: { ...env, FORGE_AGENT_TYPE: "refinery" }, agentType: "3" }));
    expect(claimed).toMatchObject({ exitCode: 2, error: { code: "spawn_not_allowed" } });
    expect(claimed.error?.message).toMatch(/FORGE_AGENT_TYPE=refinery is set but this process carries no hierarchy ticket/);
    expect(w.calls()).toHaveLength(1);
  });

  it("carries one trace id and a growing depth through a real child `forge spawn`, and spends the budget", async () => {
    const w = fakeWorld();
    const childArgs = (type: string) => [
      "spawn",
      "--adapter",
      "command",
      "--command",
      process.execPath,
      "--arg",
      FAKE_AGENT,
      "--agent-type",
      type,
      "--pass-env",
      "FAKE_PLAN,FAKE_STATE",
      "--output-format",
      "json",
      "--prompt",
      "child work",
      "--name",
      "child",
    ];
    w.setPlan({ "2:top": { spawn: childArgs("1"), final: "FORGE_EXIT=0" }, "1:child": { exit: 0, print: ["child ran"] } });
    const r = await spawnAgent(w.options({ name: "top", agentType: "2", maxDepth: 3, forgeCli: forgeCliFromSource() }));
    expect(r.exitCode).toBe(0);
    const calls = w.calls();
    expect(calls.map((c) => [c.name, c.depth, c.maxDepth])).toEqual([
      ["top", "1", "3"],
      ["child", "2", "3"],
    ]);
    expect(calls[0]!.trace).toMatch(/^[0-9a-f]{16}$/);
    expect(calls[1]!.trace).toBe(calls[0]!.trace);
    expect(calls[1]!.trace).toBe(r.traceId);
    const child = JSON.parse(readFileSync(path.join(w.state, "child-top-0.json"), "utf8")) as Record<string, unknown>;
    expect(child).toMatchObject({ status: "success", exit_code: 0, depth: 2, trace_id: r.traceId, agent_type: "1" });
    // The child's session lives under the parent's, so one artifact holds both.
    expect(String(child.session_dir).startsWith(path.join(r.sessionDir, "sub"))).toBe(true);

    // Same chain with a budget of 1: the agent runs, its `forge spawn` answers exit 2 without running anything.
    const w2 = fakeWorld({ "2:top": { spawn: childArgs("1") } });
    const r2 = await spawnAgent(w2.options({ name: "top", agentType: "2", maxDepth: 1, forgeCli: forgeCliFromSource() }));
    expect(r2.exitCode).toBe(0);
    expect(w2.calls()).toHaveLength(1);
    expect(JSON.parse(readFileSync(path.join(w2.state, "child-top-0.json"), "utf8"))).toMatchObject({
      exit_code: 2,
      status: "depth_exceeded",
    });

    // A type 1 agent may not spawn at all.
    const w3 = fakeWorld({ "1:top": { spawn: childArgs("1") } });
    await spawnAgent(w3.options({ name: "top", agentType: "1", forgeCli: forgeCliFromSource() }));
    expect(JSON.parse(readFileSync(path.join(w3.state, "child-top-0.json"), "utf8"))).toMatchObject({
      exit_code: 2,
      error: { code: "spawn_not_allowed" },
    });
  }, 60_000);

  it("keeps a trace id the caller already has", async () => {
    const w = fakeWorld({ "*": { exit: 0 } });
    const r = await spawnAgent(w.options({ env: { PATH: process.env.PATH, FORGE_TRACE_ID: "00112233aabbccdd" } }));
    expect(r.traceId).toBe("00112233aabbccdd");
    expect(w.calls()[0]!.trace).toBe("00112233aabbccdd");
  });
});

describe("spawnAgent — environment, exit codes and reports", () => {
  it("gives a command agent Forge's variables but no GitHub token and no model key", async () => {
    const w = fakeWorld({ "*": { exit: 0 } });
    await spawnAgent(w.options());
    expect(w.calls()[0]).toMatchObject({ githubToken: false, anthropicKey: false, hasPrompt: true, depth: "1" });
    await spawnAgent(w.options({ passEnv: ["ANTHROPIC_API_KEY", "GITHUB_TOKEN"] }));
    expect(w.calls()[1]).toMatchObject({ githubToken: false, anthropicKey: true });
  });

  it("passes a command agent's Forge exit code through, and maps unknown codes to 1", async () => {
    for (const [code, expected] of [
      [0, 0],
      [3, 3],
      [10, 10],
      [11, 11],
      [12, 12],
      [7, 1],
    ] as const) {
      const w = fakeWorld({ "*": { exit: code } });
      const r = await spawnAgent(w.options());
      expect(r.exitCode, `exit ${code}`).toBe(expected);
    }
  });

  it("reads FORGE_EXIT from the final message and notices the report files written", async () => {
    expect(explicitExitCode("all good\nFORGE_EXIT=12\n")).toBe(12);
    expect(explicitExitCode("FORGE_EXIT=4")).toBeUndefined();
    expect(explicitExitCode("I will print FORGE_EXIT=0 later")).toBeUndefined();
    const w = fakeWorld({ "*": { question: "Which database?", final: "FORGE_EXIT=3", exit: 0 } });
    const r = await spawnAgent(w.options());
    expect(r.exitCode).toBe(3);
    expect(r.reports.question).toBe(path.join(r.sessionDir, "question.md"));
    expect(readFileSync(r.reports.question!, "utf8")).toBe("Which database?\n");
  });

  it("masks secrets in the transcript, the events and the result, and writes a YAML signal atomically", async () => {
    const w = fakeWorld({ "*": { print: ["token is ghs_abcdefghijklmnopqrstuvwxyz012345 ok", "key sk-ant-test-key-123456"], exit: 0 } });
    const events: ProgressEvent[] = [];
    const r = await spawnAgent(w.options({ name: "implement", onProgress: (e) => events.push(e) }));
    const transcript = readFileSync(r.transcriptPath, "utf8");
    expect(transcript).toContain("token is *** ok");
    expect(transcript).not.toContain("ghs_abcdefghijklmnopqrstuvwxyz012345");
    expect(transcript).not.toContain("sk-ant-test-key-123456");
    expect(r.result).not.toContain("sk-ant");
    const ndjson = readFileSync(r.eventsPath, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as ProgressEvent);
    expect(ndjson.map((e) => e.kind)).toEqual(["start", "output", "output", "exit"]);
    expect(ndjson).toEqual(events);
    expect(ndjson.every((e) => e.traceId === r.traceId && e.depth === 1 && e.name === "implement")).toBe(true);
    expect(JSON.stringify(ndjson)).not.toContain("ghs_");
    const signal = parseYaml(readFileSync(r.signalPath!, "utf8")) as Record<string, unknown>;
    expect(path.basename(r.signalPath!)).toBe("exec-implement.done");
    expect(signal).toMatchObject({ status: "success", layer: "exec", name: "implement", trace_id: r.traceId, version: 1, exit_code: 0 });
    expect(typeof signal.elapsed_seconds).toBe("number");
    expect(Date.parse(String(signal.completed_at))).toBeGreaterThanOrEqual(Date.parse(String(signal.created_at)));
  });
});

describe("spawnAgent — timeouts, cancellation and rate limits", () => {
  it("kills an agent that stops producing output (idle) with exit 21, keeping its partial work", async () => {
    const w = fakeWorld({ "*": { write: {}, stall: true } });
    w.setPlan({ "*": { write: { [path.join(w.repo, "partial.txt")]: "half\n" }, stall: true } });
    const t0 = Date.now();
    const r = await spawnAgent(w.options({ idleTimeoutMs: 700 }));
    const took = Date.now() - t0;
    expect(r).toMatchObject({ exitCode: 21, status: "timeout", timedOut: "idle", error: { code: "idle_timeout" } });
    expect(readFileSync(path.join(w.repo, "partial.txt"), "utf8")).toBe("half\n");
    expect(took).toBeGreaterThanOrEqual(700);
    expect(took).toBeLessThan(4_000);
  });

  it("stretches the idle limit while a tool call runs (a long build prints nothing to the agent's stream)", async () => {
    const toolUse = JSON.stringify({
      type: "assistant",
      message: { id: "m1", content: [{ type: "tool_use", id: "tu1", name: "Bash", input: { command: "npm test" } }] },
    });
    const toolResult = JSON.stringify({ type: "user", message: { content: [{ type: "tool_result", tool_use_id: "tu1", content: "ok" }] } });
    const w = fakeWorld({ "*": { print: [toolUse], sleep: 1_200, final: toolResult } });
    const ok = await spawnAgent(w.options({ idleTimeoutMs: 400, toolIdleTimeoutMs: 5_000 }));
    expect(ok).toMatchObject({ exitCode: 0 });
    const killed = await spawnAgent(w.options({ idleTimeoutMs: 400, toolIdleTimeoutMs: 600, sessionDir: path.join(w.dir, "s2") }));
    expect(killed).toMatchObject({ exitCode: 21, timedOut: "idle" });
  });

  it("stops an agent at the wall-clock limit even while it talks", async () => {
    const w = fakeWorld({ "*": { print: ["working"], sleep: 10_000 } });
    const r = await spawnAgent(w.options({ timeoutMs: 600, idleTimeoutMs: 5_000 }));
    expect(r).toMatchObject({ exitCode: 21, timedOut: "wall", error: { code: "timeout" } });
    expect(r.durationMs).toBeLessThan(4_000);
  });

  it("ends with 20 when cancelled", async () => {
    const w = fakeWorld({ "*": { stall: true } });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 300);
    const r = await spawnAgent(w.options({ signal: ac.signal }));
    expect(r).toMatchObject({ exitCode: 20, status: "interrupted" });
  });

  it("fails cleanly when the executable does not exist", async () => {
    const w = fakeWorld();
    const r = await spawnAgent(w.options({ command: path.join(w.dir, "no-such-agent"), args: [] }));
    expect(r).toMatchObject({ exitCode: 1, error: { code: "spawn_failed" } });
    expect(r.error!.message).toMatch(/no-such-agent: no such command \(not on PATH\) \(spawn .* ENOENT\)$/);
    // An agent CLI Forge knows says how to install it.
    const claude = await spawnAgent(w.options({ command: path.join(w.dir, "claude"), args: [] }));
    expect(claude.error!.message).toMatch(
      /claude: no such command \(not on PATH\); install Claude Code: npm i -g @anthropic-ai\/claude-code \(/,
    );
  });

  it("backs off and retries inside the job when the limit ends before the deadline", async () => {
    const w = fakeWorld({ "*": [{ printErr: ["API Error: 529 overloaded_error"], exit: 1 }, { exit: 0 }] });
    const sleeps: number[] = [];
    const r = await spawnAgent(w.options({ sleep: async (ms) => void sleeps.push(ms), random: () => 0, deadline: Date.now() + 3_600_000 }));
    expect(r).toMatchObject({ exitCode: 0, rateLimitRetries: 1 });
    expect(sleeps).toEqual([5_000]);
    expect(w.calls()).toHaveLength(2);
  });

  it("returns the reset time when a usage limit outlasts the job, without counting it as a failure", async () => {
    const w = fakeWorld({ "*": { print: ["Claude AI usage limit reached, resets at 3pm (America/New_York)"], exit: 1 } });
    const sleeps: number[] = [];
    const r = await spawnAgent(w.options({ sleep: async (ms) => void sleeps.push(ms), random: () => 0, deadline: Date.now() + 60_000 }));
    expect(sleeps).toEqual([]);
    expect(r.exitCode).toBe(1);
    expect(r.error?.code).toBe("rate_limited");
    const until = new Date(r.rateLimitedUntil!);
    const ny = new Intl.DateTimeFormat("en-US", {
      timeZone: "America/New_York",
      hour: "numeric",
      minute: "numeric",
      hourCycle: "h23",
    }).format(until);
    expect(ny).toBe("15:00");
    expect(until.getTime()).toBeGreaterThan(Date.now());
    expect(readFileSync(r.eventsPath, "utf8")).toContain('"kind":"rate_limit"');
  });
});
