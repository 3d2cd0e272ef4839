/** The agent adapters Forge runs (docs/runner.md#adapters): Claude Code, Codex, Gemini CLI, GitHub Copilot CLI, or any command. */
export const ADAPTERS = ["claude", "codex", "gemini", "copilot", "command"] as const;
export type Adapter = (typeof ADAPTERS)[number];
