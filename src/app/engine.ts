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
 */
import { decide, startRun, type Decision, type NewRun } from "../core/decide.js";
import type { Effect } from "../core/effects.js";
import type { LeafInput } from "../core/inputs.js";
import type { Journal } from "../core/journal.js";
import { sameJson } from "../core/same-json.js";
import type { ForgeConfig } from "../core/schemas/config.js";
import type { ForgeEvent } from "../core/schemas/events.js";
import { ConflictError, type GitHubPort } from "../github/port.js";
import { effectDue, runEffect, type EffectOutcome } from "./effects/index.js";
import { isFree, owns, withLeases, type LeaseHolder } from "./leases.js";
import { withContainment } from "./normalize.js";
import { mergePatches, mergeRounds, sameEffect, withFacts, type FactsPatch, type Round } from "./rounds.js";
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
  type RunStoreOptions,
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
  /** How a big run's journal is kept in parts (RunStore). */
  journalParts?: RunStoreOptions;
}

/** Inputs waiting for their run's turn, and the callers waiting on them. */
interface Batch {
  inputs: LeafInput[];
  /** The effects whose outcomes are among the inputs, and what they learned. */
  round?: Round;
  /** In the order their inputs were added: `count` inputs each. */
  waiters: { count: number; resolve: (r: ApplyResult) => void; reject: (e: unknown) => void }[];
}

export interface ApplyResult {
  decisions: Decision[];
  /** Rejections of commands, for replying to the person. */
  rejections: Decision["rejections"];
}

