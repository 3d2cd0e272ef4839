/**
 * `installation` and `installation_repositories`: the App's view changes at once, no restart needed.
 * Suspended or deleted, an installation's repositories are no longer served (GitHub answers its
 * tokens 403 — deleted, 401 — and sends it no other webhook), and the log says so, naming the runs
 * that stop; a deleted installation's webhooks still on their way are not acted on, and nothing is
 * called with its tokens. Unsuspended, or installed again, the repositories are served again and
 * their running runs reconciled with GitHub at once — what happened meanwhile (jobs ended, merges,
 * CI, comments) is read, not waited for.
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
    const served = [...ctx.runtimes].filter(([, rt]) => rt.installationId === id);
    // The runs that stop where they are (read from what the runtime knew; nothing is asked of GitHub with a dead token).
    const runs = served.flatMap(([key, rt]) => [...rt.runs].filter(([, r]) => r.status === "running").map(([runId]) => `${key}#${runId}`));
    if (payload.action === "deleted") ctx.removed.add(id);
    for (const [key] of served) ctx.forget(key);
    log.warn(
      { installationId: id, account: payload.installation.account?.login, repositories: served.map(([key]) => key), runs },
      payload.action === "suspend"
        ? "installation suspended: Forge stops acting on its repositories until it is unsuspended (their runs wait)"
        : "installation deleted: Forge no longer acts on its repositories and makes no call with its tokens; their runs stop where they are — install the App again and Forge reconciles them at once (a task that failed or is held meanwhile: /forge retry <task>)",
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
  } else if (payload.action === "created" && served.length) {
    // Installed (again, after a deletion): the runs a repository has are read and reconciled at once
    // — what happened meanwhile (jobs ended, merges, comments) came with no webhook. In the
    // background (counted for `idle`): the installation's webhook is answered first.
    const work = (async () => {
      for (const rt of served) await reconcileRepository(ctx, rt);
    })().catch((e: unknown) =>
      log.warn({ installationId: id, err: (e as Error).message }, "could not reconcile the runs of a new installation"),
    );
    ctx.inFlight.add(work);
    void work.finally(() => ctx.inFlight.delete(work));
  }
}
