/**
 * Journals of version 1 read as version 2 (src/core/journal-migration.ts): every field of a
 * version-1 task lands somewhere in the task record, its attempt or its revision; a retried task
 * keeps no attempt; the real version-1 run of test/fixtures/journal-v1 reads as today's App holds it,
 * whole and from its parts.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { storedRunSchema } from "../../src/app/run-store.js";
import { joinRun, partPath, sha256, splitRun } from "../../src/core/journal-parts.js";
import { migrateJournal, migrateStoredRun, migrateTaskV1, taskStateV1Schema, type TaskStateV1 } from "../../src/core/journal-migration.js";
import { journalSchema, taskStateSchema, type TaskState } from "../../src/core/journal.js";
import { forgeConfigSchema } from "../../src/core/schemas/config.js";
import { DEFAULT_RETRY_POLICY } from "../../src/core/schemas/retry-policy.js";

const FIXTURES = path.resolve(import.meta.dirname, "../fixtures/journal-v1");
const fixture = (name: string) => JSON.parse(readFileSync(path.join(FIXTURES, name, "stored-run.json"), "utf8")) as Record<string, unknown>;
const CREATED = "2026-11-27T11:00:00.000Z";

/** A version-1 task with every field set, each to a value no other field has. */
const FULL: TaskStateV1 = {
  id: "t1",
  status: "MERGE_READY",
  attempt: 3,
  retries: 2,
  blockers: 0,
  notBefore: "2026-11-27T11:05:00.000Z",
  dispatchedAttempt: 3,
  dispatchedAt: "2026-11-27T11:10:00.000Z",
  startedAt: "2026-11-27T11:11:00.000Z",
  lastHeartbeat: "2026-11-27T11:12:00.000Z",
  branch: "forge/r/t1/3",
  walkthroughSha: "1".repeat(40),
  pushedSha: "2".repeat(40),
  recordSha: "3".repeat(40),
  prNumber: 41,
  workflowRunId: 9001,
  mergeSha: "4".repeat(40),
  hold: "human",
  question: "Which database?",
  context: { refinement: "Keep it pure.", answer: "PostgreSQL.", conflicts: ["forge/r/up/1"] },
  confidence: 0.42,
  walkthroughStatus: "partial",
  filesChanged: ["src/t1.ts"],
  lastError: "tests fail",
  spentUsd: 1.25,
  spentTokens: 777,
  agentMs: 6543,
  reservedUsd: 2.5,
  budgetExtraUsd: 3.75,
  approved: true,
  protectedPaths: [".github/forge.yml"],
  approvedHead: "5".repeat(40),
  checkedHead: "6".repeat(40),
  iteration: 2,
  reviewIterations: 1,
  ciFixes: 1,
  feedback: [{ source: "review", actor: "octocat", reviewId: 55, message: "Rename it." }],
  answered: [54],
  answeredHeads: ["7".repeat(40)],
  steering: [{ id: 1, actor: "octocat", message: "Small steps.", at: "2026-11-27T11:13:00.000Z" }],
  priorRunId: 9000,
  reviewApprovedHead: "8".repeat(40),
  waiting: "2 revisions made (review.max_iterations: 2)",
  contained: ["up"],
};

/** Where each field of a version-1 task is in version 2 (a path into the task record). */
const WHERE: Record<keyof TaskStateV1, string | Record<string, string>> = {
  id: "id",
  status: "status",
  attempt: "attempts",
  retries: "retries",
  blockers: "blockers",
  notBefore: "next.notBefore",
  dispatchedAttempt: "attempts",
  dispatchedAt: "attempt.revision.dispatchedAt",
  startedAt: "attempt.revision.startedAt",
  lastHeartbeat: "attempt.revision.lastHeartbeat",
  branch: "attempt.branch",
  walkthroughSha: "attempt.revision.walkthroughSha",
  pushedSha: "attempt.revision.pushedSha",
  recordSha: "attempt.recordSha",
  prNumber: "attempt.prNumber",
  workflowRunId: "attempt.revision.workflowRunId",
  mergeSha: "attempt.mergeSha",
  hold: "attempt.hold",
  question: "attempt.question",
  context: { refinement: "next.refinement", answer: "next.answer", conflicts: "attempt.conflicts" },
  confidence: "confidence",
  walkthroughStatus: "walkthroughStatus",
  filesChanged: "filesChanged",
  lastError: "lastError",
  spentUsd: "spentUsd",
  spentTokens: "spentTokens",
  agentMs: "agentMs",
  reservedUsd: "attempt.reservedUsd",
  budgetExtraUsd: "budgetExtraUsd",
  approved: "approved",
  protectedPaths: "attempt.revision.protectedPaths",
  approvedHead: "attempt.revision.approvedHead",
  checkedHead: "attempt.revision.checkedHead",
  iteration: "attempt.revision.iteration",
  reviewIterations: "attempt.reviewIterations",
  ciFixes: "attempt.ciFixes",
  feedback: "attempt.feedback",
  answered: "attempt.answered",
  answeredHeads: "attempt.answeredHeads",
  steering: "attempt.steering",
  priorRunId: "attempt.revision.priorRunId",
  reviewApprovedHead: "attempt.revision.reviewApprovedHead",
  waiting: "attempt.revision.waiting",
  contained: "attempt.contained",
};