const MAX_CAS_ATTEMPTS = 6;
/** How long a branch head read beside a journal write may stand in for a fresh read (`#prefetch`). */
const PREFETCH_TTL_MS = 60_000;
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
  /** Heads of the branches new task branches are cut from, read while their decision is written (`#prefetch`). */
  readonly #prefetched = new Map<string, { head: Promise<string | null>; at: number }>();
  /** Facts learned from effects and not yet persisted (they ride along with the next write). */
  readonly #dirty = new Set<string>();
  /** Keys of the effects being carried out, per run: taken from start until their outcome's turn ends. */
  readonly #running = new Map<string, Set<string>>();
  /**
   * Keys of effects deferred (GitHub not ready) since the run's last outside fact, per run: the
   * outcomes of other effects do not start them again — a webhook, a timer, the reconciler or an
   * explicit flush does.
   */
  readonly #deferred = new Map<string, Map<string, string>>();
  /** The last piece of effect work per run and task, so that one task's effects keep their order. */
  readonly #lanes = new Map<string, Promise<unknown>>();
  #stopped = false;
  /** Turns and effect work under way, for `idle`. */
  readonly #work = new Set<Promise<unknown>>();
  /** A flush scheduled for deferred effects (the tracker's debounce), per run. */
  readonly #timers = new Map<string, NodeJS.Timeout>();
  readonly replicaId: string;
  readonly #leaseMs: number;
  /** Effect leases taken over from other processes and lost compare-and-swap writes (replica figures). */
  readonly stats = { takenOver: 0, casLost: 0 };

  constructor(options: EngineOptions) {
    this.#port = options.port;
    this.store = new RunStore(options.port, options.journalKey, options.journalParts);
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
    const count = inputs.length;
    const open = this.#batches.get(runId);
    if (open) {
      open.inputs.push(...inputs);
      if (round) open.round = open.round ? mergeRounds(open.round, round) : round;
      return new Promise((resolve, reject) => open.waiters.push({ count, resolve, reject }));
    }
    const batch: Batch = { inputs: [...inputs], ...(round ? { round } : {}), waiters: [] };
    this.#batches.set(runId, batch);
    const result = new Promise<ApplyResult>((resolve, reject) => batch.waiters.push({ count, resolve, reject }));
    void this.#serial(runId, async () => {
      // Closed from here on: what arrives now waits for the next turn.
      this.#batches.delete(runId);
      try {
        const first = batch.inputs.length || batch.round ? await this.#decideAndPersist(runId, batch.inputs, batch.round) : null;
        const decisions = first ? [first] : [];
        // The decision's rejections belong to the input at their position.
        const own = first?.rejections ?? [];
        let from = 0;
        for (const w of batch.waiters) {
          const to = from + w.count;
          w.resolve({ decisions, rejections: own.filter((r) => r.leaf >= from && r.leaf < to) });
          from = to;
        }
      } catch (e) {
        for (const w of batch.waiters) w.reject(e);
      } finally {
        // The outcomes are taken (or lost with a failed write: then their effects start again, as replays).
        const running = this.#running.get(runId);
        if (batch.round && running) for (const key of batch.round.ran.keys()) running.delete(key);
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
      // A refinery's result carries which upstream heads its record commit lacks (read from GitHub).
      const checked = await Promise.all(inputs.map((input) => this.#withContainment(runId, state.journal, input)));
      const now = this.#now();
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
        this.#prefetch(runId, d.effects);
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
        for (const effect of d.effects) this.#prefetched.delete(`${runId}:${effect.key}`);
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
    const running = this.#running.get(runId) ?? new Set<string>();
    this.#running.set(runId, running);
    const deferred = this.#deferred.get(runId) ?? new Map<string, string>();
    this.#deferred.set(runId, deferred);
    if (retryDeferred) deferred.clear();
    // A deferred effect that a later decision replaced (same key, new content) is a new one: it starts.
    const pending = loaded.state.journal.outbox.filter((e) => !running.has(e.key) && deferred.get(e.key) !== JSON.stringify(e));
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
    const lanes = new Map<string, Effect[]>();
    for (const effect of mine) {
      const lane = "taskId" in effect ? `${effect.taskId}:${"attempt" in effect ? effect.attempt : ""}` : effect.key;
      lanes.set(lane, [...(lanes.get(lane) ?? []), effect]);
      running.add(effect.key);
    }
    const conflicts = new Map<string, string[]>();
    // Each task's effects after those of the task started before; the outcomes of one start come
    // back together, as one turn (one decision, at most one journal write), as soon as all are known.
    const carried = [...lanes].map(([lane, effects]) => {
      const laneKey = `${runId}\u0000${lane}`;
      const done = (this.#lanes.get(laneKey) ?? Promise.resolve()).then(() => this.#carryOut(runId, effects, loaded!, conflicts));
      const settled = done.catch(() => undefined);
      this.#lanes.set(laneKey, settled);
      void settled.finally(() => this.#lanes.get(laneKey) === settled && this.#lanes.delete(laneKey));
      return done;
    });
    if (carried.length === 0) return;
    const work: Promise<unknown> = Promise.all(carried)
      .then((outs) => {
        const acks = outs.flatMap((o) => o.acks);
        const round = outs.map((o) => o.round).reduce(mergeRounds);
        return acks.length || Object.keys(round.facts).length ? this.#enqueue(runId, acks, round) : undefined;
      })
      // The turn that takes the outcomes frees their keys even when its write fails: then the next
      // turn starts the effects again, as replays.
      .catch((e: unknown) => this.#log.warn({ runId, err: (e as Error).message }, "effects failed; they stay in the outbox"))
      .finally(() => this.#work.delete(work));
    this.#work.add(work);
  }

  /**
   * One task's effects, in order. Each outcome is an acknowledgement for a later turn, or — deferred
   * — nothing: its key is freed at once, so the next turn (a webhook, a timer, the reconciler) starts
   * it again.
   */
  async #carryOut(
    runId: string,
    effects: Effect[],
    loaded: Loaded,
    conflicts: Map<string, string[]>,
  ): Promise<{ acks: LeafInput[]; round: Round }> {
    const running = this.#running.get(runId)!;
    const acks: LeafInput[] = [];
    // What these effects learn, applied here (effects never write the state): a later effect of the
    // task sees what an earlier one learned.
    let learned: FactsPatch = {};
    const ran = new Map<string, string>();
    let stopped = false;
    const deferred = this.#deferred.get(runId)!;
    for (const effect of effects) {
      if (stopped) {
        // Behind a branch that is not there yet: deferred with it.
        running.delete(effect.key);
        deferred.set(effect.key, JSON.stringify(effect));
        continue;
      }
      const outcome = await this.#run(runId, effect, loaded, withFacts(loaded.state.facts, learned), conflicts);
      if (outcome.learned) learned = mergePatches(learned, outcome.learned);
      // What it found on GitHub is decided with the acknowledgements.
      if (outcome.inputs) acks.push(...outcome.inputs);
      if (outcome.kind === "done") acks.push({ kind: "effect.done", key: effect.key, result: outcome.result });
      else if (outcome.kind === "failed") acks.push({ kind: "effect.failed", key: effect.key, error: outcome.error });
      else {
        running.delete(effect.key);
        deferred.set(effect.key, JSON.stringify(effect));
        this.#log.info({ runId, effect: effect.key, reason: outcome.reason }, "effect deferred");
        if (outcome.retryInMs !== undefined) this.#flushLater(runId, outcome.retryInMs);
      }
      if (outcome.kind !== "later") ran.set(effect.key, JSON.stringify(effect));
      // Without its branch the dispatch cannot go: leave it for the executor's failure handling.
      if (outcome.kind !== "done" && effect.kind === "PrepareBranch") stopped = true;
    }
    return { acks, round: { ran, facts: learned } };
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

  /**
   * Starts reading the branch each new task branch will be cut from, beside the journal write that
   * records the decision: the merge → next dispatch path then waits for the write and the branch's
   * creation, not for a read in between. Taken once, by the effect's first try within a minute.
   */
  #prefetch(runId: string, effects: readonly Effect[]): void {
    const now = Date.now();
    for (const [key, p] of this.#prefetched) if (now - p.at > PREFETCH_TTL_MS) this.#prefetched.delete(key);
    for (const e of effects) {
      if (e.kind !== "PrepareBranch") continue;
      const head = this.#port.branchHead(e.from).catch(() => null);
      this.#prefetched.set(`${runId}:${e.key}`, { head, at: now });
    }
  }

  #takePrefetched(runId: string, effect: Effect): Promise<string | null> | undefined {
    const key = `${runId}:${effect.key}`;
    const p = this.#prefetched.get(key);
    this.#prefetched.delete(key);
    return p && Date.now() - p.at <= PREFETCH_TTL_MS ? p.head : undefined;
  }

  async #run(runId: string, effect: Effect, loaded: Loaded, facts: RunFacts, conflicts: Map<string, string[]>): Promise<EffectOutcome> {
    const { state } = loaded;
    const prefetchedHead = this.#takePrefetched(runId, effect);
    try {
      const outcome = await runEffect(effect, {
        ...(prefetchedHead ? { prefetchedHead } : {}),
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

  /** Stop scheduled flushes and starting effects (shutdown); effects under way finish (`idle`). */
  stop(): void {
    this.#stopped = true;
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
    this.#prefetched.clear();
    this.#dirty.clear();
  }
}

/**
 * Whether a decision left the journal as it was. By content — `decide` always returns a copy — but
 * without serialising it: the copy shares every task it did not change, so this costs what changed.
 */
export function journalUnchanged(before: Journal, after: Journal): boolean {
  return sameJson(before, after);
}

function commitMessage(runId: string, d: Decision): string {
  const kinds = [...new Set(d.events.map((e) => e.type))].slice(0, 4).join(", ");
  return `forge: ${runId} ${kinds || "journal"} (seq ${d.journal.seq})`;
}
