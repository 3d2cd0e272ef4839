/**
 * What each ruleset rule does to Forge on each kind of branch (README.md, "What forge doctor warns
 * about", lists them with their fixes). Who writes what:
 * - state branch: the App writes its journal (creates the branch, commits through the API);
 * - task branch: the App creates it and merges a refinery's upstream branches into it; the runner
 *   pushes the agent's work and its record (unsigned commits, `--no-ff` merges of sub-agents' branches)
 *   with the job's token; with `branch_cleanup` the App deletes it;
 * - integration branch: the App creates it and merges each task's pull request into it;
 * - base: a person merges the run's final pull request.
 * A finding `blocks` when Forge could not work at all — no run could start or no task could finish
 * its attempt; a rule that stops only Forge's merges leaves each task waiting for a person (the task
 * says so on its pull request), a warning.
 */
import picomatch from "picomatch";
import type { ForgeBranches, RuleFact } from "../../github/readiness.js";
import { namedAnywhere, reportersOf } from "./ci-reporters.js";
import type { ForgeFacts } from "./forge-facts.js";

export type Role = keyof ForgeBranches;

export interface Finding {
  effect: string;
  fix: string;
  blocks: boolean;
}

export interface RuleCtx {
  role: Role;
  branch: string;
  rule: RuleFact;
  forge: ForgeFacts;
}

/** GitHub Actions' App id: a required check whose `integration_id` is another comes from another App. */
const ACTIONS_APP_ID = 15368;

const appDirect = (c: RuleCtx): boolean => c.rule.appBypass === "always" || c.rule.appBypass === "exempt";
const appMerges = (c: RuleCtx): boolean => appDirect(c) || c.rule.appBypass === "pull_requests_only";
/** Whether the App is known to be held by the rule (its bypass was read as the App and it has none). */
const appHeld = (c: RuleCtx): boolean => c.forge.appKnown && !appDirect(c);

export function rulesetName(rule: RuleFact): string {
  const name = rule.ruleset.name ? `ruleset "${rule.ruleset.name}"` : `ruleset #${rule.ruleset.id ?? "?"}`;
  return rule.ruleset.sourceType === "Organization" ? `${name} of the organization ${rule.ruleset.source ?? ""}`.trim() : name;
}

/** Who changes the ruleset: an organization owner for an organization's. */
const who = (c: RuleCtx): string => (c.rule.ruleset.sourceType === "Organization" ? "an organization owner: " : "");

function exclude(c: RuleCtx, what = c.forge.refGlob): string {
  return `${who(c)}exclude ${what} from ${rulesetName(c.rule)} (Settings → Rules → Rulesets → its target branches → Exclude by pattern)`;
}

function bypass(c: RuleCtx, mode: "Always" | "For pull requests only"): string {
  return `${who(c)}add the Forge App to the bypass list of ${rulesetName(c.rule)} (${mode})`;
}

/** Said of a rule the App may bypass when its bypass could not be read. */
const unlessApp = (c: RuleCtx): string =>
  c.forge.appKnown ? "" : " — unless the Forge App is on its bypass list (give forge doctor the App's credentials to know)";

/** The runner's pushes: held unless its token bypasses; with a token of the workflow's own, that is up to the person who chose it. */
function runnerHeld(c: RuleCtx, effect: string): Finding {
  const own = c.forge.runnerToken === "own";
  return {
    effect: own ? `${effect} — unless the token in the Forge step's github-token is on its bypass list` : effect,
    fix: exclude(c),
    blocks: !own,
  };
}

/** Whether a *_pattern rule lets `text` through; undefined when its pattern cannot be read. */
export function patternAllows(parameters: Record<string, unknown> | undefined, text: string): boolean | undefined {
  const op = String(parameters?.operator ?? "");
  const pattern = String(parameters?.pattern ?? "");
  const t = text.trimEnd();
  let m: boolean;
  if (op === "starts_with") m = t.startsWith(pattern);
  else if (op === "ends_with") m = t.endsWith(pattern);
  else if (op === "contains") m = t.includes(pattern);
  else if (op === "regex") {
    try {
      m = new RegExp(pattern, "m").test(t);
    } catch {
      return undefined;
    }
  } else return undefined;
  return parameters?.negate === true ? !m : m;
}

const patternText = (p: Record<string, unknown> | undefined): string =>
  `${p?.negate === true ? "must not " : ""}${String(p?.operator ?? "?").replace("_", " ")} ${JSON.stringify(p?.pattern ?? "")}`;

