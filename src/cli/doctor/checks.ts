/**
 * `forge doctor`'s checks, as pure functions of what was read from GitHub (src/github/readiness.ts):
 * each says pass, warn (warnings.ts: what would make Forge wait for people, with the fix), fail (with
 * the fix) or skip (what could not be read, and how to let it be).
 */
import YAML from "yaml";
import type { Readiness } from "../../github/readiness.js";
import { missingRulesText, STATE_BRANCH_RULES } from "../../core/state-rules.js";
import { forgeFacts, type ForgeFacts } from "./forge-facts.js";
import { branchFindings, settingsFindings, type Findings, type Warning } from "./warnings.js";

export type { Warning } from "./warnings.js";

/** `warn`: Forge works, but something will make it wait for people (each warning says what). */
export type Verdict = "pass" | "warn" | "fail" | "skip";

export interface CheckResult {
  id: "app" | "workflow" | "actions" | "state-ruleset" | "secret" | "branches" | "settings";
  title: string;
  verdict: Verdict;
  detail: string;
  fix?: string;
  /** what would stop Forge, each with its fix (branches, settings) */
  warnings?: Warning[];
  /** what was not read, or what only makes the final pull request wait for people */
  notes?: string[];
}

export interface AppManifest {
  default_permissions: Record<string, string>;
  default_events: string[];
}

/** What was read from GitHub, with app.yml and the template `forge init` writes. */
export interface DoctorFacts extends Readiness {
  manifest: AppManifest;
  template: string;
}

const LEVEL: Record<string, number> = { none: 0, read: 1, write: 2, admin: 3 };

export const WORKFLOW_FILE = ".github/workflows/forge-agent.yml";

function skipped(id: CheckResult["id"], title: string, reason: string, fix: string): CheckResult {
  return { id, title, verdict: "skip", detail: `not checked: ${reason}`, fix };
}

export function checkApp(f: DoctorFacts): CheckResult {
  const title = "the Forge App is installed with app.yml's permissions and events";
  if (!f.installation.ok)
    return skipped(
      "app",
      title,
      f.installation.reason,
      "pass --dir where the App's .env is, or set APP_ID and PRIVATE_KEY (or PRIVATE_KEY_PATH)",
    );
  const inst = f.installation.value;
  if (!inst)
    return {
      id: "app",
      title,
      verdict: "fail",
      detail: `the App is not installed on ${f.repo}`,
      fix: `install it: open the App's page on GitHub, "Install", and choose ${f.repo}`,
    };
  const missing = Object.entries(f.manifest.default_permissions)
    .filter(([name, level]) => (LEVEL[inst.permissions[name] ?? "none"] ?? 0) < (LEVEL[level] ?? 0))
    .map(([name, level]) => `${name}: ${level} (has ${inst.permissions[name] ?? "none"})`);
  const events = f.manifest.default_events.filter((e) => !inst.events.includes(e));
  if (missing.length || events.length)
    return {
      id: "app",
      title,
      verdict: "fail",
      detail: [
        missing.length ? `permissions missing: ${missing.join(", ")}` : "",
        events.length ? `events missing: ${events.join(", ")}` : "",
      ]
        .filter(Boolean)
        .join("; "),
      fix: `in the App's settings (Permissions & events) grant what app.yml asks, then accept the new permissions on the installation${inst.settingsUrl ? ` (${inst.settingsUrl})` : ""}`,
    };
  return { id: "app", title, verdict: "pass", detail: `${inst.appSlug} is installed on ${f.repo}` };
}

interface WorkflowShape {
  inputs: string[];
  uses: string[];
  secrets: string[];
}

