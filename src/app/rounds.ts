/**
 * A round of effects carried out by the engine, and what it learned: the ids of the GitHub objects
 * its effects made (facts), kept apart so they can land on whatever journal the round's
 * acknowledgement is decided against.
 */
import type { Effect } from "../core/effects.js";
import type { RunFacts } from "./run-store.js";

/** A round of effects carried out: each effect as it ran (JSON, by key), and the facts it learned. */
export interface Round {
  ran: Map<string, string>;
  facts: Partial<RunFacts>;
}

/** Is the effect pending under `key` the one that ran (`ran`, as JSON)? */
export function sameEffect(outbox: readonly Effect[], key: string, ran: string | undefined): boolean {
  const pending = outbox.find((e) => e.key === key);
  return !pending || ran === undefined || JSON.stringify(pending) === ran;
}

/** What `after` knows that `before` did not: new or changed ids (facts only grow). */
export function factsLearned(before: RunFacts, after: RunFacts): Partial<RunFacts> {
  const out: Partial<RunFacts> = {};
  for (const k of ["trackerIssue", "trackerUpdatedAt", "finalPr", "planSha"] as const)
    if (after[k] !== undefined && after[k] !== before[k]) (out as Record<string, unknown>)[k] = after[k];
  const checkRuns = Object.fromEntries(Object.entries(after.checkRuns).filter(([k, v]) => before.checkRuns[k] !== v));
  const crIssues = Object.fromEntries(Object.entries(after.crIssues).filter(([k, v]) => before.crIssues[k] !== v));
  if (Object.keys(checkRuns).length) out.checkRuns = checkRuns;
  if (Object.keys(crIssues).length) out.crIssues = crIssues;
  return out;
}

/** `facts` with `learned` added (a new object when anything changes). */
export function withFacts(facts: RunFacts, learned: Partial<RunFacts>): RunFacts {
  if (Object.keys(learned).length === 0) return facts;
  return {
    ...facts,
    ...learned,
    checkRuns: { ...facts.checkRuns, ...learned.checkRuns },
    crIssues: { ...facts.crIssues, ...learned.crIssues },
  };
}
