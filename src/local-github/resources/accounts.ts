// Accounts as the local GitHub sends them: users (and the account a commit's email links to), Apps,
// installations.
import type { App, Installation, User } from "../state.js";
import { nodeId, type O } from "./ids.js";
import type { Model } from "./index.js";

export function user(model: Model, u: User): O {
  // Logins like "dependabot[bot]" must be escaped to make valid URIs.
  const api = `${model.api}/users/${encodeURIComponent(u.login)}`;
  const slug = encodeURIComponent(u.type === "Bot" ? u.login.replace(/\[bot\]$/, "") : u.login);
  return {
    login: u.login,
    id: u.id,
    node_id: nodeId(u.type, u.id),
    avatar_url: `${model.web()}/avatars/u/${u.id}`,
    gravatar_id: "",
    url: api,
    html_url: u.type === "Bot" ? `${model.web()}/apps/${slug}` : `${model.web()}/${slug}`,
    followers_url: `${api}/followers`,
    following_url: `${api}/following{/other_user}`,
    gists_url: `${api}/gists{/gist_id}`,
    starred_url: `${api}/starred{/owner}{/repo}`,
    subscriptions_url: `${api}/subscriptions`,
    organizations_url: `${api}/orgs`,
    repos_url: `${api}/repos`,
    events_url: `${api}/events{/privacy}`,
    received_events_url: `${api}/received_events`,
    type: u.type,
    user_view_type: "public",
    site_admin: false,
  };
}

/** GitHub links a commit to an account by email; the simulator uses `<login>@users.noreply…`. */
export function userByEmail(model: Model, email: string): O | null {
  const m = /^(\d+)\+[^@]+@users\.noreply\./.exec(email);
  const u = m ? model.state.userById(Number(m[1])) : undefined;
  return u ? model.user(u) : null;
}

export function app(model: Model, a: App): O {
  return {
    id: a.id,
    slug: a.slug,
    client_id: a.clientId,
    node_id: nodeId("Integration", a.id),
    owner: model.user(a.owner),
    name: a.name,
    description: null,
    external_url: `${model.web()}/apps/${a.slug}`,
    html_url: `${model.web()}/apps/${a.slug}`,
    created_at: a.createdAt,
    updated_at: a.createdAt,
    permissions: { ...a.permissions },
    events: [...a.events],
    installations_count: [...model.state.installations.values()].filter((i) => i.appId === a.id).length,
  };
}

export function installation(model: Model, i: Installation): O {
  const app = model.state.apps.get(i.appId)!;
  return {
    id: i.id,
    account: model.user(i.account),
    repository_selection: i.repositories === "all" ? "all" : "selected",
    access_tokens_url: `${model.api}/app/installations/${i.id}/access_tokens`,
    repositories_url: `${model.api}/installation/repositories`,
    html_url: `${model.web()}/settings/installations/${i.id}`,
    app_id: i.appId,
    client_id: app.clientId,
    app_slug: app.slug,
    target_id: i.account.id,
    target_type: i.account.type === "Organization" ? "Organization" : "User",
    permissions: { ...i.permissions },
    events: [...i.events],
    created_at: i.createdAt,
    updated_at: i.updatedAt,
    single_file_name: null,
    has_multiple_single_files: false,
    single_file_paths: [],
    suspended_by: i.suspended ? model.user(i.suspended.by) : null,
    suspended_at: i.suspended?.at ?? null,
  };
}
