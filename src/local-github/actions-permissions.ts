// GitHub Actions permissions of a repository (docs.github.com/rest/actions/permissions): whether
// Actions is enabled and which actions and reusable workflows may run, read and set through the
// REST API, and applied as GitHub applies them. With Actions disabled nothing runs: events start no
// workflow and a `workflow_dispatch` is refused. With `allowed_actions` "local_only" or "selected",
// a run whose workflow `uses:` an action the policy does not allow runs no step: GitHub checks the
// list while it reads the workflow file, before any job exists, and shows the run as a startup
// failure with "The action … is not allowed in …"; the simulator already made the run's jobs, so each
// fails at its start with that line in its log and the run concludes `startup_failure`
// (workflows/runs.ts). Marketplace verification is unknown here: `verified_allowed` allows nothing more.
// While Actions may not create and approve pull requests (the default), a workflow's token that
// opens or approves one is refused (`enforceActionsMayCreatePulls`).
import { HttpError } from "./auth.js";
import type { Handler, RestCtx } from "./rest/index.js";
import type { Repo } from "./state.js";

export type AllowedActions = "all" | "local_only" | "selected";

export interface ActionsPermissions {
  enabled: boolean;
  /** the GITHUB_TOKEN's permissions when a workflow names none: "read" (restricted) or "write" (permissive) */
  defaultWorkflowPermissions: "read" | "write";
  /** "Allow GitHub Actions to create and approve pull requests" */
  canApprovePullRequestReviews: boolean;
  allowedActions: AllowedActions;
  shaPinningRequired: boolean;
  /** the `selected` policy's lists (kept when the policy changes, as GitHub keeps them) */
  githubOwnedAllowed: boolean;
  verifiedAllowed: boolean;
  patternsAllowed: string[];
}

/**
 * GitHub's default for a new repository: Actions on, every action allowed; the GITHUB_TOKEN
 * restricted to reading (github.blog/changelog/2023-02-02, read-only GITHUB_TOKEN by default for new
 * repositories) and not allowed to create or approve pull requests (github.blog/changelog/2022-05-03).
 */
function defaults(): ActionsPermissions {
  return {
    enabled: true,
    defaultWorkflowPermissions: "read",
    canApprovePullRequestReviews: false,
    allowedActions: "all",
    shaPinningRequired: false,
    githubOwnedAllowed: true,
    verifiedAllowed: false,
    patternsAllowed: [],
  };
}

export function actionsPermissionsOf(repo: Repo): ActionsPermissions {
  return (repo.actionsPermissions ??= defaults());
}

/** Whether Actions runs at all in the repository. */
export function actionsEnabled(repo: Repo): boolean {
  return repo.actionsPermissions?.enabled ?? true;
}

/** What GitHub answers a `workflow_dispatch` on a repository whose Actions is disabled. */
export const ACTIONS_DISABLED = "Actions has been disabled for this repository.";

/** A `uses:` pattern of `patterns_allowed` (`monalisa/octocat@v2`, `monalisa/octocat@*`, `monalisa/*`): `*` is any text. */
function patternMatches(pattern: string, uses: string): boolean {
  const re = new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")}$`, "i");
  // A pattern without a ref names the action at any ref.
  return re.test(pattern.includes("@") ? uses : uses.split("@")[0]!);
}

/** Whether the policy lets a `uses:` value (a step's action or a job's reusable workflow) run. */
export function actionAllowed(repo: Repo, uses: string): boolean {
  const p = repo.actionsPermissions;
  if (!p) return true;
  // Actions and workflows of the repository itself (`./…`) always run.
  if (uses.startsWith("./")) return true;
  if (p.shaPinningRequired && !/@[0-9a-f]{40}$/.test(uses)) return false;
  if (p.allowedActions === "all") return true;
  const owner = uses.startsWith("docker://") ? "" : (uses.split("/")[0] ?? "").toLowerCase();
  if (owner && owner === repo.owner.login.toLowerCase()) return true;
  if (p.allowedActions === "local_only") return false;
  if (p.githubOwnedAllowed && (owner === "actions" || owner === "github")) return true;
  return p.patternsAllowed.some((pat) => patternMatches(pat, uses));
}

