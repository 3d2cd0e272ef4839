/**
 * The action's tick mode (`mode: tick`, templates/workflows/forge-tick.yml): one pass of the
 * reconciler over the job's repository, acting as the Forge App — what `forge tick` does, run from
 * Forge's own action so a scheduled job fetches nothing by a bare package name. action/build.mjs
 * bundles this module as action/dist/tick.js, and action/src/entry.ts loads it only in tick mode, so
 * a task job never loads the App.
 *
 * Inputs: `app-id`, `app-private-key` (the App's registration, as secrets) and optionally
 * `journal-key` (the App's FORGE_JOURNAL_KEY when its servers use one). The key is masked before
 * anything is logged, and the job's own token is not used.
 */
import * as core from "@actions/core";
import { Probot } from "probot";
import { createForgeApp } from "./app.js";
import { journalKeyFrom, journalKeyFromSecret } from "./journal-seal.js";

/** Registers a secret with the runner's log masking, line by line as well (a PEM spans lines). */
function mask(secret: string): void {
  if (!secret) return;
  core.setSecret(secret);
  for (const line of secret.split(/\r?\n/)) if (line.trim()) core.setSecret(line.trim());
}

/** The tick: reads the inputs and the job's environment, reconciles, and owns the one `setFailed`. */
export async function runTick(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  try {
    const appId = core.getInput("app-id");
    // A key stored with literal `\n`s (one-line secrets) is a PEM again.
    const rawKey = core.getInput("app-private-key");
    const journalSecret = core.getInput("journal-key");
    mask(rawKey);
    mask(journalSecret);
    const privateKey = rawKey.replace(/\\n/g, "\n");
    mask(privateKey);
    if (!appId || !privateKey)
      throw new Error(
        "mode 'tick' acts as the Forge App: pass `app-id: ${{ secrets.FORGE_APP_ID }}` and `app-private-key: ${{ secrets.FORGE_APP_PRIVATE_KEY }}` (the App's registration, as secrets)",
      );
    const full = env.GITHUB_REPOSITORY;
    if (!full || !/^[^/\s]+\/[^/\s]+$/.test(full))
      throw new Error("GITHUB_REPOSITORY must be owner/name; is this running inside GitHub Actions?");
    const probot = new Probot({
      appId,
      privateKey,
      ...(env.GITHUB_API_URL ? { baseUrl: env.GITHUB_API_URL } : {}),
      logLevel: "warn",
    });
    const journalKey = journalSecret ? journalKeyFromSecret(journalSecret) : journalKeyFrom(privateKey);
    const forge = createForgeApp({ background: false, journalKey });
    await probot.load(forge);
    const [owner, repo] = full.split("/") as [string, string];
    await forge.tickRepository(owner, repo);
    forge.stop();
    core.info(`Forge tick: reconciled ${full}`);
  } catch (e) {
    core.setFailed(`Forge tick failed: ${(e as Error).message}`);
  }
}
