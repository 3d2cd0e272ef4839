import type { Journal } from "../../src/core/journal.js";
import { planIndex } from "../../src/core/plan-index.js";

/**
 * The ready set computed from scratch: PENDING tasks (not held back by a backoff) whose every
 * dependency is MERGED — or MERGE_READY, for a refinery — ordered by priority (downstream work),
 * then plan order. `decide` keeps readiness incrementally (src/core/derived.ts); this is the
 * reference the property tests hold it to.
 */
export function readySet(journal: Journal, now: number): string[] {
  const { deps, isRefinery } = planIndex(journal.plan);
  const tasks = journal.tasks;
  const ready: number[] = [];
  for (let i = 0; i < tasks.length; i++) {
    const t = tasks[i]!;
    if (t.status !== "PENDING") continue;
    if (t.notBefore !== undefined && Date.parse(t.notBefore) > now) continue;
    let ok = true;
    for (const d of deps[i]!) {
      const st = tasks[d]!.status;
      if (!(st === "MERGED" || (isRefinery[i] && st === "MERGE_READY"))) {
        ok = false;
        break;
      }
    }
    if (ok) ready.push(i);
  }
  const nodes = journal.plan.nodes;
  ready.sort((a, b) => nodes[b]!.priority - nodes[a]!.priority || a - b);
  return ready.map((i) => tasks[i]!.id);
}
