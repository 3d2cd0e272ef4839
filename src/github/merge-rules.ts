/**
 * The rules GitHub holds a merge into a branch to, as Forge needs them to merge a task's pull
 * request (docs/executor.md#merging-under-the-repositorys-rules):
 * - the branch's active ruleset rules, read once per branch and kept for `RULES_TTL_MS` (the config's TTL)
 *   (GET /repos/{owner}/{repo}/rules/branches/{branch} — docs.github.com/rest/repos/rules#get-rules-for-a-branch,
 *   readable with the Metadata permission every App has);
 * - the merge method they allow: `required_linear_history` ("Prevent merge commits from being pushed
 *   to matching refs") or a `pull_request` rule whose `allowed_merge_methods` leaves out `merge` →
 *   squash (one commit per task on the branch), else a merge commit;
 * - what a 405 of the merge says when the refusal is one Forge cannot resolve by itself — required
 *   approvals, a required check it does not run or wait for, a rule it cannot satisfy — named for a
 *   person, with what they can do (a branch that must be up to date Forge updates: ./branch-update.ts).
 */
import type { Octokit } from "./octokit-port.js";
import { wantsUpToDate } from "./branch-update.js";
import { mergeRefusal, wrap } from "./octokit-rest.js";
import type { PullMergeResult } from "./port.js";
import { ttlCache } from "./ttl-cache.js";
import { describeRules, mergeRemedy, ruleRefusal, ruleTypesOf, type NamedRule } from "./rule-refusals.js";

export interface BranchRule {
  type: string;
  parameters?: Record<string, unknown>;
  /** the ruleset that holds it (its name once asked, `rulesetName`), a repository's or an organisation's */
  ruleset?: { id: number; name?: string; source?: string; sourceType?: string };
}

export type MergeMethod = "merge" | "squash" | "rebase";

/** The active ruleset rules that apply to `branch` (every page; the branch need not exist). */
export async function readBranchRules(octokit: Octokit, owner: string, repo: string, branch: string): Promise<BranchRule[]> {
  try {
    const rules = await octokit.paginate(octokit.rest.repos.getBranchRules, { owner, repo, branch, per_page: 100 });
    return rules.map((r) => ({
      type: r.type,
      ...("parameters" in r && r.parameters ? { parameters: r.parameters as Record<string, unknown> } : {}),
      ...(typeof r.ruleset_id === "number"
        ? {
            ruleset: {
              id: r.ruleset_id,
              ...(r.ruleset_source ? { source: r.ruleset_source } : {}),
              ...(r.ruleset_source_type ? { sourceType: r.ruleset_source_type } : {}),
            },
          }
        : {}),
    }));
  } catch (e) {
    throw wrap("repos.getBranchRules", e);
  }
}

/**
 * A ruleset's name (`GET /repos/{owner}/{repo}/rulesets/{id}`, which reads an organisation's
 * rulesets that apply to the repository too — docs.github.com/rest/repos/rules#get-a-repository-ruleset).
 */
export async function readRulesetName(octokit: Octokit, owner: string, repo: string, id: number): Promise<string> {
  try {
    return (await octokit.rest.repos.getRepoRuleset({ owner, repo, ruleset_id: id })).data.name;
  } catch (e) {
    throw wrap("repos.getRepoRuleset", e);
  }
}

/**
 * The rules of `types` in `rules`, each with its ruleset's name (read through `name`; a name that
 * cannot be read leaves the ruleset named by its id).
 */
export async function withRulesetNames(
  rules: readonly BranchRule[],
  types: readonly string[],
  name: (id: number) => Promise<string>,
): Promise<BranchRule[]> {
  const out: BranchRule[] = [];
  for (const r of rules) {
    if (!types.includes(r.type) || !r.ruleset) {
      out.push(r);
      continue;
    }
    const got = await name(r.ruleset.id).catch(() => undefined);
    out.push({ ...r, ruleset: { ...r.ruleset, ...(got ? { name: got } : {}) } });
  }
  return out;
}

