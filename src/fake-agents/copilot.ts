// Running the real GitHub Copilot CLI offline against the scripted Anthropic Messages server
// (src/fake-agents/model-server.ts): its environment, where its binary is, its tools' calls.
// Copilot CLI is not a dependency of Forge (its licence is its own): a person installs it
// (`npm i -g @github/copilot`) or names it in FORGE_COPILOT_BIN.
import { accessSync, constants } from "node:fs";
import path from "node:path";
import type { ScriptedToolCall } from "./model-server.js";

/** Where the CLI is: FORGE_COPILOT_BIN, else `copilot` on PATH; undefined when neither can be started. */
export function copilotBinary(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const candidates = [
    env.FORGE_COPILOT_BIN,
    ...(env.PATH ?? "")
      .split(path.delimiter)
      .filter(Boolean)
      .map((d) => path.join(d, "copilot")),
  ];
  for (const file of candidates) {
    if (!file) continue;
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not this one
    }
  }
  return undefined;
}

/**
 * The environment that keeps Copilot CLI offline: a provider of its own (bring-your-own-key, Anthropic
 * Messages at `baseUrl`), no GitHub sign-in, telemetry or update. A fresh HOME keeps it away from any
 * real ~/.copilot; `cacheDir` (XDG_CACHE_HOME) is where the CLI unpacks itself, shared between runs.
 */
export function offlineCopilotEnv(
  baseUrl: string,
  home: string,
  cacheDir?: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    ...(cacheDir ? { XDG_CACHE_HOME: cacheDir } : {}),
    COPILOT_OFFLINE: "true",
    COPILOT_PROVIDER_BASE_URL: baseUrl,
    COPILOT_PROVIDER_TYPE: "anthropic",
    COPILOT_PROVIDER_API_KEY: "sk-ant-forge-sim-dummy",
    ...extra,
  };
}

/** Copilot CLI's tool calls, for writing scripts (paths absolute). */
export const copilotTools = {
  create: (file: string, content: string): ScriptedToolCall => ({ name: "create", input: { path: file, file_text: content } }),
  view: (file: string): ScriptedToolCall => ({ name: "view", input: { path: file } }),
  edit: (file: string, oldStr: string, newStr: string): ScriptedToolCall => ({
    name: "edit",
    input: { path: file, old_str: oldStr, new_str: newStr },
  }),
  bash: (command: string, description = "Run a command"): ScriptedToolCall => ({ name: "bash", input: { command, description } }),
};
