/**
 * What `forge doctor` reads of the rules, protections and settings that could stop Forge on a
 * repository (README.md, "What forge doctor warns about"): the active rules of
 * each branch Forge creates, pushes, merges into or opens its final pull request on, with the
 * ruleset they come from and whether the reader may bypass it; push rulesets; the base branch's
 * protection; the repository's merge settings; Actions' workflow permissions; the workflows on the
 * default branch (which checks they report). Nothing is written.
 *
 * - `GET /repos/{owner}/{repo}/rules/branches/{branch}` (docs.github.com/rest/repos/rules#get-rules-for-a-branch):
 *   every active rule that would apply to the branch, existing or not, repository and organization
 *   level alike, with `ruleset_id` — the Metadata permission reads it.
 * - `GET /repos/{owner}/{repo}/rulesets?includes_parents=true` and each ruleset by id: its name,
 *   source and `current_user_can_bypass` ("The bypass type of the user making the API request",
 *   `always`, `pull_requests_only`, `never`, `exempt`) — read as the App, that is the App's own.
 * - Branch protection needs the Administration permission; without it, `GET /branches/{branch}`
 *   (Contents: read) shows whether the branch is protected and its required status checks.
 */
import type { Octokit } from "@octokit/rest";

/** What a reader may do past a ruleset (`current_user_can_bypass`); undefined when not read. */
export type Bypass = "always" | "pull_requests_only" | "never" | "exempt";

/** An active rule that applies to a branch (or a push ruleset's rule), with its ruleset. */
export interface RuleFact {
  type: string;
  parameters?: Record<string, unknown>;
  ruleset: { id?: number; name?: string; sourceType?: string; source?: string };
  /** what the App may do past the ruleset; undefined when it was not read as the App */
  appBypass?: Bypass;
}

/** A branch's protection: complete with the Administration permission, else what `GET /branches/{branch}` shows. */
export interface ProtectionFact {
  complete: boolean;
  requiredApprovals: number;
  codeOwnerReviews: boolean;
  lastPushApproval: boolean;
  requiredChecks: Array<{ context: string; appId: number | null }>;
  strict: boolean;
  linearHistory: boolean;
  signatures: boolean;
  lockBranch: boolean;
  conversationResolution: boolean;
  /** only listed people and Apps may push (organization repositories) */
  restricted: boolean;
}

/** A workflow file on the default branch. */
export interface WorkflowFile {
  path: string;
  text: string;
}

const status = (e: unknown): number | undefined => (e as { status?: number }).status;

/** Rulesets of the repository and its organization: name, source and the reader's bypass, by id; push rulesets' rules. */
async function readRulesets(
  o: Octokit,
  r: { owner: string; repo: string },
): Promise<{ byId: Map<number, RuleFact["ruleset"] & { bypass?: Bypass }>; push: RuleFact[] }> {
  const list = await o.paginate(o.rest.repos.getRepoRulesets, { ...r, includes_parents: true, per_page: 100 });
  const byId = new Map<number, RuleFact["ruleset"] & { bypass?: Bypass }>();
  const push: RuleFact[] = [];
  for (const s of list) {
    if (s.enforcement !== "active") continue;
    const info = { id: s.id, name: s.name, sourceType: s.source_type ?? "Repository", source: s.source };
    let full: Awaited<ReturnType<typeof o.rest.repos.getRepoRuleset>>["data"] | undefined;
    try {
      full = (await o.rest.repos.getRepoRuleset({ ...r, ruleset_id: s.id, includes_parents: true })).data;
    } catch {
      // Its name and source are known from the list; the bypass is not.
    }
    const bypass = full?.current_user_can_bypass as Bypass | undefined;
    byId.set(s.id, { ...info, ...(bypass ? { bypass } : {}) });
    if (s.target === "push")
      for (const rule of full?.rules ?? [])
        push.push({
          type: rule.type,
          ...("parameters" in rule && rule.parameters ? { parameters: rule.parameters as Record<string, unknown> } : {}),
          ruleset: info,
          ...(bypass ? { appBypass: bypass } : {}),
        });
  }
  return { byId, push };
}

/**
 * The rules of each branch, with their rulesets; `asApp`: the reader is the App's installation, so a
 * ruleset's `current_user_can_bypass` is the App's.
 */
