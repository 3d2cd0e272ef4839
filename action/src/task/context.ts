/**
 * The explicit state of a task job, passed to every step. `TaskJob` is what the job knows from its
 * start; `TaskAttempt` adds what the dispatch check, the checkout and the session gave it, and
 * `BranchState` the few things that change while it runs (the remote head, pushes, the fold base
 * of the agent's work, refused paths, the draft PR being opened).
 */
import type { FollowupState, Journal, PlanNode, TaskState } from "../../../src/core/journal.js";
import type { ForgeConfig } from "../../../src/core/schemas/config.js";
import type { BuiltTaskContext } from "../task-context.js";
import type { AttemptEvents } from "../events.js";
import type { LiveReport } from "../live-report.js";
import type { LiveCheck } from "./live-check.js";
import type { SpendMeter } from "./spend.js";
import type { AttemptTelemetry } from "./telemetry.js";
import type { Git } from "../git.js";
import type { JobGitHub, PullRef } from "../github.js";
import { NO_LOG, type JobArgs, type JobLogger, type MainDeps, type MainInput } from "../job.js";
import type { Refusal } from "../protected-paths.js";
import type { AttemptId } from "../start-head.js";

export interface TaskJob {
  readonly config: ForgeConfig;
  readonly input: MainInput;
  readonly deps: MainDeps;
  readonly git: Git;
  readonly github: JobGitHub;
  readonly now: () => number;
  readonly log: JobLogger;
  readonly ids: AttemptId;
  /** When the job started (the clock of `now`). */
  readonly t0: number;
  /** Milliseconds since t0 at the end of each step, for the job log and the overhead figures. */
  readonly marks: Record<string, number>;
  /** Warnings for the summary and the job log, from every step. */
  readonly warnings: string[];
}

export function openTaskJob({ config, input, deps }: JobArgs): TaskJob {
  const now = deps.now ?? Date.now;
  return {
    config,
    input,
    deps,
    git: deps.git,
    github: deps.github,
    now,
    log: deps.log ?? NO_LOG,
    ids: { runId: input.runId, taskId: input.taskId, attempt: input.attempt },
    t0: now(),
    marks: {},
    warnings: [],
  };
}

/** Notes the end of a step. */
export function mark(job: TaskJob, label: string): void {
  job.marks[label] = job.now() - job.t0;
}

/** The dispatch is current and its branch is checked out. */
export interface CheckedOut {
  readonly journal: Journal;
  readonly task: TaskState;
  readonly node: PlanNode;
  readonly followup?: FollowupState;
  readonly branch: string;
  /** The run's integration branch: the PR's base. */
  readonly base: string;
  /** The attempt's record folder, relative to the checkout. */
  readonly recordRel: string;
  /** The branch's tip at checkout. */
  readonly tip: string;
  /** Where this attempt's branch started, before any of its commits: what it changed is measured from here. */
  readonly startHead: string;
}

export interface BranchState {
  /** The branch head on the remote as far as this job knows: its tip at checkout, then each push. */
  remoteHead: string;
  /** Every push of the branch this job made. */
  pushes: number;
  /** Progress pushes at stage ends. */
  progressPushes: number;
  /** The head before the agent started. */
  preAgentHead: string;
  /** The agent's work is folded over this commit: the pre-agent head, then the last progress commit. */
  foldBase: string;
  /**
   * The commit whose copy of the attempt's record folder is the runner's own: the pre-agent head,
   * then each checkpoint commit (task/checkpoint.ts). The agent's changes there are put back to it.
   */
  recordBase: string;
  /**
   * The branch must keep a linear history (a refinery whose upstreams are squashed): no merge commit
   * is kept — the agent's and its sub-agents' merges are folded like any of its commits.
   */
  readonly linear: boolean;
  /** Changes to protected paths the job put back, by path. */
  readonly refused: Map<string, Refusal>;
  /** The draft PR being opened (or the one found); the start commit's push comes with it. */
  prOpening: Promise<PullRef | undefined>;
}

/** One attempt of one task, from its session on. */
export interface TaskAttempt extends TaskJob, CheckedOut {
  /** Outside the work tree; copied into the record folder at the end. */
  readonly sessionDir: string;
  readonly events: AttemptEvents;
  /** `.live-report` in the session folder: stage and tool events as they happen. */
  readonly live: LiveReport;
  /** The live check run: stage, tool calls, turns and spend while the agent works. */
  readonly liveCheck: LiveCheck;
  /** What the agent spent so far, by its adapter's accounting and its spend file. */
  readonly spend: SpendMeter;
  /** Traces and metrics, when the config names a collector. */
  telemetry?: AttemptTelemetry;
  readonly built: BuiltTaskContext;
  /** `forge(<task>): <title>`: the PR's title and the work commit's subject. */
  readonly prTitle: string;
  /** Where the agent writes its walkthrough. */
  readonly walkthroughSession: string;
  readonly branchState: BranchState;
  /** Checkpoints written so far (task/checkpoint.ts numbers their files with it). */
  checkpoints: number;
}
