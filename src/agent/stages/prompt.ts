/** The WHAT of a stage: its instruction, where the reports go, and the task's context. */
import { quoteUntrusted } from "../secrets.js";
import type { ReportPaths } from "../types.js";
import type { StageName } from "./config.js";
import type { StageContext } from "./context.js";
import type { TaskContext } from "./types.js";

/** The instruction of each stage that is one session; the others build their prompts themselves. */
const STAGE_TEXT: Record<StageName, string> = {
  single:
    "Do the whole task: implement it, verify it against every acceptance criterion, then write the walkthrough (its Approach and Issues Encountered from your progress notes).",
  implement: "Implement the task. Do not write the walkthrough yet; a later stage does.",
  verify:
    "Verify the work in the checkout against every acceptance criterion: run the test command, type checks and linters; fix what fails. Do not write the walkthrough yet.",
  walkthrough:
    "The work is done. Review it (`git status`, `git diff`), run the tests once more, and write the walkthrough: its Approach and Issues Encountered from the progress notes (what the stages decided and ran into), not from the diff alone. Change code only to fix something you find broken.",
  plan: "Plan the task: write one file per subtask in the subtask folder below (format in your instructions). Do not implement anything yet.",
  work: "",
  merge: "",
  test: "",
  fix: "",
  write:
    "Write the plan or the overlay the goal below asks for, then validate it until it is valid. Also write the walkthrough describing it.",
  validate: "",
  sentinel: "",
};

/** The file the stages of an attempt share, beside the walkthrough (docs/runner.md#progress-notes). */
export const NOTES_FILE = "progress-notes.md";

/** The prompt of `stage` with its standard instruction, and the progress notes. */
export function basePrompt(c: StageContext, stage: StageName): string {
  return `${stagePrompt(c.task, stage, c.reports, STAGE_TEXT[stage], c.workdir)}\n\n${notesSection(c.notesFile, stage)}`;
}

/** How a session uses the progress notes: read first, append its own section before it ends. */
export function notesSection(file: string, stage: string): string {
  return [
    "## Progress notes",
    "",
    `${file} holds the notes of this attempt's earlier stages (and of the attempt this one continues, when it does). Read it first.`,
    `Before you end, append a section \`## ${stage}\` to it: what you did and why (your approach), what went wrong or surprised you and how you dealt with it (issues), and what is left. Keep it short; never write secrets into it.`,
  ].join("\n");
}

/**
 * What Claude Code's summary keeps when it compacts a long session (its system prompt, which the
 * summarizer reads), as the agent-invocation document's pre-compaction instructions have it.
 */
export const COMPACTION_TEXT = [
  "## When the conversation is compacted",
  "",
  "If this conversation is summarized to free context, the summary must preserve: the task id, the stage and what is left of it; the files changed and why; the last test, type-check and lint results (pass or fail, with the key errors); the git operations done; decisions and their reasons; the progress notes file's path.",
  "It may discard: long command output (installs, full passing test or lint runs), long grep or find results, file contents read more than once, and base64 or binary data.",
].join("\n");

/** The WHAT of a stage: the stage's instruction, where the reports go, and the task's context. */
export function stagePrompt(ctx: TaskContext, stage: string, reports: ReportPaths, instruction: string, workdir?: string): string {
  const parts: string[] = [
    `# Task ${ctx.taskId}${ctx.title ? `: ${ctx.title}` : ""}`,
    `Run \`${ctx.runId}\`, task \`${ctx.taskId}\`, attempt ${ctx.attempt}. Stage: **${stage}**.`,
    `## This stage\n\n${instruction}`,
    [
      "## Report files",
      "",
      `- Walkthrough: ${reports.walkthrough}`,
      `- Question for a person (exit 3): ${reports.question}`,
      `- Refinement document (exit 10): ${reports.refinement}`,
      `- Change Request (exit 11): ${reports.changeRequest}`,
      ...(workdir ? [`- Repository checkout: ${workdir}`] : []),
    ].join("\n"),
    `## The task\n\n${ctx.task.trim()}`,
  ];
  if (ctx.goal) parts.push(`## Goal\n\n${quoteUntrusted("goal", ctx.goal)}`);
  if (ctx.testCommand) parts.push(`## Test command\n\n\`${ctx.testCommand}\``);
  if (ctx.spec) parts.push(`## Spec\n\n${ctx.spec.trim()}`);
  if (ctx.plan) parts.push(`## The plan\n\n${ctx.plan.trim()}`);
  if (ctx.dependencyWalkthroughs?.length) {
    parts.push(
      `## Walkthroughs of the tasks this one depends on\n\n${ctx.dependencyWalkthroughs.map((w) => `### ${w.taskId}\n\n${w.text.trim()}`).join("\n\n")}`,
    );
  }
  if (ctx.agentsMd) parts.push(`## Repository conventions (AGENTS.md)\n\n${ctx.agentsMd.trim()}`);
  if (ctx.refinement) parts.push(`## What the previous attempt must fix (its refinement document)\n\n${ctx.refinement.trim()}`);
  if (ctx.answer) parts.push(`## A person's answer to the previous attempt's question\n\n${quoteUntrusted("answer", ctx.answer)}`);
  // Built by the job from reviews, each person's text already inside its own untrusted-text quote.
  if (ctx.review) parts.push(ctx.review);
  if (ctx.steering?.length)
    parts.push(
      `## Steering from people (newest last)\n\nPeople with write access sent these while you worked; take them into account from now on.\n\n${ctx.steering.join("\n\n")}`,
    );
  return parts.join("\n\n");
}
