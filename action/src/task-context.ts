/**
 * What the agent is told: the pinned plan, the task file and its spec (read at the run's plan
 * commit, so an edit on the default branch mid-run changes nothing), walkthroughs of the
 * dependencies (on the checked-out branch, which holds every merged dependency), the repository's
 * AGENTS.md, and the dispatch context — a previous attempt's refinement document or a person's
 * answer — which comes from outside the reviewed plan and is sanitized.
 */
import { readAgentFile } from "../../src/agent/agent-files.js";
import path from "node:path";
import { sanitizeUntrusted } from "../../src/agent/secrets.js";
import type { FollowupState, Journal, PlanNode } from "../../src/core/journal.js";
import { planDir, walkthroughPath } from "../../src/core/layout.js";
import { parseTaskFile } from "../../src/core/plan/parse.js";
import type { Problem } from "../../src/core/plan/problem.js";
import { checkFrontmatter } from "../../src/core/plan/validate-files.js";
import { formatProblem } from "../../src/core/problems.js";
import { REMOVED_TASK_FIELDS, type TaskFrontmatter } from "../../src/core/schemas/task.js";
import type { JobTaskContext } from "./agent-runner.js";
import type { JobGitHub } from "./github.js";
import type { DispatchContext } from "./inputs.js";

export class TaskContextError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TaskContextError";
  }
}

export interface BuiltTaskContext {
  taskContext: JobTaskContext;
  frontmatter: TaskFrontmatter;
  /** The whole context as one Markdown document (context.md in the session). */
  markdown: string;
}

/** A file of the checkout (agents commit there: never read through a link, never outside it). */
async function readLocal(workdir: string, file: string): Promise<string | undefined> {
  try {
    return (await readAgentFile(workdir, file))?.toString("utf8");
  } catch {
    return undefined;
  }
}

