/**
 * The journal's freshness anchor (src/app/journal-anchor.ts) and the store's refusal of an older
 * journal: by the process that saw a newer one, and, read cold, by the App's anchor.
 */
import { describe, expect, it } from "vitest";
import {
  ANCHOR_CHECK_NAME,
  ANCHOR_EVERY,
  anchorDue,
  anchorExternalId,
  anchorSummary,
  holdOf,
  parseAnchor,
  staleness,
  type Anchor,
} from "../../src/app/journal-anchor.js";
import { journalKeyFromSecret, sealJournal } from "../../src/app/journal-seal.js";
import { JournalRefusedError, RunStore, type StoredRun } from "../../src/app/run-store.js";
import type { CheckRunFields, GitHubPort } from "../../src/github/port.js";
import { JOURNAL_KEY, REPOSITORY_ID, RUN_ID, sealed, storedRun } from "./handlers/fixtures.js";

const HERE = { repositoryId: REPOSITORY_ID, runId: RUN_ID };
const A: Anchor = { seq: 12, status: "cancelled", blobSha: "b".repeat(40), commitSha: "c".repeat(40) };
const START = "5".repeat(40);

describe("the anchor's text", () => {
  it("reads back what was written, and nothing another key, repository or run wrote, or a changed figure", () => {
    const text = anchorSummary(JOURNAL_KEY, HERE, A);
    expect(parseAnchor(JOURNAL_KEY, HERE, text)).toEqual(A);
    const other = journalKeyFromSecret("another key of at least thirty-two characters!");
    expect(parseAnchor(other, HERE, text)).toBeNull();
    expect(parseAnchor(JOURNAL_KEY, { ...HERE, repositoryId: 78 }, text)).toBeNull();
    expect(parseAnchor(JOURNAL_KEY, { ...HERE, runId: "other-1234567" }, text)).toBeNull();
    expect(parseAnchor(JOURNAL_KEY, HERE, text.replace('"seq":12', '"seq":2'))).toBeNull();
    expect(parseAnchor(JOURNAL_KEY, HERE, "no marker")).toBeNull();
  });

  it("an older journal is stale; a newer one, or the same, is not", () => {
    expect(staleness({ seq: 11, status: "running" }, { seq: 12, status: "running" })).toMatch(/older than the newest journal/);
    expect(staleness({ seq: 12, status: "running" }, { seq: 12, status: "cancelled" })).toMatch(/recorded this run as cancelled/);
    expect(staleness({ seq: 12, status: "cancelled" }, { seq: 12, status: "cancelled" })).toBeUndefined();
    expect(staleness({ seq: 30, status: "running" }, { seq: 12, status: "running" })).toBeUndefined();
  });

  it("is due at a status change, a change of what holds the run, and every ANCHOR_EVERY events — not at every write", () => {
    const running = (seq: number, hold = "") => ({ seq, status: "running", hold });
    expect(anchorDue(running(3), undefined)).toBe(false);
    expect(anchorDue({ ...running(3), status: "cancelled" }, undefined)).toBe(true);
    expect(anchorDue(running(3, holdOf({ manual: false, budget: true, changeRequests: [] })), undefined)).toBe(true);
    expect(anchorDue(running(ANCHOR_EVERY), undefined)).toBe(true);
    expect(anchorDue(running(50), running(45))).toBe(false);
    expect(anchorDue(running(50, "p"), running(45))).toBe(true);
    expect(anchorDue(running(51), running(50, "p"))).toBe(true);
    expect(anchorDue(running(45 + ANCHOR_EVERY), running(45))).toBe(true);
    expect(anchorDue({ ...running(46), status: "completed" }, running(45))).toBe(true);
  });
});

/** A port holding one journal (whatever `current` says) and the check runs made on it. */
function port(current: () => string, checks: { id: number; externalId: string; summary: string; headSha: string }[] = []) {
  const made: CheckRunFields[] = [];
  const p = {
    repositoryId: async () => REPOSITORY_ID,
    readFile: async () => ({ content: current(), blobSha: `blob-${current().length}` }),
    writeFile: async () => ({ blobSha: "blob-w", commitSha: "d".repeat(40) }),
    listCheckRuns: async (headSha: string, name: string) =>
      checks
        .filter((c) => c.headSha === headSha && name === ANCHOR_CHECK_NAME)
        .map(({ id, externalId, summary }) => ({ id, externalId, summary })),
    createCheckRun: async (f: CheckRunFields) => {
      made.push(f);
      return 9;
    },
    updateCheckRun: async () => undefined,
  } as unknown as GitHubPort;
  return { port: p, made };
}

