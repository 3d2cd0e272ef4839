/**
 * The run on its issues, without GitHub: which runs show on issues (config `issue_sync`), one comment
 * per issue written only when its text changes, and the parent's summary.
 */
import { describe, expect, it } from "vitest";
import type { EffectContext } from "../../src/app/effects/context.js";
import { issueLinks, issueMarker, summaryComment, syncIssues, type IssueFacts } from "../../src/app/issue-sync.js";
import type { RunFacts } from "../../src/app/run-store.js";
import { planFromIssueTree } from "../../src/core/plan/from-issues.js";
import { parsePlan } from "../../src/core/plan/parse.js";
import type { GitHubPort } from "../../src/github/port.js";
import { cfg, start } from "../core/decide-helpers.js";

function treePlan() {
  const r = planFromIssueTree({
    parent: { number: 1, title: "Epic", body: "" },
    children: [2, 3].map((n) => ({
      number: n,
      state: "open",
      sameRepo: true,
      title: `T${n}`,
      body: "",
      labels: [],
      children: [],
      blockedBy: [],
    })),
    planId: "issue-1",
    createdAt: "2026-01-01T00:00:00.000Z",
  });
  if (!r.ok) throw new Error(r.problems.join("; "));
  return parsePlan({ planId: "issue-1", files: r.plan.files, dirs: new Set(["tasks"]), unreadable: [] });
}

/** A port that records the comments written: created (with the ids it gave) and updated. */
function recordingPort() {
  const created: { issue: number; body: string }[] = [];
  const updated: { id: number; body: string }[] = [];
  const port = {
    createComment: async (issue: number, body: string) => (created.push({ issue, body }), 100 + created.length),
    updateComment: async (id: number, body: string) => void updated.push({ id, body }),
    findComment: async () => null,
  } as unknown as GitHubPort;
  return { port, created, updated };
}

describe("which runs show on their issues", () => {
  it("a tree's plan under `tree` and `linked`, none under `off`; a plan with issue links only under `linked`", () => {
    const parsed = treePlan();
    const links = issueLinks(parsed, { issue_sync: "tree" });
    expect(links).toEqual({ parent: 1, tasks: { "issue-2-t2": 2, "issue-3-t3": 3 }, comments: {}, shown: {} });
    expect(issueLinks(parsed, { issue_sync: "linked" })).toEqual(links);
    expect(issueLinks(parsed, { issue_sync: "off" })).toBeUndefined();
    // The same tasks without the plan's issue: a plan written by hand that links issues.
    const byHand = {
      ...parsed,
      dag: { ...parsed.dag, data: { ...parsed.dag.data!, metadata: { ...parsed.dag.data!.metadata, issue: undefined } } },
    };
    expect(issueLinks(byHand, { issue_sync: "tree" })).toBeUndefined();
    expect(issueLinks(byHand, { issue_sync: "linked" })).toEqual({ tasks: { "issue-2-t2": 2, "issue-3-t3": 3 }, comments: {}, shown: {} });
  });
});

describe("the run's comments on its issues", () => {
  it("writes one comment per issue, then only those whose text changed, updated in place", async () => {
    const journal = start({ "issue-2-t2": [], "issue-3-t3": ["issue-2-t2"] }).journal;
    const issues: IssueFacts = { parent: 1, tasks: { "issue-2-t2": 2, "issue-3-t3": 3 }, comments: {}, shown: {} };
    const { port, created, updated } = recordingPort();
    const ctx = (facts: Partial<RunFacts>, j = journal) =>
      ({
        port,
        journal: j,
        config: cfg(),
        facts: { checkRuns: {}, ...facts },
        events: [],
        replay: false,
        now: 0,
        conflicts: new Map(),
      }) as EffectContext;
    const first = (await syncIssues(ctx({ issues }), 7))!;
    expect(created.map((c) => c.issue)).toEqual([2, 3, 1]);
    expect(created[0]!.body.startsWith(issueMarker(journal.runId))).toBe(true);
    expect(created[0]!.body).toContain("task `issue-2-t2`");
    expect(created[2]!.body).toContain("| #3 | `issue-3-t3` |");
    // Nothing changed: nothing written.
    const second = (await syncIssues(ctx({ issues: first }), 7))!;
    expect([created.length, updated.length]).toEqual([3, 0]);
    // One task moves: its issue's comment and the summary are rewritten in place.
    const moved = {
      ...journal,
      tasks: journal.tasks.map((t) => (t.id === "issue-2-t2" ? { ...t, status: "MERGE_READY" as const, attempts: 1 } : t)),
    };
    await syncIssues(ctx({ issues: second }, moved), 7);
    expect(created).toHaveLength(3);
    expect(updated.map((u) => u.id)).toEqual([first.comments["2"], first.comments["1"]]);
    expect(updated[0]!.body).toContain("ready to merge");
    expect(summaryComment(moved, second, 7, undefined)).toContain("tracker #7");
  });

  it("shows on no issue when the run has no issue links", async () => {
    const { port, created } = recordingPort();
    const journal = start({ a: [] }).journal;
    const ctx = {
      port,
      journal,
      config: cfg(),
      facts: { checkRuns: {} },
      events: [],
      replay: false,
      now: 0,
      conflicts: new Map(),
    } as EffectContext;
    expect(await syncIssues(ctx, 7)).toBeUndefined();
    expect(created).toEqual([]);
  });
});
