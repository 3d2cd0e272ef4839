/**
 * An agent type's stage sequence, in tool-composition mode: plain code, no model, zero depth. Each
 * stage is one agent session (the type's system prompt + a stage prompt saying WHAT to do) or a step
 * Forge does itself (git merges, the test command, plan validation).
 *
 * Rules: exit 1 → the stage is retried once with the failure in its prompt; a session that ran past
 * its own time limit (the stage's, or the idle limit) → killed and tried once more, then 21; 12 → the
 * partial stage (type 3: its failed subtasks) tried once more, what succeeded kept, then go on,
 * the result partial; 2 → abort, never retried; 3 → abort with the question; 10 → abort with the
 * refinement document; 11 → abort with the Change Request; 20 and the deadline's 21 → abort; a rate
 * limit → abort with the reset time. The stage manifest is written to `<sessionDir>/manifest.json`.
 *
 * The parts, beside this file: config.ts (which stages each type may run, its defaults,
 * `.forge/stages.yml`), context.ts (the state the stages share and the session primitives),
 * sequence.ts (the loop and the manifest), one module per agent type with its steps (type-1-2.ts,
 * type-3.ts with subtasks.ts, refinery.ts with sentinel.ts, captain.ts), prompt.ts, change-request.ts.
 */
import {
  defaultStages,
  isStageOf,
  loadStageConfig,
  SENTINEL_TYPES,
  sequenceOf,
  type StageName,
  type StageSettings,
  type StagedAgentType,
} from "./config.js";
import { openStageContext } from "./context.js";
import { CAPTAIN_STEPS } from "./captain.js";
import { REFINERY_STEPS } from "./refinery.js";
import { finishStages, runSequence, type StepTables } from "./sequence.js";
import { TYPE_1_STEPS, TYPE_2_STEPS } from "./type-1-2.js";
import { TYPE_3_STEPS } from "./type-3.js";
import type { RunStagesOptions, StagesResult } from "./types.js";

export {
  DEFAULT_STAGES,
  STAGE_CONFIG_FILE,
  STAGE_NAMES,
  STAGED_AGENT_TYPES,
  defaultStages,
  loadStageConfig,
  stageConfigSchema,
  stageSettingsSchema,
} from "./config.js";
export type { StageConfig, StageName, StageSettings, StagedAgentType } from "./config.js";
export type { SentinelVerdict } from "./types.js";
export { DEFAULT_TASK_SENTINEL_CYCLES, SENTINEL_ROLE } from "./task-sentinel.js";
export type {
  RunStagesOptions,
  StageManifest,
  StageModel,
  StageProgress,
  StageRecord,
  StageSpawnOptions,
  StagesResult,
  TaskContext,
} from "./types.js";
export type { VerificationResults } from "./sentinel.js";
export { readSubtasks, subtaskDir, type Subtask } from "./subtasks.js";
export { stagePrompt } from "./prompt.js";

const STEPS: StepTables = { "1": TYPE_1_STEPS, "2": TYPE_2_STEPS, "3": TYPE_3_STEPS, refinery: REFINERY_STEPS, captain: CAPTAIN_STEPS };

export async function runStages(options: RunStagesOptions): Promise<StagesResult> {
  const c = await openStageContext(options);
  const sequence = await stageSequence(options.agentType, options.workdir, options.stages);
  const { settings, configError } = sequence;
  Object.assign(c.settings, settings);
  const names = withSentinel(options, sequence.names);
  const run = await runSequence(c, STEPS, names);
  return finishStages(c, names, run, configError);
}

/**
 * The task sentinel's place: after the task's own stages when it is on (types 1, 2 and 3), nowhere
 * when it is off; the sequence as it is when the caller says nothing.
 */
function withSentinel(options: RunStagesOptions, names: readonly StageName[]): readonly StageName[] {
  const s = options.sentinel;
  if (!s) return names;
  if (!s.enabled || !SENTINEL_TYPES.includes(options.agentType)) return names.filter((n) => n !== "sentinel");
  return names.length === 0 || names.includes("sentinel") ? names : [...names, "sentinel"];
}

/**
 * The stages to run: the caller's (each one checked: a stage the type cannot run throws), else the
 * repository's `.forge/stages.yml`, else the defaults. A malformed config runs nothing and fails the
 * attempt with its message, where the user sees it.
 */
async function stageSequence(
  type: StagedAgentType,
  workdir: string,
  stages?: StageName[],
): Promise<{ names: readonly StageName[]; settings: Partial<Record<StageName, StageSettings>>; configError?: string }> {
  if (stages) for (const s of stages) if (!isStageOf(type, s)) throw new Error(`stage '${s}' is not available to type ${type}`);
  if (stages) return { names: stages, settings: {} };
  try {
    const own = (await loadStageConfig(workdir))[type];
    return own ? sequenceOf(own) : { names: defaultStages(type), settings: {} };
  } catch (err) {
    return { names: [], settings: {}, configError: (err as Error).message };
  }
}
