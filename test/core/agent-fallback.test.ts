/**
 * Agents per task and their fallback (docs/executor.md#agent-fallback): a task runs on its own agent
 * list, else its kind's, else the config's adapter; an attempt its provider stopped hands the next
 * attempt to the next agent at once, without pausing the run; past the last, the run pauses and the
 * first agent goes on after it. The journal records which agent ran each attempt and why it changed.
 */
import { describe, expect, it } from "vitest";
import type { LeafInput } from "../../src/core/inputs.js";
import type { Journal } from "../../src/core/journal.js";
import { outboxProblems } from "../../src/core/outbox-check.js";
import { startRun } from "../../src/core/decide/index.js";
import { agentsOf } from "../../src/core/agents.js";
import { newRun, nodes, sha } from "../helpers/world.js";
import { cfg, feed, status } from "./decide-helpers.js";

const config = cfg({ retry_backoff: { base_seconds: 0, max_seconds: 0 }, agent: { kinds: { refinery: { agent: "gemini" } } } });

/** a (own list claude → codex), b (no list: the config's claude), r (refinery: its kind's gemini). */
function started(): Journal {
  const planNodes = nodes({ a: [], b: [], r: ["a", "b"] });
  planNodes[0]!.agents = ["claude", "codex"];
  return startRun(newRun(planNodes), 0, config).journal;
}

function ran(j: Journal, taskId: string, attempt: number, runId: number): Journal {
  return feed(j, [{ kind: "agent.started", taskId, attempt, workflowRunId: runId }], 1000, config).journal;
}

const limited = (taskId: string, attempt: number, until: number): LeafInput => ({
  kind: "agent.finished",
  taskId,
  attempt,
  exitCode: 1,
  rateLimitedUntil: new Date(until).toISOString(),
  recordSha: sha(`${taskId}/${attempt} record`),
  pushedSha: sha(`${taskId}/${attempt} work`),
});

const dispatchOf = (effects: readonly object[], taskId: string, attempt: number) =>
  (effects as { kind: string; taskId?: string; attempt?: number }[]).find(
    (e) => e.kind === "DispatchAgent" && e.taskId === taskId && e.attempt === attempt,
  ) as
    { context?: { agent?: { adapter: string; switched?: { from: string; reason: string } }; resume?: { session?: unknown } } } | undefined;

describe("agents per task", () => {
  it("each task's first attempt runs on its own list's first agent, else its kind's, else the config's; a dispatch names only another agent than the config's", () => {
    const planNodes = nodes({ a: [], b: [], r: ["a", "b"] });
    planNodes[0]!.agents = ["codex", "claude"];
    const d = startRun(newRun(planNodes), 0, config);
    expect(status(d.journal, "a").attempt?.agent).toBe("codex");
    expect(status(d.journal, "b").attempt?.agent).toBe("claude");
    expect(status(d.journal, "a").agents).toEqual([{ attempt: 1, agent: "codex" }]);
    expect(dispatchOf(d.effects, "a", 1)?.context?.agent).toEqual({ adapter: "codex" });
    expect(dispatchOf(d.effects, "b", 1)?.context?.agent).toBeUndefined();
    expect(d.events.find((e) => e.type === "task.started" && e.taskId === "a")?.data).toMatchObject({ agent: "codex" });
    expect(outboxProblems(d.journal, config)).toEqual([]);
  });
});

