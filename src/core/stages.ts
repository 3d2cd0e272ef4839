/**
 * The stages of the agent layer as data (docs/runner.md#stages): which stages each agent type may
 * run and its default sequence. Plain data shared by the runner, which runs them
 * (src/agent/stages/), and the App, which validates a checkpoint's stages before a retry resumes
 * from one (docs/executor.md#resuming).
 */

/** Agent types that run a stage sequence. */
export type StagedAgentType = "1" | "2" | "3" | "refinery" | "captain";
export const STAGED_AGENT_TYPES: readonly StagedAgentType[] = ["1", "2", "3", "refinery", "captain"];

export const STAGE_NAMES = [
  "single",
  "implement",
  "verify",
  "walkthrough",
  "plan",
  "work",
  "merge",
  "test",
  "fix",
  "write",
  "validate",
  "sentinel",
] as const;
export type StageName = (typeof STAGE_NAMES)[number];

/**
 * Stages each type may use. `single` is one session doing everything, walkthrough included.
 * `sentinel` is the independent check after a task's own stages (src/agent/stages/task-sentinel.ts):
 * not in the defaults, the runner appends it when the task's sentinel is on (`sentinel` in
 * `.github/forge.yml` and in the task's front matter), and removes it when it is off.
 */
export const STAGES_FOR = {
  "1": ["single", "implement", "verify", "walkthrough", "sentinel"],
  "2": ["single", "implement", "verify", "walkthrough", "sentinel"],
  "3": ["single", "plan", "work", "implement", "verify", "walkthrough", "sentinel"],
  refinery: ["single", "merge", "test", "fix", "verify", "walkthrough"],
  captain: ["single", "write", "validate", "walkthrough"],
} as const satisfies Record<StagedAgentType, readonly StageName[]>;

/** The stages type `T` may run. */
export type StagesOf<T extends StagedAgentType> = (typeof STAGES_FOR)[T][number];

export function isStageOf(type: StagedAgentType, stage: string): stage is StageName {
  return (STAGES_FOR[type] as readonly string[]).includes(stage);
}

/** The types whose tasks a sentinel checks after their own stages; the refinery has its own test and fix stages. */
export const SENTINEL_TYPES: readonly StagedAgentType[] = ["1", "2", "3"];

export const DEFAULT_STAGES: Record<StagedAgentType, readonly StageName[]> = {
  "1": ["implement", "verify", "walkthrough"],
  "2": ["implement", "verify", "walkthrough"],
  "3": ["plan", "work", "walkthrough"],
  refinery: ["merge", "test", "fix", "walkthrough"],
  captain: ["write", "validate"],
};
