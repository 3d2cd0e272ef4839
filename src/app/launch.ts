/**
 * Starting the Forge App from its environment (`npm start`, `forge app`): the variables of the
 * process over those of `.env` in the working folder. With no App credentials at all it first
 * serves the setup page (setup.ts), which registers the App and writes `.env`, then starts on the
 * same port. Variables:
 *   APP_ID, PRIVATE_KEY (PEM, or PRIVATE_KEY_PATH), WEBHOOK_SECRET — from the App's registration
 *   GITHUB_API_URL — REST root for GitHub Enterprise Server or the local GitHub (default api.github.com)
 *   GITHUB_URL — GitHub's web root, for the setup page (default: from GITHUB_API_URL)
 *   PUBLIC_URL — where GitHub reaches this server, for the setup page (default http://HOST:PORT)
 *   GITHUB_ORG — register the App for this organization
 *   PORT (3000), HOST (127.0.0.1; 0.0.0.0 in containers), FORGE_RECONCILE_SECONDS (60), LOG_LEVEL
 *   FORGE_REPLICA_ID — a stable name unique to this replica, so a restart carries on at once (default: random)
 *   FORGE_JOURNAL_KEY — the secret that seals the run journals (default: derived from the private key)
 *   FORGE_WEBHOOK_BUFFER_MB — webhook bodies held at once before their signatures are checked (64;
 *     at least 25, GitHub's cap for one): beyond it a webhook is answered 503 with Retry-After
 *   FORGE_PACE — github (default: Forge's own pace under GitHub's secondary rate limits), octokit
 *     (Octokit's throttling instead: one write a second for the whole process), none (no pacing: a
 *     GitHub Enterprise Server without secondary limits, or the local GitHub)
 */
import { createPrivateKey } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseEnv } from "node:util";
import YAML from "yaml";
import { webUrlOf } from "../github/web-url.js";
import { journalKeyFromSecret } from "./journal-seal.js";
import { startForgeServer, type ForgeServer } from "./server.js";
import { startSetup, type AppCredentials } from "./setup.js";
import { flushAppTelemetry } from "./telemetry.js";

/** app.yml of the package: this file is src/app/launch.ts, or dist/app/launch.js once built. */
export const APP_MANIFEST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "app.yml");

/** What app.yml asks of an installation: its permissions and the events it subscribes to. */
export function appManifestGrants(manifestPath = APP_MANIFEST): {
  permissions: Record<string, "read" | "write" | "admin">;
  events: string[];
} {
  const manifest = YAML.parse(readFileSync(manifestPath, "utf8")) as {
    default_permissions?: Record<string, "read" | "write" | "admin">;
    default_events?: string[];
  };
  return { permissions: { ...manifest.default_permissions }, events: [...(manifest.default_events ?? [])] };
}

/** A configuration the person must fix: one line, no stack. */
export class LaunchError extends Error {}

export interface LaunchOptions {
  env: NodeJS.ProcessEnv;
  /** Where `.env` is read and written. */
  cwd: string;
  log(line: string): void;
  /** Called with the one-time setup link when the App has no credentials yet. */
  onSetup?(url: string): void;
}

const CREDENTIAL_NAMES = ["APP_ID", "PRIVATE_KEY", "PRIVATE_KEY_PATH", "WEBHOOK_SECRET"] as const;

/** The environment: the process's variables over `.env`'s. */
export function appEnvironment(env: NodeJS.ProcessEnv, cwd: string): NodeJS.ProcessEnv {
  const file = path.join(cwd, ".env");
  const fromFile = existsSync(file) ? parseEnv(readFileSync(file, "utf8")) : {};
  return { ...fromFile, ...env };
}

function credentialsOf(env: NodeJS.ProcessEnv): AppCredentials | undefined {
  if (!CREDENTIAL_NAMES.some((n) => env[n])) return undefined;
  const need = (name: string): string => {
    const v = env[name];
    if (!v)
      throw new LaunchError(
        `forge: the environment variable ${name} is required (in the environment or .env; see README.md, "Install it on GitHub")`,
      );
    return v;
  };
  return {
    appId: checkAppId(need("APP_ID"), "APP_ID"),
    privateKey: appPrivateKey(env) ?? need("PRIVATE_KEY"),
    webhookSecret: need("WEBHOOK_SECRET"),
  };
}

/**
 * An App's id as GitHub gives it (the number on the App's settings page; its Client ID, `Iv…`, is
 * accepted too): anything else is refused here, in one line, rather than by the JWT library deep
 * inside the first request.
 */
export function checkAppId(value: string, name: string): string {
  if (!/^(?:[1-9]\d{0,15}|Iv[0-9A-Za-z.]{3,40})$/.test(value.trim()))
    throw new LaunchError(
      `forge: ${name} ${JSON.stringify(value.slice(0, 40))}: expected the App's id, a number (on the App's settings page: "App ID")`,
    );
  return value.trim();
}

