/**
 * A deterministic stand-in for GitHub and the agents, for exercising the pure executor: it carries
 * out the effects `decide` asks for and answers with the facts GitHub would deliver. Agents behave
 * as a script says per (task, attempt). Used by the property tests and the benchmarks.
 */
import { createHash } from "node:crypto";
import { decide, startRun, type Decision, type NewRun } from "../../src/core/decide/index.js";
import type { Effect } from "../../src/core/effects.js";
import type { LeafInput, PlanNodeInput } from "../../src/core/inputs.js";
import type { Journal } from "../../src/core/journal.js";
import type { ForgeConfig } from "../../src/core/schemas/config.js";

export type Outcome =
  | { kind: "success"; followups?: string[]; risks?: string[]; confidence?: number; files?: string[] }
  | { kind: "exit"; code: 1 | 2 | 10 | 20 | 21 }
  | { kind: "lost" }
  | { kind: "human" }
  | { kind: "escalate" }
  | { kind: "rate_limited"; forMs: number }
  | { kind: "silent" };

export type Behaviour = (taskId: string, attempt: number) => Outcome;

export const sha = (text: string) => createHash("sha1").update(text).digest("hex");

/** Facts a world produces for one effect; `done` is the effect acknowledgement. */
export function factsFor(effect: Effect, behaviour: Behaviour, now: number): LeafInput[] {
  const done: LeafInput = { kind: "effect.done", key: effect.key, result: {} };
  switch (effect.kind) {
    case "DispatchAgent": {
      const { taskId, attempt } = effect;
      const out = behaviour(taskId, attempt);
      const head = sha(`${taskId}/${attempt}`);
      const facts: LeafInput[] = [{ kind: "effect.done", key: effect.key, result: { workflowRunId: 1000 + attempt } }];
      if (out.kind === "silent") return facts;
      facts.push({ kind: "agent.started", taskId, attempt, workflowRunId: 1000 + attempt });
      switch (out.kind) {
        case "success":
          facts.push(
            { kind: "pr.opened", taskId, attempt, number: attempt },
            { kind: "branch.pushed", taskId, attempt, headSha: head },
            {
              kind: "agent.finished",
              taskId,
              attempt,
              exitCode: 0,
              pushedSha: head,
              walkthrough: {
                status: "completed",
                confidence: out.confidence ?? 0.9,
                headSha: head,
                filesChanged: out.files ?? [`src/${taskId}.ts`],
                risks: out.risks ?? [],
                followups: out.followups ?? [],
              },
            },
          );
          break;
        case "exit":
          facts.push({
            kind: "agent.finished",
            taskId,
            attempt,
            exitCode: out.code,
            error: `exit ${out.code}`,
            ...(out.code === 10 ? { refinement: "fix the tests" } : {}),
          });
          break;
        case "lost":
          facts.push({ kind: "agent.lost", taskId, attempt, reason: "runner died" });
          break;
        case "human":
          facts.push({ kind: "agent.finished", taskId, attempt, exitCode: 3, question: "Which database?" });
          break;
        case "escalate":
          facts.push({
            kind: "agent.finished",
            taskId,
            attempt,
            exitCode: 11,
            changeRequest: { title: "missing task", reason: "integration gap", affectedTasks: [taskId] },
          });
          break;
        case "rate_limited":
          facts.push({ kind: "agent.finished", taskId, attempt, exitCode: 1, rateLimitedUntil: new Date(now + out.forMs).toISOString() });
          break;
      }
      return facts;
    }
    case "MergePullRequest":
      return [{ kind: "effect.done", key: effect.key, result: { mergeSha: sha(`merge/${effect.taskId}/${effect.attempt}`) } }];
    case "CheckUpstream":
      // The simulated agents change no protected path.
      return [{ kind: "effect.done", key: effect.key, result: { clean: true } }];
    case "SpawnFollowup":
      return [done, { kind: "agent.finished", taskId: effect.followupId, attempt: 1, exitCode: 0 }];
    default:
      return [done];
  }
}

