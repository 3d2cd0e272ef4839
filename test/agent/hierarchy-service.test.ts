// The hierarchy of sub-agents is what Forge recorded when it started each agent, not what the
// agent's environment says: agents that rewrite FORGE_AGENT_TYPE, FORGE_SPAWN_DEPTH or
// FORGE_MAX_DEPTH, drop or make up their ticket, are refused with exit 2. A real `forge spawn` from
// the agent's shell.
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { HierarchyService } from "../../src/agent/hierarchy-service.js";
import { spawnAgent } from "../../src/agent/spawn/index.js";
import type { AgentKind } from "../../src/agent/types.js";
import { cleanupTempDirs, forgeCliFromSource, tempDir } from "./helpers.js";

afterEach(cleanupTempDirs);

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

interface ChildAnswer {
  code: number;
  json: {
    exit_code: number;
    status: string;
    depth: number;
    max_depth: number;
    trace_id: string;
    error?: { code: string; message: string };
  };
}

/** A top-level agent of `type` whose shell runs `<prefix> forge spawn <args>`; returns what `forge spawn` answered. */
async function agentSpawning(
  type: AgentKind,
  prefix: string,
  args: string,
  maxDepth = 3,
): Promise<ChildAnswer & { ran: boolean; traceId: string }> {
  const dir = tempDir("forge-hier-");
  const out = path.join(dir, "child.json");
  const code = path.join(dir, "code");
  const ran = path.join(dir, "ran");
  const script = `${prefix} forge spawn --adapter command --command sh --arg -c --arg ${q(`touch ${q(ran)}`)} --prompt 'sub work' --output-format json ${args} > ${q(out)}; echo $? > ${q(code)}`;
  const r = await spawnAgent({
    adapter: "command",
    command: "sh",
    args: ["-c", script],
    agentType: type,
    prompt: "work",
    cwd: dir,
    sessionDir: path.join(dir, "session"),
    maxDepth,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" },
    forgeCli: forgeCliFromSource(),
  });
  expect(r.exitCode, r.error?.message).toBe(0);
  let didRun = false;
  try {
    readFileSync(ran);
    didRun = true;
  } catch {
    didRun = false;
  }
  return {
    code: Number(readFileSync(code, "utf8")),
    json: JSON.parse(readFileSync(out, "utf8")) as ChildAnswer["json"],
    ran: didRun,
    traceId: r.traceId,
  };
}

describe("the hierarchy comes from Forge's records, not the agent's environment", () => {
  it("refuses, with exit 2 and a clear message, a type 1 agent that sets FORGE_AGENT_TYPE=captain (or refinery) to escape", async () => {
    for (const claimed of ["captain", "refinery"]) {
      const a = await agentSpawning("1", `FORGE_AGENT_TYPE=${claimed}`, "--agent-type 1");
      expect(a.code).toBe(2);
      expect(a.ran).toBe(false);
      expect(a.json).toMatchObject({ exit_code: 2, error: { code: "spawn_not_allowed" } });
      expect(a.json.error!.message).toBe(
        `an agent of type 1 may not spawn type 1 (FORGE_AGENT_TYPE says ${claimed}, but Forge started this agent as type 1, and what Forge recorded decides); it may spawn no sub-agents`,
      );
    }
  }, 60_000);

  it("a type 2 agent claiming to be a refinery still may not spawn type 3, while its own sub-agent (type 1) runs", async () => {
    const refused = await agentSpawning("2", "FORGE_AGENT_TYPE=refinery", "--agent-type 3");
    expect(refused.code).toBe(2);
    expect(refused.ran).toBe(false);
    expect(refused.json.error!.message).toMatch(/^an agent of type 2 may not spawn type 3 .*it may spawn 1$/);
    const allowed = await agentSpawning("2", "", "--agent-type 1");
    expect(allowed.code).toBe(0);
    expect(allowed.ran).toBe(true);
    expect(allowed.json).toMatchObject({ exit_code: 0, depth: 2, max_depth: 3, trace_id: allowed.traceId });
  }, 60_000);

  it("an agent cannot reset its depth or raise its budget through the environment", async () => {
    const a = await agentSpawning("3", "FORGE_SPAWN_DEPTH=0 FORGE_MAX_DEPTH=9", "--agent-type 2 --max-depth 9", 1);
    expect(a.code).toBe(2);
    expect(a.ran).toBe(false);
    expect(a.json).toMatchObject({
      exit_code: 2,
      status: "depth_exceeded",
      depth: 2,
      max_depth: 1,
      error: { code: "depth_exceeded", message: "spawn depth 2 exceeds the budget of 1" },
    });
  }, 60_000);

  it("a made-up ticket, or none with a claimed type, is refused", async () => {
    const forged = await agentSpawning("3", `FORGE_HIERARCHY_TICKET=${"0".repeat(64)}`, "--agent-type 1");
    expect(forged.code).toBe(2);
    expect(forged.ran).toBe(false);
    expect(forged.json.error!.message).toMatch(/hierarchy ticket \(FORGE_HIERARCHY_TICKET\) is not one Forge issued/);
    const dropped = await agentSpawning(
      "1",
      "env -u FORGE_HIERARCHY_TICKET -u FORGE_HIERARCHY_SOCKET FORGE_AGENT_TYPE=refinery",
      "--agent-type 3",
    );
    expect(dropped.code).toBe(2);
    expect(dropped.ran).toBe(false);
    expect(dropped.json.error!.message).toMatch(/FORGE_AGENT_TYPE=refinery is set but this process carries no hierarchy ticket/);
  }, 60_000);
});

describe("HierarchyService", () => {
  it("issues a child's ticket from the caller's record: type, depth, budget, trace id", async () => {
    const s = await HierarchyService.start();
    try {
      const top = s.issue({ agentType: "3", depth: 1, maxDepth: 3, traceId: "00112233aabbccdd" });
      const child = s.decide({ op: "spawn", ticket: top, agentType: "2", maxDepth: 9 });
      expect(child).toMatchObject({
        ok: true,
        agentType: "2",
        depth: 2,
        maxDepth: 3,
        traceId: "00112233aabbccdd",
        caller: { agentType: "3", allowed: ["1", "2"] },
      });
      if (!child.ok) throw new Error(child.message);
      expect(child.ticket).toMatch(/^[0-9a-f]{64}$/);
      expect(s.decide({ op: "spawn", ticket: child.ticket, agentType: "2" })).toMatchObject({ ok: false, code: "spawn_not_allowed" });
      const grandchild = s.decide({ op: "spawn", ticket: child.ticket, agentType: "1" });
      expect(grandchild).toMatchObject({ ok: true, depth: 3, maxDepth: 3 });
      if (!grandchild.ok) throw new Error(grandchild.message);
      expect(s.decide({ op: "spawn", ticket: grandchild.ticket, agentType: "1" })).toMatchObject({ ok: false, code: "spawn_not_allowed" });
    } finally {
      await s.close();
    }
  });
});