/** Every `uses:` of a workflow: its steps' actions and its jobs' reusable workflows. */
export function usesOf(doc: Record<string, unknown>): string[] {
  const out: string[] = [];
  const jobs = (doc.jobs ?? {}) as Record<string, { uses?: unknown; steps?: Array<{ uses?: unknown }> } | null>;
  for (const job of Object.values(jobs)) {
    if (typeof job?.uses === "string") out.push(job.uses);
    for (const step of Array.isArray(job?.steps) ? job.steps : []) if (typeof step?.uses === "string") out.push(step.uses);
  }
  return [...new Set(out)];
}

/**
 * The error a run of this workflow fails with, in GitHub's words ("The action x/y@v1 is not allowed
 * in o/r because all actions must be from a repository owned by o…"); undefined when it may run.
 */
export function disallowedActionsError(repo: Repo, doc: Record<string, unknown>): string | undefined {
  const refused = usesOf(doc).filter((u) => !actionAllowed(repo, u));
  if (!refused.length) return undefined;
  const p = actionsPermissionsOf(repo);
  const full = `${repo.owner.login}/${repo.name}`;
  const which = refused.length === 1 ? `The action ${refused[0]} is` : `The actions ${refused.join(", ")} are`;
  const unpinned = p.shaPinningRequired && refused.every((u) => !/@[0-9a-f]{40}$/.test(u));
  if (unpinned && p.allowedActions === "all")
    return `${which} not allowed in ${full} because all actions must be pinned to a full-length commit SHA.`;
  const from = [`from a repository owned by ${repo.owner.login}`];
  if (p.allowedActions === "selected") {
    if (p.githubOwnedAllowed) from.push("created by GitHub");
    if (p.verifiedAllowed) from.push("verified in the GitHub Marketplace");
    if (p.patternsAllowed.length) from.push(`match one of the patterns: ${p.patternsAllowed.join(", ")}`);
  }
  const list = from.length <= 2 ? from.join(" or ") : `${from.slice(0, -1).join(", ")}, or ${from[from.length - 1]}`;
  return `${which} not allowed in ${full} because all actions must be ${list}.`;
}

/** What GitHub answers a workflow's GITHUB_TOKEN that opens or approves a pull request where Actions may not. */
export const ACTIONS_MAY_NOT_CREATE_PULLS = "GitHub Actions is not permitted to create or approve pull requests.";

/**
 * "Allow GitHub Actions to create and approve pull requests" (github.blog/changelog/2022-05-03,
 * off by default since; docs.github.com/repositories/managing-your-repositorys-settings-and-features/enabling-features-for-your-repository/managing-github-actions-settings-for-a-repository#preventing-github-actions-from-creating-or-approving-pull-requests):
 * while it is off, a workflow's GITHUB_TOKEN that opens a pull request (`POST /pulls`) or approves
 * one (a review with `APPROVE`) is answered 403 with that sentence, whatever the token's
 * `pull-requests` permission. Other tokens — an App's installation, a person's — are not concerned.
 * (An organisation's setting, when off, holds every repository of it; the local GitHub keeps the
 * repository's alone.)
 */
export function enforceActionsMayCreatePulls(ctx: RestCtx, repo: Repo): void {
  if (ctx.token?.kind !== "workflow") return;
  if (actionsPermissionsOf(repo).canApprovePullRequestReviews) return;
  throw new HttpError(403, ACTIONS_MAY_NOT_CREATE_PULLS, ctx.doc);
}

// ---------------------------------------------------------------- REST

function repoOf(ctx: RestCtx): Repo {
  if (!ctx.repo) throw new HttpError(404, "Not Found", ctx.doc);
  return ctx.repo;
}

