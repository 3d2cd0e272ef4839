/**
 * `forge doctor`'s warnings: each rule, protection or setting of the repository that would stop
 * Forge's branches, merges or final pull request — the rule, where it comes from, the branch, what it
 * does to Forge and the fix (README.md, "What forge doctor warns about"). A warning `blocks` when
 * Forge could not work at all with it (rule-effects.ts says which); the others leave tasks waiting
 * for a person, who is told why. What only makes the final pull request wait for people (approvals,
 * a merge queue) is a note, not a warning: a person merges it anyway.
 */
import type { ProtectionFact, Readiness, RuleFact } from "../../github/readiness.js";
import type { ForgeFacts } from "./forge-facts.js";
import {
  finalLinear,
  finalSigned,
  requiredCheck,
  ruleFindings,
  rulesetName,
  type Finding,
  type Role,
  type RuleCtx,
} from "./rule-effects.js";

export interface Warning {
  /** the rule: a ruleset rule's type, `branch protection: <setting>`, or a setting's name */
  rule: string;
  /** where it comes from: a ruleset (the repository's or the organization's), branch protection, a settings page */
  source: string;
  /** the branch it holds (a sample name for the branches a run creates) */
  branch?: string;
  effect: string;
  fix: string;
  /** Forge cannot work at all with it: forge doctor fails */
  blocks: boolean;
}

export interface Findings {
  warnings: Warning[];
  notes: string[];
}

const ROLES: readonly Role[] = ["state", "task", "integration", "base"];

function sourceOf(rule: RuleFact): string {
  const where = rule.ruleset.sourceType === "Organization" ? "organization" : "repository";
  return `${rulesetName(rule)} (${where} ruleset${rule.ruleset.source ? ` ${rule.ruleset.source}` : ""})`;
}

/** What the base's rules ask of the run's final pull request, which a person merges. */
function baseNote(rule: RuleFact): string | undefined {
  const p = rule.parameters ?? {};
  if (rule.type === "pull_request" && Number(p.required_approving_review_count ?? 0) > 0)
    return `the final pull request waits for ${String(p.required_approving_review_count)} approving review(s) (${rulesetName(rule)})`;
  if (rule.type === "merge_queue") return `the final pull request goes through the merge queue (${rulesetName(rule)})`;
  if (rule.type === "update") return `only the bypass actors of ${rulesetName(rule)} may merge the final pull request`;
  return undefined;
}

function protectionFindings(p: ProtectionFact, base: string, forge: ForgeFacts): Array<Finding & { rule: string }> {
  const ctx: RuleCtx = { role: "base", branch: base, rule: { type: "required_status_checks", ruleset: {} }, forge };
  const out: Array<Finding & { rule: string }> = p.requiredChecks.flatMap((c) =>
    requiredCheck(ctx, c.context, c.appId).map((f) => ({ ...f, rule: "branch protection: required status checks" })),
  );
  if (p.linearHistory) out.push({ rule: "branch protection: required linear history", ...finalLinear(forge) });
  const signed = p.signatures ? finalSigned(forge) : undefined;
  if (signed) out.push({ rule: "branch protection: required signatures", ...signed });
  if (p.lockBranch)
    out.push({
      rule: "branch protection: lock branch",
      effect: `the run's final pull request cannot be merged: ${base} is locked`,
      fix: `unlock ${base} (Settings → Branches → its rule → Lock branch)`,
      blocks: false,
    });
  return out;
}

function protectionNotes(p: ProtectionFact, base: string): string[] {
  if (!p.complete)
    return [
      `${base} is protected; its protection was read without the Administration permission (only its required checks): pass --token with a repository admin's token to read the rest`,
    ];
  return [
    p.requiredApprovals > 0 ? `the final pull request waits for ${p.requiredApprovals} approving review(s) (${base}'s protection)` : "",
    p.codeOwnerReviews ? "the final pull request waits for the code owners' reviews" : "",
    p.strict ? `the final pull request must be up to date with ${base} before it merges` : "",
    p.restricted ? `only the people and Apps allowed to push to ${base} may merge the final pull request` : "",
  ].filter(Boolean);
}

