/**
 * A revision's stage prompt as the Forge action builds it for the demo's tasks: the feedback the App
 * records (a failing required check read by src/github/ci-checks.ts, a review read back from GitHub)
 * made into the `## Revision <n>` section by action/src/task/revision.ts, the answers file put in
 * its place as the job does, inside the stage prompt of src/agent/stages (the `single` stage).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ANSWERS_FILE, answersPath, readRevision } from "../../action/src/task/revision.js";
import type { TaskJob } from "../../action/src/task/context.js";
import { basePrompt } from "../../src/agent/stages/prompt.js";
import type { StageContext } from "../../src/agent/stages/context.js";
import type { TaskContext } from "../../src/agent/stages/types.js";
import type { ReportPaths } from "../../src/agent/types.js";
import type { Feedback } from "../../src/core/feedback.js";
import { checksFailedInput } from "../../src/github/ci-checks.js";

export const PLAN_DIR = path.join(import.meta.dirname, "..", "..", "examples", "plans", "textkit");

const dirs: string[] = [];
/** A temporary folder, removed by `removeTempDirs`. */
export function tmp(prefix: string): string {
  const d = mkdtempSync(path.join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}
export const removeTempDirs = () => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }));

/** Writes files (relative path → text) under `dir`. */
export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  }
}

/** A task file of the demo's plan. */
export const demoTask = (id: string) => readFileSync(path.join(PLAN_DIR, "tasks", `${id}.md`), "utf8");

export interface RevisionAsk {
  taskId: string;
  iteration: number;
  /** Work-in-progress markers the failing required check `check` names (its annotations, as scripts/check.js words them). */
  markers?: string[];
  /** A review with one inline comment. */
  comment?: { reviewId: number; id: number; path: string; line: number; body: string };
}

/** The revision's task context (review section included) and where its answers go. */
export async function revisionContext(ask: RevisionAsk, sessionDir: string): Promise<{ task: TaskContext; answersFile: string }> {
  const feedback: Feedback[] = [];
  if (ask.markers?.length) {
    const ci = checksFailedInput({ taskId: ask.taskId, attempt: 1 }, "a".repeat(40), [
      {
        name: "check",
        conclusion: "failure",
        title: "",
        summary: "",
        annotations: ask.markers.map((m) => `${m}:1 failure: ${m} is a work-in-progress marker: finish the work and delete it`),
        log: `${ask.markers.length} work-in-progress marker(s) committed`,
      },
    ]);
    feedback.push({ source: "ci", checks: ci.checks, details: ci.details });
  }
  const c = ask.comment;
  if (c) feedback.push({ source: "review", reviewId: c.reviewId, actor: "octocat", message: "See the comment." });
  const job = {
    input: { context: { iteration: ask.iteration, feedback, prNumber: 6 } },
    github: {
      review: async () =>
        c && {
          id: c.reviewId,
          author: "octocat",
          state: "CHANGES_REQUESTED",
          body: "Looks right. One thing before it merges: see the comment.",
          comments: [{ id: c.id, path: c.path, line: c.line, diffHunk: `@@ -0,0 +1,${c.line} @@\n+…`, body: c.body }],
        },
    },
    warnings: [],
  } as unknown as TaskJob;
  const revision = await readRevision(job, path.join(sessionDir, "no-walkthrough-yet.md"));
  if (!revision) throw new Error("no revision was read");
  const answersFile = answersPath({ sessionDir });
  return {
    task: {
      runId: "textkit-1",
      taskId: ask.taskId,
      attempt: 1,
      task: demoTask(ask.taskId),
      review: revision.prompt.replace(ANSWERS_FILE, answersFile),
    },
    answersFile,
  };
}

/** The `single` stage's prompt of a task context, as runStages builds it. */
export function singleStagePrompt(task: TaskContext, workdir: string, reports: ReportPaths): string {
  return basePrompt({ task, workdir, reports } as unknown as StageContext, "single");
}