const firstLine = (m: string): string => m.split("\n")[0]!;

/** The first of `texts` the pattern refuses. */
function refusedText(c: RuleCtx, texts: readonly string[]): string | undefined {
  return texts.find((t) => patternAllows(c.rule.parameters, t) === false);
}

function creation(c: RuleCtx): Finding | undefined {
  if (c.role === "base" || !appHeld(c)) return undefined;
  const what = c.role === "task" ? "task branches" : c.role === "integration" ? "a run's integration branch" : "a run's state branch";
  return { effect: `${what} cannot be created: creation restricted`, fix: bypass(c, "Always"), blocks: true };
}

function update(c: RuleCtx): Finding | undefined {
  if (c.role === "task") return runnerHeld(c, "the runner cannot push task branches: updates restricted");
  if (c.role === "state" && appHeld(c))
    return { effect: "the App cannot write its journal: updates restricted", fix: bypass(c, "Always"), blocks: true };
  if (c.role === "integration" && !appMerges(c))
    return {
      effect: `Forge cannot merge into the integration branch: updates restricted; each task waits for a person who may bypass it${unlessApp(c)}`,
      fix: bypass(c, "For pull requests only"),
      blocks: false,
    };
  return undefined;
}

function deletion(c: RuleCtx): Finding | undefined {
  if (c.role !== "task" || c.forge.config.branch_cleanup === "never" || appDirect(c)) return undefined;
  return {
    effect: `task branches are not deleted (branch_cleanup: ${c.forge.config.branch_cleanup}): deletion restricted${unlessApp(c)}`,
    fix: `${bypass(c, "Always")}, or set branch_cleanup: never in .github/forge.yml`,
    blocks: false,
  };
}

function linearHistory(c: RuleCtx): Finding | undefined {
  if (c.role === "task")
    return {
      effect:
        "tasks that split into sub-agents fail: the runner merges a sub-agent's branch back with a merge commit, which a linear history refuses (a refinery's upstreams are squashed onto its branch instead, one commit each)",
      fix: exclude(c),
      blocks: false,
    };
  if (c.role === "integration" && !appMerges(c))
    return {
      effect: `merges will be squashed: one commit per task on the integration branch (the task branch's own commits are not kept in its history)${unlessApp(c)}`,
      fix: `nothing to do; or ${exclude(c, c.forge.integrationGlob)} to keep each task's commits`,
      blocks: false,
    };
  if (c.role === "base") return { ...finalLinear(c.forge), fix: `${finalLinear(c.forge).fix}, or ${exclude(c, `refs/heads/${c.branch}`)}` };
  return undefined;
}

function signatures(c: RuleCtx): Finding | undefined {
  if (c.role === "task") return runnerHeld(c, "required signatures: the runner's commits are unsigned, so it cannot push task branches");
  if (c.role === "integration" && !appMerges(c))
    return c.forge.method === "merge"
      ? {
          effect: `required signatures: a merge commit brings the runner's unsigned commits, so Forge's merges are refused; each task waits for a person to squash it${unlessApp(c)}`,
          fix: `${exclude(c, c.forge.integrationGlob)}, or ${bypass(c, "For pull requests only")}`,
          blocks: false,
        }
      : undefined;
  if (c.role === "base") return finalSigned(c.forge);
  return undefined;
}

/** Linear history on the base: the final pull request merges without a merge commit (and, when the integration branch holds merge commits, only squashed). */
export function finalLinear(forge: ForgeFacts): Finding {
  return forge.method === "merge"
    ? {
        effect:
          "the run's final pull request cannot be merged with a merge commit, and the integration branch holds merge commits (so Rebase cannot replay it): merge it with Squash",
        fix: 'merge the final pull request with "Squash and merge"',
        blocks: false,
      }
    : {
        effect: "the run's final pull request cannot be merged with a merge commit: merge it with Squash or Rebase",
        fix: 'merge the final pull request with "Squash and merge" or "Rebase and merge"',
        blocks: false,
      };
}

/** Required signatures on the base: with merge commits into the integration branch, the final pull request brings the runner's unsigned commits. */
export function finalSigned(forge: ForgeFacts): Finding | undefined {
  if (forge.method !== "merge") return undefined;
  return {
    effect:
      "required signatures: the final pull request brings the runner's unsigned commits (Forge merges tasks with merge commits) unless it is squashed (GitHub signs a squash commit)",
    fix: 'merge the final pull request with "Squash and merge"',
    blocks: false,
  };
}