/** The warnings and notes of the rules and protections of Forge's branches. */
export function branchFindings(f: Readiness, forge: ForgeFacts): Findings {
  const warnings: Warning[] = [];
  const notes: string[] = [];
  if (forge.configProblem) notes.push(forge.configProblem);
  if (f.rules.ok) {
    const rules = f.rules.value;
    for (const role of ROLES) {
      const branch = forge.branches[role];
      // Push rulesets hold every push to the repository: the runner's and the App's.
      const own = role === "task" || role === "state" ? [...rules[role], ...rules.push] : rules[role];
      for (const rule of own) {
        for (const found of ruleFindings({ role, branch, rule, forge }))
          warnings.push({ rule: rule.type, source: sourceOf(rule), branch, ...found });
        const note = role === "base" ? baseNote(rule) : undefined;
        if (note) notes.push(note);
      }
    }
    if (!rules.asApp)
      notes.push(
        "the rulesets' bypass lists were not read as the App (no App credentials): a rule the App may bypass is counted as holding it",
      );
  }
  if (f.protection.ok && f.protection.value) {
    const base = forge.branches.base;
    for (const found of protectionFindings(f.protection.value, base, forge))
      warnings.push({ source: `branch protection of ${base}`, branch: base, ...found });
    notes.push(...protectionNotes(f.protection.value, base));
  }
  return { warnings: dedupe(warnings), notes: [...new Set(notes)] };
}

/** One warning per rule, source, branch and effect (a rule listed twice, a push ruleset met on two branches). */
function dedupe(warnings: Warning[]): Warning[] {
  const seen = new Set<string>();
  return warnings.filter((w) => {
    const key = `${w.rule}\u0000${w.source}\u0000${w.effect}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

const METHOD_SETTING = {
  merge: {
    field: "allowMergeCommit",
    rule: "allow_merge_commit",
    name: "merge commits",
    why: "it merges task pull requests with a merge commit",
  },
  squash: {
    field: "allowSquashMerge",
    rule: "allow_squash_merge",
    name: "squash merging",
    why: "it squashes task pull requests (the integration branch's rules want a linear history or leave out merge commits)",
  },
  rebase: {
    field: "allowRebaseMerge",
    rule: "allow_rebase_merge",
    name: "rebase merging",
    why: "it rebases task pull requests (the integration branch's rules allow nothing else)",
  },
} as const;

/** The warnings and notes of the repository's merge settings and Actions' workflow permissions. */
export function settingsFindings(f: Readiness, forge: ForgeFacts): Findings {
  const warnings: Warning[] = [];
  const notes: string[] = [];
  const m = METHOD_SETTING[forge.method];
  if (!f.settings.ok) notes.push(`the repository's merge settings were not read: ${f.settings.reason}`);
  else if (f.settings.value[m.field] === undefined)
    notes.push(
      "the repository's merge settings were not shown (GitHub shows them to readers who may push): give the App contents: write, or pass an admin's --token",
    );
  else if (f.settings.value[m.field] === false)
    warnings.push({
      rule: m.rule,
      source: "repository settings",
      branch: forge.branches.integration,
      effect: `Forge's merges are refused: ${m.why}, and the repository does not allow ${m.name}; each task waits for a person`,
      fix: `Settings → General → Pull Requests: allow ${m.name}`,
      blocks: false,
    });
  if (!f.workflowPermissions.ok) return { warnings, notes };
  const wp = f.workflowPermissions.value;
  if (wp.defaultPermissions === "read" && !forge.workflowPermissions && forge.runnerToken === "job")
    warnings.push({
      rule: "default_workflow_permissions",
      source: "Actions settings",
      effect: "the agent workflow names no permissions, and the job's token may only read here: the runner cannot push task branches",
      fix: "add the template's permissions block to the agent workflow (`npx forge init --force`), or Settings → Actions → General → Workflow permissions: Read and write",
      blocks: true,
    });
  if (!wp.canApprovePullRequests && forge.runnerToken === "job")
    warnings.push({
      rule: "can_approve_pull_request_reviews",
      source: "Actions settings",
      effect:
        "GitHub Actions may not create pull requests here: the runner cannot open a task's pull request (the App opens it when it merges the task, without the walkthrough as its description), and a plan Captain cannot open its plan's",
      fix: 'Settings → Actions → General → Workflow permissions: "Allow GitHub Actions to create and approve pull requests", or give the Forge step a token of its own in github-token',
      blocks: false,
    });
  return { warnings, notes };
}
