/** The data a stage sequence takes and gives back: task context, options, the stage manifest, the result. */
import type { GitRun } from "../branches.js";
import type { SquashRecord } from "../squash.js";
import type { LoadPromptOptions } from "../prompts.js";
import type { ExitCode } from "../../core/exit-codes.js";
import type { AdapterName, ProgressEvent, SpawnOptions } from "../types.js";
import type { StageName, StagedAgentType } from "./config.js";
import type { ModelRole, ModelPlan, TierName } from "../../core/tiers.js";

/**
 * What the job gathered for the agent: the one task context of the agent layer and the action (which
 * requires `title`, `branch` and `baseRef`: `JobTaskContext` in action/src/agent-runner.ts). Texts from
 * outside the plan are sanitized before they get here.
 */
export interface TaskContext {
  runId: string;
  taskId: string;
  attempt: number;
  title?: string;
  /** The task file (frontmatter + body) from the pinned plan. */
  task: string;
  spec?: string;
  plan?: string;
  /** The repository's AGENTS.md or CONTRIBUTING.md. */
  agentsMd?: string;
  dependencyWalkthroughs?: Array<{ taskId: string; text: string }>;
  /** The previous attempt's refinement document (exit 10). */
  refinement?: string;
  /** A person's answer to the previous attempt's question; outside text, sanitized here. */
  answer?: string;
  /** A revision of the attempt on its PR: the review to answer, already quoted and bounded by the job (action/src/task/revision.ts). */
  review?: string;
  /**
   * Messages from people for the running agent (`/forge steer`), quoted; the job adds to this array
   * while the agent runs (action/src/task/steering.ts), so stages that start later see them.
   */
  steering?: string[];
  testCommand?: string;
  /** The attempt's branch, checked out in `workdir` (for sub-agent branches). */
  branch?: string;
  /** The ref the attempt's branch started from (`FORGE_BASE_REF`). */
  baseRef?: string;
  /** Refinery: upstream refs to merge in its merge stage, already fetched (the ones the App could not merge). */
  mergeRefs?: string[];
  /**
   * Refinery on a branch that must keep a linear history: upstream heads (already fetched) its merge
   * stage squashes — the ones the runner's own squash before the agent found conflicted.
   */
  squash?: Array<{ branch: string; head: string; taskId?: string }>;
  /**
   * Refinery on a branch that must keep a linear history: every upstream squashed onto the branch so
   * far, by the runner before the agent and by the merge stage (which adds to this array). The runner
   * reports it in result.json (`squashed`).
   */
  squashed?: SquashRecord[];
  /** Captain: the plan folder to write and validate, relative to `workdir`. */
  planDir?: string;
  /** Captain: the goal (an issue) or the Change Request to answer; outside text, sanitized here. */
  goal?: string;
}

export type StageSpawnOptions = Omit<
  SpawnOptions,
  "prompt" | "systemPrompt" | "agentType" | "cwd" | "sessionDir" | "name" | "signal" | "onProgress" | "reports"
>;

export interface RunStagesOptions {
  agentType: StagedAgentType;
  taskContext: TaskContext;
  workdir: string;
  sessionDir: string;
  spawn: StageSpawnOptions;
  /**
   * The models of the sessions by role and tier (docs/runner.md#model-tiers; `modelPlan` of the config's
   * `agent`). Absent: every session takes `spawn.model`.
   */
  models?: ModelPlan;
  /** The task's own `model` (its front matter): its implementer sessions' tier or model id. */
  taskModel?: string;
  /** Override the sequence (else the repository's `.forge/stages.yml`, else the defaults). */
  stages?: StageName[];
  /** Type 3: run each subtask on `<branch>-<sub>` and merge it back (needs taskContext.branch). */
  subBranches?: boolean;
  /**
   * Runs git in `workdir` for the stages' own merges and sub-branches (default: plain `git`). The
   * action passes its hardened git: the checkout's `.git` was the agent's in the stage before.
   */
  git?: GitRun;
  /** Epoch ms by which every stage must be done (wall-clock budget of the agent); past it → 21. */
  deadline?: number;
  /** Sentinel cycles of the refinery's fix stage (default 3). */
  maxSentinelCycles?: number;
  /**
   * The task sentinel (task-sentinel.ts) of types 1, 2 and 3: on, the `sentinel` stage runs after the
   * task's own stages (appended when the sequence does not name it); off, it is taken out of the
   * sequence. Absent: the sequence as it is (the defaults do not name it). The runner always passes
   * the config's and the task's setting, on by default (`sentinel` in docs/formats.md#config).
   */
  sentinel?: { enabled: boolean; maxCycles?: number };
  /** Test command time limit (default 20 min). */
  testTimeoutMs?: number;
  signal?: AbortSignal;
  onProgress?: (event: ProgressEvent) => void;
  /**
   * Awaited after each stage ends, before the next starts (no session is running then): the job
   * pipeline commits and pushes the work so far. Its errors are reported as progress, never fatal.
   */
  onStageEnd?: (stage: StageName, record: StageRecord, progress: StageProgress) => Promise<void>;
  promptOptions?: LoadPromptOptions;
  /**
   * Continue an earlier attempt's work (docs/executor.md#resuming): the stages before `stage` were done
   * by attempt `fromAttempt` and are not run again; the first session of `stage` resumes the agent
   * CLI's `session` where the adapter can. A stage not in the sequence is ignored (all stages run).
   */
  resume?: {
    fromAttempt: number;
    stage?: StageName;
    /** The session to continue, and its conversation carried from the earlier job (src/agent/agent-sessions.ts) when there is one. */
    session?: { id: string; stage: StageName; file?: { path: string; root: string } };
    depthUsed?: number;
    /** The progress notes of the attempt it continues (its record's, masked): the new notes start with them. */
    notes?: string;
  };
}

