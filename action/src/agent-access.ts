/**
 * What the agent gets to reach the model, and as whom it runs (docs/runner.md#isolation): the
 * model API through the runner's proxy (a local URL and a session token in the agent's environment,
 * never the key), and this job's own OS user when `agent.isolation` allows — created here, and
 * removed by `close()` with every process it still has.
 */
import type { AdapterName } from "../../src/agent/types.js";
import { isForbiddenEnvName } from "../../src/agent/env.js";
import { prepareAgentUser, releaseAgentUser, type AgentUser, type IsolationMode } from "../../src/agent/isolation.js";
import { startModelProxy, type ModelProxy } from "../../src/agent/model-proxy.js";
import { warmCopilotCache } from "./copilot-cache.js";

/** Model keys a runner environment may hold: they never reach the agent. */
const MODEL_KEYS =
  /^(ANTHROPIC_API_KEY|ANTHROPIC_AUTH_TOKEN|OPENAI_API_KEY|CODEX_API_KEY|AZURE_OPENAI_API_KEY|CLAUDE_CODE_OAUTH_TOKEN|GEMINI_API_KEY|GOOGLE_API_KEY|COPILOT_PROVIDER_API_KEY|COPILOT_PROVIDER_API_KEY_COMMAND|COPILOT_PROVIDER_BEARER_TOKEN)$/;

export interface AgentAccess {
  /** The environment the agent layer picks from: no job credentials, no model keys. */
  env: NodeJS.ProcessEnv;
  /** Given to the agent as is: the proxy's URL for its adapter. */
  extraEnv: Record<string, string>;
  /** Each agent session's own proxy token, in its adapter's variable; it dies with the session. */
  modelSession?: () => { env: Record<string, string>; end(): void };
  runAs?: AgentUser;
  proxy?: ModelProxy;
  close(): Promise<void>;
}

export async function agentAccess(o: {
  adapter: AdapterName;
  isolation: IsolationMode;
  env: NodeJS.ProcessEnv;
  anthropicApiKey?: string;
  openaiApiKey?: string;
  geminiApiKey?: string;
  warn: (message: string) => void;
}): Promise<AgentAccess> {
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries(o.env).filter(([k]) => !isForbiddenEnvName(k) && !/^ACTIONS_/.test(k) && !MODEL_KEYS.test(k)),
  );
  const extraEnv: Record<string, string> = {};
  let proxy: ModelProxy | undefined;
  let keyName: string | undefined;
  if (o.adapter === "claude") {
    const key = o.anthropicApiKey || o.env.ANTHROPIC_API_KEY;
    if (key) {
      proxy = await startModelProxy({ upstream: o.env.ANTHROPIC_BASE_URL || "https://api.anthropic.com", key, api: "anthropic" });
      extraEnv.ANTHROPIC_BASE_URL = proxy.url;
      keyName = "ANTHROPIC_API_KEY";
    }
  } else if (o.adapter === "codex" || o.adapter === "opencode" || o.adapter === "qwen") {
    // Codex speaks the Responses API; opencode and Qwen Code speak Chat Completions: each gets only its own API's endpoints.
    const key = o.openaiApiKey || o.env.OPENAI_API_KEY;
    if (key) {
      const api = o.adapter === "codex" ? "openai" : "chat";
      proxy = await startModelProxy({ upstream: o.env.OPENAI_BASE_URL || "https://api.openai.com/v1", key, api });
      extraEnv.OPENAI_BASE_URL = proxy.url;
      keyName = "OPENAI_API_KEY";
    }
  } else if (o.adapter === "gemini") {
    const key = o.geminiApiKey || o.env.GEMINI_API_KEY || o.env.GOOGLE_API_KEY;
    if (key) {
      const upstream = o.env.GOOGLE_GEMINI_BASE_URL || "https://generativelanguage.googleapis.com";
      proxy = await startModelProxy({ upstream, key, api: "gemini" });
      // The adapter's settings select the `gemini-api-key` auth, which sends the token as x-goog-api-key.
      extraEnv.GOOGLE_GEMINI_BASE_URL = proxy.url;
      keyName = "GEMINI_API_KEY";
    }
  } else if (o.adapter === "copilot") {
    // Copilot CLI with a provider of its own (bring-your-own-key): Anthropic's Messages API through the proxy, offline from GitHub.
    const key = o.anthropicApiKey || o.env.ANTHROPIC_API_KEY;
    if (key) {
      proxy = await startModelProxy({ upstream: o.env.ANTHROPIC_BASE_URL || "https://api.anthropic.com", key, api: "anthropic" });
      Object.assign(extraEnv, { COPILOT_PROVIDER_BASE_URL: proxy.url, COPILOT_PROVIDER_TYPE: "anthropic", COPILOT_OFFLINE: "true" });
      keyName = "COPILOT_PROVIDER_API_KEY";
    }
  }
  const modelSession =
    proxy && keyName
      ? () => {
          const s = proxy.openSession();
          return { env: { [keyName]: s.token }, end: s.end };
        }
      : undefined;
  let runAs: AgentUser | undefined;
  try {
    runAs = await prepareAgentUser(o.isolation, o.warn);
  } catch (err) {
    await proxy?.close();
    throw err;
  }
  // An isolated Copilot CLI session has a HOME of its own: the CLI is unpacked once for all of them.
  const cache = o.adapter === "copilot" && runAs ? await warmCopilotCache(env, o.warn) : undefined;
  if (cache) extraEnv.XDG_CACHE_HOME = cache.dir;
  return {
    env,
    extraEnv,
    ...(modelSession ? { modelSession } : {}),
    ...(runAs ? { runAs } : {}),
    ...(proxy ? { proxy } : {}),
    close: async () => {
      await proxy?.close();
      await cache?.close();
      if (!runAs) return;
      for (const problem of await releaseAgentUser(runAs)) o.warn(`The agent's user was not fully cleaned up: ${problem}`);
    },
  };
}
