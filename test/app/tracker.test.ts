/**
 * The run tracker for plans of every size: the DAG node by node while Mermaid can draw it, a
 * summary by wave past Mermaid's limits, and an issue body under GitHub's limit at 10,000 tasks.
 */
import { describe, expect, it } from "vitest";
import { BODY_LIMIT, FINAL_TABLE_ROWS, renderFinalPr, renderTracker } from "../../src/app/render.js";
import { trackerDebounceMs } from "../../src/app/effects/index.js";
import type { RunFacts } from "../../src/app/run-store.js";
import { startRun } from "../../src/core/decide/index.js";
import type { PlanNodeInput } from "../../src/core/inputs.js";
import type { Journal } from "../../src/core/journal.js";
import {
  MERMAID_LIMITS,
  mermaidEdgeCount,
  renderMermaid,
  renderWaveSummary,
  summarizeByWave,
  waves,
} from "../../src/core/render/mermaid.js";
import type { TaskStatus } from "../../src/core/schemas/common.js";
import { defaultConfig } from "../../src/core/schemas/config.js";
import { generateDag, prng } from "../helpers/gen-plan.js";
import { newRun, nodes } from "../helpers/world.js";

const REPO = { owner: "octo", repo: "app", webUrl: "https://github.com" };
const STATUSES: readonly TaskStatus[] = ["PENDING", "RUNNING", "DONE", "MERGE_READY", "MERGED", "FAILED", "STALE"];

function journalOf(planNodes: PlanNodeInput[]): Journal {
  return startRun(newRun(planNodes), 0, defaultConfig()).journal;
}

/** A generated plan of `n` tasks and `3n` (or `5n`) edges, with titles as real plans have. */
function bigPlan(n: number, edges = 3 * n): PlanNodeInput[] {
  return generateDag(n, edges, 7).nodes.map((x) => ({
    id: x.id,
    kind: x.type,
    agentType: x.agentType,
    title: `Implement the ${x.id} module and its tests`,
    dependencies: x.dependencies,
  }));
}

/** `journal` with each task's status drawn at random (seeded), and the worst case for row length: an attempt, a PR, an error, a check run. */
function withStatuses(journal: Journal, seed: number, pick?: (i: number) => TaskStatus): { journal: Journal; facts: RunFacts } {
  const rand = prng(seed);
  const checkRuns: Record<string, number> = {};
  const tasks = journal.tasks.map((t, i) => {
    const status = pick ? pick(i) : STATUSES[Math.floor(rand() * STATUSES.length)]!;
    checkRuns[`${t.id}:1`] = 30_000_000_000 + i;
    return {
      ...t,
      status,
      attempts: 1,
      attempt: { branch: `forge/run/${t.id}/1`, prNumber: 10_000 + i, revision: { iteration: 0, dispatchedAt: "2026-01-01T00:00:00Z" } },
      lastError: status === "FAILED" ? `the agent exited with code 1 after ${i} minutes: `.padEnd(200, "x") : undefined,
    };
  });
  return {
    journal: { ...journal, tasks, merged: tasks.filter((t) => t.status === "MERGED").length },
    facts: { checkRuns },
  };
}

function chartOf(body: string): string {
  const m = /```mermaid\n([\s\S]*?)```/.exec(body);
  expect(m).not.toBeNull();
  return m![1]!;
}

const edgesOf = (chart: string) => chart.split("\n").filter((l) => l.includes("-->")).length;

/** Sums of the counts in a summary chart's labels, per status word, and of its task counts. */
function labelCounts(chart: string): { tasks: number; counts: Record<string, number> } {
  let tasks = 0;
  const counts: Record<string, number> = {};
  for (const m of chart.matchAll(/\["waves? [\d–]+: (\d+) tasks?(?:<br\/>([^"]*))?"\]/g)) {
    tasks += Number(m[1]);
    for (const part of (m[2] ?? "").split(", ").filter(Boolean)) {
      const [, n, word] = /^(\d+) (.+)$/.exec(part)!;
      counts[word!] = (counts[word!] ?? 0) + Number(n);
    }
  }
  return { tasks, counts };
}

