// An organisation's rulesets (docs.github.com/rest/orgs/rules): created, listed, read, updated and
// deleted at `/orgs/{org}/rulesets` by the organisation's owners, or by an App installed on the
// organisation with the Administration permission of the organisation
// ("organization_administration"); anyone else is answered 404, the only refusal GitHub's
// description of these routes lists. Each names its repositories by `conditions.repository_name`
// (fnmatch patterns of names, `~ALL`; `exclude` wins) or `repository_id`, and its refs by
// `conditions.ref_name`, and is applied with the repository's own (rulesets.ts): in a repository's
// list and reads (`includes_parents`), in `rules/branches/{branch}` with
// `ruleset_source_type: "Organization"`, and on every write of a matching ref. "Require merge
// queue" is not a rule an organisation's ruleset can hold (the description's `org-rules` leaves it
// out, so such a request is refused as invalid).
import { HttpError, hasPermission } from "./auth.js";
import type { Handler, RestCtx } from "./rest/index.js";
import { fromBody, ofTargets, orgData, rulesetJson, type OrgData, type Ruleset } from "./rulesets.js";
import type { User } from "./state.js";
import { now } from "./state.js";

/** The organisation the request names, and its data; 404 for a person's account or none. */
function orgOf(ctx: RestCtx): { org: User; data: OrgData } {
  const org =
    ctx.core.state.users.get(ctx.params.org ?? "") ??
    [...ctx.core.state.users.values()].find((u) => u.login.toLowerCase() === ctx.params.org?.toLowerCase());
  const data = org ? orgData(org) : undefined;
  if (!org || !data) throw new HttpError(404, "Not Found", ctx.doc);
  return { org, data };
}

/**
 * Whether the caller may read (`write`: change) the organisation's rulesets: an owner, or an
 * installation on the organisation with `organization_administration`; 404 otherwise.
 */
function authorizeOrg(ctx: RestCtx, org: User, data: OrgData, write: boolean): void {
  const t = ctx.token;
  const owner = (!t || t.kind === "user") && !ctx.app && data.owners.has(ctx.actor.login.toLowerCase()) && ctx.actor.login !== "ghost";
  const inst = t?.kind === "installation" ? ctx.core.state.installations.get(t.installationId!) : undefined;
  const app =
    !!inst && inst.account.id === org.id && hasPermission(t!.permissions, "organization_administration", write ? "write" : "read");
  if (!owner && !app) throw new HttpError(404, "Not Found", ctx.doc);
}

/** The repositories of a request's conditions: names (include/exclude) or ids; 422 for custom properties, which the local GitHub has not. */
function repositoriesOf(ctx: RestCtx, base: Ruleset["org"]): NonNullable<Ruleset["org"]> {
  const c = ctx.body?.conditions as
    | {
        repository_name?: { include?: string[]; exclude?: string[] };
        repository_id?: { repository_ids?: number[] };
        repository_property?: unknown;
      }
    | undefined;
  const login = base!.login;
  if (!c) return base!;
  if (c.repository_property)
    throw new HttpError(422, "Validation Failed", ctx.doc, {
      errors: ["conditions.repository_property: Forge's local GitHub has no custom repository properties"],
    });
  if (c.repository_id) return { login, repositoryIds: c.repository_id.repository_ids ?? [] };
  return { login, repositoryName: { include: c.repository_name?.include ?? [], exclude: c.repository_name?.exclude ?? [] } };
}

function find(ctx: RestCtx, data: OrgData): number {
  const at = data.rulesets.findIndex((r) => String(r.id) === ctx.params.ruleset_id);
  if (at < 0) throw new HttpError(404, "Not Found", ctx.doc);
  return at;
}

export const orgRulesetHandlers: Record<string, Handler> = {
  // docs.github.com/rest/orgs/rules#create-an-organization-repository-ruleset
  "repos/create-org-ruleset": async (ctx) => {
    const { org, data } = orgOf(ctx);
    authorizeOrg(ctx, org, data, true);
    const scope = repositoriesOf(ctx, { login: org.login, repositoryName: { include: [], exclude: [] } });
    const set = fromBody(ctx, data.rulesets, { id: ctx.core.state.id(), createdAt: now(), org: scope });
    data.rulesets.push(set);
    return { status: 201, body: rulesetJson(ctx, { org }, set) };
  },
  "repos/get-org-rulesets": async (ctx) => {
    const { org, data } = orgOf(ctx);
    authorizeOrg(ctx, org, data, false);
    return { status: 200, body: ctx.page(ofTargets(ctx, data.rulesets).map((r) => rulesetJson(ctx, { org }, r))) };
  },
  "repos/get-org-ruleset": async (ctx) => {
    const { org, data } = orgOf(ctx);
    authorizeOrg(ctx, org, data, false);
    return { status: 200, body: rulesetJson(ctx, { org }, data.rulesets[find(ctx, data)]!) };
  },
  // What the body gives replaces the ruleset's field (conditions, rules and bypass actors whole).
  "repos/update-org-ruleset": async (ctx) => {
    const { org, data } = orgOf(ctx);
    authorizeOrg(ctx, org, data, true);
    const at = find(ctx, data);
    const old = data.rulesets[at]!;
    const set = fromBody(ctx, data.rulesets, { ...old, org: repositoriesOf(ctx, old.org) });
    data.rulesets[at] = set;
    return { status: 200, body: rulesetJson(ctx, { org }, set) };
  },
  "repos/delete-org-ruleset": async (ctx) => {
    const { org, data } = orgOf(ctx);
    authorizeOrg(ctx, org, data, true);
    data.rulesets.splice(find(ctx, data), 1);
    return { status: 204 };
  },
};
