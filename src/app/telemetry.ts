/**
 * The App's part of a run's trace (docs/runner.md#telemetry): a span per dispatch — the parent the
 * runner's attempt span names through the dispatch context's `traceparent` — and, when the run
 * completes, the run's span and one span per task, from its first dispatch to its merge, with the
 * ids derived from their names (src/core/trace.ts), so one trace holds run → task → attempt → stage.
 * One exporter per collector, for the process's life. `FORGE_TELEMETRY=off` in the App's environment
 * turns it off whatever a repository's config says.
 */
import type { Journal } from "../core/journal.js";
import type { ForgeConfig } from "../core/schemas/config.js";
import type { ForgeEvent } from "../core/schemas/events.js";
import { dispatchSpanId, runSpanId, runTraceId, taskSpanId } from "../core/trace.js";
import { Telemetry } from "../telemetry/otlp.js";

const exporters = new Map<string, Telemetry>();

/** The exporter for the config's collector, if telemetry is on. */
export function appTelemetry(config: Pick<ForgeConfig, "telemetry">): Telemetry | undefined {
  const endpoint = config.telemetry.otlp_endpoint;
  if (!endpoint || process.env.FORGE_TELEMETRY === "off") return undefined;
  const key = `${endpoint} ${config.telemetry.service_name}`;
  let t = exporters.get(key);
  if (!t) {
    t = new Telemetry({ endpoint, serviceName: config.telemetry.service_name, attributes: { "forge.component": "app" } });
    exporters.set(key, t);
  }
  return t;
}

/** Sends what every exporter holds: a stopping App (launch.ts), a test. */
export async function flushAppTelemetry(): Promise<void> {
  await Promise.all([...exporters.values()].map((t) => t.flush()));
}

/** The dispatch of an attempt: a short span under the task's. */
export function traceDispatch(t: Telemetry, runId: string, taskId: string, attempt: number, at: number): void {
  const span = t.startSpan({
    name: "forge.dispatch",
    startTime: at,
    attributes: { "forge.run_id": runId, "forge.task_id": taskId, "forge.attempt": attempt },
    parent: { traceId: runTraceId(runId), spanId: taskSpanId(runId, taskId) },
    ids: { spanId: dispatchSpanId(runId, taskId, attempt) },
  });
  span.end(at);
  t.meter.createCounter("forge.dispatches", { description: "Agent jobs dispatched" }).add(1);
}

/** The run's span and its tasks', once it completed. */
export function traceRun(t: Telemetry, journal: Journal, events: readonly ForgeEvent[], end: number): void {
  const { runId } = journal;
  const traceId = runTraceId(runId);
  const start = Date.parse(journal.createdAt);
  const run = t.startSpan({
    name: "forge.run",
    startTime: start,
    attributes: { "forge.run_id": runId, "forge.plan_id": journal.planId, "forge.tasks": journal.tasks.length },
    ids: { traceId, spanId: runSpanId(runId) },
  });
  const first = new Map<string, number>();
  const merged = new Map<string, number>();
  for (const e of events) {
    if (!e.taskId) continue;
    if (e.type === "task.started" && !first.has(e.taskId)) first.set(e.taskId, Date.parse(e.timestamp));
    if (e.type === "task.merged") merged.set(e.taskId, Date.parse(e.timestamp));
  }
  for (const task of journal.tasks) {
    const span = t.startSpan({
      name: "forge.task",
      startTime: first.get(task.id) ?? start,
      attributes: { "forge.run_id": runId, "forge.task_id": task.id, "forge.status": task.status, "forge.attempts": task.attempt },
      parent: { traceId, spanId: runSpanId(runId) },
      ids: { spanId: taskSpanId(runId, task.id) },
    });
    span.end(merged.get(task.id) ?? end);
  }
  run.end(end);
  t.meter.createCounter("forge.runs", { description: "Runs completed" }).add(1);
}
