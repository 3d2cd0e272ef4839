// What the engine is given and answers: its options, a caller's result, the logger it writes to.
import type { Clock } from "../../core/clock.js";
import type { Decision } from "../../core/decide/index.js";
import type { GitHubPort } from "../../github/port.js";
import type { JournalKey } from "../journal-seal.js";
import type { FactsPatch } from "../rounds.js";
import type { JournalRefusedError, Loaded, RunStoreOptions } from "../run-store.js";

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
  /** What the engine reads the time from and sets its retries on (default: real time). */
  clock?: Clock;
  /** Called after every decision that was persisted (tests and the demo's live view). */
  onDecision?: (runId: string, d: Decision) => void;
  /**
   * Called once the turn that took a round of effects' outcomes has landed what they learned (the
   * ids of the objects they made) on the run's state: what the App looks at once such a fact is
   * known (the final PR's approval, src/app/final-auto-merge.ts).
   */
  onLearned?: (runId: string, facts: FactsPatch) => void;
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

export interface ApplyResult {
  decisions: Decision[];
  /** Rejections of commands, for replying to the person. */
  rejections: Decision["rejections"];
}

export const DEFAULT_LEASE_MS = 20_000;
