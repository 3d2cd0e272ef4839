// The cap on sub-agents per job (src/agent/sub-agents.ts, docs/runner.md#sub-agent-cap): one count
// for every depth and every stage of the job; a spawn past it is refused with exit 2, error code
// `sub_agents_exceeded` and a message saying so, and the refusal is kept for the attempt's record.
// With a real `forge spawn` from the agent's shell, and a grandchild's spawn counted with its parent's.
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { HierarchyService } from "../../src/agent/hierarchy-service.js";
import { spawnAgent } from "../../src/agent/spawn/index.js";
import { DEFAULT_MAX_SUB_AGENTS, SubAgentCap } from "../../src/agent/sub-agents.js";
import { defaultConfig } from "../../src/core/schemas/config.js";
import { cleanupTempDirs, forgeCliFromSource, tempDir } from "./helpers.js";

afterEach(cleanupTempDirs);

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
const env = () => ({ PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" });

describe("SubAgentCap", () => {
  it("gives `limit` places, then refuses with a message naming the cap, and keeps the refusals", () => {
    const cap = new SubAgentCap(2, () => Date.parse("2026-11-27T12:00:00Z"));
    const told: string[] = [];
    cap.onRefusal((r) => told.push(r.message));
    expect(cap.take(2, "1")).toBeUndefined();
    expect(cap.take(3, "1")).toBeUndefined();
    const refused = cap.take(2, "2");
    expect(refused).toBe(
      "this job has already started 2 sub-agents, its cap (agent.max_sub_agents: 2, counted across every depth); no more may be spawned — finish the work in this session, or stop and say what is left",
    );
    expect(told).toEqual([refused]);
    expect(cap.summary()).toEqual({
      limit: 2,
      spawned: 2,
      refused: 1,
      refusals: [{ at: "2026-11-27T12:00:00.000Z", agentType: "2", depth: 2, message: refused }],
    });
  });

  it("defaults to the design's hard limit of 10 agents in total, as the config does; 0 allows none", () => {
    expect(DEFAULT_MAX_SUB_AGENTS).toBe(10);
    expect(new SubAgentCap().limit).toBe(10);
    expect(defaultConfig().agent.max_sub_agents).toBe(10);
    expect(new SubAgentCap(0).take(2)).toMatch(/already started 0 sub-agents/);
    expect(() => new SubAgentCap(-1)).toThrow(/whole number/);
  });
});

describe("the hierarchy service counts against the job's cap", () => {
  it("refuses the spawn past the cap at any depth; a spawn refused for its type or depth takes no place", async () => {
    const cap = new SubAgentCap(2);
    const s = await HierarchyService.start(cap);
    try {
      const top = s.issue({ agentType: "3", depth: 1, maxDepth: 3, traceId: "00112233aabbccdd" });
      const child = s.decide({ op: "spawn", ticket: top, agentType: "2" });
      if (!child.ok) throw new Error(child.message);
      // Refused by the hierarchy and by the depth: no place taken.
      expect(s.decide({ op: "spawn", ticket: child.ticket, agentType: "3" })).toMatchObject({ ok: false, code: "spawn_not_allowed" });
      const grandchild = s.decide({ op: "spawn", ticket: child.ticket, agentType: "1" });
      if (!grandchild.ok) throw new Error(grandchild.message);
      expect(s.decide({ op: "spawn", ticket: grandchild.ticket, agentType: "1" })).toMatchObject({ ok: false });
      expect(cap.spawned).toBe(2);
      // The third, from the top: refused for the count, though depth and type allow it.
      expect(s.decide({ op: "spawn", ticket: top, agentType: "1" })).toMatchObject({
        ok: false,
        code: "sub_agents_exceeded",
        depth: 2,
        maxDepth: 3,
        message: expect.stringContaining("agent.max_sub_agents: 2"),
      });
      expect(cap.summary()).toMatchObject({ spawned: 2, refused: 1 });
    } finally {
      await s.close();
    }
  });
});

describe("a job's sub-agents, through `forge spawn`", () => {
  /** A command agent of type 3 whose shell runs `script`; the `forge` on its PATH is Forge's. */
  async function top(cap: SubAgentCap, script: string, dir: string) {
    return spawnAgent({
      adapter: "command",
      command: "sh",
      args: ["-c", script],
      agentType: "3",
      prompt: "work",
      cwd: dir,
      sessionDir: path.join(dir, `session-${Math.random().toString(36).slice(2)}`),
      maxDepth: 3,
      env: env(),
      forgeCli: forgeCliFromSource(),
      subAgents: cap,
    });
  }
  const spawnCmd = (type: string, command: string, out: string) =>
    `forge spawn --agent-type ${type} --adapter command --command sh --arg -c --arg ${q(command)} --prompt 'sub work' --output-format json > ${q(out)}; echo $? >> ${q(out + ".code")}`;

  it("counts a grandchild with its parent, across two top-level sessions of the job, and refuses the next one with exit 2", async () => {
    const dir = tempDir("forge-cap-");
    const cap = new SubAgentCap(3);
    const f = (n: string) => path.join(dir, n);
    // Stage 1: a type 2 child that spawns a type 1 grandchild (two places).
    const s1 = await top(cap, spawnCmd("2", spawnCmd("1", `touch ${q(f("grandchild-ran"))}`, f("grandchild.json")), f("child.json")), dir);
    expect(s1.exitCode, s1.error?.message).toBe(0);
    expect(readFileSync(f("grandchild-ran"), "utf8")).toBe("");
    expect(cap.spawned).toBe(2);
    // Stage 2, another top-level session of the same job: one place left, then refused.
    const s2 = await top(
      cap,
      `${spawnCmd("1", `touch ${q(f("third-ran"))}`, f("third.json"))}; ${spawnCmd("1", `touch ${q(f("fourth-ran"))}`, f("fourth.json"))}`,
      dir,
    );
    expect(s2.exitCode, s2.error?.message).toBe(0);
    expect(readFileSync(f("third-ran"), "utf8")).toBe("");
    expect(readFileSync(f("third.json.code"), "utf8").trim()).toBe("0");
    expect(() => readFileSync(f("fourth-ran"))).toThrow();
    expect(readFileSync(f("fourth.json.code"), "utf8").trim()).toBe("2");
    const refused = JSON.parse(readFileSync(f("fourth.json"), "utf8")) as { exit_code: number; error: { code: string; message: string } };
    expect(refused).toMatchObject({ exit_code: 2, error: { code: "sub_agents_exceeded" } });
    expect(refused.error.message).toContain("already started 3 sub-agents, its cap (agent.max_sub_agents: 3");
    expect(cap.summary()).toMatchObject({ limit: 3, spawned: 3, refused: 1, refusals: [{ agentType: "1", depth: 2 }] });
  }, 90_000);

  it("counts Forge's own spawns on an agent's behalf (type 3's subtasks) against the same cap", async () => {
    const dir = tempDir("forge-cap-caller-");
    const cap = new SubAgentCap(1);
    const sub = (name: string) =>
      spawnAgent({
        adapter: "command",
        command: "sh",
        args: ["-c", "true"],
        agentType: "1",
        caller: "3",
        prompt: "subtask",
        cwd: dir,
        sessionDir: path.join(dir, name),
        env: env(),
        forgeCli: false,
        subAgents: cap,
      });
    expect((await sub("a")).exitCode).toBe(0);
    const second = await sub("b");
    expect(second.exitCode).toBe(2);
    expect(second.error).toMatchObject({ code: "sub_agents_exceeded", message: expect.stringContaining("agent.max_sub_agents: 1") });
    expect(cap.summary()).toMatchObject({ spawned: 1, refused: 1 });
  }, 30_000);
});
