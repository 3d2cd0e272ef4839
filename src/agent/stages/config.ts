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

import { DEFAULT_STAGES, STAGE_NAMES, STAGED_AGENT_TYPES, isStageOf, type StageName, type StagedAgentType } from "../../core/stages.js";

export { DEFAULT_STAGES, SENTINEL_TYPES, STAGE_NAMES, STAGED_AGENT_TYPES, STAGES_FOR, isStageOf } from "../../core/stages.js";
export type { StageName, StagedAgentType, StagesOf } from "../../core/stages.js";

export function defaultStages(type: StagedAgentType): StageName[] {
  return [...DEFAULT_STAGES[type]];
}

/** `.forge/stages.yml` in the repository: `{ "1": [implement, walkthrough], refinery: [...] }`. */
export const stageConfigSchema = z
  .object(
    Object.fromEntries(STAGED_AGENT_TYPES.map((t) => [t, z.array(z.enum(STAGE_NAMES)).min(1).optional()])) as Record<
      StagedAgentType,
      z.ZodOptional<z.ZodArray<z.ZodEnum<{ [K in StageName]: K }>>>
    >,
  )
  .strict()
  .superRefine((cfg, ctx) => {
    for (const type of STAGED_AGENT_TYPES) {
      for (const stage of cfg[type] ?? []) {
        if (!isStageOf(type, stage))
          ctx.addIssue({ code: "custom", path: [type], message: `stage '${stage}' is not available to type ${type}` });
      }
    }
  })
  .describe("Stage sequences per agent type; missing types keep Forge's defaults.");
export type StageConfig = z.infer<typeof stageConfigSchema>;

export const STAGE_CONFIG_FILE = ".forge/stages.yml";

/** The repository's stage config, or an empty one; a malformed file is an error naming the line or the field. */
export async function loadStageConfig(repoDir: string): Promise<StageConfig> {
  const text = await readAgentText(repoDir, path.join(repoDir, STAGE_CONFIG_FILE));
  const read = parseYamlConfig(STAGE_CONFIG_FILE, text, stageConfigSchema);
  if (!read.ok) throw new Error(read.problems.map((p) => formatProblem(p)).join("; "));
  return read.config;
}
