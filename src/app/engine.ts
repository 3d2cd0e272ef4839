/**
 * The executor loop of one repository, on GitHub: facts in → `decide` → persist the journal
 * (compare-and-swap) → carry out the outbox → acknowledge. One writer per run inside this process
 * (a promise chain per run); across processes the compare-and-swap decides, and the loser re-reads
 * and re-decides with the same facts.
 */
import { decide, startRun, type Decision, type NewRun } from "../core/decide.js";
import type { Effect } from "../core/effects.js";
import type { LeafInput } from "../core/inputs.js";
import type { ForgeConfig } from "../core/schemas/config.js";
import type { ForgeEvent } from "../core/schemas/events.js";
import { ConflictError, type GitHubPort } from "../github/port.js";
import { runEffect, type EffectOutcome } from "./effects.js";
import { isFree, owns, withLeases, type LeaseHolder } from "./leases.js";
import { withContainment } from "./normalize.js";
import { mergePatches, sameEffect, withFacts, type FactsPatch, type Round } from "./rounds.js";
import { randomUUID } from "node:crypto";
import type { JournalKey } from "./journal-seal.js";
import {
  JournalRefusedError,
  newStoredRun,
  RunStore,
  StateBranchMissingError,
  type Loaded,
  type RunFacts,
  type StoredRun,
} from "./run-store.js";

