/**
 * What the agent gets to reach the model, and as whom it runs (docs/runner.md#isolation): the
 * model API through the runner's proxy (a local URL and a session token in the agent's environment,
 * never the key), and this job's own OS user when `agent.isolation` allows — created here, and
 * removed by `close()` with every process it still has.
 */
import type { AdapterName } from "../../src/agent/types.js";
import { isForbiddenEnvName } from "../../src/agent/env.js";
import { prepareAgentUser, releaseAgentUser, type AgentUser, type IsolationMode } from "../../src/agent/isolation.js";
import { startModelProxy, type ModelApi, type ModelProxy } from "../../src/agent/model-proxy.js";
import { warmCopilotCache } from "./copilot-cache.js";

/** Model keys a runner environment may hold: they never reach the agent. */
const MODEL_KEYS =
  /^(ANTHROPIC_API_KEY|ANTHROPIC_AUTH_TOKEN|OPENAI_API_KEY|CODEX_API_KEY|AZURE_OPENAI_API_KEY|CLAUDE_CODE_OAUTH_TOKEN|GEMINI_API_KEY|GOOGLE_API_KEY|COPILOT_PROVIDER_API_KEY|COPILOT_PROVIDER_API_KEY_COMMAND|COPILOT_PROVIDER_BEARER_TOKEN)$/;

/** The action inputs that may hold a model key. */
export type KeyInputs = Partial<Record<"anthropicApiKey" | "openaiApiKey" | "geminiApiKey", string>>;

/** How an adapter reaches its model through the runner's proxy: one row an adapter (none: no proxy). */
export interface ModelAccessRow {
  /** The API the proxy speaks to the agent and upstream: only that API's endpoints are served. */
  api: ModelApi;
  /** Where the key is read, first set wins: the action input, then the runner's variables. */
  keyInput: keyof KeyInputs;
  keyEnv: readonly string[];
  /** The variable naming the upstream API's base URL, and its default. */
  upstreamEnv: string;
  upstreamDefault: string;
  /** The agent's variable holding the proxy's URL, and any fixed ones it needs with it. */
  urlEnv: string;
  fixedEnv?: Record<string, string>;
  /** The agent's variable holding its session's proxy token (where its CLI reads the key). */
  tokenEnv: string;
  /** The agent as the missing-key warning names it, and what the warning adds. */
  label: string;
  hint?: string;
}

const ANTHROPIC = {
  keyInput: "anthropicApiKey",
  keyEnv: ["ANTHROPIC_API_KEY"],
  upstreamEnv: "ANTHROPIC_BASE_URL",
  upstreamDefault: "https://api.anthropic.com",
} as const;
const OPENAI = {
  keyInput: "openaiApiKey",
  keyEnv: ["OPENAI_API_KEY"],
  upstreamEnv: "OPENAI_BASE_URL",
  upstreamDefault: "https://api.openai.com/v1",
  urlEnv: "OPENAI_BASE_URL",
  tokenEnv: "OPENAI_API_KEY",
} as const;

export const MODEL_ACCESS: Partial<Record<AdapterName, ModelAccessRow>> = {
  claude: {
    ...ANTHROPIC,
    api: "anthropic",
    urlEnv: "ANTHROPIC_BASE_URL",
    tokenEnv: "ANTHROPIC_API_KEY",
    label: "Claude Code",
    hint: "Pass `anthropic-api-key: ${{ secrets.ANTHROPIC_API_KEY }}`.",
  },
  // Codex speaks the Responses API; opencode and Qwen Code speak Chat Completions: each gets only its own API's endpoints.
  codex: { ...OPENAI, api: "openai", label: "Codex" },
  opencode: { ...OPENAI, api: "chat", label: "opencode" },
  qwen: { ...OPENAI, api: "chat", label: "Qwen Code" },
  gemini: {
    api: "gemini",
    keyInput: "geminiApiKey",
    keyEnv: ["GEMINI_API_KEY", "GOOGLE_API_KEY"],
    upstreamEnv: "GOOGLE_GEMINI_BASE_URL",
    upstreamDefault: "https://generativelanguage.googleapis.com",
    // The adapter's settings select the `gemini-api-key` auth, which sends the token as x-goog-api-key.
    urlEnv: "GOOGLE_GEMINI_BASE_URL",
    tokenEnv: "GEMINI_API_KEY",
    label: "Gemini CLI",
  },
  // Copilot CLI with a provider of its own (bring-your-own-key): Anthropic's Messages API through the proxy, offline from GitHub.
  copilot: {
    ...ANTHROPIC,
    api: "anthropic",
    urlEnv: "COPILOT_PROVIDER_BASE_URL",
    fixedEnv: { COPILOT_PROVIDER_TYPE: "anthropic", COPILOT_OFFLINE: "true" },
    tokenEnv: "COPILOT_PROVIDER_API_KEY",
    label: "Copilot CLI (on Anthropic's API, bring-your-own-key)",
  },
};

/** The model key of an adapter's row: its action input, else the first of its variables that is set. */
export function modelKey(row: ModelAccessRow, inputs: KeyInputs, env: NodeJS.ProcessEnv): string | undefined {
  return inputs[row.keyInput] || row.keyEnv.map((n) => env[n]).find(Boolean) || undefined;
}

/** The warning for an adapter whose model key is nowhere (undefined: it has one, or needs none). */
export function missingKeyWarning(adapter: AdapterName, inputs: KeyInputs, env: NodeJS.ProcessEnv): string | undefined {
  const row = MODEL_ACCESS[adapter];
  if (!row || modelKey(row, inputs, env)) return undefined;
  const input = row.keyInput.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  return `${input} is empty and ${row.keyEnv[0]} is not set: ${row.label} will not be able to call the model.${row.hint ? ` ${row.hint}` : ""}`;
}

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

export async function agentAccess(
  o: KeyInputs & {
    adapter: AdapterName;
    isolation: IsolationMode;
    env: NodeJS.ProcessEnv;
    warn: (message: string) => void;
  },
): Promise<AgentAccess> {
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries(o.env).filter(([k]) => !isForbiddenEnvName(k) && !/^ACTIONS_/.test(k) && !MODEL_KEYS.test(k)),
  );
  const extraEnv: Record<string, string> = {};
  const row = MODEL_ACCESS[o.adapter];
  const key = row && modelKey(row, o, o.env);
  let proxy: ModelProxy | undefined;
  if (row && key) {
    proxy = await startModelProxy({ upstream: o.env[row.upstreamEnv] || row.upstreamDefault, key, api: row.api });
    Object.assign(extraEnv, { [row.urlEnv]: proxy.url }, row.fixedEnv);
  }
  const modelSession =
    proxy && row
      ? () => {
          const s = proxy.openSession();
          return { env: { [row.tokenEnv]: s.token }, end: s.end };
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
