import { describe, expect, it } from "vitest";
import { z } from "zod";
import { CONFIG_PATH, parseConfigText } from "../../src/core/config.js";
import { formatProblem, zodProblems } from "../../src/core/problems.js";
import { forgeConfigSchema } from "../../src/core/schemas/config.js";

describe(".github/forge.yml from its text", () => {
  it("is every default when the file is missing or empty", () => {
    expect(parseConfigText(undefined)).toEqual({ ok: true, config: forgeConfigSchema.parse({}) });
    expect(parseConfigText("")).toEqual({ ok: true, config: forgeConfigSchema.parse({}) });
    expect(parseConfigText("max_retries: 1\n")).toMatchObject({ ok: true, config: { max_retries: 1 } });
  });

  it("names the line of YAML that does not parse", () => {
    const read = parseConfigText("max_retries: 1\nagent: [unclosed\n");
    expect(read.ok).toBe(false);
    if (read.ok) return;
    expect(read.problems).toHaveLength(1);
    expect(read.problems[0]).toMatchObject({ file: CONFIG_PATH, rule: "unreadable-yaml" });
    expect(read.problems[0]!.line).toBeGreaterThanOrEqual(2);
    expect(read.problems[0]!.message).toMatch(/^not valid YAML: /);
  });

  it("takes an agent per kind, and names an unknown agent or a model the kind's agent cannot take with their rules", () => {
    const good = parseConfigText('agent:\n  kinds:\n    refinery: { agent: codex, model: high }\n    "1": { agent: [gemini, claude] }\n');
    expect(good).toMatchObject({
      ok: true,
      config: { agent: { kinds: { refinery: { agent: "codex", model: "high" }, "1": { agent: ["gemini", "claude"] } } } },
    });
    const read = parseConfigText(
      'agent:\n  kinds:\n    refinery: { agent: "./evil.sh" }\n    "2": { agent: [claude, codex], model: gpt-5.5 }\n    captain_x: {}\n',
    );
    expect(read.ok).toBe(false);
    if (read.ok) return;
    expect(read.problems.map((p) => [p.field, p.rule]).sort()).toEqual([
      ["agent.kinds.2.model", "model-not-for-agent"],
      ["agent.kinds.captain_x", "invalid-frontmatter"],
      ["agent.kinds.refinery.agent", "unknown-agent"],
    ]);
  });

  it("names the field the schema refuses, unknown fields included", () => {
    const read = parseConfigText("heartbeat_interval_seconds: -1\nagent:\n  max_turns: 0\nmood: great\n");
    expect(read.ok).toBe(false);
    if (read.ok) return;
    expect(read.problems.map((p) => [p.file, p.field, p.rule])).toEqual([
      [CONFIG_PATH, "heartbeat_interval_seconds", "invalid-frontmatter"],
      [CONFIG_PATH, "agent.max_turns", "invalid-frontmatter"],
      [CONFIG_PATH, "mood", "invalid-frontmatter"],
    ]);
    expect(read.problems[2]!.message).toBe("unknown field");
  });
});

describe("problems, written one way", () => {
  it("turns a schema's issues into problems with the field as a path", () => {
    const schema = z.object({ nodes: z.array(z.object({ id: z.string() })) }).strict();
    const r = schema.safeParse({ nodes: [{ id: "a" }, { id: 1 }], extra: true });
    expect(r.success).toBe(false);
    if (r.success) return;
    expect(zodProblems(r.error, "dag.json").map((p) => [p.file, p.field])).toEqual([
      ["dag.json", "nodes[1].id"],
      ["dag.json", "extra"],
    ]);
    const root = z.object({}).safeParse([]);
    if (!root.success) expect(zodProblems(root.error, "x.yml")[0]).not.toHaveProperty("field");
  });

  it("writes file[:line] field — message", () => {
    expect(formatProblem({ file: "tasks/a.md", line: 3, field: "dependencies[0]", message: "unknown task" })).toBe(
      "tasks/a.md:3 dependencies[0] — unknown task",
    );
    expect(formatProblem({ file: "dag.json", message: "not JSON" })).toBe("dag.json — not JSON");
    expect(formatProblem({ file: "dag.json", line: 2, message: "not JSON" }, { markdown: true })).toBe("`dag.json:2` — not JSON");
  });
});