export interface Logger {
  info(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
  error(obj: Record<string, unknown>, msg: string): void;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

export interface EngineOptions {
  port: GitHubPort;
  /** The key that seals the journals this App writes (src/app/journal-seal.ts). */
  journalKey: JournalKey;
  /** Called once per refused journal (one the App did not write, or asking for what it never would). */
  onRefused?: (runId: string, error: JournalRefusedError) => Promise<void>;
  log?: Logger;
  now?: () => number;
  /** Called after every decision that was persisted (tests and the demo's live view). */
  onDecision?: (runId: string, d: Decision) => void;
  /** Called after a deleted state branch was put back (to tell the people following the run). */
  onRestored?: (runId: string, loaded: Loaded, actor?: string) => Promise<void>;
  /**
   * This process's name among the App's replicas (default: a random one). A process restarted under
   * the same name carries out its predecessor's effects at once; under a new name, once their
   * leases run out. Two live processes must never share a name.
   */
  replicaId?: string;
  /** How long an effect stays its owner's after the owner's last journal write (default 20 s). */
  leaseMs?: number;
}

/** Inputs waiting for their run's turn, and the callers waiting on them. */
interface Batch {
  inputs: LeafInput[];
  /** In the order their inputs were added: `count` inputs each. */
  waiters: { count: number; resolve: (r: ApplyResult) => void; reject: (e: unknown) => void }[];
}

export interface ApplyResult {
  decisions: Decision[];
  /** Rejections of commands, for replying to the person. */
  rejections: Decision["rejections"];
}

const MAX_CAS_ATTEMPTS = 6;
const MAX_ROUNDS = 20;
export const DEFAULT_LEASE_MS = 20_000;

export class Engine {
  readonly store: RunStore;
  readonly #port: GitHubPort;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #onDecision: EngineOptions["onDecision"];
  readonly #onRestored: EngineOptions["onRestored"];
  readonly #onRefused: EngineOptions["onRefused"];
  /** Refused journals already told (by blob). */
  readonly #refusedTold = new Set<string>();
  /** The last journal read or written per run, so a webhook usually costs no read. */
  readonly #cache = new Map<string, Loaded>();
  readonly #chains = new Map<string, Promise<unknown>>();
  /** Per run, the batch of inputs still open to more (its turn has not come yet). */
  readonly #batches = new Map<string, Batch>();
  /** Effect keys decided in this process (not replayed from a stored outbox). */
  readonly #fresh = new Set<string>();
  /** Facts learned from effects and not yet persisted (they ride along with the next write). */
  readonly #dirty = new Set<string>();
  /** A flush scheduled for deferred effects (the tracker's debounce), per run. */
  readonly #timers = new Map<string, NodeJS.Timeout>();
  readonly replicaId: string;
  readonly #leaseMs: number;
  /** Effect leases taken over from other processes and lost compare-and-swap writes (replica figures). */
  readonly stats = { takenOver: 0, casLost: 0 };

  constructor(options: EngineOptions) {
    this.#port = options.port;
    this.store = new RunStore(options.port, options.journalKey);
    this.#onRefused = options.onRefused;
    this.#log = options.log ?? silentLogger;
    this.#now = options.now ?? Date.now;
    this.#onDecision = options.onDecision;
    this.#onRestored = options.onRestored;
    this.replicaId = options.replicaId ?? randomUUID();
    this.#leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  }

  /** This process as a lease holder, now. */
  #holder(): LeaseHolder {
    return { replicaId: this.replicaId, leaseMs: this.#leaseMs, now: this.#now() };
  }

  /** `next` with its outbox's leases (see `withLeases`): this process's decided or claimed effects are its own. */
  #leased(next: StoredRun, decided: readonly Effect[], claim: readonly string[] = []): StoredRun {
    return withLeases(next, decided, claim, this.#holder());
  }

  /** Serialise work per run inside this process. */
  #serial<T>(runId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#chains.get(runId) ?? Promise.resolve();
    const next = previous.then(work, work);
    this.#chains.set(
      runId,
      next.catch(() => undefined),
    );
    return next;
  }

  async #load(runId: string, fresh = false): Promise<Loaded | null> {
    if (!fresh) {
      const cached = this.#cache.get(runId);
      if (cached) return cached;
    }
    let loaded: Loaded | null;
    try {
      loaded = await this.store.load(runId);
    } catch (e) {
      if (!(e instanceof JournalRefusedError)) throw e;
      // Frozen: nothing of a journal the App did not write is carried out, and nothing is decided on it.
      this.#cache.delete(runId);
      if (!this.#refusedTold.has(e.blobSha)) {
        this.#refusedTold.add(e.blobSha);
        this.#log.error({ runId, reason: e.reason }, "journal refused: the run is frozen");
        await this.#onRefused?.(runId, e).catch((err: unknown) =>
          this.#log.warn({ runId, err: (err as Error).message }, "could not tell the run's tracker"),
        );
      }
      return null;
    }
    if (loaded) this.#cache.set(runId, loaded);
    return loaded;
  }

  /** The current state of a run (cached), or null. */
  async state(runId: string): Promise<Loaded | null> {
    return this.#serial(runId, () => this.#load(runId));
  }

  /** Start a run: state branch, journal, first decisions and their effects. Idempotent per runId. */
  async start(run: NewRun, config: ForgeConfig, facts: Partial<RunFacts>, fromSha: string): Promise<ApplyResult> {
    return this.#serial(run.runId, async () => {
      const existing = await this.#load(run.runId);
      if (existing) return { decisions: [], rejections: [] };
      const d = startRun(run, this.#now(), config);
      let loaded: Loaded;
      try {
        loaded = await this.store.create(this.#leased(newStoredRun(d.journal, config, facts, d.events), d.effects), fromSha);
      } catch (e) {
        if (e instanceof ConflictError) return { decisions: [], rejections: [] }; // another process started it
        throw e;
      }
      this.#cache.set(run.runId, loaded);
      for (const e of d.effects) this.#fresh.add(`${run.runId}:${e.key}`);
      this.#onDecision?.(run.runId, d);
      this.#log.info({ runId: run.runId, tasks: run.nodes.length }, "run started");
      const rest = await this.#flush(run.runId);
      return { decisions: [d, ...rest.decisions], rejections: rest.rejections };
    });
  }

  /**
   * Apply facts to a run and carry out what follows. Facts that arrive while the run is busy wait
   * in one batch: when its turn comes, the batch is decided at once — one decision, one journal
   * write, one flush — however many webhooks brought it. Each caller gets the decisions and the
   * rejections of its own inputs (and those of the flush).
   */
  async apply(runId: string, inputs: LeafInput[]): Promise<ApplyResult> {
    if (inputs.length === 0) return { decisions: [], rejections: [] };
    const count = inputs.length;
    const open = this.#batches.get(runId);
    if (open) {
      open.inputs.push(...inputs);
      return new Promise((resolve, reject) => open.waiters.push({ count, resolve, reject }));
    }
    const batch: Batch = { inputs: [...inputs], waiters: [] };
    this.#batches.set(runId, batch);
    const result = new Promise<ApplyResult>((resolve, reject) => batch.waiters.push({ count, resolve, reject }));
    void this.#serial(runId, async () => {
      // Closed from here on: what arrives now waits for the next turn.
      this.#batches.delete(runId);
      try {
        const first = await this.#decideAndPersist(runId, batch.inputs);
        const rest = first ? await this.#flush(runId) : { decisions: [], rejections: [] };
        const decisions = first ? [first, ...rest.decisions] : [];
        // The first decision's rejections belong to the input at their position; the flush's to everyone.
        const own = first?.rejections ?? [];
        let from = 0;
        for (const w of batch.waiters) {
          const to = from + w.count;
          w.resolve({ decisions, rejections: [...own.filter((r) => r.leaf >= from && r.leaf < to), ...rest.rejections] });
          from = to;
        }
      } catch (e) {
        for (const w of batch.waiters) w.reject(e);
      }
    });
    return result;
  }

  /** Carry out a run's pending effects (e.g. on a timer, or after a restart). */
  async flush(runId: string): Promise<ApplyResult> {
    return this.#serial(runId, () => this.#flush(runId));
  }

  /**
   * decide → persist, retrying on a lost compare-and-swap with a fresh read. A decision that only
   * acknowledges effects is kept in memory and persisted with the next one: re-running an
   * acknowledged effect after a crash is harmless, and it saves a write per effect.
   */
  async #decideAndPersist(runId: string, given: LeafInput[], round?: Round): Promise<Decision | null> {
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const loaded = await this.#load(runId, attempt > 0);
      if (!loaded) {
        this.#log.warn({ runId }, "facts for an unknown run ignored");
        return null;
      }
      // What a round of effects learned (ids of the objects it made) holds whatever journal it lands
      // on; its acknowledgements only for the very effects that ran — after a re-read, a pending
      // effect of the same key may be a newer one (another verdict), which must still run.
      const state = round ? { ...loaded.state, facts: withFacts(loaded.state.facts, round.facts) } : loaded.state;
      const inputs = round ? given.filter((i) => !("key" in i) || sameEffect(state.journal.outbox, i.key, round.ran.get(i.key))) : given;
      if (inputs.length === 0) {
        if (state !== loaded.state) {
          this.#cache.set(runId, { ...loaded, state });
          this.#dirty.add(runId);
        }
        return null;
      }
      // A refinery's result carries which upstream heads its record commit lacks (read from GitHub).
      const checked = await Promise.all(inputs.map((input) => this.#withContainment(runId, state.journal, input)));
      const now = this.#now();
      const d = decide(state.journal, checked.length === 1 ? checked[0]! : { kind: "batch", inputs: checked }, now, state.config);
      const next = { ...state, journal: d.journal, events: { ...state.events, tail: [...state.events.tail, ...d.events] as ForgeEvent[] } };
      const mustPersist = d.events.length > 0 || d.effects.length > 0 || d.transitions.length > 0;
      if (!mustPersist) {
        this.#cache.set(runId, { state: next, blobSha: loaded.blobSha, commitSha: loaded.commitSha });
        // Only a journal that changed is worth a write (a tick that found nothing to do is not).
        // `decide` always returns a copy, so the comparison is by content.
        if (state !== loaded.state || JSON.stringify(d.journal) !== JSON.stringify(state.journal)) this.#dirty.add(runId);
        return d;
      }
      try {
        // Leases change only with a write: one held in memory alone would not stop another process.
        const saved = await this.store.save(loaded, this.#leased(next, d.effects), commitMessage(runId, d));
        this.#cache.set(runId, saved);
        this.#dirty.delete(runId);
        // An effect that replaces a pending one of the same key may have run already (before a
        // restart, or behind a lost answer): it keeps the replay mark of the one it replaces.
        const pending = new Set(state.journal.outbox.map((e) => e.key));
        for (const e of d.effects) if (!pending.has(e.key)) this.#fresh.add(`${runId}:${e.key}`);
        this.#onDecision?.(runId, d);
        return d;
      } catch (e) {
        if (await this.#restoreMissing(runId, e)) continue;
        if (!(e instanceof ConflictError)) throw e;
        this.stats.casLost++;
        this.#log.info({ runId, attempt }, "journal moved under us: re-reading and deciding again");
        this.#cache.delete(runId);
      }
    }
    throw new Error(`run ${runId}: the journal kept moving; gave up after ${MAX_CAS_ATTEMPTS} attempts`);
  }

  /**
   * A refinery's result without its containment facts is never decided: when GitHub cannot answer
   * the compare, it counts as a sign of life only (the same position in the batch), and the result
   * is read again from the branch by the job's completion or the reconciler.
   */
  async #withContainment(runId: string, journal: Loaded["state"]["journal"], input: LeafInput): Promise<LeafInput> {
    try {
      return await withContainment(this.#port, journal, input);
    } catch (e) {
      if (input.kind !== "agent.finished") throw e;
      this.#log.warn(
        { runId, taskId: input.taskId, attempt: input.attempt, err: (e as Error).message },
        "could not compare a refinery's head with its upstreams; its result waits",
      );
      return { kind: "agent.heartbeat", taskId: input.taskId, attempt: input.attempt };
    }
  }

  /** Carry out the outbox; acknowledgements are decided in rounds until nothing new follows. */
  async #flush(runId: string): Promise<ApplyResult> {
    const decisions: Decision[] = [];
    const rejections: Decision["rejections"] = [];
    const tried = new Set<string>();
    for (let round = 0; round < MAX_ROUNDS; round++) {
      let loaded = await this.#load(runId);
      if (!loaded) break;
      const pending = loaded.state.journal.outbox.filter((e) => !tried.has(e.key));
      if (pending.length === 0) break;
      // Effects whose lease ran out (their owner died, or this process let it lapse) are taken over
      // with a compare-and-swap write first: of two processes trying, one wins, the other re-reads.
      const me = this.#holder();
      const free = pending.filter((e) => isFree(loaded!.state, e.key, me)).map((e) => e.key);
      if (free.length) {
        const claimed = await this.#claim(runId, loaded, free);
        if (!claimed) continue; // lost to another writer: read again and look anew
        loaded = claimed;
      }
      // Another live process's effects are its own to carry out (the time asked again: a claim wrote).
      const meNow = this.#holder();
      const mine = pending.filter((e) => owns(loaded!.state, e.key, meNow));
      if (mine.length === 0) break;
      const acks: LeafInput[] = [];
      const conflicts = new Map<string, string[]>();
      // What this round's effects learn, applied here (effects never write the state): a later effect
      // of the round sees what an earlier one learned.
      let learned: FactsPatch = {};
      const ran = new Map<string, string>();
      // Effects of one task run in order (its branch before its dispatch); different tasks in parallel.
      const groups = new Map<string, Effect[]>();
      for (const effect of mine) {
        const group = "taskId" in effect ? `${effect.taskId}:${"attempt" in effect ? effect.attempt : ""}` : effect.key;
        groups.set(group, [...(groups.get(group) ?? []), effect]);
      }
      await Promise.all(
        [...groups.values()].map(async (effects) => {
          for (const effect of effects) {
            tried.add(effect.key);
            ran.set(effect.key, JSON.stringify(effect));
            const outcome = await this.#run(runId, effect, loaded!, withFacts(loaded!.state.facts, learned), conflicts);
            if (outcome.learned) learned = mergePatches(learned, outcome.learned);
            if (outcome.kind === "done") acks.push({ kind: "effect.done", key: effect.key, result: outcome.result });
            else if (outcome.kind === "failed") acks.push({ kind: "effect.failed", key: effect.key, error: outcome.error });
            else {
              this.#log.info({ runId, effect: effect.key, reason: outcome.reason }, "effect deferred");
              if (outcome.retryInMs !== undefined) this.#flushLater(runId, outcome.retryInMs);
            }
            // Without its branch the dispatch cannot go: leave it for the executor's failure handling.
            if (outcome.kind !== "done" && effect.kind === "PrepareBranch") break;
          }
        }),
      );
      if (acks.length) this.#dirty.add(runId);
      if (acks.length === 0) {
        // Nothing to acknowledge, but what was learned is kept (in memory, persisted with the next write).
        if (Object.keys(learned).length) await this.#decideAndPersist(runId, [], { ran, facts: learned });
        break;
      }
      const d = await this.#decideAndPersist(runId, acks, { ran, facts: learned });
      if (!d) break;
      decisions.push(d);
      rejections.push(...d.rejections);
    }
    return { decisions, rejections };
  }

  /**
   * Take over effects whose lease ran out: one compare-and-swap write naming this process. Null when
   * another writer moved the journal first (the cache is dropped, the caller reads again).
   */
  async #claim(runId: string, loaded: Loaded, keys: string[]): Promise<Loaded | null> {
    const theirs = keys.filter((k) => loaded.state.leases?.[k] && loaded.state.leases[k]!.owner !== this.replicaId).length;
    try {
      const saved = await this.store.save(
        loaded,
        this.#leased(loaded.state, [], keys),
        `forge: ${runId} ${this.replicaId} carries out ${keys.length} effect(s)`,
      );
      this.#cache.set(runId, saved);
      this.#dirty.delete(runId);
      this.stats.takenOver += theirs;
      if (theirs) this.#log.info({ runId, replica: this.replicaId, keys }, "took over effects whose lease ran out");
      return saved;
    } catch (e) {
      if (await this.#restoreMissing(runId, e)) return null;
      if (!(e instanceof ConflictError)) throw e;
      this.stats.casLost++;
      this.#cache.delete(runId);
      return null;
    }
  }

  async #run(runId: string, effect: Effect, loaded: Loaded, facts: RunFacts, conflicts: Map<string, string[]>): Promise<EffectOutcome> {
    const { state } = loaded;
    try {
      const outcome = await runEffect(effect, {
        port: this.#port,
        journal: state.journal,
        config: state.config,
        facts,
        events: state.events.tail,
        replay: !this.#fresh.has(`${runId}:${effect.key}`),
        now: this.#now(),
        conflicts,
      });
      this.#fresh.delete(`${runId}:${effect.key}`);
      return outcome;
    } catch (e) {
      // Transient errors were already retried by Octokit; leave the effect for the next flush. A
      // write may have happened even though its answer was an error (a 502 after GitHub did the
      // work): the next try is a replay, which looks at GitHub before acting again.
      this.#fresh.delete(`${runId}:${effect.key}`);
      this.#log.warn({ runId, effect: effect.key, err: (e as Error).message }, "effect failed; it stays in the outbox");
      return { kind: "later", reason: (e as Error).message };
    }
  }

  /** Trailing edge of a debounce: flush the run again once the wait is over. */
  #flushLater(runId: string, ms: number): void {
    if (this.#timers.has(runId)) return;
    const timer = setTimeout(() => {
      this.#timers.delete(runId);
      this.flush(runId).catch((e: unknown) => this.#log.warn({ runId, err: (e as Error).message }, "deferred flush failed"));
    }, ms);
    timer.unref();
    this.#timers.set(runId, timer);
  }

  /** Stop scheduled flushes (shutdown). */
  stop(): void {
    for (const t of this.#timers.values()) clearTimeout(t);
    this.#timers.clear();
  }

  /** Persist facts kept in memory (effect acknowledgements, ids of GitHub objects). */
  async persistDirty(): Promise<void> {
    for (const runId of [...this.#dirty]) {
      await this.#serial(runId, async () => {
        const loaded = this.#cache.get(runId);
        if (!loaded || !this.#dirty.has(runId)) return;
        try {
          const saved = await this.store.save(loaded, this.#leased(loaded.state, []), `forge: ${runId} acknowledgements`);
          this.#cache.set(runId, saved);
          this.#dirty.delete(runId);
        } catch (e) {
          if (await this.#restoreMissing(runId, e)) return; // the acknowledgements are replayed instead
          if (!(e instanceof ConflictError)) throw e;
          this.#cache.delete(runId);
          this.#dirty.delete(runId);
        }
      });
    }
  }

  /**
   * The state branch was deleted (by hand: Forge never deletes it) and a write found it gone: put it
   * back at the last journal commit this process wrote, so nothing recorded is lost. Without one
   * (the journal was read, not written, since the App started) it stays an error in the log.
   */
  async #restoreMissing(runId: string, e: unknown): Promise<boolean> {
    if (!(e instanceof StateBranchMissingError)) return false;
    const commitSha = this.#cache.get(runId)?.commitSha;
    if (commitSha && (await this.#putBack(runId, commitSha))) return true;
    this.#log.error({ runId }, `${e.message} and this process knows no commit to restore it from: restore the branch, or cancel the run`);
    return false;
  }

  /** A deleted state branch seen in a `push` webhook: put it back at the commit it pointed to. */
  async restore(runId: string, commitSha: string, actor?: string): Promise<Loaded | null> {
    return this.#serial(runId, () => this.#putBack(runId, commitSha, actor));
  }

  /**
   * Recreate the state branch at `commitSha` and tell the run's people. The journal this process
   * holds is ahead of the restored one only by what it keeps in memory (acknowledgements, ids of
   * GitHub objects) when both come from the same blob: then it is kept.
   */
  async #putBack(runId: string, commitSha: string, actor?: string): Promise<Loaded | null> {
    const restored = await this.store.restore(runId, commitSha);
    if (!restored) return null;
    this.#log.warn({ runId, commitSha, actor }, "the state branch was deleted: restored at its last journal commit");
    const cached = this.#cache.get(runId);
    const loaded = cached && cached.blobSha === restored.blobSha ? { ...restored, state: cached.state } : restored;
    if (loaded === restored) this.#dirty.delete(runId);
    this.#cache.set(runId, loaded);
    await this.#onRestored?.(runId, loaded, actor).catch((err: unknown) =>
      this.#log.warn({ runId, err: (err as Error).message }, "could not tell the run's tracker"),
    );
    return loaded;
  }

  /** Ids of the runs this repository has. */
  listRuns(): Promise<string[]> {
    return this.store.listRuns();
  }

  /** Forget the cached journals (a test simulating a restart, or after an unexpected error). */
  forget(): void {
    this.#cache.clear();
    this.#fresh.clear();
    this.#dirty.clear();
  }
}

function commitMessage(runId: string, d: Decision): string {
  const kinds = [...new Set(d.events.map((e) => e.type))].slice(0, 4).join(", ");
  return `forge: ${runId} ${kinds || "journal"} (seq ${d.journal.seq})`;
}