describe("the tracker's chart", () => {
  it("draws a small plan node by node, as before", () => {
    const { journal, facts } = withStatuses(
      journalOf(nodes({ a: [], b: ["a"], c: ["a"], r1: ["b", "c"] })),
      1,
      (i) => (["MERGED", "RUNNING", "PENDING", "PENDING"] as const)[i]!,
    );
    const body = renderTracker(journal, [], facts, REPO, 0);
    const expected = [
      "flowchart TD",
      '  n0["a"]',
      '  n1["b"]',
      '  n2["c"]',
      '  n3{{"r1"}}',
      "  n0 --> n1",
      "  n0 --> n2",
      "  n1 --> n3",
      "  n2 --> n3",
      "  classDef pending fill:#eaeef2,stroke:#8c959f,color:#24292f",
      "  class n2,n3 pending",
      "  classDef running fill:#ddf4ff,stroke:#0969da,color:#0a3069",
      "  class n1 running",
      "  classDef merged fill:#1f883d,stroke:#116329,color:#ffffff",
      "  class n0 merged",
      "",
      "",
    ].join("\n");
    expect(chartOf(body)).toBe(expected);
    expect(body).toContain(
      "```mermaid\n" + renderMermaid(journal.plan.nodes, new Map(journal.tasks.map((t) => [t.id, t.status]))) + "\n```\n\n| Task |",
    );
    expect(body).not.toContain("summarised by wave");
    // Every task has its row.
    for (const t of journal.tasks) expect(body).toContain(`| \`${t.id}\``);
  });

  it("draws a 100-task plan of 300 edges node by node: it is within Mermaid's limits", () => {
    const journal = journalOf(bigPlan(100));
    const body = renderTracker(journal, [], { checkRuns: {} }, REPO, 0);
    expect(edgesOf(chartOf(body))).toBe(mermaidEdgeCount(journal.plan.nodes));
    expect(body).not.toContain("summarised by wave");
  });

  for (const n of [300, 1_000]) {
    it(`summarises a ${n.toLocaleString("en-US")}-task plan by wave, under Mermaid's limits and GitHub's body limit`, () => {
      const { journal, facts } = withStatuses(journalOf(bigPlan(n)), n);
      // The full chart would be past Mermaid's edge limit.
      expect(mermaidEdgeCount(journal.plan.nodes)).toBeGreaterThan(MERMAID_LIMITS.maxEdges);
      const body = renderTracker(journal, [], facts, REPO, 0);
      const chart = chartOf(body);
      expect(edgesOf(chart)).toBeLessThanOrEqual(MERMAID_LIMITS.maxEdges);
      expect(chart.length).toBeLessThanOrEqual(MERMAID_LIMITS.maxTextSize);
      expect(body.length).toBeLessThan(BODY_LIMIT);
      expect(body).toContain(`summarised by wave`);
      expect(body).toContain("`npx forge graph .forge/plans/plan`");
      // The labels count every task once, by its status.
      const { tasks, counts } = labelCounts(chart);
      expect(tasks).toBe(n);
      const expected: Record<string, number> = {};
      for (const t of journal.tasks) {
        const word = t.status.toLowerCase().replace("_", " ");
        expected[word] = (expected[word] ?? 0) + 1;
      }
      expect(counts).toEqual(expected);
      // The commands and the end of the body survive.
      expect(body.trimEnd().endsWith("`/forge help`")).toBe(true);
    });
  }

  it("keeps a 10,000-task tracker (50,000 edges) under GitHub's limit, failed and running tasks first, with a count of the rest", () => {
    const { journal, facts } = withStatuses(journalOf(bigPlan(10_000, 50_000)), 3, (i) =>
      i % 1000 === 5 ? "FAILED" : i % 500 === 7 ? "RUNNING" : i < 6_000 ? "MERGED" : "PENDING",
    );
    const body = renderTracker(journal, [], facts, REPO, 0);
    const chart = chartOf(body);
    expect(body.length).toBeLessThan(BODY_LIMIT);
    expect(edgesOf(chart)).toBeLessThanOrEqual(MERMAID_LIMITS.maxEdges);
    expect(chart.length).toBeLessThanOrEqual(MERMAID_LIMITS.maxTextSize);
    const rows = body.split("\n").filter((l) => /^\| `t\d+`/.test(l));
    // The 10 failed and 20 running tasks come first, then pending ones; merged ones do not fit.
    expect(rows.slice(0, 10).every((r) => r.includes("FAILED"))).toBe(true);
    expect(rows.slice(10, 30).every((r) => r.includes("RUNNING"))).toBe(true);
    expect(rows.slice(30).every((r) => r.includes("PENDING"))).toBe(true);
    const pending = journal.tasks.filter((t) => t.status === "PENDING").length;
    const merged = journal.tasks.filter((t) => t.status === "MERGED").length;
    expect(body).toContain(
      `_${rows.length} of 10,000 tasks shown — failed, stale and running first, merged last; not shown: ${(pending - (rows.length - 30)).toLocaleString("en-US")} PENDING, ${merged.toLocaleString("en-US")} MERGED._`,
    );
    expect(body.trimEnd().endsWith("`/forge help`")).toBe(true);
  });

  it("keeps a 10,000-task tracker at the start of the run under GitHub's limit", () => {
    const journal = journalOf(bigPlan(10_000, 50_000));
    const body = renderTracker(journal, [], { checkRuns: {} }, REPO, 0);
    expect(body.length).toBeLessThan(BODY_LIMIT);
    expect(labelCounts(chartOf(body)).tasks).toBe(10_000);
    expect(body).toMatch(/_\d+ of 10,000 tasks shown/);
  });

  it("bounds a long list of follow-ups", () => {
    const journal = journalOf(nodes({ a: [] }));
    const followups = Array.from({ length: 500 }, (_, i) => ({
      id: `_followup-${i + 1}`,
      sourceTaskId: "a",
      sourceAttempt: 1,
      text: "Add the missing tests for the parser's error paths. ".repeat(4),
      branch: `forge/run-1/_followup-${i + 1}/1`,
      status: "queued" as const,
    }));
    const body = renderTracker({ ...journal, followups }, [], { checkRuns: {} }, REPO, 0);
    expect(body.length).toBeLessThan(BODY_LIMIT);
    expect(body).toMatch(/- …and \d+ more follow-ups/);
    expect(body.trimEnd().endsWith("`/forge help`")).toBe(true);
  });
});