export async function readBranchRuleFacts<K extends string>(
  o: Octokit,
  r: { owner: string; repo: string },
  branches: Record<K, string>,
  asApp: boolean,
): Promise<{ branches: Record<K, RuleFact[]>; push: RuleFact[] }> {
  let sets: Awaited<ReturnType<typeof readRulesets>> = { byId: new Map(), push: [] };
  try {
    sets = await readRulesets(o, r);
  } catch {
    // The rules of each branch below still name their ruleset by id.
  }
  const out = {} as Record<K, RuleFact[]>;
  for (const [key, branch] of Object.entries(branches) as Array<[K, string]>) {
    const rules = await o.paginate(o.rest.repos.getBranchRules, { ...r, branch, per_page: 100 });
    out[key] = rules.map((x) => {
      const id = (x as { ruleset_id?: number }).ruleset_id;
      const set = id !== undefined ? sets.byId.get(id) : undefined;
      const source = x as { ruleset_source_type?: string; ruleset_source?: string };
      return {
        type: x.type,
        ...("parameters" in x && x.parameters ? { parameters: x.parameters as Record<string, unknown> } : {}),
        ruleset: {
          ...(id !== undefined ? { id } : {}),
          ...(set?.name ? { name: set.name } : {}),
          sourceType: source.ruleset_source_type ?? set?.sourceType ?? "Repository",
          ...((source.ruleset_source ?? set?.source) ? { source: source.ruleset_source ?? set?.source } : {}),
        },
        ...(asApp && set?.bypass ? { appBypass: set.bypass } : {}),
      };
    });
  }
  return { branches: out, push: asApp ? sets.push : sets.push.map(({ appBypass: _, ...rest }) => rest) };
}

/** The full protection of `branch` (Administration: read); null when it is not protected. */
export async function readProtection(o: Octokit, r: { owner: string; repo: string }, branch: string): Promise<ProtectionFact | null> {
  try {
    const { data } = await o.rest.repos.getBranchProtection({ ...r, branch });
    const reviews = data.required_pull_request_reviews;
    const checks = data.required_status_checks;
    return {
      complete: true,
      requiredApprovals: reviews?.required_approving_review_count ?? 0,
      codeOwnerReviews: reviews?.require_code_owner_reviews ?? false,
      lastPushApproval: reviews?.require_last_push_approval ?? false,
      requiredChecks: checks
        ? (checks.checks ?? checks.contexts.map((context) => ({ context, app_id: null }))).map((c) => ({
            context: c.context,
            appId: c.app_id ?? null,
          }))
        : [],
      strict: checks?.strict ?? false,
      linearHistory: data.required_linear_history?.enabled ?? false,
      signatures: data.required_signatures?.enabled ?? false,
      lockBranch: data.lock_branch?.enabled ?? false,
      conversationResolution: data.required_conversation_resolution?.enabled ?? false,
      restricted: !!data.restrictions,
    };
  } catch (e) {
    // "Branch not protected" (and a branch that does not exist) are answers.
    if (status(e) === 404) return null;
    throw e;
  }
}

/** What `GET /branches/{branch}` shows of a protection to a reader without the Administration permission. */
export async function readProtectionSummary(
  o: Octokit,
  r: { owner: string; repo: string },
  branch: string,
): Promise<ProtectionFact | null> {
  try {
    const { data } = await o.rest.repos.getBranch({ ...r, branch });
    if (!data.protected) return null;
    const checks = data.protection?.required_status_checks;
    const list = checks?.checks ?? (checks?.contexts ?? []).map((context) => ({ context, app_id: null }));
    return {
      complete: false,
      requiredApprovals: 0,
      codeOwnerReviews: false,
      lastPushApproval: false,
      requiredChecks: checks?.enforcement_level === "off" ? [] : list.map((c) => ({ context: c.context, appId: c.app_id ?? null })),
      strict: false,
      linearHistory: false,
      signatures: false,
      lockBranch: false,
      conversationResolution: false,
      restricted: false,
    };
  } catch (e) {
    if (status(e) === 404) return null;
    throw e;
  }
}

/** Actions' workflow permissions of the repository (Administration: read). */
export async function readWorkflowPermissions(
  o: Octokit,
  r: { owner: string; repo: string },
): Promise<{ defaultPermissions: "read" | "write"; canApprovePullRequests: boolean }> {
  const { data } = await o.rest.actions.getGithubActionsDefaultWorkflowPermissionsRepository(r);
  return { defaultPermissions: data.default_workflow_permissions, canApprovePullRequests: data.can_approve_pull_request_reviews };
}

/** At most this many workflow files are read. */
const MAX_WORKFLOWS = 40;

/** The workflow files of `.github/workflows` on `ref` (none when the folder is absent). */
export async function readWorkflowFiles(o: Octokit, r: { owner: string; repo: string }, ref: string): Promise<WorkflowFile[]> {
  let listing;
  try {
    listing = (await o.rest.repos.getContent({ ...r, path: ".github/workflows", ref })).data;
  } catch (e) {
    if (status(e) === 404) return [];
    throw e;
  }
  if (!Array.isArray(listing)) return [];
  const files = listing.filter((f) => f.type === "file" && /\.ya?ml$/.test(f.name)).slice(0, MAX_WORKFLOWS);
  const out: WorkflowFile[] = [];
  for (const f of files) {
    const { data } = await o.rest.repos.getContent({ ...r, path: f.path, ref });
    if (!Array.isArray(data) && data.type === "file" && typeof data.content === "string")
      out.push({ path: f.path, text: Buffer.from(data.content, "base64").toString("utf8") });
  }
  return out;
}
