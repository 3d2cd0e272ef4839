/**
 * Whether the task sentinel checks a task (docs/runner.md#the-task-sentinel): the config's
 * `sentinel` (`.github/forge.yml`, pinned with the plan for the run) unless the task's front matter
 * says otherwise. Refineries verify in their own stages; the runner never gives them the sentinel.
 */
import type { ForgeConfig } from "./schemas/config.js";
import type { TaskFrontmatter } from "./schemas/task.js";

export interface SentinelSetting {
  enabled: boolean;
  maxCycles: number;
}

export function sentinelSetting(config: Pick<ForgeConfig, "sentinel">, task: Pick<TaskFrontmatter, "type" | "sentinel">): SentinelSetting {
  const enabled = task.type !== "refinery" && (task.sentinel ?? config.sentinel.enabled);
  return { enabled, maxCycles: config.sentinel.max_cycles };
}
