/**
 * `forge tick` — one pass of the reconciler over a repository's runs, for installs without a
 * long-lived server (a scheduled workflow runs it; see templates/workflows/forge-tick.yml). It acts
 * as the Forge App, so it needs the App's credentials: APP_ID and PRIVATE_KEY (as secrets), and
 * GITHUB_API_URL for GitHub Enterprise Server or the local GitHub.
 */
import type { Command } from "commander";
import { CliError } from "../io.js";
import type { CommandContext } from "./index.js";

export function registerTick(program: Command, { io }: CommandContext): void {
  program
    .command("tick")
    .description("Reconcile every run of a repository once: repair lost webhooks, mark silent agents STALE, retry, dispatch.")
    .option("--repo <owner/name>", "repository (default: $GITHUB_REPOSITORY)")
    .action(async (opts: { repo?: string }) => {
      const full = opts.repo ?? process.env.GITHUB_REPOSITORY;
      if (!full) throw new CliError("say which repository: --repo owner/name (or set GITHUB_REPOSITORY)");
      if (!/^[^/\s]+\/[^/\s]+$/.test(full))
        throw new CliError(
          `${opts.repo !== undefined ? "--repo" : "GITHUB_REPOSITORY"} ${JSON.stringify(full)}: expected a repository as owner/name`,
        );
      // templates/workflows/forge-tick.yml passes FORGE_APP_ID / FORGE_APP_PRIVATE_KEY (names the agent
      // never receives, src/agent/env.ts); APP_ID / PRIVATE_KEY are `npm start`'s names.
      const appId = process.env.FORGE_APP_ID || process.env.APP_ID;
      const privateKey = (process.env.FORGE_APP_PRIVATE_KEY || process.env.PRIVATE_KEY)?.replace(/\\n/g, "\n");
      if (!appId || !privateKey)
        throw new CliError(
          "acts as the Forge App: set FORGE_APP_ID and FORGE_APP_PRIVATE_KEY (or APP_ID and PRIVATE_KEY) from the App's registration, as secrets",
        );
      // Loaded here, once the arguments are known good: the App is most of the CLI's start-up time.
      const [{ Probot }, { createForgeApp }, { journalKeyFrom, journalKeyFromSecret }, { checkAppId, checkPrivateKey, LaunchError }] =
        await Promise.all([
          import("probot"),
          import("../../app/app.js"),
          import("../../app/journal-seal.js"),
          import("../../app/launch.js"),
        ]);
      const idName = process.env.FORGE_APP_ID ? "FORGE_APP_ID" : "APP_ID";
      const keyName = process.env.FORGE_APP_PRIVATE_KEY ? "FORGE_APP_PRIVATE_KEY" : "PRIVATE_KEY";
      try {
        checkAppId(appId, idName);
        checkPrivateKey(privateKey, keyName);
      } catch (e) {
        if (e instanceof LaunchError) throw new CliError(e.message.replace(/^forge: /, ""));
        throw e;
      }
      const secret = process.env.FORGE_JOURNAL_KEY;
      // The journal key: FORGE_JOURNAL_KEY when the App's servers use one, else derived from the private key (as they do by default).
      const journalKey = secret ? journalKeyFromSecret(secret) : journalKeyFrom(privateKey);
      const probot = new Probot({
        appId,
        privateKey,
        ...(process.env.GITHUB_API_URL ? { baseUrl: process.env.GITHUB_API_URL } : {}),
        logLevel: "warn",
      });
      const forge = createForgeApp({ background: false, journalKey });
      await probot.load(forge);
      const [owner, repo] = full.split("/") as [string, string];
      await forge.tickRepository(owner, repo);
      io.out(`forge tick: reconciled ${full}\n`);
    });
}
