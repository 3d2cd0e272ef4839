/**
 * From GitHub's facts to the executor's inputs: which run, task and attempt a branch belongs to,
 * the runner's record commit, and its result. Pure except `readResult`, which reads one file, and
 * `withContainment`, which compares commits.
 */
import { EXIT_CODES, succeeded } from "../core/exit-codes.js";
import { changeRequestTitle } from "../core/render/run-messages.js";
import { prHead } from "../core/task-rules.js";
import type { LeafInput } from "../core/inputs.js";
import type { Journal } from "../core/journal.js";
import { parsePlanPath, resultPath, TRAILERS, type AttemptRef } from "../core/layout.js";
import { formatProblem, zodProblems } from "../core/problems.js";
import { agentResultSchema, type AgentResult } from "../core/schemas/agent-result.js";
import type { ForgeConfig } from "../core/schemas/config.js";
import { withRulesetNames } from "../github/merge-rules.js";
import type { GitHubPort } from "../github/port.js";
import { pushBlockedReason, ruleRefusal, ruleTypesOf } from "../github/rule-refusals.js";
import { readBranchCheckpoint, type BranchCheckpoint } from "./branch-checkpoint.js";
import { parseTrailers } from "./trailers.js";

export { parseTrailers };

export type { AttemptRef };

/** The agent workflow's path in the repository: the config names a file under `.github/workflows/`. */
export function agentWorkflowPath(config: Pick<ForgeConfig, "workflow">): string {
  return config.workflow.startsWith(".github/") ? config.workflow : `.github/workflows/${config.workflow}`;
}

/** What GitHub says of a workflow run, as far as telling Forge's jobs from others goes. */
export interface JobRunFacts {
  id: number;
  /**
   * The workflow file, e.g. `.github/workflows/ci.yml`: `workflow_run.path`, or the delivery's
   * `workflow.path` where the run has none (GitHub Enterprise Server); undefined when neither says.
   */
  path: string | undefined;
  /** `workflow_run.event`: `workflow_dispatch`, `push`, `pull_request`, … */
  event: string;
  /** `workflow_run.head_repository.id`: a fork's for a pull request from a fork. */
  headRepositoryId: number | null | undefined;
}

/**
 * Why a workflow run on an attempt's branch is not that attempt's job, or undefined when it is.
 * The repository's own CI runs on every branch it matches — task branches included — and a fork can
 * name a branch like a task's, so a branch name proves nothing: the run must be of the agent
 * workflow, started by `workflow_dispatch` (as the App dispatches it), with its head in this
 * repository, and, once the attempt has a recorded run id, be that run
 * (docs/architecture.md#trust-boundaries).
 */
export function notTheAttemptsJob(
  run: JobRunFacts,
  expected: { repositoryId: number; workflowPath: string; recordedRunId?: number | undefined },
): string | undefined {
  const path = workflowFile(run.path);
  if (path === undefined) return "its workflow file is not named";
  if (path !== expected.workflowPath) return `it runs ${run.path}, not the agent workflow ${expected.workflowPath}`;
  if (run.event !== "workflow_dispatch") return `it was started by ${run.event}, not by a dispatch`;
  if (run.headRepositoryId !== expected.repositoryId) return "its head commit is not from this repository";
  if (expected.recordedRunId !== undefined && run.id !== expected.recordedRunId)
    return `the attempt's job is workflow run ${expected.recordedRunId}`;
  return undefined;
}

/** The workflow file a run's path names: GitHub may add the ref to some runs' (`….yml@refs/heads/main`). */
export function workflowFile(path: string | null | undefined): string | undefined {
  return path ? path.replace(/@.*$/, "") : undefined;
}

/** The attempt a record commit reports on, when the message carries Forge's trailers. */
export function recordOf(message: string): (AttemptRef & { exitCode: number; iteration: number }) | undefined {
  const t = parseTrailers(message);
  const runId = t[TRAILERS.run];
  const taskId = t[TRAILERS.task];
  const attempt = Number(t[TRAILERS.attempt]);
  const exitCode = Number(t[TRAILERS.exit]);
  // A record without the trailer is of the attempt's first run.
  const iteration = t[TRAILERS.iteration] === undefined ? 0 : Number(t[TRAILERS.iteration]);
  if (!runId || !taskId || !Number.isInteger(attempt) || attempt < 1 || !Number.isInteger(exitCode)) return undefined;
  if (!Number.isInteger(iteration) || iteration < 0) return undefined;
  return { runId, taskId, attempt, exitCode, iteration };
}

