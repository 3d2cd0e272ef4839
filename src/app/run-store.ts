/**
 * Where a run's state lives: `journal.json` on the run's state branch (`forge/<runId>/_state`),
 * written with compare-and-swap through the contents API (the write names the blob sha it read;
 * GitHub answers 409 when the file moved), and the event log in sealed NDJSON segments beside it.
 * The open segment travels inside `journal.json`, so one write (one API call) persists a decision
 * and the bytes written stay bounded however long the run is.
 */
import { z } from "zod";
import { JOURNAL_VERSION, journalSchema, type Journal } from "../core/journal.js";
import { migrateStoredRun } from "../core/journal-migration.js";
import { BRANCH_PREFIX, eventSegmentFile, JOURNAL_FILE, parseStateBranch, stateBranch } from "../core/layout.js";
import { forgeConfigSchema, type ForgeConfig } from "../core/schemas/config.js";
import { forgeEventSchema, type ForgeEvent } from "../core/schemas/events.js";
import { outboxProblems } from "../core/outbox-check.js";
import { formatProblem, zodProblems } from "../core/problems.js";
import { ConflictError, GitHubError, type GitHubPort } from "../github/port.js";
import { anchorDue, holdOf, openAnchor, readAnchor, staleness, writeAnchor, type Anchor } from "./journal-anchor.js";
import { sealJournal, unsealJournal, type JournalKey, type SealBinding } from "./journal-seal.js";
import {
  isSplit,
  joinRun,
  journalSplitSchema,
  JournalPartsError,
  partPath,
  rememberWritten,
  splitRun,
  SPLIT_AT,
  type JournalLayer,
  type JournalPart,
  type PartsBase,
} from "../core/journal-parts.js";

/** Events per sealed segment. */
export const SEGMENT_SIZE = 200;

/** Facts only the adapter needs: ids of the GitHub objects Forge maintains for the run. */
export const runFactsSchema = z
  .object({
    trackerIssue: z.number().int().optional().describe("The run tracker issue."),
    trackerUpdatedAt: z.string().optional().describe("When the tracker body was last written."),
    trackerAttention: z
      .string()
      .optional()
      .describe("Digest of what waited for a person when the tracker was last written: a change is shown at once."),
    checkRuns: z.record(z.string(), z.number().int()).default({}).describe("Check run id per `<taskId>:<attempt>`."),
    finalPr: z.number().int().optional().describe("The run's final PR (integration → base)."),
    finalAutoMerge: z
      .object({
        pr: z.number().int(),
        outcome: z.enum(["enabled", "merged", "queued", "refused", "closed"]),
      })
      .strict()
      .optional()
      .describe(
        "What became of the final PR under `final_pr.auto_merge` (its number): set to auto-merge, merged or enqueued by Forge, refused by GitHub (said on the PR), or merged or closed by a person. Once set, the reconciler stops looking at it.",
      ),
    mergeGroups: z
      .record(z.string(), z.object({ head: z.string(), group: z.string() }).strict())
      .optional()
      .describe(
        "The merge group each task's verified head was last seen tested in, by `<taskId>:<attempt>`: a merge that finds its pull request dropped from the merge queue reads that group's checks.",
      ),
    planSha: z.string().optional().describe("Commit of the default branch the plan was read from."),
    stateBranchWarning: z
      .string()
      .optional()
      .describe("Set at run start when no ruleset keeps others from creating, updating or deleting the state branch: what is missing."),
    anchorSha: z
      .string()
      .optional()
      .describe("The commit the run started from, where the App keeps the journal's freshness anchor (docs/formats.md#journal-anchor)."),
    issues: z
      .object({
        parent: z.number().int().optional().describe("The issue the plan was built from: it carries the run's summary."),
        tasks: z.record(z.string(), z.number().int()).describe("The issue of each task that names one (`issue:`)."),
        comments: z.record(z.string(), z.number().int()).default({}).describe("Per issue number, Forge's one comment on it."),
        shown: z.record(z.string(), z.string()).default({}).describe("Per issue number, a digest of what its comment last said."),
      })
      .strict()
      .optional()
      .describe("The issues the run shows on (config `issue_sync`, docs/formats.md#plans-from-an-issue-tree)."),
    anchorCheckRunId: z
      .number()
      .int()
      .optional()
      .describe("The anchor's check run, made when the run started: every process updates this one (docs/formats.md#journal-anchor)."),
  })
  .strict();
