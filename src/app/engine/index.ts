/**
 * The executor loop of one repository, on GitHub: facts in → `decide` → persist the journal
 * (compare-and-swap) → carry out the outbox → acknowledge. One writer per run inside this process
 * (a promise chain per run); across processes the compare-and-swap decides, and the loser re-reads
 * and re-decides with the same facts.
 *
 * The run's turn on its chain only decides and persists. The outbox's effects are carried out
 * outside it — effects of one task in order, different tasks at once — and their outcomes re-enter
 * as inputs, batched with whatever else arrived meanwhile. The outbox keeps its guarantees with
 * effects overlapping: an effect is started only after the write that holds it (it is never lost),
 * never twice at once in this process (its key stays taken until the turn that takes its outcome
 * ends), and an outcome counts only for the very effect that ran (`sameEffect`: a newer effect of
 * the same key still runs). One that was started but whose outcome never landed is started again as
 * a replay, which looks at GitHub before acting.
 *
 * Its rooms, beside this file: types.ts (options, results, the logger), batches.ts (inputs waiting for
 * a turn), containment.ts (a refinery's result checked before deciding), silent-checkpoints.ts (a
 * tick given what the branches of the attempts it finds silent hold), journal-writes.ts (what a
 * write needs beside the decision), prefetches.ts (branch heads read beside a write),
 * effects-runner.ts (carrying out effects: lanes, deferrals, replay marks) and restore.ts (a
 * deleted state branch put back).
 */
import { realClock, type Clock, type TimerHandle } from "../../core/clock.js";
import { decide, startRun, type Decision, type NewRun } from "../../core/decide/index.js";
import type { Effect } from "../../core/effects.js";
import type { LeafInput } from "../../core/inputs.js";
import type { ForgeConfig } from "../../core/schemas/config.js";
import type { ForgeEvent } from "../../core/schemas/events.js";
import { rateLimitWaitMs } from "../../github/octokit-rest.js";
import { ConflictError, type GitHubPort } from "../../github/port.js";
import { effectDue } from "../effects/index.js";
import { isFree, owns, withLeases, type LeaseHolder } from "../leases.js";
import { sameEffect, withFacts, type FactsPatch, type Round } from "../rounds.js";
import { randomUUID } from "node:crypto";
import { JournalRefusedError, newStoredRun, RunStore, type Loaded, type RunFacts, type StoredRun } from "../run-store.js";
import { answer, join, type Batch } from "./batches.js";
import { checkContainment } from "./containment.js";
import { withSilentCheckpoints } from "./silent-checkpoints.js";
import { EffectRunner } from "./effects-runner.js";
import { commitMessage, journalUnchanged } from "./journal-writes.js";
import { Prefetches } from "./prefetches.js";
import { Restorer } from "./restore.js";
import { DEFAULT_LEASE_MS, silentLogger, type ApplyResult, type EngineOptions, type Logger } from "./types.js";

export { journalUnchanged } from "./journal-writes.js";
export { DEFAULT_LEASE_MS, silentLogger, type ApplyResult, type EngineOptions, type Logger } from "./types.js";

const MAX_CAS_ATTEMPTS = 6;

export class Engine {
  readonly store: RunStore;
  readonly #port: GitHubPort;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #onDecision: EngineOptions["onDecision"];
  readonly #onRefused: EngineOptions["onRefused"];
  /** Refused journals already told (by blob). */
  readonly #refusedTold = new Set<string>();
  /** The last journal read or written per run, so a webhook usually costs no read. */
  readonly #cache = new Map<string, Loaded>();
  readonly #chains = new Map<string, Promise<unknown>>();
  /** Per run, the batch of inputs still open to more (its turn has not come yet). */
  readonly #batches = new Map<string, Batch>();
  /** Facts learned from effects and not yet persisted (they ride along with the next write). */
  readonly #dirty = new Set<string>();
  readonly #prefetches: Prefetches;
  readonly #effects: EffectRunner;
  readonly #restorer: Restorer;
  #stopped = false;
  /** Turns and effect work under way, for `idle`. */
  readonly #work = new Set<Promise<unknown>>();
  /** A flush scheduled for deferred effects (the tracker's debounce), per run. */
  readonly #timers = new Map<string, TimerHandle>();
  readonly replicaId: string;
  readonly #leaseMs: number;
  /** Effect leases taken over from other processes and lost compare-and-swap writes (replica figures). */
  readonly stats = { takenOver: 0, casLost: 0, rateLimited: 0 };

