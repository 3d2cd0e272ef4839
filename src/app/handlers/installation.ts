/**
 * `installation` and `installation_repositories`: the App's view changes at once, no restart needed.
 * Suspended or deleted, an installation's repositories are no longer served (GitHub answers its
 * tokens 403 and sends it no other webhook), and the log says so; unsuspended, they are served
 * again and their running runs reconciled with GitHub at once — what happened meanwhile (merges, CI,
 * comments) is read, not waited for.
 */
import type { Context } from "probot";
import { logOf, type AppContext } from "../context.js";
import { reconcileRepository } from "../sweep.js";

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
    const repositories = [...ctx.runtimes].filter(([, rt]) => rt.installationId === id).map(([key]) => key);
    for (const key of repositories) ctx.forget(key);
    log.warn(
      { installationId: id, account: payload.installation.account?.login, repositories },
      payload.action === "suspend"
        ? "installation suspended: Forge stops acting on its repositories until it is unsuspended (their runs wait)"
        : "installation deleted: Forge no longer acts on its repositories",
    );
    return;
  }
  for (const r of payload.repositories_removed ?? []) if (ctx.runtimes.get(r.full_name)?.installationId === id) ctx.forget(r.full_name);
  const served = [];
  for (const r of [...(payload.repositories ?? []), ...(payload.repositories_added ?? [])]) {
    const [owner, repo] = r.full_name.split("/");
    if (owner && repo) served.push(await ctx.runtimeFor(owner, repo, id, log));
  }
  if (payload.action === "unsuspend") {
    log.info({ installationId: id, repositories: served.length }, "installation unsuspended: Forge acts again, reconciling its runs");
    for (const rt of served) await reconcileRepository(ctx, rt);
  }
}
