/**
 * `forge demo --agent mixed` in memory (its real-CLI run is test/demo/demo-mixed.test.ts): the config
 * it commits is a valid one putting each kind on its agents; the usage limit it scripts is one the
 * claude adapter reads as a reset time (so the task falls back instead of waiting); the task it
 * limits; the Claude Code script's turns in Codex's tools; the `## Agent` section and the tracker's
 * row it reads back; the summary's agent column.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { agentsOf } from "../../src/core/agents.js";
import { forgeConfigSchema } from "../../src/core/schemas/config.js";
import { detectRateLimit } from "../../src/agent/rate-limit.js";
import { codexTurn } from "../../src/demo/codex-script.js";
import { agentSectionOf, MIXED_KINDS, mixedAgentConfig, trackerRowOf, usageLimitedTask, usageLimitMessage } from "../../src/demo/mixed.js";
import { loadPlanStages, unservedAgents } from "../../src/demo/plan-stages.js";
import { DEFAULT_PLAN } from "../../src/demo/run.js";
import { summary } from "../../src/demo/summary.js";
import { DEMO_SERVES, type DemoResult } from "../../src/demo/types.js";

describe("forge demo --agent mixed", () => {
  it("commits a valid config: type 1 on claude then codex, type 2 on codex, refineries on gemini, the rest on claude", () => {
    const config = forgeConfigSchema.parse(parseYaml(mixedAgentConfig("auto")));
    expect(config.agent.adapter).toBe("claude");
    expect(agentsOf({ agentType: "1" }, config.agent).agents).toEqual(["claude", "codex"]);
    expect(agentsOf({ agentType: "2" }, config.agent).agents).toEqual(["codex"]);
    expect(agentsOf({ agentType: "refinery" }, config.agent).agents).toEqual(["gemini"]);
    expect(agentsOf({ agentType: "3" }, config.agent).agents).toEqual(["claude"]);
    expect(Object.keys(MIXED_KINDS).sort()).toEqual(["1", "2", "refinery"]);
  });

  it("scripts a usage limit the claude adapter reads as a reset hours away, not a wait", () => {
    const now = new Date("2026-11-28T21:37:00Z");
    const text = `API Error: Request rejected (429) · ${usageLimitMessage(now)}`;
    expect(usageLimitMessage(now)).toBe("Claude AI usage limit reached, resets at 02:00 (UTC)");
    const limit = detectRateLimit(text, { now });
    expect(limit).toMatchObject({ kind: "usage_limit", resetAt: new Date("2026-11-29T02:00:00Z") });
  });

  it("limits the first type-1 task with a dependency: textkit's case", async () => {
    const stages = await loadPlanStages(DEFAULT_PLAN);
    expect(usageLimitedTask(stages)).toBe("case");
    const wordfreq = await loadPlanStages(path.join(path.dirname(DEFAULT_PLAN), "wordfreq"));
    const limited = usageLimitedTask(wordfreq);
    expect(wordfreq.dag.nodes.find((n) => n.id === limited)).toMatchObject({ agentType: "1" });
  });

  it("refuses a plan whose task names an agent the chosen --agent serves no model to", async () => {
    const tmp = mkdtempSync(path.join(tmpdir(), "forge-demo-agents-"));
    // The folder's name is the plan's id.
    const dir = path.join(tmp, "wordfreq");
    try {
      cpSync(path.join(path.dirname(DEFAULT_PLAN), "wordfreq"), dir, { recursive: true });
      expect(unservedAgents(await loadPlanStages(dir), DEMO_SERVES.claude)).toBeUndefined();
      const file = path.join(dir, "tasks", "count.md");
      writeFileSync(
        file,
        readFileSync(file, "utf8").replace("estimated_complexity: small\n", "estimated_complexity: small\nagent: [claude, codex]\n"),
      );
      const stages = await loadPlanStages(dir);
      expect(stages.taskAgents).toEqual({ count: ["claude", "codex"] });
      expect(unservedAgents(stages, DEMO_SERVES.claude)).toBe("count names claude, codex");
      expect(unservedAgents(stages, DEMO_SERVES.scripted)).toBe("count names claude, codex");
      expect(unservedAgents(stages, DEMO_SERVES.mixed)).toBeUndefined();
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it("gives Codex the Claude Code script's turns: writes and edits as one apply_patch, reads and commands as exec_command", () => {
    const turn = codexTurn({
      text: "Writing.",
      toolCalls: [
        { name: "Read", input: { file_path: "/w/it's.js" } },
        { name: "Write", input: { file_path: "/w/a.js", content: "export const a = 1;\n" } },
        { name: "Edit", input: { file_path: "/w/b.js", old_string: "x\ny", new_string: "// note\nx\ny" } },
        { name: "Bash", input: { command: "rm -- '/w/c.wip'" } },
      ],
    });
    expect(turn).toEqual({
      text: "Writing.",
      toolCalls: [
        { name: "exec_command", arguments: { cmd: "cat -- '/w/it'\\''s.js'" } },
        { name: "exec_command", arguments: { cmd: "rm -- '/w/c.wip'" } },
        {
          name: "apply_patch",
          input:
            "*** Begin Patch\n*** Add File: /w/a.js\n+export const a = 1;\n*** Update File: /w/b.js\n@@\n-x\n-y\n+// note\n+x\n+y\n*** End Patch\n",
        },
      ],
    });
    expect(codexTurn({ text: "Done.\nFORGE_EXIT=0" })).toEqual({ text: "Done.\nFORGE_EXIT=0" });
    expect(() => codexTurn({ toolCalls: [{ name: "WebFetch", input: {} }] })).toThrow(/no tool for WebFetch/);
  });

  it("reads a PR's ## Agent section and a task's tracker row", () => {
    const body = "## Summary\n\nDone.\n\n## Agent\n\nAttempt 2 ran on Codex (`codex`) instead of …: why.\n\n## Testing\n\nnode --test\n";
    expect(agentSectionOf(body)).toBe("Attempt 2 ran on Codex (`codex`) instead of …: why.");
    expect(agentSectionOf("## Summary\n\nDone.\n")).toBeUndefined();
    const tracker = "| Task | Status |\n| `case` | MERGED · agent claude → codex |\n| `cases` | MERGED |\n";
    expect(trackerRowOf(tracker, "case")).toBe("| `case` | MERGED · agent claude → codex |");
    expect(trackerRowOf(tracker, "nope")).toBeUndefined();
  });

  it("names each task's agents in the summary when the run has several, and each change with its reason", () => {
    const task = (id: string, agents: DemoResult["tasks"][number]["agents"]) => ({
      id,
      kind: "task" as const,
      title: id,
      status: "MERGED",
      attempts: agents!.length,
      retries: 0,
      failures: [],
      agents,
    });
    const why = "after claude: claude stopped by its usage limit until 2026-11-29T02:00:00.000Z; codex takes the next attempt";
    const result = {
      ok: true,
      problems: [],
      agent: "mixed",
      planId: "p",
      status: "completed",
      durationMs: 1000,
      tasks: [
        task("a", [{ attempt: 1, agent: "claude" }]),
        task("case", [
          { attempt: 1, agent: "claude" },
          { attempt: 2, agent: "codex", why },
        ]),
      ],
      followups: [],
      changeRequests: [],
      overlayPrs: [],
      overlays: [],
      notes: [],
      jobs: { action: 3, captain: 0, ci: 0 },
      feedback: {},
      loop: { isolation: { configured: "auto", mode: "user", jobs: 3, isolated: 3, users: 3 } },
      agentChanges: [{ task: "case", attempt: 2, from: "claude", to: "codex", why, pr: 7, prSection: "Attempt 2 ran on Codex" }],
      schemaViolations: 0,
    } as unknown as DemoResult;
    const text = summary(result);
    expect(text).toMatch(/^Task +Kind +Status +Attempts +PR +Time +Agent$/m);
    expect(text).toMatch(/^case +task +MERGED +2 +claude → codex$/m);
    expect(text).toMatch(/^a +task +MERGED +1 +claude$/m);
    expect(text).toContain(`Agent: case's attempt 2 ran on codex, not claude — ${why} (PR #7 says so under ## Agent)`);
    // A run on one agent has no agent column.
    const one = summary({ ...result, tasks: [result.tasks[0]!], agentChanges: [] });
    expect(one).not.toMatch(/Agent$/m);
  });
});
