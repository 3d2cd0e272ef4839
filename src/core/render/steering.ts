/**
 * A `/forge steer` message as the App hands it to the running job (docs/runner.md#steering): a
 * comment the App posts on the task's PR, its content in a hidden marker. GitHub says who wrote a
 * comment, and nobody else can post as the App — so the job, which cannot verify the journal's seal,
 * takes steering only from comments by the App that dispatched it, and knows the App checked the
 * person's write access. The journal, which anyone with the job's token may rewrite, is not where
 * the job reads a person's words.
 */
import { asData } from "./as-data.js";

export interface SteeringNote {
  runId: string;
  taskId: string;
  attempt: number;
  /** The message's number for the task (the journal's `steering[].id`). */
  id: number;
  /** Who steered, as the App recorded it after checking their write access. */
  actor: string;
  message: string;
}

const OPEN = "<!-- forge:steer ";
const CLOSE = " -->";

/** JSON with every `-` and `>` escaped: nothing in it can close the HTML comment that holds it. */
const inert = (value: unknown) => JSON.stringify(value).replace(/-/g, "\\u002d").replace(/>/g, "\\u003e");

/** The App's comment: the note in a hidden marker, and the message shown as data. */
export function steeringComment(note: SteeringNote): string {
  const shown = asData(note.message)
    .split("\n")
    .map((l) => `> ${l}`)
    .join("\n");
  return [
    `${OPEN}${inert(note)}${CLOSE}`,
    `**Steering** ${note.id} for \`${note.taskId}\` from \`${note.actor}\` (write access verified by Forge): the agent gets it at the start of its next stage.`,
    "",
    shown,
  ].join("\n");
}

/** The note in one of the App's steering comments; undefined for any other text. */
export function readSteeringComment(body: string): SteeringNote | undefined {
  const start = body.indexOf(OPEN);
  if (start < 0 || start > 1_000) return undefined;
  const end = body.indexOf(CLOSE, start + OPEN.length);
  if (end < 0) return undefined;
  try {
    const n = JSON.parse(body.slice(start + OPEN.length, end)) as Partial<SteeringNote>;
    const ok =
      typeof n.runId === "string" &&
      typeof n.taskId === "string" &&
      typeof n.attempt === "number" &&
      typeof n.id === "number" &&
      typeof n.actor === "string" &&
      typeof n.message === "string";
    return ok ? (n as SteeringNote) : undefined;
  } catch {
    return undefined;
  }
}