export type RunFacts = z.infer<typeof runFactsSchema>;

/**
 * Who carries out a pending effect. Several App processes (replicas, or a restarted App) share a
 * run's journal; the compare-and-swap write that put an effect in the outbox made its writer the
 * owner, every later write by the owner extends the lease, and another process takes the effect
 * over — with a compare-and-swap write of its own — only once the lease has run out.
 */
export const effectLeaseSchema = z
  .object({
    owner: z.string().min(1).describe("Replica id of the App process that owns the effect."),
    until: z.string().describe("ISO time the lease runs out."),
  })
  .strict();

export const storedRunSchema = z
  .object({
    version: z
      .literal(JOURNAL_VERSION)
      .describe("Format version of the stored run; it moves with the journal's (../core/journal-migration.ts reads older ones)."),
    journal: journalSchema,
    config: forgeConfigSchema.describe("The config pinned when the run started."),
    facts: runFactsSchema,
    events: z
      .object({
        segment: z.number().int().min(1).describe("Number of the open segment."),
        tail: z.array(z.record(z.string(), z.unknown())).describe("Events of the open segment, oldest first."),
      })
      .strict(),
    leases: z
      .record(z.string(), effectLeaseSchema)
      .default({})
      .describe("Per pending effect key: the App process that may carry it out, until when. Taken over only once it has run out."),
    split: journalSplitSchema.optional(),
  })
  .strict();
export type EffectLease = z.infer<typeof effectLeaseSchema>;
/** A stored run as the App holds it: whole (a split journal is joined when read, split when written). */
export type StoredRun = Omit<z.infer<typeof storedRunSchema>, "events" | "split"> & { events: { segment: number; tail: ForgeEvent[] } };

export interface Loaded {
  state: StoredRun;
  /** Blob sha of journal.json as read: the compare-and-swap token of the next write. */
  blobSha: string;
  /** The state branch's commit that holds this journal, when this process wrote it (a deleted branch is restored there). */
  commitSha?: string;
  /** A split journal's parts as stored (docs/formats.md#journal-parts); undefined while it travels whole. */
  parts?: PartsBase;
}

export interface RunStoreOptions {
  /** Nodes past which a run's journal is kept in parts (default `SPLIT_AT`). */
  splitAt?: number;
  partSize?: number;
  liveMax?: number;
}

/** The run's state branch is gone (deleted by hand): nothing can be written until it is restored. */
export class StateBranchMissingError extends Error {
  constructor(readonly runId: string) {
    super(`the state branch ${stateBranch(runId)} does not exist`);
    this.name = "StateBranchMissingError";
  }
}

export class RunStoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RunStoreError";
  }
}

/**
 * A journal the App did not write, or one asking for what the App would never do: the run is frozen
 * (nothing of its outbox runs) until a person puts the state branch back at a journal the App wrote.
 */
export class JournalRefusedError extends Error {
  constructor(
    readonly runId: string,
    readonly reason: string,
    /** The refused journal's blob, so the refusal is told once per forged journal. */
    readonly blobSha: string,
    /** The state branch's commit holding the newest journal the App recorded, when the refused one is older. */
    readonly lastGood?: string,
  ) {
    super(`${stateBranch(runId)}:${JOURNAL_FILE} was refused: ${reason}`);
    this.name = "JournalRefusedError";
  }
}

export class RunStore {
  /** Parts already read or written: content-addressed, so never stale. */
  readonly #parts = new Map<string, JournalPart | JournalLayer>();
  /** Per run, the newest journal this process read or wrote (its seq and status): an older one is refused. */
  readonly #newest = new Map<string, { seq: number; status: string }>();
  /** Per run, the anchor as last read or written (journal-anchor.ts), and its check run. */
  readonly #anchors = new Map<string, { seq: number; status: string; hold: string; checkRunId?: number }>();

  constructor(
    private readonly port: GitHubPort,
    private readonly key: JournalKey,
    private readonly options: RunStoreOptions = {},
  ) {}

  async load(runId: string): Promise<Loaded | null> {
    for (let attempt = 0; ; attempt++) {
      const loaded = await this.#read(runId, stateBranch(runId), true);
      if (!loaded) return null;
      try {
        await this.#fresh(runId, loaded);
        return loaded;
      } catch (e) {
        // Another process may have written (and anchored) a newer journal between the two reads:
        // an older journal is refused only when the branch still holds it when read again.
        if (attempt > 0 || !(e instanceof JournalRefusedError)) throw e;
      }
    }
  }