export async function buildTaskContext(args: {
  github: JobGitHub;
  journal: Journal;
  node: PlanNode;
  attempt: number;
  branch: string;
  workdir: string;
  dispatch: DispatchContext;
  /** Set for a follow-up dispatch (`_followup-<n>`). */
  followup?: FollowupState;
}): Promise<BuiltTaskContext> {
  const { github, journal, node } = args;
  const dir = planDir(journal.planId);
  const pin = journal.planCommit;
  let taskText: string;
  let fm: TaskFrontmatter;
  if (args.followup) {
    // A follow-up has no task file: its task is the follow-up from the source task's walkthrough
    // (an agent's words, so sanitized), with the source task's file as context.
    const f = args.followup;
    const source = await github.readFile(`${dir}/tasks/${f.sourceTaskId}.md`, pin);
    const text = sanitizeUntrusted(f.text);
    fm = {
      id: f.id,
      title: `Follow-up of ${f.sourceTaskId}`,
      type: "1",
      dependencies: [],
      acceptance_criteria: [text],
      estimated_complexity: "small",
    } as TaskFrontmatter;
    taskText = [
      `# Follow-up ${f.id} of task ${f.sourceTaskId}`,
      "",
      "## Description",
      "",
      `The walkthrough of task \`${f.sourceTaskId}\` (attempt ${f.sourceAttempt}) listed this follow-up; do it, and only it:`,
      "",
      '<untrusted-text source="follow-up">',
      text,
      "</untrusted-text>",
      "",
      "## Context",
      "",
      `The source task's work is on this branch or on its own branch; its walkthrough is below.`,
      ...(source !== undefined ? ["", `## The source task (${dir}/tasks/${f.sourceTaskId}.md)`, "", source.trim()] : []),
      "",
    ].join("\n");
  } else {
    const text = await github.readFile(`${dir}/tasks/${node.id}.md`, pin);
    if (text === undefined)
      throw new TaskContextError(`the task file ${dir}/tasks/${node.id}.md does not exist at the pinned plan commit ${pin}`);
    const parsed = parseTaskFile(`tasks/${node.id}.md`, text);
    if (!parsed.data) {
      const problems: Problem[] = [];
      checkFrontmatter(parsed, problems, "bad-id", REMOVED_TASK_FIELDS);
      const why =
        parsed.refused?.message ??
        parsed.yamlError?.message ??
        problems.map((p) => formatProblem({ ...p, file: `${dir}/${p.file}` })).join("; ");
      throw new TaskContextError(`the task file ${dir}/tasks/${node.id}.md is invalid: ${why || "no frontmatter"}`);
    }
    taskText = text;
    fm = parsed.data;
  }
  const [plan, spec] = await Promise.all([
    github.readFile(`${dir}/plan.md`, pin),
    fm.spec ? github.readFile(path.posix.join(dir, fm.spec), pin) : Promise.resolve(undefined),
  ]);

  const deps: Array<{ taskId: string; text: string }> = [];
  for (const depId of node.dependencies) {
    const dep = journal.tasks.find((t) => t.id === depId);
    if (!dep || dep.attempts < 1) continue;
    const rel = walkthroughPath(journal.runId, depId, dep.attempts);
    // Merged dependencies are in the checkout; a refinery's MERGE_READY ones are on their branches.
    const branch = dep.attempt?.branch;
    const text = (await readLocal(args.workdir, path.join(args.workdir, rel))) ?? (branch ? await github.readFile(rel, branch) : undefined);
    if (text !== undefined) deps.push({ taskId: depId, text: sanitizeUntrusted(text) });
  }
  // Read before any agent of this job runs: the checkout's copy is the integration base's (agents'
  // changes to instruction files are refused and reverted at every stage end), and it is still
  // repository text, so it is sanitized like every other text from outside.
  const agentsMdRaw = await readLocal(args.workdir, path.join(args.workdir, "AGENTS.md"));
  const agentsMd = agentsMdRaw !== undefined ? sanitizeUntrusted(agentsMdRaw) : undefined;
  const refinement = args.dispatch.refinement ? sanitizeUntrusted(args.dispatch.refinement) : undefined;
  const answer = args.dispatch.answer ? sanitizeUntrusted(args.dispatch.answer) : undefined;

  const taskContext: JobTaskContext = {
    runId: journal.runId,
    taskId: node.id,
    attempt: args.attempt,
    title: fm.title,
    task: taskText,
    ...(spec !== undefined ? { spec } : {}),
    ...(plan !== undefined ? { plan } : {}),
    ...(agentsMd !== undefined ? { agentsMd } : {}),
    ...(deps.length ? { dependencyWalkthroughs: deps } : {}),
    ...(refinement ? { refinement } : {}),
    ...(answer ? { answer } : {}),
    ...(fm.test_command ? { testCommand: fm.test_command } : {}),
    branch: args.branch,
    // Every task branch is cut from the integration branch (docs/executor.md#dispatch).
    baseRef: journal.integrationBranch,
  };
  return { taskContext, frontmatter: fm, markdown: renderTaskContext(taskContext) };
}

/** One Markdown document with everything, for command agents and for the record. */
export function renderTaskContext(c: JobTaskContext): string {
  const out = [
    `# Forge task ${c.taskId}: ${c.title}`,
    "",
    `Run ${c.runId}, attempt ${c.attempt}, branch \`${c.branch}\` (base \`${c.baseRef}\`).`,
    "",
  ];
  out.push("## Task", "", c.task.trim(), "");
  if (c.spec) out.push("## Spec", "", c.spec.trim(), "");
  if (c.plan) out.push("## Plan", "", c.plan.trim(), "");
  if (c.agentsMd) out.push("## AGENTS.md", "", c.agentsMd.trim(), "");
  for (const d of c.dependencyWalkthroughs ?? [])
    out.push(
      `## Walkthrough of dependency ${d.taskId}`,
      "",
      '<untrusted-text source="dependency walkthrough">',
      d.text,
      "</untrusted-text>",
      "",
    );
  if (c.refinement)
    out.push("## Refinement from the previous attempt", "", '<untrusted-text source="refinement">', c.refinement, "</untrusted-text>", "");
  if (c.answer) out.push("## Answer from a person", "", '<untrusted-text source="answer">', c.answer, "</untrusted-text>", "");
  if (c.review) out.push(c.review, "");
  return out.join("\n");
}
