/**
 * Where Forge keeps things in the user's repository, shared by the App and the runner so both
 * sides agree: the names Forge builds — branches, its own task and run ids — and the parsers that
 * read them back, side by side. Forge's own names start with '_', which no task id can, so they
 * never collide with task branches (`forge/<runId>/<taskId>/<attempt>`).
 */
import { ID_PATTERN } from "./schemas/common.js";
import type { ForgeConfig } from "./schemas/config.js";

/** Forge's own ids (`_followup-<n>`, `_captain-<crId>`, `_plan-<issue>`) and branch names (`_state`, `_integration`) start with it; `ID_PATTERN` keeps task ids from doing so. */
export const RESERVED_PREFIX = "_";

/** Run ids name branches (`forge/<runId>/…`): letters, digits, '.', '_' and '-', starting with a letter or digit. */
export const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** A run of a plan at a commit: `<planId>-<first 7 hex of the commit>` (one run per plan commit). */
export const runIdFor = (planId: string, planCommit: string) => `${planId}-${planCommit.slice(0, 7)}`;

/** Every branch of a run (but a task branch of a template of the user's) is under `forge/<runId>/`. */
export const BRANCH_PREFIX = "forge/";
export const runBranchPrefix = (runId: string) => `${BRANCH_PREFIX}${runId}/`;

/** The branch holding a run's journal (`journal.json`) and event log segments (`events/NNNNNN.ndjson`). */
export const stateBranch = (runId: string) => `${runBranchPrefix(runId)}_state`;

/** The run id of a state branch; undefined for any name `stateBranch` does not build. */
export function parseStateBranch(name: string): string | undefined {
  const runId = /^forge\/([^/]+)\/_state$/.exec(name)?.[1];
  return runId !== undefined && RUN_ID_PATTERN.test(runId) ? runId : undefined;
}

/** The integration branch's template when the config names none. */
export const DEFAULT_INTEGRATION_BRANCH_TEMPLATE = "forge/{runId}/_integration";

/** The run's integration branch, from the configured template. */
export function integrationBranch(config: Pick<ForgeConfig, "integration_branch_template">, runId: string): string {
  return config.integration_branch_template.replaceAll("{runId}", runId);
}

/** The run id of an integration branch of the default template; undefined for any other name. */
export function parseIntegrationBranch(name: string): string | undefined {
  const runId = /^forge\/([^/]+)\/_integration$/.exec(name)?.[1];
  return runId !== undefined && RUN_ID_PATTERN.test(runId) ? runId : undefined;
}

/**
 * A run's own bookkeeping branch, named by the default layout: its state branch or its integration
 * branch. No attempt works on one.
 */
export const isReservedBranch = (name: string): boolean =>
  parseStateBranch(name) !== undefined || parseIntegrationBranch(name) !== undefined;

/** The task branch's template when the config names none. */
export const DEFAULT_BRANCH_TEMPLATE = "forge/{runId}/{taskId}/{attempt}";

/** The run, task (or follow-up) and attempt a branch belongs to. */
export interface AttemptRef {
  runId: string;
  taskId: string;
  attempt: number;
}

