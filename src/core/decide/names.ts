/** Names the executor gives an attempt (its branch is `branchName` of src/core/layout.ts). */

/** `agentId` of an attempt, as events name it. */
export const agentId = (runId: string, taskId: string, attempt: number) => `${runId}/${taskId}/${attempt}`;
