import { describe, expect, it } from "vitest";
import { forgeConfigSchema } from "../../src/core/schemas/config.js";
import { taskFrontmatterSchema } from "../../src/core/schemas/task.js";
import {
  chooseModel,
  modelFromEnv,
  modelPlan,
  modelRoleOf,
  modelsEnvValue,
  modelSpecProblem,
  onAnthropicApi,
  specChoice,
} from "../../src/core/tiers.js";

describe("model roles", () => {
  it("gives implementation stages the implementer, plan and walkthrough the analyst, verify the verifier", () => {
    expect(["implement", "work", "fix", "merge", "single", "write"].map((s) => modelRoleOf("2", s))).toEqual(Array(6).fill("implementer"));
    expect(modelRoleOf("3", "plan")).toBe("analyst");
    expect(modelRoleOf("1", "walkthrough")).toBe("analyst");
    expect(modelRoleOf("1", "verify")).toBe("verifier");
    expect(modelRoleOf("1", "verify-retry")).toBe("verifier");
  });

  it("gives every sentinel kind, and a sentinel stage, the sentinel role; the Captain its own whatever the stage", () => {
    for (const kind of ["sentinel", "sentinel-writer", "sentinel-executor", "sentinel-auditor", "sentinel-consolidator"])
      expect(modelRoleOf(kind, "fix")).toBe("sentinel");
    expect(modelRoleOf("1", "sentinel")).toBe("sentinel");
    expect(modelRoleOf("captain", "write")).toBe("captain");
    expect(modelRoleOf("captain", "walkthrough")).toBe("captain");
  });

  it("gives a sub-agent without a stage the implementer role", () => {
    expect(modelRoleOf("1")).toBe("implementer");
  });
});

describe("model specs", () => {
  it("takes tiers (also the hierarchy's high-tier spelling) and model ids", () => {
    for (const ok of ["low", "medium", "high", "high-tier", "claude-opus-4-1", "gpt-5.5", "sonnet[1m]", "us.anthropic/claude@v2:0"])
      expect(modelSpecProblem(ok)).toBeUndefined();
  });

  it("refuses an unknown tier and anything that is not a model id's shape", () => {
    expect(modelSpecProblem("ultra-tier")).toMatch(/unknown tier 'ultra-tier'/);
    expect(modelSpecProblem("--dangerously-skip-permissions")).toMatch(/neither a tier/);
    expect(modelSpecProblem("opus; rm -rf /")).toMatch(/neither a tier/);
  });

  it("is checked by .github/forge.yml and a task's front matter", () => {
    const bad = forgeConfigSchema.safeParse({ agent: { models: { sentinel: "ultra-tier" } } });
    expect(bad.error?.issues.map((i) => i.path.join("."))).toEqual(["agent.models.sentinel"]);
    expect(forgeConfigSchema.safeParse({ agent: { models: { tester: "low" } } }).success).toBe(false);
    expect(forgeConfigSchema.safeParse({ agent: { tiers: { claude: { high: "-x" } } } }).success).toBe(false);
    expect(forgeConfigSchema.safeParse({ agent: { tiers: { claude: { huge: "opus" } } } }).success).toBe(false);
    const task = { id: "a", title: "A", type: 1, acceptance_criteria: ["x"], estimated_complexity: "small" };
    expect(taskFrontmatterSchema.safeParse({ ...task, model: "low" }).success).toBe(true);
    expect(taskFrontmatterSchema.safeParse({ ...task, model: "mega" }).success).toBe(true);
    expect(taskFrontmatterSchema.safeParse({ ...task, model: "mega-tier" }).success).toBe(false);
  });
});