export type ResultRead = { ok: true; result: AgentResult; checkpointProblem?: string } | { ok: false; error: string };

/** Read and validate `result.json` at the record commit. */
export async function readResult(port: GitHubPort, ref: AttemptRef, sha: string): Promise<ResultRead> {
  const path = resultPath(ref.runId, ref.taskId, ref.attempt);
  const file = await port.readFile(path, sha);
  if (!file) return { ok: false, error: `the record commit has no ${path}` };
  let raw: unknown;
  try {
    raw = JSON.parse(file.content);
  } catch (e) {
    return { ok: false, error: `${path} is not JSON: ${(e as Error).message}` };
  }
  let parsed = agentResultSchema.safeParse(raw);
  // A checkpoint that is not one costs the result nothing but the checkpoint: the retry starts fresh (docs/executor.md#resuming).
  let checkpointProblem: string | undefined;
  if (!parsed.success && parsed.error.issues.every((i) => i.path[0] === "checkpoint") && raw && typeof raw === "object") {
    checkpointProblem = formatProblem(zodProblems(parsed.error, path)[0]!);
    const { checkpoint: _refused, ...rest } = raw as Record<string, unknown>;
    parsed = agentResultSchema.safeParse(rest);
  }
  if (!parsed.success) {
    return { ok: false, error: formatProblem(zodProblems(parsed.error, path)[0]!) };
  }
  const r = parsed.data;
  if (r.run_id !== ref.runId || r.task_id !== ref.taskId || r.attempt !== ref.attempt)
    return { ok: false, error: `${path} reports ${r.run_id}/${r.task_id}/${r.attempt}, not ${ref.runId}/${ref.taskId}/${ref.attempt}` };
  return { ok: true, result: r, ...(checkpointProblem !== undefined ? { checkpointProblem } : {}) };
}

/**
 * The attempt's result when `headSha` is its record commit (the trailers name this run, task and
 * attempt), else undefined. `commit` is the head's message and parent when a push payload gave them.
 */
export async function recordInput(
  port: GitHubPort,
  ref: AttemptRef,
  headSha: string,
  commit?: { message: string; parents: string[] },
): Promise<LeafInput | undefined> {
  const c = commit ?? (await port.commit(headSha));
  const record = recordOf(c.message);
  if (!record || record.runId !== ref.runId || record.taskId !== ref.taskId || record.attempt !== ref.attempt) return undefined;
  const input = finishedInput(ref, await readResult(port, ref, headSha), headSha, c.parents[0]);
  return input.kind === "agent.finished" ? { ...input, iteration: record.iteration } : input;
}

/**
 * What a finished job of the attempt left: its result when the branch head is its record commit;
 * else the attempt is lost — STALE when a step was still running (the runner went away), FAILED when
 * the job ran to its end without a result.
 */
