/**
 * The refinery: merges its upstream branches (a type 1 sub-agent resolves a conflict; one it
 * cannot resolve becomes a Change Request, exit 11), runs the tests, and when they fail runs the
 * sentinel loop (sentinel.ts) in its fix stage before writing the walkthrough. On a branch that must
 * keep a linear history the upstreams are squashed instead (src/agent/squash.ts): one commit each.
 */
import { writeInAgentFolder } from "../agent-files.js";
import path from "node:path";
import { EXIT_CODES } from "../../core/exit-codes.js";
import { abortMerge, concludeMerge, gitOk, mergeRef } from "../branches.js";
import { abandonSquash, concludeSquash, squashHead, squashMessage } from "../squash.js";
import { writeChangeRequest } from "./change-request.js";
import { singleStage, verifyStage, walkthroughStage } from "./common.js";
import { isAbort, progress, session, SessionLog, type StageContext, type StageOutcome, type StageSteps } from "./context.js";
import { initialTest, sentinelLoop } from "./sentinel.js";

/** How one upstream is taken in, concluded after a resolver, or dropped: a merge, or a squash. */
interface Integration {
  name: string;
  conclude(): Promise<{ ok: true } | { ok: false; conflicts: string[] }>;
  abort(): Promise<void>;
}

/** The merge stage: every upstream ref in order (merged, or squashed on a linear branch); the merge log is its artifact. */
async function mergeUpstream(c: StageContext): Promise<StageOutcome> {
  const log = new SessionLog();
  const merged: string[] = [];
  for (const ref of c.task.mergeRefs ?? []) {
    const m = await mergeRef(c.workdir, ref, `Merge ${ref} into ${c.task.branch ?? "the refinery branch"}`, c.options.git);
    if (m.merged) {
      merged.push(`${ref}: merged`);
      continue;
    }
    const integration: Integration = {
      name: ref,
      conclude: async () => {
        const r = await concludeMerge(c.workdir, c.options.git);
        return r.merged ? { ok: true } : { ok: false, conflicts: r.conflicts };
      },
      abort: () => abortMerge(c.workdir, c.options.git),
    };
    const stop = await resolveConflict(c, integration, m.conflicts, merged, log);
    if (stop) return stop;
    merged.push(`${ref}: merged after resolving ${m.conflicts.length} conflicted file(s)`);
  }
  for (const upstream of c.task.squash ?? []) {
    const stop = await squashUpstream(c, upstream, merged, log);
    if (stop) return stop;
  }
  const artifact = path.join(c.sessionDir, "merge-log.txt");
  await writeInAgentFolder(c.sessionDir, artifact, `${merged.join("\n")}\n`);
  return { exitCode: EXIT_CODES.SUCCESS, attempts: log.attempts, sessionDirs: log.dirs, artifact };
}

/** Squashes one upstream head onto the branch (a resolver takes its conflicts) and records it for the runner. */
async function squashUpstream(
  c: StageContext,
  upstream: NonNullable<StageContext["task"]["squash"]>[number],
  merged: string[],
  log: SessionLog,
): Promise<StageOutcome | undefined> {
  const run = c.options.git;
  const message = squashMessage(c.task.taskId, upstream);
  const parent = await gitOk(c.workdir, ["rev-parse", "HEAD"], run);
  let s = await squashHead(c.workdir, upstream.head, message, run);
  if (!s.squashed) {
    const conflicts = s.conflicts;
    const integration: Integration = {
      name: upstream.branch,
      conclude: async () => {
        s = await concludeSquash(c.workdir, parent, message, run);
        return s.squashed ? { ok: true } : { ok: false, conflicts: s.conflicts };
      },
      abort: () => abandonSquash(c.workdir, parent, run),
    };
    const stop = await resolveConflict(c, integration, conflicts, merged, log);
    if (stop) return stop;
    merged.push(`${upstream.branch}: squashed after resolving ${conflicts.length} conflicted file(s)`);
  } else merged.push(`${upstream.branch}: squashed`);
  if (s.squashed) (c.task.squashed ??= []).push({ branch: upstream.branch, head: upstream.head, commit: s.commit });
  return undefined;
}

/** A sub-agent resolves the conflicts of taking in an upstream; Forge concludes it. Returns how the stage ends when it could not. */
async function resolveConflict(
  c: StageContext,
  integration: Integration,
  conflicts: string[],
  merged: string[],
  log: SessionLog,
): Promise<StageOutcome | undefined> {
  const { task } = c;
  const ref = integration.name;
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
  const concluded = r.exitCode === EXIT_CODES.SUCCESS ? await integration.conclude() : { ok: false as const, conflicts };
  if (concluded.ok) return undefined;
  await integration.abort();
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