/** The parts of an agent workflow that must match the template: dispatch inputs, pinned actions, secrets. */
export function workflowShape(text: string): WorkflowShape {
  const doc = (YAML.parse(text) ?? {}) as {
    on?: { workflow_dispatch?: { inputs?: Record<string, unknown> } };
    jobs?: Record<string, { steps?: { uses?: string }[] }>;
  };
  const inputs = Object.keys(doc.on?.workflow_dispatch?.inputs ?? {}).sort();
  const uses = Object.values(doc.jobs ?? {})
    .flatMap((j) => j.steps ?? [])
    .map((s) => s.uses)
    .filter((u): u is string => typeof u === "string");
  const secrets = [...new Set([...text.matchAll(/\bsecrets\.([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!))]
    .filter((n) => n !== "GITHUB_TOKEN")
    .sort();
  return { inputs, uses, secrets };
}

/** The shape of the repository's workflow when it has a readable one, else the template's. */
function shapeOf(f: DoctorFacts): WorkflowShape {
  try {
    if (f.workflow.ok && f.workflow.value) return workflowShape(f.workflow.value);
  } catch {
    // Not YAML: checkWorkflow says so; the other checks go by the template.
  }
  return workflowShape(f.template);
}

export function checkWorkflow(f: DoctorFacts): CheckResult {
  const title = `the agent workflow (${WORKFLOW_FILE}) is on ${f.defaultBranch} and matches the template`;
  const fix = "run `npx forge init --force` (or copy the workflow from Forge's templates), commit and push it to the default branch";
  if (!f.workflow.ok) return skipped("workflow", title, f.workflow.reason, "give forge doctor a token that can read the repository");
  if (f.workflow.value === null)
    return { id: "workflow", title, verdict: "fail", detail: `${WORKFLOW_FILE} is not on ${f.defaultBranch}`, fix };
  let have: WorkflowShape;
  try {
    have = workflowShape(f.workflow.value);
  } catch (e) {
    return {
      id: "workflow",
      title,
      verdict: "fail",
      detail: `${WORKFLOW_FILE} is not valid YAML: ${(e as Error).message.split("\n")[0]}`,
      fix,
    };
  }
  const want = workflowShape(f.template);
  const problems: string[] = [];
  if (want.inputs.join() !== have.inputs.join())
    problems.push(`its inputs are ${have.inputs.join(", ") || "none"}, not ${want.inputs.join(", ")}`);
  for (const u of want.uses) if (!have.uses.includes(u)) problems.push(`it does not use ${u}`);
  if (problems.length) return { id: "workflow", title, verdict: "fail", detail: problems.join("; "), fix };
  return {
    id: "workflow",
    title,
    verdict: "pass",
    detail: `inputs ${have.inputs.join(", ")}; ${want.uses.length} pinned actions as in the template`,
  };
}

/** Whether an Actions policy lets a workflow use `uses` (owner/repo[/path]@ref). */
function allowed(a: { allowedActions: string; patterns?: string[]; githubOwnedAllowed?: boolean }, uses: string, repo: string): boolean {
  if (uses.startsWith("./")) return true;
  if (a.allowedActions === "all") return true;
  const owner = uses.split("/")[0]!;
  if (`${owner}/${uses.split("/")[1]?.split("@")[0]}` === repo) return true;
  if (a.allowedActions === "local_only") return false;
  if (a.githubOwnedAllowed && (owner === "actions" || owner === "github")) return true;
  return (a.patterns ?? []).some((p) => new RegExp(`^${p.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")}$`).test(uses));
}

export function checkActions(f: DoctorFacts): CheckResult {
  const title = "GitHub Actions is enabled and allows the workflow's actions";
  if (!f.actions.ok)
    return skipped(
      "actions",
      title,
      f.actions.reason,
      "pass --token with a token of a repository admin (GITHUB_TOKEN or GH_TOKEN work too)",
    );
  const a = f.actions.value;
  const fix = "Settings → Actions → General: allow all actions, or add the workflow's actions to the allowed list";
  if (!a.enabled)
    return {
      id: "actions",
      title,
      verdict: "fail",
      detail: "Actions is disabled for the repository",
      fix: "Settings → Actions → General: allow actions",
    };
  const uses = shapeOf(f).uses;
  const refused = uses.filter((u) => !allowed(a, u, f.repo));
  if (refused.length)
    return { id: "actions", title, verdict: "fail", detail: `not allowed (${a.allowedActions}): ${refused.join(", ")}`, fix };
  return { id: "actions", title, verdict: "pass", detail: `enabled; allowed actions: ${a.allowedActions}` };
}

export function checkStateRuleset(f: DoctorFacts): CheckResult {
  const title = "a ruleset keeps forge/*/_state the App's alone";
  const rules = f.rules;
  if (!rules.ok) return skipped("state-ruleset", title, rules.reason, "give forge doctor a token that can read the repository");
  const types = rules.value.state.map((r) => r.type);
  const missing = STATE_BRANCH_RULES.filter((t) => !types.includes(t));
  if (missing.length)
    return {
      id: "state-ruleset",
      title,
      verdict: "fail",
      detail: `no ruleset restricts ${missingRulesText(missing)} of forge/<run>/_state`,
      fix: 'add the ruleset in README.md, "Protect the state branches" (Settings → Rules → Rulesets), with the Forge App as bypass actor',
    };
  return { id: "state-ruleset", title, verdict: "pass", detail: `rules on forge/<run>/_state: ${[...new Set(types)].join(", ")}` };
}

export function checkSecret(f: DoctorFacts): CheckResult {
  const title = "the model key secret the workflow names exists";
  const names = shapeOf(f).secrets;
  const secrets = f.secrets;
  if (!secrets.ok) return skipped("secret", title, secrets.reason, "pass --token with a token of a repository admin");
  const absent = names.filter((n) => !secrets.value[n]);
  if (absent.length)
    return {
      id: "secret",
      title,
      verdict: "fail",
      detail: `no Actions secret ${absent.join(", ")}`,
      fix: `Settings → Secrets and variables → Actions → New repository secret: ${absent.join(", ")} (or \`gh secret set ${absent[0]}\`)`,
    };
  return { id: "secret", title, verdict: "pass", detail: `${names.join(", ")} exists (its value is never read)` };
}

/**
 * A check of warnings: fail when one blocks Forge, warn when some leave it waiting for people, else
 * pass — or skip when part of it could not be read (`unread` says which) and nothing was found.
 */
function fromFindings(id: "branches" | "settings", title: string, found: Findings, clean: string, unread?: string): CheckResult {
  const blocking = found.warnings.filter((w) => w.blocks).length;
  const verdict: Verdict = blocking ? "fail" : found.warnings.length ? "warn" : unread ? "skip" : "pass";
  const detail =
    verdict === "pass"
      ? clean
      : verdict === "skip"
        ? `not checked: ${unread}`
        : `${found.warnings.length} warning(s)${blocking ? `, ${blocking} of which stop Forge altogether` : ""}`;
  return { id, title, verdict, detail, warnings: found.warnings, ...(found.notes.length ? { notes: found.notes } : {}) };
}

export function checkBranches(f: DoctorFacts, forge: ForgeFacts = forgeFacts(f)): CheckResult {
  const b = forge.branches;
  const title = `the rules of Forge's branches let it work (${b.task}, ${b.integration}, the final pull request into ${b.base})`;
  if (!f.rules.ok) return skipped("branches", title, f.rules.reason, "give forge doctor a token that can read the repository");
  return fromFindings(
    "branches",
    title,
    branchFindings(f, forge),
    `no rule or protection stops Forge on ${b.task}, ${b.integration} or ${b.base}`,
  );
}

export function checkSettings(f: DoctorFacts, forge: ForgeFacts = forgeFacts(f)): CheckResult {
  const title = "the repository's merge settings and Actions' workflow permissions let Forge work";
  const unread = !f.workflowPermissions.ok ? `Actions' workflow permissions (${f.workflowPermissions.reason})` : undefined;
  const found = settingsFindings(f, forge);
  const result = fromFindings(
    "settings",
    title,
    found,
    `Forge's merge method (${forge.method}) is allowed; the runner may push and open pull requests`,
    unread,
  );
  return result.verdict === "skip" ? { ...result, fix: "pass --token with a token of a repository admin" } : result;
}

export function runChecks(f: DoctorFacts): CheckResult[] {
  const forge = forgeFacts(f);
  return [
    checkApp(f),
    checkWorkflow(f),
    checkActions(f),
    checkStateRuleset(f),
    checkSecret(f),
    checkBranches(f, forge),
    checkSettings(f, forge),
  ];
}
