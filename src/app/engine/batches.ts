// The batch of inputs that waits for a run's turn: a caller's inputs joining it, and each caller's
// answer once the batch is decided.
import type { Decision } from "../../core/decide/index.js";
import type { LeafInput } from "../../core/inputs.js";
import { mergeRounds, type Round } from "../rounds.js";
import type { ApplyResult } from "./types.js";

/** Inputs waiting for their run's turn, and the callers waiting on them. */
export interface Batch {
  inputs: LeafInput[];
  /** The effects whose outcomes are among the inputs, and what they learned. */
  round?: Round;
  /** In the order their inputs were added: `count` inputs each. */
  waiters: { count: number; resolve: (r: ApplyResult) => void; reject: (e: unknown) => void }[];
}

/** Adds a caller's inputs (and the outcomes of a round of effects) to `batch`: resolves with their answer. */
export function join(batch: Batch, inputs: LeafInput[], round?: Round): Promise<ApplyResult> {
  const count = inputs.length;
  batch.inputs.push(...inputs);
  if (round) batch.round = batch.round ? mergeRounds(batch.round, round) : round;
  return new Promise((resolve, reject) => batch.waiters.push({ count, resolve, reject }));
}

/** Each caller gets the batch's decision and the rejections of its own inputs. */
export function answer(batch: Batch, first: Decision | null): void {
  const decisions = first ? [first] : [];
  // The decision's rejections belong to the input at their position.
  const own = first?.rejections ?? [];
  let from = 0;
  for (const w of batch.waiters) {
    const to = from + w.count;
    w.resolve({ decisions, rejections: own.filter((r) => r.leaf >= from && r.leaf < to) });
    from = to;
  }
}
