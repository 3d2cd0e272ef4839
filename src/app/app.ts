/**
 * The Forge App: Probot handlers that turn GitHub's webhooks into the executor's inputs. Every
 * handler follows one path — normalise the payload → decide → persist (compare-and-swap) → carry
 * out the effects — and reads state again instead of trusting the order webhooks arrive in.
 *
 * This module composes the App: the shared context (`context.ts`), one handler per event
 * (`handlers/`), and the reconciler's sweep (`sweep.ts`) with the discovery of where the App is
 * installed (`discovery.ts`).
 */
import type { Probot } from "probot";
import { closePaces, waitsForClock } from "../github/app-client.js";
import { AppContext } from "./context.js";
import { registerHandlers } from "./handlers/index.js";
import type { RepoRuntime } from "./runtime.js";
import { Sweeper } from "./sweep.js";
import type { SealedAppOptions } from "./options.js";

export type { ForgeAppOptions, SealedAppOptions } from "./options.js";
export type { RepoRuntime } from "./runtime.js";
export { newCallStats, type CallStats } from "../github/instrument.js";

export interface ForgeApp {
  (app: Probot): void;
  runtimes: Map<string, RepoRuntime>;
  /** Reconcile every run of every repository seen (the timer's work, and `forge tick`'s). */
  tick(): Promise<void>;
  tickRepository(owner: string, repo: string): Promise<void>;
  /** Resolves when no webhook is being handled in the background. */
  idle(): Promise<void>;
  /**
   * Whether work goes on that does not wait for the clock: a webhook handled, effects carried out —
   * unless none of it is at GitHub and some waits for the clock (its pace's window or hold, a rate
   * limit's wait). A test clock skips ahead only when the App is not busy (test/helpers/clock.ts).
   */
  busy(): boolean;
  stop(): void;
}

export function createForgeApp(options: SealedAppOptions): ForgeApp {
  const ctx = new AppContext(options);
  const sweeper = new Sweeper(ctx);
  const forgeApp = ((app: Probot) => {
    ctx.probot = app;
    registerHandlers(app, ctx);
    if (options.reconcileEveryMs) sweeper.start(app, options.reconcileEveryMs);
  }) as ForgeApp;
  forgeApp.runtimes = ctx.runtimes;
  forgeApp.tick = () => sweeper.tick();
  forgeApp.tickRepository = (owner, repo) => sweeper.tickRepository(owner, repo);
  forgeApp.stop = () => {
    sweeper.stop();
    ctx.laterReads.stop();
    for (const rt of ctx.runtimes.values()) rt.engine.stop();
    if (ctx.probot) closePaces(ctx.probot);
  };
  forgeApp.busy = () => {
    const engines = [...ctx.runtimes.values()].map((rt) => rt.engine);
    const working = ctx.inFlight.size > 0 || engines.some((e) => e.busy);
    const asleep = engines.reduce((n, e) => n + e.asleep, 0);
    return working && !(ctx.probot && waitsForClock(ctx.probot, asleep));
  };
  forgeApp.idle = async () => {
    // Webhooks being handled, and the effects they started (whose outcomes may start more).
    while (ctx.inFlight.size || [...ctx.runtimes.values()].some((rt) => rt.engine.busy)) {
      await Promise.all([...ctx.inFlight]);
      await ctx.settle();
    }
  };
  return forgeApp;
}
