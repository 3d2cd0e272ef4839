/**
 * Which stages each agent type may run, the sequence it runs by default, and the repository's
 * override in `.forge/stages.yml`. Plain data: the stage steps themselves live in one module per
 * agent type beside this one, each typed by `StagesOf<T>` so a stage listed here without a step
 * is a compile error.
 */
import { readAgentText } from "../agent-files.js";
import path from "node:path";
import { z } from "zod";
import { parseYamlConfig } from "../../core/config.js";
import { formatProblem } from "../../core/problems.js";
import { modelSpecSchema } from "../../core/tiers.js";

import { DEFAULT_STAGES, STAGE_NAMES, STAGED_AGENT_TYPES, isStageOf, type StageName, type StagedAgentType } from "../../core/stages.js";

export { DEFAULT_STAGES, SENTINEL_TYPES, STAGE_NAMES, STAGED_AGENT_TYPES, STAGES_FOR, isStageOf } from "../../core/stages.js";
export type { StageName, StagedAgentType, StagesOf } from "../../core/stages.js";

export function defaultStages(type: StagedAgentType): StageName[] {
  return [...DEFAULT_STAGES[type]];
}

/** A stage's own settings in `.forge/stages.yml` (docs/runner.md#stage-settings). */
export const stageSettingsSchema = z
  .object({
    name: z.enum(STAGE_NAMES).describe("The stage."),
    model: modelSpecSchema.optional().describe("A tier or a model id for the stage's sessions of the task's own kind."),
    retry: z
      .number()
      .int()
      .min(0)
      .max(5)
      .optional()
      .describe("How many more times the stage's session is tried after exit 1, its own timeout or a partial end (default 1)."),
    required: z
      .boolean()
      .optional()
      .describe(
        "false: a failure of the stage (exit 1, its own timeout) is recorded and the sequence goes on, the attempt partial (default true).",
      ),
  })
  .strict();
export type StageSettings = z.infer<typeof stageSettingsSchema>;

/** One entry of a sequence: a stage's name, or its name with settings. */
const stageEntrySchema = z.union([z.enum(STAGE_NAMES), stageSettingsSchema]);
export type StageEntry = z.infer<typeof stageEntrySchema>;

export function entryName(entry: StageEntry): StageName {
  return typeof entry === "string" ? entry : entry.name;
}

/** `.forge/stages.yml` in the repository: `{ "1": [implement, { name: verify, model: low, retry: 2 }, walkthrough], refinery: [...] }`. */
export const stageConfigSchema = z
  .object(
    Object.fromEntries(STAGED_AGENT_TYPES.map((t) => [t, z.array(stageEntrySchema).min(1).optional()])) as Record<
      StagedAgentType,
      z.ZodOptional<z.ZodArray<typeof stageEntrySchema>>
    >,
  )
  .strict()
  .superRefine((cfg, ctx) => {
    for (const type of STAGED_AGENT_TYPES) {
      for (const entry of cfg[type] ?? []) {
        const stage = entryName(entry);
        if (!isStageOf(type, stage))
          ctx.addIssue({ code: "custom", path: [type], message: `stage '${stage}' is not available to type ${type}` });
      }
    }
  })
  .describe("Stage sequences per agent type; missing types keep Forge's defaults.");
export type StageConfig = z.infer<typeof stageConfigSchema>;

/** A sequence as names and each stage's settings. */
export function sequenceOf(entries: readonly StageEntry[]): { names: StageName[]; settings: Partial<Record<StageName, StageSettings>> } {
  const settings: Partial<Record<StageName, StageSettings>> = {};
  for (const e of entries) if (typeof e !== "string") settings[e.name] = e;
  return { names: entries.map(entryName), settings };
}

export const STAGE_CONFIG_FILE = ".forge/stages.yml";

/** The repository's stage config, or an empty one; a malformed file is an error naming the line or the field. */
export async function loadStageConfig(repoDir: string): Promise<StageConfig> {
  const text = await readAgentText(repoDir, path.join(repoDir, STAGE_CONFIG_FILE));
  const read = parseYamlConfig(STAGE_CONFIG_FILE, text, stageConfigSchema);
  if (!read.ok) throw new Error(read.problems.map((p) => formatProblem(p)).join("; "));
  return read.config;
}
