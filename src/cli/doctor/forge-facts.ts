/**
 * What Forge will do on a repository, as `forge doctor` holds it against the repository's rules:
 * the branches it creates, pushes and merges into (from `.github/forge.yml`), the commit messages
 * and files it writes, the identity and token of the runner's pushes (from the agent workflow), the
 * merge method it chooses for the integration branch, and which checks the repository's workflows
 * report. Sample names stand for what a run will use.
 */
import YAML from "yaml";
import { parseConfigText } from "../../core/config.js";
import { exitMeaning } from "../../core/exit-codes.js";
import { branchName, executionReportPath, integrationBranch, resultPath, stateBranch, walkthroughPath } from "../../core/layout.js";
import type { ForgeConfig } from "../../core/schemas/config.js";
import { mergeMethodFor, type MergeMethod } from "../../github/merge-rules.js";
import type { ForgeBranches, Readiness } from "../../github/readiness.js";
import { ciJobs, type CiJob } from "./ci-reporters.js";

/** The run, task and attempt the sample names are made of. */
export const SAMPLE = { planId: "plan", runId: "plan-1a2b3c4", taskId: "task", attempt: 1, title: "A task" } as const;

/** What the Forge action's `git-user-email` input defaults to (action/action.yml): the Actions bot's noreply address. */
const RUNNER_EMAIL = "41898282+github-actions[bot]@users.noreply.github.com";

export interface ForgeFacts {
  config: ForgeConfig;
  /** the config could not be read or parsed: the defaults stand in, and this says why */
  configProblem?: string;
  branches: ForgeBranches;
  /** the pattern that names all of Forge's branches, for a ruleset's exclude list */
  refGlob: string;
  /** the pattern that names every run's integration branch */
  integrationGlob: string;
  /** whose token the runner pushes and opens pull requests with: the job's GITHUB_TOKEN, or one of the workflow's (`github-token`) */
  runnerToken: "job" | "own";
  runnerEmail: string;
  /** whether the agent workflow names its token's permissions */
  workflowPermissions: boolean;
  /** whether each rule's `appBypass` was read as the App */
  appKnown: boolean;
  /** the merge method Forge chooses for the integration branch, from its rules */
  method: MergeMethod;
  ci: CiJob[];
  /** commit messages: the runner's on a task branch, the App's merges, the App's journal writes */
  messages: { runner: string[]; merges: string[]; journal: string[] };
  /** files Forge itself writes: on a task branch (they reach the integration branch with it), on the state branch */
  files: { record: string[]; journal: string[] };
}

/** The branch names of a run, from the config's text. */
export function forgeBranches(configText: string | null, defaultBranch: string): ForgeBranches {
  const read = parseConfigText(configText ?? undefined);
  const config = read.ok ? read.config : parseConfigOrDefaults();
  return {
    state: stateBranch(SAMPLE.runId),
    task: branchName(config, SAMPLE.runId, SAMPLE.taskId, SAMPLE.attempt),
    integration: integrationBranch(config, SAMPLE.runId),
    base: config.base_branch ?? defaultBranch,
  };
}

function parseConfigOrDefaults(): ForgeConfig {
  const d = parseConfigText(undefined);
  if (!d.ok) throw new Error("the default config does not parse");
  return d.config;
}

/** `with:` of the agent workflow's Forge step, and whether the workflow or a job names `permissions:`. */
function forgeStep(workflow: string | null): { with: Record<string, unknown>; permissions: boolean } {
  try {
    const doc = (YAML.parse(workflow ?? "") ?? {}) as {
      permissions?: unknown;
      jobs?: Record<string, { permissions?: unknown; steps?: Array<{ uses?: string; with?: Record<string, unknown> }> }>;
    };
    const jobs = Object.values(doc.jobs ?? {});
    const step = jobs
      .flatMap((j) => j.steps ?? [])
      .find((s) => typeof s.uses === "string" && /(^|\/)forge\/action@|forge-dev\/forge/.test(s.uses));
    return { with: step?.with ?? {}, permissions: doc.permissions !== undefined || jobs.some((j) => j.permissions !== undefined) };
  } catch {
    return { with: {}, permissions: true };
  }
}

/**
 * The messages of the commits Forge writes, as they are written: the runner's start, work and record
 * commits (action/src/task/pull.ts, collect.ts, record.ts, with their trailers), a refinery's
 * upstream merges (src/app/effects/branches-and-dispatch.ts), the App's merge titles
 * (src/app/effects/merge.ts) and journal writes (src/app/run-store.ts, src/app/engine/journal-writes.ts).
 */
function messages(config: ForgeConfig, branches: ForgeBranches): ForgeFacts["messages"] {
  const { runId, taskId, attempt, title } = SAMPLE;
  const trailers = `Run: ${runId}\nTask: ${taskId}\nAttempt: ${attempt}`;
  return {
    runner: [
      `forge(${taskId}): start attempt ${attempt}\n\n${trailers}\nAgent: claude\n`,
      `forge(${taskId}): ${title}\n\n${trailers}\nAgent: claude\n`,
      `forge(${taskId}): record attempt ${attempt} (exit 0: ${exitMeaning(0)})\n\n${trailers}\n`,
      `forge: merge ${branchName(config, runId, "upstream", 1)} into ${branches.task}`,
    ],
    merges: [`forge(${taskId}): ${title}`],
    journal: [`forge: start run ${runId}`, `forge: ${runId} run.started (seq 1)`, `forge: the dispatch context of ${SAMPLE.taskId}.json`],
  };
}

export function forgeFacts(f: Readiness & { template: string }): ForgeFacts {
  const read = parseConfigText(f.config.ok ? (f.config.value ?? undefined) : undefined);
  const config = read.ok ? read.config : parseConfigOrDefaults();
  const configProblem = !f.config.ok
    ? `.github/forge.yml was not read (${f.config.reason}): Forge's defaults stand in`
    : !read.ok
      ? `.github/forge.yml does not parse (${read.problems[0]?.message ?? "invalid"}): Forge's defaults stand in`
      : undefined;
  const workflow = f.workflow.ok ? f.workflow.value : null;
  const step = forgeStep(workflow ?? f.template);
  const prefix = config.branch_template.split("{runId}")[0] ?? "";
  const rules = f.rules.ok ? f.rules.value : undefined;
  return {
    config,
    ...(configProblem ? { configProblem } : {}),
    branches: f.branches,
    refGlob: `refs/heads/${prefix}**`,
    integrationGlob: `refs/heads/${config.integration_branch_template.replaceAll("{runId}", "*")}`,
    runnerToken: typeof step.with["github-token"] === "string" && step.with["github-token"] !== "" ? "own" : "job",
    runnerEmail: typeof step.with["git-user-email"] === "string" ? step.with["git-user-email"] : RUNNER_EMAIL,
    workflowPermissions: step.permissions,
    appKnown: rules?.asApp ?? false,
    method: mergeMethodFor(rules?.integration ?? []),
    ci: f.workflows.ok ? ciJobs(f.workflows.value, ".github/workflows/" + config.workflow) : [],
    messages: messages(config, f.branches),
    files: {
      record: [
        walkthroughPath(SAMPLE.runId, SAMPLE.taskId, SAMPLE.attempt),
        resultPath(SAMPLE.runId, SAMPLE.taskId, SAMPLE.attempt),
        executionReportPath(SAMPLE.runId, SAMPLE.taskId, SAMPLE.attempt),
      ],
      journal: ["journal.json", "events/000001.ndjson"],
    },
  };
}