function pullRequest(c: RuleCtx): Finding | undefined {
  const p = c.rule.parameters ?? {};
  const count = Number(p.required_approving_review_count ?? 0);
  if (c.role === "task") return runnerHeld(c, "the runner cannot push task branches: changes must be made through a pull request");
  if (c.role === "state" && appHeld(c))
    return {
      effect: "the App cannot write its journal: changes must be made through a pull request",
      fix: bypass(c, "Always"),
      blocks: true,
    };
  if (c.role !== "integration" || appMerges(c)) return undefined;
  const waits = [
    count > 0 ? `${count} approving review${count === 1 ? "" : "s"}` : "",
    p.require_code_owner_review === true ? "a code owner's review of the files they own" : "",
    p.require_last_push_approval === true && count > 0 ? "an approval of the last push by someone other than the pusher" : "",
    p.required_review_thread_resolution === true ? "every review thread resolved" : "",
  ].filter(Boolean);
  if (!waits.length) return undefined;
  return {
    effect: `required reviews: each task waits for ${waits.join(", ")} before Forge can merge it${unlessApp(c)}`,
    fix: `${bypass(c, "For pull requests only")}; or keep it and set merge_policy: review in .github/forge.yml, so that the approval is the step Forge waits for`,
    blocks: false,
  };
}

function statusChecks(c: RuleCtx): Finding[] {
  const p = c.rule.parameters ?? {};
  const checks = (Array.isArray(p.required_status_checks) ? p.required_status_checks : []) as Array<{
    context: string;
    integration_id?: number;
  }>;
  if (c.role === "task")
    return [
      runnerHeld(c, "the runner cannot push task branches: required status checks must pass on a commit before the branch may point at it"),
    ];
  if (c.role === "state" && appHeld(c))
    return [{ effect: "the App cannot write its journal: required status checks", fix: bypass(c, "Always"), blocks: true }];
  if (c.role === "state" || (c.role === "integration" && appMerges(c))) return [];
  const out: Finding[] = [];
  if (c.role === "integration" && p.strict_required_status_checks_policy === true)
    out.push({
      effect:
        "strict required checks: Forge will update branches — a task's pull request must be up to date with the integration branch, so after each merge the others are brought up to date and their checks run again",
      fix: `nothing to do (merges are slower); or turn off "Require branches to be up to date before merging" in ${rulesetName(c.rule)}`,
      blocks: false,
    });
  for (const check of checks) out.push(...requiredCheck(c, check.context, check.integration_id));
  return out;
}

/** A required check on the integration branch (task pull requests) or on the base (the final pull request). */
export function requiredCheck(c: RuleCtx, check: string, appId?: number | null): Finding[] {
  const head = c.role === "base" ? c.forge.branches.integration : c.forge.branches.task;
  const pr = c.role === "base" ? "the run's final pull request" : "each task";
  if (appId !== undefined && appId !== null && appId !== ACTIONS_APP_ID) {
    if (c.role === "base" || c.forge.config.required_checks.includes(check)) return [];
    return [
      {
        effect: `required check "${check}" (reported by another App, id ${appId}) is not in Forge's required_checks: Forge neither waits for it nor answers it when red; a task whose check is pending shows "waiting for a person" until it passes`,
        fix: `add "${check}" to required_checks in .github/forge.yml`,
        blocks: false,
      },
    ];
  }
  const reporters = reportersOf(c.forge.ci, check, c.branch, head);
  if (!reporters.length) {
    const named = namedAnywhere(c.forge.ci, check);
    return [
      {
        effect: named.length
          ? `a required check no workflow of yours reports on ${pr === "each task" ? "task pull requests" : pr}: "${check}" (${named.join(", ")} has a job of that name, but its triggers leave out pull requests into ${c.branch}); ${pr} waits for a person`
          : `a required check no workflow of yours reports: "${check}"; ${pr} waits for a person`,
        fix: `run a job named "${check}" on pull_request (its branches filter admitting ${c.branch}), or remove "${check}" from ${c.rule.ruleset.name !== undefined || c.rule.ruleset.id !== undefined ? rulesetName(c.rule) : "the branch's protection"}`,
        blocks: false,
      },
    ];
  }
  if (c.role === "base") return [];
  const out: Finding[] = [];
  if (c.forge.runnerToken === "job")
    out.push({
      effect: `required check "${check}" (${reporters.join(", ")}) does not run on the runner's pushes: they are made with the job's GITHUB_TOKEN, which starts no workflow; each task waits for a person`,
      fix: "give the Forge step a token of its own in github-token (README.md, \"The repository's CI on Forge's pushes\")",
      blocks: false,
    });
  if (!c.forge.config.required_checks.includes(check))
    out.push({
      effect: `required check "${check}" is not in Forge's required_checks: Forge neither waits for it nor answers it when red; a task whose check is pending shows "waiting for a person" until it passes`,
      fix: `add "${check}" to required_checks in .github/forge.yml`,
      blocks: false,
    });
  return out;
}