/** The branch an attempt works on, from the configured template. */
export function branchName(config: Pick<ForgeConfig, "branch_template">, runId: string, taskId: string, attempt: number): string {
  return config.branch_template.replaceAll("{runId}", runId).replaceAll("{taskId}", taskId).replaceAll("{attempt}", String(attempt));
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * A parser of the branches `branchName` builds from the template: the attempt, or undefined for a
 * name it does not build (a run id outside `RUN_ID_PATTERN`, a task id that is neither a task's nor
 * a follow-up's).
 */
export function branchParser(config: Pick<ForgeConfig, "branch_template">): (branch: string) => AttemptRef | undefined {
  const pattern = escape(config.branch_template)
    .replace(escape("{runId}"), "(?<runId>[^/]+)")
    .replace(escape("{taskId}"), "(?<taskId>[^/]+)")
    .replace(escape("{attempt}"), "(?<attempt>\\d+)");
  const re = new RegExp(`^${pattern}$`);
  return (branch) => {
    const m = re.exec(branch);
    if (!m?.groups) return undefined;
    const { runId, taskId } = m.groups as { runId: string; taskId: string };
    if (!RUN_ID_PATTERN.test(runId) || !(ID_PATTERN.test(taskId) || FOLLOWUP_ID.test(taskId))) return undefined;
    return { runId, taskId, attempt: Number(m.groups.attempt) };
  };
}

/** A follow-up's id: `_followup-<n>`, n from 1. It is not a plan task: no task file, one attempt. */
export const followupId = (n: number) => `${RESERVED_PREFIX}followup-${n}`;
export const FOLLOWUP_ID = /^_followup-[1-9][0-9]*$/;
export const isFollowupId = (id: string): boolean => FOLLOWUP_ID.test(id);

const parseDefaultBranch = branchParser({ branch_template: DEFAULT_BRANCH_TEMPLATE });

/** A follow-up's branch as the default template names it (`forge/<runId>/_followup-<n>/<attempt>`), whatever the configured one. */
export function parseFollowupBranch(name: string): AttemptRef | undefined {
  const ref = parseDefaultBranch(name);
  return ref && isFollowupId(ref.taskId) ? ref : undefined;
}

/** A Captain's task id, `_captain-<crId>`: it answers Change Request `crId` with an overlay. */
export const captainId = (crId: string) => `${RESERVED_PREFIX}captain-${crId}`;
/** Matches a Captain's task id, the Change Request's id in group 1. A plan Captain's id matches too: test `CAPTAIN_PLAN_ID` first. */
export const CAPTAIN_ID = /^_captain-([A-Za-z0-9][A-Za-z0-9._-]*)$/;
/** The Change Request a Captain's task id names; undefined for any other id. */
export const parseCaptainId = (taskId: string): string | undefined => CAPTAIN_ID.exec(taskId)?.[1];

/** The branch a Captain writes its overlay on: `forge/<runId>/_captain-<crId>`. */
export const captainBranch = (runId: string, crId: string) => `${runBranchPrefix(runId)}${captainId(crId)}`;
/** The run and Change Request of a Captain's branch; undefined for any name `captainBranch` does not build. */
export function parseCaptainBranch(name: string): { runId: string; crId: string } | undefined {
  const m = /^forge\/([^/]+)\/(_captain-[^/]+)$/.exec(name);
  const crId = m ? parseCaptainId(m[2]!) : undefined;
  return m && crId !== undefined && RUN_ID_PATTERN.test(m[1]!) ? { runId: m[1]!, crId } : undefined;
}

/** A plan Captain (`/forge plan` on an issue) runs as `_plan-<issue>`: no run, no journal. */
export const planRunId = (issue: number) => `${RESERVED_PREFIX}plan-${issue}`;
export const PLAN_RUN_ID = /^_plan-([1-9][0-9]*)$/;
/** Its task id, `_captain-plan-<issue>`. */
export const planCaptainId = (issue: number) => captainId(`plan-${issue}`);
export const CAPTAIN_PLAN_ID = /^_captain-plan-([1-9][0-9]*)$/;
/** The issue a plan Captain's task id names; undefined for any other id. */
export function parsePlanCaptainId(taskId: string): number | undefined {
  const issue = CAPTAIN_PLAN_ID.exec(taskId)?.[1];
  return issue === undefined ? undefined : Number(issue);
}
/** The branch it writes the plan on, cut from the default branch: `forge/_plan-<issue>`. */
export const planCaptainBranch = (issue: number) => `${BRANCH_PREFIX}${planRunId(issue)}`;

export const JOURNAL_FILE = "journal.json";
export const eventSegmentFile = (segment: number) => `events/${String(segment).padStart(6, "0")}.ndjson`;

/** Folder of a task's attempt records in a run: a resumed attempt's branch holds the records of the attempts it continues. */
export const taskRecordsDir = (runId: string, taskId: string) => `.forge/runs/${runId}/${taskId}`;
/** Folder of one attempt's record on its task branch: walkthrough, result, events, signals, manifests. */
export const attemptDir = (runId: string, taskId: string, attempt: number) => `${taskRecordsDir(runId, taskId)}/${attempt}`;
export const walkthroughPath = (runId: string, taskId: string, attempt: number) => `${attemptDir(runId, taskId, attempt)}/walkthrough.md`;
export const resultPath = (runId: string, taskId: string, attempt: number) => `${attemptDir(runId, taskId, attempt)}/result.json`;
/**
 * The attempt's latest checkpoint on its branch (docs/formats.md#checkpoint): the runner commits it
 * after each stage, alone in a checkpoint commit whose parent is the head it names, and once more in
 * the record. The App reads it when the attempt ends with no result.
 */
export const checkpointPath = (runId: string, taskId: string, attempt: number) => `${attemptDir(runId, taskId, attempt)}/checkpoint.json`;
/** The attempt's execution report (docs/formats.md#execution-report), beside its result. */
export const executionReportPath = (runId: string, taskId: string, attempt: number) =>
  `${attemptDir(runId, taskId, attempt)}/execution-report.md`;

/** Plans live here on the default branch. */
export const planDir = (planId: string) => `.forge/plans/${planId}`;

/** The plan and the file inside its folder a repository path names (`.forge/plans/<planId>/<file>`); undefined outside a plan folder. */
export function parsePlanPath(path: string): { planId: string; file: string } | undefined {
  const m = /^\.forge\/plans\/([^/]+)\/(.+)$/.exec(path);
  return m ? { planId: m[1]!, file: m[2]! } : undefined;
}

/**
 * Files agents read as instructions: a change by one agent would steer every later one — the next
 * stage's session in the same job (Claude Code and Codex load them from the working tree by
 * themselves), and every later task once merged. They change only through a person.
 */
export const INSTRUCTION_PATHS = [
  "**/AGENTS.md",
  // Codex reads it instead of AGENTS.md, in every folder (its `project_doc_fallback_filenames` are
  // none by default; a repository sets them only in `.codex/`, protected below).
  "**/AGENTS.override.md",
  "**/CLAUDE.md",
  "**/CLAUDE.local.md",
  "**/GEMINI.md",
  ".claude/**",
  ".codex/**",
  ".agents/**",
  ".gemini/**",
  ".cursor/**",
  ".cursorrules",
  ".mcp.json",
  ".forge/prompts/**",
  ".forge/stages.yml",
  ".gitmodules",
  "**/.gitattributes",
] as const;

/**
 * Paths an agent may never change (see docs/runner.md#protected-paths), the one list the runner
 * refuses and the App holds: the plan is immutable, `.github/` is the user's (workflows run with the
 * job's rights; `forge.yml` is Forge's config; Copilot's instructions), `.env*` files hold what
 * tools and `forge` load as settings (an API URL, a token), and the instruction files steer other agents.
 */
export const PROTECTED_PATHS = [".forge/plans/**", ".github/**", "**/.env*", ...INSTRUCTION_PATHS] as const;

/**
 * Trailers of the runner's record commit — the last commit of an attempt, a child of the agent's
 * work commit that adds only the attempt's record folder. The App recognises the record commit in
 * a push webhook by them, without an API call.
 */
export const TRAILERS = {
  run: "Forge-Run",
  task: "Forge-Task",
  attempt: "Forge-Attempt",
  agent: "Forge-Agent",
  exit: "Forge-Exit",
  /** A revision of the attempt on its PR (docs/executor.md#iterations); absent on the attempt's first run. */
  iteration: "Forge-Iteration",
  /** The runner's checkpoint commit after a stage (the stage's name): it adds only the attempt's checkpoint and its agent's conversation. */
  checkpoint: "Forge-Checkpoint",
} as const;

/** Inputs of the agent workflow (`workflow_dispatch`), as the App sends them. */
export const DISPATCH_INPUTS = {
  runId: "run_id",
  taskId: "task_id",
  attempt: "attempt",
  /** JSON `{ refinement?, answer? }` for the attempt: the previous attempt's refinement document or a person's answer. */
  context: "context",
} as const;

/** Check run name of a task (one check run per attempt, owned by the App). */
export const checkRunName = (taskId: string) => `forge · ${taskId}`;

/** Labels Forge puts on issues and PRs. */
export const LABELS = { tracker: "forge:run", changeRequest: "forge:change-request", task: "forge:task" } as const;
