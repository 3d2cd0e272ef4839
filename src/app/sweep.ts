/**
 * The reconciler's sweep: every running run of every repository the App serves is compared with
 * GitHub and ticked, on a timer in a long-lived server and on demand (`forge tick`).
 */
import type { Probot } from "probot";
import type { TimerHandle } from "../core/clock.js";
import { repositoryInstallationId } from "../github/app-client.js";
import type { AppContext } from "./context.js";
import { discoverRepositories } from "./discovery.js";
import { lookAtFinalPr } from "./final-auto-merge.js";
import { reconcileRun } from "./reconciler.js";
import type { RepoRuntime } from "./runtime.js";

export class Sweeper {
  readonly #ctx: AppContext;
  #timer: TimerHandle | undefined;
  #sweeping = false;

  constructor(ctx: AppContext) {
    this.#ctx = ctx;
  }

  /** Reconcile every run of every repository seen (the timer's work, and `forge tick`'s). */
  async tick(): Promise<void> {
    const ctx = this.#ctx;
    await discoverRepositories(ctx).catch((e: unknown) =>
      ctx.probot?.log.warn(
        { err: (e as Error).message },
        "could not list the installations' repositories; sweeping the repositories known",
      ),
    );
    for (const rt of ctx.runtimes.values()) await this.#tickRuntime(rt);
  }

  /** Reconcile one repository from scratch (`forge tick` in a scheduled workflow). */
  async tickRepository(owner: string, repo: string): Promise<void> {
    const ctx = this.#ctx;
    const installationId = await repositoryInstallationId(ctx.probot!, owner, repo);
    const rt = await ctx.runtimeFor(owner, repo, installationId, ctx.log);
    rt.runsLoaded = false;
    await this.#tickRuntime(rt);
  }

  async #tickRuntime(rt: RepoRuntime): Promise<void> {
    await reconcileRepository(this.#ctx, rt);
  }

  /** Sweep every `everyMs`, and once at start: a restarted App has work it learns of only by asking. */
  start(app: Probot, everyMs: number): void {
    // One sweep at a time: a sweep slower than the period (a slow or rate-limiting GitHub) is not
    // joined by another one doing the same reads.
    const sweep = () => {
      if (this.#sweeping) return;
      this.#sweeping = true;
      const work = this.tick()
        .catch((e: unknown) => app.log.error({ err: (e as Error).message }, "reconciler failed"))
        .finally(() => (this.#sweeping = false));
      // Counted with the webhooks handled in the background: `idle` waits for it too.
      this.#ctx.inFlight.add(work);
      void work.finally(() => this.#ctx.inFlight.delete(work));
    };
    this.#timer = this.#ctx.clock.setInterval(sweep, everyMs);
    this.#timer.unref();
    setImmediate(sweep);
  }

  stop(): void {
    this.#ctx.clock.clear(this.#timer);
    this.#timer = undefined;
  }
}

/**
 * Compares every running run of a repository with GitHub and ticks it: a sweep's pass, and an
 * installation unsuspended. An ended run has what its outbox still holds started again (its final PR
 * behind a failed try, or a restart), and its final PR looked at for an approval no webhook brought.
 */
export async function reconcileRepository(ctx: AppContext, rt: RepoRuntime): Promise<void> {
  // Runs started by another replica (or while this process was down) are found on every pass.
  rt.runsLoaded = false;
  for (const [runId, r] of await ctx.knownRuns(rt)) {
    if (r.status !== "running") {
      await endedRun(ctx, rt, runId);
      continue;
    }
    const inputs = await reconcileRun(rt.port, rt.engine, runId, ctx.now());
    await ctx.apply(rt, runId, inputs.length ? inputs : [{ kind: "tick" }]);
  }
  // The effects the pass started, and their outcomes, before what they learned is written.
  await rt.engine.idle();
  await rt.engine.persistDirty();
}

/** An ended run's pass: no call to GitHub unless its outbox holds effects, or its final PR waits for auto-merge. */
async function endedRun(ctx: AppContext, rt: RepoRuntime, runId: string): Promise<void> {
  const loaded = await rt.engine.state(runId);
  if (!loaded) return;
  if (loaded.state.journal.outbox.length) await rt.engine.flush(runId);
  await lookAtFinalPr(ctx, rt, runId).catch((e: unknown) =>
    ctx.log.warn({ runId, err: (e as Error).message }, "could not look at the final PR's approval"),
  );
}