function mergeQueue(c: RuleCtx): Finding | undefined {
  if (c.role !== "integration" || appMerges(c)) return undefined;
  return {
    effect:
      "merge queue required: Forge merges each task through the queue (a merge group whose required check fails sends the task back for a fix), one group at a time, so merges are slower; the repository's CI must run on merge_group",
    fix: `${exclude(c, c.forge.integrationGlob)} (Forge merges one task at a time into its own branch; the queue belongs on ${c.forge.branches.base})`,
    blocks: false,
  };
}

/** Rules a push's commits or files must meet: the runner's pushes to a task branch, Forge's merges into the integration branch, the App's journal. */
function pushedContent(c: RuleCtx, effect: (what: string) => string): Finding | undefined {
  if (c.role === "task") return runnerHeld(c, effect("the runner cannot push task branches"));
  if (c.role === "integration" && !appMerges(c))
    return {
      effect: `${effect("Forge's merges into the integration branch are refused")}; each task waits for a person`,
      fix: exclude(c),
      blocks: false,
    };
  if (c.role === "state" && appHeld(c))
    return { effect: effect("the App cannot write its journal"), fix: bypass(c, "Always"), blocks: true };
  return undefined;
}

function commitMessage(c: RuleCtx): Finding | undefined {
  const texts =
    c.role === "state"
      ? c.forge.messages.journal
      : c.role === "integration"
        ? [...c.forge.messages.merges, ...(c.forge.method === "merge" ? c.forge.messages.runner : [])]
        : c.role === "task"
          ? c.forge.messages.runner
          : [];
  const bad = refusedText(c, texts);
  if (bad === undefined) return undefined;
  const found = pushedContent(
    c,
    (what) => `${what}: commit_message_pattern (${patternText(c.rule.parameters)}) refuses Forge's message "${firstLine(bad)}"`,
  );
  return found && { ...found, fix: `let messages starting "forge(" and "forge:" through, or ${exclude(c)}` };
}

function emailPattern(c: RuleCtx): Finding | undefined {
  if (c.role === "state" || c.role === "base" || (c.role === "integration" && c.forge.method !== "merge")) return undefined;
  if (patternAllows(c.rule.parameters, c.forge.runnerEmail) !== false) return undefined;
  return pushedContent(
    c,
    (what) => `${what}: ${c.rule.type} (${patternText(c.rule.parameters)}) refuses the runner's address ${c.forge.runnerEmail}`,
  );
}

function branchNamePattern(c: RuleCtx): Finding | undefined {
  if (c.role === "base" || patternAllows(c.rule.parameters, c.branch) !== false) return undefined;
  return {
    effect: `branch_name_pattern (${patternText(c.rule.parameters)}) refuses Forge's branch name ${c.branch}: it cannot be created`,
    fix: `let names under ${c.forge.refGlob.replace("refs/heads/", "")} through, or ${exclude(c)}`,
    blocks: true,
  };
}

/** The files Forge writes on the branch. */
const ownFiles = (c: RuleCtx): string[] => (c.role === "state" ? c.forge.files.journal : c.role === "base" ? [] : c.forge.files.record);

function filePaths(c: RuleCtx): Finding | undefined {
  const paths = (c.rule.parameters?.restricted_file_paths ?? []) as string[];
  const covers = (f: string) =>
    paths.some((p) => picomatch.isMatch(f, p, { dot: true }) || picomatch.isMatch(f, `${p.replace(/\/+$/, "")}/**`, { dot: true }));
  const own = ownFiles(c).find(covers);
  if (own) return pushedContent(c, (what) => `${what}: file_path_restriction covers Forge's own file ${own}`);
  if (c.role !== "task") return undefined;
  return {
    effect: `file_path_restriction: a task whose agent changes ${paths.join(", ")} fails (its push is refused)`,
    fix: exclude(c),
    blocks: false,
  };
}

