// `forge sim`'s program, run as a process of its own (src/cli/programs.ts): the local GitHub
// (src/local-github/program.ts) with Forge's own setup — the runner serves Forge's published action,
// `forge-dev/forge/action@v1` (what `forge init`'s workflow uses), from this package's action/, and
// `--forge-app <dir>` does what an installer does on GitHub: registers the Forge App from app.yml,
// installs it on the seeded repositories with the state-branch ruleset (README.md, "Protect the state
// branches"), and writes its credentials to `<dir>/.env` for `forge app --dir <dir>`.
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { appManifestGrants } from "../app/launch.js";
import { WEBHOOK_PATH } from "../app/server.js";
import { updateEnvFile } from "../app/setup.js";
import { stateBranchRuleset } from "../app/start-run.js";
import { runLocalGitHub } from "../local-github/program.js";
import type { Sim } from "../local-github/server.js";
import { checkoutRoot } from "./child.js";
import { DEFAULT_FORGE_APP_URL, FORGE_ACTION, SIM_HELP, SIM_OPTIONS } from "./sim-options.js";

const base = process.env.FORGE_SIM_CWD ?? process.cwd();

/** `--forge-app <dir>`: the Forge App registered, installed with the state-branch ruleset, and its `.env` written. */
async function forgeApp(sim: Sim, dir: string, appUrl: string, seeded: string[]): Promise<string[]> {
  const url = new URL(appUrl);
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const webhookSecret = randomBytes(20).toString("hex");
  const app = sim.control.registerApp({
    slug: "forge",
    name: "Forge",
    publicKeyPem: publicKey.export({ type: "spki", format: "pem" }).toString(),
    webhookUrl: `${url.origin}${WEBHOOK_PATH}`,
    webhookSecret,
    ...appManifestGrants(),
  });
  const owners = [...new Set(seeded.map((r) => r.split("/")[0]!))];
  for (const owner of owners)
    sim.control.install(
      app.id,
      owner,
      seeded.filter((r) => r.startsWith(`${owner}/`)),
    );
  for (const full of seeded) {
    const answer = await sim.control.api(full.split("/")[0]!, "POST", `/repos/${full}/rulesets`, stateBranchRuleset(app.id));
    if (answer.status !== 201) throw new Error(`the state-branch ruleset of ${full} was refused: ${JSON.stringify(answer.body)}`);
  }
  const folder = path.resolve(base, dir);
  mkdirSync(folder, { recursive: true });
  const envFile = path.join(folder, ".env");
  updateEnvFile(envFile, {
    APP_ID: String(app.id),
    PRIVATE_KEY: privateKey.export({ type: "pkcs1", format: "pem" }).toString(),
    WEBHOOK_SECRET: webhookSecret,
    GITHUB_API_URL: sim.apiUrl,
    HOST: url.hostname,
    PORT: url.port || (url.protocol === "https:" ? "443" : "80"),
    // The local GitHub has no secondary rate limits to pace under.
    FORGE_PACE: "none",
  });
  return [
    `app:      forge (id ${app.id}) installed on ${seeded.join(", ") || "no repository"}, with the state-branch ruleset; webhooks to ${url.origin}${WEBHOOK_PATH}`,
    `          its credentials are in ${envFile}: start it with \`npx forge app --dir ${dir}\``,
  ];
}

runLocalGitHub(process.argv.slice(2), base, {
  options: SIM_OPTIONS,
  help: SIM_HELP,
  actions: () => ({ [FORGE_ACTION]: path.join(checkoutRoot(), "action") }),
  setup: async (sim, values, seeded) => {
    const dir = values["forge-app"] as string | undefined;
    return dir ? forgeApp(sim, dir, (values["forge-app-url"] as string | undefined) ?? DEFAULT_FORGE_APP_URL, seeded) : [];
  },
}).catch((e: unknown) => {
  console.error(`forge sim: ${(e as Error).message}`);
  process.exit(2);
});
