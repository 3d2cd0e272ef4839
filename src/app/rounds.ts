/**
 * A round of effects carried out by the engine, and what it learned: the ids of the GitHub objects
 * its effects made. Effects never write the run's state: each returns what it learned as a patch
 * (`EffectOutcome.learned`), the engine gathers a round's patches here and lands them on whatever
 * journal the round's acknowledgement is decided against.
 */
import type { Effect } from "../core/effects.js";
import type { RunFacts } from "./run-store.js";

/** What an effect learned: ids to add to the run's facts (facts only grow). */
export type FactsPatch = Partial<RunFacts>;

/** A round of effects carried out: each effect as it ran (JSON, by key), and the facts it learned. */
export interface Round {
  ran: Map<string, string>;
  facts: FactsPatch;
}

/** Is the effect pending under `key` the one that ran (`ran`, as JSON)? */
export function sameEffect(outbox: readonly Effect[], key: string, ran: string | undefined): boolean {
  const pending = outbox.find((e) => e.key === key);
  return !pending || ran === undefined || JSON.stringify(pending) === ran;
}

/** Two patches as one (`later` wins where both name the same fact). */
export function mergePatches(earlier: FactsPatch, later: FactsPatch): FactsPatch {
  const out: FactsPatch = { ...earlier, ...later };
  if (earlier.checkRuns || later.checkRuns) out.checkRuns = { ...earlier.checkRuns, ...later.checkRuns };
  return out;
}

/** `facts` with `learned` added (a new object when anything changes; `facts` itself is never written). */
export function withFacts(facts: RunFacts, learned: FactsPatch): RunFacts {
  if (Object.keys(learned).length === 0) return facts;
  // The check runs are copied only when some are new: a big run has thousands (and the journal's
  // split compares them again only when their object changed).
  const checkRuns =
    learned.checkRuns && Object.keys(learned.checkRuns).length ? { ...facts.checkRuns, ...learned.checkRuns } : facts.checkRuns;
  return { ...facts, ...learned, checkRuns };
}

/** Two rounds' outcomes taken in one turn. */
export function mergeRounds(a: Round, b: Round): Round {
  return { ran: new Map([...a.ran, ...b.ran]), facts: mergePatches(a.facts, b.facts) };
}