const at = (seq: number, status: "running" | "cancelled" = "running"): StoredRun => {
  const s = storedRun({ a: [] }, { facts: { anchorSha: START } });
  return { ...s, journal: { ...s.journal, seq, status } };
};

describe("the store refuses an older journal", () => {
  it("the process that read a newer one refuses an older one put back", async () => {
    let text = sealed(at(10));
    const { port: p } = port(() => text);
    const store = new RunStore(p, JOURNAL_KEY);
    expect((await store.load(RUN_ID))?.state.journal.seq).toBe(10);
    text = sealed(at(7));
    await expect(store.load(RUN_ID)).rejects.toThrow(/older than the newest journal Forge recorded/);
  });

  it("read cold, a running journal older than the anchor is refused, naming the anchored commit; an anchor not sealed for this run counts for nothing", async () => {
    const summary = anchorSummary(JOURNAL_KEY, HERE, A);
    const forged = anchorSummary(journalKeyFromSecret("another key of at least thirty-two characters!"), HERE, { ...A, seq: 99 });
    const checks = [
      { id: 1, externalId: anchorExternalId(RUN_ID), summary, headSha: START },
      { id: 2, externalId: anchorExternalId(RUN_ID), summary: forged, headSha: START },
    ];
    const { port: p } = port(() => sealed(at(10)), checks);
    const refused = await new RunStore(p, JOURNAL_KEY).load(RUN_ID).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(JournalRefusedError);
    expect((refused as JournalRefusedError).lastGood).toBe(A.commitSha);
    // The anchored journal itself, and a newer one, load.
    const { port: q } = port(() => sealed(at(12, "cancelled")), checks);
    expect((await new RunStore(q, JOURNAL_KEY).load(RUN_ID))?.state.journal.status).toBe("cancelled");
    const { port: r } = port(
      () => sealed(at(20)),
      [{ ...checks[0]!, summary: anchorSummary(JOURNAL_KEY, HERE, { ...A, status: "running" }) }],
    );
    expect((await new RunStore(r, JOURNAL_KEY).load(RUN_ID))?.state.journal.seq).toBe(20);
  });

  it("a newer journal written (and anchored) by another process between the journal's read and the anchor's is taken, not refused", async () => {
    const checks = [
      {
        id: 1,
        externalId: anchorExternalId(RUN_ID),
        summary: anchorSummary(JOURNAL_KEY, HERE, { ...A, status: "running" }),
        headSha: START,
      },
    ];
    let reads = 0;
    const texts = [sealed(at(10)), sealed(at(12))];
    const { port: p } = port(() => texts[Math.min(reads++, 1)]!, checks);
    expect((await new RunStore(p, JOURNAL_KEY).load(RUN_ID))?.state.journal.seq).toBe(12);
  });

  it("a write that cancels the run anchors it on the run's start commit; a write that is not due does not", async () => {
    const text = sealed(at(10));
    const { port: p, made } = port(() => text);
    const store = new RunStore(p, JOURNAL_KEY);
    const loaded = (await store.load(RUN_ID))!;
    const next = await store.save(loaded, at(11), "forge: tick");
    expect(made).toEqual([]);
    await store.save(next, at(12, "cancelled"), "forge: cancel");
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ name: ANCHOR_CHECK_NAME, headSha: START, externalId: anchorExternalId(RUN_ID), conclusion: "neutral" });
    expect(parseAnchor(JOURNAL_KEY, HERE, made[0]!.summary)).toMatchObject({ seq: 12, status: "cancelled", commitSha: "d".repeat(40) });
  });

  it("two processes anchoring the same run update the one check run made when the run started, never a second", async () => {
    const text = sealed({ ...at(10), facts: { ...at(10).facts, anchorCheckRunId: 77 } });
    const updated: number[] = [];
    const { port: p, made } = port(() => text);
    (p as unknown as { updateCheckRun: (id: number) => Promise<void> }).updateCheckRun = async (id) => void updated.push(id);
    for (const store of [new RunStore(p, JOURNAL_KEY), new RunStore(p, JOURNAL_KEY)]) {
      const loaded = (await store.load(RUN_ID))!;
      await store.save(loaded, { ...at(12, "cancelled"), facts: loaded.state.facts }, "forge: cancel");
    }
    expect(made).toEqual([]);
    expect(updated).toEqual([77, 77]);
  });

  it("a journal sealed for another run of this repository is refused", async () => {
    const { port: p } = port(() => sealJournal(JOURNAL_KEY, at(10), { ...HERE, runId: "other-1234567" }));
    await expect(new RunStore(p, JOURNAL_KEY).load(RUN_ID)).rejects.toThrow(/sealed for another run/);
  });
});
