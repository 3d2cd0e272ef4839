/**
 * The refinery: merges its upstream branches (a type 1 sub-agent resolves a conflict; one it
 * cannot resolve becomes a Change Request, exit 11), runs the tests, and when they fail runs the
 * sentinel loop (sentinel.ts) in its fix stage before writing the walkthrough.
 */
import { writeInAgentFolder } from "../agent-files.js";
import path from "node:path";
import { EXIT_CODES } from "../../core/exit-codes.js";
import { abortMerge, concludeMerge, mergeRef } from "../branches.js";
import { writeChangeRequest } from "./change-request.js";
import { singleStage, verifyStage, walkthroughStage } from "./common.js";
import { isAbort, progress, session, SessionLog, type StageContext, type StageOutcome, type StageSteps } from "./context.js";
import { initialTest, sentinelLoop } from "./sentinel.js";

/** The merge stage: every upstream ref in order; the merge log is its artifact. */
async function mergeUpstream(c: StageContext): Promise<StageOutcome> {
  const log = new SessionLog();
  const merged: string[] = [];
  for (const ref of c.task.mergeRefs ?? []) {
    const m = await mergeRef(c.workdir, ref, `Merge ${ref} into ${c.task.branch ?? "the refinery branch"}`, c.options.git);
    if (m.merged) {
      merged.push(`${ref}: merged`);
      continue;
    }
    const stop = await resolveConflict(c, ref, m.conflicts, merged, log);
    if (stop) return stop;
    merged.push(`${ref}: merged after resolving ${m.conflicts.length} conflicted file(s)`);
  }
  const artifact = path.join(c.sessionDir, "merge-log.txt");
  await writeInAgentFolder(c.sessionDir, artifact, `${merged.join("\n")}\n`);
  return { exitCode: EXIT_CODES.SUCCESS, attempts: log.attempts, sessionDirs: log.dirs, artifact };
}

/** A sub-agent resolves the conflicts of merging `ref`; Forge concludes the merge. Returns how the stage ends when it could not. */
async function resolveConflict(
  c: StageContext,
  ref: string,
  conflicts: string[],
  merged: string[],
  log: SessionLog,
): Promise<StageOutcome | undefined> {
  const { task } = c;
  progress(c, `merging ${ref} conflicted in ${conflicts.join(", ")}; a sub-agent resolves it`);
  const prompt = [
    `# Resolve merge conflicts`,
    `Task ${task.taskId} (run ${task.runId}, attempt ${task.attempt}) is merging \`${ref}\` and git stopped on conflicts in:`,
    conflicts.map((f) => `- ${f}`).join("\n"),
    `Resolve every conflict so that the intent of both sides survives: edit the files until no conflict marker (<<<<<<<, =======, >>>>>>>) is left and the code builds. Do not commit; Forge concludes the merge. End with the exit line.`,
    `## The refinery's task, for context\n\n${task.task.trim()}`,
  ].join("\n\n");
  const r = log.add(await session(c, `merge-resolve`, "1", prompt, "refinery"));
  // Only a full success concludes the merge: a resolver that ended partial (12) is treated as one that failed.
  const concluded =
    r.exitCode === EXIT_CODES.SUCCESS ? await concludeMerge(c.workdir, c.options.git) : { merged: false as const, conflicts };
  if (concluded.merged) return undefined;
  await abortMerge(c.workdir, c.options.git);
  if (isAbort(r)) return log.endWith(r, `merging ${ref}: ${r.error?.message ?? "stopped"}`);
  const cr = await writeChangeRequest(c.reports.changeRequest, task, {
    title: `Upstream work conflicts at ${task.taskId}`,
    reason: `Merging ${ref} conflicts in ${concluded.conflicts.join(", ")} and the conflict could not be resolved automatically.`,
    description: `The refinery ${task.taskId} merged its upstream branches in order. ${merged.join("; ") || "No branch had been merged yet"}; then ${ref} conflicted in:\n\n${concluded.conflicts.map((f) => `- ${f}`).join("\n")}`,
    impact: "The refinery cannot integrate its upstream tasks; every task that depends on it waits.",
    resolution:
      "Amend the plan so that the conflicting tasks agree on the shared files (an interface task first, or one task owning the files), or resolve the conflict by hand.",
  });
  return {
    exitCode: EXIT_CODES.NEEDS_ESCALATION,
    attempts: log.attempts,
    sessionDirs: log.dirs,
    artifact: cr,
    error: `merging ${ref} conflicted in ${concluded.conflicts.join(", ")}`,
  };
}

export const REFINERY_STEPS: StageSteps<"refinery"> = {
  single: singleStage,
  merge: mergeUpstream,
  test: initialTest,
  fix: sentinelLoop,
  verify: verifyStage,
  walkthrough: walkthroughStage,
};