export async function endedJobInput(
  port: GitHubPort,
  ref: AttemptRef,
  branch: string,
  run: { id: number; conclusion: string | null },
  iteration = 0,
): Promise<LeafInput> {
  const head = await port.branchHead(branch);
  const finished = head ? await recordInput(port, ref, head) : undefined;
  // An earlier revision's record at the head is no result of this job (docs/executor.md#iterations).
  if (finished && (finished.kind !== "agent.finished" || (finished.iteration ?? 0) >= iteration)) return finished;
  const { taskId, attempt } = ref;
  // No result: the checkpoint the runner's last progress push left, for the retry to resume from (read, not trusted).
  const cp = head ? await readBranchCheckpoint(port, ref, head).catch((): BranchCheckpoint => ({})) : {};
  const conclusion = run.conclusion ?? "no conclusion";
  const jobs = await port.endedJobs(run.id);
  // The job's page, where its log is: the tracker links it beside the reason.
  const log = jobs.failed?.htmlUrl ? { logUrl: jobs.failed.htmlUrl } : {};
  if (jobs.runnerLost)
    return {
      kind: "agent.lost",
      taskId,
      attempt,
      workflowRunId: run.id,
      reason: `the job's runner went away mid-step (${conclusion})`,
      runnerLost: true,
      ...log,
      ...cp,
    };
  // The job failed because a rule of the repository refused its push: which rule, which branch, what a person can do.
  const refusal = jobs.errors.map(ruleRefusal).find((r) => r !== undefined);
  if (refusal) {
    const read = await port.branchRules(branch).catch(() => []);
    const types = refusal.messages.flatMap((m) => ruleTypesOf(m, read));
    const rules = await withRulesetNames(read, types, (id) => port.rulesetName(id));
    const why = pushBlockedReason(refusal, branch, rules);
    return {
      kind: "agent.lost",
      taskId,
      attempt,
      workflowRunId: run.id,
      reason: `the job ended (${conclusion}): GitHub refused its push`,
      blockedBy: why.length > 2000 ? `${why.slice(0, 1990)} …` : why,
      ...log,
    };
  }
  const step = jobs.failed?.step ? ` at the step "${jobs.failed.step}"` : "";
  return {
    kind: "agent.lost",
    taskId,
    attempt,
    workflowRunId: run.id,
    reason: `the job ended (${conclusion})${step} without a result`,
    ...log,
    ...cp,
  };
}

/**
 * The executor's input for a runner result. `recordSha` is the record commit (the branch head GitHub
 * reported) and `recordParent` its parent: the work the walkthrough describes. The MERGE_READY gate
 * compares that parent, read from GitHub, with the walkthrough's head_sha.
 */
export function finishedInput(ref: AttemptRef, read: ResultRead, recordSha: string, recordParent: string | undefined): LeafInput {
  if (!read.ok)
    return { kind: "agent.finished", taskId: ref.taskId, attempt: ref.attempt, exitCode: EXIT_CODES.FAILURE, error: read.error, recordSha };
  const r = read.result;
  const w = r.walkthrough;
  return {
    kind: "agent.finished",
    taskId: ref.taskId,
    attempt: ref.attempt,
    exitCode: r.exit_code,
    recordSha,
    ...(recordParent ? { pushedSha: recordParent } : {}),
    ...(w
      ? {
          walkthrough: {
            status: w.status,
            confidence: w.confidence,
            headSha: w.head_sha,
            filesChanged: w.files_changed.map((f) => f.path),
            risks: w.risks,
            followups: w.followups,
          },
        }
      : {}),
    ...(r.squashed?.length ? { squashed: r.squashed.map((q) => ({ branch: q.branch, head: q.head_sha, commit: q.commit_sha })) } : {}),
    ...(r.checkpoint ? { checkpoint: r.checkpoint } : {}),
    ...(read.checkpointProblem !== undefined ? { checkpointProblem: read.checkpointProblem } : {}),
    ...(r.error ? { error: r.error } : {}),
    ...(r.refinement ? { refinement: r.refinement } : {}),
    ...(r.question ? { question: r.question } : {}),
    ...(r.rate_limited_until ? { rateLimitedUntil: r.rate_limited_until } : {}),
    ...spendOf(r),
    ...(r.budget_exceeded
      ? {
          budgetExceeded: {
            ...(r.budget_exceeded.limit_usd !== undefined ? { limitUsd: r.budget_exceeded.limit_usd } : {}),
            ...(r.budget_exceeded.limit_tokens !== undefined ? { limitTokens: r.budget_exceeded.limit_tokens } : {}),
            ...(r.budget_exceeded.spent_usd !== undefined ? { spentUsd: r.budget_exceeded.spent_usd } : {}),
            ...(r.budget_exceeded.spent_tokens !== undefined ? { spentTokens: r.budget_exceeded.spent_tokens } : {}),
          },
        }
      : {}),
    ...(r.exit_code === EXIT_CODES.NEEDS_ESCALATION ? { changeRequest: changeRequestOf(ref, r) } : {}),
  };
}

