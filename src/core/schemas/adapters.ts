/** The agent adapters Forge runs (docs/runner.md#adapters): Claude Code, Codex, Gemini CLI, opencode, Qwen Code, GitHub Copilot CLI, or any command. */
export const ADAPTERS = ["claude", "codex", "gemini", "opencode", "qwen", "copilot", "command"] as const;
export type Adapter = (typeof ADAPTERS)[number];
