import { createRequire as __forgeCreateRequire } from 'node:module';
const require = __forgeCreateRequire(import.meta.url);
import {
  Telemetry,
  dispatchSpanId,
  parseTraceparent,
  runTraceId,
  traceparent
} from "./chunk-4N4ZCUVB.js";
import {
  SpanStatusCode,
  init_esm
} from "./chunk-7RVEMTZD.js";
import "./chunk-54WUDIML.js";

// action/src/task/telemetry.ts
init_esm();
var AttemptTelemetry = class {
  #t;
  #attempt;
  #sessions = /* @__PURE__ */ new Map();
  #attrs;
  #toolCalls = 0;
  constructor(a, endpoint) {
    const { runId, taskId, attempt } = a.ids;
    this.#attrs = { "forge.run_id": runId, "forge.task_id": taskId, "forge.attempt": attempt, "forge.agent_type": a.node.agentType };
    this.#t = new Telemetry({
      endpoint,
      serviceName: a.config.telemetry.service_name,
      attributes: { "service.namespace": "forge", "forge.component": "runner" },
      batch: true
    });
    const parent = parseTraceparent(a.input.context.traceparent) ?? {
      traceId: runTraceId(runId),
      spanId: dispatchSpanId(runId, taskId, attempt)
    };
    this.#attempt = this.#t.startSpan({ name: "forge.attempt", startTime: a.t0, attributes: this.#attrs, parent });
    a.live.listeners.push((e) => this.#onLive(e));
  }
  /** The attempt span as a `traceparent`, for the agent's environment (its sub-agents join the trace). */
  get traceparent() {
    const c = this.#attempt.spanContext();
    return traceparent(c.traceId, c.spanId);
  }
  #onLive(e) {
    if (e.layer !== "stage") return;
    const at = Date.parse(e.at);
    if (e.status === "start") {
      this.#sessions.get(e.stage)?.end(at);
      this.#sessions.set(
        e.stage,
        this.#t.startSpan({
          name: `forge.stage ${e.stage}`,
          startTime: at,
          attributes: { ...this.#attrs, "forge.stage": e.stage, "forge.session": e.detail ?? "" },
          parent: this.#t.within(this.#attempt)
        })
      );
      return;
    }
    const span = this.#sessions.get(e.stage);
    if (e.status === "tool_use") {
      this.#toolCalls++;
      span?.addEvent("tool_use", { "forge.tool": e.tool ?? "", "forge.detail": e.detail ?? "" }, at);
    } else if (e.status === "end" && span) {
      span.setAttribute("forge.result", e.detail ?? "");
      if (e.detail && !/^exit (0|12)\b/.test(e.detail)) span.setStatus({ code: SpanStatusCode.ERROR, message: e.detail });
      span.end(at);
      this.#sessions.delete(e.stage);
    }
  }
  /** Ends the spans, records the metrics, and sends everything. */
  async end(f, at) {
    for (const span of this.#sessions.values()) span.end(at);
    this.#sessions.clear();
    this.#attempt.setAttributes({
      "forge.exit_code": f.exitCode,
      "forge.tool_calls": this.#toolCalls,
      ...f.costUsd !== void 0 ? { "forge.cost_usd": f.costUsd } : {},
      ...f.turns !== void 0 ? { "forge.turns": f.turns } : {}
    });
    if (f.exitCode !== 0 && f.exitCode !== 12) this.#attempt.setStatus({ code: SpanStatusCode.ERROR, message: `exit ${f.exitCode}` });
    this.#attempt.end(at);
    const labels = { "forge.agent_type": String(this.#attrs["forge.agent_type"]), "forge.exit_code": f.exitCode };
    const m = this.#t.meter;
    m.createCounter("forge.attempts", { description: "Task attempts that ended" }).add(1, labels);
    m.createCounter("forge.tool_calls", { description: "Agent tool calls" }).add(this.#toolCalls, labels);
    m.createHistogram("forge.agent.duration", { unit: "s", description: "Agent time of an attempt" }).record(f.agentMs / 1e3, labels);
    if (f.costUsd !== void 0) m.createCounter("forge.spend", { unit: "USD", description: "Model spend" }).add(f.costUsd, labels);
    await withTimeout(this.#t.shutdown(), 1e4);
  }
};
async function withTimeout(p, ms) {
  let timer;
  await Promise.race([p, new Promise((resolve) => timer = setTimeout(resolve, ms))]);
  clearTimeout(timer);
}
export {
  AttemptTelemetry
};