const at = (value: unknown, where: string): unknown =>
  where.split(".").reduce<unknown>((v, k) => (v && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined), value);

/** Every leaf value of `value`, by path. */
function leaves(value: unknown, prefix = ""): Map<string, unknown> {
  const out = new Map<string, unknown>();
  if (value && typeof value === "object" && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) for (const [p, x] of leaves(v, prefix ? `${prefix}.${k}` : k)) out.set(p, x);
  } else out.set(prefix, value);
  return out;
}

describe("a version-1 task as a version-2 record", () => {
  it("every field of a version-1 task is in the record, its attempt or its revision, and nothing else is", () => {
    expect(Object.keys(WHERE).sort()).toEqual(Object.keys(taskStateV1Schema.shape).sort());
    expect(Object.keys(FULL).sort(), "the test's task sets every field").toEqual(Object.keys(taskStateV1Schema.shape).sort());
    const v2 = taskStateSchema.parse(migrateTaskV1(FULL, CREATED));
    const placed = new Set<string>();
    for (const [field, where] of Object.entries(WHERE)) {
      const paths = typeof where === "string" ? { [field]: where } : where;
      for (const [key, p] of Object.entries(paths)) {
        const v1 = typeof where === "string" ? FULL[field as keyof TaskStateV1] : (FULL.context as Record<string, unknown>)[key];
        expect(at(v2, p), `${field}${typeof where === "string" ? "" : `.${key}`} → ${p}`).toEqual(v1);
        placed.add(p);
      }
    }
    // Nothing in the record that version 1 did not hold.
    for (const p of leaves(v2).keys())
      expect(
        [...placed].some((q) => p === q || p.startsWith(`${q}.`)),
        p,
      ).toBe(true);
  });

  it("a PENDING task, retried, keeps no attempt: what version 1 still carried of the old one goes, what the next one is handed stays", () => {
    const pending: TaskStateV1 = {
      ...FULL,
      status: "PENDING",
      attempt: 1,
      dispatchedAttempt: 1,
      retries: 1,
      hold: undefined,
      question: undefined,
      context: { refinement: "Keep it pure.", answer: "PostgreSQL." },
    };
    for (const k of [
      "walkthroughSha",
      "pushedSha",
      "recordSha",
      "prNumber",
      "workflowRunId",
      "mergeSha",
      "startedAt",
      "lastHeartbeat",
      "dispatchedAt",
      "contained",
      "hold",
      "question",
    ] as const)
      delete pending[k];
    const v2 = taskStateSchema.parse(migrateTaskV1(pending, CREATED));
    expect(v2.attempt).toBeUndefined();
    expect(v2).toMatchObject({
      status: "PENDING",
      attempts: 1,
      retries: 1,
      next: { notBefore: FULL.notBefore, refinement: "Keep it pure.", answer: "PostgreSQL." },
      lastError: "tests fail",
      spentUsd: 1.25,
    });
    // The first attempt's PR loop (its feedback, approvals, steering) is not the next attempt's.
    expect(JSON.stringify(v2)).not.toContain("Rename it.");
    expect(JSON.stringify(v2)).not.toContain("Small steps.");
  });

  it("a task never dispatched is a new task; a version-2 task is left as it is", () => {
    const fresh: TaskStateV1 = { id: "n", status: "PENDING", attempt: 0, retries: 0, blockers: 2, dispatchedAttempt: 0 };
    expect(migrateTaskV1(fresh, CREATED)).toEqual({ id: "n", status: "PENDING", blockers: 2, attempts: 0, retries: 0 });
    const v2: TaskState = { id: "n", status: "PENDING", blockers: 2, attempts: 0, retries: 0 };
    const journal = { version: 2, tasks: [v2] };
    expect(migrateJournal(journal)).toBe(journal);
  });
});

