// Webhook deliveries: signed, with GitHub's headers, sent after the API response that caused them,
// recorded, and redeliverable with the same delivery GUID.
//
// Facts reproduced (docs.github.com, "Webhook events and payloads", "Validating webhook
// deliveries", "Redelivering webhooks", "Handling failed webhook deliveries"):
// - X-Hub-Signature-256 is HMAC-SHA256 of the raw body with the hook's secret ("sha256=<hex>").
// - X-GitHub-Delivery is a GUID; a manual redelivery reuses it.
// - GitHub does not retry a failed delivery by itself; it is recorded and may be redelivered.
// - A receiver must answer within 10 seconds or the delivery counts as failed.
// - App webhooks carry `installation: {id, node_id}` and the target headers name the App
//   ("integration"); repository webhooks name the repository.
import { createHmac, randomUUID } from "node:crypto";
import { realClock, type Clock, type TimerHandle } from "../core/clock.js";
import { sign } from "@octokit/webhooks-methods";
import type { Faults } from "./faults.js";
import { Latency } from "./latency/profile.js";
import { SpecValidator } from "./openapi.js";
import type { Delivery, Hook, Installation, Repo, SimState } from "./state.js";
import { now } from "./state.js";

export interface EmitOptions {
  repo?: Repo;
  /** deliver only to this App (check_run rerequested/requested_action go to the creator) */
  onlyAppId?: number;
  /** for installation events: the installation concerned */
  installation?: Installation;
  /** set when the event was caused by a workflow's GITHUB_TOKEN */
  causedByWorkflowRun?: number;
}

/**
 * The permission an App needs to hear an event, where GitHub documents one that Forge's simulator
 * enforces: "To subscribe to this event, a GitHub App must have at least read-level access for the
 * "Checks" permission" (`check_run`, `check_suite`) and "… for the "Commit statuses" repository
 * permission" (`status`), "Merge queues" (`merge_group`) — docs.github.com/webhooks/webhook-events-and-payloads.
 */
const EVENT_PERMISSION: Record<string, string> = {
  check_run: "checks",
  check_suite: "checks",
  status: "statuses",
  // "… at least read-level access for the "Merge queues" repository permission" (`merge_group`).
  merge_group: "merge_queues",
};

/**
 * Whether an installation hears `event`: it subscribed to it and has the permission it needs — write
 * access to Checks for the `check_run`/`check_suite` actions sent to one App only (`requested`,
 * `rerequested`, `requested_action`). "GitHub Apps with write-level access for the "Checks"
 * permission are automatically subscribed" to `check_run` and `check_suite` (domain/check-events.ts).
 */
function hears(inst: Installation, event: string, toOneApp: boolean): boolean {
  const scope = EVENT_PERMISSION[event];
  const level = scope ? inst.permissions[scope] : undefined;
  const checks = scope === "checks";
  if (scope && level !== "read" && level !== "write" && level !== "admin") return false;
  if (checks && toOneApp && level === "read") return false;
  return inst.events.includes(event) || (checks && (level === "write" || level === "admin"));
}

export interface EmittedEvent {
  event: string;
  action: string | null;
  payload: Record<string, unknown>;
  repo?: Repo;
  /** false for events caused by a workflow's GITHUB_TOKEN (they start no workflow runs) */
  startsWorkflows: boolean;
}

interface Pending {
  delivery: Delivery;
  hook: Hook;
  delayMs: number;
  /** The time (the clock's) before which the delivery does not go out (the latency profile's event → delivery delay) */
  dueAt: number;
}

export class WebhookBus {
  private queue: Pending[] = [];
  private inflight = new Set<Promise<void>>();
  private chains = new Map<number, Promise<void>>();
  private listeners: Array<(e: EmittedEvent) => void> = [];
  private seq = 1;

  constructor(
    private readonly state: SimState,
    private readonly validator: SpecValidator,
    private readonly faults: Faults,
    private readonly violation: (id: string, errors: string) => void,
    private readonly timeoutMs = 10_000,
    private readonly latency = new Latency(),
    /** What delivery delays are waited on and deliveries timed by. */
    private readonly clock: Clock = realClock,
  ) {}

  /** Observe every event the simulator emits (the workflow runner subscribes here). */
  onEvent(fn: (e: EmittedEvent) => void): () => void {
    this.listeners.push(fn);
    return () => (this.listeners = this.listeners.filter((l) => l !== fn));
  }

