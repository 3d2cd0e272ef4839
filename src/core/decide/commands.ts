/** `/forge` commands of people with write permission (the App checked it). A refused command says why, in the person's words. */
import { COMMAND_MEMORY, type Hold } from "../journal.js";
import { commandReplies as replies } from "../render/run-messages.js";
import { attemptRef } from "../task-rules.js";
import { approveCr, resolveCr } from "./change-requests.js";
import * as effects from "./effects.js";
import { fixCommand, steerCommand } from "./iterations.js";
import { approveHeld } from "./merge-gate.js";
import { isMergeBlocked, retryBlockedMerge } from "./merge-blocked.js";
import { requestMerge } from "./merge-request.js";
import { retry } from "./retries.js";
import type { InputOf, Step } from "./step.js";

type Command = InputOf<"command">;

/** One handler per command; the compiler holds the table to the command names of the input. */
const commands: { [C in Command["command"]]: (s: Step, c: Command & { command: C }) => void } = {
  pause(s, c) {
    if (s.j.pause.manual) return s.reject(c.kind, replies.alreadyPaused);
    s.j.pause = { ...s.j.pause, manual: true };
    s.emit("run.paused", undefined, { reason: "manual" });
  },
  resume(s, c) {
    if (!s.j.pause.manual)
      return s.reject(
        c.kind,
        s.j.pause.changeRequests.length ? replies.waitsForChangeRequests(s.j.pause.changeRequests) : replies.notPaused,
      );
    s.j.pause = { ...s.j.pause, manual: false };
    s.emit("run.resumed", undefined, { reason: "manual" });
  },
  cancel(s, c) {
    s.j.status = "cancelled";
    s.j.completedAt = s.iso(s.now);
    s.emit("run.cancelled", undefined, { actor: c.actor });
    for (const i of [...s.derived.running].sort((a, b) => a - b)) s.effect(effects.cancelAgent(attemptRef(s.task(i))));
  },
  retry(s, c) {
    if (c.which === "failed") return retryRound(s, c);
    if (!c.taskId) return s.reject(c.kind, replies.retryWhich);
    const i = s.find(c.taskId);
    if (i === undefined) return s.reject(c.kind, replies.unknownTask(c.taskId), c.taskId);
    const t = s.task(i);
    if (t.status === "MERGE_READY" && isMergeBlocked(t)) return retryBlockedMerge(s, i);
    if (t.status !== "FAILED" && t.status !== "STALE") return s.reject(c.kind, replies.notRetryable(c.taskId, t.status), c.taskId);
    const hold = s.attempt(i).hold;
    if (hold === "escalated") return s.reject(c.kind, replies.waitsForItsChangeRequest(c.taskId), c.taskId);
    if (t.status === "FAILED" && !hold) return s.reject(c.kind, replies.alreadyRetrying(c.taskId), c.taskId);
    if (c.message) s.edit(i).next = { ...t.next, answer: c.message };
    retry(s, i, c.kind, { counted: false, manual: true });
  },
  approve: approveOrReject,
  reject: approveOrReject,
  fix: fixCommand,
  steer: steerCommand,
  budget: raiseBudget,
};

/** What a failed task waits for that a round's retry does not give it: an answer, its Change Request, more budget. */
const WAITS_FOR_A_PERSON: ReadonlySet<Hold> = new Set(["human", "escalated", "budget"]);

/**
 * `/forge retry failed`: every task a `/forge retry <task>` would retry from a failure — FAILED or
 * STALE and held (retries exhausted, a fatal exit, a refused push, a cancelled attempt) — retried at
 * once, in this one decision, neither counted nor delayed; the message, when given, reaches each
 * next attempt. A task that waits for something only a person's own command gives (an answer, its
 * Change Request, budget) is left for that command; a run with nothing to retry says so.
 */
function retryRound(s: Step, c: Command & { command: "retry" }): void {
  const round: number[] = [];
  for (let i = 0; i < s.j.tasks.length; i++) {
    const t = s.task(i);
    const hold = t.attempt?.hold;
    if (t.status !== "FAILED" && t.status !== "STALE") continue;
    if ((t.status === "FAILED" && !hold) || (hold && WAITS_FOR_A_PERSON.has(hold))) continue;
    round.push(i);
  }
  if (!round.length) return s.reject(c.kind, replies.nothingFailed);
  for (const i of round) {
    if (c.message) s.edit(i).next = { ...s.task(i).next, answer: c.message };
    retry(s, i, c.kind, { counted: false, manual: true });
  }
}