describe("the version-1 run of test/fixtures/journal-v1", () => {
  it("reads as a version-2 stored run, each task where today's App would hold it", () => {
    const raw = fixture("plain");
    expect(raw.version).toBe(1);
    const stored = storedRunSchema.parse(migrateStoredRun(raw));
    expect(stored.version).toBe(2);
    expect(stored.journal.version).toBe(2);
    const t = (id: string) => stored.journal.tasks.find((x) => x.id === id)!;
    for (const id of ["a", "b"]) expect(t(id)).toMatchObject({ status: "MERGED", attempts: 1, attempt: { mergeSha: expect.any(String) } });
    expect(t("c")).toMatchObject({
      status: "RUNNING",
      attempts: 1,
      attempt: { branch: expect.stringMatching(/\/c\/1$/), steering: [{ id: 1, message: "Keep the change small." }] },
    });
    expect(t("c").attempt!.revision).toMatchObject({ iteration: 0, workflowRunId: expect.any(Number), startedAt: expect.any(String) });
    expect(t("d")).toMatchObject({
      status: "RUNNING",
      attempts: 2,
      retries: 1,
      lastError: "tests fail",
      attempt: { branch: expect.stringMatching(/\/d\/2$/) },
    });
    expect(t("e")).toMatchObject({
      status: "RUNNING",
      attempts: 1,
      attempt: { prNumber: 2, recordSha: expect.any(String), reviewIterations: 1, answered: [expect.any(Number)], feedback: [] },
    });
    expect(t("e").attempt!.revision).toMatchObject({ iteration: 1, priorRunId: expect.any(Number) });
    for (const id of ["f", "r"]) expect(t(id)).toEqual({ id, status: "PENDING", blockers: expect.any(Number), attempts: 0, retries: 0 });
    // Nothing else of the stored run changed: its config is the one stored, read with today's defaults
    // for settings added since (a setting the stored config names keeps its value).
    const { journal: _v1j, version: _v1, ...rest } = raw;
    const { journal: _v2j, version: _v2, ...after } = stored;
    expect(after).toEqual({ ...rest, config: forgeConfigSchema.parse(rest.config) });
    expect(after.config).toMatchObject(rest.config as Record<string, unknown>);
    expect(stored.config.retry_policy).toEqual(DEFAULT_RETRY_POLICY);
  });

  it("a big run's parts written under version 1 are read as version 2, beside journal.json's live tasks", async () => {
    const stored = fixture("plain") as { journal: { tasks: unknown[]; plan: { nodes: unknown[] }; createdAt: string } };
    const v2 = journalSchema.parse(migrateJournal(stored.journal));
    // A version-1 part, as that App wrote it: its nodes, its tasks as they were, no version.
    const part = (from: number, to: number) =>
      JSON.stringify({ nodes: stored.journal.plan.nodes.slice(from, to), tasks: stored.journal.tasks.slice(from, to), checkRuns: {} }) +
      "\n";
    const files = new Map([part(0, 4), part(4, 7)].map((c) => [partPath(sha256(c)), c]));
    const hashes = [...files.keys()].map((p) => p.slice("parts/".length, -".json".length));
    const joined = await joinRun(
      { nodes: [v2.plan.nodes[2]!], tasks: [v2.tasks[2]!], checkRuns: {} },
      { nodes: 7, partSize: 4, parts: hashes, layers: [], live: [2] },
      async (hash) => files.get(partPath(hash)) ?? null,
    );
    expect(joined.whole.tasks).toEqual(v2.tasks);
    // Written again once a task changed, the parts are version 2's.
    const changed = { ...joined.whole, tasks: joined.whole.tasks.map((t, i) => (i === 0 ? { ...t, spentUsd: 0.5 } : t)) };
    const next = splitRun(changed, joined.base, { partSize: 4, liveMax: 0 });
    expect(next.write.length).toBeGreaterThan(0);
    for (const w of next.write) expect(JSON.parse(w.content)).toMatchObject({ version: 2 });
  });
});
