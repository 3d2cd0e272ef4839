// A state branch deleted by hand, put back: at the commit a `push` webhook saw it point to, or at the
// last journal commit this process wrote when a write finds it gone.
import { StateBranchMissingError, type Loaded, type RunStore } from "../run-store.js";
import type { EngineOptions, Logger } from "./types.js";

/** What the engine shares with its restorer: its store, and the journals it holds (the same maps). */
export interface Held {
  store: RunStore;
  /** The last journal read or written per run. */
  cache: Map<string, Loaded>;
  /** Runs with facts learned from effects and not yet persisted. */
  dirty: Set<string>;
  log: Logger;
  onRestored: EngineOptions["onRestored"];
}

export class Restorer {
  readonly #held: Held;

  constructor(held: Held) {
    this.#held = held;
  }

  /**
   * The state branch was deleted (by hand: Forge never deletes it) and a write found it gone: put it
   * back at the last journal commit this process wrote, so nothing recorded is lost. Without one
   * (the journal was read, not written, since the App started) it stays an error in the log.
   */
  async restoreMissing(runId: string, e: unknown): Promise<boolean> {
    if (!(e instanceof StateBranchMissingError)) return false;
    const commitSha = this.#held.cache.get(runId)?.commitSha;
    if (commitSha && (await this.putBack(runId, commitSha))) return true;
    this.#held.log.error(
      { runId },
      `${e.message} and this process knows no commit to restore it from: restore the branch, or cancel the run`,
    );
    return false;
  }

  /**
   * Recreate the state branch at `commitSha` and tell the run's people. The journal this process
   * holds is ahead of the restored one only by what it keeps in memory (acknowledgements, ids of
   * GitHub objects) when both come from the same blob: then it is kept.
   */
  async putBack(runId: string, commitSha: string, actor?: string): Promise<Loaded | null> {
    const { store, cache, dirty, log, onRestored } = this.#held;
    const restored = await store.restore(runId, commitSha);
    if (!restored) return null;
    log.warn({ runId, commitSha, actor }, "the state branch was deleted: restored at its last journal commit");
    const cached = cache.get(runId);
    const loaded = cached && cached.blobSha === restored.blobSha ? { ...restored, state: cached.state } : restored;
    if (loaded === restored) dirty.delete(runId);
    cache.set(runId, loaded);
    await onRestored?.(runId, loaded, actor).catch((err: unknown) =>
      log.warn({ runId, err: (err as Error).message }, "could not tell the run's tracker"),
    );
    return loaded;
  }
}
