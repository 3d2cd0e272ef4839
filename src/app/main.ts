/**
 * `npm start`: the Forge App as a Node server, configured from the environment.
 *   APP_ID, PRIVATE_KEY (PEM, or PRIVATE_KEY_PATH), WEBHOOK_SECRET — from the App's registration
 *   GITHUB_API_URL — REST root for GitHub Enterprise Server or the local GitHub (default api.github.com)
 *   PORT (3000), HOST (127.0.0.1; 0.0.0.0 in containers), FORGE_RECONCILE_SECONDS (60), LOG_LEVEL
 *   FORGE_REPLICA_ID — a stable name unique to this replica, so a restart carries on at once (default: random)
 *   FORGE_JOURNAL_KEY — the secret that seals the run journals (default: derived from the private key)
 */
import { readFileSync } from "node:fs";
import { journalKeyFromSecret } from "./journal-seal.js";
import { startForgeServer } from "./server.js";

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    console.error(`forge: the environment variable ${name} is required (see README.md, "Install on GitHub").`);
    process.exit(2);
  }
  return value;
}

const privateKey = process.env.PRIVATE_KEY_PATH
  ? readFileSync(process.env.PRIVATE_KEY_PATH, "utf8")
  : required("PRIVATE_KEY").replace(/\\n/g, "\n");
const server = await startForgeServer({
  appId: required("APP_ID"),
  privateKey,
  webhookSecret: required("WEBHOOK_SECRET"),
  ...(process.env.GITHUB_API_URL ? { baseUrl: process.env.GITHUB_API_URL } : {}),
  port: Number(process.env.PORT ?? 3000),
  host: process.env.HOST ?? "127.0.0.1",
  reconcileEveryMs: Number(process.env.FORGE_RECONCILE_SECONDS ?? 60) * 1000,
  logLevel: (process.env.LOG_LEVEL as "info" | undefined) ?? "info",
  ...(process.env.FORGE_REPLICA_ID ? { replicaId: process.env.FORGE_REPLICA_ID } : {}),
  ...(process.env.FORGE_JOURNAL_KEY ? { journalKey: journalKeyFromSecret(process.env.FORGE_JOURNAL_KEY) } : {}),
});
console.log(`Forge App listening: webhooks at ${server.webhookUrl}`);
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void server.close().then(() => process.exit(0)));