describe("choosing a model", () => {
  it("gives each role its default tier, as the adapter's model", () => {
    const plan = modelPlan("claude", {});
    expect(chooseModel(plan, "1", "implement")).toEqual({ model: "opus", tier: "high", role: "implementer", source: "default" });
    expect(chooseModel(plan, "3", "plan")).toEqual({ model: "sonnet", tier: "medium", role: "analyst", source: "default" });
    expect(chooseModel(plan, "1", "verify")).toEqual({ model: "haiku", tier: "low", role: "verifier", source: "default" });
    expect(chooseModel(plan, "sentinel-auditor", "fix")).toEqual({ model: "haiku", tier: "low", role: "sentinel", source: "default" });
    expect(chooseModel(plan, "captain", "write")).toEqual({ model: "opus", tier: "high", role: "captain", source: "default" });
    expect(chooseModel(modelPlan("codex", {}), "1", "verify")).toEqual({
      model: "gpt-5.5",
      tier: "low",
      role: "verifier",
      source: "default",
    });
  });

  it("decides stage over task over role over agent.model over the default", () => {
    const plan = modelPlan("claude", { model: "claude-x", models: { verifier: "medium" }, tiers: { claude: { medium: "sonnet-9" } } });
    expect(chooseModel(plan, "1", "implement")).toEqual({ model: "claude-x", role: "implementer", source: "agent.model" });
    expect(chooseModel(plan, "1", "verify")).toEqual({ model: "sonnet-9", tier: "medium", role: "verifier", source: "role" });
    expect(chooseModel(plan, "1", "implement", { taskSpec: "low" })).toEqual({
      model: "haiku",
      tier: "low",
      role: "implementer",
      source: "task",
    });
    // The task's model is its implementer's: a verify stage keeps its role's.
    expect(chooseModel(plan, "1", "verify", { taskSpec: "low" }).source).toBe("role");
    expect(chooseModel(plan, "1", "verify", { stageSpec: "my-model", taskSpec: "low" })).toEqual({
      model: "my-model",
      role: "verifier",
      source: "stage",
    });
  });

  it("leaves a tier without a model of the adapter's to the CLI's default", () => {
    expect(specChoice(modelPlan("command", {}), "high", "implementer", "default")).toEqual({
      tier: "high",
      role: "implementer",
      source: "default",
    });
    expect(specChoice(modelPlan("command", {}), "my-model", "implementer", "role")).toEqual({
      model: "my-model",
      role: "implementer",
      source: "role",
    });
  });
});

describe("FORGE_MODELS", () => {
  it("carries each role's model to sub-agents, which take their kind's", () => {
    const value = modelsEnvValue(modelPlan("claude", { models: { implementer: "medium" } }));
    expect(modelFromEnv(value, "1")).toEqual({ model: "sonnet", tier: "medium" });
    expect(modelFromEnv(value, "sentinel-writer")).toEqual({ model: "haiku", tier: "low" });
    expect(modelFromEnv(value, "captain")).toEqual({ model: "opus", tier: "high" });
  });

  it("is ignored when absent or malformed, never taken as a model", () => {
    expect(modelFromEnv(undefined, "1")).toBeUndefined();
    expect(modelFromEnv("{not json", "1")).toBeUndefined();
    expect(modelFromEnv(JSON.stringify({ implementer: { model: "--evil" } }), "1")).toBeUndefined();
  });
});

describe("the long-context switch", () => {
  it("asks Claude Code for the 1M variant of every model but Haiku's, on Anthropic's API only", () => {
    const plan = modelPlan("claude", { long_context: true, models: { analyst: "claude-sonnet-4-5" } }, { anthropicApi: true });
    expect(chooseModel(plan, "1", "implement").model).toBe("opus[1m]");
    expect(chooseModel(plan, "1", "walkthrough").model).toBe("claude-sonnet-4-5[1m]");
    expect(chooseModel(plan, "1", "verify").model).toBe("haiku");
    expect(chooseModel(plan, "1", "implement", { stageSpec: "sonnet[1m]" }).model).toBe("sonnet[1m]");
    expect(modelFromEnv(modelsEnvValue(plan), "2")).toEqual({ model: "opus[1m]", tier: "high" });
  });

  it("is off by default, for another provider and for other adapters", () => {
    expect(chooseModel(modelPlan("claude", {}), "1", "implement").model).toBe("opus");
    expect(chooseModel(modelPlan("claude", { long_context: true }, { anthropicApi: false }), "1", "implement").model).toBe("opus");
    expect(chooseModel(modelPlan("codex", { long_context: true }, { anthropicApi: true }), "1", "implement").model).toBe("gpt-5.5");
  });

  it("tells Anthropic's API from another base URL, Vertex and Bedrock", () => {
    expect(onAnthropicApi({})).toBe(true);
    expect(onAnthropicApi({ ANTHROPIC_BASE_URL: "https://api.anthropic.com" })).toBe(true);
    expect(onAnthropicApi({ ANTHROPIC_BASE_URL: "https://api.anthropic.com.evil.example" })).toBe(false);
    expect(onAnthropicApi({ ANTHROPIC_BASE_URL: "https://openrouter.ai/api" })).toBe(false);
    expect(onAnthropicApi({ CLAUDE_CODE_USE_VERTEX: "1" })).toBe(false);
    expect(onAnthropicApi({ CLAUDE_CODE_USE_BEDROCK: "1" })).toBe(false);
  });

  it("is a config switch, off unless set", () => {
    expect(forgeConfigSchema.parse({}).agent.long_context).toBe(false);
    expect(forgeConfigSchema.parse({ agent: { long_context: true } }).agent.long_context).toBe(true);
  });
});