/**
 * An escalation's Change Request in the emitter's words: the front matter the runner validated
 * (result.json `change_request`). A result without one (a runner older than that field) gets a
 * title of Forge's — never the runner's error line, which is the agent's last output and the
 * runner's notes (docs/executor.md#change-requests).
 */
function changeRequestOf(ref: AttemptRef, r: AgentResult): NonNullable<Extract<LeafInput, { kind: "agent.finished" }>["changeRequest"]> {
  const path = r.change_request_path ? { path: r.change_request_path } : {};
  const cr = r.change_request;
  if (!cr) return { title: changeRequestTitle(ref.taskId), reason: r.error ?? "escalation", affectedTasks: [ref.taskId], ...path };
  return {
    title: cr.title,
    reason: cr.reason,
    affectedTasks: cr.affected_tasks.length ? cr.affected_tasks : [ref.taskId],
    suggestedAction: cr.suggested_action,
    priority: cr.priority,
    ...path,
  };
}

/**
 * A refinery's successful result, with the MERGE_READY upstream tasks whose work its record commit
 * does not contain — one compare per upstream. The refinery's merge marks its upstreams MERGED: one
 * whose work its head lacks would be lost. An upstream is contained when its head (recordSha, else
 * pushedSha) is an ancestor of the record commit — or, on a branch that must keep a linear history,
 * when the runner's result lists that very head as squashed into a commit that is: the runner's own
 * word (result.json is its file, like the exit code), never a trailer an agent could have written,
 * and a head other than the one the journal verified counts for nothing. Any other input is
 * returned as it is.
 */
export async function withContainment(port: GitHubPort, journal: Journal, input: LeafInput): Promise<LeafInput> {
  if (input.kind !== "agent.finished" || input.uncontainedUpstreams !== undefined || !input.recordSha) return input;
  if (!succeeded(input.exitCode)) return input;
  const k = journal.plan.nodes.findIndex((n) => n.id === input.taskId);
  const node = journal.plan.nodes[k];
  const t = journal.tasks[k];
  if (!node || !t || node.kind !== "refinery" || t.status !== "RUNNING" || t.attempts !== input.attempt) return input;
  const recordSha = input.recordSha;
  // The compares run at once: this happens inside the run's serial turn.
  const missing = await Promise.all(
    node.dependencies.map(async (dep) => {
      const d = journal.tasks.find((x) => x.id === dep);
      const head = d?.status === "MERGE_READY" ? prHead(d) : undefined;
      if (!head) return false;
      const squash = input.squashed?.find((q) => q.branch === d?.attempt?.branch && q.head === head);
      const status = await port.compareCommits(squash?.commit ?? head, recordSha);
      return status !== "ahead" && status !== "identical";
    }),
  );
  return { ...input, uncontainedUpstreams: node.dependencies.filter((_, i) => missing[i]) };
}

/** Plan ids whose folder a push touched, from the commits' added/modified/removed lists. */
export function touchedPlans(commits: readonly { added?: string[]; modified?: string[]; removed?: string[] }[]): Map<string, Set<string>> {
  const plans = new Map<string, Set<string>>();
  for (const c of commits) {
    for (const path of [...(c.added ?? []), ...(c.modified ?? []), ...(c.removed ?? [])]) {
      const p = parsePlanPath(path);
      if (!p) continue;
      const files = plans.get(p.planId) ?? new Set<string>();
      files.add(p.file);
      plans.set(p.planId, files);
    }
  }
  return plans;
}

/** What an attempt spent, from its result: the cost, the tokens and its agent's time. */
function spendOf(r: AgentResult): { spend?: NonNullable<Extract<LeafInput, { kind: "agent.finished" }>["spend"]> } {
  const agentMs = r.agent_ms ?? Date.parse(r.finished_at) - Date.parse(r.started_at);
  const tokens = r.tokens ? r.tokens.input + r.tokens.output : undefined;
  const spend = {
    ...(r.cost_usd !== undefined ? { usd: r.cost_usd } : {}),
    ...(tokens !== undefined ? { tokens } : {}),
    ...(Number.isFinite(agentMs) && agentMs >= 0 ? { agentMs } : {}),
  };
  return Object.keys(spend).length ? { spend } : {};
}