export interface RunResult {
  journal: Journal;
  decisions: Decision[];
  /** Every input with the time it was decided at, in order (for replay). */
  log: { input: LeafInput; at: number }[];
  now: number;
}

/**
 * Drive a run to its end: deliver facts in order, answer people's questions with /forge retry,
 * resolve Change Requests with an empty overlay, tick the clock when nothing else is pending.
 */
export function runToEnd(
  run: NewRun,
  config: ForgeConfig,
  behaviour: Behaviour,
  opts: { maxSteps?: number; start?: number } = {},
): RunResult {
  let now = opts.start ?? 0;
  const first = startRun(run, now, config);
  const decisions = [first];
  const log: RunResult["log"] = [];
  let journal = first.journal;
  const queue: LeafInput[] = [];
  const enqueue = (d: Decision) => {
    for (const e of d.effects) queue.push(...factsFor(e, behaviour, now));
  };
  enqueue(first);
  const maxSteps = opts.maxSteps ?? 100_000;
  for (let step = 0; step < maxSteps && journal.status === "running"; step++) {
    let input = queue.shift();
    if (!input) {
      input = people(journal) ?? { kind: "tick" };
      if (input.kind === "tick") now += 60_000;
    }
    log.push({ input, at: now });
    const d = decide(journal, input, now, config);
    decisions.push(d);
    journal = d.journal;
    enqueue(d);
  }
  return { journal, decisions, log, now };
}

/** What a person would do next: answer a waiting agent, or merge an empty overlay for a pending CR. */
export function people(j: Journal): LeafInput | undefined {
  const waiting = j.tasks.find((t) => t.status === "FAILED" && t.hold === "human");
  if (waiting) return { kind: "command", command: "retry", actor: "octocat", taskId: waiting.id, message: "Use PostgreSQL." };
  const cr = j.changeRequests.find((c) => c.status === "pending" || c.status === "approved");
  if (cr)
    return {
      kind: "overlay.applied",
      crId: cr.id,
      overlayId: `overlay-${String(j.plan.overlays.length + 1).padStart(3, "0")}`,
      planCommit: sha(cr.id),
      nodes: [],
      edges: [],
    };
  return undefined;
}

/** A plan node list from `[id, deps]` pairs; ids starting with `r` are refineries. */
export function nodes(spec: Record<string, string[]>): PlanNodeInput[] {
  return Object.entries(spec).map(([id, dependencies]) =>
    id.startsWith("r") ? { id, kind: "refinery", agentType: "refinery", dependencies } : { id, kind: "task", agentType: "2", dependencies },
  );
}

export function newRun(planNodes: PlanNodeInput[], runId = "run-1"): NewRun {
  return {
    runId,
    planId: "plan",
    planCommit: sha("plan"),
    dagHash: sha("dag"),
    nodes: planNodes,
    integrationBranch: `forge/${runId}/_integration`,
    baseBranch: "main",
  };
}

/**
 * The two facts a run in full swing brings most: the merge of a MERGE_READY task whose merge is
 * pending, and a successful result of a RUNNING task (its walkthrough naming `risks`).
 */
export function midRunInputs(journal: Journal, risks: string[] = []): { merge: LeafInput; finished: LeafInput } {
  const mergeReady = journal.tasks.find(
    (t) => t.status === "MERGE_READY" && journal.outbox.some((e) => e.kind === "MergePullRequest" && e.taskId === t.id),
  );
  const running = journal.tasks.find((t) => t.status === "RUNNING");
  if (!mergeReady || !running) throw new Error("the run should have a MERGE_READY and a RUNNING task");
  const head = sha(`${running.id}/${running.attempt}`);
  return {
    merge: { kind: "pr.merged", taskId: mergeReady.id, attempt: mergeReady.attempt, mergeSha: sha("m") },
    finished: {
      kind: "agent.finished",
      taskId: running.id,
      attempt: running.attempt,
      exitCode: 0,
      pushedSha: head,
      walkthrough: { status: "completed", confidence: 0.9, headSha: head, filesChanged: [`src/${running.id}.ts`], risks, followups: [] },
    },
  };
}
