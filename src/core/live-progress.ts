/**
 * How an attempt's progress reaches the App while its job runs (docs/runner.md#live-progress): the
 * runner's live check run (`forge · <taskId> · live`, updated in place at most every 30 s) ends its
 * summary with one hidden line, `<!-- forge-live {…} -->`, holding the stage, the turns, the last
 * tool and the time of the agent's last sign of life (its heartbeat). Check run updates send no
 * webhook, so the App's reconciler reads it (one GET per running attempt per sweep, 60 s by
 * default), records it on the attempt and the tracker shows it. The line is written by the job; the
 * App reads it as data: parsed against this schema, strings cut, never followed.
 */
import { z } from "zod";

export const liveProgressSchema = z
  .object({
    stage: z.string().max(60).optional().describe("The stage running (absent: between stages)."),
    turns: z.number().int().min(0).max(1_000_000).optional().describe("The agent's turns so far."),
    tool: z.string().max(60).optional().describe("The last tool the agent called."),
    beat: z.string().max(40).describe("When the agent last showed progress (ISO-8601, the job's clock)."),
  })
  .strip();
export type LiveProgress = z.infer<typeof liveProgressSchema>;

const MARKER = /<!-- forge-live (\{[^\n]{0,1000}?\}) -->/;

/** The hidden line the runner ends its live check run's summary with. */
export function liveProgressLine(p: LiveProgress): string {
  // No `<` or `>` of the agent's text can end the comment early.
  return `<!-- forge-live ${JSON.stringify(p).replace(/</g, "\\u003c").replace(/>/g, "\\u003e")} -->`;
}

/** The progress a live check run's summary carries, or undefined when it holds none that is valid. */
export function parseLiveProgress(summary: string | null | undefined): LiveProgress | undefined {
  const m = summary ? MARKER.exec(summary) : null;
  if (!m) return undefined;
  try {
    const p = liveProgressSchema.safeParse(JSON.parse(m[1]!));
    if (!p.success || Number.isNaN(Date.parse(p.data.beat))) return undefined;
    return p.data;
  } catch {
    return undefined;
  }
}
