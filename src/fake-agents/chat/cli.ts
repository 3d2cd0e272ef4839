// The real opencode and Qwen Code CLIs, offline: their binaries, and a runner environment whose
// model requests go to the scripted Chat Completions server with a dummy key.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Where `npm run install:agent-clis` puts opencode and Qwen Code (test/agent-clis: apart from Forge's
 * own dependencies, see its package.json): the demo and the tests look here first, then in
 * node_modules/.bin, then on PATH.
 */
export const AGENT_CLIS_BIN = fileURLToPath(new URL("../../../test/agent-clis/node_modules/.bin", import.meta.url));

/** The CLI's binary from test/agent-clis (or node_modules/.bin); FORGE_TEST_<NAME>_BIN overrides it. */
function binary(name: "opencode" | "qwen", pkg: string): string {
  const override = process.env[`FORGE_TEST_${name.toUpperCase()}_BIN`];
  if (override) return override;
  const candidates = [path.join(AGENT_CLIS_BIN, name), fileURLToPath(new URL(`../../../node_modules/.bin/${name}`, import.meta.url))];
  const bin = candidates.find((c) => existsSync(c));
  if (!bin) throw new Error(`${name} not found at ${candidates[0]}: run npm run install:agent-clis (installs ${pkg})`);
  return bin;
}

export const opencodeBinary = () => binary("opencode", "opencode-ai");
export const qwenBinary = () => binary("qwen", "@qwen-code/qwen-code");

/**
 * The runner's environment for either CLI against the scripted server at `baseUrl` (`…/v1`): only
 * PATH from the host, HOME a folder of its own. For Qwen Code, the runner's settings make it try a
 * failed call once (`maxRetries`), so a 429 the CLI gives up on reaches Forge within a test's time.
 */
export function offlineChatEnv(baseUrl: string, home: string, extra: Record<string, string> = {}): Record<string, string> {
  const qwenHome = path.join(home, ".qwen");
  mkdirSync(qwenHome, { recursive: true });
  writeFileSync(path.join(qwenHome, "settings.json"), `${JSON.stringify({ model: { generationConfig: { maxRetries: 0 } } }, null, 2)}\n`);
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    QWEN_HOME: qwenHome,
    OPENAI_BASE_URL: baseUrl,
    OPENAI_API_KEY: "forge-sim-dummy-key",
    ...extra,
  };
}