  emit(event: string, action: string | null, payload: Record<string, unknown>, opts: EmitOptions = {}): void {
    const body0: Record<string, unknown> = action ? { action, ...payload } : { ...payload };
    const key = SpecValidator.webhookKey(event, action ?? undefined);
    for (const l of this.listeners)
      l({ event, action, payload: body0, repo: opts.repo, startsWorkflows: opts.causedByWorkflowRun === undefined });

    const targets: Array<{ hook: Hook; installation?: Installation }> = [];
    for (const hook of this.state.hooks.values()) {
      if (hook.targetType === "integration") {
        const app = this.state.apps.get(hook.targetId);
        if (!app) continue;
        if (opts.onlyAppId !== undefined && opts.onlyAppId !== app.id) continue;
        let inst: Installation | undefined;
        if (opts.installation) inst = opts.installation.appId === app.id ? opts.installation : undefined;
        else if (opts.repo) inst = this.state.installationsFor(opts.repo).find((i) => i.appId === app.id);
        if (!inst) continue;
        // A suspended installation hears nothing but its own installation events.
        if (inst.suspended && !event.startsWith("installation")) continue;
        // Installation events are always sent to the App; others only when subscribed, and to an
        // installation that may read what they are about.
        if (!event.startsWith("installation") && !hears(inst, event, opts.onlyAppId !== undefined)) continue;
        targets.push({ hook, installation: inst });
      } else {
        if (!opts.repo || hook.targetId !== opts.repo.id) continue;
        if (opts.onlyAppId !== undefined) continue;
        if (!hook.events.includes(event) && !hook.events.includes("*")) continue;
        targets.push({ hook });
      }
    }
    for (const { hook, installation } of targets) {
      const body = installation
        ? {
            ...body0,
            installation: event.startsWith("installation")
              ? body0.installation
              : { id: installation.id, node_id: Buffer.from(`Installation:${installation.id}`).toString("base64") },
          }
        : body0;
      if (this.validator.hasWebhook(key)) {
        const err = this.validator.validateWebhook(key, body);
        if (err) this.violation(key, err);
      } else {
        this.violation(key, `webhook ${key} is not in the trimmed description (add it to scripts/trim-openapi.ts)`);
      }
      const delivery = this.record(hook, event, action, body, installation?.id ?? null, opts.repo?.id ?? null, randomUUID(), false);
      // "Payloads are capped at 25 MB … the webhook will not be delivered."
      if (Buffer.byteLength(delivery.body) > 25 * 1024 * 1024) {
        delivery.status = "dropped";
        delivery.error = "payload over 25 MB: not delivered";
        continue;
      }
      const fate = this.faults.hook(`${event}${action ? `.${action}` : ""}`);
      if (fate.copies === 0) {
        delivery.status = "dropped";
        continue;
      }
      for (let c = 0; c < fate.copies; c++) {
        const d =
          c === 0 ? delivery : this.record(hook, event, action, body, delivery.installationId, delivery.repositoryId, delivery.guid, false);
        this.queue.push({ delivery: d, hook, delayMs: fate.delayMs, dueAt: this.clock.now() + this.latency.sample("webhook") });
      }
    }
  }

  private record(
    hook: Hook,
    event: string,
    action: string | null,
    payload: unknown,
    installationId: number | null,
    repositoryId: number | null,
    guid: string,
    redelivery: boolean,
  ): Delivery {
    const d: Delivery = {
      id: this.seq++,
      guid,
      hookId: hook.id,
      event,
      action,
      installationId,
      repositoryId,
      payload,
      body: JSON.stringify(payload),
      headers: {},
      deliveredAt: null,
      status: "pending",
      statusCode: 0,
      error: null,
      redelivery,
      attempts: 0,
      durationMs: 0,
    };
    this.state.deliveries.push(d);
    return d;
  }

