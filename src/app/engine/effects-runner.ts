// Carrying out the outbox's effects outside the run's turn: which are under way or deferred, each
// task's lane (its effects in order), one effect's run, and their outcomes handed back as inputs.
import type { Effect } from "../../core/effects.js";
import type { LeafInput } from "../../core/inputs.js";
import type { SquashUpstream } from "../../core/task-record.js";
import { rateLimitWaitMs } from "../../github/octokit-rest.js";
import type { GitHubPort } from "../../github/port.js";
import { runEffect, type EffectOutcome } from "../effects/index.js";
import { mergePatches, mergeRounds, withFacts, type FactsPatch, type Round } from "../rounds.js";
import type { Loaded, RunFacts } from "../run-store.js";
import type { Prefetches } from "./prefetches.js";
import type { Logger } from "./types.js";

/** What preparing a refinery's branch in this round left for its dispatch: conflicts, and upstreams its job squashes. */
interface Prepared {
  conflicts: Map<string, string[]>;
  squash: Map<string, SquashUpstream[]>;
}

/** What the engine lends its effect runner. */
export interface RunnerHost {
  port: GitHubPort;
  log: Logger;
  now: () => number;
  prefetches: Prefetches;
  /** Turns and effect work under way, for the engine's `idle`. */
  work: Set<Promise<unknown>>;
  /** Hands a start's outcomes to a later turn of the run (`Engine#enqueue`). */
  enqueue(runId: string, acks: LeafInput[], round: Round): Promise<unknown>;
  /** Flushes the run again after `ms` (`Engine#flushLater`). */
  flushLater(runId: string, ms: number): void;
  /** The run's outbox as last decided in this process (undefined when not known): what the run still wants. */
  outbox(runId: string): readonly Effect[] | undefined;
  /** Told what a round learned, once the turn that took its outcomes landed it (`EngineOptions.onLearned`). */
  learned?(runId: string, facts: FactsPatch): void;
}

/**
 * Effects of one task and attempt share a lane; so do the run's final PR and its tracker, the PR
 * first (`RUN_LANE_ORDER`): the completed run's last drawing names the PR it has just opened. Any
 * other effect has a lane of its own.
 */
function laneOf(effect: Effect): string {
  if (effect.kind in RUN_LANE_ORDER) return "\u0000run";
  return "taskId" in effect ? `${effect.taskId}:${"attempt" in effect ? effect.attempt : ""}` : effect.key;
}

/** The order of the run's own lane: the final PR before the tracker drawn after it. */
const RUN_LANE_ORDER: Partial<Record<Effect["kind"], number>> = { OpenFinalPullRequest: 0, UpdateTracker: 1 };

export class EffectRunner {
  readonly #host: RunnerHost;
  /** Effect keys decided in this process (not replayed from a stored outbox). */
  readonly #fresh = new Set<string>();
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

  constructor(host: RunnerHost) {
    this.#host = host;
  }

  /** An effect decided in this process: its first try is not a replay. */
  markFresh(runId: string, key: string): void {
    this.#fresh.add(`${runId}:${key}`);
  }

  /** The outbox's effects not under way in this process; with `retryDeferred`, deferred ones again too. */
  pending(runId: string, outbox: readonly Effect[], retryDeferred: boolean): Effect[] {
    const running = this.#running.get(runId) ?? new Set<string>();
    this.#running.set(runId, running);
    const deferred = this.#deferred.get(runId) ?? new Map<string, string>();
    this.#deferred.set(runId, deferred);
    if (retryDeferred) deferred.clear();
    // A deferred effect that a later decision replaced (same key, new content) is a new one: it starts.
    return outbox.filter((e) => !running.has(e.key) && deferred.get(e.key) !== JSON.stringify(e));
  }

  /** The keys of effects whose outcomes a turn took: free to start again. */
  release(runId: string, keys: Iterable<string>): void {
    const running = this.#running.get(runId);
    if (running) for (const key of keys) running.delete(key);
  }

