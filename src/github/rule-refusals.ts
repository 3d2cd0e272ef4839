/**
 * What GitHub says when a rule of the repository refuses a write, read back for people
 * (docs/executor.md#when-a-rule-refuses-a-push): a push's `remote:` lines — "GH013: Repository rule
 * violations found for <ref>." (rulesets) or "GH006: Protected branch update failed for <ref>."
 * (branch protection), each broken rule on a line of its own with what was found — or a REST
 * answer, "Repository rule violations found" and the rules. The rule types are told from GitHub's
 * texts (docs.github.com/repositories/configuring-branches-and-merges-in-your-repository/managing-rulesets/available-rules-for-rulesets),
 * or from the name a metadata rule was given; the rulesets that hold them from the branch's rules.
 * A job's refused push reaches the App as its failure annotation (`readJobsEnded`).
 */
import type { Octokit } from "./octokit-port.js";
import { endedJobsOf, wrap } from "./octokit-rest.js";
import type { EndedJobs } from "./port.js";

export interface RuleRefusal {
  /** GH013 (a ruleset refused a push), GH006 (branch protection refused a push), or a REST answer */
  code: "GH013" | "GH006" | "REST";
  /** the ref refused, when GitHub named it */
  ref?: string;
  /** the rules broken, as GitHub worded them */
  messages: string[];
  /** what was found breaking them: commits, files */
  found: string[];
}