export const actionsPermissionsHandlers: Record<string, Handler> = {
  // docs.github.com/rest/actions/permissions#get-github-actions-permissions-for-a-repository
  "actions/get-github-actions-permissions-repository": async (ctx) => {
    const repo = repoOf(ctx);
    const p = actionsPermissionsOf(repo);
    if (!p.enabled) return { status: 200, body: { enabled: false } };
    const full = `${repo.owner.login}/${repo.name}`;
    return {
      status: 200,
      body: {
        enabled: true,
        allowed_actions: p.allowedActions,
        ...(p.allowedActions === "selected"
          ? { selected_actions_url: `${ctx.core.model.api}/repos/${full}/actions/permissions/selected-actions` }
          : {}),
        sha_pinning_required: p.shaPinningRequired,
      },
    };
  },
  // The request body (`enabled` required, `allowed_actions` one of all/local_only/selected) is
  // checked against GitHub's description before it reaches here.
  "actions/set-github-actions-permissions-repository": async (ctx) => {
    const p = actionsPermissionsOf(repoOf(ctx));
    const b = ctx.body ?? {};
    p.enabled = b.enabled === true;
    if (typeof b.allowed_actions === "string") p.allowedActions = b.allowed_actions as AllowedActions;
    if (typeof b.sha_pinning_required === "boolean") p.shaPinningRequired = b.sha_pinning_required;
    return { status: 204 };
  },
  // "To use this endpoint, the repository policy for allowed_actions must be configured to
  // selected." GitHub documents the condition but not its answer; the simulator answers 409.
  "actions/get-allowed-actions-repository": async (ctx) => {
    const p = selectedOnly(ctx);
    return {
      status: 200,
      body: { github_owned_allowed: p.githubOwnedAllowed, verified_allowed: p.verifiedAllowed, patterns_allowed: [...p.patternsAllowed] },
    };
  },
  "actions/set-allowed-actions-repository": async (ctx) => {
    const p = selectedOnly(ctx);
    const b = ctx.body ?? {};
    if (typeof b.github_owned_allowed === "boolean") p.githubOwnedAllowed = b.github_owned_allowed;
    if (typeof b.verified_allowed === "boolean") p.verifiedAllowed = b.verified_allowed;
    if (Array.isArray(b.patterns_allowed)) p.patternsAllowed = b.patterns_allowed.map(String);
    return { status: 204 };
  },
};

/**
 * docs.github.com/rest/actions/permissions#get-default-workflow-permissions-for-a-repository and
 * #set-…: the GITHUB_TOKEN's default permissions and whether Actions may create and approve pull
 * requests. The token of a run whose workflow names no `permissions:` gets the default
 * (workflows/dispatched-run.ts). The body is checked against GitHub's description first.
 */
export const workflowPermissionsHandlers: Record<string, Handler> = {
  "actions/get-github-actions-default-workflow-permissions-repository": async (ctx) => {
    const p = actionsPermissionsOf(repoOf(ctx));
    return {
      status: 200,
      body: {
        default_workflow_permissions: p.defaultWorkflowPermissions,
        can_approve_pull_request_reviews: p.canApprovePullRequestReviews,
      },
    };
  },
  "actions/set-github-actions-default-workflow-permissions-repository": async (ctx) => {
    const p = actionsPermissionsOf(repoOf(ctx));
    const b = ctx.body ?? {};
    if (b.default_workflow_permissions === "read" || b.default_workflow_permissions === "write")
      p.defaultWorkflowPermissions = b.default_workflow_permissions;
    if (typeof b.can_approve_pull_request_reviews === "boolean") p.canApprovePullRequestReviews = b.can_approve_pull_request_reviews;
    return { status: 204 };
  },
};

function selectedOnly(ctx: RestCtx): ActionsPermissions {
  const p = actionsPermissionsOf(repoOf(ctx));
  if (!p.enabled || p.allowedActions !== "selected")
    throw new HttpError(409, "The repository's allowed_actions policy must be set to 'selected' to use this endpoint.", ctx.doc);
  return p;
}