/**
 * A private key Node can sign with, or a LaunchError that says what was given instead: GitHub's key
 * is a PEM file (`-----BEGIN RSA PRIVATE KEY-----` … `-----END RSA PRIVATE KEY-----`); OpenSSL's
 * own message ("DECODER routines::unsupported") says nothing of where the key came from.
 */
export function checkPrivateKey(pem: string, from: string): string {
  const hint = !/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(pem)
    ? "it has no -----BEGIN … PRIVATE KEY----- line"
    : !/-----END [A-Z ]*PRIVATE KEY-----/.test(pem)
      ? "it has no -----END … PRIVATE KEY----- line (cut short?)"
      : "its lines do not decode (a character changed, or line breaks lost: keep them, or write them as \\n)";
  try {
    createPrivateKey(pem);
  } catch {
    throw new LaunchError(
      `forge: ${from} is not a private key: ${hint}; give the .pem file GitHub made for the App (its settings page: "Generate a private key")`,
    );
  }
  return pem;
}

/** The App's private key: the file PRIVATE_KEY_PATH names, else PRIVATE_KEY (`\n` escapes accepted), checked; undefined without either. */
export function appPrivateKey(env: NodeJS.ProcessEnv): string | undefined {
  if (!env.PRIVATE_KEY_PATH) {
    const pem = env.PRIVATE_KEY?.replace(/\\n/g, "\n");
    return pem ? checkPrivateKey(pem, "PRIVATE_KEY") : undefined;
  }
  let pem: string;
  try {
    pem = readFileSync(env.PRIVATE_KEY_PATH, "utf8");
  } catch (e) {
    throw new LaunchError(`forge: PRIVATE_KEY_PATH ${env.PRIVATE_KEY_PATH}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  return checkPrivateKey(pem, `PRIVATE_KEY_PATH ${env.PRIVATE_KEY_PATH}`);
}

function numberOf(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new LaunchError(`forge: ${name} must be a whole number, not ${JSON.stringify(raw)}`);
  return n;
}

export async function launchApp(o: LaunchOptions): Promise<ForgeServer> {
  let env = appEnvironment(o.env, o.cwd);
  const apiUrl = env.GITHUB_API_URL || "https://api.github.com";
  const host = env.HOST || "127.0.0.1";
  let port = numberOf(env, "PORT", 3000);
  const reconcileSeconds = numberOf(env, "FORGE_RECONCILE_SECONDS", 60);
  const bufferMb = numberOf(env, "FORGE_WEBHOOK_BUFFER_MB", 64);
  const pacing = paceOf(env);
  let credentials = credentialsOf(env);
  if (!credentials) {
    if (env.NODE_ENV === "production")
      throw new LaunchError("forge: APP_ID, PRIVATE_KEY and WEBHOOK_SECRET are required in production (register the App first: README.md)");
    const setup = await startSetup({
      port,
      host,
      webUrl: env.GITHUB_URL || webUrlOf(apiUrl),
      apiUrl,
      ...(env.PUBLIC_URL ? { publicUrl: env.PUBLIC_URL } : {}),
      ...(env.GITHUB_ORG ? { org: env.GITHUB_ORG } : {}),
      manifestPath: APP_MANIFEST,
      envPath: path.join(o.cwd, ".env"),
      log: o.log,
    });
    o.onSetup?.(setup.url);
    credentials = await setup.registered;
    port = setup.port;
    env = appEnvironment(o.env, o.cwd);
  }
  const server = await startForgeServer({
    appId: credentials.appId,
    privateKey: credentials.privateKey,
    webhookSecret: credentials.webhookSecret,
    ...(env.GITHUB_API_URL ? { baseUrl: env.GITHUB_API_URL } : {}),
    port,
    host,
    reconcileEveryMs: reconcileSeconds * 1000,
    webhookBufferBytes: bufferMb * 1024 * 1024,
    logLevel: (env.LOG_LEVEL as "info" | undefined) ?? "info",
    ...(env.FORGE_REPLICA_ID ? { replicaId: env.FORGE_REPLICA_ID } : {}),
    ...(env.FORGE_JOURNAL_KEY ? { journalKey: journalKeyFromSecret(env.FORGE_JOURNAL_KEY) } : {}),
    ...pacing,
  });
  // A process that stops sends the spans its exporters still hold (the run span of a run just completed).
  return { ...server, close: () => server.close().then(flushAppTelemetry) };
}

/** FORGE_PACE: whose pacing keeps the App's requests under GitHub's secondary rate limits. */
function paceOf(env: NodeJS.ProcessEnv): { pace?: false; octokitDefaults?: Record<string, unknown> } {
  const value = env.FORGE_PACE || "github";
  if (value === "github") return {};
  if (value === "octokit") return { pace: false };
  if (value === "none") return { pace: false, octokitDefaults: { throttle: { enabled: false } } };
  throw new LaunchError(`forge: FORGE_PACE ${JSON.stringify(value)}: expected github, octokit or none`);
}
