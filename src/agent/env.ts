/**
 * The environment an agent process gets: only what it needs. The host's variables pass through an
 * allowlist; each adapter adds its own (the model key reaches only the agent that uses it); GitHub
 * tokens and the Actions runtime's credentials never pass.
 */

/** Host variables every agent may see. */
const BASE_NAMES = new Set([
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LANGUAGE",
  "TZ",
  "TERM",
  "TMPDIR",
  "TEMP",
  "TMP",
  "CI",
  "NODE_EXTRA_CA_CERTS",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "GIT_AUTHOR_NAME",
  "GIT_AUTHOR_EMAIL",
  "GIT_COMMITTER_NAME",
  "GIT_COMMITTER_EMAIL",
]);
const BASE_PREFIXES = ["LC_", "XDG_"];

/** Never passed, whatever an allowlist or `passEnv` says: GitHub and Actions runtime credentials. */
const FORBIDDEN =
  /^(GITHUB_TOKEN|GH_TOKEN|COPILOT_GITHUB_TOKEN|GH_ENTERPRISE_TOKEN|GITHUB_ENTERPRISE_TOKEN|ACTIONS_RUNTIME_TOKEN|ACTIONS_ID_TOKEN_REQUEST_TOKEN|ACTIONS_ID_TOKEN_REQUEST_URL|ACTIONS_CACHE_URL|ACTIONS_RESULTS_URL|ACTIONS_RUNTIME_URL|INPUT_.*|FORGE_APP_.*|PRIVATE_KEY|WEBHOOK_SECRET|APP_ID)$/;

export function isForbiddenEnvName(name: string): boolean {
  return FORBIDDEN.test(name);
}

/**
 * Picks variables from `parent`: the base allowlist plus names matching `patterns` (exact names or
 * `PREFIX_*`). Forbidden names never pass.
 */
export function pickEnv(parent: NodeJS.ProcessEnv, patterns: readonly string[] = []): Record<string, string> {
  const exact = new Set(patterns.filter((p) => !p.endsWith("*")));
  const prefixes = [...BASE_PREFIXES, ...patterns.filter((p) => p.endsWith("*")).map((p) => p.slice(0, -1))];
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(parent)) {
    if (value === undefined || isForbiddenEnvName(name)) continue;
    if (BASE_NAMES.has(name) || exact.has(name) || prefixes.some((p) => name.startsWith(p))) out[name] = value;
  }
  return out;
}