/** Where a stage sequence stands: what a checkpoint records (docs/formats.md#checkpoint). */
export interface StageProgress {
  /** Stages that ended well (exit 0 or 12) — or were done by the attempt a resumed one continues — in order. */
  completed: Array<{ name: StageName; exit_code: ExitCode }>;
  /** Stages still to run, the one that stopped the sequence first. */
  pending: StageName[];
  /** The last agent session of the task's own kind, and its stage. */
  session?: { adapter: AdapterName; id: string; stage: StageName };
  /** The stage runner's own spawn depth and the budget. */
  depthUsed: number;
  depthMax: number;
  traceId: string;
}

export interface StageRecord {
  name: string;
  status: "success" | "failure" | "partial" | "skipped";
  /** Skipped because the attempt this one resumed had done it. */
  done_by_attempt?: number;
  exit_code: ExitCode;
  attempts: number;
  /** false: the stage is not required (`.forge/stages.yml`): its failure did not stop the sequence. */
  required?: false;
  /** The model of the stage's sessions of the task's own kind (absent: the CLI's default), its tier and role. */
  model?: string;
  tier?: TierName;
  role?: ModelRole;
  artifact?: string;
  error?: string;
  duration_ms: number;
  session_dirs: string[];
}

export interface StageManifest {
  orchestrator: string;
  version: 1;
  agent_type: StagedAgentType;
  run_id: string;
  task_id: string;
  attempt: number;
  trace_id: string;
  started_at: string;
  finished_at: string;
  stages: StageRecord[];
  summary: { total: number; passed: number; failed: number; skipped: number; exit_code: ExitCode };
}

/** How the task sentinel judged the work (result.json's `sentinel`, docs/formats.md#result-json). */
export interface SentinelVerdict {
  /** The role that checked: never the implementer's (a model tier may be set per role). */
  role: "sentinel";
  grade: "PASS" | "WARN" | "FAIL";
  /** Checks that found something to fix (the final check after the last fix is not one). */
  cycles: number;
  /** Fix sessions of the implementer. */
  fixes: number;
  /** Blocking problems after each check. */
  blocking_counts: number[];
}

export interface StagesResult {
  exitCode: ExitCode;
  manifest: StageManifest;
  manifestPath: string;
  walkthroughPath?: string;
  changeRequestPath?: string;
  question?: string;
  refinement?: string;
  rateLimitedUntil?: string;
  error?: string;
  model?: string;
  /** The model of each stage that ran a session of the task's own kind, in order. */
  models?: StageModel[];
  costUsd?: number;
  turns?: number;
  /** Where the sequence stopped: the checkpoint's stages, session and depth. */
  progress?: StageProgress;
  /** The task sentinel's verdict, when its stage ran to one. */
  sentinel?: SentinelVerdict;
}

/** A stage's model as the walkthrough and the report show it. */
export interface StageModel {
  stage: string;
  role: ModelRole;
  tier?: TierName;
  model?: string;
}

/** What the sequence adds to a result besides its exit code and manifest. */
export type StagesResultExtras = Omit<StagesResult, "exitCode" | "manifest" | "manifestPath">;
