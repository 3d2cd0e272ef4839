// Spend measured twice, and the two must agree: what the real Claude Code and Codex CLIs report
// of themselves (Claude Code's cost, Codex's token usage) and what the runner's model proxy reads
// of the model's answers as it streams them back (src/agent/model-usage.ts), both against the local
// scripted model servers. The figures are printed.
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startModelProxy, type ModelProxy } from "../../../src/agent/model-proxy.js";
import { priceUsage } from "../../../src/agent/model-usage.js";
import { spawnAgent } from "../../../src/agent/spawn/index.js";
import type { ProgressEvent } from "../../../src/agent/types.js";
import { offlineClaudeEnv } from "../../../src/fake-agents/claude-code.js";
import { claudeBinary } from "../../helpers/claude-code.js";
import { startModelServer, type ModelServer } from "../../../src/fake-agents/model-server.js";
import {
  codexBinary,
  codexTools,
  offlineCodexEnv,
  startResponsesServer,
  type ResponsesServer,
} from "../../../src/fake-agents/responses/index.js";
import { tempDir, useWorld } from "./harness.js";

let claudeServer: ModelServer | undefined;
let codexServer: ResponsesServer | undefined;
let proxy: ModelProxy | undefined;
const world = useWorld();
afterEach(async () => {
  await proxy?.close();
  await claudeServer?.close();
  await codexServer?.close();
  proxy = claudeServer = codexServer = undefined;
});

// Anthropic's list prices (dollars per million tokens) for the models Claude Code asks for, as a
// repository would put them in `prices`.
const PRICES = {
  "claude-opus-4-8": { input_per_mtok: 5, output_per_mtok: 25, cache_write_per_mtok: 6.25, cache_read_per_mtok: 0.5 },
  "claude-sonnet-4-5": { input_per_mtok: 3, output_per_mtok: 15, cache_write_per_mtok: 3.75, cache_read_per_mtok: 0.3 },
  "claude-haiku-4-5": { input_per_mtok: 1, output_per_mtok: 5, cache_write_per_mtok: 1.25, cache_read_per_mtok: 0.1 },
};

describe("spend: the adapter's figure against the proxy's", () => {
  it("Claude Code: its reported cost equals the proxy's tokens priced at the model's prices", async () => {
    const file = path.join(world.repo, "a.txt");
    claudeServer = await startModelServer({
      script: [
        { text: "Writing the file.", toolCalls: [{ name: "Write", input: { file_path: file, content: "a\n" } }] },
        { text: "Done.\nFORGE_EXIT=0" },
      ],
    });
    proxy = await startModelProxy({ upstream: claudeServer.url, key: "sk-ant-real-key-for-the-proxy" });
    const home = tempDir("forge-spend-home-");
    const r = await spawnAgent({
      adapter: "claude",
      binary: claudeBinary(),
      agentType: "1",
      prompt: "Write a.txt",
      cwd: world.repo,
      sessionDir: path.join(tempDir(), "s"),
      env: offlineClaudeEnv(proxy.url, home, { ANTHROPIC_API_KEY: proxy.openSession().token }),
      maxTurns: 5,
      idleTimeoutMs: 60_000,
      forgeCli: false,
    });
    expect(r.exitCode, readFileSync(r.transcriptPath, "utf8")).toBe(0);
    expect(readFileSync(file, "utf8")).toBe("a\n");
    const usage = proxy.usage();
    // Every model Claude Code called has a price (else the proxy's figure would be unknown).
    const measured = priceUsage(usage, PRICES)!;
    console.log(
      `Claude Code: reported $${r.costUsd?.toFixed(6)}; proxy measured $${measured.toFixed(6)} over ${usage.requests} requests (${usage.inputTokens} input, ${usage.outputTokens} output, ${usage.cacheCreationTokens} cache-write, ${usage.cacheReadTokens} cache-read tokens; models ${Object.keys(usage.byModel).join(", ")})`,
    );
    expect(usage.requests).toBeGreaterThanOrEqual(2);
    expect(r.costUsd).toBeGreaterThan(0);
    expect(measured).toBeCloseTo(r.costUsd!, 6);
  });

  it("Codex: the token usage it reports per turn equals what the proxy read", async () => {
    const file = path.join(world.repo, "b.txt");
    codexServer = await startResponsesServer({
      script: [{ text: "Adding the file.", toolCalls: [codexTools.addFile(file, "b\n")] }, { text: "Done.\nFORGE_EXIT=0" }],
    });
    proxy = await startModelProxy({ upstream: codexServer.url, key: "sk-real-openai-key-for-the-proxy", api: "openai" });
    const home = tempDir("forge-spend-codex-");
    const events: ProgressEvent[] = [];
    const r = await spawnAgent({
      adapter: "codex",
      binary: codexBinary(),
      agentType: "1",
      prompt: "Write b.txt",
      cwd: world.repo,
      sessionDir: path.join(tempDir(), "s"),
      env: { ...offlineCodexEnv(proxy.url, home, { OPENAI_API_KEY: proxy.openSession().token }), FORGE_CODEX_SANDBOX: "bypass" },
      idleTimeoutMs: 60_000,
      forgeCli: false,
      onProgress: (e) => events.push(e),
    });
    expect(r.exitCode, readFileSync(r.transcriptPath, "utf8")).toBe(0);
    const reported = events
      .filter((e) => e.tokens)
      .reduce((n, e) => ({ input: n.input + e.tokens!.input, output: n.output + e.tokens!.output }), { input: 0, output: 0 });
    const usage = proxy.usage();
    console.log(
      `Codex: reported ${reported.input} input + ${reported.output} output tokens; proxy measured ${usage.inputTokens + usage.cacheReadTokens} input (${usage.cacheReadTokens} cached) + ${usage.outputTokens} output over ${usage.requests} requests`,
    );
    expect(reported.input + reported.output).toBeGreaterThan(0);
    expect({ input: usage.inputTokens + usage.cacheReadTokens, output: usage.outputTokens }).toEqual(reported);
  });
});
