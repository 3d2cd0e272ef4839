/** A Change Request document written by Forge itself when a stage must raise one and the agent wrote none. */
import { writeFrontMatter } from "../../core/front-matter.js";
import { writeFileAtomic } from "../signals.js";
import type { TaskContext } from "./types.js";

export interface CrText {
  title: string;
  reason: string;
  description: string;
  impact: string;
  resolution: string;
}

/**
 * The same format an agent writes (front matter: title, reason, emitted_by, affected_tasks,
 * suggested_action, priority, suggested_changes; body: description, impact, proposed resolution).
 */
export async function writeChangeRequest(file: string, ctx: TaskContext, cr: CrText): Promise<string> {
  const fm = {
    title: cr.title,
    reason: cr.reason,
    emitted_by: ctx.taskId,
    affected_tasks: [ctx.taskId],
    suggested_action: "AMEND",
    priority: "HIGH",
    suggested_changes: cr.resolution,
  };
  await writeFileAtomic(
    file,
    writeFrontMatter(
      `## Description\n\n${cr.description}\n\n## Impact Assessment\n\n${cr.impact}\n\n## Proposed Resolution\n\n${cr.resolution}\n`,
      fm,
    ),
  );
  return file;
}
