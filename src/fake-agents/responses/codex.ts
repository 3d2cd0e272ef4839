// The real Codex CLI, offline: its binary, a CODEX_HOME whose config sends every model request to the
// scripted Responses server, and whether Codex's sandbox can start on this machine.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** `node_modules/.bin/codex` of this package (its launcher finds the platform's native binary). */
export function codexBinary(): string {
  const bin = fileURLToPath(new URL("../../../node_modules/.bin/codex", import.meta.url));
  if (!existsSync(bin)) throw new Error(`codex not found at ${bin}: run npm ci (@openai/codex is a devDependency)`);
  return bin;
}

/**
 * A fresh CODEX_HOME whose config.toml sends every model request to `baseUrl` (a provider `forge`
 * with `wire_api = "responses"`, key from OPENAI_API_KEY, `retries` request and stream retries —
 * none by default) and turns off what would reach the network otherwise (analytics, feedback,
 * update checks). `tmpWritable: false` also takes /tmp and $TMPDIR out of the `workspace-write`
 * sandbox's writable places, so a test can tell `--add-dir` works. Returns the environment for the
 * CLI: only PATH is inherited from the host, so no real key or setting leaks in.
 */
export function offlineCodexEnv(
  baseUrl: string,
  codexHome: string,
  extra: Record<string, string> = {},
  opts: { retries?: number; model?: string; tmpWritable?: boolean } = {},
): Record<string, string> {
  mkdirSync(codexHome, { recursive: true });
  const retries = opts.retries ?? 0;
  writeFileSync(
    path.join(codexHome, "config.toml"),
    [
      `model = ${JSON.stringify(opts.model ?? "gpt-5.5")}`,
      `model_provider = "forge"`,
      `check_for_update_on_startup = false`,
      "",
      "[analytics]",
      "enabled = false",
      "",
      "[feedback]",
      "enabled = false",
      "",
      ...(opts.tmpWritable === false ? ["[sandbox_workspace_write]", "exclude_slash_tmp = true", "exclude_tmpdir_env_var = true", ""] : []),
      "[model_providers.forge]",
      `name = "Forge scripted Responses server"`,
      `base_url = ${JSON.stringify(baseUrl)}`,
      `wire_api = "responses"`,
      `env_key = "OPENAI_API_KEY"`,
      `request_max_retries = ${retries}`,
      `stream_max_retries = ${retries}`,
      "",
    ].join("\n"),
  );
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: codexHome,
    CODEX_HOME: codexHome,
    OPENAI_API_KEY: "sk-forge-sim-dummy",
    ...extra,
  };
}

/**
 * Whether Codex's Linux sandbox can start here (`codex sandbox -- /bin/true`). It cannot where
 * unprivileged user namespaces are forbidden, e.g. GitHub's ubuntu-24.04 runners ("bwrap:
 * loopback: Failed RTM_NEWADDR: Operation not permitted").
 */
export function codexSandboxWorks(codexHome: string): { ok: boolean; output: string } {
  mkdirSync(codexHome, { recursive: true });
  const r = spawnSync(codexBinary(), ["sandbox", "-c", 'sandbox_mode="workspace-write"', "--", "/bin/true"], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: codexHome, CODEX_HOME: codexHome },
    encoding: "utf8",
    timeout: 30_000,
  });
  return { ok: r.status === 0, output: `${r.stdout ?? ""}${r.stderr ?? ""}`.trim() };
}