/** Merge a pull request (docs.github.com/rest/pulls/pulls#merge-a-pull-request) by `method`, a merge commit when none is given. */
export async function mergePull(
  octokit: Octokit,
  owner: string,
  repo: string,
  number: number,
  fields: { sha?: string; method?: MergeMethod; title?: string },
): Promise<PullMergeResult> {
  try {
    const { data } = await octokit.rest.pulls.merge({
      owner,
      repo,
      pull_number: number,
      ...(fields.sha ? { sha: fields.sha } : {}),
      merge_method: fields.method ?? "merge",
      ...(fields.title ? { commit_title: fields.title } : {}),
    });
    return { kind: "merged", sha: data.sha };
  } catch (e) {
    // 405: not mergeable (required checks, approvals, rules, conflicts, draft), or the base moved; 409: the head moved.
    return mergeRefusal(e);
  }
}

/**
 * The merge method the rules allow: squash where they want a linear history, or signed commits (the
 * squash commit is GitHub's own, signed; a merge commit would bring the task branch's unsigned
 * commits, and a rebase's commits GitHub cannot sign), else a merge commit unless a `pull_request`
 * rule's `allowed_merge_methods` leaves it out.
 */
export function mergeMethodFor(rules: readonly Pick<BranchRule, "type" | "parameters">[]): MergeMethod {
  if (rules.some((r) => r.type === "required_linear_history" || r.type === "required_signatures")) return "squash";
  const allowed = rules.flatMap((r) =>
    r.type === "pull_request" && Array.isArray(r.parameters?.allowed_merge_methods) ? [r.parameters.allowed_merge_methods as string[]] : [],
  );
  if (allowed.length === 0 || allowed.every((a) => a.includes("merge"))) return "merge";
  for (const m of ["squash", "rebase"] as const) if (allowed.every((a) => a.includes(m))) return m;
  return "squash";
}

/**
 * How a person merges the run's final pull request into a base whose rules refuse a merge commit:
 * by rebase where the rules allow it (the integration branch is linear, one commit per task), else
 * squash; undefined when a merge commit is fine.
 */
export function finalMergeMethod(rules: readonly BranchRule[]): "squash" | "rebase" | undefined {
  if (mergeMethodFor(rules) === "merge") return undefined;
  const allowed = rules.flatMap((r) =>
    r.type === "pull_request" && Array.isArray(r.parameters?.allowed_merge_methods) ? [r.parameters.allowed_merge_methods as string[]] : [],
  );
  return allowed.every((a) => a.includes("rebase")) ? "rebase" : "squash";
}

/** Whether a refusal says the branch wants no merge commit (branch protection's linear history answers so, without a ruleset to read). */
export const refusesMergeCommits = (message: string): boolean =>
  /must not contain merge commits|merge commits are not allowed/i.test(message);

/**
 * What a 405 of the merge into `branch` says when Forge cannot resolve it by itself: the rule (its
 * type, and the ruleset that holds it when `rules` — the branch's, named — say), the branch and what
 * a person can do; undefined when Forge deals with it (a check it waits for, a branch it brings up
 * to date) or must look further (GitHub's "not mergeable": a conflict, or a mergeability still
 * being computed — the merge reads `mergeable`).
 */
