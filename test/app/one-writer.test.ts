/**
 * A run's state has one writer: effects read the run's facts and return what they learned as a
 * patch; the engine applies it. And a Change Request's issue number lives once, in the journal.
 */
import { describe, expect, it } from "vitest";
import { Engine } from "../../src/app/engine/index.js";
import { TestClock } from "../helpers/clock.js";
import { attentionOf, runEffect, type EffectContext } from "../../src/app/effects/index.js";
import { RunStore, type RunFacts, type StoredRun } from "../../src/app/run-store.js";
import type { Effect } from "../../src/core/effects.js";
import { JOURNAL_FILE, stateBranch } from "../../src/core/layout.js";
import type { GitHubPort } from "../../src/github/port.js";
import { JOURNAL_KEY, NOW, RECORD, REPOSITORY_ID, RUN_ID, sealed, storedRun, testConfig, WORK } from "./handlers/fixtures.js";

function deepFreeze<T>(o: T): T {
  if (o && typeof o === "object") {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

/** A port whose every call answers plainly: new objects get number 41, check runs 77. */
function plainPort(calls: string[] = []): GitHubPort {
  return new Proxy(
    {},
    {
      get(_t, name: string) {
        if (name === "then") return undefined;
        // The web root links are written under (a port's `webUrl`).
        if (name === "webUrl") return "https://github.com";
        return async () => {
          calls.push(name);
          if (name === "createCheckRun") return 77;
          if (name === "createPullRequest") return { number: 41 };
          if (name === "createIssue") return 41;
          if (name === "branchHead") return WORK;
          if (name === "repositoryId") return REPOSITORY_ID;
          return null;
        };
      },
    },
  ) as unknown as GitHubPort;
}

function context(state: StoredRun, port: GitHubPort): EffectContext {
  return {
    port,
    journal: state.journal,
    config: state.config,
    facts: deepFreeze(structuredClone(state.facts)),
    events: [],
    replay: false,
    now: NOW,
    conflicts: new Map(),
  };
}

describe("the tracker's wait", () => {
  it("follows a slow run's pace, but what newly waits for a person is shown at the shortest wait", async () => {
    const state = storedRun({ a: [], b: [] });
    // Ten minutes in and nothing merged yet: routine progress waits a minute between two writes.
    state.journal.createdAt = new Date(NOW - 600_000).toISOString();
    state.facts = {
      ...state.facts,
      trackerIssue: 7,
      trackerUpdatedAt: new Date(NOW - 10_000).toISOString(),
      trackerAttention: attentionOf(state.journal),
    };
    const calls: string[] = [];
    const routine = await runEffect({ key: "tracker", kind: "UpdateTracker" }, context(state, plainPort(calls)));
    expect(routine).toMatchObject({ kind: "later", reason: "debounced" });
    expect(routine.kind === "later" && routine.retryInMs).toBeGreaterThan(45_000);
    expect(calls).toEqual([]);

    // Task a used up its retries: a person must act, and the tracker says so 10 s after its last write.
    const held = structuredClone(state);
    const a = held.journal.tasks[0]!;
    Object.assign(a, { status: "FAILED", attempt: { ...a.attempt!, hold: "exhausted" } });
    expect(attentionOf(held.journal)).not.toBe(state.facts.trackerAttention);
    const shown = await runEffect({ key: "tracker", kind: "UpdateTracker" }, context(held, plainPort(calls)));
    expect(shown).toMatchObject({ kind: "done", learned: { trackerIssue: 7, trackerAttention: attentionOf(held.journal) } });
    expect(calls).toEqual(["updateIssue"]);
  });
});

describe("effects return what they learned; they never write the run's facts", () => {
  const state = storedRun({ a: [] });

  it("a new tracker issue comes back as a patch (the facts the effect read are frozen)", async () => {
    const ctx = context({ ...state, facts: { checkRuns: {} } }, plainPort());
    const out = await runEffect({ key: "tracker", kind: "UpdateTracker" }, ctx);
    expect(out).toMatchObject({ kind: "done", result: { issueNumber: 41 }, learned: { trackerIssue: 41 } });
    expect(out.learned?.trackerUpdatedAt).toBe(new Date(NOW).toISOString());
    expect(ctx.facts.trackerIssue).toBeUndefined();
  });

  it("a check run's id and the final PR's number come back as patches", async () => {
    const withSha = structuredClone(state);
    const a = withSha.journal.tasks[0]!;
    Object.assign(a, {
      status: "MERGE_READY",
      attempts: 1,
      attempt: {
        branch: "forge/x/a/1",
        recordSha: RECORD,
        revision: { iteration: 0, dispatchedAt: "2026-01-01T00:00:00Z", pushedSha: WORK },
      },
    });
    const check: Effect = {
      key: "check:a:1",
      kind: "UpsertCheckRun",
      taskId: "a",
      attempt: a.attempts,
      status: "MERGE_READY",
      summary: "ok",
    };
    const out = await runEffect(check, context(withSha, plainPort()));
    expect(out).toMatchObject({ kind: "done", learned: { checkRuns: { [`a:${a.attempts}`]: 77 } } });

    const pr = await runEffect({ key: "final-pr", kind: "OpenFinalPullRequest" }, context(state, plainPort()));
    expect(pr).toMatchObject({ kind: "done", result: { prNumber: 41 }, learned: { finalPr: 41 } });
  });

  it("the engine applies the patch: the tracker's number is in the next journal write", async () => {
    const start = { ...state, facts: { checkRuns: {} } as RunFacts };
    start.journal = { ...start.journal, outbox: [{ key: "tracker", kind: "UpdateTracker" }] };
    let content = sealed(start);
    let blob = 1;
    const writes: StoredRun[] = [];
    const base = plainPort();
    const port = new Proxy(base, {
      get(target, name: string) {
        if (name === "readFile")
          return async (path: string, ref: string) =>
            path === JOURNAL_FILE && ref === stateBranch(RUN_ID) ? { content, blobSha: `blob-${blob}` } : null;
        if (name === "writeFile")
          return async (_b: string, _p: string, text: string) => {
            content = text;
            blob++;
            writes.push(JSON.parse(text) as StoredRun);
            return { blobSha: `blob-${blob}`, commitSha: `c-${blob}` };
          };
        return Reflect.get(target, name) as unknown;
      },
    });
    const engine = new Engine({ port, clock: new TestClock(NOW), replicaId: "r1", journalKey: JOURNAL_KEY });
    await engine.flush(RUN_ID);
    await engine.idle();
    await engine.persistDirty();
    const last = writes.at(-1)!;
    expect(last.facts.trackerIssue).toBe(41);
    expect(last.journal.outbox.map((e) => e.key)).not.toContain("tracker");
  });
});

describe("a Change Request's issue number lives in the journal only", () => {
  it("a journal written with the old copy in facts.crIssues loads, with the number moved into the journal", async () => {
    const escalated = {
      kind: "agent.finished" as const,
      taskId: "a",
      attempt: 1,
      exitCode: 11 as const,
      error: "no such API",
      changeRequest: { title: "Use v2", reason: "no such API", affectedTasks: ["a"] },
    };
    const state = storedRun({ a: [], b: ["a"] }, { config: testConfig({ cr_mode: "review" }), steps: [[escalated]] });
    const crId = state.journal.changeRequests[0]!.id;
    expect(state.journal.changeRequests[0]!.issueNumber).toBeUndefined();
    const old = { ...state, facts: { ...state.facts, crIssues: { [crId]: 12 } } };
    const port = {
      repositoryId: async () => REPOSITORY_ID,
      readFile: async () => ({ content: sealed(old), blobSha: "b1" }),
    } as unknown as GitHubPort;
    const loaded = await new RunStore(port, JOURNAL_KEY).load(RUN_ID);
    expect(loaded!.state.journal.changeRequests[0]!.issueNumber).toBe(12);
    expect(loaded!.state.facts).not.toHaveProperty("crIssues");
  });

  it("opening a CR already acknowledged does not open a second issue", async () => {
    const calls: string[] = [];
    const state = storedRun({ a: [] }, { crIssues: {} });
    const cr = { id: "cr-a-1", emittedBy: "a", attempt: 1, title: "t", reason: "r", status: "pending" as const, issueNumber: 12 };
    const journal = {
      ...state.journal,
      changeRequests: [{ ...state.journal.changeRequests[0], ...cr } as (typeof state.journal.changeRequests)[number]],
    };
    const out = await runEffect(
      { key: "cr:cr-a-1", kind: "OpenChangeRequest", crId: "cr-a-1", emittedBy: "a", attempt: 1 },
      context({ ...state, journal }, plainPort(calls)),
    );
    expect(out).toMatchObject({ kind: "done", result: { issueNumber: 12 } });
    expect(calls).not.toContain("createIssue");
  });
});
