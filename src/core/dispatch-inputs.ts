/**
 * The `workflow_dispatch` inputs the App sends a job, kept within what GitHub accepts: at most 25
 * inputs, and 65,535 characters of inputs in all (docs.github.com/actions/reference/workflows-and-actions/events-that-trigger-workflows#workflow_dispatch).
 * A dispatch over either is refused with 422, and a task whose refinement or retry message is that
 * long could never be dispatched again. So the `context` input carries long texts by reference: the
 * App writes them to a file on the run's state branch, named by the attempt, and the input names the
 * file and its blob sha; the job reads the file there and checks the sha (docs/formats.md#dispatch-context).
 */

/** GitHub's limits on one dispatch's inputs. */
export const DISPATCH_LIMITS = { inputs: 25, characters: 65_535 } as const;

/** The characters GitHub counts: the inputs as the JSON object the API receives (an upper bound of any other count). */
export function dispatchInputsLength(inputs: Record<string, string>): number {
  return JSON.stringify(inputs).length;
}

/** The file on the run's state branch that holds an attempt's long context. */
export const dispatchContextPath = (taskId: string, attempt: number, iteration?: number) =>
  iteration ? `dispatch/${taskId}/${attempt}-${iteration}.json` : `dispatch/${taskId}/${attempt}.json`;

/** What the `context` input says of the file its long fields moved to. */
export interface DispatchContextFile {
  /** Path on the run's state branch (`forge/<runId>/_state`). */
  path: string;
  /** Git blob sha of the file as the App wrote it: the job refuses any other content. */
  sha: string;
}

/** Context fields never moved to the file. */
const INLINE_ALWAYS = new Set(["agent"]);

/**
 * Splits a dispatch's context so that the inputs fit: the context goes inline whole while `base`
 * plus its JSON is within `limit`; otherwise its largest fields move to `spilled` (for the context
 * file at `path`) until the rest fits beside the file's reference. `inline` is what is sent, the
 * reference not yet added.
 */
export function splitDispatchContext(
  base: Record<string, string>,
  context: Record<string, unknown>,
  path: string,
  limit: number = DISPATCH_LIMITS.characters,
): { inline: Record<string, unknown>; spilled?: Record<string, unknown> } {
  const length = (c: Record<string, unknown>) => dispatchInputsLength({ ...base, context: JSON.stringify(c) });
  if (length(context) <= limit) return { inline: context };
  const file: DispatchContextFile = { path, sha: "0".repeat(40) };
  const inline = { ...context };
  const spilled: Record<string, unknown> = {};
  const size = (key: string) => JSON.stringify(context[key]).length;
  // `agent` stays inline: the job needs its agent before it reads the file (it is short).
  for (const key of Object.keys(context)
    .filter((k) => !INLINE_ALWAYS.has(k))
    .sort((a, b) => size(b) - size(a))) {
    if (length({ ...inline, file }) <= limit) break;
    spilled[key] = inline[key];
    delete inline[key];
  }
  return { inline, spilled };
}

/**
 * Cuts the string field `field` of a context so that the inputs fit, with a note saying so: for a
 * dispatch with no run (and so no state branch) to hold a file, such as a plan Captain's.
 */
export function cutDispatchContext<T extends Record<string, unknown>>(
  base: Record<string, string>,
  context: T,
  field: keyof T & string,
  limit: number = DISPATCH_LIMITS.characters,
): T {
  const text = context[field];
  if (typeof text !== "string") return context;
  const length = (t: string) => dispatchInputsLength({ ...base, context: JSON.stringify({ ...context, [field]: t }) });
  if (length(text) <= limit) return context;
  const note = (kept: number) => `\n\n[… cut at ${kept} of ${text.length} characters to fit GitHub's limit on dispatch inputs]`;
  // JSON may spell one character as six (`\u0000`): halve until it fits, then grow back by halves.
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (length(text.slice(0, mid) + note(mid)) <= limit) lo = mid;
    else hi = mid - 1;
  }
  return { ...context, [field]: text.slice(0, lo) + note(lo) };
}
