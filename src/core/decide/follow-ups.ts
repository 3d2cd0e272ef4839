/**
 * Follow-ups: work a walkthrough listed for later, spawned as agents of their own with one attempt
 * each. They share the run's capacity with tasks but are not nodes of the plan.
 */
import type { FollowupState } from "../journal.js";
import * as effects from "./effects.js";
import { branchName, followupId } from "../layout.js";
import type { Step } from "./step.js";

/** A follow-up has exactly one attempt. */
const ATTEMPT = 1;

/** Whether an id that inputs name is a follow-up's rather than a task's. */
export function isFollowup(s: Step, id: string): boolean {
  return s.find(id) === undefined && s.j.followups.some((f) => f.id === id);
}

function setFollowup(s: Step, id: string, patch: Partial<FollowupState>): void {
  s.j.followups = s.j.followups.map((f) => (f.id === id ? { ...f, ...patch } : f));
}

/** Queue a follow-up listed by the walkthrough of task `sourceTaskId`'s attempt; it runs when there is capacity. */
export function queueFollowup(s: Step, sourceTaskId: string, sourceAttempt: number, text: string): void {
  // '_' cannot start a task id, so a follow-up's id and branch never collide with a task's.
  const id = followupId(s.j.followups.length + 1);
  const followup: FollowupState = {
    id,
    sourceTaskId,
    sourceAttempt,
    text,
    branch: branchName(s.config, s.j.runId, id, ATTEMPT),
    status: "queued",
  };
  s.j.followups = [...s.j.followups, followup];
}

/** Follow-ups whose agent is running; they take capacity as tasks do. */
export function runningFollowups(s: Step): number {
  let running = 0;
  for (const f of s.j.followups) if (f.status === "running") running++;
  return running;
}

/** Spawn queued follow-ups while there is capacity; returns the capacity left. */
export function spawnFollowups(s: Step, capacity: number): number {
  for (const f of s.j.followups) {
    if (capacity <= 0) break;
    if (f.status !== "queued") continue;
    setFollowup(s, f.id, { status: "running" });
    s.emit("followup.spawned", f.sourceTaskId, { followupId: f.id, sourceTaskId: f.sourceTaskId, reason: f.text, branch: f.branch });
    s.effect(effects.spawnFollowup(f));
    capacity--;
  }
  return capacity;
}

export function followupPrOpened(s: Step, id: string, prNumber: number): void {
  setFollowup(s, id, { prNumber });
}

/** The follow-up's agent ended: a success is merged (under `merge_policy: auto`), a failure is reported. */
export function followupFinished(s: Step, id: string, ok: boolean): void {
  const f = s.j.followups.find((x) => x.id === id)!;
  if (f.status !== "running") return;
  if (ok) {
    setFollowup(s, id, { status: "done" });
    if (s.config.merge_policy === "auto")
      s.effect(effects.mergePullRequest({ id, attempt: ATTEMPT, branch: f.branch, prNumber: f.prNumber }));
  } else {
    setFollowup(s, id, { status: "failed" });
    s.emit("followup.completed", f.sourceTaskId, { followupId: id, status: "failed" });
  }
}

export function followupMerged(s: Step, id: string): void {
  const f = s.j.followups.find((x) => x.id === id)!;
  if (f.status === "merged") return;
  setFollowup(s, id, { status: "merged" });
  s.emit("followup.completed", f.sourceTaskId, { followupId: id, status: "merged" });
}
