/**
 * The rest of the dispatch context, where the App put it: fields too long for GitHub's limit on
 * `workflow_dispatch` inputs travel in a JSON file on the run's state branch, named by the `context`
 * input with its blob sha (src/core/dispatch-inputs.ts). The job reads the file, refuses any content
 * but the one the App wrote, and gives every job kind the whole context.
 */
import { createHash } from "node:crypto";
import { stateBranch } from "../../src/core/layout.js";
import type { JobGitHub } from "./github.js";
import { dispatchContextSchema, type DispatchContext } from "./inputs.js";
import { JobError } from "./job.js";

/** Git's blob id of a text (its UTF-8 bytes). */
export function gitBlobSha(text: string): string {
  const bytes = Buffer.from(text, "utf8");
  return createHash("sha1").update(`blob ${bytes.length}\0`).update(bytes).digest("hex");
}

/** The context with the fields of its file (if it names one) put back. */
export async function resolveDispatchContext(context: DispatchContext, runId: string, github: JobGitHub): Promise<DispatchContext> {
  const { file, ...inline } = context;
  if (!file) return context;
  const branch = stateBranch(runId);
  const where = `${branch}:${file.path}`;
  const text = await github.readFile(file.path, branch);
  if (text === undefined) throw new JobError(`the dispatch context names ${where}, which does not exist`);
  const sha = gitBlobSha(text);
  if (sha !== file.sha) throw new JobError(`${where} is not the dispatch context the App wrote (blob ${sha}, expected ${file.sha})`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new JobError(`${where} is not JSON: ${(err as Error).message}`);
  }
  const parsed = dispatchContextSchema.omit({ file: true }).safeParse(value);
  if (!parsed.success) throw new JobError(`${where} is not a dispatch context: ${parsed.error.issues[0]?.message}`);
  return { ...inline, ...parsed.data };
}
