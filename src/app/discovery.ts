/** Where the App is installed: the repositories it serves, asked of GitHub. */
import { installedRepositories } from "../github/app-client.js";
import type { AppContext } from "./context.js";

/**
 * Where the App is installed, asked of GitHub on every reconcile pass (and at start): a restarted
 * App, a new replica or a serverless instance knows no repository until then, and the webhooks
 * sent while it was down are lost. Repositories no installation holds any more are forgotten.
 */
export async function discoverRepositories(ctx: AppContext): Promise<void> {
  if (!ctx.probot) return;
  const seen = new Set<string>();
  for await (const { installationId, repositories } of installedRepositories(ctx.probot)) {
    for (const r of repositories) {
      seen.add(`${r.owner}/${r.repo}`);
      await ctx.runtimeFor(r.owner, r.repo, installationId, ctx.log, r.id);
    }
  }
  for (const key of [...ctx.runtimes.keys()]) if (!seen.has(key)) ctx.forget(key);
}