  async #binding(runId: string): Promise<SealBinding> {
    return { repositoryId: await this.port.repositoryId(), runId };
  }

  /**
   * Refuse a journal older than the newest this process has seen of the run, or — read cold, for a
   * run that is not over — than the App's anchor (journal-anchor.ts): a rolled-back journal.
   */
  async #fresh(runId: string, loaded: Loaded): Promise<void> {
    const j = loaded.state.journal;
    const seen = this.#newest.get(runId);
    const anchorSha = loaded.state.facts.anchorSha;
    if (!seen && anchorSha && j.status === "running") {
      const { anchor, checkRunId } = await readAnchor(this.port, this.key, await this.#binding(runId), anchorSha);
      if (anchor) {
        // What held the run when it was anchored is not in the anchor: taken as the journal's.
        const hold = holdOf(j.pause);
        this.#anchors.set(runId, { seq: anchor.seq, status: anchor.status, hold, ...(checkRunId !== undefined ? { checkRunId } : {}) });
        const why = staleness(j, anchor);
        if (why) throw new JournalRefusedError(runId, why, loaded.blobSha, anchor.commitSha);
      }
    } else if (seen) {
      const why = staleness(j, seen);
      if (why) throw new JournalRefusedError(runId, why, loaded.blobSha);
    }
    this.#saw(runId, j);
  }

  #saw(runId: string, j: { seq: number; status: string }): void {
    const seen = this.#newest.get(runId);
    if (!seen || j.seq > seen.seq || (j.seq === seen.seq && j.status !== "running"))
      this.#newest.set(runId, { seq: j.seq, status: j.status });
  }

  /** After a write: record it, and anchor it when due (a failed anchor is tried again at the next write). */
  async #recorded(saved: Loaded): Promise<void> {
    const j = saved.state.journal;
    this.#saw(j.runId, j);
    const anchorSha = saved.state.facts.anchorSha;
    const last = this.#anchors.get(j.runId);
    const hold = holdOf(j.pause);
    if (!anchorSha || !saved.commitSha || !anchorDue({ seq: j.seq, status: j.status, hold }, last)) return;
    const anchor: Anchor = { seq: j.seq, status: j.status, blobSha: saved.blobSha, commitSha: saved.commitSha };
    try {
      const checkRunId = last?.checkRunId ?? saved.state.facts.anchorCheckRunId;
      const id = await writeAnchor(this.port, this.key, await this.#binding(j.runId), anchorSha, anchor, checkRunId);
      this.#anchors.set(j.runId, { seq: j.seq, status: j.status, hold, checkRunId: id });
    } catch {
      // The anchor lags behind: older journals stay refusable only back to it until the next one.
    }
  }

  /**
   * The stored run of `journal.json` at `ref`, its parts joined: refused (`JournalRefusedError`) when
   * the App did not write it, a part does not match its hash, or it asks for what the App would never do.
   */
  async #read(runId: string, ref: string, strict: boolean): Promise<Loaded | null> {
    const file = await this.port.readFile(JOURNAL_FILE, ref);
    if (!file) return null;
    const unsealed = unsealJournal(this.key, file.content, await this.#binding(runId));
    if (!unsealed.ok) {
      if (!strict) return null;
      throw new JournalRefusedError(runId, unsealed.reason, file.blobSha);
    }
    // A journal an earlier Forge wrote is read as this one's (../core/journal-migration.ts); the next write is of this version.
    const parsed = storedRunSchema.safeParse(migrateStoredRun(unsealed.value));
    if (!parsed.success) {
      if (!strict) return null;
      throw new RunStoreError(
        `${stateBranch(runId)}:${JOURNAL_FILE} is invalid: ${formatProblem(zodProblems(parsed.error, JOURNAL_FILE)[0]!)}`,
      );
    }
    const { split, ...stored } = parsed.data;
    let state = stored as StoredRun;
    let parts: PartsBase | undefined;
    if (split) {
      try {
        const joined = await joinRun(
          { nodes: state.journal.plan.nodes, tasks: state.journal.tasks, checkRuns: state.facts.checkRuns },
          split,
          async (hash) => (await this.port.readFile(partPath(hash), ref))?.content ?? null,
          this.#parts,
        );
        const { nodes, tasks, checkRuns } = joined.whole;
        state = {
          ...state,
          journal: { ...state.journal, plan: { ...state.journal.plan, nodes }, tasks },
          facts: { ...state.facts, checkRuns },
        };
        parts = joined.base;
      } catch (e) {
        if (!(e instanceof JournalPartsError)) throw e;
        if (!strict) return null;
        throw new JournalRefusedError(runId, e.message, file.blobSha);
      }
    }
    const problems = outboxProblems(state.journal, state.config);
    if (state.journal.runId !== runId) problems.unshift(`it is the journal of run ${state.journal.runId}`);
    if (problems.length) {
      if (!strict) return null;
      throw new JournalRefusedError(runId, `it asks for what Forge would never do: ${problems.slice(0, 5).join("; ")}`, file.blobSha);
    }
    return { state, blobSha: file.blobSha, ...(parts ? { parts } : {}) };
  }

  /**
   * The newest commit of the run's state branch holding a journal the App wrote (its seal verifies),
   * looking back at most `limit` commits: where a person resets the branch to recover a refused journal.
   */
  async lastSealed(runId: string, limit = 30): Promise<string | null> {
    let sha = await this.port.branchHead(stateBranch(runId));
    for (let i = 0; sha && i < limit; i++) {
      const file = await this.port.readFile(JOURNAL_FILE, sha);
      if (file && unsealJournal(this.key, file.content, await this.#binding(runId)).ok) return sha;
      sha = (await this.port.commit(sha)).parents[0] ?? null;
    }
    return null;
  }

  /** Create the state branch at `fromSha` and write the first journal. `ConflictError` when the run exists. */
  async create(state: StoredRun, fromSha: string): Promise<Loaded> {
    const branch = stateBranch(state.journal.runId);
    await this.port.createBranch(branch, fromSha);
    const anchorSha = state.facts.anchorSha ?? fromSha;
    // Without it the first anchor makes one (and replicas anchoring at once may each make their own).
    const anchorCheckRunId = await openAnchor(this.port, await this.#binding(state.journal.runId), anchorSha).catch(() => undefined);
    const first = { ...state, facts: { ...state.facts, anchorSha, ...(anchorCheckRunId !== undefined ? { anchorCheckRunId } : {}) } };
    const { text, parts } = await this.#written(branch, first, undefined);
    const { blobSha, commitSha } = await this.port.writeFile(branch, JOURNAL_FILE, text, `forge: start run ${state.journal.runId}`);
    const created = { state: first, blobSha, commitSha, ...(parts ? { parts } : {}) };
    await this.#recorded(created);
    return created;
  }

  /**
   * Persist `next` over `loaded` — compare-and-swap: `ConflictError` when another writer moved the
   * journal since it was read (re-read, re-decide). Full segments are sealed into their own files first.
   */
  async save(loaded: Loaded, next: StoredRun, message: string): Promise<Loaded> {
    const branch = stateBranch(next.journal.runId);
    let state = next;
    // Only events already persisted are sealed: they are the same for every writer, whereas the
    // events of this decision may lose the compare-and-swap (another writer would then seal its own
    // events into the same segment file, which is written once).
    let persisted = loaded.state.events.segment === next.events.segment ? loaded.state.events.tail.length : 0;
    while (persisted >= SEGMENT_SIZE && state.events.tail.length >= SEGMENT_SIZE) {
      const sealed = state.events.tail.slice(0, SEGMENT_SIZE);
      await this.sealSegment(branch, state.events.segment, sealed);
      state = { ...state, events: { segment: state.events.segment + 1, tail: state.events.tail.slice(SEGMENT_SIZE) } };
      persisted -= SEGMENT_SIZE;
    }
    try {
      const { text, parts } = await this.#written(branch, state, loaded.parts);
      const { blobSha, commitSha } = await this.port.writeFile(branch, JOURNAL_FILE, text, message, loaded.blobSha);
      const saved = { state, blobSha, commitSha, ...(parts ? { parts } : {}) };
      await this.#recorded(saved);
      return saved;
    } catch (e) {
      if (
        !(e instanceof ConflictError) &&
        e instanceof GitHubError &&
        (e.status === 404 || e.status === 422) &&
        !(await this.port.branchHead(branch))
      ) {
        throw new StateBranchMissingError(next.journal.runId);
      }
      throw e;
    }
  }

  /**
   * Put a deleted state branch back at `commitSha` (its last commit: GitHub keeps a deleted branch's
   * commits). Only a run that is not over is restored, and only from a commit holding its journal.
   * Returns the journal restored, or null when there was nothing to restore.
   */
  async restore(runId: string, commitSha: string): Promise<Loaded | null> {
    // Only a journal the App wrote is put back.
    const read = await this.#read(runId, commitSha, false);
    if (!read) return null;
    if (read.state.journal.status === "completed" || read.state.journal.status === "cancelled") return null;
    if (!(await this.port.createBranch(stateBranch(runId), commitSha))) return null;
    return { ...read, commitSha };
  }

  /**
   * `journal.json`'s text for `state` — sealed with the App's key — after writing the parts it needs
   * when the run is big enough to be split (each a new file, named by its hash; one already there is
   * the same content).
   */
  async #written(branch: string, state: StoredRun, base: PartsBase | undefined): Promise<{ text: string; parts?: PartsBase }> {
    const binding = await this.#binding(state.journal.runId);
    if (!isSplit(state.journal.plan.nodes.length, this.options.splitAt ?? SPLIT_AT)) return { text: sealJournal(this.key, state, binding) };
    const s = splitRun(
      { nodes: state.journal.plan.nodes, tasks: state.journal.tasks, checkRuns: state.facts.checkRuns },
      base,
      this.options,
    );
    // One at a time: concurrent writes to one branch through the contents API can refuse each other.
    for (const part of s.write) {
      try {
        await this.port.writeFile(branch, part.path, part.content, `forge: journal part ${part.path.slice(6, 18)}`);
      } catch (e) {
        if (!(e instanceof ConflictError)) throw e;
      }
    }
    rememberWritten(this.#parts, s.write);
    const onDisk = {
      ...state,
      journal: { ...state.journal, plan: { ...state.journal.plan, nodes: s.live.nodes }, tasks: s.live.tasks },
      facts: { ...state.facts, checkRuns: s.live.checkRuns },
      split: s.split,
    };
    return { text: sealJournal(this.key, onDisk, binding), parts: s.base };
  }

  /** A sealed segment never changes, so a second writer finding it already there is fine. */
  private async sealSegment(branch: string, segment: number, events: ForgeEvent[]): Promise<void> {
    const path = eventSegmentFile(segment);
    try {
      await this.port.writeFile(
        branch,
        path,
        events.map((e) => JSON.stringify(e)).join("\n") + "\n",
        `forge: seal event segment ${segment}`,
      );
    } catch (e) {
      if (!(e instanceof ConflictError)) throw e;
    }
  }

  /** Ids of runs with a state branch. */
  async listRuns(): Promise<string[]> {
    const branches = await this.port.listBranches(BRANCH_PREFIX);
    return branches.map((b) => parseStateBranch(b.name)).filter((id): id is string => !!id);
  }
}

export function newStoredRun(journal: Journal, config: ForgeConfig, facts: Partial<RunFacts>, events: ForgeEvent[]): StoredRun {
  return {
    version: JOURNAL_VERSION,
    journal,
    config,
    facts: { checkRuns: {}, ...facts },
    events: { segment: 1, tail: events },
    leases: {},
  };
}

/**
 * The run's whole event log: its sealed segments (read from the state branch, one file each) and the
 * open segment `tail`. A line that is not an event is skipped: the log is read for figures, and
 * the journal's seal covers only the open segment.
 */
export async function readRunEvents(
  port: GitHubPort,
  runId: string,
  tail: readonly ForgeEvent[],
  ref = stateBranch(runId),
): Promise<ForgeEvent[]> {
  const firstOpen = tail[0]?.seq;
  const sealed = firstOpen !== undefined ? Math.floor((firstOpen - 1) / SEGMENT_SIZE) : 0;
  const out: ForgeEvent[] = [];
  for (let n = 1; n <= sealed; n++) {
    const file = await port.readFile(eventSegmentFile(n), ref);
    for (const line of (file?.content ?? "").split("\n")) {
      if (!line.trim()) continue;
      try {
        const e = forgeEventSchema.safeParse(JSON.parse(line));
        if (e.success) out.push(e.data as ForgeEvent);
      } catch {
        // Not JSON: skipped.
      }
    }
  }
  return [...out, ...tail];
}
