// The real Gemini CLI, offline: its binary, and a home whose settings send every model request to the
// scripted Gemini server with an API key (not the "gateway" auth GOOGLE_GEMINI_BASE_URL selects by
// itself, which headless mode refuses) and turn off what would reach the network otherwise.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** `node_modules/.bin/gemini` of this package. */
export function geminiBinary(): string {
  const bin = fileURLToPath(new URL("../../../node_modules/.bin/gemini", import.meta.url));
  if (!existsSync(bin)) throw new Error(`gemini not found at ${bin}: run npm ci (@google/gemini-cli is a devDependency)`);
  return bin;
}

/**
 * A Gemini CLI home (GEMINI_CLI_HOME) at `home` whose settings select the `gemini-api-key` auth and
 * make at most `maxAttempts` tries per request (default 1: a 429 ends the session at once). Returns the
 * environment for the CLI: only PATH is inherited from the host, so no real key or setting leaks in.
 */
export function offlineGeminiEnv(
  baseUrl: string,
  home: string,
  extra: Record<string, string> = {},
  opts: { maxAttempts?: number } = {},
): Record<string, string> {
  const settings = {
    security: { auth: { selectedType: "gemini-api-key" }, folderTrust: { enabled: false } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false, maxAttempts: opts.maxAttempts ?? 1 },
  };
  mkdirSync(path.join(home, ".gemini"), { recursive: true });
  writeFileSync(path.join(home, ".gemini", "settings.json"), `${JSON.stringify(settings, null, 2)}\n`);
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    GEMINI_CLI_HOME: home,
    GOOGLE_GEMINI_BASE_URL: baseUrl,
    GEMINI_API_KEY: "forge-sim-dummy-key",
    ...extra,
  };
}
