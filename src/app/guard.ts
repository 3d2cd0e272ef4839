/**
 * What every webhook goes through before its handler: instrumentation, the delivery dedupe, the
 * App's own events left out, and handling in the background (or not, serverless).
 */
import type { Context, Probot } from "probot";
import { appSlug } from "../github/app-client.js";
import type { AppContext } from "./context.js";

/**
 * Events the App's own call does not answer for, handled even when the App is their sender: the
 * agent jobs it dispatched, and what the merge queue does later with a pull request the App
 * enqueued (GitHub may name the enqueuer as the sender of the group's events and of the PR's
 * dequeue; the queue's merge itself is found by the merge, which `merge_group.destroyed` flushes).
 */
const LATER_EVENTS = new Set(["workflow_run", "workflow_job", "merge_group", "pull_request.dequeued"]);
const later = (name: string, action: unknown) => LATER_EVENTS.has(name) || LATER_EVENTS.has(`${name}.${String(action)}`);

export function guard<C extends Context>(
  ctx: AppContext,
  app: Probot,
  fn: (ctx: AppContext, context: C) => Promise<void>,
): (context: C) => Promise<void> {
  const { options } = ctx;
  return async (context: C) => {
    options.onWebhook?.({
      name: context.name,
      action: (context.payload as { action?: string }).action,
      id: context.id,
      at: performance.now(),
    });
    if (ctx.deliveries.seen(context.id)) return;
    // A webhook of an installation deleted meanwhile (sent before it was): its token is dead.
    const installation = (context.payload as { installation?: { id?: number } }).installation?.id;
    if (installation !== undefined && ctx.removed.has(installation)) {
      context.log.info({ event: context.name, installationId: installation }, "a webhook of a deleted installation: not acted on");
      return;
    }
    // A delivery whose handling failed is forgotten, so that its redelivery (the usual remedy for a
    // failed delivery, by hand or through the API) is handled rather than taken for a repeat.
    const handle = async () => {
      // The App's name is asked of GitHub once, in the handling rather than before the answer: a
      // webhook is answered at once, however slow GitHub is to say who the App is.
      ctx.slug ??= await appSlug(app);
      // Ignore the App's own events: it learns its own actions from the calls' answers. Not the
      // jobs it dispatched, though: a workflow_dispatch made with the App's token runs with the App
      // as its actor, so GitHub names the App as the sender of the run's workflow_run and
      // workflow_job events, and no answer of the dispatch call tells how the job goes.
      const sender = (context.payload as { sender?: { login?: string } }).sender?.login;
      const action = (context.payload as { action?: unknown }).action;
      if (ctx.slug && sender === `${ctx.slug}[bot]` && !later(context.name, action)) return;
      await fn(ctx, context);
    };
    const handled = () =>
      handle().catch((e: unknown) => {
        ctx.deliveries.forget(context.id);
        throw e;
      });
    // Serverless: the effects the webhook started are carried out before the function returns.
    if (options.background === false) return handled().then(() => ctx.settle());
    const work = handled().catch((e: unknown) =>
      context.log.error({ err: (e as Error).stack, event: context.name, deliveryId: context.id }, "webhook handling failed"),
    );
    ctx.inFlight.add(work);
    void work.finally(() => ctx.inFlight.delete(work));
  };
}
