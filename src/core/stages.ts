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
] as const;
export type StageName = (typeof STAGE_NAMES)[number];

/** Stages each type may use. `single` is one session doing everything, walkthrough included. */
export const STAGES_FOR = {
  "1": ["single", "implement", "verify", "walkthrough"],
  "2": ["single", "implement", "verify", "walkthrough"],
  "3": ["single", "plan", "work", "implement", "verify", "walkthrough"],
  refinery: ["single", "merge", "test", "fix", "verify", "walkthrough"],
  captain: ["single", "write", "validate", "walkthrough"],
} as const satisfies Record<StagedAgentType, readonly StageName[]>;

/** The stages type `T` may run. */
export type StagesOf<T extends StagedAgentType> = (typeof STAGES_FOR)[T][number];

export function isStageOf(type: StagedAgentType, stage: string): stage is StageName {
  return (STAGES_FOR[type] as readonly string[]).includes(stage);
}

export const DEFAULT_STAGES: Record<StagedAgentType, readonly StageName[]> = {
  "1": ["implement", "verify", "walkthrough"],
  "2": ["implement", "verify", "walkthrough"],
  "3": ["plan", "work", "walkthrough"],
  refinery: ["merge", "test", "fix", "walkthrough"],
  captain: ["write", "validate"],
};