export function mergeBlocker(
  message: string,
  branch: string,
  requiredChecks: readonly string[],
  rules: readonly NamedRule[] = [],
): string | undefined {
  const text = message.replace(/\s+/g, " ").trim();
  const on = `\`${branch}\``;
  const said = ruleRefusal(message)?.messages ?? [];
  const types = [...new Set((said.length ? said : [text]).flatMap((m) => ruleTypesOf(m, rules)))];
  // Which ruleset holds the rule, when the branch's rules say (branch protection is no ruleset).
  const held = (...of: string[]) => {
    const hit = of.filter((t) => rules.some((r) => r.type === t && r.ruleset));
    return hit.length ? ` (${describeRules(hit, rules)})` : "";
  };
  const retry = "then a writer comments `/forge retry`";
  if (types.includes("merge_queue"))
    return `${describeRules(["merge_queue"], rules)} on ${on} requires merges through GitHub's merge queue, and the queue did not take this pull request ("${text}"). ${cap(mergeRemedy(["merge_queue"], branch))}, ${retry}.`;
  const approvals = /At least (\d+) approving reviews? (?:is|are) required/i.exec(text);
  if (approvals)
    return `required approvals on ${on}${held("pull_request")}: GitHub wants ${approvals[1]} approving review${approvals[1] === "1" ? "" : "s"} of the pull request's head by people with write access ("${text}"). A person with write access approves the pull request (Forge then merges it), or an administrator lowers the branch's required approvals and comments \`/forge retry\`.`;
  const check = /Required status check "([^"]+)" is (expected|failing)/i.exec(text);
  if (check && !requiredChecks.includes(check[1]!))
    return `required status check "${check[1]}" on ${on}${held("required_status_checks")} is ${check[2]}, and Forge does not run or wait for it ("${text}"). Make the check run on the pull request (or add it to Forge's \`required_checks\`), or remove it from the branch's rules, then comment \`/forge retry\`.`;
  const checks = /(\d+) of (\d+) required status checks/i.exec(text);
  if (checks && !requiredChecks.length)
    return `required status checks on ${on}${held("required_status_checks")} have not succeeded ("${text}"). Make them run on the pull request (or add them to Forge's \`required_checks\`), or remove them from the branch's rules, then comment \`/forge retry\`.`;
  // A head that must contain the base's tip first: Forge updates the branch itself (./branch-update.ts).
  if (wantsUpToDate(text)) return undefined;
  if (refusesMergeCommits(text))
    return `${on} requires a linear history${held("required_linear_history")} and refused even a squash merge ("${text}"). Allow squash merging in the repository's settings, or lift the rule, then comment \`/forge retry\`.`;
  if (types.includes("required_signatures"))
    return `${describeRules(["required_signatures"], rules)} on ${on} refused the merge ("${text}"). ${cap(mergeRemedy(["required_signatures"], branch))}, ${retry}.`;
  if (/rule violations|protected branch|not authorized|changes must be made through a pull request/i.test(text))
    return `${types.length ? describeRules(types, rules) : "a rule"} of ${on} refused the merge ("${text}"). An administrator adds the Forge App to the rule's bypass list or changes the rule, then comments \`/forge retry\`.`;
  return undefined;
}

const cap = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

/** How long a branch's rules are kept: as long as the repository's config (`CONFIG_TTL_MS`, src/app/context.ts). */
export const RULES_TTL_MS = 10 * 60_000;

const branchRules = ttlCache<string, { method: MergeMethod; rules: BranchRule[] }>();

/**
 * The rules of `branch` and the merge method for a pull request into it, read at most once per
 * `ttlMs` for this port (one repository): `read` asks GitHub. A failed read is kept as no rules and
 * a merge commit (the refusal that may follow says which method the branch wants, and the next try squashes).
 */
export function cachedBranchRules(
  owner: object,
  branch: string,
  now: number,
  ttlMs: number,
  read: () => Promise<BranchRule[]>,
): Promise<{ method: MergeMethod; rules: BranchRule[] }> {
  return branchRules.get(owner, branch, now, ttlMs, async () => {
    let list: BranchRule[] = [];
    try {
      const rules = await read();
      if (Array.isArray(rules)) list = rules;
    } catch {
      // unread (or a port that cannot read rules): no rules, a merge commit
    }
    return { method: mergeMethodFor(list), rules: list };
  });
}

/** After a refusal for merge commits, the branch wants a linear history whatever its rules said: remembered until the TTL runs out. */
export function rememberLinear(owner: object, branch: string, now: number): void {
  branchRules.set(owner, branch, { method: "squash", rules: branchRules.peek(owner, branch)?.rules ?? [] }, now);
}

const rulesetNames = ttlCache<number, string>();

/** A ruleset's name, read at most once per `ttlMs` for this port; a failed read throws and is not kept. */
export function cachedRulesetName(owner: object, id: number, now: number, ttlMs: number, read: () => Promise<string>): Promise<string> {
  return rulesetNames.get(owner, id, now, ttlMs, read);
}
