/** The agent adapters Forge runs (docs/runner.md#adapters): Claude Code, Codex, or any command. */
export const ADAPTERS = ["claude", "codex", "command"] as const;
export type Adapter = (typeof ADAPTERS)[number];
