// A running attempt's progress, as its job's live check run carries it (src/core/live-progress.ts):
// the hidden line the runner writes and the App parses as data, and what the core keeps of it.
import { describe, expect, it } from "vitest";
import { decide } from "../../src/core/decide/index.js";
import { liveProgressLine, parseLiveProgress } from "../../src/core/live-progress.js";
import { cfg, MIN, start } from "./decide-helpers.js";

const beat = "2026-11-27T21:40:05.000Z";

describe("the live progress line", () => {
  it("round-trips through a check run's summary, hidden in an HTML comment", () => {
    const p = { stage: "verify", turns: 3, tool: "Bash", beat };
    const summary = `**Stage:** \`verify\`\n\n${liveProgressLine(p)}`;
    expect(liveProgressLine(p)).toBe(`<!-- forge-live {"stage":"verify","turns":3,"tool":"Bash","beat":"${beat}"} -->`);
    expect(parseLiveProgress(summary)).toEqual(p);
  });

  it("an agent's text cannot end the comment early or change the facts", () => {
    const line = liveProgressLine({ tool: "x --> <b>owned</b>", beat });
    expect(line.indexOf("-->")).toBe(line.length - 3);
    expect(parseLiveProgress(line)).toEqual({ tool: "x --> <b>owned</b>", beat });
  });

  it("holds nothing when the line is missing, not JSON, outside the schema, or its time is not one", () => {
    expect(parseLiveProgress(undefined)).toBeUndefined();
    expect(parseLiveProgress("**Stage:** `verify`")).toBeUndefined();
    expect(parseLiveProgress("<!-- forge-live {not json} -->")).toBeUndefined();
    expect(parseLiveProgress(`<!-- forge-live {"stage":"${"s".repeat(61)}","beat":"${beat}"} -->`)).toBeUndefined();
    expect(parseLiveProgress(`<!-- forge-live {"turns":-1,"beat":"${beat}"} -->`)).toBeUndefined();
    expect(parseLiveProgress('<!-- forge-live {"beat":"yesterday"} -->')).toBeUndefined();
    // Unknown fields are dropped, not kept.
    expect(parseLiveProgress(`<!-- forge-live {"beat":"${beat}","extra":"x"} -->`)).toEqual({ beat });
  });
});

describe("the core keeps a running attempt's latest progress", () => {
  it("records it on the revision; a new stage is a task.progress event, a newer beat only redraws the tracker, an older one is ignored", () => {
    const config = cfg();
    let j = decide(start({ a: [] }, config).journal, { kind: "agent.started", taskId: "a", attempt: 1 }, 1 * MIN, config).journal;
    const hb = (progress: { stage?: string; turns?: number; beat: string }, at: number) =>
      decide(j, { kind: "agent.heartbeat", taskId: "a", attempt: 1, progress }, at, config);

    let d = hb({ stage: "implement", turns: 1, beat }, 2 * MIN);
    expect(d.journal.tasks[0]!.attempt!.revision.progress).toEqual({ stage: "implement", turns: 1, beat });
    expect(d.events.filter((e) => e.type === "task.progress").map((e) => e.data)).toEqual([
      { attempt: 1, message: "stage implement reached" },
    ]);
    expect(d.effects.some((e) => e.kind === "UpdateTracker")).toBe(true);
    j = d.journal;

    const later = "2026-11-27T21:41:05.000Z";
    d = hb({ stage: "implement", turns: 4, beat: later }, 3 * MIN);
    expect(d.journal.tasks[0]!.attempt!.revision.progress).toEqual({ stage: "implement", turns: 4, beat: later });
    expect(d.events.filter((e) => e.type === "task.progress")).toEqual([]);
    expect(d.effects.some((e) => e.kind === "UpdateTracker")).toBe(true);
    j = d.journal;

    // The same again, or an older beat (a check run read before the last one): nothing changes, nothing redrawn.
    for (const p of [
      { stage: "implement", turns: 4, beat: later },
      { stage: "verify", turns: 9, beat },
    ]) {
      d = hb(p, 4 * MIN);
      expect(d.journal.tasks[0]!.attempt!.revision.progress).toEqual({ stage: "implement", turns: 4, beat: later });
      expect(d.effects.some((e) => e.kind === "UpdateTracker")).toBe(false);
    }
  });
});