  constructor(options: EngineOptions) {
    this.#port = options.port;
    this.store = new RunStore(options.port, options.journalKey, options.journalParts);
    this.#onRefused = options.onRefused;
    this.#log = options.log ?? silentLogger;
    this.#clock = options.clock ?? realClock;
    this.#onDecision = options.onDecision;
    this.replicaId = options.replicaId ?? randomUUID();
    this.#leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.#prefetches = new Prefetches(this.#port, this.#clock);
    this.#effects = new EffectRunner({
      port: this.#port,
      log: this.#log,
      now: () => this.#clock.now(),
      prefetches: this.#prefetches,
      work: this.#work,
      enqueue: (runId, acks, round) => this.#enqueue(runId, acks, round),
      flushLater: (runId, ms) => this.#flushLater(runId, ms),
      outbox: (runId) => this.#cache.get(runId)?.state.journal.outbox,
      ...(options.onLearned ? { learned: options.onLearned } : {}),
    });
    const held = { store: this.store, cache: this.#cache, dirty: this.#dirty, log: this.#log, onRestored: options.onRestored };
    this.#restorer = new Restorer(held);
  }

  /** This process as a lease holder, now. */
  #holder(): LeaseHolder {
    return { replicaId: this.replicaId, leaseMs: this.#leaseMs, now: this.#clock.now() };
  }

  /** `next` with its outbox's leases (see `withLeases`): this process's decided or claimed effects are its own. */
  #leased(next: StoredRun, decided: readonly Effect[], claim: readonly string[] = []): StoredRun {
    return withLeases(next, decided, claim, this.#holder(), (e) => effectDue(e, next.journal, next.facts));
  }

  /** Serialise work per run inside this process. */
  #serial<T>(runId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#chains.get(runId) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.catch(() => undefined);
    this.#chains.set(runId, settled);
    // A turn is work under way too: it may start effects after its callers have their answer.
    this.#work.add(settled);
    void settled.finally(() => this.#work.delete(settled));
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
      const d = startRun(run, this.#clock.now(), config);
      let loaded: Loaded;
      try {
        loaded = await this.store.create(this.#leased(newStoredRun(d.journal, config, facts, d.events), d.effects), fromSha);
      } catch (e) {
        if (e instanceof ConflictError) return { decisions: [], rejections: [] }; // another process started it
        throw e;
      }
      this.#cache.set(run.runId, loaded);
      for (const e of d.effects) this.#effects.markFresh(run.runId, e.key);
      this.#onDecision?.(run.runId, d);
      this.#log.info({ runId: run.runId, tasks: run.nodes.length }, "run started");
      await this.#launch(run.runId, true);
      return { decisions: [d], rejections: [] };
    });
  }

  /**
   * Apply facts to a run. Facts that arrive while the run is busy wait in one batch: when its turn
   * comes, the batch is decided at once — one decision, one journal write — however many webhooks
   * brought it; then the effects it asks for are started, outside the turn. Each caller gets the
   * decision and the rejections of its own inputs.
   */
  apply(runId: string, inputs: LeafInput[]): Promise<ApplyResult> {
    return this.#enqueue(runId, inputs);
  }

  #enqueue(runId: string, inputs: LeafInput[], round?: Round): Promise<ApplyResult> {
    if (inputs.length === 0 && !round) return Promise.resolve({ decisions: [], rejections: [] });
    const open = this.#batches.get(runId);
    if (open) return join(open, inputs, round);
    const batch: Batch = { inputs: [], waiters: [] };
    this.#batches.set(runId, batch);
    const result = join(batch, inputs, round);
    void this.#serial(runId, async () => {
      // Closed from here on: what arrives now waits for the next turn.
      this.#batches.delete(runId);
      try {
        const first = batch.inputs.length || batch.round ? await this.#decideAndPersist(runId, batch.inputs, batch.round) : null;
        answer(batch, first);
      } catch (e) {
        for (const w of batch.waiters) w.reject(e);
      } finally {
        // The outcomes are taken (or lost with a failed write: then their effects start again, as replays).
        if (batch.round) this.#effects.release(runId, batch.round.ran.keys());
      }
      // A turn that only landed what deferred effects learned starts nothing: they wait for the next.
      // One with a fact from outside (a webhook, the reconciler) tries the deferred effects again.
      const outside = batch.inputs.some((i) => i.kind !== "effect.done" && i.kind !== "effect.failed");
      if (batch.inputs.length)
        await this.#launch(runId, outside).catch((e: unknown) =>
          this.#log.warn({ runId, err: (e as Error).message }, "could not start the run's effects"),
        );
    });
    return result;
  }

  /** Start a run's pending effects (e.g. on a timer, or after a restart). */
  async flush(runId: string): Promise<ApplyResult> {
    await this.#serial(runId, () => this.#launch(runId, true));
    return { decisions: [], rejections: [] };
  }

  /** Turns waiting out a rate limit on the clock (`asleep`). */
  #asleep = 0;

  /** Turns that wait out a rate limit GitHub answered: they go on only once the clock moves. */
  get asleep(): number {
    return this.#asleep;
  }

  /** Whether effects are being carried out (or their outcomes wait for their turn). */
  get busy(): boolean {
    return this.#work.size > 0;
  }

  /** Resolves once no effect is being carried out and no outcome waits for its turn. */
  async idle(): Promise<void> {
    while (this.#work.size) await Promise.all([...this.#work]);
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
      // The time of the decision, which the reads before it also go by.
      const now = this.#clock.now();
      // A refinery's result carries which upstream heads its record commit lacks (read from GitHub).
      const contained = await Promise.all(inputs.map((input) => checkContainment(this.#port, this.#log, runId, state.journal, input)));
      // A tick carries the branch checkpoints of the attempts it finds silent (read from GitHub).
      const checked = await withSilentCheckpoints(
        this.#port,
        this.#log,
        { runId, journal: state.journal, config: state.config },
        contained,
        now,
      );
      const d = decide(state.journal, checked.length === 1 ? checked[0]! : { kind: "batch", inputs: checked }, now, state.config);
      const next = { ...state, journal: d.journal, events: { ...state.events, tail: [...state.events.tail, ...d.events] as ForgeEvent[] } };
      const mustPersist = d.events.length > 0 || d.effects.length > 0 || d.transitions.length > 0;
      if (!mustPersist) {
        this.#cache.set(runId, { ...loaded, state: next });
        // Only a journal that changed is worth a write (a tick that found nothing to do is not).
        // `decide` always returns a copy, so the comparison is by content.
        if (state !== loaded.state || !journalUnchanged(state.journal, d.journal)) this.#dirty.add(runId);
        return d;
      }
      try {
        this.#prefetches.prefetch(runId, d.effects);
        // Leases change only with a write: one held in memory alone would not stop another process.
        const saved = await this.store.save(loaded, this.#leased(next, d.effects), commitMessage(runId, d));
        this.#cache.set(runId, saved);
        this.#dirty.delete(runId);
        // An effect that replaces a pending one of the same key may have run already (before a
        // restart, or behind a lost answer): it keeps the replay mark of the one it replaces.
        const pending = new Set(state.journal.outbox.map((e) => e.key));
        for (const e of d.effects) if (!pending.has(e.key)) this.#effects.markFresh(runId, e.key);
        this.#onDecision?.(runId, d);
        return d;
      } catch (e) {
        if (await this.#restorer.restoreMissing(runId, e)) continue;
        this.#prefetches.drop(runId, d.effects);
        // GitHub refused the journal write for a rate limit (nothing was written): the input is not
        // dropped — decided again and written once the wait is over (the installation's pace holds
        // its requests until then; the sleep covers an App without it, at most a minute a try).
        const wait = rateLimitWaitMs(e, this.#clock.now());
        if (wait !== undefined && !this.#stopped) {
          this.stats.rateLimited++;
          this.#log.warn(
            { runId, attempt, waitMs: wait },
            "journal write refused by a GitHub rate limit: writing again once the wait is over",
          );
          this.#asleep++;
          await this.#clock.sleep(Math.min(wait, 60_000)).finally(() => this.#asleep--);
          continue;
        }
        if (!(e instanceof ConflictError)) throw e;
        this.stats.casLost++;
        this.#log.info({ runId, attempt }, "journal moved under us: re-reading and deciding again");
        this.#cache.delete(runId);
      }
    }
    throw new Error(`run ${runId}: the journal kept moving; gave up after ${MAX_CAS_ATTEMPTS} attempts`);
  }

  /**
   * Start the outbox's effects that are this process's and not under way (inside the run's turn):
   * effects whose lease ran out are claimed first with a compare-and-swap write. Each task's effects
   * run in order, after those of the task started before; their outcomes come back through
   * `#enqueue`, as inputs of a later turn.
   */
  async #launch(runId: string, retryDeferred: boolean): Promise<void> {
    if (this.#stopped) return;
    let loaded = await this.#load(runId);
    if (!loaded) return;
    const pending = this.#effects.pending(runId, loaded.state.journal.outbox, retryDeferred);
    if (pending.length === 0) return;
    // Effects whose lease ran out (their owner died, or this process let it lapse) are taken over
    // with a compare-and-swap write first: of two processes trying, one wins, the other re-reads.
    const free = pending.filter((e) => isFree(loaded!.state, e.key, this.#holder())).map((e) => e.key);
    if (free.length) {
      loaded = await this.#claim(runId, loaded, free);
      // Lost to another writer: the next turn (its webhook, a timer, the reconciler) looks anew.
      if (!loaded) return this.#flushLater(runId, 200);
    }
    // Another live process's effects are its own to carry out (the time asked again: a claim wrote).
    const me = this.#holder();
    const mine = pending.filter((e) => owns(loaded!.state, e.key, me));
    this.#effects.start(runId, loaded, mine);
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
      if (await this.#restorer.restoreMissing(runId, e)) return null;
      if (!(e instanceof ConflictError)) throw e;
      this.stats.casLost++;
      this.#cache.delete(runId);
      return null;
    }
  }

  /** Trailing edge of a debounce: flush the run again once the wait is over. */
  #flushLater(runId: string, ms: number): void {
    if (this.#timers.has(runId)) return;
    const timer = this.#clock.setTimeout(() => {
      this.#timers.delete(runId);
      this.flush(runId).catch((e: unknown) => this.#log.warn({ runId, err: (e as Error).message }, "deferred flush failed"));
    }, ms);
    timer.unref();
    this.#timers.set(runId, timer);
  }

  /** Stop scheduled flushes and starting effects (shutdown); effects under way finish (`idle`). */
  stop(): void {
    this.#stopped = true;
    for (const t of this.#timers.values()) this.#clock.clear(t);
    this.#timers.clear();
  }

  /** Persist facts kept in memory (effect acknowledgements, ids of GitHub objects). */
  async persistDirty(): Promise<void> {
    for (const runId of [...this.#dirty]) await this.#persist(runId, "acknowledgements");
  }

  /**
   * Record what the App learned of a run outside its effects (facts only grow), and write it: it
   * lands on the run's state in the run's turn, as an effect's would. A write lost to another
   * writer loses it (the fact is looked for again).
   */
  async record(runId: string, facts: FactsPatch, what: string): Promise<void> {
    await this.#enqueue(runId, [], { ran: new Map(), facts });
    await this.#persist(runId, what);
  }

  async #persist(runId: string, what: string): Promise<void> {
    await this.#serial(runId, async () => {
      const loaded = this.#cache.get(runId);
      if (!loaded || !this.#dirty.has(runId)) return;
      try {
        const saved = await this.store.save(loaded, this.#leased(loaded.state, []), `forge: ${runId} ${what}`);
        this.#cache.set(runId, saved);
        this.#dirty.delete(runId);
      } catch (e) {
        if (await this.#restorer.restoreMissing(runId, e)) return; // the acknowledgements are replayed instead
        if (!(e instanceof ConflictError)) throw e;
        this.#cache.delete(runId);
        this.#dirty.delete(runId);
      }
    });
  }

  /** A deleted state branch seen in a `push` webhook: put it back at the commit it pointed to. */
  async restore(runId: string, commitSha: string, actor?: string): Promise<Loaded | null> {
    return this.#serial(runId, () => this.#restorer.putBack(runId, commitSha, actor));
  }

  /** Ids of the runs this repository has. */
  listRuns(): Promise<string[]> {
    return this.store.listRuns();
  }

  /** Forget the cached journals (a test simulating a restart, or after an unexpected error). */
  forget(): void {
    this.#cache.clear();
    this.#effects.forget();
    this.#prefetches.clear();
    this.#dirty.clear();
  }
}
