/**
 * Resuming (docs/executor.md#resuming): when an attempt ends in a way the retry policy resumes, the
 * next attempt continues its work — on its branch and PR, from the head it pushed, from the first
 * stage its checkpoint left pending, with the agent CLI's session — instead of starting again.
 *
 * The checkpoint is the runner's file (result.json `checkpoint`), pushed with the job's token:
 * nothing in it is taken on trust. Each field is checked against what the journal and GitHub say
 * (the attempt, the work head GitHub reported, the node's stages, the depth budget); a checkpoint that
 * fails any check is refused whole and the next attempt starts fresh, saying why.
 */
import type { Checkpoint } from "../schemas/checkpoint.js";
import type { ForgeConfig } from "../schemas/config.js";
import type { ResumeClass } from "../schemas/retry-policy.js";
import { isStageOf } from "../stages.js";
import type { AttemptRecord, PlanNode, ResumePoint } from "../journal.js";
import { nextAgent } from "./agents.js";
import type { Step } from "./step.js";
import * as effects from "./effects.js";
import { checkpointRefusedComment } from "../render/run-messages.js";
import { attemptRef } from "../task-rules.js";

/** What an ended attempt left to continue from. */
export interface ResumeEvidence {
  /** How it ended, as the retry policy classes it. */
  cls: ResumeClass;
  /** Its runner's last checkpoint, as result.json carried it (or its branch head, when it left no result). */
  checkpoint?: Checkpoint | undefined;
  /** result.json carried something that is not a checkpoint. */
  checkpointProblem?: string | undefined;
  /** Its record commit (or the checkpoint commit at its branch head): the head the next attempt continues from. */
  recordSha?: string | undefined;
  /** The record commit's parent as GitHub reported it: the work the checkpoint must name. */
  pushedSha?: string | undefined;
}

/** The retry policy's way for a class: the task's own, else the config's. */
export function retryWay(config: Pick<ForgeConfig, "retry_policy">, node: Pick<PlanNode, "retryPolicy">, cls: ResumeClass) {
  return node.retryPolicy?.[cls] ?? config.retry_policy[cls];
}

/** Why a checkpoint cannot be resumed from; empty when every field holds. */
export function checkpointProblems(
  cp: Checkpoint,
  at: {
    runId: string;
    taskId: string;
    attempt: number;
    agentType: PlanNode["agentType"];
    maxDepth: number;
    pushedSha: string | undefined;
  },
): string[] {
  const problems: string[] = [];
  if (cp.run_id !== at.runId || cp.task_id !== at.taskId || cp.attempt !== at.attempt)
    problems.push(`it names ${cp.run_id}/${cp.task_id}/${cp.attempt}, not ${at.runId}/${at.taskId}/${at.attempt}`);
  if (at.pushedSha === undefined) problems.push("the attempt's pushed work is unknown");
  else if (cp.head_sha !== at.pushedSha)
    problems.push(`its head ${cp.head_sha.slice(0, 12)} is not the attempt's pushed work ${at.pushedSha.slice(0, 12)}`);
  const stages = [...cp.completed_stages.map((c) => c.name), ...cp.pending_stages];
  for (const stage of stages)
    if (at.agentType === "refinery" || !isStageOf(at.agentType, stage)) problems.push(`'${stage}' is not a stage of type ${at.agentType}`);
  if (new Set(stages).size !== stages.length) problems.push("it names a stage twice");
  if (cp.depth_max > at.maxDepth) problems.push(`its depth budget ${cp.depth_max} is over the config's ${at.maxDepth}`);
  if (cp.depth_used > cp.depth_max) problems.push(`its depth ${cp.depth_used} is over its budget ${cp.depth_max}`);
  if (Number.isNaN(Date.parse(cp.created_at))) problems.push("its time is not a time");
  if (cp.agent_session && !stages.includes(cp.agent_session.stage))
    problems.push(`its agent session belongs to '${cp.agent_session.stage}', a stage it does not name`);
  return problems;
}

/** Why an ended attempt is retried fresh whatever it left (undefined: it may be resumed). */
export function whyFresh(node: Pick<PlanNode, "kind">, a: Pick<AttemptRecord, "revision">): string | undefined {
  if (node.kind === "refinery") return "a refinery's attempt starts fresh (its upstreams are merged when its branch is cut)";
  if (a.revision.iteration > 0) return "a revision that ended so is retried fresh";
  if (a.revision.workflowRunId === undefined) return "its job never ran";
  return undefined;
}

/**
 * Task i's attempt ended (it still has its attempt record): when the policy resumes this way of ending,
 * `next.resume` says what the next attempt continues; otherwise, or when nothing can be continued,
 * the next attempt starts fresh (`next.fresh` says why, when the policy would have resumed).
 */
export function planResume(s: Step, i: number, ev: ResumeEvidence): void {
  const t = s.task(i);
  const node = s.node(i);
  const { resume: _earlier, fresh: _why, ...rest } = t.next ?? {};
  const keep = (extra: { resume?: ResumePoint; fresh?: string }) => {
    const next = { ...rest, ...extra };
    const e = s.edit(i);
    if (Object.keys(next).length) e.next = next;
    else delete e.next;
  };
  if (retryWay(s.config, node, ev.cls) !== "resume") return keep({});
  const a = t.attempt;
  if (!a) return keep({});
  const priorRunId = a.revision.workflowRunId;
  const why = whyFresh(node, a);
  if (why) return keep({ fresh: why });
  // A refused checkpoint is said where people look: on the attempt's PR (or the tracker), beside the retry's event.
  const refuse = (problem: string) => {
    s.effect(effects.postComment("checkpoint-refused", attemptRef(t), checkpointRefusedComment(t.id, t.attempts, problem)));
    keep({ fresh: `its checkpoint was refused: ${problem}` });
  };
  if (ev.checkpointProblem !== undefined) return refuse(ev.checkpointProblem);
  const cp = ev.checkpoint;
  if (cp) {
    const problems = checkpointProblems(cp, {
      runId: s.j.runId,
      taskId: t.id,
      attempt: t.attempts,
      agentType: node.agentType,
      maxDepth: s.config.agent.max_depth,
      pushedSha: ev.pushedSha,
    });
    if (problems.length) return refuse(problems.join("; "));
  }
  // A session is continued only by the agent that holds it: after a change of agent the work and its notes go on, the session starts fresh.
  const session = cp?.agent_session && cp.agent_session.adapter === nextAgent(s, i) ? cp.agent_session : undefined;
  keep({
    resume: {
      reason: ev.cls,
      fromAttempt: t.attempts,
      branch: a.branch,
      ...(a.prNumber !== undefined ? { prNumber: a.prNumber } : {}),
      priorRunId: priorRunId!,
      ...(ev.recordSha ? { head: ev.recordSha } : {}),
      ...(cp?.pending_stages[0] ? { stage: cp.pending_stages[0] } : {}),
      ...(session ? { session: { ...session } } : {}),
      ...(cp ? { depthUsed: cp.depth_used } : {}),
    },
  });
}
