/**
 * Time and completion: what passing time decides (an expired usage limit, a job that never started
 * or went silent), and what every decision ends with — the run completes once every node is
 * MERGED; until then, what is ready is dispatched unless the run is paused.
 */
import { schedulingHeld } from "../task-rules.js";
import * as effects from "./effects.js";
import { schedule } from "./dispatch.js";
import { branchName } from "../layout.js";
import { stale } from "./retries.js";
import { silenceOf } from "./liveness.js";
import type { ResumeEvidence } from "./resume.js";
import type { InputOf, Step } from "./step.js";

export function tick(s: Step, input: InputOf<"tick">): void {
  const p = s.j.pause;
  if (p.usageLimitUntil !== undefined && Date.parse(p.usageLimitUntil) <= s.now) {
    const { usageLimitUntil: _gone, ...rest } = p;
    s.j.pause = rest;
    s.emit("run.resumed", undefined, { reason: "usage_limit" });
  }
  for (const i of [...s.derived.running].sort((a, b) => a - b)) {
    const silence = silenceOf(s.task(i), s.config, s.now);
    if (silence === "never started") stale(s, i, "tick", "the dispatched job never started");
    else if (silence === "silent") stale(s, i, "tick", "no sign of life from the job", undefined, silentEvidence(s, i, input));
  }
}

/**
 * What a silent attempt left to continue from: the checkpoint the App read at its branch head before
 * this tick (`input.checkpoints`), checked as an ended job's (docs/executor.md#resuming). Without a
 * read, the retry resumes from the branch head, every stage run again.
 */
function silentEvidence(s: Step, i: number, input: InputOf<"tick">): ResumeEvidence {
  const t = s.task(i);
  const read = input.checkpoints?.find((c) => c.taskId === t.id && c.attempt === t.attempts);
  return {
    cls: "stale",
    checkpoint: read?.checkpoint,
    checkpointProblem: read?.checkpointProblem,
    recordSha: read?.checkpointSha,
    pushedSha: read?.pushedSha,
  };
}

/** Model usage exhausted until `until`: dispatching pauses; it is nobody's failure. */
export function usageLimited(s: Step, until: number): void {
  const prev = s.j.pause.usageLimitUntil ? Date.parse(s.j.pause.usageLimitUntil) : 0;
  if (until <= prev || until <= s.now) return;
  if (!(prev > s.now)) s.emit("run.paused", undefined, { reason: "usage_limit", until: s.iso(until) });
  s.j.pause = { ...s.j.pause, usageLimitUntil: s.iso(until) };
}

/** Another run of the installation hit the model's usage limit. */
export function usageLimitedInput(s: Step, input: InputOf<"usage.limited">): void {
  const until = Date.parse(input.until);
  if (!Number.isNaN(until)) usageLimited(s, until);
}

/** After every input: the run completes once every node is MERGED; otherwise what is ready is dispatched, unless the run is paused. */
export function settle(s: Step): void {
  if (s.j.status === "running" && s.j.merged === s.j.tasks.length) return complete(s);
  if (s.j.status !== "running" || schedulingHeld(s.j.pause, s.now)) return;
  schedule(s);
}

/** Every node is MERGED: the run's final pull request is opened, and its branches go if so configured. */
function complete(s: Step): void {
  s.j.status = "completed";
  s.j.completedAt = s.iso(s.now);
  s.emit("run.completed", undefined, { duration: s.now - Date.parse(s.j.createdAt), taskCount: s.j.tasks.length });
  s.effect(effects.openFinalPullRequest());
  if (s.config.branch_cleanup === "on_complete") {
    const branches: string[] = [];
    for (const t of s.j.tasks) for (let a = 1; a <= t.attempts; a++) branches.push(branchName(s.config, s.j.runId, t.id, a));
    for (const f of s.j.followups) branches.push(f.branch);
    s.effect(effects.cleanupBranches(branches));
  }
}
