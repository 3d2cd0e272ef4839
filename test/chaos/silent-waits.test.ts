/**
 * The chaos suite's property "no task stays in one state for more than five minutes of its clock
 * without a reason shown on the tracker" (observe.ts), on histories made by hand: it finds a silent
 * six-minute wait, and lets one through that the tracker explains.
 */
import { describe, expect, it } from "vitest";
import { renderTracker } from "../../src/app/render.js";
import { startRun } from "../../src/core/decide/index.js";
import type { Journal, TaskState } from "../../src/core/journal.js";
import { defaultConfig } from "../../src/core/schemas/config.js";
import { newRun, nodes } from "../helpers/world.js";
import { SILENT_LIMIT_MS, silentWaits, trackerView, type JournalVersion } from "./observe.js";

const REPO = { owner: "acme", repo: "widgets", webUrl: "https://github.com" };
const T0 = Date.parse("2026-03-01T12:00:00Z");
const MIN = 60_000;

/** The journal of a run of `a → b` with the tasks changed as given. */
function journal(change: (a: TaskState, b: TaskState) => void): Journal {
  const j = startRun(newRun(nodes({ a: [], b: ["a"] })), T0, defaultConfig()).journal;
  const tasks = j.tasks.map((t) => structuredClone(t));
  change(tasks[0]!, tasks[1]!);
  return { ...j, tasks, merged: tasks.filter((t) => t.status === "MERGED").length };
}

/** `a` verified and waiting to merge, with its PR and, when given, the reason its merge waits. */
function mergeReady(waiting?: string): Journal {
  return journal((a) => {
    a.status = "MERGE_READY";
    a.attempts = 1;
    a.attempt = {
      branch: "forge/run-1/a/1",
      prNumber: 7,
      revision: { iteration: 0, dispatchedAt: "2026-03-01T12:00:00Z", ...(waiting ? { waiting } : {}) },
    };
  });
}

/** A version of the state branch at `at`, its tasks as the tracker renders them. */
function version(sha: string, at: number, j: Journal): JournalVersion {
  return { sha, at, tasks: trackerView(renderTracker(j, [], { checkRuns: {} }, REPO, at), j) };
}

describe("no task stays in one state for five minutes without a reason on the tracker", () => {
  it("finds a task that waits six minutes to merge with nothing on the tracker saying why", () => {
    const history = [version("aaaaaaa1", T0, mergeReady()), version("aaaaaaa2", T0 + 3 * MIN, mergeReady())];
    const found = silentWaits(history, T0 + 6 * MIN);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^a MERGE_READY#1 for 6\.0 min without a reason on the tracker \(from aaaaaaa\)/);
    // b waits for a all along, and the tracker's chart shows it: that is a reason.
    expect(found.join()).not.toContain("b ");
  });

  it("lets the same wait through when the tracker says what it waits for", () => {
    const waiting = "GitHub refuses the merge: required approvals on `forge/run-1/_integration`";
    const history = [version("bbbbbbb1", T0, mergeReady()), version("bbbbbbb2", T0 + 2 * MIN, mergeReady(waiting))];
    const view = history[1]!.tasks.find((t) => t.id === "a")!;
    expect(view.reason).toBe(`waiting for a person: ${waiting}`.slice(0, 120));
    // Two silent minutes, then a reason for the rest: no stretch without a reason reaches five minutes.
    expect(silentWaits(history, T0 + 60 * MIN)).toEqual([]);
  });

  it("counts a stretch from where the reason went away, and a new state starts a new stretch", () => {
    const waiting = "GitHub refuses the merge: required approvals";
    const running = journal((a) => {
      a.status = "RUNNING";
      a.attempts = 1;
      a.attempt = { branch: "forge/run-1/a/1", revision: { iteration: 0, dispatchedAt: "2026-03-01T12:00:00Z" } };
    });
    const history = [
      version("ccccccc1", T0, running),
      version("ccccccc2", T0 + 4 * MIN, mergeReady()),
      version("ccccccc3", T0 + 8 * MIN, mergeReady(waiting)),
      version("ccccccc4", T0 + 30 * MIN, mergeReady()),
    ];
    // RUNNING 4 min, MERGE_READY silent 4 min, explained 22 min, then silent from 30 min on.
    expect(silentWaits(history, T0 + 35 * MIN)).toEqual([]);
    expect(silentWaits(history, T0 + 35 * MIN + 1)).toEqual(["a MERGE_READY#1 for 5.0 min without a reason on the tracker (from ccccccc)"]);
  });

  it("holds a task to its limit, not a second more", () => {
    const history = [version("ddddddd1", T0, mergeReady())];
    expect(silentWaits(history, T0 + SILENT_LIMIT_MS)).toEqual([]);
    expect(silentWaits(history, T0 + SILENT_LIMIT_MS + 1000)).toHaveLength(1);
  });

  it("takes the refinery that merges a verified task as its reason while the refinery is not merged", () => {
    const j = startRun(newRun(nodes({ a: [], r1: ["a"] })), T0, defaultConfig()).journal;
    const tasks = j.tasks.map((t) => structuredClone(t));
    tasks[0]!.status = "MERGE_READY";
    tasks[0]!.attempts = 1;
    tasks[1]!.status = "RUNNING";
    tasks[1]!.attempts = 1;
    const history = [version("fffffff1", T0, { ...j, tasks })];
    expect(history[0]!.tasks[0]!.reason).toBe("merges with refinery r1 (RUNNING)");
    // The refinery itself, running for six minutes with nothing said, is the one that stalls.
    expect(silentWaits(history, T0 + 6 * MIN)).toEqual(["r1 RUNNING#1 for 6.0 min without a reason on the tracker (from fffffff)"]);
  });

  it("takes a paused run, a hold and the last error as reasons, and a merged task as done", () => {
    const paused = { ...mergeReady(), pause: { manual: true, changeRequests: [] } };
    expect(version("e1", T0, paused).tasks.find((t) => t.id === "a")!.reason).toMatch(/^the run is paused/);
    const failed = journal((a) => {
      a.status = "FAILED";
      a.attempts = 2;
      a.lastError = "Repository rule violations found: Commits must have verified signatures.";
    });
    expect(version("e2", T0, failed).tasks.find((t) => t.id === "a")!.reason).toContain("verified signatures");
    const merged = journal((a) => {
      a.status = "MERGED";
      a.attempts = 1;
    });
    const view = version("e3", T0, merged).tasks;
    expect(view.find((t) => t.id === "a")!.reason).toBe("merged");
    // b's upstream is merged: a PENDING b has no reason shown, and would be a stall if it stayed.
    expect(view.find((t) => t.id === "b")!.reason).toBeUndefined();
    expect(silentWaits([version("e3", T0, merged)], T0 + 6 * MIN)).toEqual([
      "b PENDING#0 for 6.0 min without a reason on the tracker (from e3)",
    ]);
  });
});
