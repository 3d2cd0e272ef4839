/**
 * OpenTelemetry export for the App and the runner (docs/runner.md#telemetry), through the official
 * JS SDK: traces and metrics as OTLP/HTTP (JSON) to `<endpoint>/v1/traces` and `/v1/metrics`. The
 * span ids Forge derives from names (src/core/trace.ts) are given to the SDK through its id
 * generator, so spans exported by different processes at different times form one tree.
 */
import {
  context,
  ROOT_CONTEXT,
  trace,
  TraceFlags,
  type Attributes,
  type Context,
  type Meter,
  type Span,
  type Tracer,
} from "@opentelemetry/api";
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  RandomIdGenerator,
  SimpleSpanProcessor,
  type IdGenerator,
} from "@opentelemetry/sdk-trace-base";

/** Random ids, unless the next span's ids were named (`Telemetry.startSpan` with `ids`). */
class NamedIds implements IdGenerator {
  readonly #random = new RandomIdGenerator();
  nextTraceId: string | undefined;
  nextSpanId: string | undefined;
  generateTraceId(): string {
    const id = this.nextTraceId ?? this.#random.generateTraceId();
    this.nextTraceId = undefined;
    return id;
  }
  generateSpanId(): string {
    const id = this.nextSpanId ?? this.#random.generateSpanId();
    this.nextSpanId = undefined;
    return id;
  }
}

export interface TelemetryOptions {
  /** The collector's base URL (its OTLP/HTTP receiver). */
  endpoint: string;
  serviceName: string;
  /** Resource attributes beside `service.name`. */
  attributes?: Attributes;
  /** Batch spans (a job) or send each as it ends (the App, whose spans are few). */
  batch?: boolean;
}

export interface SpanStart {
  name: string;
  /** Epoch ms. */
  startTime?: number;
  attributes?: Attributes;
  /** The parent: a context, or a `traceparent`-style pair; none makes a root span. */
  parent?: Context | { traceId: string; spanId: string };
  /** Ids to give the span (a root span's trace id; any span's own id). */
  ids?: { traceId?: string; spanId?: string };
}

export class Telemetry {
  readonly tracer: Tracer;
  readonly meter: Meter;
  readonly #ids = new NamedIds();
  readonly #traces: BasicTracerProvider;
  readonly #metrics: MeterProvider;

  constructor(o: TelemetryOptions) {
    const base = o.endpoint.replace(/\/+$/, "");
    const resource = resourceFromAttributes({ "service.name": o.serviceName, ...o.attributes });
    const exporter = new OTLPTraceExporter({ url: `${base}/v1/traces` });
    this.#traces = new BasicTracerProvider({
      resource,
      idGenerator: this.#ids,
      spanProcessors: [o.batch ? new BatchSpanProcessor(exporter, { scheduledDelayMillis: 2_000 }) : new SimpleSpanProcessor(exporter)],
    });
    this.#metrics = new MeterProvider({
      resource,
      readers: [
        new PeriodicExportingMetricReader({
          exporter: new OTLPMetricExporter({ url: `${base}/v1/metrics` }),
          exportIntervalMillis: 60_000,
        }),
      ],
    });
    this.tracer = this.#traces.getTracer("forge");
    this.meter = this.#metrics.getMeter("forge");
  }

  startSpan(s: SpanStart): Span {
    const parent =
      s.parent === undefined ? ROOT_CONTEXT : "traceId" in s.parent ? remoteParent(s.parent.traceId, s.parent.spanId) : s.parent;
    this.#ids.nextTraceId = s.ids?.traceId;
    this.#ids.nextSpanId = s.ids?.spanId;
    const span = this.tracer.startSpan(
      s.name,
      { ...(s.startTime !== undefined ? { startTime: s.startTime } : {}), ...(s.attributes ? { attributes: s.attributes } : {}) },
      parent,
    );
    this.#ids.nextTraceId = undefined;
    this.#ids.nextSpanId = undefined;
    return span;
  }

  /** A context whose active span is `span` (to parent children on it). */
  within(span: Span): Context {
    return trace.setSpan(context.active(), span);
  }

  /** Sends what is pending (spans and metrics) and waits for the collector's answers. */
  async flush(): Promise<void> {
    await Promise.allSettled([this.#traces.forceFlush(), this.#metrics.forceFlush()]);
  }

  async shutdown(): Promise<void> {
    await Promise.allSettled([this.#traces.shutdown(), this.#metrics.shutdown()]);
  }
}

/** A parent span in another process, as a `traceparent` names it. */
export function remoteParent(traceId: string, spanId: string): Context {
  return trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId, traceFlags: TraceFlags.SAMPLED, isRemote: true });
}
