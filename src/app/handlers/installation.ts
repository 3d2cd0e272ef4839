/** `installation` and `installation_repositories`: the App's view changes at once, no restart needed. */
import type { Context } from "probot";
import { logOf, type AppContext } from "../context.js";

export async function onInstallation(
  ctx: AppContext,
  context: Context<"installation"> | Context<"installation_repositories">,
): Promise<void> {
  const payload = context.payload as {
    action: string;
    installation: { id: number; account?: { login?: string } | null };
    repositories?: { full_name: string }[];
    repositories_added?: { full_name: string }[];
    repositories_removed?: { full_name: string }[];
  };
  const id = payload.installation.id;
  const log = logOf(context);
  const gone = payload.action === "deleted" || payload.action === "suspend";
  if (gone) {
    for (const [key, rt] of [...ctx.runtimes]) if (rt.installationId === id) ctx.forget(key);
    return;
  }
  for (const r of payload.repositories_removed ?? []) if (ctx.runtimes.get(r.full_name)?.installationId === id) ctx.forget(r.full_name);
  for (const r of [...(payload.repositories ?? []), ...(payload.repositories_added ?? [])]) {
    const [owner, repo] = r.full_name.split("/");
    if (owner && repo) await ctx.runtimeFor(owner, repo, id, log);
  }
}
