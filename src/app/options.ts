/** How a Forge App is set up: its clock, its replica name, its reconciler and its instrumentation. */
import type { Clock } from "../core/clock.js";
import type { Decision } from "../core/decide/index.js";
import type { RequestTiming } from "../github/instrument.js";
import type { JournalKey } from "./journal-seal.js";
import type { RunStoreOptions } from "./run-store.js";
import type { PaceLimits } from "../github/pacing.js";

export interface ForgeAppOptions {
  /**
   * What the App reads the time from and sets its timers on (src/core/clock.ts): the real one by
   * default; tests give a clock they move.
   */
  clock?: Clock;
  /**
   * Answer each webhook at once and do the work after (default). GitHub gives a receiver 10 s, and
   * one webhook can lead to many API calls; what fails later is repaired by the reconciler, since
   * GitHub never redelivers by itself. Serverless installs set this to false so the work finishes
   * before the function returns.
   */
  background?: boolean;
  /**
   * How long a job's completion that arrives before the push of its result waits for that push
   * before the App reads the branch itself (default 10 s; 0, the default when `background` is
   * false, reads at once).
   */
  jobEndGraceMs?: number;
  /** Period of the reconciler in a long-lived server; 0 turns the timer off (serverless: use `forge tick`). */
  reconcileEveryMs?: number;
  /**
   * This process's name among the App's replicas: the owner of the effects it decides (see Engine).
   * Give each replica a stable name of its own (a StatefulSet pod name, say) so that a restarted
   * replica carries on at once; by default a random one, whose effects another process takes over
   * once their lease (`leaseMs`, default 20 s) runs out.
   */
  replicaId?: string;
  leaseMs?: number;
  /** Every persisted decision, for tests and the demo's live view. */
  onDecision?: (repo: string, runId: string, d: Decision) => void;
  /** Instrumentation: every webhook as it arrives, and every API call with its start and end (performance.now()). */
  onWebhook?: (event: { name: string; action?: string; id: string; at: number }) => void;
  onRequest?: (call: RequestTiming) => void;
  /**
   * The key that seals the App's journals: `journalKeyFrom(privateKey)` (what `startForgeServer` and
   * `forge tick` use, so every replica agrees), or `journalKeyFromSecret(FORGE_JOURNAL_KEY)`.
   */
  journalKey?: JournalKey;
  /**
   * Forge's own bound on each installation's requests — at most 100 at once, 80 content-creating a
   * minute, 500 an hour (GitHub's secondary limits; src/github/pacing.ts) — or false for none (a
   * local GitHub that imposes no such limits, in benchmarks of the App's own speed).
   */
  pace?: PaceLimits | false;
  /** When a run's journal is kept in parts, how big they are (docs/formats.md#journal-parts); tests make small plans split. */
  journalParts?: RunStoreOptions;
}

/** The options of a running App: its journal key is known. */
export type SealedAppOptions = ForgeAppOptions & { journalKey: JournalKey };