describe("the summary by wave", () => {
  it("puts a node in the wave after its deepest dependency, whatever the nodes' order", () => {
    // An overlay appends `x`, on which the earlier `c` now depends.
    const plan = nodes({ a: [], b: ["a"], c: ["a", "x"], x: ["b"] });
    expect(waves(plan)).toEqual([1, 2, 4, 3]);
  });

  it("counts each wave's tasks by status and colours it by its worst status", () => {
    const plan = nodes({ a: [], b: [], c: ["a"], d: ["a"], e: ["b"], f: ["c", "d"] });
    const statuses = new Map<string, TaskStatus>([
      ["a", "MERGED"],
      ["b", "MERGED"],
      ["c", "MERGED"],
      ["d", "RUNNING"],
      ["e", "PENDING"],
      ["f", "PENDING"],
    ]);
    const groups = summarizeByWave(plan, statuses);
    expect(groups).toEqual([
      { from: 1, to: 1, tasks: 2, counts: { MERGED: 2 }, worst: "MERGED" },
      { from: 2, to: 2, tasks: 3, counts: { MERGED: 1, RUNNING: 1, PENDING: 1 }, worst: "PENDING" },
      { from: 3, to: 3, tasks: 1, counts: { PENDING: 1 }, worst: "PENDING" },
    ]);
    expect(renderWaveSummary(groups)).toBe(
      [
        "flowchart TD",
        '  w0["wave 1: 2 tasks<br/>2 merged"]',
        '  w1["wave 2: 3 tasks<br/>1 merged, 1 running, 1 pending"]',
        '  w2["wave 3: 1 task<br/>1 pending"]',
        "  w0 --> w1",
        "  w1 --> w2",
        "  classDef pending fill:#eaeef2,stroke:#8c959f,color:#24292f",
        "  class w1,w2 pending",
        "  classDef merged fill:#1f883d,stroke:#116329,color:#ffffff",
        "  class w0 merged",
        "",
      ].join("\n"),
    );
  });

  it("a failed or stale task makes its wave's colour, before pending ones", () => {
    const plan = nodes({ a: [], b: [], c: [] });
    const groups = summarizeByWave(
      plan,
      new Map<string, TaskStatus>([
        ["a", "PENDING"],
        ["b", "STALE"],
        ["c", "FAILED"],
      ]),
    );
    expect(groups[0]!.worst).toBe("FAILED");
    expect(summarizeByWave(plan, new Map<string, TaskStatus>([["b", "STALE"]]))[0]!.worst).toBe("STALE");
  });

  it("draws a long chain in bands of consecutive waves", () => {
    const chain: PlanNodeInput[] = Array.from({ length: 100 }, (_, i) => ({
      id: `c${i}`,
      kind: "task",
      agentType: "2",
      dependencies: i ? [`c${i - 1}`] : [],
    }));
    const groups = summarizeByWave(chain, new Map(chain.map((n) => [n.id, "PENDING" as const])));
    expect(groups).toHaveLength(34);
    expect(groups.reduce((n, g) => n + g.tasks, 0)).toBe(100);
    const chart = renderWaveSummary(groups);
    expect(chart).toContain('w0["waves 1–3: 3 tasks<br/>3 pending"]');
    expect(chart).toContain('w33["wave 100: 1 task<br/>1 pending"]');
    expect(edgesOf(chart)).toBe(33);
  });
});