  /**
   * Whether the run still wants `effect` — the very one, same key and content — by its journal as
   * last decided, not by the snapshot its start was given: a later turn may have dropped it (a merge
   * decided before a review that starts a revision) or replaced it while it waited in its lane or at
   * GitHub. Unknown (the journal not held here): wanted.
   */
  #wanted(runId: string, effect: Effect): boolean {
    const outbox = this.#host.outbox(runId);
    if (!outbox) return true;
    const current = outbox.find((e) => e.key === effect.key);
    return current !== undefined && JSON.stringify(current) === JSON.stringify(effect);
  }

  /** Start `mine` (pending effects this process owns), each in its task's lane. */
  start(runId: string, loaded: Loaded, mine: readonly Effect[]): void {
    const running = this.#running.get(runId)!;
    const lanes = new Map<string, Effect[]>();
    for (const effect of mine) {
      const lane = laneOf(effect);
      lanes.set(lane, [...(lanes.get(lane) ?? []), effect]);
      running.add(effect.key);
    }
    const ranked = (e: Effect) => RUN_LANE_ORDER[e.kind] ?? 0;
    lanes.get("\u0000run")?.sort((a, b) => ranked(a) - ranked(b));
    const conflicts = new Map<string, string[]>();
    const squash = new Map<string, SquashUpstream[]>();
    // Each task's effects after those of the task started before; the outcomes of one start come
    // back together, as one turn (one decision, at most one journal write), as soon as all are known.
    const carried = [...lanes].map(([lane, effects]) => {
      const laneKey = `${runId}\u0000${lane}`;
      const done = (this.#lanes.get(laneKey) ?? Promise.resolve()).then(() =>
        this.#carryOut(runId, effects, loaded, { conflicts, squash }),
      );
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
        if (!acks.length && !Object.keys(round.facts).length) return undefined;
        return this.#host.enqueue(runId, acks, round).then(() => {
          if (Object.keys(round.facts).length) this.#host.learned?.(runId, round.facts);
        });
      })
      // The turn that takes the outcomes frees their keys even when its write fails: then the next
      // turn starts the effects again, as replays.
      .catch((e: unknown) => this.#host.log.warn({ runId, err: (e as Error).message }, "effects failed; they stay in the outbox"))
      .finally(() => this.#host.work.delete(work));
    this.#host.work.add(work);
  }

  /**
   * One task's effects, in order. Each outcome is an acknowledgement for a later turn, or — deferred
   * — nothing: its key is freed at once, so the next turn (a webhook, a timer, the reconciler) starts
   * it again.
   */
  async #carryOut(runId: string, effects: Effect[], loaded: Loaded, prepared: Prepared): Promise<{ acks: LeafInput[]; round: Round }> {
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
      if (!this.#wanted(runId, effect)) {
        // Dropped or replaced by a turn decided while it waited behind its lane: it does not run. Its
        // key is free again; a replacement (same key) starts at the next flush.
        running.delete(effect.key);
        this.#host.log.info({ runId, effect: effect.key }, "effect no longer in the outbox; not carried out");
        this.#host.flushLater(runId, 0);
        continue;
      }
      const outcome = await this.#run(runId, effect, loaded, withFacts(loaded.state.facts, learned), prepared);
      if (outcome.learned) learned = mergePatches(learned, outcome.learned);
      // What it found on GitHub is decided with the acknowledgements.
      if (outcome.inputs) acks.push(...outcome.inputs);
      if (outcome.kind === "done") acks.push({ kind: "effect.done", key: effect.key, result: outcome.result });
      else if (outcome.kind === "failed") acks.push({ kind: "effect.failed", key: effect.key, error: outcome.error });
      else if (!this.#wanted(runId, effect)) {
        // Left the outbox while at GitHub (it saw so before acting): nothing to defer.
        running.delete(effect.key);
        this.#host.log.info({ runId, effect: effect.key, reason: outcome.reason }, "effect no longer in the outbox; not carried out");
        this.#host.flushLater(runId, 0);
      } else {
        running.delete(effect.key);
        deferred.set(effect.key, JSON.stringify(effect));
        this.#host.log.info({ runId, effect: effect.key, reason: outcome.reason }, "effect deferred");
        if (outcome.retryInMs !== undefined) this.#host.flushLater(runId, outcome.retryInMs);
      }
      if (outcome.kind !== "later") ran.set(effect.key, JSON.stringify(effect));
      // Without its branch the dispatch cannot go: leave it for the executor's failure handling.
      if (outcome.kind !== "done" && effect.kind === "PrepareBranch") stopped = true;
    }
    return { acks, round: { ran, facts: learned } };
  }

  async #run(runId: string, effect: Effect, loaded: Loaded, facts: RunFacts, prepared: Prepared): Promise<EffectOutcome> {
    const { state } = loaded;
    const prefetchedHead = this.#host.prefetches.take(runId, effect);
    try {
      const outcome = await runEffect(effect, {
        ...(prefetchedHead ? { prefetchedHead } : {}),
        port: this.#host.port,
        journal: state.journal,
        config: state.config,
        facts,
        events: state.events.tail,
        replay: !this.#fresh.has(`${runId}:${effect.key}`),
        now: this.#host.now(),
        ...prepared,
        stillWanted: () => this.#wanted(runId, effect),
      });
      this.#fresh.delete(`${runId}:${effect.key}`);
      return outcome;
    } catch (e) {
      // Transient errors were already retried by Octokit; leave the effect for the next flush. A
      // write may have happened even though its answer was an error (a 502 after GitHub did the
      // work): the next try is a replay, which looks at GitHub before acting again.
      this.#fresh.delete(`${runId}:${effect.key}`);
      // A rate limit: tried again once GitHub's wait is over (the installation's pace holds its
      // requests until then), not only at the next webhook.
      const wait = rateLimitWaitMs(e, this.#host.now());
      this.#host.log.warn(
        { runId, effect: effect.key, err: (e as Error).message, ...(wait !== undefined ? { rateLimitedForMs: wait } : {}) },
        wait !== undefined
          ? "effect refused by a GitHub rate limit; it stays in the outbox until the wait is over"
          : "effect failed; it stays in the outbox",
      );
      return { kind: "later", reason: (e as Error).message, ...(wait !== undefined ? { retryInMs: wait + 100 } : {}) };
    }
  }

  /** Forget which effects were decided here (a restart). */
  forget(): void {
    this.#fresh.clear();
  }
}
