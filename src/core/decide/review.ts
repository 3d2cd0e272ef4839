/** Review of a completed attempt's walkthrough: its risks, predicted conflicts, confidence and follow-ups. */
import type { WalkthroughFacts } from "../inputs.js";
import { reviewWalkthrough } from "../review.js";
import { queueFollowup } from "./follow-ups.js";
import type { Step } from "./step.js";

export function review(s: Step, i: number, w: WalkthroughFacts): void {
  const t = s.task(i);
  const others: { id: string; files: string[]; paths: string[] }[] = [];
  for (const k of [...s.derived.inFlight].sort((a, b) => a - b)) {
    if (k === i) continue;
    const o = s.task(k);
    others.push({ id: o.id, files: o.status === "RUNNING" ? [] : (o.filesChanged ?? []), paths: s.node(k).paths });
  }
  const result = reviewWalkthrough(
    { risks: w.risks, followups: w.followups, confidence: w.confidence, filesChanged: w.filesChanged },
    others,
    {
      threshold: s.config.low_confidence_threshold,
      keywords: s.config.followups.keywords,
      spawnOpenEnded: s.config.followups.spawn_open_ended,
    },
  );
  for (const risk of w.risks) s.emit("review.risk", t.id, { attempt: t.attempts, risk });
  for (const c of result.conflicts) s.emit("conflict.potential", t.id, c);
  if (result.lowConfidence)
    s.emit("review.low_confidence", t.id, { confidence: w.confidence, threshold: s.config.low_confidence_threshold });
  for (const f of result.followups) {
    if (!f.spawn) {
      s.emit("followup.logged", t.id, { sourceTaskId: t.id, reason: f.text });
      continue;
    }
    if (s.j.followups.length >= s.config.followups.max_per_run) {
      s.emit("followup.logged", t.id, { sourceTaskId: t.id, reason: `${f.text} (follow-up limit reached)` });
      continue;
    }
    queueFollowup(s, t.id, t.attempts, f.text);
  }
}