/** The refusal in `text` (a push's stderr, a job's failure, an API error's message), if it is one. */
export function ruleRefusal(text: string): RuleRefusal | undefined {
  const lines = text
    .replace(/\r/g, "")
    .replace(/%0A/gi, "\n")
    .split("\n")
    .map((l) => l.replace(/^.*?remote:\s?/, "").replace(/\s+$/, ""));
  const at = lines.findIndex((l) =>
    /GH013: Repository rule violations found for|GH006: Protected branch update failed for|Repository rule violations found/.test(l),
  );
  if (at < 0) return undefined;
  const head = lines[at]!;
  const gh = /(GH013|GH006): .* for (\S+?)\.?$/.exec(head);
  const code = (gh?.[1] as "GH013" | "GH006" | undefined) ?? "REST";
  const messages: string[] = [];
  const found: string[] = [];
  let listing = false;
  for (const raw of lines.slice(at + 1)) {
    if (/^To |^ ! \[|^error: failed to push/.test(raw)) break;
    const l = raw.replace(/^error:\s*/, "");
    if (!l.trim()) continue;
    if (/^Review all repository rules at /.test(l)) continue;
    if (/^\s+Found \d+ violations?:/.test(l)) {
      listing = true;
      continue;
    }
    if (listing && /^\s{2,}\S/.test(l)) {
      found.push(l.trim());
      continue;
    }
    listing = false;
    const m = code === "GH013" ? /^- (.+)$/.exec(l) : /^(?:- )?(.+)$/.exec(l.trim());
    if (m && !messages.includes(m[1]!)) messages.push(m[1]!);
  }
  return { code, ...(gh ? { ref: gh[2] } : {}), messages, found };
}

/** GitHub's texts of the rules, by rule type (ruleset rules; branch protection's GH006 texts map to their ruleset twins). */
const TEXTS: Array<[RegExp, string]> = [
  [/through the merge queue/i, "merge_queue"],
  [/verified signatures/i, "required_signatures"],
  [/must not contain merge commits|merge commits are not allowed/i, "required_linear_history"],
  [/through a pull request/i, "pull_request"],
  [/approving review/i, "pull_request"],
  [/merge method/i, "pull_request"],
  [/required status check/i, "required_status_checks"],
  [/out of date/i, "required_status_checks"],
  [/creations being restricted/i, "creation"],
  [/cannot update this protected ref/i, "update"],
  [/cannot delete this protected/i, "deletion"],
  [/cannot force-push/i, "non_fast_forward"],
  [/^commit message must/i, "commit_message_pattern"],
  [/^commit author email must/i, "commit_author_email_pattern"],
  [/^committer email must/i, "committer_email_pattern"],
  [/^branch name must/i, "branch_name_pattern"],
  [/^tag name must/i, "tag_name_pattern"],
  [/restricted file paths?|file path is restricted/i, "file_path_restriction"],
  [/file extension/i, "file_extension_restriction"],
  [/file paths? must not be longer|path length|path is too long/i, "max_file_path_length"],
  [/larger than|file size/i, "max_file_size"],
];

/** A rule of a branch as the App read it (`GET /repos/{o}/{r}/rules/branches/{branch}`). */
export interface NamedRule {
  type: string;
  parameters?: Record<string, unknown>;
  /** the ruleset that holds it, and where that ruleset lives (a repository, an organisation) */
  ruleset?: { id: number; name?: string; source?: string; sourceType?: string };
}

/** The rule types a message of GitHub names: by its text, or by the name a metadata rule was given on the branch. */
export function ruleTypesOf(message: string, rules: readonly NamedRule[] = []): string[] {
  const named = rules.filter((r) => typeof r.parameters?.name === "string" && r.parameters.name === message).map((r) => r.type);
  if (named.length) return [...new Set(named)];
  return [...new Set(TEXTS.filter(([re]) => re.test(message)).map(([, t]) => t))];
}

/** `rule \`type\` of ruleset "name" (organisation x)` for the rules of `types` the branch holds, or the bare types. */
export function describeRules(types: readonly string[], rules: readonly NamedRule[]): string {
  if (!types.length) return "a rule";
  const parts = types.map((type) => {
    const sets = rules.filter((r) => r.type === type && r.ruleset).map((r) => r.ruleset!);
    const where = sets
      .map(
        (s) =>
          `${s.name ? `"${s.name}"` : `#${s.id}`}${s.sourceType === "Organization" ? ` of the organisation ${s.source ?? ""}`.trimEnd() : ""}`,
      )
      .filter((x, i, all) => all.indexOf(x) === i);
    return `the \`${type}\` rule${where.length ? ` of ruleset ${where.join(", ")}` : ""}`;
  });
  return parts.join(" and ");
}

/** What a person can do about a rule of `type` that refused Forge's write to `branch`. */
function remedy(type: string, branch: string, push: boolean): string {
  const on = `\`${branch}\``;
  const bypass = push
    ? "adds GitHub Actions (which the jobs push as) and the Forge App to the ruleset's bypass list"
    : "adds the Forge App to the ruleset's bypass list";
  switch (type) {
    case "merge_queue":
      return `an administrator removes the merge queue rule from ${on}, or ${bypass}`;
    case "required_signatures":
      return push
        ? `the job's commits are not signed (GitHub signs only the commits it creates itself): an administrator excludes Forge's branches (\`forge/**\`) from the rule or ${bypass}`
        : `GitHub signs the squash and merge commits it makes but not a rebase's: an administrator allows squash merging, or excludes ${on} from the rule`;
    case "file_path_restriction":
    case "file_extension_restriction":
    case "max_file_path_length":
    case "max_file_size":
      return `the task's work has files the rule refuses: a person changes the task so that it does not need them (or lifts the rule for Forge's branches, \`forge/**\`)`;
    case "commit_message_pattern":
    case "commit_author_email_pattern":
    case "committer_email_pattern":
    case "branch_name_pattern":
      return `Forge's commit messages, addresses and branch names are its own: an administrator excludes Forge's branches (\`forge/**\`) from the rule or ${bypass}`;
    case "pull_request":
    case "update":
    case "creation":
    case "non_fast_forward":
      return `an administrator excludes Forge's branches (\`forge/**\`) from the rule or ${bypass}`;
    default:
      return `an administrator changes the rule or ${bypass}`;
  }
}

/**
 * Why a job's push of `branch` was refused, for the task's PR and the tracker: the rules (type and
 * ruleset), the branch, GitHub's words and what was found, and what a person can do.
 */
export function pushBlockedReason(refusal: RuleRefusal, branch: string, rules: readonly NamedRule[] = []): string {
  const types = [...new Set(refusal.messages.flatMap((m) => ruleTypesOf(m, rules)))];
  const said = refusal.messages.length ? refusal.messages.join(" ") : "no rule named";
  const found = refusal.found.length ? ` (found: ${refusal.found.slice(0, 5).join(", ")}${refusal.found.length > 5 ? ", …" : ""})` : "";
  const what = refusal.code === "GH006" ? "the branch's protection" : describeRules(types, rules);
  const fix =
    refusal.code === "GH006"
      ? "an administrator changes the branch protection that covers it (or lets GitHub Actions and the Forge App push to it)"
      : remedy(types[0] ?? "", branch, true);
  return `GitHub refused the push of \`${branch}\` (${refusal.code}): ${what} — "${said}"${found}. What a person can do: ${fix}; then a writer comments \`/forge retry\`.`;
}

/** What a person can do about the rules a merge's refusal names (its types), for mergeBlocker. */
export function mergeRemedy(types: readonly string[], branch: string): string {
  return remedy(types[0] ?? "", branch, false);
}

/**
 * How a workflow run's jobs ended (`GitHubPort.endedJobs`): a runner that went away (a job completed
 * with a step unfinished — GitHub fails the job of a vanished runner after a while), the first job
 * that did not succeed, and the failure annotations of its failed jobs
 * (docs.github.com/rest/checks/runs#list-check-run-annotations: a job's `::error::`, `core.setFailed`,
 * is an annotation of its check run).
 */
export async function readEndedJobs(octokit: Octokit, r: { owner: string; repo: string }, runId: number): Promise<EndedJobs> {
  let jobs;
  try {
    jobs = (await octokit.rest.actions.listJobsForWorkflowRun({ ...r, run_id: runId, per_page: 100 })).data.jobs;
  } catch (e) {
    throw wrap("actions.listJobsForWorkflowRun", e);
  }
  const ended = endedJobsOf(jobs);
  if (ended.runnerLost) return { ...ended, errors: [] };
  const errors: string[] = [];
  for (const j of jobs.filter((x) => x.conclusion === "failure").slice(0, 3)) {
    const id = Number(/\/check-runs\/(\d+)$/.exec(j.check_run_url ?? "")?.[1] ?? j.id);
    const annotations = await octokit.rest.checks
      .listAnnotations({ ...r, check_run_id: id, per_page: 50 })
      .then((x) => x.data)
      .catch(() => []);
    for (const a of annotations) if (a.annotation_level === "failure" && a.message) errors.push(a.message);
  }
  return { ...ended, errors };
}
