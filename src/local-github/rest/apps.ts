// REST operations of the local GitHub: Apps and their installations (docs.github.com/rest/apps),
// and the rate limit.
import { HttpError, SUSPENDED } from "../auth.js";
import type { Handler } from "./context.js";
import { invalid, notFound, ok, repoOf } from "./context.js";

export const appHandlers: Record<string, Handler> = {
  // docs.github.com/rest/apps/apps — every endpoint here is called with the App's JWT.
  "apps/get-authenticated": async (ctx) => ok(ctx.core.model.app(ctx.app!)),
  "apps/list-installations": async (ctx) =>
    ok(
      ctx.page(
        [...ctx.core.state.installations.values()].filter((i) => i.appId === ctx.app!.id).map((i) => ctx.core.model.installation(i)),
      ),
    ),
  "apps/get-installation": async (ctx) => {
    const inst = ctx.core.state.installations.get(Number(ctx.params.installation_id));
    if (!inst || inst.appId !== ctx.app!.id) throw notFound(ctx);
    return ok(ctx.core.model.installation(inst));
  },
  "apps/get-repo-installation": async (ctx) => {
    const repo = repoOf(ctx);
    const inst = ctx.core.state.installationsFor(repo).find((i) => i.appId === ctx.app!.id);
    if (!inst) throw notFound(ctx);
    return ok(ctx.core.model.installation(inst));
  },
  // "Create an installation access token for an app": 201; tokens expire after one hour; asking for
  // a permission or repository the installation lacks is 422.
  "apps/create-installation-access-token": async (ctx) => {
    const { core } = ctx;
    const inst = core.state.installations.get(Number(ctx.params.installation_id));
    if (!inst || inst.appId !== ctx.app!.id) throw notFound(ctx);
    if (inst.suspended) throw new HttpError(403, SUSPENDED, ctx.doc);
    const b = ctx.body ?? {};
    let repoIds: number[] | undefined;
    const names = b.repositories as string[] | undefined;
    const ids = b.repository_ids as number[] | undefined;
    const visible = [...core.state.repos.values()].filter((r) => core.state.installationsFor(r).includes(inst));
    if (names || ids) {
      repoIds = [];
      for (const n of names ?? []) {
        const r = visible.find((v) => v.name === n);
        if (!r) throw invalid(ctx, "There is at least one repository that does not exist or is not accessible to the parent installation.");
        repoIds.push(r.id);
      }
      for (const id of ids ?? []) {
        if (!visible.some((v) => v.id === id))
          throw invalid(ctx, "There is at least one repository that does not exist or is not accessible to the parent installation.");
        repoIds.push(id);
      }
    }
    let perms = { ...inst.permissions };
    if (b.permissions) {
      const asked = b.permissions as Record<string, "read" | "write">;
      for (const [k, v] of Object.entries(asked)) {
        const have = inst.permissions[k];
        if (!have || (v === "write" && have === "read"))
          throw invalid(ctx, "The permissions requested are not granted to this installation.");
      }
      perms = { ...asked };
    }
    const t = core.mintInstallationToken(inst, repoIds, perms);
    const out: Record<string, unknown> = {
      token: t.token,
      expires_at: new Date(t.expiresAt).toISOString().replace(/\.\d{3}Z$/, "Z"),
      permissions: perms,
      repository_selection: repoIds ? "selected" : inst.repositories === "all" ? "all" : "selected",
    };
    if (repoIds) out.repositories = repoIds.map((id) => core.model.repo(core.state.repos.get(id)!));
    return ok(out, 201);
  },
  // docs.github.com/rest/apps/installations#list-repositories-accessible-to-the-app-installation
  "apps/list-repos-accessible-to-installation": async (ctx) => {
    const { core } = ctx;
    const inst = core.state.installations.get(ctx.token!.installationId!);
    if (!inst) throw new HttpError(401, "Bad credentials", ctx.doc);
    const repos = [...core.state.repos.values()].filter(
      (r) => core.state.installationsFor(r).includes(inst) && (!ctx.token!.repoIds || ctx.token!.repoIds.includes(r.id)),
    );
    return ok({
      total_count: repos.length,
      repository_selection: inst.repositories === "all" ? "all" : "selected",
      repositories: ctx.page(repos).map((r) => core.model.repo(r)),
    });
  },
  "rate-limit/get": async ({ core: sim }) => {
    const reset = Math.floor(sim.clock.now() / 1000) + 3600;
    const core = { limit: 5000, used: 0, remaining: 5000, reset };
    return ok({ resources: { core, search: { ...core, limit: 30, remaining: 30 } }, rate: core });
  },
};