/**
 * `/forge budget [task] +<amount>`: more dollars for the run (it resumes when it was paused for its
 * budget) or for one task (retried when it was stopped at its budget).
 */
function raiseBudget(s: Step, c: Command & { command: "budget" }): void {
  if (c.amountUsd === undefined || !(c.amountUsd > 0)) return s.reject(c.kind, replies.budgetHow);
  const amount = c.amountUsd;
  if (!c.taskId) {
    s.j.budgetExtraUsd = Math.round(((s.j.budgetExtraUsd ?? 0) + amount) * 1e6) / 1e6;
    if (s.j.pause.budget) {
      const { budget: _b, ...pause } = s.j.pause;
      s.j.pause = pause;
      s.emit("run.resumed", undefined, { reason: "budget" });
    }
    // Tasks stopped at their attempt's cap go again: the run can pay for them now.
    for (let i = 0; i < s.j.tasks.length; i++)
      if (s.task(i).attempt?.hold === "budget") retry(s, i, c.kind, { counted: false, manual: true });
    return;
  }
  const i = s.find(c.taskId);
  if (i === undefined) return s.reject(c.kind, replies.unknownTask(c.taskId), c.taskId);
  s.edit(i).budgetExtraUsd = Math.round(((s.task(i).budgetExtraUsd ?? 0) + amount) * 1e6) / 1e6;
  if (s.task(i).attempt?.hold === "budget") retry(s, i, c.kind, { counted: false, manual: true });
}

/** `approve` or `reject` a Change Request (by its issue), or `approve` a refinery's merge (on its PR). */
function approveOrReject(s: Step, c: Command & { command: "approve" | "reject" }): void {
  if (c.crId) {
    const cr = s.j.changeRequests.find((x) => x.id === c.crId);
    if (!cr) return s.reject(c.kind, replies.unknownChangeRequest(c.crId));
    if (cr.status !== "pending") return s.reject(c.kind, replies.changeRequestResolved(c.crId, cr.status));
    if (c.command === "reject") return resolveCr(s, cr.id, "rejected");
    return approveCr(s, cr.id);
  }
  if (c.taskId && c.command === "approve") {
    const i = s.find(c.taskId);
    const t = i === undefined ? undefined : s.task(i);
    // A merge held for protected paths: the head the person saw is approved.
    if (i !== undefined && t?.status === "MERGE_READY" && t.attempt?.revision.protectedPaths?.length) {
      if (s.idx.isRefinery[i]) s.edit(i).approved = true;
      return approveHeld(s, i);
    }
    if (i === undefined || !s.idx.isRefinery[i]) return s.reject(c.kind, replies.notARefinery(c.taskId), c.taskId);
    s.edit(i).approved = true;
    return requestMerge(s, i);
  }
  return s.reject(c.kind, replies.approveWhat(c.command));
}

/**
 * Whether the comment behind `c` was acted on already; if not, it is remembered from now on. GitHub
 * signs a delivery once and keeps no clock in it, so the same signed `/forge budget +5` can be sent
 * again under any delivery id: the comment's id, not the delivery's, says whether it is new. The run
 * keeps the latest `COMMAND_MEMORY` ids; comment ids grow as comments are made, so an id at or below
 * the oldest one forgotten (`below`) is taken as seen — only a command older than that many newer
 * ones, arriving after them, is refused as stale.
 */
function seenBefore(s: Step, commentId: number): boolean {
  const memory = s.j.commands ?? { comments: [], below: 0 };
  if (commentId <= memory.below || memory.comments.includes(commentId)) return true;
  const comments = [...memory.comments, commentId].sort((a, b) => a - b);
  const over = comments.length - COMMAND_MEMORY;
  const below = over > 0 ? comments[over - 1]! : memory.below;
  s.j.commands = { comments: over > 0 ? comments.slice(over) : comments, below };
  return false;
}

export function command(s: Step, c: Command): void {
  // A comment delivered again (a replay, a redelivery under a new id) changes nothing, and says nothing.
  if (c.commentId !== undefined && seenBefore(s, c.commentId)) return;
  // The table's handler for `c.command` takes exactly this command; the compiler cannot correlate the two by itself.
  (commands[c.command] as (s: Step, c: Command) => void)(s, c);
}