  /** Sends what is queued. Called when the API response that caused the events has been sent. */
  flush(): void {
    if (this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    const w = this.faults.config.webhookReorderWindow;
    if (w <= 1) {
      for (const p of batch) this.schedule(p);
      return;
    }
    // Reordering: deliveries wait (across API calls) until a window is full and each window goes
    // out shuffled — the same seed and calls give the same order. A partial window goes out on
    // `idle()`, or after a second so that nothing waits forever.
    this.held.push(...batch);
    while (this.held.length >= w) this.release(this.held.splice(0, w));
    if (this.held.length && !this.heldTimer) this.heldTimer = this.clock.setTimeout(() => this.drain(), 1000);
  }

  private held: Pending[] = [];
  private heldTimer: TimerHandle | undefined;

  private release(window: Pending[]): void {
    for (const p of this.faults.shuffle(window)) this.schedule(p);
  }

  /** Sends deliveries held for reordering now. */
  private drain(): void {
    this.clock.clear(this.heldTimer);
    this.heldTimer = undefined;
    if (this.held.length) this.release(this.held.splice(0));
  }

  private schedule(p: Pending): void {
    // Without a latency profile, deliveries to one hook go out one after another (in emission order
    // unless reordered). With one, each goes out at its own time — its event plus its own delay —
    // as GitHub's do: GitHub guarantees no order between deliveries, and one slow delivery does not
    // hold back those behind it.
    const independent = this.latency.delays("webhook");
    const prev = independent ? Promise.resolve() : (this.chains.get(p.hook.id) ?? Promise.resolve());
    const next = prev.then(async () => {
      if (p.delayMs > 0) await this.clock.sleep(p.delayMs);
      // The latency profile's delay counts from the event, so deliveries queued behind others wait
      // only for what is left of theirs.
      const due = p.dueAt - this.clock.now();
      if (due > 0) await this.clock.sleep(due);
      await this.send(p.delivery, p.hook);
    });
    const tracked = next.finally(() => this.inflight.delete(tracked));
    this.inflight.add(tracked);
    if (!independent) this.chains.set(p.hook.id, tracked);
  }

  /** Deliveries being sent now (not those waiting for their time or behind another). */
  private sending = 0;

  /**
   * Whether deliveries are being sent or wait to be: false when every delivery left waits for the
   * clock (its delay, or the release of a reorder window) or was sent.
   */
  get busy(): boolean {
    return this.queue.length > 0 || this.sending > 0;
  }

  private async send(d: Delivery, hook: Hook): Promise<void> {
    this.sending++;
    try {
      await this.post(d, hook);
    } finally {
      this.sending--;
    }
  }

  private async post(d: Delivery, hook: Hook): Promise<void> {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "user-agent": "GitHub-Hookshot/forge-sim",
      "x-github-event": d.event,
      "x-github-delivery": d.guid,
      "x-github-hook-id": String(hook.id),
      "x-github-hook-installation-target-id": String(hook.targetId),
      "x-github-hook-installation-target-type": hook.targetType,
    };
    if (hook.secret) {
      headers["x-hub-signature-256"] = await sign(hook.secret, d.body);
      // GitHub still sends the legacy SHA-1 signature beside the SHA-256 one.
      headers["x-hub-signature"] = `sha1=${createHmac("sha1", hook.secret).update(d.body).digest("hex")}`;
    }
    d.headers = headers;
    d.attempts++;
    d.deliveredAt = now();
    const started = this.clock.now();
    if (hook.targetType === "integration" && this.clock.now() < this.faults.config.appUnreachableUntil) {
      d.status = "failed";
      d.error = "connect ECONNREFUSED (endpoint unreachable, injected)";
      d.statusCode = 0;
      return;
    }
    try {
      const res = await fetch(hook.url, { method: "POST", headers, body: d.body, signal: AbortSignal.timeout(this.timeoutMs) });
      await res.arrayBuffer().catch(() => undefined);
      d.statusCode = res.status;
      d.status = res.ok ? "ok" : "failed";
      d.error = res.ok ? null : `HTTP ${res.status}`;
    } catch (e) {
      d.status = "failed";
      d.error = (e as Error).message;
    } finally {
      d.durationMs = this.clock.now() - started;
    }
  }

  /** Redelivers a recorded delivery: a new delivery record with the same GUID and payload. */
  redeliver(id: number): Delivery {
    const old = this.state.deliveries.find((d) => d.id === id);
    if (!old) throw new Error(`no delivery ${id}`);
    const hook = this.state.hooks.get(old.hookId);
    if (!hook) throw new Error(`hook ${old.hookId} is gone`);
    const d = this.record(hook, old.event, old.action, old.payload, old.installationId, old.repositoryId, old.guid, true);
    this.schedule({ delivery: d, hook, delayMs: 0, dueAt: this.clock.now() + this.latency.sample("webhook") });
    return d;
  }

  /** Resolves once every queued and in-flight delivery has settled. */
  async idle(): Promise<void> {
    this.flush();
    this.drain();
    while (this.inflight.size > 0) {
      await Promise.allSettled([...this.inflight]);
      this.flush();
      this.drain();
    }
  }
}