describe("agent fallback", () => {
  it("a usage limit on the first agent sends the next attempt to the second at once, on the same branch, with no pause and no retry counted", () => {
    const j = ran(started(), "a", 1, 101);
    const r = feed(j, [limited("a", 1, 60_000), { kind: "tick" }], 2000, config);
    const t = status(r.journal, "a");
    expect(r.journal.pause.usageLimitUntil).toBeUndefined();
    expect(r.events.map((e) => e.type)).not.toContain("run.paused");
    expect(t).toMatchObject({ status: "RUNNING", attempts: 2, retries: 0, fallback: 1 });
    expect(t.attempt).toMatchObject({ agent: "codex", branch: "forge/run-1/a/1", resumed: { reason: "usage_limit", fromAttempt: 1 } });
    expect(t.agents).toEqual([
      { attempt: 1, agent: "claude" },
      {
        attempt: 2,
        agent: "codex",
        why: expect.stringMatching(/^after claude: claude stopped by its usage limit until .*; codex takes the next attempt$/),
      },
    ]);
    const retried = r.events.find((e) => e.type === "task.retried")!;
    expect(retried.data).toMatchObject({ attemptId: 2, agent: { from: "claude", to: "codex" } });
    expect((retried.data as { notBefore?: string }).notBefore).toBeUndefined();
    const dispatch = dispatchOf(r.effects, "a", 2)!;
    expect(dispatch.context?.agent).toMatchObject({ adapter: "codex", switched: { from: "claude" } });
    // Claude's session is not handed to Codex: the work goes on, the session starts fresh.
    expect(dispatch.context?.resume?.session).toBeUndefined();
    expect(outboxProblems(r.journal, config)).toEqual([]);
  });

  it("past the last agent of the list the run pauses until the limit ends, and the first agent goes on after it", () => {
    let j = ran(started(), "a", 1, 101);
    j = feed(j, [limited("a", 1, 60_000), { kind: "tick" }], 2000, config).journal;
    j = ran(j, "a", 2, 202);
    const r = feed(j, [limited("a", 2, 90_000)], 3000, config);
    expect(r.journal.pause.usageLimitUntil).toBe(new Date(90_000).toISOString());
    expect(r.events.map((e) => e.type)).toContain("run.paused");
    expect(status(r.journal, "a")).toMatchObject({ status: "PENDING", next: { switched: { from: "codex" } } });
    expect(status(r.journal, "a").fallback).toBeUndefined();
    const after = feed(r.journal, [{ kind: "tick" }], 91_000, config);
    const t = status(after.journal, "a");
    expect(t.attempt?.agent).toBe("claude");
    expect(t.agents?.map((x) => x.agent)).toEqual(["claude", "codex", "claude"]);
    expect(t.agents?.[2]?.why).toMatch(/every agent of the list was stopped, claude goes on after the pause/);
  });

  it("a task with one agent pauses the run as before; a refinery runs on its kind's agent", () => {
    const j = ran(started(), "b", 1, 111);
    const r = feed(j, [limited("b", 1, 60_000)], 2000, config);
    expect(r.journal.pause.usageLimitUntil).toBeDefined();
    expect(status(r.journal, "b").next?.switched).toBeUndefined();
    expect(agentsOf({ agentType: "refinery" }, config.agent)).toEqual({ agents: ["gemini"], source: "kind" });
    expect(agentsOf({ agentType: "refinery", agents: ["codex"] }, config.agent)).toEqual({ agents: ["codex"], source: "task" });
  });

  it("the App's outbox check refuses a dispatch naming another agent than the journal gave the attempt", () => {
    const d = startRun(newRun(nodes({ a: [] })), 0, cfg({ agent: { kinds: { "2": { agent: "codex" } } } }));
    const forged = structuredClone(d.journal);
    const e = forged.outbox.find((x) => x.kind === "DispatchAgent") as { context?: { agent?: { adapter: string } } };
    e.context = { agent: { adapter: "gemini" } };
    expect(outboxProblems(forged, cfg({ agent: { kinds: { "2": { agent: "codex" } } } })).join("\n")).toMatch(
      /names the agent gemini, not the attempt's \(codex\)/,
    );
  });
});

describe("the tracker", () => {
  it("names each task's agents in a run on more than one, the change of agent included; a run on one names none", async () => {
    const { renderTracker } = await import("../../src/app/render.js");
    const repo = { owner: "o", repo: "r", webUrl: "https://github.com" };
    let j = ran(started(), "a", 1, 101);
    j = feed(j, [limited("a", 1, 60_000), { kind: "tick" }], 2000, config).journal;
    const body = renderTracker(j, [], { checkRuns: {} }, repo, 0);
    expect(body).toMatch(/\| `a` [^\n]*\| agent claude → codex; /);
    expect(body).toMatch(/\| `b` [^\n]*\| agent claude \|/);
    const single = startRun(newRun(nodes({ a: [], b: [] })), 0, cfg()).journal;
    expect(renderTracker(single, [], { checkRuns: {} }, repo, 0)).not.toMatch(/\| agent /);
  });
});
