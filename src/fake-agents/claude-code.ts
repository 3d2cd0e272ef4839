// Running the real Claude Code CLI offline against the scripted model server: its environment.
// (Its binary and a one-prompt run, which only tests use, are in test/helpers/claude-code.ts.)
/**
 * The environment that keeps Claude Code offline and quiet: only the model server is contacted.
 * A fresh HOME keeps it away from any real ~/.claude settings or credentials.
 */
export function offlineClaudeEnv(baseUrl: string, home: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    ANTHROPIC_BASE_URL: baseUrl,
    ANTHROPIC_API_KEY: "sk-ant-forge-sim-dummy",
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    DISABLE_BUG_COMMAND: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    ...extra,
  };
}
