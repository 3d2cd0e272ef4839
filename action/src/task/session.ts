/**
 * Step 3 of a task job: the session folder (outside the work tree; copied into the record folder at
 * the end) and the agent's context, built while looking for the PR of an earlier run of this same
 * attempt (a re-run); then step 4, the draft PR, and the head the agent starts from.
 */
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { buildTaskContext } from "../task-context.js";
import { AttemptEvents } from "../events.js";
import { LiveReport } from "../live-report.js";
import { maskerOf } from "../publish.js";
import { attemptTraceId } from "./trace.js";
import { mark, type CheckedOut, type TaskAttempt, type TaskJob } from "./context.js";
import { openDraftPr } from "./pull.js";
import { LiveCheck } from "./live-check.js";
import { SpendMeter } from "./spend.js";
import { recordedSquashes, squashUpstreams } from "./squash.js";

export async function openAttempt(job: TaskJob, co: CheckedOut): Promise<TaskAttempt> {
  const { input, git, github } = job;
  const { runId, taskId, attempt } = job.ids;
  const sessionDir = path.join(input.tempDir, `forge-session-${taskId}-${attempt}`);
  await rm(sessionDir, { recursive: true, force: true });
  await mkdir(path.join(sessionDir, ".signals"), { recursive: true });
  // The agent layer's folder, where the agent may write its spend file.
  await mkdir(path.join(sessionDir, "agent"), { recursive: true });
  const events = new AttemptEvents(path.join(sessionDir, "events.ndjson"), runId, taskId, attempt, job.now);
  const [built, existingPr] = await Promise.all([
    buildTaskContext({
      github,
      journal: co.journal,
      node: co.node,
      attempt,
      branch: co.branch,
      workdir: input.workspace,
      dispatch: input.context,
      ...(co.followup ? { followup: co.followup } : {}),
    }),
    github.findOpenPull(co.branch, co.base).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err)))),
  ]);
  // A refinery merges in its merge stage the upstream branches the App could not merge server-side
  // (their conflicts are resolved by sub-agents, src/agent/stages/refinery.ts); the clean ones are on the branch already.
  const conflicts = co.node.kind === "refinery" ? (input.context.conflicts ?? []) : [];
  if (conflicts.length) built.taskContext.mergeRefs = await git.fetchForMerge(conflicts, co.branch);
  // On a branch that must keep a linear history the App merged nothing: the runner squashes each
  // upstream here, and the merge stage the ones that conflicted (task/squash.ts). The squash commits
  // are the branch's preparation: what the attempt changed is measured from the last of them.
  const squash = co.node.kind === "refinery" ? (input.context.squash ?? []) : [];
  let startHead = co.startHead;
  if (squash.length) {
    const previous = await recordedSquashes(git, co.tip, co.recordRel, job.ids);
    const s = await squashUpstreams(git, co.journal, taskId, co.branch, squash, (m) => void job.warnings.push(m), previous);
    built.taskContext.squashed = s.records;
    if (s.conflicted.length) built.taskContext.squash = s.conflicted;
    if (co.startHead === co.tip) startHead = await git.head();
    mark(job, "squash");
  }
  await writeFile(path.join(sessionDir, "context.md"), built.markdown);
  await writeFile(path.join(sessionDir, "task.md"), built.taskContext.task);
  mark(job, "context");

  const a: TaskAttempt = {
    ...job,
    ...co,
    startHead,
    sessionDir,
    events,
    liveCheck: new LiveCheck(() => a, job.deps.liveCheckIntervalMs),
    spend: new SpendMeter(path.join(sessionDir, "agent", "spend.json"), job.config.prices, job.config.agent.model, job.deps.modelUsage),
    live: new LiveReport(path.join(sessionDir, ".live-report"), attemptTraceId(job.ids), job.now, maskerOf(job.deps)),
    built,
    prTitle: `forge(${taskId}): ${built.frontmatter.title}`,
    walkthroughSession: path.join(sessionDir, "walkthrough.md"),
    checkpoints: 0,
    branchState: {
      remoteHead: co.tip,
      pushes: 0,
      progressPushes: 0,
      preAgentHead: co.tip,
      foldBase: co.tip,
      recordBase: co.tip,
      linear: squash.length > 0,
      refused: new Map(),
      prOpening: Promise.resolve(undefined),
    },
  };
  const endpoint = job.config.telemetry.otlp_endpoint;
  // Loaded only when used: the OpenTelemetry SDK stays out of a job that exports nothing.
  if (endpoint) a.telemetry = new (await import("./telemetry.js")).AttemptTelemetry(a, endpoint);
  await openDraftPr(a, existingPr);
  mark(job, "draft_pr");
  a.branchState.preAgentHead = await git.head();
  a.branchState.foldBase = a.branchState.preAgentHead;
  a.branchState.recordBase = a.branchState.preAgentHead;
  return a;
}
