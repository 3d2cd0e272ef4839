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
import type { InputOf, Step } from "./step.js";

export function tick(s: Step): void {
  const p = s.j.pause;
  if (p.usageLimitUntil !== undefined && Date.parse(p.usageLimitUntil) <= s.now) {
    const { usageLimitUntil: _gone, ...rest } = p;
    s.j.pause = rest;
    s.emit("run.resumed", undefined, { reason: "usage_limit" });
  }
  const startLimit = s.config.timeouts.dispatch_start_minutes * 60_000;
  const liveLimit = s.config.timeouts.liveness_minutes * 60_000;
  for (const i of [...s.derived.running].sort((a, b) => a - b)) {
    const r = s.revision(i);
    if (!r.startedAt) {
      if (s.now - Date.parse(r.dispatchedAt) > startLimit) stale(s, i, "tick", "the dispatched job never started");
    } else {
      const last = Date.parse(r.lastHeartbeat ?? r.startedAt);
      if (s.now - last > liveLimit) stale(s, i, "tick", "no sign of life from the job");
    }
  }
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
