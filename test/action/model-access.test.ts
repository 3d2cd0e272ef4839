// The table of how each adapter reaches its model (action/src/agent-access.ts MODEL_ACCESS): the
// missing-key warnings the runner gives, and the proxy, URL and token variable each adapter gets.
import { afterEach, describe, expect, it } from "vitest";
import { agentAccess, missingKeyWarning, MODEL_ACCESS } from "../../action/src/agent-access.js";
import { ADAPTER_NAMES } from "../../src/agent/types.js";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

describe("model access", () => {
  it("warns of a missing key in each adapter's own words, and not when the input or a variable holds one", () => {
    expect(missingKeyWarning("claude", {}, {})).toBe(
      "anthropic-api-key is empty and ANTHROPIC_API_KEY is not set: Claude Code will not be able to call the model. Pass `anthropic-api-key: ${{ secrets.ANTHROPIC_API_KEY }}`.",
    );
    expect(missingKeyWarning("codex", {}, {})).toBe(
      "openai-api-key is empty and OPENAI_API_KEY is not set: Codex will not be able to call the model.",
    );
    expect(missingKeyWarning("qwen", {}, {})).toBe(
      "openai-api-key is empty and OPENAI_API_KEY is not set: Qwen Code will not be able to call the model.",
    );
    expect(missingKeyWarning("gemini", {}, {})).toBe(
      "gemini-api-key is empty and GEMINI_API_KEY is not set: Gemini CLI will not be able to call the model.",
    );
    expect(missingKeyWarning("copilot", {}, {})).toBe(
      "anthropic-api-key is empty and ANTHROPIC_API_KEY is not set: Copilot CLI (on Anthropic's API, bring-your-own-key) will not be able to call the model.",
    );
    expect(missingKeyWarning("gemini", {}, { GOOGLE_API_KEY: "k" })).toBeUndefined();
    expect(missingKeyWarning("opencode", { openaiApiKey: "k" }, {})).toBeUndefined();
    expect(missingKeyWarning("claude", {}, { ANTHROPIC_API_KEY: "k" })).toBeUndefined();
    expect(missingKeyWarning("codex", { anthropicApiKey: "k" }, {})).toMatch(/Codex/);
    expect(missingKeyWarning("command", {}, {})).toBeUndefined();
  });

  it("every agent CLI adapter has a row; each gets its proxy's URL and its token variable, never the key", async () => {
    expect(ADAPTER_NAMES.filter((a) => !MODEL_ACCESS[a])).toEqual(["command"]);
    for (const adapter of ADAPTER_NAMES) {
      const row = MODEL_ACCESS[adapter];
      if (!row) continue;
      const access = await agentAccess({
        adapter,
        isolation: "none",
        env: { PATH: "/usr/bin", [row.keyEnv[0]!]: "secret-key-1" },
        warn: () => undefined,
      });
      closers.push(() => access.close());
      expect(access.extraEnv[row.urlEnv]).toBe(access.proxy!.url);
      for (const [k, v] of Object.entries(row.fixedEnv ?? {})) expect(access.extraEnv[k]).toBe(v);
      const session = access.modelSession!();
      expect(Object.keys(session.env)).toEqual([row.tokenEnv]);
      expect(JSON.stringify([access.env, access.extraEnv, session.env])).not.toMatch(/secret-key-1/);
      session.end();
    }
    const none = await agentAccess({ adapter: "command", isolation: "none", env: { OPENAI_API_KEY: "k" }, warn: () => undefined });
    closers.push(() => none.close());
    expect(none.proxy).toBeUndefined();
    expect(none.modelSession).toBeUndefined();
  });
});
