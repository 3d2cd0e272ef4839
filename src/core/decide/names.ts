/** Names the executor gives an attempt. */
import type { ForgeConfig } from "../schemas/config.js";

/** `agentId` of an attempt, as events name it. */
export const agentId = (runId: string, taskId: string, attempt: number) => `${runId}/${taskId}/${attempt}`;

/** The branch an attempt works on, from the configured template. */
export function branchName(config: Pick<ForgeConfig, "branch_template">, runId: string, taskId: string, attempt: number): string {
  return config.branch_template.replaceAll("{runId}", runId).replaceAll("{taskId}", taskId).replaceAll("{attempt}", String(attempt));
}
