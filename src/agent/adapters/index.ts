import type { AdapterName } from "../types.js";
import { claudeAdapter } from "./claude.js";
import { codexAdapter } from "./codex.js";
import { commandAdapter } from "./command.js";
import { copilotAdapter } from "./copilot.js";
import { geminiAdapter } from "./gemini.js";
import { opencodeAdapter } from "./opencode.js";
import { qwenAdapter } from "./qwen.js";
import type { Adapter } from "./types.js";

export const ADAPTERS: Record<AdapterName, Adapter> = {
  claude: claudeAdapter,
  codex: codexAdapter,
  gemini: geminiAdapter,
  opencode: opencodeAdapter,
  qwen: qwenAdapter,
  copilot: copilotAdapter,
  command: commandAdapter,
};

export function adapterFor(name: AdapterName): Adapter {
  return ADAPTERS[name];
}

export { claudeArgs, StreamJsonParser, CLAUDE_ENV } from "./claude.js";
export { codexArgs, CodexJsonParser, CODEX_ENV } from "./codex.js";
export { geminiArgs, GeminiStreamParser, GEMINI_ENV } from "./gemini.js";
export { opencodeArgs, OpencodeJsonParser, OPENCODE_ENV } from "./opencode.js";
export { qwenArgs, QwenStreamParser, QWEN_ENV } from "./qwen.js";
export { copilotArgs, CopilotJsonParser, COPILOT_ENV } from "./copilot.js";
export type { Adapter, AdapterInput, AdapterOutcome, Invocation, OutputParser, ProgressDraft } from "./types.js";