function fileExtensions(c: RuleCtx): Finding | undefined {
  const exts = ((c.rule.parameters?.restricted_file_extensions ?? []) as string[]).map((e) => e.replace(/^\*?\.?/, "."));
  const own = ownFiles(c).find((f) => exts.some((e) => f.endsWith(e)));
  if (own) return pushedContent(c, (what) => `${what}: file_extension_restriction covers Forge's own file ${own}`);
  if (c.role !== "task") return undefined;
  return {
    effect: `file_extension_restriction: a task whose agent writes a ${exts.join(", ")} file fails (its push is refused)`,
    fix: exclude(c),
    blocks: false,
  };
}

function filePathLength(c: RuleCtx): Finding | undefined {
  const max = Number(c.rule.parameters?.max_file_path_length ?? Infinity);
  const own = ownFiles(c).find((f) => f.length > max);
  if (own) return pushedContent(c, (what) => `${what}: max_file_path_length ${max} is shorter than Forge's own file ${own}`);
  if (c.role !== "task") return undefined;
  const longest = Math.max(...c.forge.files.record.map((f) => f.length));
  return {
    effect: `max_file_path_length ${max}: a task whose agent writes a longer path fails; Forge's record files take ${longest} characters with these sample ids, more with longer plan and task ids`,
    fix: exclude(c),
    blocks: false,
  };
}

function fileSize(c: RuleCtx): Finding | undefined {
  if (c.role !== "task") return undefined;
  return {
    effect: `max_file_size ${String(c.rule.parameters?.max_file_size ?? "?")} MB: a task whose agent writes a larger file fails (its push is refused)`,
    fix: exclude(c),
    blocks: false,
  };
}

/** Rules that hold an update until something outside Forge has happened (a deployment, a workflow, code scanning). */
function waitsFor(c: RuleCtx, what: string): Finding | undefined {
  if (c.role === "task") return runnerHeld(c, `the runner cannot push task branches: ${what} must come first`);
  if (c.role === "state" && appHeld(c))
    return { effect: `the App cannot write its journal: ${what} must come first`, fix: bypass(c, "Always"), blocks: true };
  if (c.role === "integration" && !appMerges(c))
    return {
      effect: `each merge waits for ${what}, which Forge neither starts nor waits for; each task waits for a person${unlessApp(c)}`,
      fix: `${exclude(c, c.forge.integrationGlob)}, or ${bypass(c, "For pull requests only")}`,
      blocks: false,
    };
  return undefined;
}

const list = (v: unknown, key: string): string =>
  (Array.isArray(v) ? v : []).map((x) => (typeof x === "string" ? x : String((x as Record<string, unknown>)[key] ?? "?"))).join(", ");

type Effect = (c: RuleCtx) => Finding | Finding[] | undefined;

/** Rule types, each with what it does to Forge; a type not listed here (tags, Copilot review, …) does not stop Forge. */
export const RULE_EFFECTS: Record<string, Effect> = {
  creation,
  update,
  deletion,
  // Forge never force-pushes: non_fast_forward does not stop it.
  required_linear_history: linearHistory,
  required_signatures: signatures,
  pull_request: pullRequest,
  required_status_checks: statusChecks,
  merge_queue: mergeQueue,
  commit_message_pattern: commitMessage,
  commit_author_email_pattern: emailPattern,
  committer_email_pattern: emailPattern,
  branch_name_pattern: branchNamePattern,
  file_path_restriction: filePaths,
  file_extension_restriction: fileExtensions,
  max_file_path_length: filePathLength,
  max_file_size: fileSize,
  required_deployments: (c) =>
    waitsFor(c, `a successful deployment to ${list(c.rule.parameters?.required_deployment_environments, "name") || "an environment"}`),
  workflows: (c) => waitsFor(c, `the required workflows (${list(c.rule.parameters?.workflows, "path")}) to pass`),
  code_scanning: (c) => waitsFor(c, `code scanning results from ${list(c.rule.parameters?.code_scanning_tools, "tool")}`),
};

export function ruleFindings(c: RuleCtx): Finding[] {
  const effect = RULE_EFFECTS[c.rule.type];
  const found = effect ? effect(c) : undefined;
  return found === undefined ? [] : Array.isArray(found) ? found : [found];
}
