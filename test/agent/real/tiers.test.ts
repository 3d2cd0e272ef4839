// Model tiers reach the real agent CLIs (docs/runner.md#model-tiers), offline against the scripted
// model servers, which record the model each request asked for: Claude Code gets `--model` with its
// alias of the stage's tier, Codex `--model` and the tier as its reasoning effort.
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runStages, type RunStagesOptions } from "../../../src/agent/stages/index.js";
import { modelPlan } from "../../../src/core/tiers.js";
import { offlineClaudeEnv } from "../../../src/fake-agents/claude-code.js";
import { startModelServer, type ModelServer, type TurnRequest } from "../../../src/fake-agents/model-server.js";
import { codexBinary, offlineCodexEnv, startResponsesServer, type ResponsesServer } from "../../../src/fake-agents/responses/index.js";
import { claudeBinary } from "../../helpers/claude-code.js";
import { tempDir, useWorld } from "./harness.js";

let claude: ModelServer | undefined;
let codex: ResponsesServer | undefined;
const world = useWorld();
afterEach(async () => {
  await claude?.close();
  await codex?.close();
  claude = undefined;
  codex = undefined;
});

const taskContext = { runId: "r1", taskId: "t1", attempt: 1, title: "T", task: "---\nid: t1\n---\n## Description\nNothing to do." };
const stageIn = (text: string) => /Stage: \*\*([a-z-]+)\*\*/.exec(text)?.[1] ?? "unknown";

describe("model tiers with the real CLIs", () => {
  it("Claude Code: implement asks for opus, verify for haiku; the task's own model is its implementer's", async () => {
    const firstUser = (req: TurnRequest) => JSON.stringify(req.body.messages?.[0]?.content ?? "");
    claude = await startModelServer({ script: Array(8).fill((req: TurnRequest) => ({ text: `Done with ${stageIn(firstUser(req))}.` })) });
    const home = tempDir("forge-tiers-home-");
    const options: RunStagesOptions = {
      agentType: "1",
      taskContext,
      workdir: world.repo,
      sessionDir: path.join(tempDir("forge-tiers-session-"), "session"),
      stages: ["implement", "verify"],
      models: modelPlan("claude", { models: { verifier: "low" } }),
      spawn: { adapter: "claude", binary: claudeBinary(), env: offlineClaudeEnv(claude.url, home), maxTurns: 3, forgeCli: false },
    };
    const mainModels = () =>
      claude!
        .turns()
        .filter((t) => t.kind === "main")
        .map((t) => t.body?.model);
    const out = await runStages(options);
    expect(out.exitCode, out.error).toBe(0);
    const asked = claude
      .turns()
      .filter((t) => t.kind === "main")
      .map((t) => [stageIn(JSON.stringify(t.body?.messages?.[0]?.content ?? "")), t.body?.model]);
    // Claude Code resolves its aliases to the family's model.
    expect(asked).toEqual([
      ["implement", expect.stringMatching(/opus/)],
      ["verify", expect.stringMatching(/haiku/)],
    ]);
    expect(out.models).toEqual([
      { stage: "implement", role: "implementer", tier: "high", model: "opus" },
      { stage: "verify", role: "verifier", tier: "low", model: "haiku" },
    ]);

    // The task's own model (front matter) goes to its implementer sessions as given; verify keeps its tier.
    const again = await runStages({
      ...options,
      taskModel: "claude-sonnet-4-5",
      sessionDir: path.join(tempDir("forge-tiers-session-"), "s2"),
    });
    expect(again.exitCode, again.error).toBe(0);
    expect(again.models?.map((m) => m.model)).toEqual(["claude-sonnet-4-5", "haiku"]);
    expect(mainModels().slice(2)).toEqual(["claude-sonnet-4-5", expect.stringMatching(/haiku/)]);
  }, 120_000);

  it("Codex: each stage's tier is its model and its reasoning effort", async () => {
    codex = await startResponsesServer({
      script: Array(4).fill((req: { body: unknown }) => ({ text: `Done with ${stageIn(JSON.stringify(req.body))}.\nFORGE_EXIT=0` })),
    });
    const home = tempDir("forge-tiers-codex-home-");
    const out = await runStages({
      agentType: "1",
      taskContext,
      workdir: world.repo,
      sessionDir: path.join(tempDir("forge-tiers-session-"), "session"),
      stages: ["implement", "verify"],
      models: modelPlan("codex", { tiers: { codex: { low: "gpt-5.4-mini" } } }),
      spawn: {
        adapter: "codex",
        binary: codexBinary(),
        env: { ...offlineCodexEnv(codex.url, home, {}, { tmpWritable: false }), FORGE_CODEX_SANDBOX: "bypass" },
        forgeCli: false,
      },
    });
    expect(out.exitCode, out.error).toBe(0);
    const asked = codex.turns().map((t) => {
      const body = t.body as { model?: string; reasoning?: { effort?: string } } | null;
      return [stageIn(JSON.stringify(t.body)), body?.model, body?.reasoning?.effort];
    });
    expect(asked).toEqual([
      ["implement", "gpt-5.5", "high"],
      ["verify", "gpt-5.4-mini", "low"],
    ]);
  }, 120_000);

  it("Claude Code: the long-context switch sends the context-1m beta, and the system prompt says what a compaction keeps", async () => {
    claude = await startModelServer({ script: Array(4).fill({ text: "Done." }) });
    const home = tempDir("forge-tiers-home-");
    const out = await runStages({
      agentType: "1",
      taskContext,
      workdir: world.repo,
      sessionDir: path.join(tempDir("forge-tiers-session-"), "session"),
      stages: ["implement", "verify"],
      models: modelPlan("claude", { long_context: true }, { anthropicApi: true }),
      spawn: { adapter: "claude", binary: claudeBinary(), env: offlineClaudeEnv(claude.url, home), maxTurns: 3, forgeCli: false },
    });
    expect(out.exitCode, out.error).toBe(0);
    const main = claude.turns().filter((t) => t.kind === "main");
    expect(main.map((t) => [t.body?.model, String(t.headers["anthropic-beta"] ?? "").includes("context-1m")])).toEqual([
      [expect.stringMatching(/opus/), true],
      // Haiku has no 1M variant: verify runs without the beta.
      [expect.stringMatching(/haiku/), false],
    ]);
    for (const t of main) expect(JSON.stringify(t.body?.system)).toContain("When the conversation is compacted");
    expect(out.models?.map((m) => m.model)).toEqual(["opus[1m]", "haiku"]);
  }, 120_000);
});
