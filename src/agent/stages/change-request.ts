/** A Change Request document written by Forge itself when a stage must raise one and the agent wrote none. */
import { writeFrontMatter } from "../../core/front-matter.js";
import { CHANGE_REQUEST_LIMITS } from "../../core/schemas/change-request.js";
import { writeFileAtomic } from "../signals.js";
import type { TaskContext } from "./types.js";

export interface CrText {
  title: string;
  reason: string;
  description: string;
  impact: string;
  resolution: string;
}

/** `text` in at most `max` characters (what a long list of files would push past the format's limits). */
const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** The body's share of the document: what the format's byte limit leaves after the front matter. */
const BODY_CHARS = 12_000;

/**
 * The same format an agent writes (front matter: title, reason, emitted_by, affected_tasks,
 * suggested_action, priority, suggested_changes; body: description, impact, proposed resolution),
 * within its limits, so that it passes the checks an agent's document must pass.
 */
export async function writeChangeRequest(file: string, ctx: TaskContext, cr: CrText): Promise<string> {
  const fm = {
    title: clip(cr.title.replace(/\s+/g, " ").trim(), CHANGE_REQUEST_LIMITS.title),
    reason: clip(cr.reason, CHANGE_REQUEST_LIMITS.reason),
    emitted_by: ctx.taskId,
    affected_tasks: [ctx.taskId],
    suggested_action: "AMEND",
    priority: "HIGH",
    suggested_changes: clip(cr.resolution, CHANGE_REQUEST_LIMITS.suggestedChanges),
  };
  await writeFileAtomic(
    file,
    writeFrontMatter(
      `## Description\n\n${clip(cr.description, BODY_CHARS)}\n\n## Impact Assessment\n\n${clip(cr.impact, 2_000)}\n\n## Proposed Resolution\n\n${clip(cr.resolution, 2_000)}\n`,
      fm,
    ),
  );
  return file;
}