describe("the final PR of a big plan", () => {
  it("lists every task of a small plan, and of a 10,000-task plan only those that took more than one attempt, under GitHub's limit", () => {
    const small = withStatuses(journalOf(bigPlan(50)), 1, () => "MERGED");
    const smallBody = renderFinalPr(small.journal, small.facts);
    expect(smallBody.split("\n").filter((l) => /^\| `t\d+`/.test(l))).toHaveLength(50);

    const big = withStatuses(journalOf(bigPlan(10_000, 30_000)), 2, () => "MERGED");
    const tasks = big.journal.tasks.map((t, i) => ({
      ...t,
      attempts: i % 7 === 0 ? 2 + (i % 3) : 1,
      attempt: { ...t.attempt!, prNumber: 100 + i },
    }));
    const body = renderFinalPr({ ...big.journal, tasks }, big.facts);
    expect(body.length).toBeLessThan(BODY_LIMIT);
    const retried = tasks.filter((t) => t.attempts > 1);
    expect(body).toContain(
      `${10_000 - retried.length} of 10000 tasks merged at their first attempt; ${retried.length} took more (the ${FINAL_TABLE_ROWS} with the most attempts below).`,
    );
    const rows = body.split("\n").filter((l) => /^\| `t\d+`/.test(l));
    expect(rows).toHaveLength(FINAL_TABLE_ROWS);
    expect(rows.every((r) => / \| [234] \| [^|]* \| #\d+ \|$/.test(r))).toBe(true);
    expect(rows[0]).toMatch(/\| 4 \|/);
    expect(body).not.toContain("(cut)");
  });
});

describe("a job that ended without a result", () => {
  it("is linked from its task's row to its page on GitHub, where its log is; a link that could break the table is not", () => {
    const journal = journalOf([{ id: "a", kind: "task", agentType: "1", title: "A", dependencies: [] }]);
    const failed = (lastErrorLog: string) => ({
      ...journal,
      tasks: [
        {
          ...journal.tasks[0]!,
          status: "PENDING" as const,
          attempts: 1,
          lastError: "the job ended (failure) without a result",
          lastErrorLog,
        },
      ],
    });
    const url = "http://127.0.0.1:4000/octo/app/actions/runs/7/job/8";
    const row = (body: string) => body.split("\n").find((l) => l.startsWith("| `a`"))!;
    expect(row(renderTracker(failed(url), [], { checkRuns: {} }, REPO, 0))).toContain(
      `the job ended (failure) without a result [job log](${url}) |`,
    );
    const hostile = row(renderTracker(failed("javascript:alert(1)) | x"), [], { checkRuns: {} }, REPO, 0));
    expect(hostile).not.toContain("job log");
  });

  it("a failed attempt held with its result (exhausted) links its workflow run, on the GitHub the App talks to", () => {
    const journal = journalOf([{ id: "a", kind: "task", agentType: "1", title: "A", dependencies: [] }]);
    const attempt = {
      branch: "forge/r/a/1",
      hold: "exhausted" as const,
      revision: { iteration: 0, dispatchedAt: new Date(0).toISOString(), workflowRunId: 41 },
    };
    const held = {
      ...journal,
      tasks: [{ ...journal.tasks[0]!, status: "FAILED" as const, attempts: 1, lastError: "tests failed", attempt }],
    };
    const local = { owner: "octo", repo: "app", webUrl: "http://127.0.0.1:4000" };
    const row = renderTracker(held, [], { checkRuns: {} }, local, 0)
      .split("\n")
      .find((l) => l.startsWith("| `a`"))!;
    expect(row).toContain("tests failed [job log](http://127.0.0.1:4000/octo/app/actions/runs/41) |");
    // Merged, the task shows no failure and no log.
    const merged = { ...held, tasks: [{ ...held.tasks[0]!, status: "MERGED" as const }] };
    expect(renderTracker(merged, [], { checkRuns: {} }, local, 0)).not.toContain("job log");
  });
});

describe("the tracker's status line", () => {
  it("says the run is paused while a usage limit lasts, and not once it has ended", () => {
    const { journal, facts } = withStatuses(journalOf(nodes({ a: [] })), 1, () => "PENDING");
    const limited = { ...journal, pause: { ...journal.pause, usageLimitUntil: new Date(60_000).toISOString() } };
    expect(renderTracker(limited, [], facts, REPO, 59_999)).toContain(
      `**Status:** running (paused: model usage limit until ${new Date(60_000).toISOString()})`,
    );
    expect(renderTracker(limited, [], facts, REPO, 60_000)).toContain("**Status:** running · ");
    // The most pressing reason is the one said.
    const both = { ...limited, pause: { ...limited.pause, manual: true } };
    expect(renderTracker(both, [], facts, REPO, 0)).toContain("(paused: /forge resume to continue)");
  });
});

describe("the tracker's debounce", () => {
  it("is 5 s up to 100 tasks, then 50 ms a task, at most a minute", () => {
    expect(trackerDebounceMs(1)).toBe(5_000);
    expect(trackerDebounceMs(100)).toBe(5_000);
    expect(trackerDebounceMs(300)).toBe(15_000);
    expect(trackerDebounceMs(1_000)).toBe(50_000);
    expect(trackerDebounceMs(10_000)).toBe(60_000);
  });

  it("follows the run's pace: the time a merge has taken so far, between 5 s and a minute", () => {
    // A fast run (the local GitHub): a merge every second — 5 s.
    expect(trackerDebounceMs(8, { elapsedMs: 8_000, merged: 8 })).toBe(5_000);
    // GitHub's latencies, a task every 30 s: about one write a merge.
    expect(trackerDebounceMs(8, { elapsedMs: 120_000, merged: 4 })).toBe(30_000);
    // Before the first merge the wait grows with the run, up to a minute.
    expect(trackerDebounceMs(8, { elapsedMs: 20_000, merged: 0 })).toBe(20_000);
    expect(trackerDebounceMs(8, { elapsedMs: 600_000, merged: 0 })).toBe(60_000);
    // Many tasks: the larger of the two.
    expect(trackerDebounceMs(1_000, { elapsedMs: 60_000, merged: 30 })).toBe(50_000);
  });
});

describe("a resumed attempt", () => {
  it("says so in its row: whose work it continues, why that attempt ended, the stage it started at", () => {
    const journal = journalOf([{ id: "a", kind: "task", agentType: "2", title: "A", dependencies: [] }]);
    const attempt = {
      branch: "forge/r/a/1",
      prNumber: 7,
      resumed: { reason: "stale" as const, fromAttempt: 1, stage: "verify" },
      revision: { iteration: 0, dispatchedAt: new Date(0).toISOString(), workflowRunId: 42 },
    };
    const resumed = { ...journal, tasks: [{ ...journal.tasks[0]!, status: "RUNNING" as const, attempts: 2, attempt }] };
    const row = (j: Journal) =>
      renderTracker(j, [], { checkRuns: {} }, REPO, 0)
        .split("\n")
        .find((l) => l.startsWith("| `a`"))!;
    expect(row(resumed)).toContain("| 2 | #7 |  | resumed: continues attempt 1 (stale), from stage verify |");
    // Without a stage (no checkpoint): the attempt and the reason only; a fresh attempt says nothing of it.
    const noStage = {
      ...resumed,
      tasks: [{ ...resumed.tasks[0]!, attempt: { ...attempt, resumed: { reason: "usage_limit" as const, fromAttempt: 1 } } }],
    };
    expect(row(noStage)).toContain("| resumed: continues attempt 1 (usage limit) |");
    const { resumed: _r, ...fresh } = attempt;
    expect(row({ ...resumed, tasks: [{ ...resumed.tasks[0]!, attempt: fresh }] })).not.toContain("resumed");
  });
});
