import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { journalSchema, type Journal } from "../../src/core/journal.js";
import { runForge } from "./helpers.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "forge-graph-"));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** A journal of the semver-lite run, as the executor would have written it (or, `v1`, as the executor of journal version 1 did). */
function journal(statuses: Record<string, Journal["tasks"][number]["status"]>, v1 = false): unknown {
  const ids = Object.keys(statuses);
  const attempt = (id: string) => ({ branch: `forge/r1/${id}/1`, revision: { iteration: 0, dispatchedAt: "2026-11-21T10:00:00Z" } });
  const raw = {
    version: v1 ? 1 : 2,
    runId: "r1",
    planId: "semver-lite",
    planCommit: "0".repeat(40),
    dagHash: "f".repeat(64),
    integrationBranch: "forge/r1/_integration",
    baseBranch: "main",
    createdAt: "2026-11-21T10:00:00Z",
    status: "running",
    seq: 0,
    plan: {
      nodes: ids.map((id) => ({
        id,
        kind: id === "integrate" ? "refinery" : "task",
        agentType: id === "integrate" ? "refinery" : "2",
        dependencies: [],
      })),
    },
    tasks: ids.map((id) =>
      v1
        ? { id, status: statuses[id], attempt: 1, retries: 0, blockers: 0, dispatchedAttempt: 1, branch: `forge/r1/${id}/1` }
        : {
            id,
            status: statuses[id],
            attempts: 1,
            retries: 0,
            blockers: 0,
            ...(statuses[id] === "PENDING" ? {} : { attempt: attempt(id) }),
          },
    ),
    merged: 0,
    pause: { manual: false, changeRequests: [] },
    changeRequests: [],
    followups: [],
    outbox: [],
  };
  return v1 ? raw : journalSchema.parse(raw);
}

describe("forge graph", () => {
  it("prints the DAG as a Mermaid flowchart, refineries as hexagons", async () => {
    const r = await runForge(["graph", "examples/plans/semver-lite"], ROOT);
    expect(r.code).toBe(0);
    expect(r.err).toBe("");
    const lines = r.out.trimEnd().split("\n");
    expect(lines[0]).toBe("flowchart TD");
    expect(lines).toContain('  n6{{"integrate"}}');
    expect(lines).toContain('  n0["scaffold"]');
    expect(lines.filter((l) => l.includes("-->"))).toHaveLength(10);
    expect(r.out).not.toContain("classDef");
  });

  it("colours nodes by the journal's statuses, of a version-1 journal too", async () => {
    const statuses = { scaffold: "MERGED", parse: "MERGED", compare: "RUNNING", docs: "FAILED", integrate: "PENDING" } as const;
    for (const v1 of [false, true]) {
      const file = path.join(tmp, v1 ? "journal-v1.json" : "journal.json");
      await writeFile(file, JSON.stringify(journal(statuses, v1)));
      const r = await runForge(["graph", "examples/plans/semver-lite", "--journal", file], ROOT);
      expect(r.code, r.err).toBe(0);
      expect(r.out).toContain("  classDef merged ");
      expect(r.out).toContain("  class n0,n1 merged\n");
      expect(r.out).toContain("  class n2 running\n");
      expect(r.out).toContain("  class n5 failed\n");
      expect(r.out).toContain("  class n6 pending\n");
    }
  });

  it("refuses a journal that is not JSON or not a journal, and a missing one, without a stack trace", async () => {
    const notJson = path.join(tmp, "bad.json");
    await writeFile(notJson, "{ nope");
    const r1 = await runForge(["graph", "examples/plans/semver-lite", "--journal", notJson], ROOT);
    expect(r1.code).toBe(1);
    expect(r1.err).toMatch(/^forge graph: journal .* is not valid JSON/);
    const notJournal = path.join(tmp, "other.json");
    await writeFile(notJournal, JSON.stringify({ version: 1 }));
    const r2 = await runForge(["graph", "examples/plans/semver-lite", "--journal", notJournal], ROOT);
    expect(r2.code).toBe(1);
    expect(r2.err).toMatch(/is not a Forge journal/);
    const r3 = await runForge(["graph", "examples/plans/semver-lite", "--journal", path.join(tmp, "none.json")], ROOT);
    expect(r3.code).toBe(2);
    expect(r1.out + r2.out + r3.out).toBe("");
  });

  it("reports an unreadable dag.json instead of drawing, and warns about other problems", async () => {
    const bad = await runForge(["graph", "examples/invalid/unreadable-json"], ROOT);
    expect(bad.code).toBe(1);
    expect(bad.out).toBe("");
    expect(bad.err).toMatch(/^examples\/invalid\/unreadable-json\/dag\.json:15 — dag\.json is not valid JSON/);
    const warn = await runForge(["graph", "examples/invalid/cycle"], ROOT);
    expect(warn.code).toBe(0);
    expect(warn.out).toContain("flowchart TD");
    expect(warn.err).toContain("warning: the plan has 1 problem");
  });
});
